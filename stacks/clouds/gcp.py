"""The GCP backend (stacks/clouds/__init__.py): a GKE cluster and a GCS model store per region entry."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from ipaddress import IPv4Network

import pulumi
import pulumi_gcp as gcp

from components.addons.gateway_dns import NAME as EXTERNAL_DNS
from components.addons.gateway_dns import NAMESPACE as EXTERNAL_DNS_NAMESPACE
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec, gpu_nic_cidr
from components.domain.deployers import private_link_cidrs
from components.gcp.existing_cluster import ExistingGkeCluster, ExistingGkeClusterArgs
from components.gcp.gke import GkeCluster, GkeClusterArgs
from components.gcp.gpu_node_pool import GkeGpuNodePool, GkeGpuNodePoolArgs
from components.gcp.network import GcpLocation, GcpNetwork, GcpNetworkArgs
from components.k8s.cluster import ClusterHandle, GkeIdentity, PublicLoadBalancer
from components.k8s.inputs import InputError
from components.k8s.workload_identity import ServiceAccountRef
from stacks.clouds import GatewayDnsPublisher, GcsBucketRef, ModelStore, platform_tags, private_zone_network, required


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

    store = GcsModelStore(
        region.name,
        GcsModelStoreArgs(
            bucket_name=bucket,
            location=location(region),
            cluster_name=cluster.name,
            spec=env.model_store,
            production=env.production,
            identity=cluster.gke_identity(),
            readers=dict(readers),
        ),
        opts=pulumi.ResourceOptions(parent=parent, providers=cluster.cloud_providers),
    )
    return ModelStore(
        component=store,
        identities={label: account.email for label, account in store.reader_accounts.items()},
        ref=GcsBucketRef(bucket=store.bucket.name),
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


def location(region: RegionSpec) -> GcpLocation:
    """The region entry's project and region (check_region requires the project on GCP)."""
    return GcpLocation(project=region.project or "", region=region.region)


def _cidr(argument: str, cidr: IPv4Network | None) -> IPv4Network:
    """A range GKE needs that the config leaves optional for AWS (check_region requires it on GCP)."""
    if cidr is None:
        raise InputError(argument, "GKE needs this range (regions[].network)")
    return cidr


def _network(region: RegionSpec, cluster_name: str, opts: pulumi.ResourceOptions) -> GcpNetwork:
    network = region.network
    args = GcpNetworkArgs(
        location=location(region),
        cluster_name=cluster_name,
        node_cidr=network.cidr,
        pods_cidr=_cidr("pods_cidr", network.pods_cidr),
        services_cidr=_cidr("services_cidr", network.services_cidr),
    )
    return GcpNetwork(region.name, args, opts=opts)


def cluster(
    parent: pulumi.Resource,
    env: EnvironmentSpec,
    region: RegionSpec,
    cluster_name: str,
    stack: str,
    *,
    public_sources: pulumi.Input[Sequence[str]] | None = None,
) -> ClusterHandle:
    provider_ = provider(env, region, stack, parent)
    opts = pulumi.ResourceOptions(parent=parent, providers={"gcp": provider_})
    existing_spec = region.cluster.existing
    handle: ClusterHandle
    if existing_spec is not None:
        existing = ExistingGkeCluster(
            region.name,
            ExistingGkeClusterArgs(location=location(region), cluster_name=existing_spec.name),
            opts=opts,
        )
        handle = ClusterHandle.of(
            existing,
            name=existing_spec.name,
            region=region,
            egress_ips=pulumi.Output.from_input([str(ip) for ip in existing_spec.egress_ips]),
        )
        workload_pool = existing.workload_pool
        node_cluster, node_account = existing_spec.name, existing_spec.node_service_account or ""
    else:
        network = _network(region, cluster_name, opts)
        gke = GkeCluster(
            region.name,
            GkeClusterArgs(
                location=location(region),
                zones=region.zones,
                kubernetes_version=region.kubernetes_version,
                cluster_name=cluster_name,
                network=network,
                node_cidr=region.network.cidr,
                control_plane_cidr=_cidr("control_plane_cidr", region.network.control_plane_cidr),
                public_cidrs=region.api_access.public_cidrs,
                public_sources=public_sources,
                private_link_cidrs=private_link_cidrs(region),
                multi_networking=any(p.gpu_direct for p in region.gpu_pools),
                system_pool=region.system_pool,
                label_domain=env.label_domain,
                production=env.production,
            ),
            opts=opts,
        )
        handle = ClusterHandle.of(
            gke, name=cluster_name, region=region, egress_ips=network.egress_ips, network_id=network.network.id
        )
        workload_pool = gke.workload_pool
        node_cluster, node_account = gke.cluster.name, gke.node_service_account.email
    for pool in region.gpu_pools:
        GkeGpuNodePool(
            f"{region.name}-{pool.name}",
            GkeGpuNodePoolArgs(
                location=location(region),
                zones=region.pool_zones(pool),
                gpu_nic_cidr=gpu_nic_cidr(region.network) if pool.gpu_direct else None,
                pool=pool,
                cluster_name=cluster_name,
                label_domain=env.label_domain,
                cluster=node_cluster,
                node_service_account=node_account,
            ),
            opts=opts,
        )
    return replace(handle, cloud_provider=provider_, identity=GkeIdentity(workload_pool=workload_pool))


def public_load_balancer(parent: pulumi.Resource, name: str, cluster: ClusterHandle) -> PublicLoadBalancer:
    """A passthrough load balancer (GKE's default for a LoadBalancer Service) on an external address reserved in the
    cluster's region: it has no name of its own, so its clients and its server's certificate (an IP SAN) need an
    address that outlives the Service."""
    region = cluster.region
    address = gcp.compute.Address(
        name,
        name=name,
        project=region.project,
        region=region.region,
        address_type="EXTERNAL",
        opts=pulumi.ResourceOptions(parent=parent, provider=cluster.cloud_provider),
    )
    return PublicLoadBalancer(annotations={}, address=address.address)


def gateway_dns(
    parent: pulumi.Resource,
    env: EnvironmentSpec,
    region: RegionSpec,
    cluster: ClusterHandle,
    *,
    name: str,
    hostname: str,
    internal: bool,
) -> GatewayDnsPublisher:
    """ExternalDNS on Cloud DNS: a private managed zone of the network, or the public zone the config names; a
    Google service account (Workload Identity) that may change records in that zone only."""
    from components.gcp.gateway_dns import external_dns_account
    from components.gcp.gateway_dns import private_zone as cloud_dns_private_zone

    project = location(region).project
    opts = pulumi.ResourceOptions(parent=parent, providers=cluster.cloud_providers)
    component = pulumi.ComponentResource("inference-platform:gcp:GatewayDns", region.name, None, opts)
    component.register_outputs({})
    zone: pulumi.Input[str]
    if internal:
        zone = cloud_dns_private_zone(
            f"{cluster.name}-gateway",
            domain=hostname,
            network_id=private_zone_network(env, region, cluster),
            project=project,
            parent=component,
        ).name
    else:
        zone = required(env.gateway.dns.cloud_dns_zone, "gateway.dns.cloudDnsZone", "name the public managed zone")
    account = external_dns_account(
        name,
        project=project,
        workload_pool=cluster.gke_identity().workload_pool,
        zone=zone,
        namespace=EXTERNAL_DNS_NAMESPACE,
        service_account=EXTERNAL_DNS,
        parent=component,
    )
    # The Google provider keeps a zone only when the domain filter matches the zone's own name (no parent
    # matching): the zone is chosen by name alone, and every name of the gateway's routes is published.
    return GatewayDnsPublisher(
        identity=account.email,
        flags=(
            "--provider=google",
            f"--google-project={project}",
            f"--google-zone-visibility={'private' if internal else 'public'}",
            pulumi.Output.concat("--zone-id-filter=", zone),
        ),
        domain_filter=None,
        env={},
    )
