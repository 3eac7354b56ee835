"""KServe, its runtimes, KEDA and the rendered model deployments of dev and prod (and a few variants)."""

from __future__ import annotations

import json
import math

import pytest

from components.catalog.engines import NON_ROOT_UID, TRITON_IMAGE, VLLM_IMAGE
from components.catalog.metrics import KNOWN_SERIES
from components.checks.loader import load_environment
from components.k8s import names
from components.serving.autoscaling import scaled_object_manifest
from components.serving.deployment import (
    inference_service_manifest,
    model_placement,
    model_placements,
    pod_group_manifest,
)
from platform_catalog.gpus import GPUS
from platform_catalog.names import SERVING_NAMESPACE, annotation
from policies.offline import evaluate_plan
from tests.harness import (
    INFERENCE_SERVICES,
    cluster_objects,
    config_errors,
    environment_config,
    needing_no_cache,
    plan_config,
    raw_environment,
)
from tests.test_observability import metric_names
from tests.test_serving_config import _multi_node_prod
from tools.plan.report import render_markdown

ISVC = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
RUNTIME = "kubernetes:serving.kserve.io/v1alpha1:ClusterServingRuntime"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
PDB = "kubernetes:policy/v1:PodDisruptionBudget"
RELEASE = "kubernetes:helm.sh/v3:Release"
PROMETHEUS = "http://kube-prometheus-stack-prometheus.monitoring.svc:9090"


def _objects(plan, type_: str) -> dict[tuple[str, str], dict]:
    """(cluster, name) -> inputs; what Karmada gives its members included (federated models)."""
    if type_ in (ISVC, PDB):
        return cluster_objects(plan, type_.rsplit(":", 1)[-1])
    return {(plan.cluster_of(r), r.inputs["metadata"]["name"]): r.inputs for r in plan.of_type(type_)}


def _model(isvc: dict) -> dict:
    return isvc["spec"]["predictor"]["model"]


def _annotation(isvc: dict, key: str) -> str:
    return isvc["metadata"]["annotations"][annotation(key)]


def _release(plan, name: str):
    return next(r for r in plan.helm_releases() if r.name == name)


# --- engine arguments per model x GPU ---------------------------------------------------------------


def test_dev_engines_are_sized_for_a_time_slice_share_and_a_mig_slice(dev_plan):
    isvcs = _objects(dev_plan, ISVC)
    share = _model(isvcs["dev-use1", "llama-3-1-8b"])["args"]
    # half an L40S: 0.9 of its 24 GiB is 0.45 of the 48 GiB device the engine sees
    assert "--gpu-memory-utilization=0.45" in share
    assert {"--quantization=awq_marlin", "--kv-cache-dtype=fp8", "--max-model-len=4096", "--max-num-seqs=16"} <= set(
        share
    )
    mig = _model(isvcs["dev-use1", "qwen2-5-7b"])["args"]
    assert {"--gpu-memory-utilization=0.9", "--dtype=bfloat16", "--tensor-parallel-size=1"} <= set(mig)
    assert not [a for a in mig if a.startswith("--kv-cache-dtype")]  # A100: no FP8
    for args in (share, mig):
        assert {"--enable-prefix-caching", "--enable-chunked-prefill", "--load-format=runai_streamer"} <= set(args)
        assert "--model=/mnt/models" in args


def test_engines_sharing_a_time_sliced_gpu_are_given_their_kv_cache(dev_plan):
    """Two vLLM servers starting together on one L40S would each count the other's weights, loaded during its
    memory profiling, as its own: the share's KV cache is given, and vLLM skips that measurement."""
    isvcs = _objects(dev_plan, ISVC)
    share = _model(isvcs["dev-use1", "llama-3-1-8b"])["args"]
    # Half an L40S (46,068 MiB reported, 22.494 GiB): 22.494 x 0.9 - 2 GiB overhead - 5.2070 GiB of AWQ weights
    # (embedding and output head 16-bit) = 13.0377 GiB, 13,350.6 MiB: 13,350 MiB (the annotation rounds to 13.04)
    (kv,) = [a for a in share if a.startswith("--kv-cache-memory-bytes=")]
    assert int(kv.split("=")[1]) == 13350 * 2**20
    assert _annotation(isvcs["dev-use1", "llama-3-1-8b"], "kv-cache-gib") == "13.04"
    # a MIG slice is isolated memory: the engine profiles it alone
    assert not [a for a in _model(isvcs["dev-use1", "qwen2-5-7b"])["args"] if a.startswith("--kv-cache-memory")]


def test_prod_70b_splits_four_ways_on_h100_and_two_ways_on_h200(prod_plan):
    isvcs = _objects(prod_plan, ISVC)
    for cluster, tp, gpu in (
        ("prod-use1", 4, "H100-80GB"),
        ("prod-usw2", 4, "H100-80GB"),
        ("prod-usc1", 2, "H200-141GB"),
    ):
        isvc = isvcs[cluster, "llama-3-1-70b"]
        args = _model(isvc)["args"]
        assert f"--tensor-parallel-size={tp}" in args and "--pipeline-parallel-size=1" in args
        assert "--kv-cache-dtype=fp8" in args
        assert (_annotation(isvc, "tensor-parallel"), _annotation(isvc, "gpu-product")) == (str(tp), gpu)
        assert _model(isvc)["resources"]["limits"]["nvidia.com/gpu"] == tp
    speculative = next(a for a in _model(isvcs["prod-use1", "llama-3-1-8b"])["args"] if "speculative" in a)
    assert json.loads(speculative.split("=", 1)[1]) == {
        "method": "ngram",
        "num_speculative_tokens": 4,
        "prompt_lookup_max": 4,
    }


def test_triton_model_runs_the_trtllm_runtime_without_vllm_flags(prod_plan):
    isvc = _objects(prod_plan, ISVC)["prod-usc1", "mistral-7b-trt"]
    model = _model(isvc)
    assert model["runtime"] == "inference-platform-triton-trtllm"
    assert model["modelFormat"] == {"name": "triton", "version": "2"}
    assert "protocolVersion" not in model  # it speaks OpenAI, for which KServe has no protocol version
    assert "env" not in model  # one L4, no overrides
    assert not [a for a in model["args"] if not a.startswith("--default-max-tokens=")]  # no vLLM flag
    assert model["storageUri"] == "pvc://models/models/mistral-7b-trt"
    assert model["startupProbe"]["httpGet"] == {"path": "/health/ready", "port": 8080}


def test_fp8_kv_cache_only_where_the_gpu_has_fp8(env_plan):
    spec = env_plan.spec
    wanted = {(m.name, p.region) for m in spec.models for p in m.placements if m.kv_cache_dtype == "fp8"}
    # one per placement, a federated model's one Karmada template for all its regions: dev 8b and qwen in use1;
    # prod 8b in use1 and usw2, mistral in usc1, 70b's template (the disaggregated rag model is no InferenceService)
    assert len(env_plan.of_type(ISVC)) == {"dev": 2, "prod": 4}[env_plan.environment], "InferenceServices declared"
    for r in env_plan.of_type(ISVC):
        isvc = r.inputs
        fp8 = "--kv-cache-dtype=fp8" in _model(isvc).get("args", [])
        gpu = GPUS[_annotation(isvc, "gpu-product")]
        assert _annotation(isvc, "fp8-capable") == str(gpu.fp8).lower()
        if fp8:
            assert gpu.fp8
        region = env_plan.region_of(r)
        if (isvc["metadata"]["name"], region) in wanted and _model(isvc)["runtime"].endswith("vllm"):
            assert fp8


def test_engine_overrides_draft_models_and_lora_adapters_render_after_the_derived_flags():
    raw = raw_environment("prod")
    raw["models"][0]["speculativeDecoding"] = {"method": "draft", "draftPreset": "llama-3.1-8b"}
    raw["models"][1]["loraAdapters"] = [{"name": "tone"}, {"name": "sql", "path": "adapters/sql-v2"}]
    raw["models"][1]["engineArgs"] = {"max-num-batched-tokens": 8192, "enable-auto-tool-choice": True}
    env = load_environment(raw)
    big = model_placement(env, env.models[0], env.models[0].placements[0])
    speculative = next(a for a in _model(inference_service_manifest(big, "pvc://models/x"))["args"] if "specul" in a)
    assert json.loads(speculative.split("=", 1)[1]) == {"model": "/mnt/models/draft", "num_speculative_tokens": 4}
    assert big.fit.sizing.weights_gib == 146.46  # 70B + its 8B draft
    small = model_placement(env, env.models[1], env.models[1].placements[0])
    args = _model(inference_service_manifest(small, "pvc://models/x"))["args"]
    assert args[-9:] == [
        "--enable-lora",
        "--max-loras=3",  # its own two, then tenant legal's (tenants[].loras)
        "--max-lora-rank=16",
        "--lora-modules",
        "tone=/mnt/models/loras/tone",
        "sql=/mnt/models/adapters/sql-v2",
        "legal-contracts=/mnt/models/loras/legal-contracts",
        "--max-num-batched-tokens=8192",
        "--enable-auto-tool-choice",
    ]


# --- pods: resources, probes, /dev/shm, scheduling ----------------------------------------------------


def test_resources_are_the_pools_gpu_and_the_nodes_share(dev_plan, prod_plan):
    mig = _model(_objects(dev_plan, ISVC)["dev-use1", "qwen2-5-7b"])["resources"]
    # p4de.24xlarge: (96 x 0.9 - 1 - 0.5 FUSE) / 32 slices = 2.65 vCPU, below the 2 x (2 + 1) = 6 vCPU a vLLM
    # server needs, so 6; (1152 x 0.9 - 2 - 2 FUSE) / 32 = 32.28 GiB (no cache worker runs on this pool, which
    # scales from zero: config/model_store.py worker_pools)
    assert mig["requests"] == {"cpu": "6000m", "memory": "32Gi", "nvidia.com/mig-3g.40gb": 1}
    assert mig["limits"] == mig["requests"]
    for plan in (dev_plan, prod_plan):
        for isvc in _objects(plan, ISVC).values():
            resources = _model(isvc)["resources"]
            assert resources["requests"] == resources["limits"]
            gpus = {k: v for k, v in resources["limits"].items() if k.startswith("nvidia.com/")}
            assert list(gpus.values()) == [int(_annotation(isvc, "tensor-parallel"))]
            assert "vpc.amazonaws.com/efa" not in resources["limits"]  # one node per replica: no fabric


def test_mig_resources_are_declared_to_kserve_as_gpus(dev_plan):
    isvcs = _objects(dev_plan, ISVC)
    annotations = isvcs["dev-use1", "qwen2-5-7b"]["metadata"]["annotations"]
    assert json.loads(annotations["serving.kserve.io/gpu-resource-types"]) == ["nvidia.com/mig-3g.40gb"]
    assert "serving.kserve.io/gpu-resource-types" not in isvcs["dev-use1", "llama-3-1-8b"]["metadata"]["annotations"]


def test_startup_probe_budget_covers_the_estimated_load_twice_and_five_minutes(env_plan):
    isvcs = _objects(env_plan, ISVC)
    assert len(isvcs) == INFERENCE_SERVICES[env_plan.environment], "InferenceServices on the member clusters"
    for isvc in isvcs.values():
        probe = _model(isvc)["startupProbe"]
        load = int(_annotation(isvc, "estimated-load-seconds"))
        budget = max(2 * load, 300)  # a GPU model server never gets less than 5 minutes
        assert probe["periodSeconds"] * probe["failureThreshold"] >= budget
        assert probe["failureThreshold"] == math.ceil(budget / probe["periodSeconds"])


def test_estimated_load_reads_the_weights_at_the_cache_bandwidth(prod_plan):
    isvc = _objects(prod_plan, ISVC)["prod-use1", "llama-3-1-70b"]
    # 131.5 GiB at 2 GiB/s (model cache) x 1.5 + 60 s engine start + 180 s torch.compile and CUDA graphs = 339 s
    assert _annotation(isvc, "estimated-load-seconds") == "339"
    assert _annotation(isvc, "weights-gib") == "131.5"
    # An H100 reports 81559 MiB = 79.65 GiB: 4 x (79.65 x 0.9 - 2) - 131.5 = 147.23 GiB of KV cache
    assert _annotation(isvc, "kv-cache-gib") == "147.23"


def test_tensor_parallel_servers_get_a_memory_backed_dev_shm_per_gpu(prod_plan):
    runtimes = _objects(prod_plan, RUNTIME)
    vllm = runtimes["prod-use1", "inference-platform-vllm"]["spec"]
    assert {"name": "dshm", "mountPath": "/dev/shm"} in vllm["containers"][0]["volumeMounts"]
    for cluster, tp in (("prod-use1", 4), ("prod-usc1", 2)):
        predictor = _objects(prod_plan, ISVC)[cluster, "llama-3-1-70b"]["spec"]["predictor"]
        assert predictor["volumes"] == [
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": f"{tp}Gi"}},
            {"name": "vllm-compile-cache", "emptyDir": {"sizeLimit": "8Gi"}},
        ]


def test_pods_carry_the_scheduling_contract_and_the_pool(dev_plan, prod_plan):
    for plan in (dev_plan, prod_plan):
        models = {m.name: m for m in plan.spec.models}
        isvcs = _objects(plan, ISVC)
        assert len(isvcs) == INFERENCE_SERVICES[plan.environment], plan.environment
        for (cluster, name), isvc in isvcs.items():
            predictor, model = isvc["spec"]["predictor"], models[name]
            region = cluster.removeprefix(f"{plan.environment}-")
            pool = next(p.pool for p in model.placements if p.region == region)
            assert predictor["schedulerName"] == "volcano"
            assert predictor["priorityClassName"] == "inference-realtime"
            assert predictor["annotations"]["scheduling.volcano.sh/queue-name"] == model.tenant
            assert predictor["annotations"]["volcano.sh/preemptable"] == "false"
            assert predictor["nodeSelector"] == {"inference-platform.io/pool": pool}
            assert predictor["tolerations"] == [
                {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
            ]
            assert predictor["serviceAccountName"] == names.MODEL_SERVER_SERVICE_ACCOUNT
            assert predictor["labels"] == {
                names.PART_OF_LABEL: names.PLATFORM_PART_OF,
                names.MODEL_LABEL: model.name,
                # the endpoint picker's metric mapping for the pod's engine
                "inference.networking.k8s.io/engine-type": {"vllm": "vllm", "triton": "triton-tensorrt-llm"}[
                    model.runtime
                ],
            }
            assert isvc["metadata"]["namespace"] == SERVING_NAMESPACE


def test_replicated_models_get_a_budget_and_zone_spread(prod_plan, dev_plan):
    budgets = _objects(prod_plan, PDB)
    for (cluster, name), isvc in _objects(prod_plan, ISVC).items():
        predictor = isvc["spec"]["predictor"]
        assert predictor["maxReplicas"] > 1
        assert budgets[cluster, name]["spec"] == {
            "maxUnavailable": 1,
            "selector": {"matchLabels": {"serving.kserve.io/inferenceservice": name}},
        }
        [spread] = predictor["topologySpreadConstraints"]
        assert (spread["topologyKey"], spread["whenUnsatisfiable"]) == ("topology.kubernetes.io/zone", "ScheduleAnyway")
    # dev's MIG model runs at most one replica: no budget, no spread
    assert ("dev-use1", "qwen2-5-7b") not in _objects(dev_plan, PDB)
    assert "topologySpreadConstraints" not in _objects(dev_plan, ISVC)["dev-use1", "qwen2-5-7b"]["spec"]["predictor"]


# --- autoscaling ----------------------------------------------------------------------------------------


def test_every_range_of_replicas_gets_a_scaled_object_on_the_predictor(env_plan):
    isvcs, scalers = _objects(env_plan, ISVC), _objects(env_plan, SCALED_OBJECT)
    assert set(scalers) == set(isvcs)
    for key, scaler in scalers.items():
        predictor = isvcs[key]["spec"]["predictor"]
        spec = scaler["spec"]
        assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": f"{key[1]}-predictor"}
        assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (
            predictor["minReplicas"],
            predictor["maxReplicas"],
        )
        assert isvcs[key]["metadata"]["annotations"]["serving.kserve.io/autoscalerClass"] == "external"
        for trigger in spec["triggers"]:
            assert trigger["metadata"]["serverAddress"] == PROMETHEUS
            assert metric_names(trigger["metadata"]["query"]) <= KNOWN_SERIES


def test_triggers_are_queue_depth_and_latency_against_the_objectives(prod_plan, dev_plan):
    scalers = _objects(prod_plan, SCALED_OBJECT)
    triggers = {t["name"]: t for t in scalers["prod-use1", "llama-3-1-8b"]["spec"]["triggers"]}
    # and, its tenants being of two classes, the requests its picker holds (tests/test_priority_classes.py)
    assert list(triggers) == ["queue", "latency", "gateway-held"]
    assert triggers["queue"]["metadata"] == {
        "serverAddress": PROMETHEUS,
        "query": 'sum(vllm:num_requests_waiting{namespace="inference",platform_model="llama-3-1-8b"})',
        "threshold": "4",
    }
    assert triggers["queue"]["metricType"] == "AverageValue"
    assert triggers["latency"]["metricType"] == "Value"
    assert triggers["latency"]["metadata"]["threshold"] == "1"  # the model's slo.ttftP95Seconds
    assert "vllm:time_to_first_token_seconds_bucket" in triggers["latency"]["metadata"]["query"]
    triton = {t["name"]: t for t in scalers["prod-usc1", "mistral-7b-trt"]["spec"]["triggers"]}
    assert metric_names(triton["queue"]["metadata"]["query"]) == {"nv_inference_pending_request_count"}
    assert triton["latency"]["metadata"]["threshold"] == "2"  # the region's default objective
    # production never scales to zero; dev wakes from zero on the gateway's requests
    assert all(s["spec"]["minReplicaCount"] >= 1 for s in scalers.values())
    dev = _objects(dev_plan, SCALED_OBJECT)["dev-use1", "llama-3-1-8b"]["spec"]
    assert dev["minReplicaCount"] == 0
    wake = dev["triggers"][-1]
    # requests the picker held while the model had no pod and could not place (its flow control's outcomes
    # other than Dispatched, a counter: a 10 s hold falls between two scrapes of a queue gauge)
    assert wake["name"] == "gateway-queue"
    assert wake["metadata"]["query"] == (
        "sum(increase(inference_extension_flow_control_request_queue_duration_seconds_count"
        '{inference_pool="llama-3-1-8b",outcome!="Dispatched"}[2m])) or vector(0)'
    )
    assert wake["metadata"]["threshold"] == "16"  # one replica per maxNumSeqs unplaced requests


def test_keda_and_kserve_releases(prod_plan):
    keda = _release(prod_plan, "prod-use1-keda").inputs
    assert (keda["chart"], keda["version"], keda["namespace"]) == ("keda", "2.20.2", "keda")
    assert keda["values"]["watchNamespace"] == SERVING_NAMESPACE
    assert keda["values"]["operator"] == {"replicaCount": 2}
    kserve = _release(prod_plan, "prod-use1-kserve").inputs
    assert kserve["chart"] == "oci://ghcr.io/kserve/charts/kserve-resources" and kserve["version"] == "v0.20.0"
    controller = kserve["values"]["kserve"]["controller"]
    assert controller["deploymentMode"] == "Standard"
    assert controller["gateway"] == {"disableIngressCreation": True, "ingressGateway": {"enableGatewayApi": False}}
    crd = _release(prod_plan, "prod-use1-kserve-crd")
    assert crd.urn in prod_plan.named("prod-use1-kserve", RELEASE).options["dependsOn"]


def test_model_servers_wait_for_what_they_refer_to(dev_plan):
    isvc = dev_plan.named("dev-use1-inferenceservice-llama-3-1-8b", ISVC)
    # (the SDK records a dependency on a component as one on each of its resources)
    depends = {dev_plan.by_urn[u].name for u in isvc.options["dependsOn"]}
    assert {
        "dev-use1-kserve",  # controller and webhooks
        "dev-use1-runtime-inference-platform-vllm",
        "dev-use1-volcano",
        "dev-use1-queue-research",
        "dev-use1-priority-realtime",
        "dev-use1-inference",  # namespace
        "dev-use1-model-server",  # service account
        "dev-use1-inference-dataset-models",  # the cache's PVC
    } <= depends
    scaler = dev_plan.named("dev-use1-scaledobject-llama-3-1-8b", SCALED_OBJECT)
    assert {dev_plan.by_urn[u].name for u in scaler.options["dependsOn"]} >= {
        "dev-use1-keda",
        "dev-use1-inferenceservice-llama-3-1-8b",
    }
    runtime = dev_plan.named("dev-use1-runtime-inference-platform-vllm", RUNTIME)
    # its CRD's release, and the webhook's Service awaited after the controller's release (which it depends on)
    assert {dev_plan.by_urn[u].name for u in runtime.options["dependsOn"]} >= {
        "dev-use1-kserve-crd",
        "dev-use1-kserve-webhook-server-service-serving",
    }


# --- runtimes ------------------------------------------------------------------------------------------


def test_runtimes_are_pinned_non_root_with_bounded_shm_and_annotated_metrics(dev_plan):
    runtimes = _objects(dev_plan, RUNTIME)
    assert {name for _, name in runtimes} == {
        "inference-platform-vllm",
        "inference-platform-vllm-multinode",
        "inference-platform-triton-trtllm",
    }
    for (_, name), runtime in runtimes.items():
        spec = runtime["spec"]
        [main] = spec["containers"]
        assert main["image"] == (TRITON_IMAGE if "triton" in name else VLLM_IMAGE)
        assert ":latest" not in main["image"]
        assert main["securityContext"]["runAsNonRoot"] is True and main["securityContext"]["runAsUser"] == NON_ROOT_UID
        assert main["securityContext"]["allowPrivilegeEscalation"] is False
        assert spec["volumes"][0] == {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}
        assert spec["annotations"]["prometheus.kserve.io/port"] == "8080"
        assert main["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
        assert main["readinessProbe"] != main["livenessProbe"]
        assert all(not f["autoSelect"] for f in spec["supportedModelFormats"])
    vllm = runtimes["dev-use1", "inference-platform-vllm"]["spec"]["containers"][0]
    assert vllm["readinessProbe"]["httpGet"]["path"] == "/v1/models"
    assert {"name": "HOME", "value": "/tmp"} in vllm["env"]


def test_triton_runs_its_openai_frontend_on_the_port_the_gateway_targets(prod_plan):
    """The gateway sends OpenAI requests to 8080; tritonserver speaks only KServe v2 there, the frontend OpenAI."""
    runtime = _objects(prod_plan, RUNTIME)["prod-usc1", "inference-platform-triton-trtllm"]["spec"]
    [main] = runtime["containers"]
    assert main["args"] == [
        "python3",
        "/opt/tritonserver/python/openai/openai_frontend/main.py",
        "--model-repository=/mnt/models",
        "--tokenizer=/mnt/models",
        "--backend=tensorrtllm",
        "--openai-port=8080",
    ]
    assert "command" not in main  # NGC's entrypoint runs args
    assert "protocolVersions" not in runtime
    assert main["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    # the core's metrics (TensorRT-LLM's included) at /metrics of the same port: KServe's annotation, the PodMonitor
    assert runtime["annotations"] == {"prometheus.kserve.io/port": "8080", "prometheus.kserve.io/path": "/metrics"}
    assert names.TRITON_METRICS_PORT == 8080
    # ready: the core and every model of the repository; live: the frontend answers (its static model list)
    assert main["readinessProbe"]["httpGet"] == {"path": "/health/ready", "port": 8080}
    assert main["livenessProbe"]["httpGet"] == {"path": "/v1/models", "port": 8080}
    assert main["startupProbe"]["httpGet"] == {"path": "/health/ready", "port": 8080}
    [pool] = [
        r.inputs
        for r in prod_plan.kubernetes_objects()
        if r.inputs["kind"] == "InferencePool" and r.inputs["metadata"]["name"] == "mistral-7b-trt"
    ]
    assert pool["spec"]["targetPorts"] == [{"number": 8080}]


def test_a_triton_models_frontend_flags_follow_the_runtimes():
    raw = raw_environment("prod")
    raw["models"][2]["engineArgs"] = {"tool-call-parser": "mistral"}
    raw["models"][2]["maxOutputTokens"] = 512
    env = load_environment(raw)
    [_, triton] = model_placements(env, env.region("usc1"))
    # KServe appends the InferenceService's args to the runtime's command line
    assert _model(inference_service_manifest(triton, "pvc://models/models/mistral-7b-trt"))["args"] == [
        "--default-max-tokens=512",
        "--tool-call-parser=mistral",
    ]


def test_triton_answers_run_to_the_models_output_budget(prod_plan):
    """The OpenAI frontend gives a request without max_tokens 16 tokens (--default-max-tokens, default 16:
    triton-inference-server/server@v2.71.0:python/openai/openai_frontend/main.py); prod's mistral gets half its
    8192-token window, 4096, by default."""
    isvc = _objects(prod_plan, ISVC)[("prod-usc1", "mistral-7b-trt")]
    assert _model(isvc)["args"] == ["--default-max-tokens=4096"]


@pytest.mark.parametrize(
    ("model", "value", "error"),
    [
        (
            2,
            8192,
            "models[2].maxOutputTokens: 8192 leaves no room for a prompt within maxModelLen 8192",
        ),
        (
            1,
            1024,
            "models[1].maxOutputTokens: applies to Triton only; vLLM answers up to maxModelLen minus the prompt. "
            "Remove it",
        ),
    ],
)
def test_output_budget_errors(model, value, error):
    raw = raw_environment("prod")
    raw["models"][model]["maxOutputTokens"] = value
    assert config_errors(raw) == [error]


def test_default_max_tokens_is_derived_not_tunable():
    raw = raw_environment("prod")
    raw["models"][2]["engineArgs"] = {"default-max-tokens": 512}
    assert config_errors(raw) == [
        "models[2].engineArgs['default-max-tokens']: set by the platform; change maxOutputTokens instead"
    ]


# The OpenAI servers the runtimes may run, and the flag that sets their port.
OPENAI_SERVERS = {"vllm.entrypoints.openai.api_server": "--port", "openai_frontend/main.py": "--openai-port"}


def test_every_pool_targets_an_openai_server_of_its_runtime(env_plan):
    runtimes = _objects(env_plan, RUNTIME)
    isvcs = _objects(env_plan, ISVC)
    pools = [r for r in env_plan.kubernetes_objects() if r.inputs["kind"] == "InferencePool"]
    # A disaggregated model's pool is KServe's (llm_inference_service.py), created by its controller.
    disaggregated = {
        r.inputs["metadata"]["name"] for r in env_plan.kubernetes_objects() if r.inputs["kind"] == "LLMInferenceService"
    }
    assert disaggregated.isdisjoint(p.inputs["metadata"]["name"] for p in pools)
    assert {p.inputs["metadata"]["name"] for p in pools} >= {m.name for m in env_plan.spec.models} - disaggregated
    for pool in pools:
        cluster, model = env_plan.cluster_of(pool), pool.inputs["metadata"]["name"]
        [main] = runtimes[cluster, _model(isvcs[cluster, model])["runtime"]]["spec"]["containers"]
        [target] = pool.inputs["spec"]["targetPorts"]
        port = int(target["number"])
        command_line = " ".join([*main.get("command", []), *main["args"]])
        [port_flag] = [flag for server, flag in OPENAI_SERVERS.items() if server in command_line]
        assert f"{port_flag}={port}" in main["args"]
        assert port in [p["containerPort"] for p in main["ports"]]
        assert main["readinessProbe"]["httpGet"]["port"] == port


# --- variants: weights from the bucket, multi-node replicas, Knative ------------------------------------


def test_without_the_cache_vllm_streams_from_the_bucket_and_triton_downloads():
    raw = raw_environment("prod")
    needing_no_cache(raw)
    for region in raw["regions"]:
        region["modelCache"] = {"enabled": False}
    raw["federation"]["failover"] = {"applicationTolerationSeconds": 1800}  # loads from the bucket take longer
    env = load_environment(raw)
    use1 = env.region("use1")
    [_, small, _] = model_placements(env, use1)
    bucket = "s3://acme-inference-prod-use1-models/models/llama-3-1-8b/"
    model = _model(inference_service_manifest(small, bucket))
    assert "storageUri" not in model  # no storage initializer: the streamer reads the bucket
    assert "--model=s3://acme-inference-prod-use1-models/models/llama-3-1-8b" in model["args"]
    assert model["env"] == [{"name": "AWS_REGION", "value": "us-east-1"}]
    # 14.96 GiB at 0.5 GiB/s x 1.5 + 60 s engine start + 180 s compile
    assert small.startup_seconds == 285
    [_, triton] = model_placements(env, env.region("usc1"))
    gcs = "gs://acme-inference-prod-usc1-models/models/mistral-7b-trt/"
    assert _model(inference_service_manifest(triton, gcs))["storageUri"] == gcs


@pytest.mark.slow
def test_a_replica_over_two_efa_nodes_is_a_gang_with_ray_workers(upstream):
    env = load_environment(_multi_node_prod())
    p = model_placement(env, env.models[0], env.models[0].placements[0])
    isvc = inference_service_manifest(p, "pvc://models/models/llama-3-1-70b")
    predictor = isvc["spec"]["predictor"]
    model = predictor["model"]
    assert model["runtime"] == "inference-platform-vllm-multinode"
    assert {"--tensor-parallel-size=8", "--pipeline-parallel-size=2", "--distributed-executor-backend=ray"} <= set(
        model["args"]
    )
    efa = {"vpc.amazonaws.com/efa": 32, "nvidia.com/gpu": 8}
    assert efa.items() <= model["resources"]["limits"].items()
    worker = predictor["workerSpec"]
    assert (worker["tensorParallelSize"], worker["pipelineParallelSize"]) == (8, 2)
    assert worker["containers"] == [{"name": "worker-container", "resources": model["resources"]}]
    assert (worker["schedulerName"], worker["nodeSelector"]) == ("volcano", predictor["nodeSelector"])
    # KServe builds the workers' pods from workerSpec alone (predictor.go L556-601): they get the head's grace, or
    # they would stop 30 s into its 900 s drain holding its shards
    assert worker["terminationGracePeriodSeconds"] == predictor["terminationGracePeriodSeconds"] == 905
    assert isvc["metadata"]["annotations"]["serving.kserve.io/autoscalerClass"] == "none"
    assert predictor["annotations"]["scheduling.k8s.io/group-name"] == "llama-3-1-70b-gang"
    group = pod_group_manifest(p)
    assert group["spec"]["minMember"] == 2
    assert group["spec"]["minResources"] == {"nvidia.com/gpu": 16, "vpc.amazonaws.com/efa": 64}
    assert group["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}
    assert p.autoscaler == "fixed"
    # workers carry the predictor's labels too: the gateway picks the head by the `app` label KServe gives it
    assert p.serving_pods == {**p.labels, "app": "isvc.llama-3-1-70b-predictor"}
    for manifest in (isvc, group):
        assert upstream.validate_custom_resource(manifest) == []
    assert pod_group_manifest(model_placement(env, env.models[1], env.models[1].placements[0])) is None


@pytest.mark.plan
def test_knative_mode_scales_with_knative_and_installs_no_keda():
    config = environment_config("dev")
    config["inference-platform:regions"][0]["serving"] = {"deploymentMode": "Knative"}
    plan = plan_config(config)
    assert not plan.of_type(SCALED_OBJECT)
    assert not plan.of_type("inference-platform:addons:Keda")
    controller = _release(plan, "test-use1-kserve").inputs["values"]["kserve"]["controller"]
    assert controller["deploymentMode"] == "Knative"
    isvc = _objects(plan, ISVC)["test-use1", "llama-3-1-8b"]
    assert isvc["metadata"]["annotations"]["serving.kserve.io/deploymentMode"] == "Knative"
    assert "serving.kserve.io/autoscalerClass" not in isvc["metadata"]["annotations"]
    predictor = isvc["spec"]["predictor"]
    assert (predictor["scaleMetric"], predictor["scaleTarget"], predictor["minReplicas"]) == ("concurrency", 16, 0)


def test_scaled_object_of_a_placement_validates_against_keda(upstream):
    env = load_environment(raw_environment())
    placements = model_placements(env, env.region("use1"))
    assert sorted(p.model.name for p in placements) == ["llama-3-1-8b", "qwen2-5-7b"], "dev's two models in use1"
    for p in placements:
        assert upstream.validate_custom_resource(scaled_object_manifest(p, PROMETHEUS)) == []


# --- review artefacts ------------------------------------------------------------------------------------


def test_plan_md_lists_each_model_deployment(prod_plan):
    markdown = render_markdown(prod_plan)
    assert "## Model deployments" in markdown
    assert (
        # An H200 reports 143771 MiB = 140.40 GiB: 2 x (140.40 x 0.9 - 2) - 131.5 = 117.22 GiB, 93 x 1.25 GiB
        "| usc1 | llama-3-1-70b | vllm | h200 | H200-141GB (`nvidia.com/gpu` x 2) | 2 x 1 | 131.5 | 117.22 | 93 "
        "| 64 x 8192 | 1-2 | keda | 339s / 678s | never at zero |"
    ) in markdown


def test_the_llm_rules_check_every_model_server(env_plan):
    evaluation = evaluate_plan(env_plan)
    for rule in ("llm-model-fits-gpu", "llm-startup-probe-budget", "llm-shm-for-tensor-parallel", "k8s-probes"):
        assert evaluation.subjects.get(rule), rule
        assert not evaluation.of(rule), [f.message for f in evaluation.of(rule)]


@pytest.mark.plan
@pytest.mark.parametrize("env", ["dev", "prod"])
def test_components_per_model_placement(env, request):
    plan = request.getfixturevalue(f"{env}_plan")
    deployments = plan.of_type("inference-platform:serving:ModelDeployment")
    assert len(deployments) == sum(len(m.placements) for m in plan.spec.models)
    assert len(plan.of_type("inference-platform:addons:KServe")) == len(plan.spec.regions)


def test_production_runs_two_kserve_controllers_over_zones_for_its_pod_webhook(dev_plan, prod_plan):
    """KServe v0.20.0's controller Deployment sets no replicas (one pod; the chart has no value for them:
    charts/kserve-resources/files/kserve/resources.yaml L426-L447) and serves the pod mutator every InferenceService
    pod passes, failurePolicy Fail. prod patches it to two (it elects a leader, --leader-elect) spread over zones,
    with a budget; dev keeps the chart's one."""
    pod = {"control-plane": "kserve-controller-manager"}  # the chart's pod label (resources.yaml L447)

    def kserve(plan):
        patches = [
            r
            for r in plan.kubernetes_objects()
            if r.type == "kubernetes:apps/v1:DeploymentPatch" and r.inputs["metadata"]["namespace"] == "kserve"
        ]
        budgets = [
            r
            for r in plan.kubernetes_objects()
            if r.inputs["kind"] == "PodDisruptionBudget" and r.inputs["metadata"]["namespace"] == "kserve"
        ]
        releases = [r for r in plan.helm_releases() if r.inputs["name"] == "kserve"]
        return patches, budgets, releases

    patches, budgets, releases = kserve(prod_plan)
    assert [(p.inputs["metadata"]["name"], p.inputs["spec"]) for p in patches] == [
        ("kserve-controller-manager", {"replicas": 2})
    ] * 3
    assert [b.inputs["spec"] for b in budgets] == [{"maxUnavailable": 1, "selector": {"matchLabels": pod}}] * 3
    spreads = [r.inputs["values"]["kserve"]["controller"]["topologySpreadConstraints"] for r in releases]
    assert (
        spreads
        == [
            [
                {
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": pod},
                }
            ]
        ]
        * 3
    )
    assert all(r.urn in p.options["dependsOn"] for r, p in zip(releases, patches, strict=True))
    # Helm's manager owns the replicas the API server defaulted: unforced, the apply is a 409 conflict
    assert [p.inputs["metadata"]["annotations"]["pulumi.com/patchForce"] for p in patches] == ["true"] * 3
    patches, budgets, releases = kserve(dev_plan)
    assert (patches, budgets) == ([], [])
    assert "topologySpreadConstraints" not in releases[0].inputs["values"]["kserve"]["controller"]
