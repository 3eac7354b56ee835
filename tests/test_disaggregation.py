"""Disaggregated serving: the KV hand-off sized by hand, the auto rule, the LLMInferenceService as KServe v0.20.0's
controller reads it, its routing and network policies, and the config errors."""

from __future__ import annotations

import json
import shlex

import pytest
import yaml

from components.catalog.models import MODELS
from components.checks.loader import load_environment
from components.domain.disaggregation import efa_path
from components.domain.kv_transfer import decide_mode, kv_transfer, prompt_kv_bytes
from components.serving.deployment import model_placements
from platform_catalog.disaggregation import vllm_attention_backend as attention_backend
from policies.offline import evaluate_plan
from tests.harness import (
    cluster_objects,
    config_errors,
    environment_config,
    plan_stacks,
    raw_environment,
    scoped_markdown,
)
from tests.test_serving_path import engine_parser, parse_command_line
from tools.plan.report import render_markdown

LLMISVC = "LLMInferenceService"
RAG = "llama-3-1-70b-rag"
# Llama 3.1 70B (config.json): 80 layers, 8 KV heads of 128 dims.
KV_BYTES_PER_TOKEN_BF16 = 2 * 80 * 8 * 128 * 2  # K and V: 327,680 bytes
PROMPT = 4096


def _rag(prod_plan) -> dict:
    return cluster_objects(prod_plan, LLMISVC)[("prod-use1", RAG)]


# --- sizing, by hand ------------------------------------------------------------------------------------


def test_kv_bytes_of_a_4k_prompt_of_70b():
    llama70 = MODELS["llama-3.1-70b"]
    assert prompt_kv_bytes(llama70, "auto", PROMPT) == 1_342_177_280  # 327,680 B x 4096 = 1.25 GiB
    assert prompt_kv_bytes(llama70, "fp8", PROMPT) == 671_088_640  # FP8 halves it: 640 MiB
    assert KV_BYTES_PER_TOKEN_BF16 * PROMPT == 1_342_177_280


def test_hand_off_of_a_4k_prompt_over_efa_and_tcp():
    """70B at TP 4 on both p5.48xlarge pools: 4 rank-to-rank paths. EFA: 3200 Gbps / 8 GPUs = 400 Gbps each,
    1600 Gbps. TCP: one flow per rank, 10 Gbps inside one placement group, 5 Gbps across."""
    fp8 = 671_088_640
    efa = kv_transfer(
        bytes_per_prompt=fp8,
        prefill_tp=4,
        decode_tp=4,
        efa_machines=("p5.48xlarge", "p5.48xlarge"),
        same_placement_group=True,
    )
    assert (efa.transport, efa.paths, efa.gbps) == ("efa", 4, 1600)
    assert efa.seconds == pytest.approx(0.0033554432)  # 671,088,640 x 8 / 1.6e12: 3.4 ms
    tcp_pg = kv_transfer(bytes_per_prompt=fp8, prefill_tp=4, decode_tp=4, efa_machines=None, same_placement_group=True)
    assert (tcp_pg.transport, tcp_pg.gbps) == ("tcp", 40)
    assert tcp_pg.seconds == pytest.approx(0.134217728)  # 40x slower: 134 ms
    tcp = kv_transfer(bytes_per_prompt=fp8, prefill_tp=4, decode_tp=4, efa_machines=None, same_placement_group=False)
    assert tcp.seconds == pytest.approx(0.268435456)  # 20 Gbps: 268 ms
    bf16 = kv_transfer(
        bytes_per_prompt=1_342_177_280,
        prefill_tp=8,
        decode_tp=4,
        efa_machines=("p5.48xlarge",) * 2,
        same_placement_group=True,
    )
    # 8 prefill ranks, each read by one of 4 decode ranks (two each): 8 paths, bounded by decode's 4 x 400 Gbps
    assert (bf16.paths, bf16.gbps, bf16.seconds) == (8, 1600, pytest.approx(0.0067108864))


def test_auto_rule_disaggregates_only_large_long_busy_and_cheap():
    base = dict(
        params_billion=70.6, prompt_tokens=4096, concurrency=64, transfer_seconds=0.0034, ttft_objective_seconds=2.5
    )
    assert decide_mode(**base).disaggregate
    for change in (
        {"params_billion": 8.03},  # small
        {"prompt_tokens": 1024},  # short prompts
        {"concurrency": 32},  # low traffic
        {"transfer_seconds": 0.27, "ttft_objective_seconds": 1.0},  # the hand-off eats over 10% of TTFT
    ):
        decision = decide_mode(**{**base, **change})
        assert not decision.disaggregate
        assert sum(r.startswith("no: ") for r in decision.reasons) == 1


# --- the prod model, rendered -----------------------------------------------------------------------------


def test_prod_renders_the_70b_disaggregated_against_the_pinned_crd(prod_plan, upstream):
    assert upstream.crd_served_schema("serving.kserve.io/v1alpha2", LLMISVC) is not None
    isvc = _rag(prod_plan)
    assert isvc["apiVersion"] == "serving.kserve.io/v1alpha2"
    assert upstream.validate_custom_resource(isvc) == []
    spec = isvc["spec"]
    # the 70B's weights (one copy in the cache), mounted at /mnt/models, served under its own name
    assert spec["model"] == {"uri": "pvc://models/models/llama-3-1-70b", "name": RAG}
    assert (spec["replicas"], spec["prefill"]["replicas"]) == (1, 1)
    assert "scaling" not in spec and "scaling" not in spec["prefill"]  # CEL: replicas xor scaling
    # KServe's pool + picker with its prefill and decode profiles; one picker (no replicas), its tokenizer bounded
    assert set(spec["router"]) == {"scheduler"} and "replicas" not in spec["router"]["scheduler"]
    assert spec["router"]["scheduler"]["template"]["containers"][0]["resources"]["limits"] == {
        "cpu": "1",
        "memory": "2Gi",
    }
    # Not an InferenceService as well: one object serves the model there.
    assert ("prod-use1", RAG) not in cluster_objects(prod_plan, "InferenceService")


def _main(pod: dict) -> dict:
    (container,) = pod["containers"]
    assert container["name"] == "main"  # merged over KServe's template container of that name
    return container


def _vllm_argv(container: dict) -> list[str]:
    """What vLLM receives: KServe's presets run `eval "exec vllm serve ... $@"`, so the shell parses the args
    again (kserve-runtime-configs v0.20.0, files/llmisvcconfigs/resources.yaml L161)."""
    return shlex.split(" ".join(container["args"]))


def test_each_pool_has_its_own_sizing_and_gpus(prod_plan):
    spec = _rag(prod_plan)["spec"]
    decode, prefill = _main(spec["template"]), _main(spec["prefill"]["template"])
    # p5.48xlarge: 8 H100; TP 4 takes half. No EFA interfaces: the hand-off runs over TCP (below).
    for container in (decode, prefill):
        assert container["resources"]["requests"]["nvidia.com/gpu"] == 4
        assert "vpc.amazonaws.com/efa" not in container["resources"]["requests"]
        assert container["resources"]["limits"] == container["resources"]["requests"]
        assert "--tensor-parallel-size=4" in _vllm_argv(container)
    assert "--max-num-seqs=64" in _vllm_argv(decode) and "--max-num-seqs=8" in _vllm_argv(prefill)
    # KServe's decode template serves vLLM on 8001 behind the routing sidecar; prefill's on 8000.
    assert decode["startupProbe"]["httpGet"]["port"] == 8001
    assert prefill["startupProbe"]["httpGet"]["port"] == 8000
    for pod in (spec["template"], spec["prefill"]["template"]):
        assert pod["nodeSelector"] == {"inference-platform.io/pool": "h100"}


def test_pd_pods_run_the_pinned_engine_as_non_root(prod_plan):
    """Not the presets' ghcr.io/llm-d/llm-d-cuda:v0.8.0 (vLLM 0.23.0): the vLLM whose flags the tests validate; as
    uid 1000, which the presets' runAsNonRoot needs and the image does not set (its user is root)."""
    spec = _rag(prod_plan)["spec"]
    for pod in (spec["template"], spec["prefill"]["template"]):
        main = _main(pod)
        assert main["image"] == "vllm/vllm-openai:v0.33.0"
        assert main["securityContext"] == {"runAsUser": 1000}
        env = {e["name"]: e.get("value") for e in main["env"]}
        assert env["HOME"] == "/tmp" and env["VLLM_CACHE_ROOT"] == "/tmp/vllm-cache"


def test_args_survive_the_presets_eval(prod_plan):
    """Each JSON config reaches vLLM whole: the args are shell-quoted for the presets' `eval`."""
    spec = _rag(prod_plan)["spec"]
    for pod in (spec["template"], spec["prefill"]["template"]):
        argv = _vllm_argv(_main(pod))
        (loader,) = [a for a in argv if a.startswith("--model-loader-extra-config=")]
        assert json.loads(loader.split("=", 1)[1])["concurrency"] == 16
        assert _kv_config(argv)["kv_connector"] == "NixlConnector"
        assert len(argv) == len(_main(pod)["args"])


def _kv_config(args: list[str]) -> dict:
    (value,) = [a.split("=", 1)[1] for a in args if a.startswith("--kv-transfer-config=")]
    return json.loads(value)


def _sample_kv_config(pod: dict) -> dict:
    (container,) = pod["containers"]
    (extra,) = [e["value"] for e in container["env"] if e["name"] == "VLLM_ADDITIONAL_ARGS"]
    flag, value = shlex.split(extra)
    assert flag == "--kv_transfer_config"
    return json.loads(value)


def test_kv_roles_match_kserves_pd_sample(prod_plan, upstream):
    """Prefill produces, decode consumes, NixlConnector on both: as KServe's single-node P/D sample sets them."""
    path = "kserve/v0.20.0/docs-samples-llmisvc-single-node-gpu-llm-inference-service-pd-qwen2-7b-gpu.yaml"
    sample = yaml.safe_load((upstream.root / path).read_text())
    spec = _rag(prod_plan)["spec"]
    ours = {
        "decode": _kv_config(_vllm_argv(_main(spec["template"]))),
        "prefill": _kv_config(_vllm_argv(_main(spec["prefill"]["template"]))),
    }
    theirs = {
        "decode": _sample_kv_config(sample["spec"]["template"]),
        "prefill": _sample_kv_config(sample["spec"]["prefill"]["template"]),
    }
    for pool in ("decode", "prefill"):
        assert ours[pool] == theirs[pool]  # UCX, NIXL's default: the pinned image has no LIBFABRIC for EFA


def test_an_image_with_libfabric_hands_over_efa():
    """Both p5.48xlarge pools share a zone: EFA carries the hand-off once the P/D image's NIXL has LIBFABRIC."""
    env = load_environment(raw_environment("prod"))
    region = env.region("use1")
    h100 = region.pool("h100")
    assert not efa_path(region, h100, h100)
    assert efa_path(region, h100, h100, nixl_backends=("UCX", "LIBFABRIC"))
    l40s = region.pool("l40s")
    assert not efa_path(region, h100, l40s, nixl_backends=("UCX", "LIBFABRIC"))


def test_engine_args_leave_kserves_template_flags_alone(prod_plan, upstream):
    """KServe's templates run `vllm serve /mnt/models --served-model-name <name> --port ...`: our args add the rest,
    all flags of the pinned vLLM."""
    parser = engine_parser(upstream, "vllm")
    spec = _rag(prod_plan)["spec"]
    for pod in (spec["template"], spec["prefill"]["template"]):
        argv = _vllm_argv(_main(pod))
        assert not [a for a in argv if a.split("=")[0] in ("--model", "--served-model-name", "--port")]
        assert parse_command_line(argv, parser) == []


def test_pd_pods_are_labelled_queued_and_scraped(prod_plan):
    """KServe v0.20.0 copies spec.labels/annotations to decode pods and spec.prefill's to prefill pods
    (workload_single_node.go L179-180, L283-284): the model label and Volcano's queue reach both, and both run on
    Volcano like every pod of their pool."""
    spec = _rag(prod_plan)["spec"]
    for side in (spec, spec["prefill"]):
        assert side["labels"] == {"inference-platform.io/model": RAG}
        assert side["annotations"] == {"scheduling.volcano.sh/queue-name": "search", "volcano.sh/preemptable": "false"}
        pod = side["template"]
        assert (pod["schedulerName"], pod["priorityClassName"]) == ("volcano", "inference-realtime")
    monitor = cluster_objects(prod_plan, "PodMonitor")[("prod-use1", "vllm-disaggregated")]["spec"]
    assert monitor["selector"]["matchLabels"] == {
        "app.kubernetes.io/part-of": "llminferenceservice",
        "kserve.io/component": "workload",
    }
    assert monitor["selector"]["matchExpressions"][0]["values"] == [RAG]
    decode, prefill = monitor["podMetricsEndpoints"]
    assert (decode["portNumber"], prefill["portNumber"]) == (8001, 8000)
    assert prefill["relabelings"][0] == {
        "sourceLabels": ["__meta_kubernetes_pod_label_llm_d_ai_role"],
        "regex": "prefill",
        "action": "keep",
    }


def test_routing_reaches_kserves_pool_with_the_tenants_keys(prod_plan):
    route = cluster_objects(prod_plan, "AIGatewayRoute")[("prod-use1", "models-1")]
    (rule,) = [r for r in route["spec"]["rules"] if r["name"] == RAG]
    assert rule["backendRefs"] == [
        {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": f"{RAG}-inference-pool"}
    ]
    assert sorted(m["headers"][1]["value"] for m in rule["matches"]) == ["search"]
    # No InferencePool or picker of ours for it: KServe's controller owns both.
    assert ("prod-use1", RAG) not in cluster_objects(prod_plan, "InferencePool")
    assert ("prod-use1", f"{RAG}-epp") not in cluster_objects(prod_plan, "Deployment")


def test_network_policies_select_kserves_pods(prod_plan):
    """Labels from KServe v0.20.0 (pkg/constants/constants.go; workload_single_node.go, scheduler.go SchedulerLabels)."""
    policies = cluster_objects(prod_plan, "NetworkPolicy")
    workload = {
        "app.kubernetes.io/name": RAG,
        "app.kubernetes.io/part-of": "llminferenceservice",
        "kserve.io/component": "workload",
    }
    picker = {
        "app.kubernetes.io/component": "llminferenceservice-router-scheduler",
        "app.kubernetes.io/name": RAG,
        "app.kubernetes.io/part-of": "llminferenceservice",
    }
    server = policies[("prod-use1", f"{RAG}-server")]["spec"]
    assert server["podSelector"] == {"matchLabels": workload}
    envoy_and_picker, each_other, prometheus = server["ingress"]
    assert envoy_and_picker["ports"] == [{"protocol": "TCP", "port": 8000}]  # the pool's target port
    assert {"podSelector": {"matchLabels": picker}} in envoy_and_picker["from"]
    assert each_other == {"from": [{"podSelector": {"matchLabels": workload}}]}  # sidecar -> prefill, NIXL
    assert prometheus["ports"] == [{"protocol": "TCP", "port": 8000}, {"protocol": "TCP", "port": 8001}]
    assert prometheus["from"][0]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}
    epp = policies[("prod-use1", f"{RAG}-epp")]["spec"]
    assert epp["podSelector"] == {"matchLabels": picker}
    assert epp["ingress"][0]["ports"] == [{"protocol": "TCP", "port": 9002}]


def test_plan_md_shows_the_mode_the_reasons_and_the_hand_off(prod_plan):
    md = render_markdown(prod_plan)
    section = md.split("## Disaggregated serving\n", 1)[1].split("\n## ", 1)[0]
    (row,) = [line for line in section.splitlines() if f"| {RAG} |" in line]
    assert "| disaggregated |" in row
    assert "| 640 MiB (4096 tokens, fp8 KV) |" in row
    assert "TCP 4 x 10 Gbps: 134.2 ms" in row  # 671,088,640 B x 8 / 40 Gbps, within 10% of the 2.5 s TTFT
    assert "auto: yes: 70.6B params" in row and "no: " not in row
    assert (
        "- **warning**: use1/llama-3-1-70b-rag hands its KV cache over TCP (134 ms per prompt): the engine image "
        "vllm/vllm-openai:v0.33.0 has no NIXL LIBFABRIC backend usable over EFA" in section
    )


# --- variants and config errors ------------------------------------------------------------------------


def _disaggregate(raw: dict, model: int, **placement) -> dict:
    raw["models"][model]["placements"][0].update(placement)
    return raw


# --- prefill and decode on two GPU types ---------------------------------------------------------------------
# The 70B prefilling on the H100 pool (compute) and decoding on a new H200 pool (p5en.48xlarge: 141 GB at 4.8 TB/s),
# both in us-east-1a. Decode: 131.5 GiB of weights + 64 x 8192 tokens of FP8 KV fit 2 H200s; prefill: 8 prompts need
# 4 H100s. Each of the 2 decode ranks reads from 2 of the 4 prefill ranks, all at once (vLLM v0.33.0
# nixl/tp_mapping.py, pull_worker.py): 4 rank-to-rank TCP flows, and two pools are two placement groups, so each
# flow runs at AWS's 5 Gbps cap: 20 Gbps. FP8 KV of Llama 3.1 70B: 2 x 80 layers x 8 KV heads x 128 x 1 byte =
# 163,840 bytes per token. The budget is 10% of the 2.5 s TTFT objective, 250 ms = 625,000,000 bytes at 20 Gbps:
# 3814 tokens (624,885,760 B, 249.95 ms) fit, 3815 (625,049,600 B, 250.02 ms) do not, nor prod's 4096 (268.4 ms).
FP8_KV_PER_TOKEN = 2 * 80 * 8 * 128
FITS, OVER = 3814, 3815
H200_POOL = {"name": "h200", "machineType": "p5en.48xlarge", "maxSize": 1, "zones": ["us-east-1a"], "efa": True}


def _two_gpu_types(raw: dict, *, pool: dict | None = None, prompt: int = FITS, **model) -> dict:
    raw["regions"][0]["gpuPools"].append({**H200_POOL, **(pool or {})})
    raw["models"][3].update(model)
    raw["models"][3]["placements"][0].update(
        pool="h200", servingMode="disaggregated", prefill={"pool": "h100", "promptTokens": prompt}
    )
    return raw


def _rag_errors(raw: dict) -> list[str]:
    from components.config.base import ConfigError

    try:
        load_environment(raw)
    except ConfigError as error:
        return [str(i) for i in error.issues if str(i).startswith("models[3]")]
    return []


def test_two_gpu_types_within_the_budget_are_accepted():
    assert FP8_KV_PER_TOKEN * FITS * 8 / 20e9 <= 0.25 < FP8_KV_PER_TOKEN * OVER * 8 / 20e9
    assert _rag_errors(_two_gpu_types(raw_environment("prod"))) == []


@pytest.fixture(scope="module")
def two_types_plan():
    config = environment_config("prod")
    raw = {"regions": config["inference-platform:regions"], "models": config["inference-platform:models"]}
    _two_gpu_types(raw)
    return plan_stacks(config, "test", ["use1"])  # the RAG model and both its pools: the option changes use1 alone


@pytest.mark.plan
def test_each_side_runs_on_its_own_pool_and_gpus(two_types_plan):
    (isvc,) = [o for (_, name), o in cluster_objects(two_types_plan, LLMISVC).items() if name == RAG]
    spec = isvc["spec"]
    decode, prefill = spec["template"], spec["prefill"]["template"]
    assert decode["nodeSelector"] == {"inference-platform.io/pool": "h200"}
    assert prefill["nodeSelector"] == {"inference-platform.io/pool": "h100"}
    assert _main(decode)["resources"]["requests"]["nvidia.com/gpu"] == 2  # 2 H200s hold weights + 64 x 8k FP8
    assert _main(prefill)["resources"]["requests"]["nvidia.com/gpu"] == 4  # 4 H100s: weights + 8 prompts
    assert "--tensor-parallel-size=2" in _vllm_argv(_main(decode))
    assert "--tensor-parallel-size=4" in _vllm_argv(_main(prefill))
    for pod in (decode, prefill):
        assert "vpc.amazonaws.com/efa" not in _main(pod)["resources"]["requests"]  # TCP: the image has no LIBFABRIC
        assert not any(a.startswith("--attention-backend") for a in _vllm_argv(_main(pod)))  # both FLASH_ATTN
    notes = isvc["metadata"]["annotations"]
    assert notes["inference-platform.io/gpu-product"] == "H200-141GB"
    assert notes["inference-platform.io/prefill-pool"] == "h100"
    assert notes["inference-platform.io/kv-transfer-bytes-per-prompt"] == str(FP8_KV_PER_TOKEN * FITS)
    assert (notes["inference-platform.io/kv-transfer"], notes["inference-platform.io/kv-transfer-gbps"]) == (
        "tcp",
        "20",
    )
    md = scoped_markdown(two_types_plan)
    assert "| 596 MiB (3814 tokens, fp8 KV) | TCP 4 x 5 Gbps: 250.0 ms |" in md
    # The cost: a quarter of a p5en.48xlarge ($63.296/h) decodes, half a p5.48xlarge ($55.04/h) prefills; the
    # decode row's price per output token carries both, the prefill row produces none.
    assert "| use1 | h200 | p5en.48xlarge | onDemand | $63.296/h | 0 / 1 / 1 | $0 | $46,206 | $46,206 |" in md
    _assert_cost_rows(md, ("h200", 0.25 * 63.296), ("h100", 0.5 * 55.04))
    # The pack still reports the TCP hand-off (advisory) and nothing mandatory.
    findings = [f for f in evaluate_plan(two_types_plan).findings if RAG in f.message]
    assert [(f.policy, f.enforcement_level) for f in findings] == [("llm-pd-kv-fabric", "advisory")]


def _assert_cost_rows(md: str, decode: tuple[str, float], prefill: tuple[str, float]) -> None:
    """plan.md's per-model cost: the decode row's $/1M output tokens = (decode + prefill USD per hour) / its tokens
    per hour; the prefill row has its share and no output of its own."""
    section = md.split("## Cost (monthly, USD)\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith(f"| use1 | {RAG}")]
    (row,) = [r for r in rows if r[1] == RAG]
    (pre,) = [r for r in rows if r[1] == f"{RAG} (prefill)"]
    assert (row[2], pre[2]) == (decode[0], prefill[0])
    assert pre[7:9] == ["none: prefill hands to decode", "in the decode row"]
    tokens = float(row[7].split(" ")[0].replace(",", ""))
    expected = (decode[1] + prefill[1]) / (tokens * 3600) * 1e6
    assert row[8] == f"${expected:.3f} with prefill"


def test_prod_charges_the_decode_row_with_its_prefill_pods(prod_plan):
    _assert_cost_rows(render_markdown(prod_plan), ("h100", 0.5 * 55.04), ("h100", 0.5 * 55.04))


def test_showback_charges_one_pod_cost_per_model(two_types_plan, prod_plan):
    """One series per model (two rules of one series with two values would clash): KServe's pool counts decode and
    prefill pods alike, so each is charged their average, (0.25 x $63.296 + 0.5 x $55.04) / 2 pods = $21.672/h."""
    for plan, expected in ((two_types_plan, "vector(21.672)"), (prod_plan, "vector(27.52)")):
        rules = [
            r
            for (_, name), o in cluster_objects(plan, "PrometheusRule").items()
            for g in o["spec"]["groups"]
            if g["name"] == "inference-platform.showback"
            for r in g["rules"]
            if r.get("labels", {}).get("model") == RAG
        ]
        assert [r["expr"] for r in rules] == [expected]


def test_over_the_budget_by_a_little_is_refused_with_the_arithmetic():
    assert _rag_errors(_two_gpu_types(raw_environment("prod"), prompt=OVER)) == [
        "models[3].placements[0].prefill.pool: each prompt hands 3815 tokens x 163,840 bytes of fp8 KV = 596 MiB to "
        "decode over TCP, 4 x 5 Gbps (one path per rank of the larger tensor-parallel size): 250.02 ms, over the "
        "250 ms a hand-off may take (10% of the 2.5s TTFT objective); put prefill and decode in one pool (one "
        "placement group: 10 Gbps per flow), lower promptTokens, or use servingMode: auto"
    ]


def test_the_16_bit_cache_is_refused_with_the_fp8_fix():
    """kvCacheDtype auto: twice the bytes per prompt (decode then needs 4 H200s for 160 GiB of KV, still 4 paths):
    499.91 ms; the error offers FP8, which both GPUs have."""
    (error,) = _rag_errors(_two_gpu_types(raw_environment("prod"), kvCacheDtype="auto"))
    assert "3814 tokens x 327,680 bytes of auto KV = 1,192 MiB to decode over TCP, 4 x 5 Gbps" in error
    assert "499.91 ms, over the 250 ms" in error and "set kvCacheDtype: fp8 (half the bytes)" in error


def test_auto_falls_back_to_aggregated_on_the_decode_pool_instead():
    raw = _two_gpu_types(raw_environment("prod"), prompt=4096)
    raw["models"][3]["placements"][0]["servingMode"] = "auto"
    env = load_environment(raw)
    (p,) = [p for p in model_placements(env, env.region("use1")) if p.name == RAG]
    assert (p.serving_mode, p.pool.name, p.disaggregation) == ("aggregated", "h200", None)
    assert p.mode_decision is not None
    assert "no: KV hand-off 268.4 ms (cheap: <= 250 ms, 10% of TTFT 2.5s)" in p.mode_decision.reasons


def test_a_pool_in_another_zone_is_refused():
    errors = _rag_errors(_two_gpu_types(raw_environment("prod"), pool={"zones": ["us-east-1b"]}))
    assert errors == [
        "models[3].placements[0].prefill.pool: KServe's picker pairs any prefill pod with any decode pod, and h100 "
        "and h200 span us-east-1a, us-east-1b: hand-offs would cross zones, off any placement group or EFA and at "
        "AWS's inter-zone transfer price; put both pools in one zone (gpuPools[].zones)"
    ]


def test_an_efa_image_would_carry_it_and_a_tcp_only_pool_would_not():
    """With NIXL's LIBFABRIC in the image, both EFA pools in us-east-1a hand off over EFA: 400 Gbps per GPU (3200 / 8
    on both types), bounded by decode's 2 GPUs: 800 Gbps, 6.2 ms for the 3814 tokens; an H200 pool without EFA stays
    on TCP whatever the image."""
    env = load_environment(_two_gpu_types(raw_environment("prod")))
    region = env.region("use1")
    h100, h200 = region.pool("h100"), region.pool("h200")
    assert not efa_path(region, h100, h200)  # the pinned image: UCX only
    assert efa_path(region, h100, h200, nixl_backends=("UCX", "LIBFABRIC"))
    efa = kv_transfer(
        bytes_per_prompt=FP8_KV_PER_TOKEN * FITS,
        prefill_tp=4,
        decode_tp=2,
        efa_machines=("p5.48xlarge", "p5en.48xlarge"),
        same_placement_group=False,
    )
    assert (efa.paths, efa.gbps, round(efa.seconds * 1000, 1)) == (4, 800, 6.2)
    tcp_only = load_environment(_two_gpu_types(raw_environment("prod"), pool={"efa": False}))
    region = tcp_only.region("use1")
    assert not efa_path(region, region.pool("h100"), region.pool("h200"), nixl_backends=("UCX", "LIBFABRIC"))


def test_two_attention_backends_are_refused_unless_one_is_set():
    """vLLM v0.33.0 attends with FlashInfer on B200 and FlashAttention on H200; NIXL's handshake hashes the backend."""
    raw = raw_environment("prod")
    raw["regions"][0]["gpuPools"].append({**H200_POOL, "name": "b200", "machineType": "p6-b200.48xlarge"})
    raw["models"][3]["placements"][0].update(prefill={"pool": "b200", "promptTokens": FITS})
    errors = _rag_errors(raw)
    assert errors[0] == (
        "models[3].placements[0].prefill.pool: vLLM attends with FLASHINFER on the prefill pool's B200 and "
        "FLASH_ATTN on the decode pool's H100-80GB (fp8 KV), and NIXL refuses to hand a cache between two backends "
        "(its compatibility hash differs); set the model's engineArgs to one backend both run, e.g. "
        "attention-backend: FLASHINFER, or use pools of one GPU generation"
    )
    raw["models"][3]["engineArgs"] = {"attention-backend": "FLASHINFER"}
    assert not any("attends with" in e for e in _rag_errors(raw))


def test_the_kv_dtype_picks_the_backend_off_hopper():
    """An FP8 cache moves Ada (L40S) to FlashInfer while Hopper stays on FlashAttention; a 16-bit one keeps both on
    FlashAttention (vllm v0.33.0 platforms/cuda.py _get_backend_priorities, fa_utils.py)."""
    assert (attention_backend("L40S", "fp8"), attention_backend("H100-80GB", "fp8")) == ("FLASHINFER", "FLASH_ATTN")
    assert attention_backend("L40S", "auto") == attention_backend("H100-80GB", "auto") == "FLASH_ATTN"
    assert attention_backend("B200", "auto") == "FLASHINFER"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda raw: _disaggregate(raw, 2, servingMode="disaggregated", prefill={"pool": "l4"}),
            [
                "models[2].runtime: disaggregated serving hands KV caches over vLLM's NixlConnector; use runtime: vllm",
                "models[2].placements[0].servingMode: region 'usc1' is on GCP, where the RDMA pod networking NIXL needs "
                "is not wired yet; place it in an AWS region or use servingMode: aggregated",
            ],
        ),
        (
            lambda raw: _disaggregate(raw, 3, servingMode="disaggregated", prefill=None),
            [
                "models[3].placements[0].servingMode: servingMode disaggregated needs the prefill pool, e.g. prefill: "
                "{pool: h100}"
            ],
        ),
        (
            lambda raw: _disaggregate(raw, 3, servingMode="aggregated"),
            ["models[3].placements[0].prefill: only used with servingMode disaggregated or auto; remove it"],
        ),
        (
            lambda raw: _disaggregate(raw, 3, prefill={"pool": "h200"}),
            [
                "models[3].placements[0].prefill.pool: region 'use1' has no GPU pool 'h200' (pools: h100, l40s); fix "
                "the name"
            ],
        ),
        (
            # 131.5 GiB of 70B weights on one L40S (44.99 GiB as it reports 46068 MiB, x 0.9 - 2 = 38.5 usable).
            lambda raw: _disaggregate(raw, 3, prefill={"pool": "l40s"}),
            [
                "models[3].placements[0].prefill: prefill pool 'l40s': llama-3.1-70b (bf16) needs 131.5 GiB of weights "
                "+ 10.0 GiB of KV cache (8 seqs x 8192 tokens); L40S offers 38.5 GiB usable per GPU, at most 1 per node "
                "x 1 nodes: lower maxNumSeqs/maxModelLen, quantize, or use a larger GPU"
            ],
        ),
        (
            lambda raw: _disaggregate(raw, 3, maxReplicas=2),
            [
                "models[3].placements[0].maxReplicas: a disaggregated placement runs fixed replicas (KServe's "
                "autoscaling needs its workload-variant autoscaler); set minReplicas = maxReplicas (now 1-2)"
            ],
        ),
        (
            lambda raw: _disaggregate(raw, 3, prefill={"pool": "h100", "promptTokens": 8192}),
            [
                "models[3].placements[0].prefill.promptTokens: 8192 tokens leave no room for output within maxModelLen "
                "8192; lower it"
            ],
        ),
    ],
)
def test_impossible_combinations_are_config_errors(change, expected):
    raw = raw_environment("prod")
    assert raw["models"][3]["name"] == RAG
    assert config_errors(change(raw)) == expected


def test_disaggregated_needs_the_model_cache_and_no_federation():
    raw = raw_environment("prod")
    raw["regions"][0]["modelCache"] = {"enabled": False}
    raw["federation"]["failover"] = {"applicationTolerationSeconds": 1800}
    raw["models"][3]["federated"] = True
    raw["models"][3]["placements"].append({"region": "usw2", "pool": "h100"})
    errors = [e for e in config_errors(raw) if e.startswith("models[3]")]
    assert errors == [
        "models[3].federated: Karmada propagates InferenceServices, not LLMInferenceServices; set federated: false",
        "models[3].placements[0].servingMode: KServe's LLMInferenceService mounts the weights from the cache's "
        "pvc://, and region 'use1' has no model cache; enable its modelCache",
    ]


def test_fp8_kv_needs_fp8_on_the_prefill_gpus():
    raw = raw_environment("prod")
    raw["regions"][0]["gpuPools"].append({"name": "a100", "machineType": "p4de.24xlarge", "maxSize": 1})
    raw["models"][3]["placements"][0]["prefill"] = {"pool": "a100"}
    assert [e for e in config_errors(raw) if e.startswith("models[3]")] == [
        "models[3].kvCacheDtype: the prefill pool use1/a100 runs on A100-80GB, which has no FP8, and the KV cache "
        "travels in its dtype; use auto or a prefill pool with FP8"
    ]


def test_auto_stays_aggregated_below_the_thresholds():
    raw = raw_environment("prod")
    raw["models"][3]["maxNumSeqs"] = 32  # 32 sequences in flight: low traffic for the rule
    env = load_environment(raw)
    (p,) = [p for p in model_placements(env, env.region("use1")) if p.name == RAG]
    assert p.disaggregation is None and p.serving_mode == "aggregated"
    assert p.mode_decision is not None and "no: 32 sequences in flight (high: >= 64)" in p.mode_decision.reasons


def test_the_pd_model_reads_the_70b_weights_the_cache_already_holds(prod_plan):
    """Same preset, same precision: the same files. A prefix of its own would cache a second 131.5 GiB copy."""
    by_weights: dict[tuple[str, str], set[str]] = {}
    for model in prod_plan.spec.models:
        by_weights.setdefault((model.preset, model.precision), set()).add(model.weights_prefix)
    assert by_weights[("llama-3.1-70b", "bf16")] == {"models/llama-3-1-70b/"}
    assert all(len(prefixes) == 1 for prefixes in by_weights.values())
    rag = _rag(prod_plan)["spec"]["model"]
    plain = cluster_objects(prod_plan, "InferenceService")[("prod-use1", "llama-3-1-70b")]["spec"]["predictor"]
    assert rag["uri"] == plain["model"]["storageUri"] == "pvc://models/models/llama-3-1-70b"
    loads = cluster_objects(prod_plan, "DataLoad")
    cached = [(cluster, t["path"]) for (cluster, _), d in loads.items() for t in d["spec"]["target"]]
    assert ("prod-use1", "/models/llama-3-1-70b") in cached and "/models/llama-3-1-70b-rag" not in str(cached)
    assert len(cached) == len(set(cached))  # each prefix warmed once per cache
