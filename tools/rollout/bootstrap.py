"""A region's first step on an empty account: its network alone, so the runner its stack deploys from can start in it.

A stack deployed by a runner inside its region's network (`deployer.kind: vpcRunner`, the default for a private
API) also creates that network: before its first `up` there is nowhere for the runner to be. So the first step of
such a stack is an `up` of its network alone, from any host with the region's cloud credentials (`make rollout
ENV=<env> WAVE=<wave> BOOTSTRAP=1`); then the runner is started in the network (its private subnets reach the
internet through the NAT just created), and the wave runs from it.

A targeted `up` of the whole program cannot do it: the engine targets every provider implicitly, and a provider whose
parent or inputs come from an untargeted resource (the cluster's Kubernetes provider, a component's own provider)
fails the update with "untargeted create" (PULUMI_TARGETED_CREATE, components/catalog/bringup.py). So the step runs
the program in its network mode (INFERENCE_PLATFORM_BOOTSTRAP=network: the region's provider and network, with the
URNs the full program gives them) and targets everything it registers, so an `up` of a stack deployed before deletes
nothing. The offline plan evaluates that mode; the bring-up check proves every registered resource's parent,
dependencies and provider are among the targets.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.config.environment import EnvironmentSpec
from components.config.stacks import StackSlice
from components.domain.deployers import deployer_of
from tools.plan.model import Plan

NETWORK_TYPES = ("inference-platform:aws:Network", "inference-platform:gcp:Network")
STACK_TYPE = "pulumi:pulumi:Stack"
PROVIDER_PREFIX = "pulumi:providers:"


@dataclass(frozen=True)
class NetworkBootstrap:
    """The targeted update of a stack's network-first program, before its runner exists."""

    stack: str
    network: str  # the network component's URN
    targets: tuple[str, ...]  # URNs: everything the network-first program registers
    # What a target needs that the targets do not include: (its URN, how: parent/provider/..., that URN); none.
    outside: tuple[tuple[str, str, str], ...]
    # Targets the full program registers otherwise (another URN or other inputs); must be empty.
    differs: tuple[str, ...] = ()

    @property
    def resources(self) -> int:
        return sum(1 for urn in self.targets if f"::{PROVIDER_PREFIX}" not in urn and urn != self.network)


def needs_network_bootstrap(env: EnvironmentSpec, stack: StackSlice) -> bool:
    """A region stack whose runner lives in the network the stack itself creates."""
    if stack.kind != "region" or stack.region is None:
        return False
    region = env.region(stack.region)
    return region.cluster.existing is None and deployer_of(region).kind == "vpcRunner"


def network_bootstrap(
    stack: str, program: Plan, full: Plan, targets: tuple[str, ...] | None = None
) -> NetworkBootstrap | None:
    """The targeted update of `stack`'s network-first program (`program`: its offline plan), judged by the engine's
    rule for targeted creates and against the full program's plan (`full`); `targets` default to everything the
    program registers. None when the program registers no network."""
    networks = [r for r in program.resources if r.type in NETWORK_TYPES]
    if not networks:
        return None
    (network,) = networks  # one region per stack
    registered = [r for r in program.resources if r.type != STACK_TYPE]
    if targets is None:
        targets = tuple(r.urn for r in registered)
    # Providers are targeted implicitly; every other registered resource outside the targets is a skipped create.
    stepped = [r for r in registered if r.urn in targets or r.type.startswith(PROVIDER_PREFIX)]
    created = {r.urn for r in stepped}
    outside = []
    for resource in stepped:
        needed = [("parent", resource.parent), ("provider", resource.provider)]
        needed += [("dependsOn", u) for u in resource.options.get("dependsOn", ())]
        needed += [(f"input {key}", u) for key, us in resource.property_dependencies.items() for u in us]
        outside += [(resource.urn, how, urn) for how, urn in needed if urn and urn not in created and not _root(urn)]
    differs = [
        urn for urn in targets if urn not in full.by_urn or full.by_urn[urn].inputs != program.by_urn[urn].inputs
    ]
    return NetworkBootstrap(stack, network.urn, targets, tuple(dict.fromkeys(outside)), tuple(differs))


def _root(urn: str) -> bool:
    return f"::{STACK_TYPE}::" in urn
