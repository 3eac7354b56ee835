"""Where a stack's `pulumi up` and its wave's gates run, and what they can reach from there.

A region stack runs where its deployer is (components/config/deployer.py); the global stack where
`stacks.globalDeployer` is, by default the federation host's deployer. From there:
- a cluster's API server: a runner inside that region's network, behind a private link into it, or at CIDRs
  within the public endpoint's `publicCidrs`;
- a gateway: a public one from anywhere its `allowedCidrs` admit, an internal one only from inside its region's
  network or over a private link into it;
- the Karmada API: from wherever its load balancer's allowlist admits (its NAT egress, for a runner inside).
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Network
from typing import TYPE_CHECKING

from components.config.deployer import DeployerSpec
from components.config.stacks import StackSlice
from components.domain.deployers import deployer_of
from components.domain.stack_split import global_deployer

if TYPE_CHECKING:
    from components.config.environment import EnvironmentSpec


@dataclass(frozen=True)
class Location:
    """Where a stack is deployed from: `region` is the network a runner inside (or a private link) is in."""

    deployer: DeployerSpec
    region: str | None

    def describe(self) -> str:
        match self.deployer.kind:
            case "vpcRunner":
                return f"a runner inside {self.region}'s network"
            case "privateLink":
                return f"{', '.join(map(str, self.deployer.cidrs))} over a private link into {self.region}"
            case "cidrs":
                return f"{', '.join(map(str, self.deployer.cidrs))} (outside the networks)"


def location_of(env: EnvironmentSpec, stack: StackSlice) -> Location | None:
    """The stack's deployer: its region's, or for the global stack the declared or the federation host's one (None
    when nothing federates: the global stack calls cloud APIs only)."""
    if stack.kind == "global":
        deployer = global_deployer(env)
        if deployer is None:
            return None
        host = env.federation.host if env.federation.enabled else None
        return Location(deployer, host if env.stacks.global_deployer is None else _declared_region(env, deployer))
    region = stack.region or env.regions[0].name
    return Location(deployer_of(env.region(region)), region)


def _declared_region(env: EnvironmentSpec, deployer: DeployerSpec) -> str | None:
    """A declared global deployer over a private link is checked against the federation host (check_deployers)."""
    return env.federation.host if deployer.kind == "privateLink" else None


def reaches_api(env: EnvironmentSpec, where: Location, region: str) -> bool:
    """Can a client at `where` open a connection to `region`'s Kubernetes API server?"""
    spec = env.region(region)
    inside = where.region == region and where.deployer.kind in ("vpcRunner", "privateLink")
    if inside:
        return True
    public = [IPv4Network(c) for c in spec.api_access.public_cidrs]
    return bool(public) and _within(where.deployer.cidrs, public)


def reaches_gateway(env: EnvironmentSpec, where: Location, region: str, egress: list[str]) -> bool:
    """Can a client at `where` call `region`'s gateway? `egress`: `where`'s source addresses when it is a runner
    inside a network (its NAT), for a public gateway that admits only some CIDRs."""
    gateway = env.region(region).gateway
    if gateway.exposure == "internal":
        return where.region == region and where.deployer.kind in ("vpcRunner", "privateLink")
    if not gateway.allowed_cidrs:
        return True
    sources = [IPv4Network(f"{ip}/32") for ip in egress] if where.deployer.kind == "vpcRunner" else []
    sources += [IPv4Network(c) for c in where.deployer.cidrs]
    return bool(sources) and _within(sources, [IPv4Network(c) for c in gateway.allowed_cidrs])


def _within(cidrs: list[IPv4Network], allowed: list[IPv4Network]) -> bool:
    return bool(cidrs) and all(any(c.subnet_of(a) for a in allowed) for c in cidrs)
