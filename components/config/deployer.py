"""Where each stack is deployed from, and whether its Kubernetes provider can reach the API from there.

A stack's `pulumi up` talks to its cluster's API server. EKS and GKE endpoints here are private unless
`apiAccess.publicCidrs` opens a public one to those sources (EKS `publicAccessCidrs`, GKE master authorized
networks; a GKE private endpoint admits only the node subnet and declared private links). So a stack is
deployable only from:
- `vpcRunner`: a runner inside the region's network (for GKE, in the node subnet);
- `cidrs`: a runner outside it whose egress is within `apiAccess.publicCidrs`;
- `privateLink`: a runner whose traffic arrives over a private path you run (VPN, peering, Interconnect /
  Direct Connect) from `cidrs`; the cluster admits those sources on its private endpoint.

The cluster admits its deployer on 443 (`admitted_cidrs`): an EKS private endpoint answers only its own
security group (EKS_PRIVATE_ENDPOINT_ADMITS_ITS_SECURITY_GROUP), so the VPC's range (a runner inside) or the
private link's sources get a rule; a GKE private endpoint answers its master authorized networks, where the node
subnet and the private link's sources are listed. On an empty account the runner's network does not exist yet:
the region's first step is its network alone (`make rollout ... BOOTSTRAP=1`, cloud APIs only, from anywhere),
then the runner is started in it. Who else may use an EKS cluster (the CI preview role, operators) is
`stacks.access`: the creator alone has an access entry otherwise (EKS_ACCESS_ENTRIES).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from ipaddress import IPv4Network
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from components.config.base import Issue, KeyPath, Spec, join_path
from platform_catalog.address_space import covers_internet

if TYPE_CHECKING:
    from components.config.environment import EnvironmentSpec
    from components.config.region import RegionSpec

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


def deployer_of(region: RegionSpec) -> DeployerSpec:
    """The declared deployer, or the one the endpoint allows: its public sources, else a runner inside."""
    if region.deployer is not None:
        return region.deployer
    if region.api_access.public_cidrs:
        return DeployerSpec(kind="cidrs", cidrs=list(region.api_access.public_cidrs))
    return DeployerSpec(kind="vpcRunner")


def global_deployer(env: EnvironmentSpec) -> DeployerSpec | None:
    """The global stack's deployer: declared, or the federation host's (it patches the host's Karmada service)."""
    if env.stacks.global_deployer is not None:
        return env.stacks.global_deployer
    if env.federation.enabled and env.federation.host:
        return deployer_of(env.region(env.federation.host))
    return None


def private_link_cidrs(region: RegionSpec) -> list[IPv4Network]:
    """Sources the cluster must admit on its private endpoint (a declared private link)."""
    deployer = region.deployer
    return list(deployer.cidrs) if deployer is not None and deployer.kind == "privateLink" else []


def admitted_cidrs(region: RegionSpec) -> list[IPv4Network]:
    """Where the region's deployer reaches the private endpoint from: the VPC's range for a runner inside it, the
    private link's sources; none for `cidrs` (the public endpoint's `publicCidrs` admit it)."""
    deployer = deployer_of(region)
    match deployer.kind:
        case "vpcRunner":
            return [region.network.cidr]
        case "privateLink":
            return list(deployer.cidrs)
        case "cidrs":
            return []


def check_deployers(env: EnvironmentSpec) -> Iterator[Issue]:
    from components.config.stacks import layout_of

    for i, region in enumerate(env.regions):
        if region.deployer is not None:
            yield from _check_shape(region.deployer, ("regions", i, "deployer"))
            yield from _check_reach(region, region.deployer, ("regions", i, "deployer"), ("regions", i))
    if env.stacks.global_deployer is not None:
        path = ("stacks", "globalDeployer")
        yield from _check_shape(env.stacks.global_deployer, path)
        if env.federation.enabled and env.federation.host:
            # It applies the Karmada service's allowlist on the host cluster.
            host = next(i for i, r in enumerate(env.regions) if r.name == env.federation.host)
            yield from _check_reach(env.regions[host], env.stacks.global_deployer, path, ("regions", host))
    if layout_of(env) == "single" and len(env.regions) > 1:
        inside = [r.name for r in env.regions if deployer_of(r).kind == "vpcRunner"]
        if inside:
            yield Issue(
                "stacks.layout",
                f"the environment is one stack, but {', '.join(inside)} can be reached only from a runner inside "
                "its own network: no single `pulumi up` reaches every cluster; use `stacks.layout: perRegion` (one "
                "stack per region, each deployed from where it is reachable) or declare `deployer.kind: cidrs` / "
                "`privateLink` for those regions",
            )


def _check_shape(deployer: DeployerSpec, path: KeyPath) -> Iterator[Issue]:
    if deployer.kind == "vpcRunner" and deployer.cidrs:
        yield Issue(
            join_path(*path, "cidrs"),
            "a vpcRunner is inside the network and needs no source CIDRs; remove `cidrs`, or use kind cidrs / "
            "privateLink for a runner outside it",
        )
    if deployer.kind != "vpcRunner" and not deployer.cidrs:
        yield Issue(
            join_path(*path, "cidrs"),
            f"kind {deployer.kind} needs the runner's source addresses, e.g. cidrs: [203.0.113.0/24]",
        )
    if covers_internet([str(c) for c in deployer.cidrs]):
        yield Issue(
            join_path(*path, "cidrs"),
            "together these CIDRs cover the internet: name the runner's own egress ranges",
        )


def _check_reach(region: RegionSpec, deployer: DeployerSpec, path: KeyPath, region_path: KeyPath) -> Iterator[Issue]:
    if deployer.kind != "cidrs":
        return  # inside the network, or over a private link the cluster is made to admit
    public = list(region.api_access.public_cidrs)
    if not public:
        yield Issue(
            join_path(*path),
            f"the API endpoint of {region.name} is private (apiAccess.publicCidrs is empty), so a runner at "
            f"{', '.join(map(str, deployer.cidrs))} cannot reach it; deploy from inside its network "
            "(deployer.kind: vpcRunner), declare your private path (deployer.kind: privateLink), or allow the "
            f"runner on a public endpoint ({join_path(*region_path, 'apiAccess', 'publicCidrs')})",
        )
        return
    for j, cidr in enumerate(deployer.cidrs):
        if not any(cidr.subnet_of(allowed) for allowed in public):
            yield Issue(
                join_path(*path, "cidrs", j),
                f"{cidr} is not within {region.name}'s apiAccess.publicCidrs ({', '.join(map(str, public))}): "
                "the API server would refuse the runner; add it to apiAccess.publicCidrs or deploy from a runner "
                "inside the network (deployer.kind: vpcRunner)",
            )
