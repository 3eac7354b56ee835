"""An EKS cluster for one AWS region entry, on its own explicit AWS provider."""

from __future__ import annotations

from dataclasses import replace

import pulumi

from components.aws.cluster_autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs, scale_down_unneeded_seconds
from components.aws.eks import EksCluster, EksClusterArgs
from components.aws.gpu_node_group import EksGpuNodeGroup, EksGpuNodeGroupArgs
from components.aws.network import AwsNetwork, AwsNetworkArgs
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.k8s.cluster import ClusterHandle, WorkloadIdentity
from components.serving.deployment import model_placements
from stacks.clouds import cloud_provider


def build_aws_cluster(
    parent: pulumi.Resource, env: EnvironmentSpec, region: RegionSpec, cluster_name: str, stack: str
) -> ClusterHandle:
    provider = cloud_provider(env, region, stack, parent)
    opts = pulumi.ResourceOptions(parent=parent, providers={"aws": provider})
    network = AwsNetwork(region.name, AwsNetworkArgs(region=region, cluster_name=cluster_name), opts=opts)
    eks = EksCluster(
        region.name,
        EksClusterArgs(
            region=region,
            cluster_name=cluster_name,
            network=network,
            label_domain=env.label_domain,
            production=env.production,
        ),
        opts=opts,
    )
    placements = model_placements(env, region)
    node_groups = [
        EksGpuNodeGroup(
            f"{region.name}-{pool.name}",
            EksGpuNodeGroupArgs(
                region=region,
                pool=pool,
                cluster_name=cluster_name,
                label_domain=env.label_domain,
                eks=eks,
                network=network,
                scale_down_unneeded_seconds=scale_down_unneeded_seconds(
                    [p.startup_budget_seconds for p in placements if pool.name in p.pool_names]
                ),
            ),
            opts=opts,
        )
        for pool in region.gpu_pools
    ]
    identity = WorkloadIdentity(oidc_provider_arn=eks.oidc_provider.arn, oidc_issuer=eks.oidc_issuer)
    handle = replace(eks.handle, cloud_provider=provider, identity=identity, egress_ips=network.egress_ips)
    if node_groups:
        ClusterAutoscaler(
            region.name,
            ClusterAutoscalerArgs(
                cluster=handle,
                cluster_name=cluster_name,
                label_domain=env.label_domain,
                production=env.production,
                node_groups=[g.node_group for g in node_groups],
                tags=[tag for g in node_groups for tag in g.autoscaler_tags],
            ),
            opts=opts,
        )
    return handle
