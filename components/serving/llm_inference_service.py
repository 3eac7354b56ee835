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
  the platform does not install.
- The presets run `eval "exec vllm serve ... $@"`, so each of our args is shell-quoted (the JSON configs hold
  spaces and quotes), and the image ghcr.io/llm-d/llm-d-cuda:v0.8.0 (vLLM 0.23.0) unless the template names its
  own: ours is the pinned engine (`engines.PD_ENGINE_IMAGE`), as non-root as every model server (uid 1000, HOME and
  caches on the preset's /tmp volume), so the flags validated against the pinned vLLM are what runs
  (LLM_INFERENCE_SERVICE_PRESETS, PD_ENGINE_IMAGE in components/catalog/upstream.py).
- KServe copies `spec.labels` / `spec.annotations` to the decode pods and `spec.prefill.labels` /
  `.annotations` to the prefill pods: both carry the model label (the `vllm-disaggregated` PodMonitor scrapes
  vLLM on 8001 behind decode's sidecar and on prefill's 8000) and Volcano's queue annotations, and run on
  Volcano with the model's PriorityClass, like every other pod of their GPU pools (one scheduler per pool).
  KServe's own `app.kubernetes.io/part-of: llminferenceservice` stays: its Deployments and pool select on it.
The KV connector is vLLM's NixlConnector, producer on prefill and consumer on decode, as in KServe's P/D
sample (docs/samples/llmisvc/single-node-gpu/llm-inference-service-pd-qwen2-7b-gpu.yaml@v0.20.0); over EFA
through NIXL's LIBFABRIC backend (vLLM docs/features/nixl_connector_usage.md, "Selecting a NIXL transport
backend") when the pinned image has it, else UCX's default (TCP on these nodes).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from components.catalog.engines import NON_ROOT_UID, PD_ENGINE_IMAGE, VLLM_NON_ROOT_ENV
from components.config.region import GpuPoolSpec
from components.domain.disaggregation import Disaggregation
from components.domain.fit import Fit
from components.domain.gpu_resources import EFA_RESOURCE
from components.domain.host import HostResources
from components.domain.kv_transfer import efa_interfaces_for
from components.k8s import names
from components.k8s.topology import gpu_tolerations, no_gpu_env, pool_selector
from components.serving.deployment import MODEL_POD_SECURITY, ModelPlacement, sizing_annotations
from components.serving.engine import override_args, vllm_engine_args
from components.serving.network_policies import envoy_peer, policy, prometheus_peer
from components.serving.runtimes import MODEL_MOUNT, VLLM_STARTUP_PATH, startup_probe
from platform_catalog.machines import MACHINES
from platform_catalog.names import SERVING_NAMESPACE, annotation

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
# KServe labels each pool's pods with its role, decode or prefill (KSERVE_LLM_WORKLOAD_LABELS).
ROLE_LABEL = "llm-d.ai/role"
# Where vLLM serves /metrics in each pool's pods: behind decode's routing sidecar, prefill's own port.
ENGINE_PORTS = {"decode": DECODE_ENGINE_PORT, "prefill": POOL_TARGET_PORT}


def pool_name(model: str) -> str:
    return model + POOL_SUFFIX


def workload_labels_of_any_model() -> dict[str, str]:
    """The labels KServe gives every LLMInferenceService's pods, whatever the model."""
    return {"app.kubernetes.io/part-of": "llminferenceservice", "kserve.io/component": "workload"}


def workload_labels(model: str) -> dict[str, str]:
    """The labels KServe gives both pools' pods (and the InferencePool selects on)."""
    return {"app.kubernetes.io/name": model, **workload_labels_of_any_model()}


def pool_labels(model: str, role: str) -> dict[str, str]:
    """The labels that tell one pool's pods (`decode` or `prefill`) from the other's and from the picker's."""
    return {"app.kubernetes.io/name": model, ROLE_LABEL: role}


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


def vllm_argv(p: ModelPlacement, side: Disaggregation, fit: Fit, host: HostResources, role: str) -> list[str]:
    """One pool's vLLM flags after KServe's `vllm serve /mnt/models --served-model-name`: its own sizing."""
    model = p.model
    args = vllm_engine_args(model, fit.slot, fit.request, fit.sizing, MODEL_MOUNT, host.streamer_buffer_bytes)
    kv = kv_transfer_config(role, side.transfer.transport)
    return [*args, "--kv-transfer-config=" + json.dumps(kv), *override_args(model.engine_args)]


def engine_args(p: ModelPlacement, side: Disaggregation, fit: Fit, host: HostResources, role: str) -> list[str]:
    """The container args: `vllm_argv` shell-quoted, since KServe's presets pass them through `eval`."""
    return [shlex.quote(arg) for arg in vllm_argv(p, side, fit, host, role)]


def _resources(side: Disaggregation, pool: GpuPoolSpec, resource: str, fit: Fit, host: HostResources) -> dict[str, Any]:
    gpus = fit.sizing.tensor_parallel
    amounts: dict[str, Any] = {"cpu": host.cpu_quantity, "memory": host.memory_quantity, resource: gpus}
    if side.transfer.transport == "efa":
        amounts[EFA_RESOURCE] = efa_interfaces_for(pool.machine_type, gpus)
    return {"requests": amounts, "limits": dict(amounts)}


def _pod(
    p: ModelPlacement,
    side: Disaggregation,
    pool: GpuPoolSpec,
    resource: str,
    fit: Fit,
    host: HostResources,
    role: str,
    port: int,
) -> dict[str, Any]:
    probe = startup_probe(VLLM_STARTUP_PATH, p.startup_budget_seconds)
    probe["httpGet"] = {"path": VLLM_STARTUP_PATH, "port": port}
    container = {
        "name": CONTAINER,
        "image": PD_ENGINE_IMAGE,
        "args": engine_args(p, side, fit, host, role),
        "env": [
            {"name": NIXL_SIDE_CHANNEL_HOST, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            *({"name": k, "value": v} for k, v in VLLM_NON_ROOT_ENV.items()),
        ],
        # The preset asks runAsNonRoot without a uid; the engine image has no non-root user of its own.
        "securityContext": {"runAsUser": NON_ROOT_UID},
        "resources": _resources(side, pool, resource, fit, host),
        "startupProbe": probe,
    }
    return {
        # Volcano, as every GPU pod of the platform: one scheduler per pool (VOLCANO_SCHEDULES_ONLY_ITS_PODS).
        **p.scheduling.pod_spec_fields(),
        # The presets set seccomp on vLLM's container only, not on decode's routing sidecar: the pod's covers both.
        "securityContext": MODEL_POD_SECURITY,
        "nodeSelector": pool_selector(p.label_domain, pool.name),
        "tolerations": gpu_tolerations(),
        # KServe's preset passes vLLM --shutdown-timeout = this - its preStop's 15 s - 5 s: the drain
        # (upstream.VLLM_ABORTS_IN_FLIGHT_REQUESTS_AT_SIGTERM).
        "terminationGracePeriodSeconds": p.termination_grace_seconds,
        "containers": [container],
    }


def pod_labels(p: ModelPlacement) -> dict[str, str]:
    """Ours on both pools' pods, besides KServe's (whose part-of they must not override): the model label."""
    return {names.MODEL_LABEL: p.name}


def _annotations(p: ModelPlacement, side: Disaggregation) -> dict[str, str]:
    """The decode pool's sizing (as on an InferenceService), the prefill pool's and the hand-off's, with the TTFT
    objective it is budgeted against (policies/rules/disaggregation.py)."""
    prefill = side.fit.sizing
    extra = {
        "serving-mode": "disaggregated",
        "prefill-pool": side.pool.name,
        "prefill-gpu-product": MACHINES[side.pool.machine_type].gpu,
        "prefill-tensor-parallel": str(prefill.tensor_parallel),
        "prefill-kv-cache-gib": f"{prefill.kv_cache_gib:g}",
        "kv-transfer": side.transfer.transport,
        "kv-transfer-bytes-per-prompt": str(side.transfer.bytes_per_prompt),
        "kv-transfer-gbps": f"{side.transfer.gbps:g}",
        "ttft-objective-seconds": f"{p.ttft_objective_seconds:g}",
    }
    return {**sizing_annotations(p), **{annotation(k): v for k, v in extra.items()}, **LLM_CHECKOV_SKIPS}


# Checkov's checks KServe's pods for an LLMInferenceService fail by design (checkov.io/skip annotations).
LLM_CHECKOV_SKIPS = names.checkov_skips(
    {
        **names.PINNED_IMAGE_SKIPS,
        "CKV_K8S_22": "KServe's presets keep the root filesystem writable: 'nvidia-cdi-hook requires a writable root "
        "filesystem' (config-llm-decode-template.yaml@v0.20.0); vLLM writes only to the presets' /tmp emptyDir",
        "CKV_K8S_38": "the decode pod's llm-d routing sidecar watches its InferencePool through the API; the prefill "
        "pod sets automountServiceAccountToken false",
        "CKV_K8S_40": "runs as the engine image's non-root uid (components/catalog/engines.py NON_ROOT_UID)",
    }
)


def llm_inference_service_manifest(p: ModelPlacement, side: Disaggregation, storage_uri: str) -> dict[str, Any]:
    """The model's LLMInferenceService, `side` its prefill pool; `storage_uri` is the cache's pvc://
    (ModelDeploymentArgs checks it)."""
    decode = _pod(p, side, p.pool, p.resource, p.fit, p.host, "kv_consumer", DECODE_ENGINE_PORT)
    sidecar = {"requests": ROUTING_SIDECAR_RESOURCES, "limits": dict(ROUTING_SIDECAR_RESOURCES)}
    decode["initContainers"] = [{"name": ROUTING_SIDECAR, "resources": sidecar, "env": [no_gpu_env()]}]
    prefill = _pod(p, side, side.pool, side.resource, side.fit, side.host, "kv_producer", POOL_TARGET_PORT)
    prefill["automountServiceAccountToken"] = False  # vLLM calls no Kubernetes API (decode's sidecar does)
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": p.name,
            "namespace": SERVING_NAMESPACE,
            "labels": p.labels,
            "annotations": _annotations(p, side),
        },
        "spec": {
            "model": {"uri": storage_uri, "name": p.name},
            "replicas": p.placement.max_replicas,
            "labels": pod_labels(p),
            "annotations": p.scheduling.annotations,
            "template": decode,
            "prefill": {
                "replicas": side.spec.replicas,
                "labels": pod_labels(p),
                "annotations": p.scheduling.annotations,
                "template": prefill,
            },
            # KServe's picker, one replica rolled by Recreate: each change of it is an outage of this model for the
            # picker's start (KSERVE_LLMISVC_PICKER_RECREATED); its pool's FailOpen is ignored by the gateway.
            "router": {
                "scheduler": {
                    "template": {
                        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                        "containers": [
                            {
                                "name": "tokenizer",
                                "resources": {
                                    "requests": {"cpu": "256m", "memory": "500Mi"},
                                    "limits": {"cpu": "1", "memory": "2Gi"},
                                },
                            }
                        ],
                    }
                }
            },
        },
    }


def pod_disruption_budget_manifests(p: ModelPlacement, side: Disaggregation) -> list[dict[str, Any]]:
    """Drains take one pod of a pool at a time, for each pool of more than one pod (KSERVE_LLM_WORKLOAD_LABELS)."""
    pools = (("decode", p.placement.max_replicas), ("prefill", side.spec.replicas))
    return [
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": f"{p.name}-{role}", "namespace": SERVING_NAMESPACE, "labels": p.labels},
            "spec": {
                "maxUnavailable": 1,
                "selector": {"matchLabels": pool_labels(p.name, role)},
            },
        }
        for role, replicas in pools
        if replicas > 1
    ]


def network_policy_manifests(p: ModelPlacement) -> list[dict[str, Any]]:
    """Ingress to the model's pods: the Gateway's Envoy and KServe's picker on the pool port, each other on any
    port (decode's sidecar calls prefill, NIXL's side channel and transfers), Prometheus on vLLM's ports; to the
    picker: Envoy's ext_proc."""
    pods, picker = workload_labels(p.name), picker_labels(p.name)
    callers = [envoy_peer(), {"podSelector": {"matchLabels": picker}}]
    ingress = [
        {"from": callers, "ports": [{"protocol": "TCP", "port": POOL_TARGET_PORT}]},
        {"from": [{"podSelector": {"matchLabels": pods}}]},
    ]
    prometheus = prometheus_peer(p.prometheus_namespace)
    if prometheus is not None:
        ports = sorted(set(ENGINE_PORTS.values()))
        ingress.append({"from": [prometheus], "ports": [{"protocol": "TCP", "port": port} for port in ports]})
    return [
        policy(f"{p.name}-server", SERVING_NAMESPACE, pods, ingress),
        policy(
            f"{p.name}-epp",
            SERVING_NAMESPACE,
            picker,
            [{"from": [envoy_peer()], "ports": [{"protocol": "TCP", "port": PICKER_GRPC_PORT}]}],
        ),
    ]
