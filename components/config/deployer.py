"""Where each stack is deployed from, and whether its Kubernetes provider can reach the API from there.

A stack's `pulumi up` talks to its cluster's API server. EKS and GKE endpoints here are private unless
`apiAccess.publicCidrs` opens a public one to those sources (EKS `publicAccessCidrs`, GKE master authorized
networks; a GKE private endpoint admits only the node subnet and declared private links). So a stack is
deployable only from:
- `vpcRunner`: a runner inside the region's network (for GKE, in the node subnet);
- `cidrs`: a runner outside it whose egress is within `apiAccess.publicCidrs`;
- `privateLink`: a runner whose traffic arrives over a private path you run (VPN, peering, Interconnect /
  Direct Connect) from `cidrs`; the cluster admits those sources on its private endpoint.

The cluster admits its deployer on 443 (components/domain/deployers.py `admitted_cidrs`): an EKS private endpoint
answers only its own security group (EKS_PRIVATE_ENDPOINT_ADMITS_ITS_SECURITY_GROUP), so the VPC's range (a runner
inside) or the private link's sources get a rule; a GKE private endpoint answers its master authorized networks,
where the node subnet and the private link's sources are listed. On an empty account the runner's network does not
exist yet: the region's first step is its network alone (`make rollout ... BOOTSTRAP=1`, cloud APIs only, from
anywhere), then the runner is started in it. Who else may use an EKS cluster (the CI preview role, operators) is
`stacks.access`: the creator alone has an access entry otherwise (EKS_ACCESS_ENTRIES).
"""

from __future__ import annotations

import re
from ipaddress import IPv4Network
from typing import Literal

from pydantic import Field, field_validator

from components.config.base import Spec

DeployerKind = Literal["vpcRunner", "cidrs", "privateLink"]


class DeployerSpec(Spec):
    """Where `pulumi up` of a stack runs, as the network sees it."""

    kind: DeployerKind = Field(
        description="vpcRunner: inside the region's network; cidrs: outside it, from `cidrs`, over the public "
        "endpoint; privateLink: from `cidrs` over a private path you run (VPN, peering, Interconnect)."
    )
    cidrs: list[IPv4Network] = Field(
        default_factory=list, description="Source addresses of the runner (kinds cidrs and privateLink)."
    )
    runner_label: str | None = Field(
        None,
        description="CI runner label the stack's jobs run on (`runs-on`); default the self-hosted labels "
        "`[self-hosted, inference-platform, <env>-<region>]`.",
    )


class ClusterAccessSpec(Spec):
    """IAM principals besides the deployer that use the environment's EKS clusters (one access entry each)."""

    viewers: list[str] = Field(
        default_factory=list,
        description="IAM role or user ARNs that read every EKS cluster (AmazonEKSViewPolicy): the CI preview role.",
    )
    administrators: list[str] = Field(
        default_factory=list,
        description="IAM role or user ARNs that administer every EKS cluster (AmazonEKSClusterAdminPolicy), "
        "besides the deployer that created it: operators, a break-glass role.",
    )

    @field_validator("viewers", "administrators")
    @classmethod
    def _arns(cls, principals: list[str]) -> list[str]:
        for arn in principals:
            if not _IAM_PRINCIPAL.fullmatch(arn):
                raise ValueError(f"{arn!r} is not an IAM role or user ARN (arn:aws:iam::<account>:role/<name>)")
        return principals


_IAM_PRINCIPAL = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+")
