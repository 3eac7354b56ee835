"""Cloud DNS for a gateway's name: ExternalDNS's Google service account (Workload Identity, one zone to write), and an
internal gateway's private zone."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp


def external_dns_account(
    name: str,
    *,
    project: str,
    workload_pool: str,
    zone: pulumi.Input[str],
    namespace: str,
    service_account: str,
    parent: pulumi.Resource,
) -> gcp.serviceaccount.Account:
    """ExternalDNS's Google provider lists the project's managed zones (kubernetes-sigs/external-dns@v0.15.1:
    provider/google/google.go L175-196: roles/dns.reader on the project) and writes records of the one zone it serves
    (roles/dns.admin on that zone only); its pods act as it through Workload Identity."""
    opts = pulumi.ResourceOptions(parent=parent)
    account = gcp.serviceaccount.Account(
        name, account_id=name[:30], display_name="ExternalDNS of the gateway", project=project, opts=opts
    )
    member = account.email.apply(lambda email: f"serviceAccount:{email}")
    gcp.serviceaccount.IAMMember(
        f"{name}-workload-identity",
        service_account_id=account.name,
        role="roles/iam.workloadIdentityUser",
        member=f"serviceAccount:{workload_pool}[{namespace}/{service_account}]",
        opts=opts,
    )
    gcp.projects.IAMMember(f"{name}-zones", project=project, role="roles/dns.reader", member=member, opts=opts)
    gcp.dns.DnsManagedZoneIamMember(
        f"{name}-records", project=project, managed_zone=zone, role="roles/dns.admin", member=member, opts=opts
    )
    return account


def private_zone(
    name: str, *, domain: str, network_id: pulumi.Input[str], project: str, parent: pulumi.Resource
) -> gcp.dns.ManagedZone:
    """A private managed zone for `domain`, visible to the region's network only: where an internal gateway's name
    resolves."""
    return gcp.dns.ManagedZone(
        name,
        name=name,
        project=project,
        dns_name=f"{domain}.",
        description="internal gateway names for this region's network",
        visibility="private",
        private_visibility_config={"networks": [{"network_url": network_id}]},
        force_destroy=True,
        opts=pulumi.ResourceOptions(parent=parent),
    )
