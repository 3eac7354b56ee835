"""A GKE cluster for one GCP region entry, on its own explicit Google provider."""

from __future__ import annotations

from dataclasses import replace

import pulumi

from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.gcp.gke import GkeCluster, GkeClusterArgs
from components.gcp.gpu_node_pool import GkeGpuNodePool, GkeGpuNodePoolArgs
from components.gcp.gpudirect_pods import GpuDirectPods, GpuDirectPodsArgs
from components.gcp.network import GcpNetwork, GcpNetworkArgs
from components.k8s.cluster import ClusterHandle, WorkloadIdentity
from stacks.clouds import cloud_provider


def build_gcp_cluster(
    parent: pulumi.Resource, env: EnvironmentSpec, region: RegionSpec, cluster_name: str, stack: str
) -> ClusterHandle:
    provider = cloud_provider(env, region, stack, parent)
    opts = pulumi.ResourceOptions(parent=parent, providers={"gcp": provider})
    network = GcpNetwork(region.name, GcpNetworkArgs(region=region, cluster_name=cluster_name), opts=opts)
    gke = GkeCluster(
        region.name,
        GkeClusterArgs(
            region=region,
            cluster_name=cluster_name,
            network=network,
            label_domain=env.label_domain,
            production=env.production,
        ),
        opts=opts,
    )
    pools = [
        GkeGpuNodePool(
            f"{region.name}-{pool.name}",
            GkeGpuNodePoolArgs(
                region=region, pool=pool, cluster_name=cluster_name, label_domain=env.label_domain, gke=gke
            ),
            opts=opts,
        )
        for pool in region.gpu_pools
    ]
    gpu_direct = [p for p, spec in zip(pools, region.gpu_pools, strict=True) if spec.gpu_direct]
    if gpu_direct:
        GpuDirectPods(
            region.name,
            GpuDirectPodsArgs(cluster=gke.handle, label_domain=env.label_domain, depends_on=tuple(gpu_direct)),
            opts=pulumi.ResourceOptions(parent=parent),
        )
    return replace(
        gke.handle,
        cloud_provider=provider,
        identity=WorkloadIdentity(workload_pool=gke.workload_pool),
        egress_ips=network.egress_ips,
    )
