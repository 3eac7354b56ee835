"""Deployers that can reach what they deploy: the shape of each `deployer:`, and whether the stack's Kubernetes
provider reaches the cluster's API from there (components/config/deployer.py says why)."""

from __future__ import annotations

from collections.abc import Iterator

from components.config.base import Issue, KeyPath, join_path
from components.config.deployer import DeployerSpec
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.domain.deployers import deployer_of
from platform_catalog.address_space import covers_internet


def check_deployers(env: EnvironmentSpec) -> Iterator[Issue]:

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
    if env.stack_layout() == "single" and len(env.regions) > 1:
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
