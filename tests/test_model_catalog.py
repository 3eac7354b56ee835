"""Models of their own: a model declared only in YAML, from its Hugging Face config.json, plans and is sized as a
shipped preset is; every rule of the declaration refuses its mistake naming the key (components/config/
model_catalog.py), and passes its near variant.

The fixture environment is tests/fixtures/model-catalog/ (not a shipped Pulumi.*.yaml): Llama 3.2 3B declared in
its modelCatalog, Qwen3-30B-A3B in its models/qwen3.yaml. Expected sizes are worked by hand from the numbers of each
config.json (huggingface.co/meta-llama/Llama-3.2-3B-Instruct/blob/main/config.json,
huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json) and the GPUs' reported memory (platform_catalog/gpus.py
docstring: L40S 46068 MiB, H100 80GB HBM3 81559 MiB); GiB = 2^30 bytes.
"""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.catalog.models import MODELS, PRESETS, from_hf_config
from components.checks.loader import PROJECT, load_environment
from components.checks.model_catalog_checks import check_model_catalog
from components.config.base import ConfigError
from components.config.model_catalog import ModelCardSpec, read_model_catalog
from components.config.stackfile import PlanInputError, read_stack_file, stack_config_from_mapping
from components.cost.monthly import environment_cost
from components.domain.sizing import GpuSlot, SizingRequest, size
from components.serving.deployment import inference_service_manifest, model_placement
from tests.harness import cluster_objects, program_values
from tools.plan.__main__ import main as plan_main
from tools.plan.model import Plan
from tools.plan.report import render_markdown
from tools.plan.runner import PROJECT_DIR, build_plan

FIXTURE = Path(__file__).parent / "fixtures" / "model-catalog"
ENV = "catalog"
LLAMA, QWEN = "llama-3.2-3b", "qwen3-30b-a3b"  # presets: the first in modelCatalog, the second in models/qwen3.yaml
GIB = 2**30
L40S_GIB = 46068 / 1024  # 44.99 GiB, what the device reports
H100_GIB = 81559 / 1024  # 79.65 GiB


@cache
def fixture_plan() -> Plan:
    config = read_stack_file(FIXTURE, ENV)
    return build_plan(stack_config_from_mapping(PROJECT, ENV, config, FIXTURE / f"Pulumi.{ENV}.yaml"))


def fixture_raw() -> dict[str, Any]:
    return copy.deepcopy(program_values(read_stack_file(FIXTURE, ENV)))


def fixture_files() -> dict[str, Any]:
    return copy.deepcopy(read_model_catalog(FIXTURE))


def errors(raw: dict[str, Any], files: dict[str, Any] | None = None) -> list[str]:
    with pytest.raises(ConfigError) as refused:
        load_environment(raw, catalog_files=fixture_files() if files is None else files)
    return [str(issue) for issue in refused.value.issues]


# --- a model declared only in YAML plans and is sized ---------------------------------------------------------


def test_the_fixture_declares_its_models_only_in_yaml():
    assert LLAMA not in MODELS and QWEN not in MODELS
    assert (FIXTURE / "models" / "qwen3.yaml").exists()
    assert set(fixture_raw()["modelCatalog"]) == {LLAMA}


@pytest.mark.plan
def test_llama_3_2_3b_from_modelcatalog_is_sized_by_hand():
    """Llama 3.2 3B on one whole L40S, 32 sequences of 8192 tokens, bf16."""
    isvc = cluster_objects(fixture_plan(), "InferenceService")["catalog-use1", "llama-3-2-3b"]
    annotations = {k.rpartition("/")[2]: v for k, v in isvc["metadata"]["annotations"].items()}
    # weights: the declared checkpoint, 6,425,499,648 B (metadata.total_size; also 3,212,749,824 parameters x 2 B,
    # counted from config.json: 128256 x 3072 tied embedding + 28 layers x (2 x 3072^2 + 2 x 1024 x 3072 +
    # 3 x 8192 x 3072 + 2 x 3072) + 3072) = 5.98 GiB
    assert annotations["weights-gib"] == "5.98"
    # KV per token: 2 x 28 layers x 8 KV heads x 128 x 2 B = 114,688 B; 32 x 8192 tokens need 28 GiB.
    # Usable: 44.99 x 0.9 - 2 = 38.49 GiB, so one GPU holds 38.49 - 5.98 = 32.51 GiB of KV cache
    assert annotations["tensor-parallel"] == "1"
    assert annotations["kv-cache-gib"] == "32.51"
    kv = L40S_GIB * 0.9 - 2 - 6425499648 / GIB
    assert float(annotations["kv-cache-gib"]) == pytest.approx(kv, abs=0.005)
    args = isvc["spec"]["predictor"]["model"]["args"]
    assert {"--tensor-parallel-size=1", "--max-model-len=8192", "--max-num-seqs=32", "--dtype=bfloat16"} <= set(args)
    # 32.51 GiB / (8192 x 114,688 B = 0.875 GiB per sequence) = 37 full-length sequences
    assert "| use1 | llama-3-2-3b | vllm | l40s | L40S (`nvidia.com/gpu` x 1) | 1 x 1 | 5.98 | 32.51 | 37 |" in (
        render_markdown(fixture_plan())
    )


@pytest.mark.plan
def test_qwen3_moe_from_a_catalog_file_is_sized_by_hand():
    """Qwen3-30B-A3B (128 experts, 8 active; head_dim 128 x 32 heads is not hidden_size 2048, which Qwen3-MoE
    allows) on H100s, 64 sequences of 32768 tokens, bf16 from paramsBillion."""
    isvc = cluster_objects(fixture_plan(), "InferenceService")["catalog-use1", "qwen3-30b-a3b"]
    annotations = {k.rpartition("/")[2]: v for k, v in isvc["metadata"]["annotations"].items()}
    # 30.5e9 x 2 B = 61e9 B = 56.81 GiB
    assert annotations["weights-gib"] == "56.81"
    # KV per token: 2 x 48 x 4 KV heads x 128 x 2 B = 98,304 B; 64 x 32768 tokens need 192 GiB. Usable per H100:
    # 79.65 x 0.9 - 2 = 69.68 GiB; TP 1: 12.87, TP 2: 82.55 GiB of KV, too little; TP 4 (32 heads and 4 KV heads
    # split evenly): 4 x 69.68 - 56.81 = 221.92 GiB
    assert annotations["tensor-parallel"] == "4"
    assert annotations["kv-cache-gib"] == "221.92"
    assert float(annotations["kv-cache-gib"]) == pytest.approx(4 * (H100_GIB * 0.9 - 2) - 61e9 / GIB, abs=0.005)
    resources = isvc["spec"]["predictor"]["model"]["resources"]
    assert resources["limits"]["nvidia.com/gpu"] == 4
    assert "--tensor-parallel-size=4" in isvc["spec"]["predictor"]["model"]["args"]


@pytest.mark.plan
def test_their_cost_is_priced_like_any_model():
    """p5.48xlarge $55.04/h and g6e.4xlarge $3.00424/h on demand in us-east-1 (the vendored AWS price list,
    components/catalog/prices.py, as of 2026-07-20), 730 h a month."""
    costs = {c.model: c for c in environment_cost(fixture_plan().spec).models}
    qwen, llama = costs["qwen3-30b-a3b"], costs["llama-3-2-3b"]
    # 4 of the node's 8 H100 per replica: 2 replicas x 0.5 x 55.04 x 730 = $40,179.20
    assert qwen.node_share == 0.5
    assert qwen.monthly(qwen.max_replicas) == pytest.approx(40179.2)
    # One whole L40S node per replica: decode reads 5.98 GiB of weights + 32 x 4096 tokens x 114,688 B a step at
    # 864 GB/s: 32 x 864e9 / (5.98 x 2^30 + 15,032,385,536) = 1,288.8 tokens/s; $3.00424/h over that = $0.6475/1M
    assert llama.decode.tokens_per_second == pytest.approx(32 * 864e9 / (5.98 * GIB + 32 * 4096 * 114688), rel=1e-6)
    assert llama.usd_per_million_output_tokens == pytest.approx(3.00424 / (1288.8 * 3600) * 1e6, rel=1e-3)


@pytest.mark.plan
def test_plan_md_lists_them_with_where_they_were_declared():
    markdown = render_markdown(fixture_plan())
    assert "### Models of your own" in markdown
    assert (
        "| qwen3-30b-a3b | models/qwen3.yaml | Qwen/Qwen3-30B-A3B | 30.5B | 48 x 2048 | 32 / 4 x 128 | 40960 | 151936 "
        "| 128 (8) | any precision | 98304 | qwen3-30b-a3b |" in markdown
    )
    assert (
        "| llama-3.2-3b | Pulumi.catalog.yaml | meta-llama/Llama-3.2-3B-Instruct | 3.21B | 28 x 3072 | 24 / 8 x 128 "
        "| 131072 | 128256 | - | bf16, 5.98 GiB | 114688 | llama-3-2-3b |" in markdown
    )


def test_a_declared_model_is_served_exactly_as_the_shipped_preset_with_its_numbers():
    """Llama 3.1 8B declared under another name, from its config.json (huggingface.co/meta-llama/
    Llama-3.1-8B-Instruct/blob/main/config.json) and 8.03B parameters: the same InferenceService and cost as the
    shipped preset."""
    twin = {
        "paramsBillion": 8.03,
        "hfConfig": {
            "architectures": ["LlamaForCausalLM"],
            "hidden_size": 4096,
            "max_position_embeddings": 131072,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 128256,
        },
    }
    served = []
    for preset in ("llama-3.1-8b", "my-llama-8b"):
        raw = fixture_raw()
        raw["modelCatalog"]["my-llama-8b"] = twin
        raw["models"][0] |= {"preset": preset, "precision": "awq", "kvCacheDtype": "fp8", "maxModelLen": 16384}
        env = load_environment(raw, catalog_files=fixture_files())
        model = env.models[0]
        placement = model_placement(env, model, model.placements[0])
        cost = next(c for c in environment_cost(env).models if c.model == model.name)
        served.append((inference_service_manifest(placement, "s3://bucket/models/llama-3-2-3b/"), cost))
    assert served[0] == served[1]


@pytest.mark.plan
def test_make_plan_of_the_fixture_passes_policy_and_bring_up(tmp_path):
    """`make plan` of a project holding the fixture: exit 0 (no mandatory finding, no bring-up violation)."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(PROJECT_DIR / name, tmp_path)
    shutil.copy(FIXTURE / f"Pulumi.{ENV}.yaml", tmp_path)
    shutil.copytree(FIXTURE / "models", tmp_path / "models")
    assert plan_main([ENV, "--project-dir", str(tmp_path), "--quiet"]) == 0
    assert "| qwen3-30b-a3b | models/qwen3.yaml |" in (tmp_path / "build" / ENV / "plan.md").read_text()


# --- the catalog belongs to its environment ---------------------------------------------------------------------


def test_the_catalog_is_the_environments_own():
    with_files = load_environment(fixture_raw(), catalog_files=fixture_files())
    assert {LLAMA, QWEN} <= set(with_files.architectures)
    # The shipped presets are read-only and untouched by loading an environment that declares models.
    assert list(MODELS) == [p.preset for p in PRESETS] and LLAMA not in MODELS
    with pytest.raises(TypeError):
        MODELS[LLAMA] = with_files.architectures[LLAMA]  # type: ignore[index]
    # Another environment of the project, without the file's model and modelCatalog: not there.
    raw = fixture_raw()
    del raw["modelCatalog"]
    raw["models"] = raw["models"][1:]
    raw["tenants"][0]["models"] = [QWEN]
    assert LLAMA not in load_environment(raw, catalog_files=fixture_files()).architectures
    # Without the project's models/ folder the file's preset is unknown.
    assert errors(fixture_raw(), files={})[0].startswith("models[1].preset: 'qwen3-30b-a3b' is not a model preset")


@pytest.mark.plan
def test_the_program_reads_the_catalog_files_beside_the_stack_files(tmp_path):
    """The plan runs the program in the stack files' directory, as the Pulumi CLI does: there it finds models/."""
    shutil.copy(FIXTURE / f"Pulumi.{ENV}.yaml", tmp_path)
    config = read_stack_file(tmp_path, ENV)
    stack = stack_config_from_mapping(PROJECT, ENV, config, tmp_path / f"Pulumi.{ENV}.yaml")
    with pytest.raises(ConfigError) as refused:
        build_plan(stack)
    assert [i.path for i in refused.value.issues] == ["models[1].preset"]
    shutil.copytree(FIXTURE / "models", tmp_path / "models")
    assert build_plan(stack).spec.architectures[QWEN].experts == 128


# --- the shipped presets go through the same path -----------------------------------------------------------------


def test_every_shipped_preset_is_a_valid_declaration_with_the_numbers_of_its_config_json():
    """Each preset's config.json excerpt passes the rules a team's declaration does, and gives the figures the
    catalog had before it was declared this way (by hand from each config.json)."""
    expected = {  # params, layers, hidden, heads, KV heads, head dim, context, vocab, experts (active)
        "llama-3.1-8b": (8.03, 32, 4096, 32, 8, 128, 131072, 128256, 0, 0),
        "llama-3.1-70b": (70.6, 80, 8192, 64, 8, 128, 131072, 128256, 0, 0),
        "qwen2.5-7b": (7.62, 28, 3584, 28, 4, 128, 32768, 152064, 0, 0),
        "qwen2.5-32b": (32.8, 64, 5120, 40, 8, 128, 32768, 152064, 0, 0),
        "qwen2.5-72b": (72.7, 80, 8192, 64, 8, 128, 32768, 152064, 0, 0),
        "mistral-7b": (7.25, 32, 4096, 32, 8, 128, 32768, 32768, 0, 0),
        "mixtral-8x7b": (46.7, 32, 4096, 32, 8, 128, 32768, 32000, 8, 2),
    }
    assert [p.preset for p in PRESETS] == list(expected)
    for preset in PRESETS:
        card = ModelCardSpec.model_validate(
            {"hfRepo": preset.hf_repo, "paramsBillion": preset.params_billion, "hfConfig": dict(preset.hf_config)}
        )
        raw = fixture_raw()
        raw["modelCatalog"]["twin-" + preset.preset] = card.model_dump(by_alias=True, exclude_none=True)
        env = load_environment(raw, catalog_files=fixture_files())
        assert list(check_model_catalog(env)) == []
        m = MODELS[preset.preset]
        numbers = (m.params_billion, m.layers, m.hidden_size, m.attention_heads, m.kv_heads, m.head_dim)
        numbers += (m.max_context, m.vocab_size, m.experts, m.active_experts)
        assert numbers == expected[preset.preset], preset.preset
        assert env.architectures["twin-" + preset.preset] == card.architecture("twin-" + preset.preset)


def test_config_json_defaults_are_vllms():
    """Absent num_key_value_heads: one per head (vllm@v0.33.0 llama.py L290); absent head_dim: hidden_size /
    heads; Qwen2's vLLM model sizes heads from hidden_size whatever head_dim says (qwen2.py L149)."""
    base = {"num_hidden_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "vocab_size": 100}
    base["max_position_embeddings"] = 4096
    mha = from_hf_config("x", base, params_billion=0.1)
    assert (mha.kv_heads, mha.head_dim, mha.tied_embeddings, mha.experts) == (8, 128, False, 0)
    stated = base | {"head_dim": 96, "architectures": ["LlamaForCausalLM"]}
    assert from_hf_config("x", stated, params_billion=0.1).head_dim == 96
    assert from_hf_config("x", stated | {"architectures": ["Qwen2ForCausalLM"]}, params_billion=0.1).head_dim == 128


# --- vLLM's tensor-parallel rules, met by the sizing for any model -------------------------------------------------

H100_NODE = GpuSlot("H100-80GB", H100_GIB, gpus_per_node=8, max_nodes=1, fp8=True)


def test_kv_heads_are_replicated_when_tensor_parallel_exceeds_them():
    """vLLM gives each GPU max(1, KV heads // TP) heads (vllm/config/model.py L1419-1430): Qwen3-30B-A3B's 4 KV
    heads at TP 8 take 8 heads' room. 128 x 32768 tokens x 98,304 B = 384 GiB; at TP 8 replicated: 768 GiB, more than
    8 x 69.68 - 56.81 = 500.65 GiB, so it does not fit one node (the old sizing put it at TP 8)."""
    qwen = load_environment(fixture_raw(), catalog_files=fixture_files()).architectures[QWEN]
    request = SizingRequest(qwen, max_model_len=32768, max_num_seqs=64)
    assert size(request, H100_NODE).kv_bytes_per_token == 98304  # TP 4: 4 heads over 4 GPUs
    with pytest.raises(ValueError, match=r"needs 56\.8 GiB of weights"):
        size(SizingRequest(qwen, max_model_len=32768, max_num_seqs=128), H100_NODE)


def test_tensor_parallel_splits_kv_heads_evenly():
    """24 heads and 6 KV heads: TP 4 divides the heads but neither divides nor is divided by the KV heads, which vLLM
    refuses (qwen2.py L139-147, llama.py alike); TP 8 neither. The sizing stops at TP 2 and tries pipelines."""
    config = {"num_hidden_layers": 28, "hidden_size": 3072, "num_attention_heads": 24, "num_key_value_heads": 6}
    arch = from_hf_config("odd", config | {"vocab_size": 128256, "max_position_embeddings": 131072}, params_billion=80)
    # 160e9 B of weights = 149.01 GiB: more than 2 x 69.68 = 139.37 GiB usable, less than 4 x 69.68
    with pytest.raises(ValueError, match="at most 8 per node x 1 nodes"):
        size(SizingRequest(arch, max_num_seqs=1), H100_NODE)
    assert size(SizingRequest(arch, max_num_seqs=1), GpuSlot("H100-80GB", H100_GIB, 8, 2, True)).pipeline_parallel == 2


# --- every rule: its mistake refused naming the key, its near variant accepted ---------------------------------------

Mutation = Callable[[dict[str, Any], dict[str, Any]], None]  # (raw environment, catalog files) -> None


def _llama(**keys: Any) -> Mutation:
    def mutate(raw: dict, files: dict) -> None:
        raw["modelCatalog"][LLAMA]["hfConfig"].update(keys)

    return mutate


def _qwen(**keys: Any) -> Mutation:
    def mutate(raw: dict, files: dict) -> None:
        files["models/qwen3.yaml"][QWEN]["hfConfig"].update(keys)

    return mutate


def _card(**keys: Any) -> Mutation:
    def mutate(raw: dict, files: dict) -> None:
        raw["modelCatalog"][LLAMA].update(keys)

    return mutate


def _drop(*path: str) -> Mutation:
    def mutate(raw: dict, files: dict) -> None:
        node = raw["modelCatalog"][LLAMA]
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return mutate


def _both(*mutations: Mutation) -> Mutation:
    def mutate(raw: dict, files: dict) -> None:
        for m in mutations:
            m(raw, files)

    return mutate


def _rename_llama(name: str) -> Mutation:
    def mutate(raw: dict, files: dict) -> None:
        raw["modelCatalog"][name] = raw["modelCatalog"].pop(LLAMA)
        raw["models"][0]["preset"] = name

    return mutate


def _declare_qwen_in_environment(raw: dict, files: dict) -> None:
    raw["modelCatalog"][QWEN] = copy.deepcopy(files["models/qwen3.yaml"][QWEN])


def _second_file(raw: dict, files: dict) -> None:
    files["models/zz-more.yaml"] = {QWEN + "-copy": copy.deepcopy(files["models/qwen3.yaml"][QWEN])}


def _model(index: int, **fields: Any) -> Mutation:
    def mutate(raw: dict, files: dict) -> None:
        raw["models"][index].update(fields)

    return mutate


def _draft(preset: str) -> Mutation:
    """The H100 model becomes Llama 3.1 70B (FP8 KV cache) drafted by `preset`."""
    speculative = {"method": "draft", "draftPreset": preset}
    fields = {"preset": "llama-3.1-70b", "maxModelLen": 8192, "maxNumSeqs": 16, "kvCacheDtype": "fp8"}
    return _model(1, **fields, speculativeDecoding=speculative)


AT = f"modelCatalog.{LLAMA}"
IN_FILE = f"models/qwen3.yaml: {QWEN}"

# (id, mutation, the key path the first matching line names, a fragment of its message)
REFUSED: list[tuple[str, Mutation, str, str]] = [
    ("shipped-name", _rename_llama("llama-3.1-8b"), "modelCatalog.llama-3.1-8b", "is a shipped preset"),
    ("declared-twice", _declare_qwen_in_environment, f"modelCatalog.{QWEN}", "also declared in models/qwen3.yaml"),
    ("bad-name", _rename_llama("Llama 3B"), "modelCatalog.Llama 3B", "not a valid preset name"),
    ("kv-heads-not-dividing", _llama(num_key_value_heads=7), f"{AT}.hfConfig.num_key_value_heads", "must divide"),
    (
        "head-dim-underivable",
        _both(_drop("hfConfig", "head_dim"), _llama(hidden_size=3070)),
        f"{AT}.hfConfig.head_dim",
        "required",
    ),
    (
        "head-dim-qwen2",
        _llama(architectures=["Qwen2ForCausalLM"], head_dim=96),
        f"{AT}.hfConfig.head_dim",
        "vLLM sizes Qwen2ForCausalLM's heads",
    ),
    (
        "experts-per-token-over",
        _qwen(num_experts_per_tok=129),
        f"{IN_FILE}.hfConfig.num_experts_per_tok",
        "at most num_experts",
    ),
    ("experts-per-token-dense", _llama(num_experts_per_tok=2), f"{AT}.hfConfig.num_experts_per_tok", "without experts"),
    ("expert-count-twice", _qwen(num_local_experts=128), f"{IN_FILE}.hfConfig.num_experts", "stated twice"),
    (
        "near-miss-key",
        _both(_drop("hfConfig", "num_key_value_heads"), _llama(num_key_value_head=8)),
        f"{AT}.hfConfig.num_key_value_head",
        "did you mean 'num_key_value_heads'",
    ),
    ("mla", _llama(kv_lora_rank=512), f"{AT}.hfConfig.kv_lora_rank", "multi-head latent attention"),
    ("dtype-contradiction", _llama(dtype="float16"), f"{AT}.hfConfig.dtype", "contradicts torch_dtype"),
    (
        "format-vs-dtype",
        _both(_card(weights={"format": "fp16"}), _model(0, precision="fp16")),
        f"{AT}.weights.format",
        "set format bf16",
    ),
    (
        "format-vs-quantization",
        _both(
            _llama(quantization_config={"quant_method": "awq"}),
            _card(weights={"format": "gptq"}),
            _model(0, precision="gptq"),
        ),
        f"{AT}.weights.format",
        "set format awq",
    ),
    (
        "unsized-quant-method",
        _both(_drop("weights"), _llama(quantization_config={"quant_method": "bitsandbytes"})),
        f"{AT}.hfConfig.quantization_config.quant_method",
        "state weights.format",
    ),
    (
        "size-in-gib",
        _card(weights={"format": "bf16", "totalSize": 6}),
        f"{AT}.weights.totalSize",
        "0.00x what 3.21B parameters take in bf16",
    ),
    (
        "size-of-another-format",
        _card(weights={"format": "awq", "totalSize": 6425499648}),
        f"{AT}.weights.totalSize",
        "in awq",
    ),
    ("precision-not-the-checkpoints", _model(0, precision="fp8"), "models[0].precision", "set precision: bf16"),
    (
        "context-beyond-config",
        _model(1, maxModelLen=65536),
        "models[1].maxModelLen",
        "exceeds qwen3-30b-a3b's context of 40960",
    ),
    ("declared-draft-vocabulary", _draft(QWEN), "models[1].speculativeDecoding.draftPreset", "151936-token vocabulary"),
    ("params-not-a-number", _card(paramsBillion="three"), f"{AT}.paramsBillion", "a number"),
    ("layers-zero", _llama(num_hidden_layers=0), f"{AT}.hfConfig.num_hidden_layers", "greater than 0"),
    ("vocab-missing", _drop("hfConfig", "vocab_size"), f"{AT}.hfConfig.vocab_size", "add `vocab_size`"),
    ("format-unknown", _card(weights={"format": "int4"}), f"{AT}.weights.format", "is not allowed"),
    ("card-key-typo", _both(_card(hfconfig={}), _drop("hfConfig")), f"{AT}.hfconfig", "did you mean 'hfConfig'"),
    (
        "card-key-snake",
        _both(_card(params_billion=3.21), _drop("paramsBillion")),
        f"{AT}.params_billion",
        "keys are camelCase",
    ),
    ("file-kv-heads", _qwen(num_key_value_heads=5), f"{IN_FILE}.hfConfig.num_key_value_heads", "must divide"),
    ("file-type", _qwen(hidden_size="2k"), f"{IN_FILE}.hfConfig.hidden_size", "whole number"),
    (
        "file-not-a-mapping",
        lambda raw, files: files.update({"models/qwen3.yaml": [QWEN]}),
        "models/qwen3.yaml",
        "expected a mapping",
    ),
]

# Near variants of the refused ones, accepted.
ACCEPTED: list[tuple[str, Mutation]] = [
    ("another-name", _rename_llama("llama-3.1-8b-ft")),
    ("underscore-name", _rename_llama("llama_3.2_3b")),
    ("same-name-once-per-file", _second_file),
    ("kv-heads-dividing", _llama(num_key_value_heads=6)),
    # 24 KV heads triple the KV cache: 8 sequences of 8192 tokens (21 GiB) still fit the L40S
    ("mha-without-kv-heads", _both(_drop("hfConfig", "num_key_value_heads"), _model(0, maxNumSeqs=8))),
    ("head-dim-stated-where-underivable", _llama(hidden_size=3070)),
    ("head-dim-derived", _drop("hfConfig", "head_dim")),
    ("head-dim-llama-decoupled", _llama(head_dim=96)),
    ("experts-per-token-all", _qwen(num_experts_per_tok=128)),
    ("experts-mixtral-name", _both(_llama(num_local_experts=8, num_experts_per_tok=2))),
    ("unread-key", _llama(num_key_value_groups=3, rope_theta=1e6)),
    ("dtype-newer-name", _llama(dtype="bfloat16")),
    ("float32-checkpoint", _llama(torch_dtype="float32")),
    (
        "quantized-from-config",
        _both(_drop("weights"), _llama(quantization_config={"quant_method": "awq"}), _model(0, precision="awq")),
    ),
    (
        "unsized-quant-method-stated",
        _both(
            _card(weights={"format": "int8"}),
            _llama(quantization_config={"quant_method": "bitsandbytes"}),
            _model(0, precision="int8"),
        ),
    ),
    ("size-within-tolerance", _card(weights={"format": "bf16", "totalSize": 6_425_499_648 * 12 // 10})),
    ("no-checkpoint-any-precision", _both(_drop("weights"), _model(0, precision="fp8"))),
    ("context-at-config", _model(1, maxModelLen=40960)),
    # Llama 3.2 3B drafting for Llama 3.1 70B: the same 128256-token vocabulary, 3.21B < 70.6B
    ("declared-draft", _draft(LLAMA)),
]


@pytest.mark.parametrize(("mutation", "path", "fragment"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_a_wrong_field_is_refused_naming_its_key(mutation: Mutation, path: str, fragment: str):
    raw, files = fixture_raw(), fixture_files()
    mutation(raw, files)
    lines = errors(raw, files)
    assert all("\n" not in line for line in lines), lines
    matching = [line for line in lines if line.startswith(path + ":")]
    assert matching, f"no line names {path}: {lines}"
    assert any(fragment in line for line in matching), matching


@pytest.mark.parametrize("mutation", [r[1] for r in ACCEPTED], ids=[r[0] for r in ACCEPTED])
def test_its_near_variant_is_accepted(mutation: Mutation):
    raw, files = fixture_raw(), fixture_files()
    mutation(raw, files)
    load_environment(raw, catalog_files=files)


def test_every_mistake_is_reported_at_once_and_consequences_are_not():
    raw, files = fixture_raw(), fixture_files()
    for mutation in (_llama(num_key_value_heads=7), _qwen(num_experts_per_tok=129), _model(1, maxModelLen=65536)):
        mutation(raw, files)
    assert errors(raw, files) == [
        f"{IN_FILE}.hfConfig.num_experts_per_tok: 129 experts per token, but the model has 128; "
        "num_experts_per_tok is at most num_experts",
        f"{AT}.hfConfig.num_key_value_heads: 24 attention heads do not split into groups of 7 KV heads; "
        "num_key_value_heads must divide num_attention_heads (config.json states both)",
    ]  # the model on the broken qwen entry is not also refused: its maxModelLen issue is a consequence dropped
    raw, files = fixture_raw(), fixture_files()
    _qwen(hidden_size="2k")(raw, files)
    _card(paramsBillion="three")(raw, files)
    assert [line.split(":")[0] for line in errors(raw, files)] == ["models/qwen3.yaml", f"{AT}.paramsBillion"]


def test_plan_exits_2_with_one_line_per_mistake_naming_its_file(tmp_path, capsys):
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    shutil.copy(FIXTURE / f"Pulumi.{ENV}.yaml", tmp_path)
    (tmp_path / "models").mkdir()
    text = (FIXTURE / "models" / "qwen3.yaml").read_text().replace("num_key_value_heads: 4", "num_key_value_heads: 5")
    (tmp_path / "models" / "qwen3.yaml").write_text(text)
    stack = (
        (tmp_path / f"Pulumi.{ENV}.yaml").read_text().replace('"num_key_value_heads": 8', '"num_key_value_heads": 7')
    )
    (tmp_path / f"Pulumi.{ENV}.yaml").write_text(stack)
    assert plan_main([ENV, "--project-dir", str(tmp_path), "--quiet"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: {IN_FILE}.hfConfig.num_key_value_heads: 32 attention heads do not split into groups of 5 KV heads; "
        "num_key_value_heads must divide num_attention_heads (config.json states both)",
        f"error: Pulumi.{ENV}.yaml: {AT}.hfConfig.num_key_value_heads: 24 attention heads do not split into groups "
        "of 7 KV heads; num_key_value_heads must divide num_attention_heads (config.json states both)",
    ]
    assert not (tmp_path / "build").exists()


def test_a_catalog_file_that_is_not_yaml_names_its_line(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "broken.yaml").write_text("qwen:\n  hfConfig: {hidden_size: 2048\n")
    with pytest.raises(PlanInputError) as refused:
        read_model_catalog(tmp_path)
    (line,) = refused.value.lines
    assert line.startswith("models/broken.yaml:3:1: YAML syntax error")


def test_the_readme_example_declares_a_model_that_plans_its_sizes():
    """The README's "Models of your own" example, in the fixture environment: accepted, and sized as the fixture's
    own declaration of the same model (the same config.json numbers)."""
    text = (PROJECT_DIR / "docs" / "serving.md").read_text()
    section = text[text.index("### Models of your own") :]
    example = yaml.safe_load(section[section.index("```yaml") + len("```yaml") : section.index("```\n", 10)])
    raw = fixture_raw()
    raw["modelCatalog"] = example["inference-platform:modelCatalog"]
    (model,) = example["inference-platform:models"]
    raw["models"][0] |= model
    env = load_environment(raw, catalog_files=fixture_files())
    fixture = load_environment(fixture_raw(), catalog_files=fixture_files())
    assert env.architectures[LLAMA] == fixture.architectures[LLAMA]


def test_a_declared_model_drafts_for_a_shipped_one():
    """Llama 3.2 3B (declared) as the draft of Llama 3.1 70B: the replica holds both weights, 70.6e9 x 2 B and the
    declared 6,425,499,648 B = 137.49 GiB, and both KV caches: 2 x 80 x 8 x 128 + 2 x 28 x 8 x 128 bytes per token
    in FP8 = 163,840 + 57,344."""
    raw, files = fixture_raw(), fixture_files()
    _draft(LLAMA)(raw, files)
    env = load_environment(raw, catalog_files=files)
    model = env.models[1]
    assert model.draft_architecture == env.architectures[LLAMA]
    sizing = model_placement(env, model, model.placements[0]).fit.sizing
    assert sizing.weights_gib == 137.49
    assert sizing.weights_gib == round((70.6e9 * 2 + 6425499648) / GIB, 2)
    assert sizing.kv_bytes_per_token == 163840 + 57344
