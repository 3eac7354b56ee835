"""Which Pulumi stacks an environment deploys as, in order, what each reads, and where the global one runs from.

The layout, the anchor region and the stack names are the environment's (EnvironmentSpec.stack_layout,
.anchor_region; components/config/stacks.py): this derives the stacks from them.
"""

from __future__ import annotations

from components.config.base import ConfigError, Issue
from components.config.deployer import DeployerSpec
from components.config.environment import EnvironmentSpec
from components.config.stacks import GLOBAL, StackSlice, global_stack_name, region_stack_name
from components.domain.deployers import deployer_of


def environment_stacks(env: EnvironmentSpec, env_name: str) -> list[StackSlice]:
    """Every stack of the environment, each after the stacks it references."""
    if env.stack_layout() == "single":
        return [StackSlice(env_name, "environment")]
    anchor = env.anchor_region()
    anchor_stack = region_stack_name(env_name, anchor)
    ordered = sorted(env.regions, key=lambda r: r.name != anchor)  # stable: the anchor first, then config order
    regions = [
        StackSlice(
            region_stack_name(env_name, r.name),
            "region",
            region=r.name,
            references=() if r.name == anchor else (anchor_stack,),
        )
        for r in ordered
    ]
    return [*regions, StackSlice(global_stack_name(env_name), "global", references=tuple(s.name for s in regions))]


def resolve_stack(env: EnvironmentSpec, stack_name: str) -> tuple[str, StackSlice]:
    """The environment name and slice a Pulumi stack builds; ConfigError when the name is not one of them."""

    if env.stack_layout() == "single":
        head, _, tail = stack_name.rpartition(".")
        if head and (tail == GLOBAL or any(r.name == tail for r in env.regions)):
            raise ConfigError(
                [
                    Issue(
                        "stacks.layout",
                        f"this environment is one stack (layout single), not per region: deploy it as stack "
                        f"{head!r}, or set `stacks.layout: perRegion`",
                    )
                ]
            )
        return stack_name, environment_stacks(env, stack_name)[0]
    env_name, _, _ = stack_name.rpartition(".")
    stacks = environment_stacks(env, env_name or stack_name)
    chosen = next((s for s in stacks if s.name == stack_name), None)
    if chosen is None:
        names = ", ".join(s.name for s in stacks)
        raise ConfigError(
            [
                Issue(
                    "stacks.layout",
                    f"stack {stack_name!r} is not one of this environment's stacks ({names}): select one of them "
                    f"(`pulumi stack select {stacks[0].name}`), or roll them all out with `make rollout "
                    f"ENV={env_name or stack_name}`",
                )
            ]
        )
    return env_name, chosen


def global_deployer(env: EnvironmentSpec) -> DeployerSpec | None:
    """The global stack's deployer: declared, or the federation host's (it patches the host's Karmada service)."""
    if env.stacks.global_deployer is not None:
        return env.stacks.global_deployer
    if env.federation.enabled and env.federation.host:
        return deployer_of(env.region(env.federation.host))
    return None
