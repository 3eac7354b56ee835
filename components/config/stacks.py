"""How an environment is split into Pulumi stacks, and what each stack reads from the others.

`Pulumi.<env>.yaml` describes the whole environment. With `stacks.layout: perRegion` it is deployed as
one stack per region entry, `<env>.<region>`, and one global stack, `<env>.global`; with `single`, as the
one stack `<env>`. Region stacks are independent of each other except for the anchor region (the
federation host, or else the first region entry): it holds what the environment shares (tenant API keys,
the Karmada control plane and its certificates), so the other stacks read it and deploy after it. The
global stack holds what spans regions (bucket replication, the federation's members and models) and
deploys last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from components.config.base import ConfigError, Issue, Spec
from components.config.deployer import ClusterAccessSpec, DeployerSpec

if TYPE_CHECKING:
    from components.config.environment import EnvironmentSpec

Layout = Literal["single", "perRegion"]
StackKind = Literal["environment", "region", "global"]
GLOBAL = "global"


class StacksSpec(Spec):
    """`stacks:`: one stack for the environment, or one per region plus a global one."""

    layout: Literal["auto", "single", "perRegion"] = Field(
        "auto",
        description="`single`: the environment is the one stack `<env>`; `perRegion`: stacks `<env>.<region>` "
        "and `<env>.global`; `auto`: `perRegion` when the environment has more than one region entry.",
    )
    global_deployer: DeployerSpec | None = Field(
        None,
        description="Where the global stack is deployed from; default the federation host's deployer (it applies "
        "the Karmada API's allowlist on the host cluster). Its sources join that allowlist.",
    )
    access: ClusterAccessSpec = Field(
        default_factory=ClusterAccessSpec,
        description="Who else uses the EKS clusters: each principal gets an access entry (the deployer that "
        "creates a cluster has one already).",
    )


def layout_of(env: EnvironmentSpec) -> Layout:
    if env.stacks.layout == "auto":
        return "perRegion" if len(env.regions) > 1 else "single"
    return env.stacks.layout


def anchor_region(env: EnvironmentSpec) -> str:
    """The region whose stack holds what the whole environment shares."""
    return env.federation.host if env.federation.enabled and env.federation.host else env.regions[0].name


@dataclass(frozen=True)
class StackSlice:
    """One Pulumi stack of an environment: its name, what it builds, and the stacks it reads."""

    name: str
    kind: StackKind
    region: str | None = None  # the region entry a region stack builds
    references: tuple[str, ...] = ()  # stacks whose outputs it reads (they must be deployed first)


def region_stack_name(env_name: str, region: str) -> str:
    return f"{env_name}.{region}"


def global_stack_name(env_name: str) -> str:
    return f"{env_name}.{GLOBAL}"


def environment_stacks(env: EnvironmentSpec, env_name: str) -> list[StackSlice]:
    """Every stack of the environment, each after the stacks it references."""
    if layout_of(env) == "single":
        return [StackSlice(env_name, "environment")]
    anchor = anchor_region(env)
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


# Pulumi stack names: letters, digits, '-', '_' and '.', at most 100 characters (pulumi/pulumi validateStackName,
# `^[a-zA-Z0-9-_.]{1,100}$`, "should match the stack naming rules enforced by the Pulumi Service").
_STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


def stack_name_issues(env: EnvironmentSpec, env_name: str) -> list[Issue]:
    """Every stack name the environment deploys as is one Pulumi accepts, and an environment split per region
    has a name without '.', which separates the environment from its slice (`prod.use1`)."""
    issues = []
    if layout_of(env) == "perRegion" and "." in env_name:
        issues.append(
            Issue(
                "stacks.layout",
                f"environment name {env_name!r} holds '.', which would read as <env>.<slice>; "
                "rename Pulumi.<env>.yaml without dots",
            )
        )
    for piece in environment_stacks(env, env_name):
        if not _STACK_NAME.match(piece.name):
            where = f"regions[{[r.name for r in env.regions].index(piece.region)}].name" if piece.region else "stacks"
            issues.append(
                Issue(
                    where,
                    f"stack name {piece.name!r} is not one Pulumi accepts (letters, digits, '-', '_', '.', "
                    "at most 100 characters); shorten or rename it",
                )
            )
    return issues


def resolve_stack(env: EnvironmentSpec, stack_name: str) -> tuple[str, StackSlice]:
    """The environment name and slice a Pulumi stack builds; ConfigError when the name is not one of them."""

    if layout_of(env) == "single":
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
