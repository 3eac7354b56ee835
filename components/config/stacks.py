"""How an environment is split into Pulumi stacks, and what each stack reads from the others.

`Pulumi.<env>.yaml` describes the whole environment. With `stacks.layout: perRegion` it is deployed as
one stack per region entry, `<env>.<region>`, and one global stack, `<env>.global`; with `single`, as the
one stack `<env>`. Region stacks are independent of each other except for the anchor region (the
federation host, or else the first region entry): it holds what the environment shares (tenant API keys,
the Karmada control plane and its certificates), so the other stacks read it and deploy after it. The
global stack holds what spans regions (bucket replication, the federation's members and models) and
deploys last. components/domain/stack_split.py derives the stacks from these keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from components.config.base import Spec
from components.config.deployer import ClusterAccessSpec, DeployerSpec

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
