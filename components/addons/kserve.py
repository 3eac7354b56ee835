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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.catalog.charts import CHARTS
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import custom_resource, helm_release, namespace
from components.k8s.topology import pool_selector
from components.serving.runtimes import runtimes

NAMESPACE = "kserve"


def controller_values(label_domain: str, deployment_mode: str) -> dict[str, Any]:
    """kserve-resources values: the cluster's default deployment mode, no ingress, on the system pool."""
    return {
        "kserve": {
            "controller": {
                "deploymentMode": deployment_mode,
                "nodeSelector": pool_selector(label_domain, "system"),
                "gateway": {"disableIngressCreation": True, "ingressGateway": {"enableGatewayApi": False}},
            }
        }
    }


@dataclass(frozen=True, kw_only=True)
class KServeArgs:
    cluster: ClusterHandle
    label_domain: str
    cert_manager: Sequence[pulumi.Resource] = ()  # cert-manager's release, when the platform installs it


class KServe(pulumi.ComponentResource):
    """The kserve-crd and kserve-resources releases and our ClusterServingRuntimes."""

    release: k8s.helm.v3.Release  # controller and webhooks: InferenceServices depend on it
    runtimes: list[k8s.apiextensions.CustomResource]

    def __init__(self, name: str, args: KServeArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:KServe", name, None, opts)
        cluster = args.cluster
        mode = cluster.region.serving.deployment_mode
        ns = namespace(NAMESPACE, cluster, self)
        crds = helm_release("kserve-crd", CHARTS["kserve-crd"], cluster, ns, {}, parent=self)
        self.release = helm_release(
            "kserve",
            CHARTS["kserve-resources"],
            cluster,
            ns,
            controller_values(args.label_domain, mode),
            parent=self,
            depends_on=[crds, *args.cert_manager],
        )
        # The controller's webhook validates runtimes, so they wait for it as well as for the CRDs.
        self.runtimes = [
            custom_resource(
                f"{cluster.name}-runtime-{runtime['metadata']['name']}",
                runtime,
                cluster=cluster,
                parent=self,
                crd_from=[crds],
                depends_on=[*cluster.ready, self.release],
            )
            for runtime in runtimes()
        ]
        self.register_outputs({"deploymentMode": mode, "runtimes": [r["metadata"]["name"] for r in runtimes()]})
