"""A region's gateway as clients reach it: its certificate (`gateway.tls`) and its name in DNS (`gateway.dns`).

Both come with the region's own stack, so the wave's gateway gate can pass on an empty account
(components/config/gateway_tls.py says what each setting does).
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi

from components.addons.gateway_dns import ExternalDns, ExternalDnsArgs
from components.addons.gateway_tls import GatewayCertificate, GatewayCertificateArgs
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.domain.gateways import gateway_hostname
from components.k8s.cluster import ClusterHandle
from components.k8s.workload_identity import identity_annotations
from stacks.clouds import backend_for


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
    publisher = backend_for(region.cloud).gateway_dns(
        parent, env, region, cluster, name=name, hostname=hostname, internal=internal
    )
    return ExternalDns(
        region.name,
        ExternalDnsArgs(
            cluster=cluster,
            hostname=hostname,
            label_domain=env.label_domain,
            domain_filter=publisher.domain_filter,
            cloud_flags=publisher.flags,
            identity=identity_annotations(region.cloud, publisher.identity),
            env=publisher.env,
            gateway=gateway,
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )
