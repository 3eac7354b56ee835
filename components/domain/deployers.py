"""Where each region's stack is deployed from, and what its cluster's private endpoint admits for it (the reasons
are in components/config/deployer.py)."""

from __future__ import annotations

from ipaddress import IPv4Network

from components.config.deployer import DeployerSpec
from components.config.region import RegionSpec


def deployer_of(region: RegionSpec) -> DeployerSpec:
    """The declared deployer, or the one the endpoint allows: its public sources, else a runner inside."""
    if region.deployer is not None:
        return region.deployer
    if region.api_access.public_cidrs:
        return DeployerSpec(kind="cidrs", cidrs=list(region.api_access.public_cidrs))
    return DeployerSpec(kind="vpcRunner")


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
