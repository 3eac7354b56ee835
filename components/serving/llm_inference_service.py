"""A disaggregated placement as KServe's LLMInferenceService (v1alpha2), and who may reach its pods.

What KServe v0.20.0's controller makes of it (pkg/controller/v1alpha2/llmisvc@v0.20.0):
- `spec.template` is the decode pool, Deployment `<name>-kserve`; `spec.prefill.template` the prefill
  pool, `<name>-kserve-prefill` (workload_single_node.go). Both merge over the well-known configs
  `kserve-config-llm-decode-template` / `-prefill-template` (config_merge.go), which run
  `vllm serve /mnt/models --served-model-name <model.name>` plus our container args, decode behind the
  llm-d routing sidecar on 8000 (vLLM on 8001), prefill on 8000. So our args carry everything but the
  served name and the weights' location (`engine.vllm_engine_args`), and the tensor-parallel size stays our
  flag (the templates add theirs only when `spec.parallelism.tensor` is set, which we leave out).
- `router.scheduler: {}` makes it create the InferencePool `<name>-inference-pool` over both pools'
  pods and its endpoint picker, whose default config for a spec with `prefill` has a `prefill` and a
  `decode` scheduling profile (prefill-filter / decode-filter, disagg-profile-handler; scheduler.go,
  schedulerConfigText): the prefill goes to the prefill pod with the shortest queue and most free KV
  cache, the decode to the decode pod with the fewest active requests. Our AI Gateway route sends the
  model there (`gateway_specs.route_targets`) with the same tenant keys and budgets as any model; KServe's
  own HTTPRoute is not asked for (`router.route` unset).
- A `pvc://` model is mounted at /mnt/models (workload_storage.go): disaggregated placements need the
  model cache, and LoRA adapters load from it as on aggregated ones.
- Replicas are fixed: `replicas` on both pools. `scaling` needs the workload-variant autoscaler, which
  the platform does not install, and the pods carry KServe's labels, not ours, so our PodMonitors and
  KEDA queries do not see them.
- KServe passes no pod annotations of ours through (only prometheus.io/*), so Volcano's queue annotation
  cannot reach these pods: they run on the default scheduler with the model's PriorityClass, outside the
  tenant's Volcano queue.
The KV connector is vLLM's NixlConnector, producer on prefill and consumer on decode, as in KServe's P/D
sample (docs/samples/llmisvc/single-node-gpu/llm-inference-service-pd-qwen2-7b-gpu.yaml@v0.20.0); over EFA
through NIXL's LIBFABRIC backend (vLLM docs/features/nixl_connector_usage.md, "Selecting a NIXL transport
backend"), else UCX's default (TCP on these nodes).
"""

from __future__ import annotations

import json
from typing import Any

from components.config.region import GpuPoolSpec
from components.domain.disaggregation import Disaggregation
from components.domain.fit import Fit
from components.domain.gpu_resources import EFA_RESOURCE
from components.domain.host import HostResources
from components.domain.kv_transfer import efa_interfaces_for
from components.k8s import names
from components.k8s.topology import gpu_tolerations, pool_selector
from components.serving.deployment import ModelPlacement, sizing_annotations
from components.serving.engine import override_args, vllm_engine_args
from components.serving.network_policies import envoy_peer, policy
from components.serving.runtimes import MODEL_MOUNT, VLLM_STARTUP_PATH, startup_probe

API_VERSION = "serving.kserve.io/v1alpha2"
KIND = "LLMInferenceService"
# What KServe v0.20.0 names and labels (pkg/constants/constants.go, workload_single_node.go, scheduler.go).
POOL_SUFFIX = "-inference-pool"
POOL_TARGET_PORT = 8000  # the InferencePool's target port: decode's routing sidecar, prefill's vLLM
DECODE_ENGINE_PORT = 8001  # vLLM behind decode's routing sidecar
PICKER_GRPC_PORT = 9002
CONTAINER = "main"
# KServe's decode preset runs the llm-d routing sidecar with `resources: {}` (config-llm-decode-template.yaml at
# v0.20.0): without requests equal to limits the GPU pod is not Guaranteed; we give the proxy a small fixed share.
ROUTING_SIDECAR = "llm-d-routing-sidecar"
ROUTING_SIDECAR_RESOURCES = {"cpu": "250m", "memory": "256Mi"}
NIXL_SIDE_CHANNEL_HOST = "VLLM_NIXL_SIDE_CHANNEL_HOST"


def pool_name(model: str) -> str:
    return model + POOL_SUFFIX


def workload_labels(model: str) -> dict[str, str]:
    """The labels KServe gives both pools' pods (and the InferencePool selects on)."""
    return {
        "app.kubernetes.io/name": model,
        "app.kubernetes.io/part-of": "llminferenceservice",
        "kserve.io/component": "workload",
    }


def picker_labels(model: str) -> dict[str, str]:
    """The labels of the endpoint picker KServe runs for the model (SchedulerLabels)."""
    return {
        "app.kubernetes.io/component": "llminferenceservice-router-scheduler",
        "app.kubernetes.io/name": model,
        "app.kubernetes.io/part-of": "llminferenceservice",
    }


def kv_transfer_config(role: str, transport: str) -> dict[str, Any]:
    config: dict[str, Any] = {"kv_connector": "NixlConnector", "kv_role": role}
    if transport == "efa":
        config["kv_connector_extra_config"] = {"backends": ["LIBFABRIC"]}
    return config


def engine_args(p: ModelPlacement, fit: Fit, host: HostResources, role: str) -> list[str]:
    """One pool's vLLM flags after KServe's `vllm serve /mnt/models --served-model-name`: its own sizing."""
    assert p.disaggregation is not None
    model = p.model
    args = vllm_engine_args(model, fit.slot, fit.request, fit.sizing, MODEL_MOUNT, host.streamer_buffer_bytes)
    kv = kv_transfer_config(role, p.disaggregation.transfer.transport)
    return [*args, "--kv-transfer-config=" + json.dumps(kv), *override_args(model.engine_args)]


def _resources(p: ModelPlacement, pool: GpuPoolSpec, resource: str, fit: Fit, host: HostResources) -> dict:
    assert p.disaggregation is not None
    gpus = fit.sizing.tensor_parallel
    amounts: dict[str, Any] = {"cpu": host.cpu_quantity, "memory": host.memory_quantity, resource: gpus}
    if p.disaggregation.transfer.transport == "efa":
        amounts[EFA_RESOURCE] = efa_interfaces_for(pool.machine_type, gpus)
    return {"requests": amounts, "limits": dict(amounts)}


def _pod(
    p: ModelPlacement, pool: GpuPoolSpec, resource: str, fit: Fit, host: HostResources, role: str, port: int
) -> dict[str, Any]:
    probe = startup_probe(VLLM_STARTUP_PATH, p.startup_budget_seconds)
    probe["httpGet"] = {"path": VLLM_STARTUP_PATH, "port": port}
    container = {
        "name": CONTAINER,
        "args": engine_args(p, fit, host, role),
        "env": [{"name": NIXL_SIDE_CHANNEL_HOST, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
        "resources": _resources(p, pool, resource, fit, host),
        "startupProbe": probe,
    }
    return {
        "priorityClassName": p.scheduling.priority_class_name,
        "nodeSelector": pool_selector(p.label_domain, pool.name),
        "tolerations": gpu_tolerations(),
        "containers": [container],
    }


def _annotations(p: ModelPlacement, side: Disaggregation) -> dict[str, str]:
    """The decode pool's sizing (as on an InferenceService), the prefill pool's and the hand-off's."""
    prefill = side.fit.sizing
    extra = {
        "serving-mode": "disaggregated",
        "prefill-pool": side.pool.name,
        "prefill-tensor-parallel": str(prefill.tensor_parallel),
        "prefill-kv-cache-gib": f"{prefill.kv_cache_gib:g}",
        "kv-transfer": side.transfer.transport,
        "kv-transfer-bytes-per-prompt": str(side.transfer.bytes_per_prompt),
        "kv-transfer-gbps": f"{side.transfer.gbps:g}",
    }
    return {**sizing_annotations(p), **{names.annotation(k): v for k, v in extra.items()}, **LLM_CHECKOV_SKIPS}


# Checkov's checks KServe's pods for an LLMInferenceService fail by design (checkov.io/skip annotations).
LLM_CHECKOV_SKIPS = names.checkov_skips(
    {
        **names.PINNED_IMAGE_SKIPS,
        "CKV_K8S_22": "KServe's presets keep the root filesystem writable (nvidia-cdi-hook writes to it)",
        "CKV_K8S_29": "KServe's presets set each container's security context (no escalation, all capabilities "
        "dropped, RuntimeDefault seccomp); the pod has none of its own",
        "CKV_K8S_38": "the decode pod's llm-d routing sidecar watches its InferencePool through the API; the prefill "
        "pod sets automountServiceAccountToken false",
        "CKV_K8S_40": "runs as the preset image's non-root user (runAsNonRoot)",
    }
)


def llm_inference_service_manifest(p: ModelPlacement, storage_uri: str) -> dict[str, Any]:
    """The model's LLMInferenceService; `storage_uri` is the cache's pvc:// (the config checks require it)."""
    side = p.disaggregation
    assert side is not None and storage_uri.startswith("pvc://"), "disaggregated placements read the cache"
    decode = _pod(p, p.pool, p.resource, p.fit, p.host, "kv_consumer", DECODE_ENGINE_PORT)
    sidecar = {"requests": ROUTING_SIDECAR_RESOURCES, "limits": dict(ROUTING_SIDECAR_RESOURCES)}
    decode["initContainers"] = [{"name": ROUTING_SIDECAR, "resources": sidecar}]
    prefill = _pod(p, side.pool, side.resource, side.fit, side.host, "kv_producer", POOL_TARGET_PORT)
    prefill["automountServiceAccountToken"] = False  # vLLM calls no Kubernetes API (decode's sidecar does)
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": p.name,
            "namespace": names.SERVING_NAMESPACE,
            "labels": p.labels,
            "annotations": _annotations(p, side),
        },
        "spec": {
            "model": {"uri": storage_uri, "name": p.name},
            "replicas": p.placement.max_replicas,
            "template": decode,
            "prefill": {"replicas": side.spec.replicas, "template": prefill},
            "router": {"scheduler": {}},
        },
    }


def pod_disruption_budget_manifests(p: ModelPlacement) -> list[dict[str, Any]]:
    """Drains take one pod of a pool at a time, for each pool of more than one pod; KServe labels a pool's pods
    llm-d.ai/role decode or prefill (kserve/kserve@v0.20.0 workload_single_node.go L95-97, L222-229)."""
    side = p.disaggregation
    assert side is not None
    pools = (("decode", p.placement.max_replicas), ("prefill", side.spec.replicas))
    return [
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": f"{p.name}-{role}", "namespace": names.SERVING_NAMESPACE, "labels": p.labels},
            "spec": {
                "maxUnavailable": 1,
                "selector": {"matchLabels": {"app.kubernetes.io/name": p.name, "llm-d.ai/role": role}},
            },
        }
        for role, replicas in pools
        if replicas > 1
    ]


def network_policy_manifests(p: ModelPlacement) -> list[dict[str, Any]]:
    """Ingress to the model's pods: the Gateway's Envoy and KServe's picker on the pool port, each other on any
    port (decode's sidecar calls prefill, NIXL's side channel and transfers); to the picker: Envoy's ext_proc."""
    pods, picker = workload_labels(p.name), picker_labels(p.name)
    callers = [envoy_peer(), {"podSelector": {"matchLabels": picker}}]
    ingress = [
        {"from": callers, "ports": [{"protocol": "TCP", "port": POOL_TARGET_PORT}]},
        {"from": [{"podSelector": {"matchLabels": pods}}]},
    ]
    return [
        policy(f"{p.name}-server", names.SERVING_NAMESPACE, pods, ingress),
        policy(
            f"{p.name}-epp",
            names.SERVING_NAMESPACE,
            picker,
            [{"from": [envoy_peer()], "ports": [{"protocol": "TCP", "port": PICKER_GRPC_PORT}]}],
        ),
    ]
