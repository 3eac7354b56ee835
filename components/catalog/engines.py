"""Serving engines: pinned images and the command-line flags a model may override.

Sources:
- vLLM v0.33.0 (2026-11, the newest release on PyPI): image `vllm/vllm-openai` on Docker Hub
  (hub.docker.com/r/vllm/vllm-openai/tags; the v0.33.0 tag could not be checked from here, see
  upstream.VLLM_IMAGE_TAG); flags from the `vllm serve` parser of the v0.33.0 wheel, dumped by
  `make upgrade-check COMPONENT=vllm` (`vllm/v0.33.0/generated-vllm-serve-args.json`, docs/upstream.md). v0.27
  removed `--max-num-partial-prefills` / `--max-long-partial-prefills` (vllm-project/vllm#49244) and v0.33.0
  `--calculate-kv-scales`, so they are not offered. The image has no non-root user; it runs as any uid once HOME and the
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
  triton-inference-server/server@v2.71.0:python/openai/openai_frontend/main.py (upstream data
  `triton-server/v2.71.0/generated-openai-frontend-flags.json`, FACTS-3.md section 6); routes
  from python/openai/openai_frontend/frontend/fastapi/routers/observability.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

# The endpoint picker (llm-d-router v0.9.0, as the Inference Extension's v1.5.0 before it) reads each pod's queue,
# running and KV-cache gauges through its `core-metrics-extractor` plugin, which picks one of its built-in
# metric mappings per pod by this label (parameter engineLabelKey; set, since v0.9.0's default is
# llm-d.ai/engine-type), else by its `defaultEngine` parameter; the picker rejects the older per-metric flags at
# startup [llm-d/llm-d-router@v0.9.0:pkg/epp/framework/plugins/datalayer/extractor/metrics/factories.go L76-149;
# pkg/epp/server/options.go Validate() L301-305; FACTS-3.md section 4]. The built-in names: `vllm`
# (vllm:num_requests_waiting, ...) and `triton-tensorrt-llm` (nv_trt_llm_request_metrics{request_type=waiting}, ...),
# the same mappings as v1.5.0's.
PICKER_ENGINE_LABEL = "inference.networking.k8s.io/engine-type"
PICKER_ENGINE = {"vllm": "vllm", "triton": "triton-tensorrt-llm"}

# Digests are not pinned: the tags above are the upstream release tags, resolved at pull time.
VLLM_VERSION = "v0.33.0"
VLLM_IMAGE = f"vllm/vllm-openai:{VLLM_VERSION}"
# Disaggregated (prefill / decode) pods run the pinned engine too, not KServe's preset image (llm-d-cuda v0.8.0,
# vLLM 0.23.0), so their flags are the ones validated against VLLM_FLAGS; its NIXL can hand KV caches over UCX only
# (TCP on these nodes): no image with this vLLM has the EFA userspace NIXL's LIBFABRIC backend needs
# (components/catalog/upstream.py PD_ENGINE_IMAGE). An image that has it adds "LIBFABRIC" here and EFA pools
# hand KV caches over EFA again (components/domain/disaggregation.py).
PD_ENGINE_IMAGE = VLLM_IMAGE
PD_NIXL_BACKENDS: tuple[str, ...] = ("UCX",)
LIBFABRIC = "LIBFABRIC"
# Parallel streams the Run:ai model streamer (`--load-format runai_streamer`) reads shards with: its default. The
# cache sizes its read buffers for this many streams per model server (components/domain/cache_reads.py).
STREAMER_CONCURRENCY = 16
# NGC release 26.07 ships Triton server v2.71.0 and the TensorRT-LLM backend of branch r26.07
# (FACTS-3.md section 6).
TRITON_NGC_RELEASE = "26.07"
TRITON_SERVER_VERSION = "v2.71.0"
TRITON_IMAGE = f"nvcr.io/nvidia/tritonserver:{TRITON_NGC_RELEASE}-trtllm-python-py3"
TRITON_OPENAI_FRONTEND = "/opt/tritonserver/python/openai/openai_frontend/main.py"
NON_ROOT_UID = 1000
# Compressed size of each engine's image, GiB, what a new node downloads before a model server starts: estimates
# from the sizes reported for earlier tags (vllm/vllm-openai "around 12 GB", vllm-project/vllm#27154, 2025-10;
# nvcr.io/nvidia/tritonserver:25.09-trtllm-python-py3 "16.24 GB" in the NGC catalog, NVIDIA/TensorRT-LLM#8270).
ENGINE_IMAGE_GIB = {"vllm": 12.0, "triton": 16.0}

# vLLM resolves its caches and config under HOME and calls getpass.getuser() (torch's compile
# cache), which reads USER before the passwd file the image lacks for a non-root uid.
VLLM_NON_ROOT_ENV = {
    "HOME": "/tmp",
    "USER": "vllm",
    "HF_HOME": "/tmp/huggingface",
    "VLLM_CONFIG_ROOT": "/tmp/vllm",
    "VLLM_CACHE_ROOT": "/tmp/vllm-cache",
}


FlagKind = Literal["switch", "value"]


@dataclass(frozen=True)
class EngineFlags:
    """The command line of one pinned engine: what a model's `engineArgs` may set (`tunable`: flag -> a
    `switch`, passed as `--flag` for true, or a flag taking a `value`), and what the platform derives
    (`derived`: flag -> the config key to change instead).

    `flag_list` is the upstream list of every flag `version` accepts (a file of the upstream data,
    `tools/conformance.py`), which the tests check the tunable flags and every rendered argument
    against: bumping the version without its list fails them.
    """

    engine: str
    version: str
    flag_list: str
    tunable: dict[str, FlagKind]
    derived: dict[str, str]


VLLM_FLAGS = EngineFlags(
    "vLLM",
    version=VLLM_VERSION,
    flag_list=f"vllm/{VLLM_VERSION}/generated-vllm-serve-args.json",
    # Not offered although documented for older versions: --swap-space and --cuda-graph-sizes (gone at
    # 0.27.1; --max-cudagraph-capture-size replaces the latter), --max-num-partial-prefills (gone in 0.27),
    # --calculate-kv-scales (gone in 0.33.0).
    tunable={
        "async-scheduling": "switch",
        "block-size": "value",
        "chat-template": "value",
        "collect-detailed-traces": "value",
        "compilation-config": "value",
        "cpu-offload-gb": "value",
        "disable-custom-all-reduce": "switch",
        "disable-log-stats": "switch",
        "enable-auto-tool-choice": "switch",
        "enable-expert-parallel": "switch",
        "enable-force-include-usage": "switch",
        "enable-log-requests": "switch",
        "enable-prompt-tokens-details": "switch",
        "enable-sleep-mode": "switch",
        "enforce-eager": "switch",
        "generation-config": "value",
        "hf-overrides": "value",
        "limit-mm-per-prompt": "value",
        "long-prefill-token-threshold": "value",
        "max-cudagraph-capture-size": "value",
        "max-logprobs": "value",
        "max-num-batched-tokens": "value",
        "max-parallel-loading-workers": "value",
        "otlp-traces-endpoint": "value",
        "override-generation-config": "value",
        "prefix-caching-hash-algo": "value",
        "reasoning-parser": "value",
        "response-role": "value",
        "return-tokens-as-token-ids": "switch",
        "seed": "value",
        "tokenizer-mode": "value",
        "tool-call-parser": "value",
        "trust-remote-code": "switch",
        "uvicorn-log-level": "value",
    },
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
        "kv-cache-memory-bytes": "gpuMemoryUtilization (set on time-slice shares: the KV cache the sizing gives)",
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
        "kv-transfer-config": "placements[].servingMode (disaggregated placements hand KV caches over NIXL)",
        # upstream.VLLM_PRIORITY_SCHEDULING, upstream.AI_GATEWAY_REPLAYS_THE_CLIENT_BODY_TO_POOLS
        "scheduling-policy": "tenants[].priority (classes are ordered at the endpoint picker: with priority "
        "scheduling a client's own body `priority` would reach vLLM)",
    },
)

# What vLLM v0.33.0's parser does with the value of each tunable flag (generated-vllm-serve-args.json: `type` and
# `choices` of each option; vllm/utils/argparse_utils.py human_readable_int for token counts), so a wrong value is a
# config error instead of `vllm serve` exiting at start: "int" (a whole number), "float", "tokens" (a whole number;
# vLLM also reads k/K/m/M/... suffixes, but their case rules differ between releases, so the platform takes the
# number), "json" (a JSON object: parse_dataclass, parse_type, union_dict_and_str), "str", or the allowed choices.
VLLM_VALUES: dict[str, str | tuple[str, ...]] = {
    "block-size": "int",
    "chat-template": "str",
    # v0.33.0 takes several of them as separate values (nargs +), no longer "model,worker": one is rendered.
    "collect-detailed-traces": ("all", "model", "worker"),
    "compilation-config": "json",
    "cpu-offload-gb": "float",
    "generation-config": "str",
    "hf-overrides": "json",
    "limit-mm-per-prompt": "json",
    "long-prefill-token-threshold": "int",
    "max-cudagraph-capture-size": "int",
    "max-logprobs": "int",
    "max-num-batched-tokens": "tokens",
    "max-parallel-loading-workers": "int",
    "otlp-traces-endpoint": "str",
    "override-generation-config": "json",
    "prefix-caching-hash-algo": ("sha256", "sha256_cbor", "xxhash", "xxhash_cbor"),
    "reasoning-parser": "str",
    "response-role": "str",
    "seed": "int",
    "tokenizer-mode": "str",
    "tool-call-parser": "str",
    "uvicorn-log-level": ("critical", "debug", "error", "info", "trace", "warning"),
}  # fmt: skip
# The least value vLLM v0.33.0 takes for a numeric tunable: the pydantic Field bound its config checks at start
# (vllm/config/cache.py L187 block_size gt=0; parallel.py L236 max_parallel_loading_workers ge=1; model.py L286
# max_logprobs ge=-1; scheduler.py L48 max_num_batched_tokens ge=1, L79 long_prefill_token_threshold ge=0;
# offload.py L23 cpu_offload_gb ge=0). And long_prefill_token_threshold may not exceed max_model_len
# (scheduler.py L355-360).
VLLM_MINIMUMS: dict[str, int] = {
    "block-size": 1,
    "cpu-offload-gb": 0,
    "long-prefill-token-threshold": 0,
    "max-logprobs": -1,
    "max-num-batched-tokens": 1,
    "max-parallel-loading-workers": 1,
}
# vLLM refuses to start when max_num_batched_tokens < max_num_seqs (vllm/config/scheduler.py L331-335, SchedulerConfig
# verify_max_model_len: "max_num_batched_tokens (...) must be greater than or equal to max_num_seqs (...)"); with
# chunked prefill on (always, here) it does not require max_num_batched_tokens >= max_model_len. Checked by
# components/checks/serving_checks.py (_engine_relations).


TRITON_FLAGS = EngineFlags(
    "Triton OpenAI frontend",
    version=TRITON_SERVER_VERSION,
    flag_list=f"triton-server/{TRITON_SERVER_VERSION}/generated-openai-frontend-flags.json",
    tunable={
        "chat-template": "value",
        "tool-call-parser": "value",
        "tritonserver-log-verbose-level": "value",
        "uvicorn-log-level": "value",
    },
    derived={
        # Upstream default 16 (main.py): a request without max_tokens would get 16 tokens.
        "default-max-tokens": "maxOutputTokens",
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
        "model-control-mode": "nothing: the core loads every model of the repository at start",
        "load-model": "nothing: the core loads every model of the repository at start",
    },
)

ENGINE_FLAGS = {"vllm": VLLM_FLAGS, "triton": TRITON_FLAGS}


@dataclass(frozen=True)
class EngineHostNeeds:
    """Host CPU and memory one model server needs, from how many busy processes its engine runs.

    vLLM V1 runs one API server, one engine-core busy loop and one worker per GPU: at least `2 + N`
    processes, which need as many physical cores, `2 x (2 + N)` vCPUs where a vCPU is a hyperthread
    (vllm-project/vllm docs/configuration/optimization.md, "CPU Resources for GPU Deployments";
    docs/design/arch_overview.md, "V1 Process Architecture"). Triton's OpenAI frontend runs the server
    in-process through its Python bindings and serves TensorRT-LLM in orchestrator mode only
    (triton-server v2.71.0 python/openai/README.md, "Model Parallelism Support"), where one orchestrator
    spawns one Triton process per GPU (tensorrtllm_backend r26.07 README.md, "Orchestrator Mode"): `1 + N`. Memory per process is our estimate (a Python process with
    torch and the CUDA runtime's host allocations), not an upstream figure.
    """

    base_processes: int
    vcpus_per_process: int = 2  # one physical core, two hyperthreads
    memory_gib_per_process: float = 1.5

    def processes(self, gpus: int) -> int:
        return self.base_processes + gpus

    def vcpus(self, gpus: int) -> int:
        return self.vcpus_per_process * self.processes(gpus)

    def memory_gib(self, gpus: int, shm_gib: int) -> int:
        """Process memory plus the memory-backed /dev/shm, which counts against the pod's limit."""
        return math.ceil(self.memory_gib_per_process * self.processes(gpus) + shm_gib)


ENGINE_HOST_NEEDS = {"vllm": EngineHostNeeds(base_processes=2), "triton": EngineHostNeeds(base_processes=1)}
