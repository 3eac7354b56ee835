"""KEDA ScaledObjects for model servers: scale on queue depth and latency, not on CPU.

Each model that autoscales (Standard mode, minReplicas < maxReplicas) gets one ScaledObject on
its predictor Deployment, with Prometheus triggers on the series its PodMonitor scrapes (the
model's pods carry `names.MODEL_LABEL`, relabelled to `scrape_targets.MODEL_LABEL`):
- queue: requests waiting for a batch slot, summed over replicas, against
  `serving.waitingRequestsPerReplica` per replica (vLLM `num_requests_waiting`, Triton
  `nv_inference_pending_request_count`);
- latency: vLLM's TTFT p95 over 2 minutes against the model's TTFT objective; Triton has no TTFT
  histogram, so its mean queueing time per request stands in, against the region's default
  objective (queueing alone must not eat the first-token budget). Latency triggers are
  `Value` metrics: replicas grow in proportion to how far p95 is over the objective;
- scale from zero (minReplicas 0, outside production only): with no pod there is no engine metric,
  and the picker counts a request (`inference_objective_request_total`) only once it picked a pod. So
  the model's picker runs flow control (`inference_pool.py`), which holds a request WAKE_HOLD_SECONDS while no
  pod can take it and then answers 503 (the gateway adds Retry-After); every request it could not place counts
  in its flow-control histogram with an outcome other than Dispatched, a counter no scrape misses however short
  the hold. Those requests over two minutes wake the model: KEDA activates above zero, and asks for one replica
  per maxNumSeqs of them;
- scale from zero of a model with a stand-in (`stand_in.py`): its requests bypass the picker and are answered by the
  stand-in, so the AI Gateway's count of requests asking for it (gen_ai.original.model) wakes it instead;
- held at the picker (a pool shared by request classes, `priority_classes.py`): its flow control holds requests
  while the pool is saturated, so they wait there instead of in the engines' queues the queue trigger reads; the
  requests it holds of the classes that scale (not best effort) count against `serving.waitingRequestsPerReplica`.
Scale-down is slow (10 minutes of stability, then one pod per 5 minutes): a replica that goes
away costs a reload of its weights when load returns.
Queries the metric catalog knows only (`components/catalog/metrics.py`); tests parse them.
"""

from __future__ import annotations

from typing import Any

from components.catalog import metrics as m
from components.domain.priority import OBJECTIVE_PRIORITY
from components.k8s.names import MODEL_TARGET_LABEL
from components.serving.deployment import POLLING_SECONDS, ModelPlacement
from components.serving.priority_classes import SCALING_CLASSES
from platform_catalog.names import SERVING_NAMESPACE

SCALED_OBJECT_API_VERSION = "keda.sh/v1alpha1"
IDLE_SECONDS_BEFORE_ZERO = 900
WINDOW = "2m"


def _selector(model: str) -> str:
    return f'{{namespace="{SERVING_NAMESPACE}",{MODEL_TARGET_LABEL}="{model}"}}'


def queue_query(p: ModelPlacement) -> str:
    waiting = m.VLLM_WAITING if p.model.runtime == "vllm" else m.TRITON_PENDING_REQUESTS
    return f"sum({waiting}{_selector(p.name)})"


def latency_query(p: ModelPlacement) -> str:
    """Seconds: vLLM's TTFT p95, Triton's mean queueing time per request; 0 without traffic (not NaN)."""
    sel = _selector(p.name)
    if p.model.runtime == "vllm":
        p95 = f"histogram_quantile(0.95, sum by (le) (rate({m.VLLM_TTFT.bucket}{sel}[{WINDOW}])))"
        return f"({p95} >= 0) or vector(0)"
    queued = f"sum(increase({m.TRITON_QUEUE_DURATION_US}{sel}[{WINDOW}]))"
    served = f"clamp_min(sum(increase({m.TRITON_REQUEST_SUCCESS}{sel}[{WINDOW}])), 1)"
    return f"({queued} / {served} / 1e6) or vector(0)"


def gateway_queue_query(p: ModelPlacement) -> str:
    """Requests the model's picker could not place (held, then answered 503) over the window."""
    unplaced = f'{{inference_pool="{p.name}",outcome!="Dispatched"}}'
    return f"sum(increase({m.EPP_FLOW_CONTROL_QUEUE_DURATION.count}{unplaced}[{WINDOW}])) or vector(0)"


def stand_in_query(p: ModelPlacement) -> str:
    """1 while the gateway answered requests for the model over the window (`stand_in.py`: at zero, its stand-in
    did), else 0: a wake signal, never a size. The AI Gateway labels every request with the model the client asked
    for (gen_ai.original.model), also those the model serves itself once up, so the count is request rate, not
    load; scaling out is the queue's and latency's triggers' job."""
    asked = f'{{gen_ai_original_model="{p.name}",gen_ai_token_type="input"}}'
    return f"clamp_max(sum(increase({m.GEN_AI_TOKEN_USAGE.count}{asked}[{WINDOW}])), 1) or vector(0)"


def held_query(p: ModelPlacement) -> str:
    """Requests of the classes that scale the model's picker holds now (its flow-control queue, by priority)."""
    levels = "|".join(str(OBJECTIVE_PRIORITY[c]) for c in p.request_classes if c in SCALING_CLASSES)
    held = f'{{inference_pool="{p.name}",priority=~"{levels}"}}'
    return f"sum({m.EPP_FLOW_CONTROL_QUEUE}{held}) or vector(0)"


def _trigger(name: str, server: str, query: str, threshold: float, metric_type: str) -> dict[str, Any]:
    return {
        "type": "prometheus",
        "name": name,
        "metricType": metric_type,
        "metadata": {"serverAddress": server, "query": query, "threshold": f"{threshold:g}"},
    }


def scaled_object_manifest(p: ModelPlacement, prometheus_url: str) -> dict[str, Any]:
    """The ScaledObject of a placement whose autoscaler is KEDA."""
    placement = p.placement
    triggers = [
        _trigger("queue", prometheus_url, queue_query(p), p.serving.waiting_requests_per_replica, "AverageValue"),
        _trigger("latency", prometheus_url, latency_query(p), p.ttft_objective_seconds, "Value"),
    ]
    if p.request_classes:
        triggers.append(
            _trigger(
                "gateway-held",
                prometheus_url,
                held_query(p),
                p.serving.waiting_requests_per_replica,
                "AverageValue",
            )
        )
    if placement.min_replicas == 0 and placement.stand_in is not None:
        # Its requests skip the picker: the ones its stand-in answered wake it.
        triggers.append(_trigger("stand-in", prometheus_url, stand_in_query(p), 1, "AverageValue"))
    elif placement.min_replicas == 0:
        triggers.append(
            _trigger("gateway-queue", prometheus_url, gateway_queue_query(p), p.model.max_num_seqs, "AverageValue")
        )
    return {
        "apiVersion": SCALED_OBJECT_API_VERSION,
        "kind": "ScaledObject",
        "metadata": {"name": p.name, "namespace": SERVING_NAMESPACE, "labels": p.labels},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": p.predictor},
            "minReplicaCount": placement.min_replicas,
            "maxReplicaCount": placement.max_replicas,
            "pollingInterval": POLLING_SECONDS,
            "cooldownPeriod": IDLE_SECONDS_BEFORE_ZERO,
            "advanced": {
                "horizontalPodAutoscalerConfig": {
                    "behavior": {
                        "scaleDown": {
                            "stabilizationWindowSeconds": 600,
                            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 300}],
                        }
                    }
                }
            },
            "triggers": triggers,
        },
    }
