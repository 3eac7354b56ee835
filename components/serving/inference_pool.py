"""One self-hosted model's InferencePool and its endpoint picker (EPP): cache-aware replica choice.

A round-robin load balancer cannot see KV-cache load or prefix-cache hits. The EPP scrapes every
replica's queue depth and KV-cache use and remembers which replica saw which prompt prefixes, then
tells Envoy (ext_proc) the replica to send each request to. Scoring and weights are those of the
v1.5.0 `inferencepool` chart: queue 2, KV-cache utilisation 2, prefix-cache hits 3.

This renders what that chart renders (EPP Deployment, Service `<pool>-epp`, RBAC, plugin config,
InferencePool) as typed objects, for two reasons: the chart's v1 InferencePool template sets no
`endpointPickerRef.failureMode`, and objects we render are validated against the upstream CRD.

Failure mode (gateway.endpointPicker.failureMode, default FailClose): when the picker is down,
FailOpen would let Envoy forward without a pick, to whichever replica, bypassing the picker's
saturation checks exactly when the pool is in trouble, and with no endpoint chosen an
InferencePool backend has nowhere sensible to go. FailClose returns a fast 503, which the
gateway's retry policy and the client's back-off handle; production runs two picker replicas
(active-passive, leader election) so a picker restart does not take the model down.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.catalog.charts import EPP_IMAGE, INFERENCE_EXTENSION_VERSION
from components.catalog.engines import PICKER_ENGINE, PICKER_ENGINE_LABEL
from components.config.gateway import EndpointPickerSpec
from components.config.workloads import ModelSpec
from components.k8s import names
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import custom_resource
from components.serving.gateway_specs import INFERENCE_POOL_API, INFERENCE_POOL_GROUP
from components.serving.network_policies import picker_pods, picker_policy
from components.serving.runtimes import HTTP_PORT

EXT_PROC_PORT = 9002
HEALTH_PORT = 9003
METRICS_PORT = 9090
# The chart's default scheduling profile (config/charts/epplib/templates/_config.yaml at v1.5.0).
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


def picker_config(model: ModelSpec, queue_wait_seconds: int | None) -> str:
    """The chart's scheduling profile, the engine whose metric names the picker reads and, for a model that may
    be at zero replicas, flow control.

    Unlabelled pods fall back to `defaultEngine`; the model's pods also carry the engine label
    (`deployment.py`), so a pool never reads one engine's pods with another's names.

    Flow control (v1.5.0 feature gate `flowControl`): a pool with no pod counts as saturated
    (utilization detector: no candidates = 1.0), so a request is held in the picker's queue, which wakes
    the model (`autoscaling.py`), and dispatched once a pod reports its metrics; after
    `defaultRequestTTL` it gets a 503 "request timed out in queue" [pkg/epp/requestcontrol/admission.go,
    pkg/epp/framework/plugins/flowcontrol/saturationdetector/utilization/detector.go]. Without it the
    picker would fail the request at once ("failed to find endpoint candidates").
    """
    plugins = [
        *({"type": s} for s in SCORER_WEIGHTS),
        {"type": "metrics-data-source", "parameters": METRICS_SOURCE},
        {
            "type": "core-metrics-extractor",
            "parameters": {"engineLabelKey": PICKER_ENGINE_LABEL, "defaultEngine": PICKER_ENGINE[model.runtime]},
        },
    ]
    config: dict = {
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
    return yaml.safe_dump(config, sort_keys=False)


def pool_spec(model: ModelSpec, picker: EndpointPickerSpec, server_labels: dict[str, str]) -> dict:
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


def picker_args(model: ModelSpec, replicas: int) -> list[str]:
    """Only flags the pinned picker accepts; engine metrics are configured in `picker_config`."""
    args = [
        "--pool-name",
        model.name,
        "--pool-namespace",
        names.SERVING_NAMESPACE,
        "--pool-group",
        INFERENCE_POOL_GROUP,
        "--zap-encoder",
        "json",
        "--config-file",
        f"/config/{PLUGINS_FILE}",
        "--v=1",
        "--tracing=false",
    ]
    if replicas > 1:
        args.append("--ha-enable-leader-election")  # only the leader reports ready
    return args


@dataclass(frozen=True, kw_only=True)
class InferencePoolArgs:
    cluster: ClusterHandle
    model: ModelSpec
    picker: EndpointPickerSpec
    production: bool
    # Labels of the pods answering on the target port (of a multi-node replica, only its head):
    # ModelPlacement.serving_pods of the model's placement on this cluster.
    server_labels: dict[str, str]
    # What must exist first: the serving namespace and the release / manifests installing the InferencePool CRD.
    depends_on: Sequence[pulumi.Resource] = ()
    # How long the picker queues a request no pod can take (a model at zero replicas); None: no queue.
    queue_wait_seconds: int | None = None


class InferencePool(pulumi.ComponentResource):
    """The pool of one model's server pods on one cluster, with the endpoint picker Envoy consults."""

    service_account: str

    def __init__(self, name: str, args: InferencePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:serving:InferencePool", name, None, opts)
        cluster, model = args.cluster, args.model
        pool, epp = model.name, picker_name(model.name)
        replicas = args.picker.replicas or (2 if args.production else 1)
        prefix = f"{cluster.name}-{epp}"
        labels = {"app.kubernetes.io/name": epp, "app.kubernetes.io/version": INFERENCE_EXTENSION_VERSION}
        selector = picker_pods(pool)
        opts_k8s = pulumi.ResourceOptions(
            parent=self, provider=cluster.provider, depends_on=[*cluster.ready, *args.depends_on]
        )

        def meta(object_name: str = epp, extra: dict | None = None) -> dict:
            return {"name": object_name, "namespace": names.SERVING_NAMESPACE, "labels": {**labels, **(extra or {})}}

        self.service_account = epp
        k8s.core.v1.ServiceAccount(prefix, metadata=meta(), opts=opts_k8s)
        rules = [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "watch", "list"]},
            {"apiGroups": [INFERENCE_POOL_GROUP], "resources": ["inferencepools"], "verbs": ["get", "watch", "list"]},
            {
                "apiGroups": ["inference.networking.x-k8s.io"],
                "resources": ["inferenceobjectives", "inferencemodelrewrites"],
                "verbs": ["get", "watch", "list"],
            },
        ]
        if replicas > 1:
            rules.append(
                {
                    "apiGroups": ["coordination.k8s.io"],
                    "resources": ["leases"],
                    "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
                }
            )
        role = k8s.rbac.v1.Role(prefix, metadata=meta(), rules=rules, opts=opts_k8s)
        k8s.rbac.v1.RoleBinding(
            prefix,
            metadata=meta(),
            subjects=[{"kind": "ServiceAccount", "name": epp, "namespace": names.SERVING_NAMESPACE}],
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": epp},
            opts=pulumi.ResourceOptions.merge(opts_k8s, pulumi.ResourceOptions(depends_on=[role])),
        )
        config = k8s.core.v1.ConfigMap(
            prefix, metadata=meta(), data={PLUGINS_FILE: picker_config(model, args.queue_wait_seconds)}, opts=opts_k8s
        )
        # In HA mode only the leader reports ready; the chart then probes distinct gRPC health services.
        liveness, readiness = ("liveness", "readiness") if replicas > 1 else ("inference-extension",) * 2
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
                # One active picker at a time keeps its prefix-cache index whole (chart's strategy).
                "strategy": {"type": "Recreate"},
                "selector": {"matchLabels": selector},
                "template": {
                    "metadata": {"labels": {**labels, **selector}},
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
                                "name": "epp",
                                "image": EPP_IMAGE,
                                "imagePullPolicy": "IfNotPresent",
                                "args": picker_args(model, replicas),
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
