"""The platform's ClusterServingRuntimes: vLLM's OpenAI server (one node, and Ray-based multi-node) and
Triton with the TensorRT-LLM backend behind Triton's OpenAI frontend. Every runtime serves the OpenAI
API on 8080, the port the gateway's InferencePools target.

What every model shares lives here: pinned image, non-root user, ports (the metrics port annotated
for KServe and declared for the PodMonitors), readiness on the serving API distinct from liveness,
a generous default startup probe, and /dev/shm as a memory-backed emptyDir with a size limit.
What depends on the model and GPU (engine flags, resources, startup budget, /dev/shm size) is set
by each InferenceService (`deployment.py`), whose fields KServe merges over these.

Upstream's runtimes differ: kserve-vllmserver runs vllm/vllm-openai:latest as root with an unbounded
/dev/shm, kserve-tritonserver an old image without TensorRT-LLM
[kserve/kserve@v0.20.0:config/runtimes/kserve-vllmserver.yaml, kserve-tritonserver.yaml].
"""

from __future__ import annotations

from typing import Any

from components.catalog.engines import (
    NON_ROOT_UID,
    TRITON_IMAGE,
    TRITON_OPENAI_FRONTEND,
    VLLM_IMAGE,
    VLLM_NON_ROOT_ENV,
)
from components.k8s.names import TRITON_METRICS_PORT, VLLM_METRICS_PORT

RUNTIME_API_VERSION = "serving.kserve.io/v1alpha1"
VLLM_RUNTIME = "inference-platform-vllm"
VLLM_MULTINODE_RUNTIME = "inference-platform-vllm-multinode"
TRITON_RUNTIME = "inference-platform-triton-trtllm"
# The model formats our InferenceServices name (upstream's names and versions); autoSelect stays off:
# our InferenceServices always name their runtime.
VLLM_FORMAT = {"name": "vLLM", "version": "1"}
TRITON_FORMAT = {"name": "triton", "version": "2"}
MAIN_CONTAINER = "kserve-container"
WORKER_CONTAINER = "worker-container"
SHM_VOLUME = "dshm"
DEFAULT_SHM = "1Gi"
HTTP_PORT = VLLM_METRICS_PORT  # both servers serve the OpenAI API and /metrics on one port
RAY_PORT = 6379
MODEL_MOUNT = "/mnt/models"  # where KServe puts a model's storageUri

# Ray head address of a multi-node replica: KServe sets HEAD_SVC on worker pods
# [kserve/kserve@v0.20.0:config/runtimes/kserve-huggingfaceserver-multinode.yaml].
_RAY_HEAD = "${HEAD_SVC}.${POD_NAMESPACE}.svc.cluster.local"
_POD_NAMESPACE = {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}


def container_security() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": NON_ROOT_UID,
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def http_probe(path: str, period: int, failures: int, timeout: int = 5) -> dict[str, Any]:
    return {
        "httpGet": {"path": path, "port": HTTP_PORT},
        "periodSeconds": period,
        "failureThreshold": failures,
        "timeoutSeconds": timeout,
        "successThreshold": 1,
    }


# Readiness: the model is registered and served. Liveness: the process answers, with more patience
# than readiness, so a busy server is drained, not restarted. Startup: the default allows 30 minutes;
# each InferenceService sets its load budget.
# vLLM: ready = its OpenAI model list, live = /health (the engine is alive).
# Triton's OpenAI frontend: /v1/models lists the model table its engine built at startup
# (openai_frontend/engine/triton_engine.py), so it answers 200 whatever the models' state since;
# /health/ready asks the Triton core (server and every model of the repository ready) and is the
# readiness. /v1/models, which touches no engine, is the liveness.
VLLM_READINESS = http_probe("/v1/models", period=10, failures=3)
VLLM_LIVENESS = http_probe("/health", period=15, failures=4, timeout=10)
VLLM_STARTUP_PATH = "/health"
TRITON_READINESS = http_probe("/health/ready", period=10, failures=3)
TRITON_LIVENESS = http_probe("/v1/models", period=15, failures=4, timeout=10)
TRITON_STARTUP_PATH = "/health/ready"
DEFAULT_STARTUP_SECONDS = 1800
STARTUP_PERIOD_SECONDS = 10


def startup_probe(path: str, budget_seconds: int) -> dict[str, Any]:
    """A startup probe whose period x failureThreshold covers `budget_seconds`."""
    return http_probe(path, STARTUP_PERIOD_SECONDS, -(-budget_seconds // STARTUP_PERIOD_SECONDS))


def shm_volume(size: str) -> dict[str, Any]:
    return {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": size}}


# vLLM's torch.compile and CUDA-graph artifacts (VLLM_CACHE_ROOT) on a pod volume on the node's disk: a
# container restarted by its probes (or an OOM) finds them and skips compiling again, where the
# container's own filesystem starts empty at each restart. A new pod compiles once more.
COMPILE_CACHE_VOLUME = "vllm-compile-cache"
COMPILE_CACHE_SIZE = "8Gi"


def compile_cache_volume() -> dict[str, Any]:
    return {"name": COMPILE_CACHE_VOLUME, "emptyDir": {"sizeLimit": COMPILE_CACHE_SIZE}}


_SHM_MOUNT = {"name": SHM_VOLUME, "mountPath": "/dev/shm"}
_COMPILE_CACHE_MOUNT = {"name": COMPILE_CACHE_VOLUME, "mountPath": VLLM_NON_ROOT_ENV["VLLM_CACHE_ROOT"]}
# Defaults for a server whose InferenceService sets none (ours always do).
_DEFAULT_RESOURCES = {"requests": {"cpu": "2", "memory": "8Gi"}, "limits": {"cpu": "2", "memory": "8Gi"}}


def engine_volumes(runtime: str, shm_size: str) -> list[dict[str, Any]]:
    """The pod volumes an engine's containers mount: /dev/shm, and vLLM's compile cache."""
    return [shm_volume(shm_size), *([compile_cache_volume()] if runtime == "vllm" else [])]


def _env(values: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in values.items()]


def _vllm_container(command: list[str], args: list[str], extra_env: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": MAIN_CONTAINER,
        "image": VLLM_IMAGE,
        "command": command,
        "args": args,
        "env": _env({**VLLM_NON_ROOT_ENV, "VLLM_WORKER_MULTIPROC_METHOD": "spawn"}) + extra_env,
        "ports": [{"name": "http", "containerPort": HTTP_PORT, "protocol": "TCP"}],
        "securityContext": container_security(),
        "resources": _DEFAULT_RESOURCES,
        "readinessProbe": VLLM_READINESS,
        "livenessProbe": VLLM_LIVENESS,
        "startupProbe": startup_probe(VLLM_STARTUP_PATH, DEFAULT_STARTUP_SECONDS),
        "volumeMounts": [_SHM_MOUNT, _COMPILE_CACHE_MOUNT],
    }


def _runtime(
    name: str, fmt: dict[str, str], metrics_port: int, spec: dict[str, Any], volumes: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "apiVersion": RUNTIME_API_VERSION,
        "kind": "ClusterServingRuntime",
        "metadata": {"name": name},
        "spec": {
            "annotations": {"prometheus.kserve.io/port": str(metrics_port), "prometheus.kserve.io/path": "/metrics"},
            "supportedModelFormats": [{**fmt, "autoSelect": False}],
            "volumes": volumes,
            **spec,
        },
    }


def vllm_runtime() -> dict[str, Any]:
    """vLLM's OpenAI-compatible server; the InferenceService adds the model, sizing and tuning flags."""
    command = ["python3", "-m", "vllm.entrypoints.openai.api_server"]
    return _runtime(
        VLLM_RUNTIME,
        VLLM_FORMAT,
        VLLM_METRICS_PORT,
        {"containers": [_vllm_container(command, [f"--port={HTTP_PORT}"], [])]},
        engine_volumes("vllm", DEFAULT_SHM),
    )


def vllm_multinode_runtime() -> dict[str, Any]:
    """vLLM over a Ray cluster of one head and pipelineParallelSize - 1 workers per replica.

    KServe creates the head (`<isvc>-predictor`) and worker (`<isvc>-predictor-worker`) Deployments
    from the InferenceService's workerSpec; the head starts Ray, then the server with the Ray
    executor, which waits until the workers' GPUs have joined.
    """
    head = (
        f"ray start --head --port={RAY_PORT} --disable-usage-stats && "
        'exec python3 -m vllm.entrypoints.openai.api_server "$0" "$@"'
    )
    worker = f"exec ray start --address={_RAY_HEAD}:{RAY_PORT} --block --disable-usage-stats"
    worker_container = {
        "name": WORKER_CONTAINER,
        "image": VLLM_IMAGE,
        "command": ["bash", "-c", worker],
        "env": [*_env(VLLM_NON_ROOT_ENV), _POD_NAMESPACE],
        "securityContext": container_security(),
        "resources": _DEFAULT_RESOURCES,
        "volumeMounts": [_SHM_MOUNT, _COMPILE_CACHE_MOUNT],
        "livenessProbe": {
            "exec": {"command": ["bash", "-c", f"ray health-check --address {_RAY_HEAD}:{RAY_PORT}"]},
            "periodSeconds": 30,
        },
    }
    return _runtime(
        VLLM_MULTINODE_RUNTIME,
        VLLM_FORMAT,
        VLLM_METRICS_PORT,
        {
            "containers": [_vllm_container(["bash", "-c", head], [f"--port={HTTP_PORT}"], [_POD_NAMESPACE])],
            "workerSpec": {
                "pipelineParallelSize": 2,
                "tensorParallelSize": 1,
                "containers": [worker_container],
                "volumes": engine_volumes("vllm", DEFAULT_SHM),
            },
        },
        engine_volumes("vllm", DEFAULT_SHM),
    )


def triton_runtime() -> dict[str, Any]:
    """Triton serving a TensorRT-LLM model repository from /mnt/models through Triton's OpenAI frontend.

    Why the frontend and not `tritonserver`: the gateway sends every self-hosted model OpenAI requests
    (`/v1/chat/completions`, `/v1/completions`, `/v1/models`) to the model's InferencePool on 8080,
    and `tritonserver` speaks only KServe v2 there. The frontend (`components/catalog/engines.py`)
    runs the same Triton core in-process and translates OpenAI requests into the repository's
    TensorRT-LLM request format (`--backend=tensorrtllm`). The runtime speaks OpenAI only: the v2
    HTTP/gRPC frontends have no client on the platform, so no KServe protocol version is declared
    (as for vLLM).

    What a repository must hold (the frontend has no served-name flag, and the AI Gateway ignores
    modelNameOverride for InferencePools): its entry model (the ensemble or BLS model clients call)
    named after the platform model (`mistral-7b-trt/config.pbtxt`), and the Hugging Face tokenizer
    files, which give /v1/chat/completions its chat template, at the repository root; Triton loads
    only the root's directories. Usage (hence the gateway's token budgets) comes from the entry
    model's `num_input_tokens` / `num_output_tokens` outputs.

    Metrics: the core's Prometheus text, TensorRT-LLM's `nv_trt_llm_*` families included, is served
    at /metrics on 8080; tritonserver's metrics listener (8002) does not exist in this process.
    """
    return _runtime(
        TRITON_RUNTIME,
        TRITON_FORMAT,
        TRITON_METRICS_PORT,
        {
            "containers": [
                {
                    "name": MAIN_CONTAINER,
                    "image": TRITON_IMAGE,
                    # The image's entrypoint (NGC's banner and checks) runs the command in args.
                    "args": [
                        "python3",
                        TRITON_OPENAI_FRONTEND,
                        f"--model-repository={MODEL_MOUNT}",
                        f"--tokenizer={MODEL_MOUNT}",
                        "--backend=tensorrtllm",
                        f"--openai-port={HTTP_PORT}",
                    ],
                    "ports": [{"name": "http", "containerPort": HTTP_PORT, "protocol": "TCP"}],
                    "securityContext": container_security(),
                    "resources": _DEFAULT_RESOURCES,
                    "readinessProbe": TRITON_READINESS,
                    "livenessProbe": TRITON_LIVENESS,
                    "startupProbe": startup_probe(TRITON_STARTUP_PATH, DEFAULT_STARTUP_SECONDS),
                    "volumeMounts": [_SHM_MOUNT],
                }
            ],
        },
        engine_volumes("triton", DEFAULT_SHM),
    )


def runtimes() -> list[dict[str, Any]]:
    return [vllm_runtime(), vllm_multinode_runtime(), triton_runtime()]


RUNTIME_OF = {"vllm": VLLM_RUNTIME, "triton": TRITON_RUNTIME}
FORMAT_OF = {"vllm": VLLM_FORMAT, "triton": TRITON_FORMAT}
STARTUP_PATH_OF = {"vllm": VLLM_STARTUP_PATH, "triton": TRITON_STARTUP_PATH}
