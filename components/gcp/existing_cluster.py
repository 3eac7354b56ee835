"""A GKE cluster that already exists, as the platform needs it: read by name, never managed.

Its network, control plane and system pool are the owner's; the platform adds GPU node pools (with the
node service account the owner names), add-ons and models. Workload Identity must be enabled on it: the
pool is `<project>.svc.id.goog`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.config.region import ExistingClusterSpec, RegionSpec
from components.gcp.gke import gke_kubeconfig
from components.k8s.cluster import ClusterHandle, kubernetes_provider


@dataclass(frozen=True, kw_only=True)
class ExistingGkeClusterArgs:
    region: RegionSpec
    existing: ExistingClusterSpec


class ExistingGkeCluster(pulumi.ComponentResource):
    handle: ClusterHandle
    workload_pool: str

    def __init__(self, name: str, args: ExistingGkeClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:gcp:ExistingGkeCluster", name, None, opts)
        existing, region = args.existing, args.region
        cluster = gcp.container.get_cluster_output(
            name=existing.name, location=region.region, project=region.project, opts=pulumi.InvokeOptions(parent=self)
        )
        kubeconfig = gke_kubeconfig(
            existing.name, cluster.endpoint, cluster.master_auths.apply(lambda auths: auths[0].cluster_ca_certificate)
        )
        self.workload_pool = f"{region.project}.svc.id.goog"
        self.handle = ClusterHandle(
            name=existing.name,
            region=region,
            provider=kubernetes_provider(existing.name, kubeconfig, self, []),
            kubeconfig=kubeconfig,
            endpoint=cluster.endpoint,
        )
        self.register_outputs({"endpoint": cluster.endpoint})
