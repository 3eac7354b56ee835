"""The AWS backend (stacks/clouds/__init__.py): an EKS cluster and an S3 model store per region entry."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import pulumi
import pulumi_aws as aws

from components.addons.gateway_dns import NAME as EXTERNAL_DNS
from components.addons.gateway_dns import NAMESPACE as EXTERNAL_DNS_NAMESPACE
from components.aws.cluster_autoscaler import (
    ClusterAutoscaler,
    ClusterAutoscalerArgs,
    max_graceful_termination_seconds,
    scale_down_unneeded_seconds,
)
from components.aws.eks import EksCluster, EksClusterArgs
from components.aws.existing_cluster import ExistingEksCluster, ExistingEksClusterArgs
from components.aws.gpu_node_group import EksGpuNodeGroup, EksGpuNodeGroupArgs, EksNodeTarget
from components.aws.network import AwsNetwork, AwsNetworkArgs, ZoneSubnets
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.domain.deployers import admitted_cidrs, deployer_of
from components.domain.model_bucket import S3BucketRef
from components.k8s.cluster import ClusterHandle, IrsaIdentity, PublicLoadBalancer
from components.k8s.workload_identity import ServiceAccountRef
from components.serving.deployment import model_placements
from stacks.clouds import GatewayDnsPublisher, ModelStore, platform_tags, private_zone_network, required


def provider(
    env: EnvironmentSpec, region: RegionSpec, env_name: str, parent: pulumi.Resource | None = None
) -> pulumi.ProviderResource:
    provider_: pulumi.ProviderResource = aws.Provider(
        f"{region.name}-aws",
        region=region.region,
        default_tags={"tags": platform_tags(env, region, env_name)},
        opts=pulumi.ResourceOptions(parent=parent),
    )
    return provider_


def network(
    parent: pulumi.Resource, env: EnvironmentSpec, region: RegionSpec, cluster_name: str, stack: str
) -> AwsNetwork:
    """The region's provider and network alone, named as `cluster` names them: a runner's network-first step."""
    return _network(
        region,
        cluster_name,
        pulumi.ResourceOptions(parent=parent, providers={"aws": provider(env, region, stack, parent)}),
    )


def _network(region: RegionSpec, cluster_name: str, opts: pulumi.ResourceOptions) -> AwsNetwork:
    private, public = region.subnet_plan()
    args = AwsNetworkArgs(
        cluster_name=cluster_name,
        cidr=region.network.cidr,
        subnets={
            zone: ZoneSubnets(private=p, public=q) for zone, p, q in zip(region.zones, private, public, strict=True)
        },
        nat=region.network.nat,
    )
    return AwsNetwork(region.name, args, opts=opts)


def model_store(
    parent: pulumi.Resource,
    env: EnvironmentSpec,
    region: RegionSpec,
    *,
    bucket: str,
    cluster: ClusterHandle,
    readers: Mapping[str, ServiceAccountRef],
) -> ModelStore:
    from components.aws.model_store import S3ModelStore, S3ModelStoreArgs

    store = S3ModelStore(
        region.name,
        S3ModelStoreArgs(
            bucket_name=bucket,
            aws_region=region.region,
            spec=env.model_store,
            production=env.production,
            identity=cluster.irsa(),
            readers=dict(readers),
        ),
        opts=pulumi.ResourceOptions(parent=parent, providers=cluster.cloud_providers),
    )
    return ModelStore(
        component=store,
        identities={label: role.arn for label, role in store.reader_roles.items()},
        ref=S3BucketRef(
            bucket_id=store.bucket.id, bucket_arn=store.bucket.arn, key_arn=store.key.arn, ready=(store.versioning,)
        ),
    )


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
    opts = pulumi.ResourceOptions(parent=parent, providers={"aws": provider_})
    existing_spec = region.cluster.existing
    handle: ClusterHandle
    if existing_spec is not None:
        existing = ExistingEksCluster(
            region.name,
            ExistingEksClusterArgs(
                aws_region=region.region,
                cluster_name=existing_spec.name,
                node_role_arn=existing_spec.node_role_arn or "",  # only GPU node groups need it (check_region)
                subnets=existing_spec.subnets,
            ),
            opts=opts,
        )
        target = existing.target
        identity = IrsaIdentity(oidc_provider_arn=existing.oidc_provider_arn, oidc_issuer=existing.oidc_issuer)
        handle = ClusterHandle.of(
            existing,
            name=existing_spec.name,
            region=region,
            egress_ips=pulumi.Output.from_input([str(ip) for ip in existing_spec.egress_ips]),
            network_id=target.vpc_id,  # its API's answer: where an internal gateway's private zone is answered
        )
    else:
        network = _network(region, cluster_name, opts)
        eks = EksCluster(
            region.name,
            EksClusterArgs(
                aws_region=region.region,
                kubernetes_version=region.kubernetes_version,
                cluster_name=cluster_name,
                network=network,
                services_cidr=region.network.services_cidr,
                public_cidrs=region.api_access.public_cidrs,
                public_sources=public_sources,
                deployer_cidrs=admitted_cidrs(region),
                deployer_private_link=deployer_of(region).kind == "privateLink",
                system_pool=region.system_pool,
                label_domain=env.label_domain,
                production=env.production,
                access=env.stacks.access,
            ),
            opts=opts,
        )
        target = EksNodeTarget.of(eks, network)
        identity = IrsaIdentity(oidc_provider_arn=eks.oidc_provider.arn, oidc_issuer=eks.oidc_issuer)
        handle = ClusterHandle.of(
            eks, name=cluster_name, region=region, egress_ips=network.egress_ips, network_id=network.vpc_id
        )
    placements = model_placements(env, region)
    node_groups = [
        EksGpuNodeGroup(
            f"{region.name}-{pool.name}",
            EksGpuNodeGroupArgs(
                zones=region.pool_zones(pool),
                kubernetes_version=region.kubernetes_version,
                pool=pool,
                cluster_name=cluster_name,
                label_domain=env.label_domain,
                target=target,
                scale_down_unneeded_seconds=scale_down_unneeded_seconds(
                    [p.startup_budget_seconds for p in placements if pool.name in p.pool_names]
                ),
            ),
            opts=opts,
        )
        for pool in region.gpu_pools
    ]
    handle = replace(handle, cloud_provider=provider_, identity=identity)
    if node_groups:
        ClusterAutoscaler(
            region.name,
            ClusterAutoscalerArgs(
                cluster=handle,
                aws_region=region.region,
                cluster_name=cluster_name,
                label_domain=env.label_domain,
                production=env.production,
                node_groups=[g.node_group for g in node_groups],
                tags=[tag for g in node_groups for tag in g.autoscaler_tags],
                max_graceful_termination_seconds=max_graceful_termination_seconds(
                    p.termination_grace_seconds for p in placements
                ),
            ),
            opts=opts,
        )
    return handle


def public_load_balancer(parent: pulumi.Resource, name: str, cluster: ClusterHandle) -> PublicLoadBalancer:
    """An NLB (the in-tree provider's, EKS running no AWS Load Balancer Controller here), cross-zone so every zone's
    address reaches every target; it names itself under *.elb.<region>.amazonaws.com, so nothing is reserved."""
    return PublicLoadBalancer(
        annotations={
            "service.beta.kubernetes.io/aws-load-balancer-type": "nlb",
            "service.beta.kubernetes.io/aws-load-balancer-cross-zone-load-balancing-enabled": "true",
        },
        dns_names=(f"*.elb.{cluster.region.region}.amazonaws.com",),
    )


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
    """ExternalDNS on Route 53: a private hosted zone of the VPC, or the public zone the config names; an IRSA role
    that may change records in that zone only."""
    from components.aws.gateway_dns import external_dns_role
    from components.aws.gateway_dns import private_zone as route53_private_zone

    opts = pulumi.ResourceOptions(parent=parent, providers=cluster.cloud_providers)
    component = pulumi.ComponentResource("inference-platform:aws:GatewayDns", region.name, None, opts)
    component.register_outputs({})
    zone = (
        route53_private_zone(
            f"{name}-zone", domain=hostname, vpc_id=private_zone_network(env, region, cluster), parent=component
        ).zone_id
        if internal
        else required(env.gateway.dns.route53_zone_id, "gateway.dns.route53ZoneId", "name the public hosted zone")
    )
    role = external_dns_role(
        name,
        identity=cluster.irsa(),
        zone_id=zone,
        namespace=EXTERNAL_DNS_NAMESPACE,
        service_account=EXTERNAL_DNS,
        parent=component,
    )
    # The zone may be the domain's or a parent's (make preflight accepts either): with the name as the filter
    # a zone is kept when it is the name or (--aws-zone-match-parent) a parent of it.
    return GatewayDnsPublisher(
        identity=role.arn,
        flags=(
            "--provider=aws",
            f"--aws-zone-type={'private' if internal else 'public'}",
            "--aws-zone-match-parent",
            pulumi.Output.concat("--zone-id-filter=", zone),
        ),
        domain_filter=hostname,
        env={"AWS_DEFAULT_REGION": region.region},
    )
