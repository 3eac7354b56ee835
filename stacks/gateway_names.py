"""A region's gateway as clients reach it: its certificate (`gateway.tls`) and its name in DNS (`gateway.dns`).

Both come with the region's own stack, so the wave's gateway gate can pass on an empty account
(components/config/gateway_tls.py says what each setting does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

import pulumi

from components.addons.gateway_dns import NAME as EXTERNAL_DNS
from components.addons.gateway_dns import NAMESPACE as EXTERNAL_DNS_NAMESPACE
from components.addons.gateway_dns import ExternalDns, ExternalDnsArgs
from components.addons.gateway_tls import GatewayCertificate, GatewayCertificateArgs
from components.config.base import ConfigError, Issue, join_path
from components.config.environment import EnvironmentSpec
from components.config.gateway import gateway_hostname
from components.config.region import RegionSpec
from components.k8s.cluster import ClusterHandle
from components.k8s.workload_identity import identity_annotations


def gateway_certificate(
    parent: pulumi.Resource,
    env: EnvironmentSpec,
    region: RegionSpec,
    cluster: ClusterHandle,
    *,
    ca: tuple[pulumi.Input[str], pulumi.Input[str]] | None,
    cert_manager: Sequence[pulumi.Resource],
    gateway: pulumi.Resource,
) -> GatewayCertificate | None:
    """The gateway's certificate from the environment's CA (privateCa); none when you provide the Secret."""
    if env.gateway.tls.issuer != "privateCa":
        return None
    if ca is None:
        raise RuntimeError(f"{region.name}: a privateCa gateway certificate needs the anchor stack's intermediate CA")
    return GatewayCertificate(
        region.name,
        GatewayCertificateArgs(
            cluster=cluster,
            hostname=gateway_hostname(env, region),
            secret_name=region.gateway.tls_secret,
            ca_cert_pem=ca[0],
            ca_key_pem=ca[1],
            cert_manager=cert_manager,
            gateway=gateway,
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )


def _given(value: str | None, key: str, message: str) -> str:
    """A key the config checks require for this gateway (check_gateway_names)."""
    if value is None:
        raise ConfigError([Issue(key, message)])
    return value


def _vpc(env: EnvironmentSpec, region: RegionSpec, cluster: ClusterHandle) -> pulumi.Input[str]:
    """The network an internal gateway's private zone answers in: the cluster's, which an existing GKE cluster's
    handle does not carry (config/gateway_tls.py refuses an internal gateway there)."""
    if cluster.network_id is None:
        at = join_path("regions", env.regions.index(region), "gateway", "exposure")
        raise ConfigError([Issue(at, "no network to bind a private zone to: exposure: public, or publish it yourself")])
    return cluster.network_id


def gateway_dns(
    parent: pulumi.Resource,
    env: EnvironmentSpec,
    region: RegionSpec,
    cluster: ClusterHandle,
    *,
    gateway: pulumi.Resource,
) -> ExternalDns | None:
    """ExternalDNS publishing the gateway's name: into the domain's public zone, or a private zone of the region's
    network for an internal gateway; none when you publish it."""
    if env.gateway.dns.publisher != "externalDns":
        return None
    hostname = gateway_hostname(env, region)
    # An internal gateway's private zone is for its own name only: a zone for the whole domain would answer, inside
    # this network, for the other regions' public names too (and have none of them).
    internal = region.gateway.exposure == "internal"
    name = f"{cluster.name}-external-dns"
    opts = pulumi.ResourceOptions(parent=parent, providers=cluster.cloud_providers)
    flags: tuple[pulumi.Input[str], ...]
    zone: pulumi.Input[str] | None
    match region.cloud:
        case "aws":
            from components.aws.gateway_dns import external_dns_role
            from components.aws.gateway_dns import private_zone as route53_private_zone

            component = pulumi.ComponentResource("inference-platform:aws:GatewayDns", region.name, None, opts)
            component.register_outputs({})
            zone = (
                route53_private_zone(
                    f"{name}-zone", domain=hostname, vpc_id=_vpc(env, region, cluster), parent=component
                ).zone_id
                if internal
                else _given(env.gateway.dns.route53_zone_id, "gateway.dns.route53ZoneId", "name the public hosted zone")
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
            identity, flags = role.arn, ("--provider=aws", f"--aws-zone-type={'private' if internal else 'public'}")
            flags += ("--aws-zone-match-parent", pulumi.Output.concat("--zone-id-filter=", zone))
            domain_filter: str | None = hostname
            env_vars = {"AWS_DEFAULT_REGION": region.region}
        case "gcp":
            from components.gcp.gateway_dns import external_dns_account
            from components.gcp.gateway_dns import private_zone as cloud_dns_private_zone
            from stacks.clouds.gcp import location

            project = location(region).project
            component = pulumi.ComponentResource("inference-platform:gcp:GatewayDns", region.name, None, opts)
            component.register_outputs({})
            if internal:
                zone = cloud_dns_private_zone(
                    f"{cluster.name}-gateway",
                    domain=hostname,
                    network_id=_vpc(env, region, cluster),
                    project=project,
                    parent=component,
                ).name
            else:
                zone = _given(
                    env.gateway.dns.cloud_dns_zone, "gateway.dns.cloudDnsZone", "name the public managed zone"
                )
            account = external_dns_account(
                name,
                project=project,
                workload_pool=cluster.gke_identity().workload_pool,
                zone=zone,
                namespace=EXTERNAL_DNS_NAMESPACE,
                service_account=EXTERNAL_DNS,
                parent=component,
            )
            identity = account.email
            # The Google provider keeps a zone only when the domain filter matches the zone's own name (no parent
            # matching): the zone is chosen by name alone, and every name of the gateway's routes is published.
            flags = (
                "--provider=google",
                f"--google-project={project}",
                f"--google-zone-visibility={'private' if internal else 'public'}",
                pulumi.Output.concat("--zone-id-filter=", zone),
            )
            domain_filter = None
            env_vars = {}
        case other:
            assert_never(other)
    return ExternalDns(
        region.name,
        ExternalDnsArgs(
            cluster=cluster,
            hostname=hostname,
            label_domain=env.label_domain,
            domain_filter=domain_filter,
            cloud_flags=flags,
            identity=identity_annotations(region, identity),
            env=env_vars,
            gateway=gateway,
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )
