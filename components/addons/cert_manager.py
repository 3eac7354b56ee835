"""cert-manager on a cluster that runs KServe: kserve-resources issues its webhook's serving certificate
with a cert-manager Certificate and fails to install without cert-manager's CRDs and webhook.

The chart installs its CRDs (`crds.enabled`) and keeps them on uninstall (`crds.keep`), so removing the
release never deletes the Certificates other charts own. `regions[].certManager.existing: true` skips it
where cert-manager already runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.catalog.charts import CHARTS
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import helm_release, namespace
from components.k8s.topology import pool_selector

NAMESPACE = "cert-manager"


def chart_values(label_domain: str, production: bool) -> dict[str, Any]:
    """CRDs from the chart, every component on the system pool; in production two replicas and a PDB each."""
    replicas = 2 if production else 1
    selector = pool_selector(label_domain, "system")
    component = {"replicaCount": replicas, "nodeSelector": selector, "podDisruptionBudget": {"enabled": production}}
    return {
        "crds": {"enabled": True, "keep": True},
        **component,
        "webhook": dict(component),
        "cainjector": dict(component),
        "startupapicheck": {"nodeSelector": selector},
    }


@dataclass(frozen=True, kw_only=True)
class CertManagerArgs:
    cluster: ClusterHandle
    label_domain: str
    production: bool


class CertManager(pulumi.ComponentResource):
    release: k8s.helm.v3.Release  # its CRDs and webhook: KServe's Certificate waits for it

    def __init__(self, name: str, args: CertManagerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:CertManager", name, None, opts)
        ns = namespace(NAMESPACE, args.cluster, self)
        self.release = helm_release(
            "cert-manager",
            CHARTS["cert-manager"],
            args.cluster,
            ns,
            chart_values(args.label_domain, args.production),
            parent=self,
        )
        self.register_outputs({"namespace": NAMESPACE, "version": CHARTS["cert-manager"].version})
