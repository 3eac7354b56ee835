"""Every config error of model serving: one line naming the key and the fix, before any resource exists."""

from __future__ import annotations

import pytest

from components.checks.loader import load_environment
from tests.harness import config_errors, needing_no_cache, raw_environment

L40S = "models[0]"  # dev: llama-3-1-8b on a quarter of an L40S
MIG = "models[1]"  # dev: qwen2-5-7b on a 3g.40gb slice of an A100


def _dev_model(index: int, **fields) -> dict:
    raw = raw_environment()
    raw["models"][index].update(fields)
    return raw


def test_unknown_preset_lists_the_presets():
    assert config_errors(_dev_model(0, preset="llama-3-8b")) == [
        f"{L40S}.preset: 'llama-3-8b' is not a model preset; use one of llama-3.1-8b, llama-3.1-70b, qwen2.5-7b, "
        "qwen2.5-32b, qwen2.5-72b, mistral-7b, mixtral-8x7b, or declare it in modelCatalog or models/*.yaml "
        "(docs/serving.md, Models of your own)"
    ]


def test_context_longer_than_the_preset_supports():
    assert config_errors(_dev_model(1, maxModelLen=65536)) == [
        f"{MIG}.maxModelLen: 65536 exceeds qwen2.5-7b's context of 32768 tokens; lower it to at most 32768"
    ]


@pytest.mark.parametrize(
    ("speculative", "message"),
    [
        ({"method": "draft"}, "required for method draft; name the draft's preset, e.g. llama-3.1-8b"),
        ({"method": "ngram", "draftPreset": "llama-3.1-8b"}, "only used by method draft; remove it for ngram"),
        ({"method": "draft", "draftPreset": "llama-3.2-1b"}, "'llama-3.2-1b' is not a model preset; use one of"),
        (
            {"method": "draft", "draftPreset": "llama-3.1-70b"},
            "llama-3.1-70b (70.6B) is not smaller than llama-3.1-8b (8.03B); a draft must be a smaller model of the "
            "same family",
        ),
    ],
)
def test_speculative_decoding_draft(speculative, message):
    [error] = config_errors(_dev_model(0, speculativeDecoding=speculative))
    assert error.startswith(f"{L40S}.speculativeDecoding.draftPreset: {message}")


def test_vllm_only_features_under_triton():
    raw = raw_environment("prod")
    raw["models"][2]["speculativeDecoding"] = {"method": "ngram"}
    raw["models"][2]["loraAdapters"] = [{"name": "tone"}]
    fix = "applies to vLLM only; under Triton the TensorRT-LLM engine is built with it. Remove it, or use runtime: vllm"
    assert config_errors(raw) == [f"models[2].speculativeDecoding: {fix}", f"models[2].loraAdapters: {fix}"]


def test_lora_adapter_names_are_unique_among_models():
    raw = _dev_model(1, loraAdapters=[{"name": "llama-3-1-8b"}, {"name": "sql"}, {"name": "sql"}])
    assert config_errors(raw) == [
        f"{MIG}.loraAdapters[0].name: 'llama-3-1-8b' is already a model or adapter name; clients select adapters "
        "by name",
        f"{MIG}.loraAdapters[2].name: 'sql' is already a model or adapter name; clients select adapters by name",
    ]


def test_lora_adapters_need_the_cache_to_mount_them():
    raw = _dev_model(1, loraAdapters=[{"name": "sql"}])
    raw["regions"][0]["modelCache"] = {"enabled": False}
    assert config_errors(raw) == [
        f"{MIG}.loraAdapters: vLLM loads LoRA adapters from a local directory, and region 'use1' has no model cache "
        "(pvc://) to mount them from; enable its modelCache or remove the adapters"
    ]


def test_engine_args_are_validated():
    raw = _dev_model(
        0,
        engineArgs={
            "max-num-batched-token": 8192,
            "tensor-parallel-size": 2,
            "--enforce-eager": True,
            "enable-auto-tool-choice": False,
            "seed": 7,
        },
    )
    at = f"{L40S}.engineArgs"
    assert config_errors(raw) == [
        f"{at}['max-num-batched-token']: not a flag of vLLM v0.33.0 a model may set; did you mean "
        "'max-num-batched-tokens'? the flags are listed in components/catalog/engines.py",
        f"{at}['tensor-parallel-size']: set by the platform; change precision, maxModelLen or maxNumSeqs (the "
        "sizing picks it) instead",
        f"{at}['--enforce-eager']: write the flag without leading dashes: 'enforce-eager'",
        f"{at}['enable-auto-tool-choice']: false is not passed to the engine; remove the flag to keep the engine's "
        "default",
    ]


def test_flags_the_pinned_vllm_removed_are_rejected_with_their_successors():
    """--swap-space and --cuda-graph-sizes are gone since v0.27.1, --calculate-kv-scales at v0.33.0 (the dumped
    parser of the v0.33.0 wheel has none of them): vLLM would exit on 'unrecognized arguments'."""
    raw = _dev_model(0, engineArgs={"swap-space": 4, "cuda-graph-sizes": 8, "calculate-kv-scales": True})
    at = f"{L40S}.engineArgs"
    assert config_errors(raw) == [
        f"{at}['swap-space']: not a flag of vLLM v0.33.0 a model may set; the flags are listed in "
        "components/catalog/engines.py",
        f"{at}['cuda-graph-sizes']: not a flag of vLLM v0.33.0 a model may set; did you mean "
        "'max-cudagraph-capture-size'? the flags are listed in components/catalog/engines.py",
        f"{at}['calculate-kv-scales']: not a flag of vLLM v0.33.0 a model may set; the flags are listed in "
        "components/catalog/engines.py",
    ]


def test_switches_take_true_and_values_take_values():
    raw = _dev_model(0, engineArgs={"enforce-eager": "yes", "seed": True})
    at = f"{L40S}.engineArgs"
    assert config_errors(raw) == [
        f"{at}['enforce-eager']: vLLM takes --enforce-eager without a value; set it to true, or remove it",
        f"{at}['seed']: vLLM --seed takes a value; set it to one, not true",
    ]


def test_triton_flags_are_its_openai_frontends():
    raw = raw_environment("prod")
    raw["models"][2]["engineArgs"] = {
        "max-num-seqs": 8,  # vLLM's
        "log-verbose": 1,  # tritonserver's: the frontend runs the core in-process and has no such flag
        "openai-port": 9000,
        "tritonserver-log-verbose-level": 1,
        "tool-call-parser": "mistral",
    }
    at = "models[2].engineArgs"
    unknown = (
        "not a flag of Triton OpenAI frontend v2.71.0 a model may set; the flags are listed in "
        "components/catalog/engines.py"
    )
    assert config_errors(raw) == [
        f"{at}['max-num-seqs']: {unknown}",
        f"{at}['log-verbose']: {unknown}",
        f"{at}['openai-port']: set by the platform; change nothing: the runtime serves OpenAI and /metrics on 8080, "
        "where the gateway and Prometheus expect them instead",
    ]


def test_placement_resource_must_be_offered_and_chosen_when_the_pool_has_several():
    raw = raw_environment()
    raw["models"][1]["placements"][0]["resource"] = "nvidia.com/mig-4g.40gb"
    offered = "nvidia.com/mig-3g.40gb, nvidia.com/mig-2g.20gb, nvidia.com/mig-1g.10gb"
    assert config_errors(raw) == [
        f"{MIG}.placements[0].resource: 'nvidia.com/mig-4g.40gb' is not offered by pool 'a100-mig' (offered: "
        f"{offered}); use one of them"
    ]
    del raw["models"][1]["placements"][0]["resource"]
    assert config_errors(raw) == [
        f"{MIG}.placements[0].resource: pool 'a100-mig' offers several GPU resources ({offered}); choose the one "
        "each replica requests"
    ]


def test_one_placement_per_model_and_region():
    raw = raw_environment()
    raw["models"][0]["placements"].append({"region": "use1", "pool": "a100-mig", "resource": "nvidia.com/mig-3g.40gb"})
    assert config_errors(raw) == [
        f"{L40S}.placements[1].region: llama-3-1-8b already runs in region 'use1' (pool 'l40s'); its "
        "InferenceService there is named after the model: keep one placement per region"
    ]


def test_fp8_kv_cache_only_on_gpus_with_fp8():
    assert config_errors(_dev_model(1, kvCacheDtype="fp8")) == [
        f"{MIG}.kvCacheDtype: an FP8 KV cache needs a GPU with FP8; placement use1/a100-mig runs on A100-80GB MIG "
        "3g.40gb, which has none: use auto"
    ]


def test_tensorrt_llm_fp8_engines_only_on_gpus_with_fp8():
    raw = _dev_model(1, runtime="triton", precision="fp8")
    assert config_errors(raw) == [
        f"{MIG}.precision: TensorRT-LLM FP8 engines need a GPU with FP8; placement use1/a100-mig runs on A100-80GB "
        "MIG 3g.40gb, which has none"
    ]


def test_a_model_that_does_not_fit_its_placement_states_the_numbers():
    # bf16 weights and an FP8 KV cache for 32 x 4096 tokens do not fit half an L40S: half of the 44.99 GiB it
    # reports (46068 MiB) x 0.9 - 2 GiB of engine overhead = 18.2 GiB usable; a share cannot be split further
    assert config_errors(_dev_model(0, precision="bf16", maxNumSeqs=32)) == [
        f"{L40S}.placements[0]: llama-3.1-8b (bf16) needs 15.0 GiB of weights + 8.0 GiB of KV cache (32 seqs x 4096 "
        "tokens); L40S 1/2 time-slice offers 18.2 GiB usable per GPU, at most 1 per node x 1 nodes: lower "
        "maxNumSeqs/maxModelLen, quantize, or use a larger GPU"
    ]


def test_the_hint_says_replicas_span_nodes_only_on_efa_pools():
    raw = raw_environment("prod")
    raw["models"][1]["maxNumSeqs"] = 128  # 64 GiB of KV: more than one L40S (non-EFA g6e.4xlarge nodes)
    errors = config_errors(raw)
    assert len(errors) == 2
    assert errors[0].startswith("models[1].placements[0]: llama-3.1-8b (bf16) needs 15.0 GiB of weights + 64.0 GiB")
    assert errors[0].endswith("or use a larger GPU (replicas span nodes only on EFA pools)")


def test_a_node_must_hold_one_server_with_what_its_engine_needs():
    """vLLM runs 2 + N busy processes, a physical core (2 vCPUs) each: 6 vCPUs for a one-GPU server."""
    raw = raw_environment()
    raw["regions"][0]["gpuPools"][0].update(machineType="g6e.xlarge")
    raw["regions"][0]["gpuPools"][0].pop("timeSlicing")
    # g6e.xlarge: 4 x 0.9 - 1 system - 1.1 cache (FUSE 0.5, worker 0.5, job worker 0.1) = 1.5 vCPU; 32 x 0.9 - 2 -
    # (4 memory tier, 1/8 of the smallest GPU node, + 4 worker JVM + 2 job worker + 2 FUSE) cache = 14.8 GiB: memory
    # would do, CPU does not
    assert config_errors(raw) == [
        f"{L40S}.placements[0].pool: a g6e.xlarge node leaves 1.5 vCPU and 15 GiB for model servers (after system "
        "and cache reservations), and one vllm server needs 6 vCPU (3 busy processes, a core each) and 6 GiB; use "
        "a larger machine type"
    ]


def test_a_server_gets_what_its_engine_needs_when_a_slot_share_is_less():
    from components.domain.host import pod_host_resources

    region = load_environment(raw_environment()).regions[0]
    mig = region.pool("a100-mig")
    # p4de.24xlarge, 32 MIG slices (no cache worker there: only the FUSE daemon's 0.5): (96 x 0.9 - 1 - 0.5) / 32 =
    # 2.65 vCPU per slice, below vLLM's 6, so a server asks 6 and a node runs floor(84.9 / 6) = 14 of them at once.
    host = pod_host_resources(region, mig, 1, runtime="vllm")
    assert (host.cpu, host.need_cpu, host.servers_per_node) == (6, 6, 14)
    # Triton (orchestrator + one rank per GPU) needs 2 x (1 + 1) = 4: floor(84.9 / 4) = 21.
    assert pod_host_resources(region, mig, 1, runtime="triton").servers_per_node == 21
    # A whole share bigger than the need is given whole: g6e.4xlarge / 2 shares = (16 x 0.9 - 1 - 1.1 cache: FUSE,
    # worker, job worker) / 2 = 6.15, 6.1 to the tenth below.
    l40s = pod_host_resources(region, region.pool("l40s"), 1, runtime="vllm")
    assert (l40s.cpu, l40s.servers_per_node) == (6.1, 2)


def test_production_never_scales_to_zero():
    raw = raw_environment("prod")
    raw["models"][0]["placements"][0]["minReplicas"] = 0
    assert config_errors(raw) == [
        "models[0].placements[0].minReplicas: production models never scale to zero: a cold start reloads 131.5 GiB "
        "of weights and starts the engine (about 339s); set minReplicas to at least 1"
    ]


def test_failover_toleration_outlasts_the_start_up_budget():
    """Karmada must not move a federated replica that is still loading: 70B from the bucket at 0.5 GiB/s takes
    395 s + 60 s engine + 180 s compile = 635 s, a probe budget of 1270 s."""
    raw = raw_environment("prod")
    needing_no_cache(raw)
    raw["regions"][0]["modelCache"] = {"enabled": False}
    assert config_errors(raw) == [
        "federation.failover.applicationTolerationSeconds: 900s is not longer than the start-up budget of "
        "llama-3-1-70b in use1 (1270s: weights, engine start and compilation, twice, at least 5 minutes), so Karmada "
        "would move replicas that are still loading; set it above 1270"
    ]
    raw["federation"]["failover"] = {"applicationTolerationSeconds": 1271}
    load_environment(raw)


@pytest.mark.parametrize(
    ("observability", "reason"),
    [
        ({"enabled": False}, "observability is off"),
        (
            {"existingPrometheus": {"namespace": "monitoring"}},
            "observability uses an existing Prometheus whose URL the platform does not know",
        ),
    ],
)
def test_autoscaling_on_metrics_needs_a_prometheus(observability, reason):
    raw = raw_environment()
    raw["regions"][0]["observability"] = observability
    assert config_errors(raw) == [
        f"regions[0].serving.prometheusUrl: llama-3-1-8b, qwen2-5-7b autoscale(s) on queue depth and latency in "
        f"this region, but {reason}; set prometheusUrl to a Prometheus that scrapes the model servers, or pin their "
        "minReplicas = maxReplicas"
    ]
    raw["regions"][0]["serving"] = {"prometheusUrl": "https://prometheus.example:9090"}
    load_environment(raw)


def test_fixed_replicas_need_no_prometheus():
    raw = raw_environment()
    raw["regions"][0]["observability"] = {"enabled": False}
    for model in raw["models"]:
        model["placements"][0].update(minReplicas=1, maxReplicas=1)
    load_environment(raw)


def _multi_node_prod() -> dict:
    """prod's 70B in bf16 at 32k context: 64 x 32768 tokens need 640 GiB of KV, more than one p5 node holds."""
    raw = raw_environment("prod")
    raw["models"][0].update(kvCacheDtype="auto", maxModelLen=32768)
    for placement in raw["models"][0]["placements"]:
        placement.update(minReplicas=1, maxReplicas=1)
    raw["models"][0]["placements"] = raw["models"][0]["placements"][:2]  # H200 (GPUDirect) keeps one node
    return raw


def test_multi_node_replicas_are_accepted_on_efa_pools():
    env = load_environment(_multi_node_prod())
    assert env.models[0].max_model_len == 32768


def test_multi_node_replicas_need_the_cache_fixed_replicas_and_standard_mode():
    raw = _multi_node_prod()
    needing_no_cache(raw)
    raw["regions"][0]["modelCache"] = {"enabled": False}
    raw["federation"]["failover"] = {"applicationTolerationSeconds": 1800}  # loads from the bucket take longer
    raw["models"][0]["placements"][1]["maxReplicas"] = 2
    raw["regions"][1]["serving"] = {"deploymentMode": "Knative"}
    needs = "one replica needs 2 nodes (pipeline parallel 2 x tensor parallel 8)"
    assert config_errors(raw) == [
        f"models[0].placements[0]: {needs}, and KServe serves multi-node replicas only from pvc:// storage; enable "
        "the modelCache of region 'use1'",
        f"models[0].placements[1]: {needs}, and KServe runs multi-node replicas only in Standard mode (region 'usw2')",
        f"models[0].placements[1].minReplicas: {needs}, and KServe's multi-node replicas take no autoscaler; set "
        "minReplicas = maxReplicas",
    ]


def test_only_vllm_replicas_span_nodes():
    raw = _multi_node_prod()
    raw["models"][0]["runtime"] = "triton"
    raw["models"][0].pop("slo")  # Triton exports no TTFT histogram to alert on
    needs = "one replica needs 2 nodes (pipeline parallel 2 x tensor parallel 8)"
    assert config_errors(raw) == [
        f"models[0].placements[{i}]: {needs}, and only vLLM replicas span nodes; use runtime: vllm or a larger GPU"
        for i in (0, 1)
    ]


def test_knative_mode_is_a_validated_option():
    raw = raw_environment()
    raw["regions"][0]["serving"] = {"deploymentMode": "Kourier"}
    assert config_errors(raw) == [
        "regions[0].serving.deploymentMode: 'Kourier' is not allowed; use one of 'Standard' or 'Knative'"
    ]
    raw["regions"][0]["serving"] = {"deploymentMode": "Knative"}
    assert load_environment(raw).regions[0].serving.deployment_mode == "Knative"


def test_context_longer_than_the_draft_supports():
    raw = raw_environment("prod")
    raw["models"][0].update(maxModelLen=65536, speculativeDecoding={"method": "draft", "draftPreset": "qwen2.5-7b"})
    assert config_errors(raw) == [
        "models[0].speculativeDecoding.draftPreset: 'qwen2.5-7b' has a 152064-token vocabulary and 'llama-3.1-70b' "
        "128256: a draft must share its target's tokenizer; pick a draft of the same family or use method ngram",
        "models[0].maxModelLen: 65536 exceeds the draft qwen2.5-7b's context of 32768 tokens; lower it to at most 32768",
    ]
