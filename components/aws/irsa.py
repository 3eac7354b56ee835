"""IAM roles for Kubernetes service accounts (IRSA)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components.aws.policy_docs import irsa_trust


@dataclass(frozen=True, kw_only=True)
class IrsaRoleArgs:
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    namespace: str
    service_account: str
    managed_policy_arns: tuple[str, ...] = ()
    inline_policy: pulumi.Input[str] | None = None
    tags: dict[str, str] = field(default_factory=dict)


def irsa_role(name: str, args: IrsaRoleArgs, parent: pulumi.Resource) -> aws.iam.Role:
    """A role only `system:serviceaccount:<ns>:<sa>` can assume, with the given permissions."""
    opts = pulumi.ResourceOptions(parent=parent)
    role = aws.iam.Role(
        name,
        assume_role_policy=irsa_trust(
            args.oidc_provider_arn, args.oidc_issuer_url, args.namespace, args.service_account
        ),
        tags=args.tags,
        opts=opts,
    )
    for i, arn in enumerate(args.managed_policy_arns):
        aws.iam.RolePolicyAttachment(f"{name}-{i}", role=role.name, policy_arn=arn, opts=opts)
    if args.inline_policy is not None:
        aws.iam.RolePolicy(f"{name}-inline", role=role.id, policy=args.inline_policy, opts=opts)
    return role
