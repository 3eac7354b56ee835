"""Upstream metric names the dashboards and alerts query, one group per exporter, each with its source.

Names are the series as Prometheus stores them: counters with the `_total` their client
library appends, histograms as a family whose `_bucket`/`_sum`/`_count` series are derived
here. Tests parse every PromQL expression the platform renders and reject any metric that is
not in `KNOWN_SERIES`, so a typo or a renamed upstream metric fails review, not an on-call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["counter", "gauge", "histogram"]


@dataclass(frozen=True)
class Metric:
    name: str
    kind: Kind

    def _suffixed(self, suffix: str) -> str:
        if self.kind != "histogram":
            raise ValueError(f"{self.name} is a {self.kind}, not a histogram")
        return f"{self.name}_{suffix}"

    @property
    def bucket(self) -> str:
        return self._suffixed("bucket")

    @property
    def sum(self) -> str:
        return self._suffixed("sum")

    @property
    def count(self) -> str:
        return self._suffixed("count")

    def series(self) -> tuple[str, ...]:
        if self.kind == "histogram":
            return (self.bucket, self.sum, self.count)
        return (self.name,)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class MetricGroup:
    exporter: str
    source: str
    metrics: tuple[Metric, ...]


# --- vLLM (labels model_name, engine) ------------------------------------------------------------------
VLLM_SOURCE = "vllm-project/vllm@044a0565:docs/usage/metrics.md; @0328b592:docs/design/metrics.md (FACTS-2.md)"
VLLM_RUNNING = Metric("vllm:num_requests_running", "gauge")
VLLM_WAITING = Metric("vllm:num_requests_waiting", "gauge")
VLLM_KV_CACHE_USAGE = Metric("vllm:kv_cache_usage_perc", "gauge")  # 0-1
VLLM_PREFIX_CACHE_QUERIES = Metric("vllm:prefix_cache_queries_total", "counter")
VLLM_PREFIX_CACHE_HITS = Metric("vllm:prefix_cache_hits_total", "counter")
VLLM_TTFT = Metric("vllm:time_to_first_token_seconds", "histogram")
VLLM_TPOT = Metric("vllm:request_time_per_output_token_seconds", "histogram")
VLLM_QUEUE_TIME = Metric("vllm:request_queue_time_seconds", "histogram")
VLLM_E2E_LATENCY = Metric("vllm:e2e_request_latency_seconds", "histogram")
VLLM_PROMPT_TOKENS = Metric("vllm:prompt_tokens_total", "counter")
VLLM_GENERATION_TOKENS = Metric("vllm:generation_tokens_total", "counter")
# Tokens scheduled per engine step: the batch size in tokens (the name ends in _total upstream).
VLLM_ITERATION_TOKENS = Metric("vllm:iteration_tokens_total", "histogram")

# --- Triton (label model, version) ---------------------------------------------------------------------
TRITON_SOURCE = "triton-inference-server/server:docs/user_guide/metrics.md (Inference Request Metrics)"
TRITON_REQUEST_SUCCESS = Metric("nv_inference_request_success", "counter")
TRITON_REQUEST_FAILURE = Metric("nv_inference_request_failure", "counter")
TRITON_REQUEST_DURATION_US = Metric("nv_inference_request_duration_us", "counter")
TRITON_QUEUE_DURATION_US = Metric("nv_inference_queue_duration_us", "counter")
TRITON_PENDING_REQUESTS = Metric("nv_inference_pending_request_count", "gauge")  # awaiting the backend
TRITON_INFERENCE_COUNT = Metric("nv_inference_count", "counter")
TRITON_EXEC_COUNT = Metric("nv_inference_exec_count", "counter")

# --- DCGM exporter (labels gpu, UUID, Hostname, modelName; pod/namespace in Kubernetes mode) -----------
DCGM_SOURCE = "NVIDIA/dcgm-exporter@4.5.3-4.8.2:etc/default-counters.csv"
DCGM_GPU_UTIL = Metric("DCGM_FI_DEV_GPU_UTIL", "gauge")  # percent
DCGM_FB_USED = Metric("DCGM_FI_DEV_FB_USED", "gauge")  # MiB
DCGM_FB_FREE = Metric("DCGM_FI_DEV_FB_FREE", "gauge")  # MiB
DCGM_POWER_USAGE = Metric("DCGM_FI_DEV_POWER_USAGE", "gauge")  # W
DCGM_GPU_TEMP = Metric("DCGM_FI_DEV_GPU_TEMP", "gauge")  # C
DCGM_XID_ERRORS = Metric("DCGM_FI_DEV_XID_ERRORS", "gauge")  # value of the last XID
DCGM_TENSOR_ACTIVE = Metric("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge")  # ratio
# Ratio of time the graphics/compute engine is busy; unlike GPU_UTIL it is reported per MIG instance.
DCGM_GR_ENGINE_ACTIVE = Metric("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge")

# --- Endpoint picker (llm-d-router v0.9.0's EPP) ------------------------------------------------------------
# The names the Inference Extension's picker exported (v1.5.0), which v0.9.0 still registers, each beside its
# `llm_d_epp_*` successor with the same labels (`[Deprecated: Use llm_d_epp_...]`, llm-d-inference-scheduler#1070).
# We read the old names while the rehearsal's picker is the v1.5.0 build (tools/rehearsal/binaries.py: v0.9.0 is not
# in the module proxy), which exports only them; the move to llm_d_epp_* is due when a release drops them.
EPP_SOURCE = (
    "llm-d/llm-d-router@v0.9.0:pkg/epp/metrics/metrics.go (the deprecated names, registered in Register L418-482), "
    "llm_d_router_metrics.go (llm_d_epp_*)"
)
EPP_POOL_KV_CACHE = Metric("inference_pool_average_kv_cache_utilization", "gauge")  # label name (pool)
EPP_POOL_QUEUE = Metric("inference_pool_average_queue_size", "gauge")
EPP_POOL_READY_PODS = Metric("inference_pool_ready_pods", "gauge")
EPP_REQUESTS = Metric("inference_objective_request_total", "counter")  # labels model_name, target_model_name, priority
EPP_REQUEST_ERRORS = Metric("inference_objective_request_error_total", "counter")
# Requests the picker's flow control holds (labels inference_pool, model_name, priority, fairness_id):
# recorded while no pod can take them, zero pods included; with the `flowControl` feature gate only.
EPP_FLOW_CONTROL_QUEUE = Metric("inference_extension_flow_control_queue_size", "gauge")
# Time each request spent in flow control, by final outcome (Dispatched, RejectedCapacity, RejectedOther,
# EvictedTTL, EvictedContextCancelled, EvictedOther; flowcontrol/types/outcomes.go); labels inference_pool, ...
EPP_FLOW_CONTROL_QUEUE_DURATION = Metric("inference_extension_flow_control_request_queue_duration_seconds", "histogram")

# --- Envoy AI Gateway (OpenTelemetry gen_ai.* exported to Prometheus by the ext_proc sidecar) ---------
AI_GATEWAY_SOURCE = (
    "envoyproxy/ai-gateway:site/docs/capabilities/observability/metrics.md "
    "(gen_ai.client.token.usage -> gen_ai_client_token_usage_*, labels gen_ai_token_type, gen_ai_request_model)"
)
GEN_AI_TOKEN_USAGE = Metric("gen_ai_client_token_usage", "histogram")

# --- Envoy Gateway global rate limit service (statsd mapping, labels domain, key1, key2) ---------------
RATELIMIT_SOURCE = (
    "envoyproxy/gateway:internal/infrastructure/kubernetes/ratelimit/statsd_conf.yaml; test/e2e/tests/ratelimit.go"
)
RATELIMIT_OVER_LIMIT = Metric("ratelimit_service_rate_limit_over_limit", "counter")
RATELIMIT_TOTAL_HITS = Metric("ratelimit_service_rate_limit_total_hits", "counter")

# --- Alluxio (via Fluid AlluxioRuntime; cluster metrics served by the master) --------------------------
ALLUXIO_SOURCE = (
    "Alluxio/alluxio:core/common/src/main/java/alluxio/metrics/MetricKey.java (Cluster.*), as exported by "
    "Fluid: fluid-cloudnative/fluid:integration/prometheus/fluid-prometheus-grafana-monitor.json"
)
ALLUXIO_BYTES_READ_LOCAL = Metric("Cluster_BytesReadLocal", "counter")
ALLUXIO_BYTES_READ_REMOTE = Metric("Cluster_BytesReadRemote", "counter")  # includes data workers fetched from UFS
ALLUXIO_BYTES_READ_DOMAIN = Metric("Cluster_BytesReadDomain", "counter")
ALLUXIO_BYTES_READ_UFS = Metric("Cluster_BytesReadUfsAll", "counter")  # the misses
ALLUXIO_CAPACITY_USED = Metric("Cluster_CapacityUsed", "gauge")
ALLUXIO_CAPACITY_TOTAL = Metric("Cluster_CapacityTotal", "gauge")
ALLUXIO_WORKERS = Metric("Cluster_Workers", "gauge")

# --- This platform's showback recording rules (components/addons/showback.py), label `model` -----------
SHOWBACK_SOURCE = "components/addons/showback.py: recording rules this platform renders (PrometheusRule)"
SHOWBACK_REPLICA_COST = Metric("inference_platform:model_replica_gpu_cost_usd_per_hour", "gauge")
SHOWBACK_MODEL_COST = Metric("inference_platform:model_gpu_cost_usd_per_hour", "gauge")
SHOWBACK_TENANT_MODEL_TOKENS = Metric("inference_platform:tenant_model_output_tokens:rate5m", "gauge")
SHOWBACK_MODEL_TOKENS = Metric("inference_platform:model_output_tokens:rate5m", "gauge")
SHOWBACK_MODEL_USD_PER_MILLION = Metric("inference_platform:model_usd_per_million_output_tokens", "gauge")
SHOWBACK_TENANT_COST = Metric("inference_platform:tenant_gpu_cost_usd_per_hour", "gauge")


METRIC_GROUPS: tuple[MetricGroup, ...] = (
    MetricGroup(
        "vllm",
        VLLM_SOURCE,
        (
            VLLM_RUNNING,
            VLLM_WAITING,
            VLLM_KV_CACHE_USAGE,
            VLLM_PREFIX_CACHE_QUERIES,
            VLLM_PREFIX_CACHE_HITS,
            VLLM_TTFT,
            VLLM_TPOT,
            VLLM_QUEUE_TIME,
            VLLM_E2E_LATENCY,
            VLLM_PROMPT_TOKENS,
            VLLM_GENERATION_TOKENS,
            VLLM_ITERATION_TOKENS,
        ),
    ),
    MetricGroup(
        "triton",
        TRITON_SOURCE,
        (
            TRITON_REQUEST_SUCCESS,
            TRITON_REQUEST_FAILURE,
            TRITON_REQUEST_DURATION_US,
            TRITON_QUEUE_DURATION_US,
            TRITON_PENDING_REQUESTS,
            TRITON_INFERENCE_COUNT,
            TRITON_EXEC_COUNT,
        ),
    ),
    MetricGroup(
        "dcgm-exporter",
        DCGM_SOURCE,
        (
            DCGM_GPU_UTIL,
            DCGM_FB_USED,
            DCGM_FB_FREE,
            DCGM_POWER_USAGE,
            DCGM_GPU_TEMP,
            DCGM_XID_ERRORS,
            DCGM_TENSOR_ACTIVE,
            DCGM_GR_ENGINE_ACTIVE,
        ),
    ),
    MetricGroup(
        "endpoint-picker",
        EPP_SOURCE,
        (
            EPP_POOL_KV_CACHE,
            EPP_POOL_QUEUE,
            EPP_POOL_READY_PODS,
            EPP_REQUESTS,
            EPP_REQUEST_ERRORS,
            EPP_FLOW_CONTROL_QUEUE,
            EPP_FLOW_CONTROL_QUEUE_DURATION,
        ),
    ),
    MetricGroup("ai-gateway", AI_GATEWAY_SOURCE, (GEN_AI_TOKEN_USAGE,)),
    MetricGroup("envoy-ratelimit", RATELIMIT_SOURCE, (RATELIMIT_OVER_LIMIT, RATELIMIT_TOTAL_HITS)),
    MetricGroup(
        "alluxio",
        ALLUXIO_SOURCE,
        (
            ALLUXIO_BYTES_READ_LOCAL,
            ALLUXIO_BYTES_READ_REMOTE,
            ALLUXIO_BYTES_READ_DOMAIN,
            ALLUXIO_BYTES_READ_UFS,
            ALLUXIO_CAPACITY_USED,
            ALLUXIO_CAPACITY_TOTAL,
            ALLUXIO_WORKERS,
        ),
    ),
    MetricGroup(
        "showback",
        SHOWBACK_SOURCE,
        (
            SHOWBACK_REPLICA_COST,
            SHOWBACK_MODEL_COST,
            SHOWBACK_TENANT_MODEL_TOKENS,
            SHOWBACK_MODEL_TOKENS,
            SHOWBACK_MODEL_USD_PER_MILLION,
            SHOWBACK_TENANT_COST,
        ),
    ),
)

KNOWN_SERIES: frozenset[str] = frozenset(s for g in METRIC_GROUPS for m in g.metrics for s in m.series())
