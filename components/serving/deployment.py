"""One model on one region's GPU pool, as pure data: its fit, and the manifests that serve it.

`ModelDeployment` (the component) turns these dicts into resources on the region's cluster; the
federation renders the same InferenceService for Karmada from them, without a cluster.

Shape of a deployment (KServe Standard mode):
- an InferenceService `<model>` in the serving namespace, on our ClusterServingRuntime, whose
  predictor becomes the Deployment `<model>-predictor`: GPUs in the pool's resource name, host
  CPU/memory from the node's share (requests = limits), the pool's nodeSelector and the GPU
  toleration, Volcano's scheduler with the model's queue and tier, a startup probe covering the
  estimated weight load, /dev/shm sized per GPU, zone spread when it runs more than one replica;
  annotated with its sizing for the policy pack, and labelled for the PodMonitors and the
  gateway's InferencePool;
- a PodDisruptionBudget when it may run more than one replica;
- a KEDA ScaledObject when its replica range is a range (`autoscaling.py`); KServe is told the
  autoscaler is external, so it creates no HPA and leaves the replica count alone;
- a replica spanning nodes (pipeline parallel over an EFA pool) uses KServe's multi-node serving:
  a head and `pipelineParallelSize - 1` worker Deployments forming a Ray cluster (not
  LeaderWorkerSet: KServe's InferenceService path needs no extra controller, and the LWS chart
  is not installed), gang-scheduled by a Volcano PodGroup inside one placement group, with EFA
  interfaces on every pod. KServe takes no autoscaler there: replicas are fixed.
In Knative mode Knative's autoscaler scales on concurrency (maxNumSeqs per replica) instead of KEDA.
A disaggregated placement (`disaggregation.py`) renders a KServe LLMInferenceService instead, with its
prefill and decode pools (`llm_inference_service.py`).

Weights: from the cache's PVC (`pvc://`, mounted at /mnt/models) when the region runs it; otherwise
vLLM streams them from the bucket itself (`--model=s3://...`, no storage initializer), and Triton's
TensorRT-LLM repository is downloaded by KServe's storage initializer (its engine paths are local).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from components.catalog.charts import AI_GATEWAY_EXT_PROC_TIMEOUT_SECONDS
from components.catalog.engines import PICKER_ENGINE, PICKER_ENGINE_LABEL
from components.config.environment import EnvironmentSpec
from components.config.gateway import GatewaySpec
from components.config.region import GpuPoolSpec, RegionSpec
from components.config.serving import ServingSpec
from components.config.workloads import ModelSpec, PlacementSpec, PriorityClass
from components.domain.disaggregation import Disaggregation, resolve_mode
from components.domain.fit import Fit, placement_fit, startup_seconds
from components.domain.gateways import has_gateway
from components.domain.gpu_resources import EFA_RESOURCE
from components.domain.host import HostResources, pod_host_resources
from components.domain.image_pull import image_pull_seconds
from components.domain.kv_transfer import ModeDecision
from components.domain.objectives import ttft_objectives
from components.domain.priority import request_classes
from components.domain.sizing import startup_budget_seconds
from components.domain.slots import placed_pool, placed_resource
from components.k8s import names
from components.k8s.scheduling import GROUP_NAME_ANNOTATION, PodScheduling, model_scheduling, pod_group
from components.k8s.topology import ZONE_LABEL, gpu_tolerations, pool_selector
from components.serving.engine import triton_args, vllm_args
from components.serving.network_policies import model_server_policy, picker_pods, prometheus_namespace
from components.serving.runtimes import (
    FORMAT_OF,
    HTTP_PORT,
    MODEL_MOUNT,
    RUNTIME_OF,
    STARTUP_PATH_OF,
    VLLM_MULTINODE_RUNTIME,
    WORKER_CONTAINER,
    engine_volumes,
    startup_probe,
)
from platform_catalog.machines import MACHINES
from platform_catalog.names import SERVING_NAMESPACE, annotation

ISVC_API_VERSION = "serving.kserve.io/v1beta1"
# Labels and annotations KServe defines [kserve/kserve@v0.20.0:pkg/constants/constants.go].
ISVC_LABEL = "serving.kserve.io/inferenceservice"
DEPLOYMENT_MODE = "serving.kserve.io/deploymentMode"
AUTOSCALER_CLASS = "serving.kserve.io/autoscalerClass"
GPU_RESOURCE_TYPES = "serving.kserve.io/gpu-resource-types"
# What KServe's validation of a multi-node InferenceService lets a container ask for without that annotation:
# the basic resources and its own GPU types (upstream.KSERVE_DECLARES_EXTENDED_RESOURCES).
KSERVE_KNOWN_RESOURCES = frozenset(
    {
        "cpu",
        "memory",
        "storage",
        "ephemeral-storage",
        "nvidia.com/gpu",
        "amd.com/gpu",
        "intel.com/gpu",
        "habana.ai/gaudi",
    }
)
# KServe's Standard mode labels each Deployment's pods `app: isvc.<Deployment>`: a multi-node replica's head
# `isvc.<name>-predictor`, its workers `isvc.<name>-predictor-worker`; the workers carry every other label of the
# predictor's too (upstream.KSERVE_POD_APP_LABEL).
POD_APP_LABEL = "app"
PREDICTOR_SUFFIX = "-predictor"
# How often KEDA queries the autoscaling metrics (autoscaling.py).
POLLING_SECONDS = 15
# Cold start of a replica at zero, before its engine starts: Prometheus scrapes the picker's count of the requests
# it could not place (the Prometheus Operator's default interval, which kube-prometheus-stack keeps), KEDA polls
# it ...
WAKE_SCRAPE_SECONDS = 30
# ... and, on a pool that may have no node up, a GPU node starts: instance launch, node join, driver and
# device plugin (an estimate, not measured; the cluster autoscaler itself gives up after its
# max-node-provision-time of 15 minutes), then pulls the engine image (`image_pull_seconds`).
NODE_JOIN_SECONDS = 180
# The picker answers a request it could not place this long before the gateway's own timers fire.
QUEUE_ANSWER_MARGIN_SECONDS = 5
# How long the picker holds a request for a model at zero: long enough for a replica that is about to be ready,
# short against a cold start (minutes) no client should hang on. Then it answers 503 and the gateway adds
# Retry-After (gateway_specs.RETRY_AFTER_SECONDS); the request it held has already woken the model.
WAKE_HOLD_SECONDS = 10
# A stopping model server's time to exit once it has drained (KServe's vLLM presets: min(5, grace);
# kserve/kserve@v0.20.0:pkg/controller/v1alpha2/llmisvc/config_merge.go L684-L705).
EXIT_MARGIN_SECONDS = 5
# The LLMInferenceService presets' vLLM container sleeps this long in its preStop hook before SIGTERM (kserve/kserve@
# v0.20.0:charts/kserve-runtime-configs/files/llmisvcconfigs/resources.yaml L184-L188), which KServe takes out of
# the drain it passes (--shutdown-timeout = grace - preStop - min(5, grace)).
PRESET_PRE_STOP_SECONDS = 15

Autoscaler = Literal["keda", "fixed", "knative"]


@dataclass(frozen=True)
class ModelPlacement:
    """Everything rendering needs about one model in one region, resolved and sized."""

    model: ModelSpec
    serving: ServingSpec  # the region's KServe: deployment mode, what a replica's queue may hold
    # What the engine's bucket client needs to stream weights from the region's bucket (the region's
    # `bucket_client_env`).
    bucket_client_env: Mapping[str, str]
    # Namespace of the Prometheus that scrapes the region (network_policies.prometheus_namespace); None: none does.
    prometheus_namespace: str | None
    placement: PlacementSpec
    pool: GpuPoolSpec
    resource: str
    fit: Fit
    host: HostResources
    startup_seconds: int  # estimated cold start of the engine: weights, engine start, compilation
    scheduling: PodScheduling
    label_domain: str
    ttft_objective_seconds: float
    # Longest a request may wait at the gateway for a replica of a model at zero: the endpoint picker's queue
    # (flow control), WAKE_HOLD_SECONDS within the AI Gateway's and the route's timeouts.
    queue_wait_seconds: int
    gateway: bool  # the cluster runs the gateway, whose Envoy and endpoint picker call the servers
    # Disaggregated: the prefill pool and the KV hand-off (`disaggregation.py`); None when aggregated.
    disaggregation: Disaggregation | None
    mode_decision: ModeDecision | None  # servingMode auto: the rule's verdict and its reasons
    # The classes of the tenants the gateway routes to its pool, most urgent first, when there is more than one
    # (`components/serving/priority_classes.py`); empty otherwise, and for a disaggregated model (KServe's picker).
    request_classes: tuple[PriorityClass, ...]
    # Longest a request may wait at the gateway at all: queue_wait_seconds(gateway).
    gateway_wait_seconds: int
    # Longest a request may still run when its server is told to stop (the gateway's request timeout): what the
    # engine drains for before it exits (upstream.VLLM_ABORTS_IN_FLIGHT_REQUESTS_AT_SIGTERM).
    drain_seconds: int

    @property
    def termination_grace_seconds(self) -> int | None:
        """The pods' terminationGracePeriodSeconds where the engine drains (vLLM): the drain and KServe's own margin
        for the process to exit (its vLLM presets pass --shutdown-timeout = the grace less min(5, grace)). None for
        Triton, which exits on its own core's timeout whatever the grace (the default 30 s stands)."""
        if self.model.runtime != "vllm":
            return None
        # KServe's LLMInferenceService preset sleeps in a preStop hook first and takes it out of the drain it passes.
        pre_stop = PRESET_PRE_STOP_SECONDS if self.disaggregation is not None else 0
        return self.drain_seconds + EXIT_MARGIN_SECONDS + pre_stop

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def predictor(self) -> str:
        """The Deployment KServe's Standard mode creates for the predictor (the head, when multi-node)."""
        return self.name + PREDICTOR_SUFFIX

    @property
    def startup_budget_seconds(self) -> int:
        """What the startup probe allows (liveness kills only after it): see sizing.startup_budget_seconds."""
        return startup_budget_seconds(self.startup_seconds)

    @property
    def cold_start_seconds(self) -> int | None:
        """What a request arriving at zero replicas waits for a replica to answer; None when it never is at zero."""
        if self.placement.min_replicas > 0:
            return None
        node = NODE_JOIN_SECONDS if self.pool.min_size == 0 else 0
        return WAKE_SCRAPE_SECONDS + POLLING_SECONDS + node + self.cold_start_pull_seconds + self.startup_seconds

    @property
    def cold_start_pull_seconds(self) -> int:
        """The engine image pull a cold start waits for: on a new node (`components/domain/image_pull.py`) when the
        pool may have none up, else none (a node kept up is counted as having pulled it)."""
        return image_pull_seconds(self.pool, self.model.runtime) if self.pool.min_size == 0 else 0

    @property
    def picker_queue_seconds(self) -> int | None:
        """How long the picker's flow control holds a request no pod can take, when it runs: WAKE_HOLD_SECONDS for a
        model at zero, as long as the gateway waits for a pool ordering classes; None: no flow control."""
        if self.cold_start_seconds is not None:
            return self.queue_wait_seconds
        return self.gateway_wait_seconds if self.request_classes else None

    @property
    def nodes_per_replica(self) -> int:
        return self.fit.sizing.pipeline_parallel

    @property
    def pool_names(self) -> tuple[str, ...]:
        """The GPU pools its pods run on: the placement's, and a disaggregated one's prefill pool."""
        side = self.disaggregation
        return (self.pool.name,) if side is None else (self.pool.name, side.pool.name)

    @property
    def serving_mode(self) -> str:
        return "disaggregated" if self.disaggregation is not None else "aggregated"

    @property
    def autoscaler(self) -> Autoscaler:
        if self.disaggregation is not None:
            return "fixed"  # KServe's LLMInferenceService pools: fixed replicas (llm_inference_service.py)
        if self.serving.deployment_mode == "Knative":
            return "knative"
        if self.nodes_per_replica > 1 or self.placement.min_replicas == self.placement.max_replicas:
            return "fixed"
        return "keda"

    @property
    def labels(self) -> dict[str, str]:
        """Pod labels the PodMonitors and the gateway's InferencePool select on."""
        return names.model_pod_labels(self.name)

    @property
    def serving_pods(self) -> dict[str, str]:
        """Labels of the pods that answer requests on 8080: of a multi-node replica, only its head."""
        head = {POD_APP_LABEL: f"isvc.{self.predictor}"}
        return {**self.labels, **head} if self.nodes_per_replica > 1 else self.labels


def model_placement(env: EnvironmentSpec, model: ModelSpec, placement: PlacementSpec) -> ModelPlacement:
    """The validated placement, sized (the config checks guarantee it fits)."""
    region = env.region(placement.region)
    pool = placed_pool(region, placement.pool)
    resource = placed_resource(pool, placement.resource)
    fit = placement_fit(model, pool, resource)
    ttft = ttft_objectives(env, region).get(model.name, region.observability.thresholds.ttft_p95_seconds)
    disaggregation, decision = resolve_mode(model, region, placement, fit, ttft)
    return ModelPlacement(
        model=model,
        serving=region.serving,
        bucket_client_env=region.bucket_client_env,
        prometheus_namespace=prometheus_namespace(region.observability),
        placement=placement,
        pool=pool,
        resource=resource,
        fit=fit,
        host=pod_host_resources(region, pool, fit.sizing.tensor_parallel, runtime=model.runtime),
        startup_seconds=startup_seconds(region, model, fit.sizing),
        scheduling=model_scheduling(env, model),
        label_domain=env.label_domain,
        ttft_objective_seconds=ttft,
        queue_wait_seconds=min(WAKE_HOLD_SECONDS, queue_wait_seconds(env.gateway)),
        gateway=has_gateway(env, region),
        disaggregation=disaggregation,
        mode_decision=decision,
        request_classes=request_classes(env, model) if disaggregation is None else (),
        gateway_wait_seconds=queue_wait_seconds(env.gateway),
        drain_seconds=env.gateway.request_timeout_seconds,
    )


def queue_wait_seconds(gateway: GatewaySpec) -> int:
    """How long the picker may hold a request: below the AI Gateway's ext_proc message timeout and the route's
    idle and request timeouts, so the caller gets the picker's 503 ("request timed out in queue"), not a reset."""
    limit = min(AI_GATEWAY_EXT_PROC_TIMEOUT_SECONDS, gateway.idle_timeout_seconds, gateway.request_timeout_seconds)
    return max(1, limit - QUEUE_ANSWER_MARGIN_SECONDS)


def model_placements(env: EnvironmentSpec, region: RegionSpec) -> list[ModelPlacement]:
    """Every model placed in `region`, in config order."""
    return [
        model_placement(env, model, placement)
        for model in env.models
        for placement in model.placements
        if placement.region == region.name
    ]


def sizing_annotations(p: ModelPlacement) -> dict[str, str]:
    """The sizing the policy pack checks the rendered pod against (policies/rules/llm.py)."""
    sizing, slot = p.fit.sizing, p.fit.slot
    values = {
        "gpu-product": MACHINES[p.pool.machine_type].gpu,
        # Down to the hundredth: never more than the device reports (the policy pack compares the two).
        "gpu-memory-gib": f"{math.floor(slot.memory_gib * 100) / 100:g}",
        "tensor-parallel": str(sizing.tensor_parallel),
        "pipeline-parallel": str(sizing.pipeline_parallel),
        "weights-gib": f"{sizing.weights_gib:g}",
        "kv-cache-gib": f"{sizing.kv_cache_gib:g}",
        "estimated-load-seconds": str(p.startup_seconds),
        "fp8-capable": str(slot.fp8).lower(),
    }
    return {annotation(key): value for key, value in values.items()}


def model_location(p: ModelPlacement, storage_uri: str) -> tuple[str | None, str]:
    """(KServe storageUri, the directory the engine reads): see the module docstring."""
    if p.model.runtime == "triton" or storage_uri.startswith("pvc://"):
        return storage_uri, MODEL_MOUNT
    return None, storage_uri.rstrip("/")


def pod_resources(p: ModelPlacement) -> dict[str, dict[str, Any]]:
    """One pod's requests (= limits): its GPUs, host share and, on multi-node EFA replicas, every EFA interface."""
    amounts: dict[str, Any] = {
        "cpu": p.host.cpu_quantity,
        "memory": p.host.memory_quantity,
        p.resource: p.fit.sizing.tensor_parallel,
    }
    if p.nodes_per_replica > 1 and p.pool.efa:
        amounts[EFA_RESOURCE] = MACHINES[p.pool.machine_type].efa_interfaces
    return {"requests": amounts, "limits": dict(amounts)}


def _engine_args(p: ModelPlacement, model_dir: str) -> list[str]:
    if p.model.runtime == "vllm":
        fit = p.fit
        return vllm_args(
            p.model, fit.slot, fit.request, fit.sizing, model_dir, p.host.streamer_buffer_bytes, p.drain_seconds
        )
    return triton_args(p.model)


def _engine_env(p: ModelPlacement, streams_from_bucket: bool) -> list[dict[str, str]]:
    env = dict(p.bucket_client_env) if streams_from_bucket else {}
    if p.model.runtime == "triton" and p.fit.sizing.tensor_parallel > 1:
        env["TRTLLM_ORCHESTRATOR"] = "1"  # the TensorRT-LLM backend spawns its tensor-parallel ranks itself
    return [{"name": k, "value": v} for k, v in env.items()]


def _isvc_annotations(p: ModelPlacement) -> dict[str, str]:
    mode = p.serving.deployment_mode
    annotations: dict[str, str] = {DEPLOYMENT_MODE: mode}
    if p.autoscaler == "keda":
        annotations[AUTOSCALER_CLASS] = "external"  # our ScaledObject owns the replica count
    elif p.autoscaler == "fixed":
        annotations[AUTOSCALER_CLASS] = "none"
    # KServe refuses a resource it does not know (a MIG slice, a multi-node replica's EFA interfaces) unless declared.
    declared = [name for name in pod_resources(p)["requests"] if name not in KSERVE_KNOWN_RESOURCES]
    if declared:
        annotations[GPU_RESOURCE_TYPES] = json.dumps(declared)
    return {**annotations, **sizing_annotations(p), **ISVC_CHECKOV_SKIPS}


# Checkov's checks the pod KServe builds from an InferenceService fails by design (checkov.io/skip annotations:
# `make checkov` scans that pod with the InferenceService's annotations).
ISVC_CHECKOV_SKIPS = names.checkov_skips(
    {
        **names.PINNED_IMAGE_SKIPS,
        "CKV_K8S_22": "the engine writes its compile caches and the model's scratch under the image's root",
        "CKV_K8S_38": "its ServiceAccount model-server sets automountServiceAccountToken false, which Checkov does "
        "not read from the pod",
        "CKV_K8S_40": "runs as the engine image's non-root uid (components/catalog/engines.py NON_ROOT_UID)",
    }
)


def _pod_placement(p: ModelPlacement) -> dict[str, Any]:
    """Pod-level fields shared by the head and the workers of a replica."""
    return {
        **p.scheduling.pod_spec_fields(),
        "serviceAccountName": names.MODEL_SERVER_SERVICE_ACCOUNT,
        "nodeSelector": pool_selector(p.label_domain, p.pool.name),
        "tolerations": gpu_tolerations(),
        "volumes": engine_volumes(p.model.runtime, f"{p.host.shm_gib}Gi"),
    }


def pod_group_name(p: ModelPlacement) -> str:
    return f"{p.name}-gang"


# Every model server pod's own security context: non-root, the runtime's default seccomp profile (which covers
# containers a template does not set it on, e.g. KServe's routing sidecar).
MODEL_POD_SECURITY: dict[str, Any] = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}


def inference_service_manifest(p: ModelPlacement, storage_uri: str) -> dict[str, Any]:
    """The model's InferenceService; `storage_uri` from `model_cache.model_storage_uri`."""
    model, placement = p.model, p.placement
    storage, model_dir = model_location(p, storage_uri)
    streams_from_bucket = storage is None
    container: dict[str, Any] = {
        "modelFormat": FORMAT_OF[model.runtime],
        "runtime": VLLM_MULTINODE_RUNTIME if p.nodes_per_replica > 1 else RUNTIME_OF[model.runtime],
        "resources": pod_resources(p),
        "startupProbe": startup_probe(STARTUP_PATH_OF[model.runtime], p.startup_budget_seconds),
    }
    args = _engine_args(p, model_dir)
    if args:
        container["args"] = args
    if storage is not None:
        container["storageUri"] = storage
    env = _engine_env(p, streams_from_bucket)
    if env:
        container["env"] = env
    annotations = dict(p.scheduling.annotations)
    if p.nodes_per_replica > 1:
        annotations[GROUP_NAME_ANNOTATION] = pod_group_name(p)
    predictor: dict[str, Any] = {
        "minReplicas": placement.min_replicas,
        "maxReplicas": placement.max_replicas,
        # The engine label tells the endpoint picker which metric names this pod exports.
        "labels": {**p.labels, PICKER_ENGINE_LABEL: PICKER_ENGINE[model.runtime]},
        "annotations": annotations,
        **_pod_placement(p),
        "securityContext": MODEL_POD_SECURITY,
        "model": container,
    }
    grace = p.termination_grace_seconds
    if grace is not None:
        predictor["terminationGracePeriodSeconds"] = grace
    if placement.max_replicas > 1:
        predictor["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE_LABEL,
                # Best effort: GPUs are scarce, and fabric pools sit in one zone anyway.
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {ISVC_LABEL: p.name}},
            }
        ]
    if p.autoscaler == "knative":
        predictor["scaleMetric"] = "concurrency"
        predictor["scaleTarget"] = model.max_num_seqs
    if p.nodes_per_replica > 1:
        predictor["workerSpec"] = {
            "tensorParallelSize": p.fit.sizing.tensor_parallel,
            "pipelineParallelSize": p.nodes_per_replica,
            **_pod_placement(p),
            # The workers hold the head's model shards: they stop when the head has drained, not 30 s in.
            **({} if grace is None else {"terminationGracePeriodSeconds": grace}),
            "containers": [{"name": WORKER_CONTAINER, "resources": pod_resources(p)}],
        }
    return {
        "apiVersion": ISVC_API_VERSION,
        "kind": "InferenceService",
        "metadata": {
            "name": p.name,
            "namespace": SERVING_NAMESPACE,
            "labels": p.labels,
            "annotations": _isvc_annotations(p),
        },
        "spec": {"predictor": predictor},
    }


def pod_disruption_budget_manifest(p: ModelPlacement) -> dict[str, Any] | None:
    """Drains take one replica's pods at a time; a single-replica model needs none."""
    if p.placement.max_replicas <= 1:
        return None
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": p.name, "namespace": SERVING_NAMESPACE, "labels": p.labels},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {ISVC_LABEL: p.name}}},
    }


def network_policy_manifest(p: ModelPlacement) -> dict[str, Any]:
    """Who may call the model's server pods (`network_policies.py`)."""
    picker = picker_pods(p.name) if p.gateway else None
    return model_server_policy(p.serving.deployment_mode, p.name, HTTP_PORT, picker)


def pod_group_manifest(p: ModelPlacement) -> dict[str, Any] | None:
    """The gang of a multi-node model: every pod of its (fixed) replicas starts together in one fabric domain."""
    if p.nodes_per_replica == 1:
        return None
    gpus = {k: v for k, v in pod_resources(p)["requests"].items() if k not in ("cpu", "memory")}
    return pod_group(
        pod_group_name(p),
        SERVING_NAMESPACE,
        p.scheduling,
        members=p.nodes_per_replica * p.placement.max_replicas,
        resources_per_member=gpus,
    )
