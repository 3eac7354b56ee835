"""KServe on a GPU cluster: its CRDs, its controller and webhooks, and the platform's serving runtimes.

Deployment mode (`regions[].serving.deploymentMode`): Standard (default) serves each model from
plain Deployments that KEDA scales; Knative needs Knative Serving already in the cluster, which
the platform does not install, and trades Volcano-friendly pods for scale to zero.

Ingress is off (`disableIngressCreation`, Gateway API off). Clients reach models through the AI
gateway: one Gateway per cluster whose routes pick a model's pods through its InferencePool,
charge tenants' token budgets and authenticate them. KServe's own Gateway API ingress would attach
an extra HTTPRoute per model to that Gateway, a second path to the same pods that skips the
endpoint picker and the token accounting; it would also need the Gateway API CRDs (installed with
Envoy Gateway) before the KServe controller starts, or the controller fails to watch HTTPRoutes.

cert-manager comes first: kserve-resources issues its webhook's serving certificate with a
cert-manager Certificate and fails to install without cert-manager's CRDs (components/addons/cert_manager.py;
`regions[].certManager.existing` where it already runs).

LLMInferenceService (disaggregated placements) has a controller of its own, installed on every cluster that runs
KServe, in the order its objects need (`components/catalog/upstream.py` LLM_INFERENCE_SERVICE_INSTALL):
kserve-crd -> kserve-llmisvc-crd (both template ClusterStorageContainer and skip it when another release owns
it, so they go one after the other) -> kserve-resources (owns the shared Issuer, ClusterStorageContainer and
inferenceservice-config) -> kserve-llmisvc-resources (its controller, webhooks and the Inference Extension CRDs)
-> kserve-runtime-configs (the well-known LLMInferenceServiceConfigs, validated by that controller's webhook).
kserve-llmisvc-resources is the one owner of the InferencePool CRD on the cluster: the gateway's pools and
Envoy Gateway (which watches InferencePools from its start) wait for it; installing it everywhere, not only
where a model is disaggregated, keeps that owner fixed when a model changes mode (a CRD whose owner goes away
is deleted with every InferencePool).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, get_args

import pulumi
import pulumi_kubernetes as k8s

from components.catalog.charts import CHARTS
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import (
    awaited_webhook_service,
    chart_patch_skips,
    custom_resource,
    helm_release,
    namespace,
    release_digest,
)
from components.k8s.inputs import known
from components.k8s.topology import ZONE_LABEL, pool_selector
from components.serving.runtimes import runtimes

NAMESPACE = "kserve"
# The Services the API server calls for each release's webhooks (failurePolicy Fail), at the pin
# (upstream.KSERVE_AND_VOLCANO_WEBHOOK_SERVICES): InferenceServices, ServingRuntimes and ClusterServingRuntimes;
# LLMInferenceServices and LLMInferenceServiceConfigs.
WEBHOOK_SERVICE = "kserve-webhook-server-service"
LLMISVC_WEBHOOK_SERVICE = "llmisvc-webhook-server-service"


def controller_values(label_domain: str, deployment_mode: str, production: bool) -> dict[str, Any]:
    """kserve-resources values: the cluster's default deployment mode, no ingress, on the system pool; in
    production its replicas (CONTROLLER_REPLICAS) spread over zones."""
    controller: dict[str, Any] = {
        "deploymentMode": deployment_mode,
        "nodeSelector": pool_selector(label_domain, "system"),
        "gateway": {"disableIngressCreation": True, "ingressGateway": {"enableGatewayApi": False}},
    }
    if production:
        controller["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE_LABEL,
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": CONTROLLER_POD_LABELS},
            }
        ]
    return {"kserve": {"controller": controller}}


def llm_inference_service_values(label_domain: str) -> dict[str, Any]:
    """kserve-llmisvc-resources values: its controller on the system pool; the objects kserve-resources already
    renders (Issuer, ClusterStorageContainer, inferenceservice-config) left to it, which a second release could not
    create; the Inference Extension CRDs kept (createGIECRDs, the chart's default)."""
    return {
        "kserve": {
            "createSharedResources": False,
            "llmisvc": {"controller": {"nodeSelector": pool_selector(label_domain, "system")}},
        }
    }


# kserve-runtime-configs: only the LLMInferenceServiceConfigs, not upstream's ClusterServingRuntimes.
RUNTIME_CONFIGS_VALUES = {"kserve": {"llmisvcConfigs": {"enabled": True}}}


DeploymentMode = Literal["Standard", "Knative"]

# The controller's Deployment sets no replicas and the chart has no value for them (kserve/kserve@v0.20.0:charts/
# kserve-resources/files/kserve/resources.yaml L426-L447, deployment-patch.yaml): one pod, which also serves the pod
# webhook every InferenceService pod passes (failurePolicy Fail). In production a patch runs two, spread over zones
# (the controller elects a leader: --leader-elect; each replica serves the webhook), so a lost node or zone does not
# stop model pods from being created until it is rescheduled.
CONTROLLER = "kserve-controller-manager"
CONTROLLER_POD_LABELS = {"control-plane": CONTROLLER}
CONTROLLER_REPLICAS = 2


@dataclass(frozen=True, kw_only=True)
class KServeArgs:
    cluster: ClusterHandle
    label_domain: str
    deployment_mode: DeploymentMode  # the region's (serving.deploymentMode): KServe's default
    production: bool  # two controller replicas over zones, with a disruption budget

    def __post_init__(self) -> None:
        modes = dict.fromkeys(get_args(DeploymentMode))
        known("deployment_mode", self.deployment_mode, modes, "KServe deployment mode")

    cert_manager: Sequence[pulumi.Resource] = ()  # cert-manager's release, when the platform installs it


class KServe(pulumi.ComponentResource):
    """KServe's CRD and controller releases (InferenceService and LLMInferenceService) and our ClusterServingRuntimes."""

    release: k8s.helm.v3.Release  # controller and webhooks: InferenceServices depend on it
    runtimes: list[k8s.apiextensions.CustomResource]
    # What an LLMInferenceService needs: its CRD, its controller and webhooks, the configs it is merged over.
    llm_inference_service: list[k8s.helm.v3.Release]
    inference_pool_crds: k8s.helm.v3.Release  # the cluster's one owner of the InferencePool CRD

    def __init__(self, name: str, args: KServeArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:KServe", name, None, opts)
        cluster = args.cluster
        mode = args.deployment_mode
        ns = namespace(NAMESPACE, cluster, self)
        crds = helm_release("kserve-crd", CHARTS["kserve-crd"], cluster, ns, {}, parent=self)
        values = controller_values(args.label_domain, mode, args.production)
        self.release = helm_release(
            "kserve",
            CHARTS["kserve-resources"],
            cluster,
            ns,
            values,
            parent=self,
            depends_on=[crds, *args.cert_manager],
        )
        if args.production:
            self._second_controller(cluster)
        llm_crds = helm_release(
            "kserve-llmisvc-crd", CHARTS["kserve-llmisvc-crd"], cluster, ns, {}, parent=self, depends_on=[crds]
        )
        llm_values = llm_inference_service_values(args.label_domain)
        llm_release = helm_release(
            "kserve-llmisvc",
            CHARTS["kserve-llmisvc-resources"],
            cluster,
            ns,
            llm_values,
            parent=self,
            depends_on=[llm_crds, self.release],
        )
        serving = partial(
            awaited_webhook_service, namespace=NAMESPACE, cluster=cluster, label_domain=args.label_domain, parent=self
        )
        webhook = serving(
            WEBHOOK_SERVICE, release=self.release, installed=release_digest(CHARTS["kserve-resources"], values)
        )
        llm_webhook = serving(
            LLMISVC_WEBHOOK_SERVICE,
            release=llm_release,
            installed=release_digest(CHARTS["kserve-llmisvc-resources"], llm_values),
        )
        # Its LLMInferenceServiceConfigs are validated by the llmisvc webhook: Helm creates them at once, unretried.
        llm_configs = helm_release(
            "kserve-runtime-configs",
            CHARTS["kserve-runtime-configs"],
            cluster,
            ns,
            RUNTIME_CONFIGS_VALUES,
            parent=self,
            depends_on=[llm_release, llm_webhook],
        )
        self.llm_inference_service = [llm_crds, llm_release, llm_webhook, llm_configs]
        self.inference_pool_crds = llm_release
        # The controller's webhook validates runtimes, so they wait for it as well as for the CRDs.
        self.runtimes = [
            custom_resource(
                f"{cluster.name}-runtime-{runtime['metadata']['name']}",
                runtime,
                cluster=cluster,
                parent=self,
                crd_from=[crds],
                depends_on=[*cluster.ready, webhook],
            )
            for runtime in runtimes()
        ]
        self.register_outputs({"deploymentMode": mode, "runtimes": [r["metadata"]["name"] for r in runtimes()]})

    def _second_controller(self, cluster: ClusterHandle) -> None:
        """CONTROLLER_REPLICAS: a patch of the chart's controller Deployment (Helm's upgrades leave a field its
        manifest does not set), and a budget that keeps one serving through a drain."""
        opts = pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[self.release])
        k8s.apps.v1.DeploymentPatch(
            f"{cluster.name}-kserve-controller-replicas",
            metadata={
                "name": CONTROLLER,
                "namespace": NAMESPACE,
                # The API server defaulted `replicas: 1` as Helm created the Deployment, so Helm's field manager owns
                # it: the apply takes it over (upstream.PATCH_FORCE_TAKES_OVER_FIELDS; unforced it is a 409 conflict,
                # as the rehearsal showed). Helm's later upgrades leave a field their manifest never sets.
                "annotations": {
                    "pulumi.com/patchForce": "true",
                    **chart_patch_skips("kserve-resources", CONTROLLER, "the replicas"),
                },
            },
            spec={"replicas": CONTROLLER_REPLICAS},
            opts=opts,
        )
        k8s.policy.v1.PodDisruptionBudget(
            f"{cluster.name}-kserve-controller",
            metadata={"name": CONTROLLER, "namespace": NAMESPACE},
            spec={"maxUnavailable": 1, "selector": {"matchLabels": CONTROLLER_POD_LABELS}},
            opts=opts,
        )
