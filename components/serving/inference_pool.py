"""One self-hosted model's InferencePool and its endpoint picker (EPP): cache-aware replica choice.

A round-robin load balancer cannot see KV-cache load or prefix-cache hits. The EPP scrapes every
replica's queue depth and KV-cache use and remembers which replica saw which prompt prefixes, then
tells Envoy (ext_proc) the replica to send each request to. The picker is llm-d-router's (v0.9.0, the image
KServe's LLMInferenceService runs: charts.EPP_IMAGE); scoring and weights are those of its charts' default
profile (the Inference Extension's v1.5.0 `inferencepool` chart had the same): queue 2, KV-cache utilisation 2,
prefix-cache hits 3.

This renders what that chart renders (EPP Deployment, Service `<pool>-epp`, RBAC, plugin config,
InferencePool) as typed objects, for two reasons: the chart's v1 InferencePool template sets no
`endpointPickerRef.failureMode`, and objects we render are validated against the upstream CRD.

Failure mode: the AI Gateway v1.1.0 builds the pool's ext_proc filter fail-closed whatever
`endpointPickerRef.failureMode` says (AI_GATEWAY_PICKER_FAIL_CLOSED), so the pool states FailClose and the
config refuses FailOpen. A picker that cannot be reached fails the request with Envoy's 500, which the
Gateway turns into a 503 with Retry-After (gateway_specs.response_overrides).

Replicas are active-active, not the chart's leader-elected active-passive: a leader-elected picker is
ready only while it leads (PICKER_LEADER_ONLY_READY), so it can only roll by Recreate, an outage of every
picker change behind a fail-closed gateway. Without leader election each replica watches the pool and
scrapes its pods itself and serves ext_proc: the Deployment rolls one surge replica at a time and keeps
the serving one until the new one is ready. What it costs: each replica keeps its own prefix-cache
index, learned from the requests it picks, so two replicas find fewer prefix hits than one; queue and
KV-cache scoring read the same metrics on both. What a picker crash costs: the requests whose ext_proc
stream it held fail (503 Retry-After 1, above) and, with flow control, the requests it was holding;
the next requests go to the other replica once the crashed one leaves the Service's endpoints (its
readiness fails within seconds). With one replica (dev's default) a crash fails every request until the
kubelet restarts it and it has synced the pool, typically well under a minute.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.catalog.charts import ENDPOINT_PICKER_VERSION, EPP_IMAGE
from components.catalog.engines import PICKER_ENGINE, PICKER_ENGINE_LABEL
from components.config.gateway import EndpointPickerSpec
from components.config.workloads import ModelSpec
from components.k8s import names
from components.k8s.cluster import ClusterTarget
from components.k8s.helm import custom_resource
from components.serving.gateway_specs import INFERENCE_POOL_API, INFERENCE_POOL_GROUP
from components.serving.network_policies import picker_pods, picker_policy
from components.serving.runtimes import HTTP_PORT
from platform_catalog.names import SERVING_NAMESPACE
from platform_catalog.request_priority import OBJECTIVE_GROUP

PICKER_CONTAINER = "epp"
EXT_PROC_PORT = 9002
HEALTH_PORT = 9003
METRICS_PORT = 9090
CONFIG_HASH_ANNOTATION = "inference-platform.io/picker-config-sha256"
# The charts' default scheduling profile (llm-d/llm-d-router@v0.9.0:config/charts/routerlib/templates/_config.yaml
# L20-29, L73-80).
PLUGINS_FILE = "default-plugins.yaml"
SCORER_WEIGHTS = {"queue-scorer": 2, "kv-cache-utilization-scorer": 2, "prefix-cache-scorer": 3}
# Where the picker scrapes each pod: /metrics on the pool's target port, which both runtimes serve
# (Triton's OpenAI frontend serves the Triton core's metrics there, TensorRT-LLM's included).
METRICS_SOURCE = {"scheme": "http", "path": "/metrics"}
# The chart requests 4 CPUs / 8Gi (scale-tested at high QPS) and leaves CPU unlimited; the platform
# sets limits on every container.
RESOURCES = {
    True: {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"cpu": "4", "memory": "8Gi"}},
    False: {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"cpu": "1", "memory": "2Gi"}},
}


def picker_name(pool: str) -> str:
    """`<release>-epp`, the chart's naming, which the endpoint-picker ServiceMonitor keeps to."""
    return f"{pool}-epp"


def picker_config(model: ModelSpec, queue_wait_seconds: int | None, bands: Sequence[dict[str, Any]] = ()) -> str:
    """The chart's scheduling profile, the engine whose metric names the picker reads and, for a model that may
    be at zero replicas or a pool shared by request classes, flow control.

    Unlabelled pods fall back to `defaultEngine`; the model's pods also carry the engine label
    (`deployment.py`), so a pool never reads one engine's pods with another's names.

    Flow control (feature gate `flowControl`): a pool with no pod counts as saturated
    (utilization detector: no candidates = 1.0), so a request is held in the picker's queue and dispatched
    if a pod reports its metrics within `defaultRequestTTL` (deployment.WAKE_HOLD_SECONDS, not a cold start:
    no client should hang for minutes); then it gets a 503 "request timed out in queue", to which the
    Gateway adds Retry-After [llm-d/llm-d-router@v0.9.0:pkg/epp/requestcontrol/admission.go L230-231,
    pkg/epp/framework/plugins/flowcontrol/saturationdetector/utilization/detector.go L115-118]. Each such request
    is counted with its outcome, which wakes the model (`autoscaling.py`). Without flow control the picker would
    fail the request at once ("failed to find endpoint candidates", director.go L291-296) and nothing would count
    it.

    Request classes (`priority_classes.py`): a band per class (`bands`), the higher dispatched first while the pool
    is saturated, held up to `queue_wait_seconds`, as long as the gateway waits (upstream.GIE_FLOW_CONTROL_BY_PRIORITY).
    """
    plugins = [
        *({"type": s} for s in SCORER_WEIGHTS),
        {"type": "metrics-data-source", "parameters": METRICS_SOURCE},
        {
            "type": "core-metrics-extractor",
            "parameters": {"engineLabelKey": PICKER_ENGINE_LABEL, "defaultEngine": PICKER_ENGINE[model.runtime]},
        },
    ]
    config: dict[str, Any] = {
        # The Inference Extension's group, which v0.9.0 still decodes (deprecated, llm-d/llm-d-router@v0.9.0:pkg/epp/
        # config/loader/configloader.go L50-68), not its own llm-d.ai/v1alpha1: the rehearsal's stand-in, the v1.5.0
        # picker, decodes only this one (tools/rehearsal/binaries.py).
        "apiVersion": "inference.networking.x-k8s.io/v1alpha1",
        "kind": "EndpointPickerConfig",
        "plugins": plugins,
        "schedulingProfiles": [
            {"name": "default", "plugins": [{"pluginRef": s, "weight": w} for s, w in SCORER_WEIGHTS.items()]}
        ],
    }
    if queue_wait_seconds is not None:
        config["featureGates"] = ["flowControl"]
        config["flowControl"] = {"defaultRequestTTL": f"{queue_wait_seconds}s"}
        if bands:
            config["flowControl"]["priorityBands"] = list(bands)
    return yaml.safe_dump(config, sort_keys=False)


def pool_spec(model: ModelSpec, picker: EndpointPickerSpec, server_labels: dict[str, str]) -> dict[str, Any]:
    return {
        "selector": {"matchLabels": server_labels},
        "targetPorts": [{"number": HTTP_PORT}],  # where every runtime serves the OpenAI API
        "endpointPickerRef": {
            "kind": "Service",
            "name": picker_name(model.name),
            "port": {"number": EXT_PROC_PORT},
            "failureMode": picker.failure_mode,
        },
    }


def picker_args(model: ModelSpec) -> list[str]:
    """Only flags the pinned picker accepts; engine metrics are configured in `picker_config`. No
    --ha-enable-leader-election: replicas are active-active (module docstring)."""
    return [
        "--pool-name",
        model.name,
        "--pool-namespace",
        SERVING_NAMESPACE,
        "--pool-group",
        INFERENCE_POOL_GROUP,
        "--zap-encoder",
        "json",
        "--config-file",
        f"/config/{PLUGINS_FILE}",
        "--v=1",
        "--tracing=false",
    ]


@dataclass(frozen=True, kw_only=True)
class InferencePoolArgs:
    cluster: ClusterTarget
    model: ModelSpec
    picker: EndpointPickerSpec
    production: bool
    # Labels of the pods answering on the target port (of a multi-node replica, only its head):
    # ModelPlacement.serving_pods of the model's placement on this cluster.
    server_labels: dict[str, str]
    # What must exist first: the serving namespace and the release installing the InferencePool and InferenceObjective
    # CRDs (KServe's kserve-llmisvc-resources): the picker reads the objectives only if their CRD is served when it
    # starts (upstream.GIE_OBJECTIVE_FROM_HEADER), so its Deployment waits for that release too.
    depends_on: Sequence[pulumi.Resource] = ()
    # How long the picker queues a request no pod can take (a model at zero replicas, or a saturated pool ordering
    # request classes); None: no queue (ModelPlacement.picker_queue_seconds).
    queue_wait_seconds: int | None = None
    # Request classes (`priority_classes.py`): the flow-control band of each, and the pool's InferenceObjectives.
    bands: Sequence[dict[str, Any]] = ()
    objectives: Sequence[dict[str, Any]] = ()


class InferencePool(pulumi.ComponentResource):
    """The pool of one model's server pods on one cluster, with the endpoint picker Envoy consults."""

    service_account: str

    def __init__(self, name: str, args: InferencePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:serving:InferencePool", name, None, opts)
        cluster, model = args.cluster, args.model
        pool, epp = model.name, picker_name(model.name)
        replicas = args.picker.replicas or (2 if args.production else 1)
        prefix = f"{cluster.name}-{epp}"
        labels = {"app.kubernetes.io/name": epp, "app.kubernetes.io/version": ENDPOINT_PICKER_VERSION}
        selector = picker_pods(pool)
        opts_k8s = pulumi.ResourceOptions(
            parent=self, provider=cluster.provider, depends_on=[*cluster.ready, *args.depends_on]
        )

        def meta(object_name: str = epp, extra: dict[str, Any] | None = None) -> dict[str, Any]:
            return {"name": object_name, "namespace": SERVING_NAMESPACE, "labels": {**labels, **(extra or {})}}

        self.service_account = epp
        k8s.core.v1.ServiceAccount(prefix, metadata=meta(), opts=opts_k8s)
        rules = [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "watch", "list"]},
            {"apiGroups": [INFERENCE_POOL_GROUP], "resources": ["inferencepools"], "verbs": ["get", "watch", "list"]},
            {
                "apiGroups": [OBJECTIVE_GROUP],
                "resources": ["inferenceobjectives", "inferencemodelrewrites"],
                "verbs": ["get", "watch", "list"],
            },
        ]
        role = k8s.rbac.v1.Role(prefix, metadata=meta(), rules=rules, opts=opts_k8s)
        k8s.rbac.v1.RoleBinding(
            prefix,
            metadata=meta(),
            subjects=[{"kind": "ServiceAccount", "name": epp, "namespace": SERVING_NAMESPACE}],
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": epp},
            opts=pulumi.ResourceOptions.merge(opts_k8s, pulumi.ResourceOptions(depends_on=[role])),
        )
        plugins = picker_config(model, args.queue_wait_seconds, args.bands)
        config = k8s.core.v1.ConfigMap(prefix, metadata=meta(), data={PLUGINS_FILE: plugins}, opts=opts_k8s)
        # Without leader election every health service name answers the same: serving once the pool has synced.
        liveness = readiness = "inference-extension"
        skips = names.checkov_skips(
            {
                **names.PINNED_IMAGE_SKIPS,
                "CKV_K8S_38": "the endpoint picker watches Pods and InferencePools through the API (Role epp)",
            }
        )
        k8s.apps.v1.Deployment(
            prefix,
            metadata={**meta(), "annotations": skips},
            spec={
                "replicas": replicas,
                # The serving replica stays until its successor is ready (module docstring).
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                "selector": {"matchLabels": selector},
                "template": {
                    # The picker reads its config file once, at start (llm-d/llm-d-router@v0.9.0:cmd/epp/runner/
                    # runner.go L584-603): a new config rolls the pods.
                    "metadata": {
                        "labels": {**labels, **selector},
                        "annotations": {CONFIG_HASH_ANNOTATION: hashlib.sha256(plugins.encode()).hexdigest()},
                    },
                    "spec": {
                        "serviceAccountName": epp,
                        # As long as the longest grace period of the pool's pods (chart default).
                        "terminationGracePeriodSeconds": 130,
                        "securityContext": {
                            "runAsNonRoot": True,
                            "runAsUser": 65532,
                            "runAsGroup": 65532,
                            "seccompProfile": {"type": "RuntimeDefault"},
                        },
                        "containers": [
                            {
                                "name": PICKER_CONTAINER,
                                "image": EPP_IMAGE,
                                "imagePullPolicy": "IfNotPresent",
                                "args": picker_args(model),
                                "ports": [
                                    {"name": "grpc", "containerPort": EXT_PROC_PORT},
                                    {"name": "grpc-health", "containerPort": HEALTH_PORT},
                                    {"name": "metrics", "containerPort": METRICS_PORT},
                                ],
                                "livenessProbe": {
                                    "grpc": {"port": HEALTH_PORT, "service": liveness},
                                    "initialDelaySeconds": 5,
                                    "periodSeconds": 10,
                                },
                                "readinessProbe": {
                                    "grpc": {"port": HEALTH_PORT, "service": readiness},
                                    "periodSeconds": 2,
                                },
                                "env": [
                                    {
                                        "name": "NAMESPACE",
                                        "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
                                    },
                                    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                                ],
                                "resources": RESOURCES[args.production],
                                "securityContext": {
                                    "allowPrivilegeEscalation": False,
                                    "readOnlyRootFilesystem": True,
                                    "capabilities": {"drop": ["ALL"]},
                                },
                                "volumeMounts": [{"name": "plugins-config", "mountPath": "/config"}],
                            }
                        ],
                        "volumes": [{"name": "plugins-config", "configMap": {"name": epp}}],
                    },
                },
            },
            opts=pulumi.ResourceOptions.merge(opts_k8s, pulumi.ResourceOptions(depends_on=[config])),
        )
        for objective in args.objectives:
            custom_resource(
                f"{cluster.name}-{objective['metadata']['name']}-objective",
                objective,
                cluster=cluster,
                parent=self,
                crd_from=args.depends_on,
                depends_on=cluster.ready,
            )
        if replicas > 1:
            k8s.policy.v1.PodDisruptionBudget(
                prefix,
                metadata=meta(),
                spec={"maxUnavailable": 1, "selector": {"matchLabels": selector}},
                opts=opts_k8s,
            )
        k8s.core.v1.Service(
            prefix,
            metadata=meta(),
            spec={
                "type": "ClusterIP",
                "selector": selector,
                "ports": [
                    {
                        "name": "grpc-ext-proc",
                        "protocol": "TCP",
                        "port": EXT_PROC_PORT,
                        "targetPort": EXT_PROC_PORT,
                        "appProtocol": "http2",
                    },
                    {"name": "http-metrics", "protocol": "TCP", "port": METRICS_PORT, "targetPort": METRICS_PORT},
                ],
            },
            opts=opts_k8s,
        )
        custom_resource(
            f"{cluster.name}-{pool}-pool",
            {
                "apiVersion": INFERENCE_POOL_API,
                "kind": "InferencePool",
                "metadata": meta(pool, {names.MODEL_LABEL: pool}),
                "spec": pool_spec(model, args.picker, args.server_labels),
            },
            cluster=cluster,
            parent=self,
            crd_from=args.depends_on,
            depends_on=cluster.ready,
        )
        ingress = picker_policy(pool, selector, EXT_PROC_PORT)
        k8s.networking.v1.NetworkPolicy(prefix, metadata=ingress["metadata"], spec=ingress["spec"], opts=opts_k8s)
        self.register_outputs({"pool": pool, "endpointPicker": epp, "failureMode": args.picker.failure_mode})
