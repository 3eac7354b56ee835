"""KEDA: autoscales model servers on Prometheus metrics (queue depth, latency), and from zero outside production.

It watches the serving namespace only: ScaledObjects live next to the Deployments they scale.
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
from platform_catalog.names import SERVING_NAMESPACE

NAMESPACE = "keda"


def chart_values(label_domain: str, production: bool) -> dict[str, Any]:
    """On the system pool; in production two replicas of each component (one operator leads)."""
    replicas = 2 if production else 1
    return {
        "watchNamespace": SERVING_NAMESPACE,
        "nodeSelector": pool_selector(label_domain, "system"),
        "operator": {"replicaCount": replicas},
        "metricsServer": {"replicaCount": replicas},
        "webhooks": {"replicaCount": replicas},
    }


@dataclass(frozen=True, kw_only=True)
class KedaArgs:
    cluster: ClusterHandle
    label_domain: str
    production: bool


class Keda(pulumi.ComponentResource):
    release: k8s.helm.v3.Release  # installs the ScaledObject CRD

    def __init__(self, name: str, args: KedaArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:Keda", name, None, opts)
        ns = namespace(NAMESPACE, args.cluster, self)
        self.release = helm_release(
            "keda", CHARTS["keda"], args.cluster, ns, chart_values(args.label_domain, args.production), parent=self
        )
        self.register_outputs({"namespace": NAMESPACE, "watchNamespace": SERVING_NAMESPACE})
