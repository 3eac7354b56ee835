"""A GKE cluster that already exists, as the platform needs it: read by name, never managed.

Its network, control plane and system pool are the owner's; the platform adds GPU node pools (with the
node service account the owner names), add-ons and models. Workload Identity must be enabled on it: the
pool is `<project>.svc.id.goog`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.gcp.gke import gke_kubeconfig
from components.gcp.network import GcpLocation
from components.k8s.cluster import kubernetes_provider
from components.k8s.inputs import required


@dataclass(frozen=True, kw_only=True)
class ExistingGkeClusterArgs:
    location: GcpLocation
    cluster_name: str  # the cluster's name in the project and region

    def __post_init__(self) -> None:
        required("cluster_name", self.cluster_name, "name the existing GKE cluster")


class ExistingGkeCluster(pulumi.ComponentResource):
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    endpoint: pulumi.Output[str]
    ready: list[pulumi.Resource]  # nothing: the owner's cluster is up
    workload_pool: str

    def __init__(self, name: str, args: ExistingGkeClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:gcp:ExistingGkeCluster", name, None, opts)
        cluster_name, location = args.cluster_name, args.location
        cluster = gcp.container.get_cluster_output(
            name=cluster_name,
            location=location.region,
            project=location.project,
            opts=pulumi.InvokeOptions(parent=self),
        )
        self.kubeconfig = gke_kubeconfig(
            cluster_name, cluster.endpoint, cluster.master_auths.apply(lambda auths: auths[0].cluster_ca_certificate)
        )
        self.workload_pool = f"{location.project}.svc.id.goog"
        self.provider = kubernetes_provider(cluster_name, self.kubeconfig, self, [])
        self.endpoint = cluster.endpoint
        self.ready = []
        self.register_outputs({"endpoint": cluster.endpoint})
