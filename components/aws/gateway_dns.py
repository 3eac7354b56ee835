"""Route 53 for a gateway's name: ExternalDNS's IAM role (IRSA, one zone only), and an internal gateway's private zone."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

from components.aws.irsa import IrsaRoleArgs, irsa_role
from components.k8s.cluster import IrsaIdentity


def external_dns_role(
    name: str,
    *,
    identity: IrsaIdentity,
    zone_id: pulumi.Input[str],
    namespace: str,
    service_account: str,
    parent: pulumi.Resource,
) -> aws.iam.Role:
    """What ExternalDNS's AWS provider calls (kubernetes-sigs/external-dns@v0.15.1:docs/tutorials/aws.md L15-40),
    narrowed to the one hosted zone it writes; only listing zones is account-wide in Route 53."""
    policy = pulumi.Output.from_input(zone_id).apply(
        lambda zone: json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Action": [
                            "route53:ChangeResourceRecordSets",
                            "route53:ListResourceRecordSets",
                            "route53:ListTagsForResource",
                        ],
                        "Resource": [f"arn:aws:route53:::hostedzone/{zone}"],
                    },
                    {"Effect": "Allow", "Action": ["route53:ListHostedZones"], "Resource": ["*"]},
                ],
            },
            separators=(",", ":"),
        )
    )
    return irsa_role(
        name,
        IrsaRoleArgs(
            oidc_provider_arn=identity.oidc_provider_arn,
            oidc_issuer_url=identity.oidc_issuer,
            namespace=namespace,
            service_account=service_account,
            inline_policy=policy,
        ),
        parent=parent,
    )


def private_zone(name: str, *, domain: str, vpc_id: pulumi.Input[str], parent: pulumi.Resource) -> aws.route53.Zone:
    """A private hosted zone for `domain`, answered only inside the region's VPC: where an internal gateway's name
    resolves. ExternalDNS's records are deleted with it (force_destroy)."""
    return aws.route53.Zone(
        name,
        name=domain,
        comment=f"internal gateway names of {domain} for this region's network",
        vpcs=[{"vpc_id": vpc_id}],
        force_destroy=True,
        opts=pulumi.ResourceOptions(parent=parent),
    )
