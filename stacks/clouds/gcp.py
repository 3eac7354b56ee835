"""The GCP backend (stacks/clouds/__init__.py): a GKE cluster and a GCS model store per region entry."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pulumi
import pulumi_gcp as gcp

from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.gcp.existing_cluster import ExistingGkeCluster, ExistingGkeClusterArgs
from components.gcp.gke import GkeCluster, GkeClusterArgs
from components.gcp.gpu_node_pool import GkeGpuNodePool, GkeGpuNodePoolArgs
from components.gcp.network import GcpNetwork, GcpNetworkArgs
from components.k8s.cluster import ClusterHandle, GkeIdentity
from components.k8s.workload_identity import ServiceAccountRef
from stacks.clouds import ModelStore, ModelStoreRef, platform_tags


def provider(
    env: EnvironmentSpec, region: RegionSpec, env_name: str, parent: pulumi.Resource | None = None
) -> pulumi.ProviderResource:
    provider_: pulumi.ProviderResource = gcp.Provider(
        f"{region.name}-gcp",
        project=region.project,
        region=region.region,
        default_labels=platform_tags(env, region, env_name),
        opts=pulumi.ResourceOptions(parent=parent),
    )
    return provider_


def model_store(
    parent: pulumi.Resource,
    env: EnvironmentSpec,
    region: RegionSpec,
    *,
    bucket: str,
    cluster: ClusterHandle,
    readers: Mapping[str, ServiceAccountRef],
) -> ModelStore:
    from components.gcp.model_store import GcsModelStore, GcsModelStoreArgs

    assert region.project is not None, "check_region: required on GCP"
    store = GcsModelStore(
        region.name,
        GcsModelStoreArgs(
            bucket,
            region.project,
            region.region,
            cluster.name,
            env.model_store,
            env.production,
            cluster.gke_identity(),
            dict(readers),
        ),
        opts=pulumi.ResourceOptions(parent=parent, providers=cluster.cloud_providers),
    )
    return ModelStore(
        component=store,
        identities={label: account.email for label, account in store.reader_accounts.items()},
        ref=ModelStoreRef(cloud="gcp", bucket=store.bucket.name),
    )


def network(
    parent: pulumi.Resource, env: EnvironmentSpec, region: RegionSpec, cluster_name: str, stack: str
) -> GcpNetwork:
    """The region's provider and network alone, named as `cluster` names them: a runner's network-first step."""
    return _network(
        region,
        cluster_name,
        pulumi.ResourceOptions(parent=parent, providers={"gcp": provider(env, region, stack, parent)}),
    )


def _network(region: RegionSpec, cluster_name: str, opts: pulumi.ResourceOptions) -> GcpNetwork:
    return GcpNetwork(region.name, GcpNetworkArgs(region=region, cluster_name=cluster_name), opts=opts)


def cluster(
    parent: pulumi.Resource, env: EnvironmentSpec, region: RegionSpec, cluster_name: str, stack: str
) -> ClusterHandle:
    provider_ = provider(env, region, stack, parent)
    opts = pulumi.ResourceOptions(parent=parent, providers={"gcp": provider_})
    existing_spec = region.cluster.existing
    if existing_spec is not None:
        existing = ExistingGkeCluster(
            region.name, ExistingGkeClusterArgs(region=region, existing=existing_spec), opts=opts
        )
        base, workload_pool = existing.handle, existing.workload_pool
        node_cluster, node_account = existing_spec.name, existing_spec.node_service_account or ""
        egress_ips = pulumi.Output.from_input([str(ip) for ip in existing_spec.egress_ips])
        network_id = None
    else:
        network = _network(region, cluster_name, opts)
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
        base, workload_pool = gke.handle, gke.workload_pool
        node_cluster, node_account = gke.cluster.name, gke.node_service_account.email
        egress_ips = network.egress_ips
        network_id = network.network.id
    for pool in region.gpu_pools:
        GkeGpuNodePool(
            f"{region.name}-{pool.name}",
            GkeGpuNodePoolArgs(
                region=region,
                pool=pool,
                cluster_name=cluster_name,
                label_domain=env.label_domain,
                cluster=node_cluster,
                node_service_account=node_account,
            ),
            opts=opts,
        )
    return replace(
        base,
        cloud_provider=provider_,
        identity=GkeIdentity(workload_pool=workload_pool),
        egress_ips=egress_ips,
        network_id=network_id,
    )
