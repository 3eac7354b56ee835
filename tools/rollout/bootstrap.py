"""A region's first step on an empty account: its network alone, so the runner its stack deploys from can start in it.

A stack deployed by a runner inside its region's network (`deployer.kind: vpcRunner`, the default for a private
API) also creates that network: before its first `up` there is nowhere for the runner to be. So the first step of
such a stack is `pulumi up --target` of its network's resources (and the provider they use): cloud APIs only,
from any host with the region's cloud credentials (`make rollout ENV=<env> WAVE=<wave> BOOTSTRAP=1`). Then the
runner is started in the network (its private subnets reach the internet through the NAT just created), and the
wave runs from it. The targets are read from the offline plan; they must be closed under their dependencies, or a
targeted update could not create them alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.config.deployer import deployer_of
from components.config.environment import EnvironmentSpec
from components.config.stacks import StackSlice
from tools.plan.model import Plan

NETWORK_TYPES = ("inference-platform:aws:Network", "inference-platform:gcp:Network")


@dataclass(frozen=True)
class NetworkBootstrap:
    """The targeted update that creates a stack's network before its runner exists."""

    stack: str
    network: str  # the network component's URN
    targets: tuple[str, ...]  # URNs: the network's ancestors, itself, its resources and their providers
    outside: tuple[str, ...]  # what the targets depend on that they do not include (must be empty)

    @property
    def resources(self) -> int:
        return sum(1 for urn in self.targets if "::pulumi:providers:" not in urn and urn != self.network)


def needs_network_bootstrap(env: EnvironmentSpec, stack: StackSlice) -> bool:
    """A region stack whose runner lives in the network the stack itself creates."""
    if stack.kind != "region" or stack.region is None:
        return False
    region = env.region(stack.region)
    return region.cluster.existing is None and deployer_of(region).kind == "vpcRunner"


def network_bootstrap(stack: str, plan: Plan) -> NetworkBootstrap | None:
    """The targets of `stack`'s network bootstrap from its offline plan; None when it creates no network."""
    networks = [r for r in plan.resources if r.type in NETWORK_TYPES]
    if not networks:
        return None
    (network,) = networks  # one region per stack
    members = [network, *plan.descendants(network.urn)]
    providers = {r.provider for r in members if r.provider}
    ancestors = [a.urn for a in plan.ancestors(network)]
    targets = dict.fromkeys([*ancestors, *(r.urn for r in members), *sorted(providers)])
    outside = []
    for urn in targets:
        resource = plan.by_urn.get(urn)
        if resource is None:
            continue
        needed = {
            *resource.options.get("dependsOn", ()),
            *(u for us in resource.property_dependencies.values() for u in us),
        }
        if resource.provider:
            needed.add(resource.provider)
        outside += [u for u in sorted(needed) if u not in targets and u in plan.by_urn]
    return NetworkBootstrap(stack, network.urn, tuple(targets), tuple(dict.fromkeys(outside)))
