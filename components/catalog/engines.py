"""Serving engines: pinned images and the command-line flags a model may override.

Sources:
- vLLM v0.27.1 (2026-08, a patch release of v0.27.0): image `vllm/vllm-openai` on Docker Hub
  (hub.docker.com/r/vllm/vllm-openai/tags); flags from vllm-project/vllm@v0.27.1:
  docs/configuration/engine_args.md and docs/cli/serve.md. v0.27 removed
  `--max-num-partial-prefills` / `--max-long-partial-prefills` (vllm-project/vllm#49244), so
  they are not offered. The image has no non-root user; it runs as any uid once HOME and the
  caches point at a writable directory (`VLLM_NON_ROOT_ENV`).
- Triton 26.07 with the TensorRT-LLM backend (Triton 2.71.0, TensorRT-LLM 1.2.1): image
  `nvcr.io/nvidia/tritonserver:26.07-trtllm-python-py3` from the NGC catalog; it runs as its
  `triton-server` user, uid 1000 (docs.nvidia.com/deeplearning/triton-inference-server/user-guide/
  docs/customization_guide/deploy.html#run-as-a-non-root-user).
- Triton's OpenAI-compatible frontend, which the runtime runs instead of `tritonserver`: the NGC
  images ship it at `/opt/tritonserver/python/openai/openai_frontend/main.py` (user guide,
  client_guide/openai_readme, 25.02 to 26.07; its TensorRT-LLM walkthrough, as of 25.12, still
  pip-installs the frontend's requirements: run `main.py --help` in a new image before bumping
  the tag). It starts the Triton core in-process (the `tritonserver` Python API) and serves
  `/v1/models`, `/v1/completions`, `/v1/chat/completions`, `/health/ready` (the core's readiness)
  and `/metrics` (the core's Prometheus text, `server.metrics()`) on its one port; tritonserver's
  own listeners (HTTP 8000, gRPC 8001, metrics 8002) do not exist there. TensorRT-LLM is supported,
  tensor parallelism in orchestrator mode only (`TRTLLM_ORCHESTRATOR=1`). Flags from
  triton-inference-server/server@7e31829e:python/openai/openai_frontend/main.py (argparse); routes
  from python/openai/openai_frontend/frontend/fastapi/routers/observability.py.
"""

from __future__ import annotations

from dataclasses import dataclass

# Digests are not pinned: the tags above are the upstream release tags, resolved at pull time.
VLLM_IMAGE = "vllm/vllm-openai:v0.27.1"
TRITON_IMAGE = "nvcr.io/nvidia/tritonserver:26.07-trtllm-python-py3"
TRITON_OPENAI_FRONTEND = "/opt/tritonserver/python/openai/openai_frontend/main.py"
NON_ROOT_UID = 1000

# vLLM resolves its caches and config under HOME and calls getpass.getuser() (torch's compile
# cache), which reads USER before the passwd file the image lacks for a non-root uid.
VLLM_NON_ROOT_ENV = {
    "HOME": "/tmp",
    "USER": "vllm",
    "HF_HOME": "/tmp/huggingface",
    "VLLM_CONFIG_ROOT": "/tmp/vllm",
    "VLLM_CACHE_ROOT": "/tmp/vllm-cache",
}


@dataclass(frozen=True)
class EngineFlags:
    """What a model's `engineArgs` may set (`tunable`), and what the platform derives (`derived`: flag ->
    the config key to change instead)."""

    engine: str
    tunable: frozenset[str]
    derived: dict[str, str]


VLLM_FLAGS = EngineFlags(
    "vLLM",
    tunable=frozenset(
        {
            "async-scheduling",
            "block-size",
            "calculate-kv-scales",
            "chat-template",
            "collect-detailed-traces",
            "compilation-config",
            "cpu-offload-gb",
            "cuda-graph-sizes",
            "disable-custom-all-reduce",
            "disable-log-stats",
            "enable-auto-tool-choice",
            "enable-expert-parallel",
            "enable-force-include-usage",
            "enable-log-requests",
            "enable-prompt-tokens-details",
            "enable-sleep-mode",
            "enforce-eager",
            "generation-config",
            "hf-overrides",
            "limit-mm-per-prompt",
            "long-prefill-token-threshold",
            "max-cudagraph-capture-size",
            "max-logprobs",
            "max-num-batched-tokens",
            "max-parallel-loading-workers",
            "otlp-traces-endpoint",
            "override-generation-config",
            "prefix-caching-hash-algo",
            "reasoning-parser",
            "response-role",
            "return-tokens-as-token-ids",
            "scheduling-policy",
            "seed",
            "swap-space",
            "tokenizer-mode",
            "tool-call-parser",
            "trust-remote-code",
            "uvicorn-log-level",
        }
    ),
    derived={
        "model": "storagePath (weights come from the cache or the bucket)",
        "served-model-name": "name",
        "port": "nothing: the runtime serves on 8080, where the gateway and Prometheus expect it",
        "tensor-parallel-size": "precision, maxModelLen or maxNumSeqs (the sizing picks it)",
        "pipeline-parallel-size": "precision, maxModelLen or maxNumSeqs (the sizing picks it)",
        "data-parallel-size": "placements[].maxReplicas (one engine per replica)",
        "distributed-executor-backend": "nothing: multi-node replicas use Ray, others multiprocessing",
        "max-model-len": "maxModelLen",
        "max-num-seqs": "maxNumSeqs",
        "gpu-memory-utilization": "gpuMemoryUtilization",
        "kv-cache-dtype": "kvCacheDtype",
        "quantization": "precision",
        "dtype": "precision",
        "load-format": "nothing: weights stream with runai_streamer (no mmap over the cache's FUSE mount)",
        "model-loader-extra-config": "nothing: the streamer's buffer is sized from the pod's memory",
        "speculative-config": "speculativeDecoding",
        "enable-lora": "loraAdapters",
        "lora-modules": "loraAdapters",
        "max-loras": "loraAdapters",
        "max-lora-rank": "maxLoraRank",
        "enable-prefix-caching": "nothing: prefix caching is always on",
        "enable-chunked-prefill": "nothing: chunked prefill is always on",
    },
)

TRITON_FLAGS = EngineFlags(
    "Triton OpenAI frontend",
    tunable=frozenset(
        {
            "chat-template",
            "default-max-tokens",
            "tool-call-parser",
            "tritonserver-log-verbose-level",
            "uvicorn-log-level",
        }
    ),
    derived={
        "model-repository": "storagePath",
        "tokenizer": "nothing: the tokenizer files sit at the root of the model repository",
        "backend": "nothing: the runtime serves TensorRT-LLM repositories",
        "host": "nothing: the runtime listens on every interface of the pod",
        "openai-port": "nothing: the runtime serves OpenAI and /metrics on 8080, where the gateway and "
        "Prometheus expect them",
        "lora-separator": "nothing: LoRA adapters are served by vLLM only (loraAdapters)",
        "openai-restricted-api": "nothing: the gateway authenticates tenants",
        "enable-kserve-frontends": "nothing: the runtime speaks the gateway's protocol, OpenAI, only",
        "kserve-http-port": "nothing: the runtime speaks the gateway's protocol, OpenAI, only",
        "kserve-grpc-port": "nothing: the runtime speaks the gateway's protocol, OpenAI, only",
    },
)

ENGINE_FLAGS = {"vllm": VLLM_FLAGS, "triton": TRITON_FLAGS}
