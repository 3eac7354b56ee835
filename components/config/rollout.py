"""`rollout:` the order `make rollout` deploys an environment's stacks in, and where it stops to ask.

A wave is a set of region stacks deployed together, then checked (policy before, health after) before the
next wave starts. By default the anchor region goes first, alone, as the canary: it holds the tenant keys and
the Karmada control plane every other stack reads. Then the rest of the anchor's cloud, then each other cloud,
and the global stack always last.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import Field

from components.config.base import Issue, Name, Spec, join_path, unknown_name
from components.config.stacks import GLOBAL, anchor_region, environment_stacks, layout_of, region_stack_name

if TYPE_CHECKING:
    from components.config.environment import EnvironmentSpec

CANARY = "canary"
SINGLE = "environment"  # the one wave of a single-stack environment


class WaveSpec(Spec):
    """One wave: region entries whose stacks deploy together."""

    name: Name = Field(description="Wave name, as `confirmBefore` and `--from-wave` name it.")
    regions: list[str] = Field(min_length=1, description="Region entries whose stacks deploy in this wave.")


class RolloutSpec(Spec):
    """`rollout:`: waves, operator confirmations and the health deadline of `make rollout`."""

    waves: list[WaveSpec] | None = Field(
        None,
        min_length=1,
        description="Waves of region stacks, in order (perRegion layout only); default: `canary` = the anchor "
        "region, then the rest of its cloud, then each other cloud (waves named after the cloud). The global "
        "stack is always the last wave, `global`.",
    )
    confirm_before: list[str] = Field(
        default_factory=list,
        description="Waves an operator confirms before they deploy (`global` included; `environment` for a "
        "single-stack environment); `--yes` confirms them all.",
    )
    health_timeout_minutes: int = Field(
        30, ge=1, description="How long a deployed wave may take to become healthy before the rollout stops."
    )


@dataclass(frozen=True)
class Wave:
    """A wave as `make rollout` drives it: its stacks in deployment order."""

    name: str
    stacks: tuple[str, ...]
    confirm: bool


def region_waves(env: EnvironmentSpec) -> list[tuple[str, list[str]]]:
    """(wave name, region entries) of the region waves, the configured ones or the default."""
    if env.rollout.waves is not None:
        return [(w.name, list(w.regions)) for w in env.rollout.waves]
    anchor = env.region(anchor_region(env))
    clouds = list(dict.fromkeys([anchor.cloud, *(r.cloud for r in env.regions)]))
    waves = [(CANARY, [anchor.name])]
    for cloud in clouds:
        names = [r.name for r in env.regions if r.cloud == cloud and r.name != anchor.name]
        if names:
            waves.append((cloud, names))
    return waves


def wave_names(env: EnvironmentSpec) -> list[str]:
    if layout_of(env) == "single":
        return [SINGLE]
    return [name for name, _ in region_waves(env)] + [GLOBAL]


def rollout_waves(env: EnvironmentSpec, env_name: str) -> list[Wave]:
    """The waves `make rollout` deploys, each stack named as components/config/stacks.py names it."""
    confirm = set(env.rollout.confirm_before)
    slices = environment_stacks(env, env_name)
    if layout_of(env) == "single":
        return [Wave(SINGLE, (slices[0].name,), SINGLE in confirm)]
    waves = [
        Wave(name, tuple(region_stack_name(env_name, r) for r in regions), name in confirm)
        for name, regions in region_waves(env)
    ]
    return [*waves, Wave(GLOBAL, (slices[-1].name,), GLOBAL in confirm)]


def _unknown(path: str, what: str, value: str, known: list[str]) -> Issue:
    close = difflib.get_close_matches(value, known, n=1)
    issue = unknown_name(path, what, value, known)
    return Issue(path, f"did you mean {close[0]!r}? {issue.message}") if close else issue


def check_rollout(env: EnvironmentSpec) -> Iterator[Issue]:
    """Every region deploys in exactly one wave, the anchor first; confirmations name waves that exist."""
    rollout = env.rollout
    if rollout.waves is not None:
        yield from _check_waves(env, rollout.waves)
    known = wave_names(env)
    for i, name in enumerate(rollout.confirm_before):
        if name not in known:
            yield _unknown(join_path("rollout", "confirmBefore", i), "wave", name, known)


def _check_waves(env: EnvironmentSpec, waves: list[WaveSpec]) -> Iterator[Issue]:
    if layout_of(env) == "single":
        yield Issue(
            "rollout.waves",
            "the environment deploys as one stack (stacks.layout single), so it has no region waves; "
            "remove rollout.waves or set stacks.layout: perRegion",
        )
        return
    names = [r.name for r in env.regions]
    seen_waves: dict[str, int] = {}
    placed: dict[str, str] = {}  # region -> the wave it deploys in
    for i, wave in enumerate(waves):
        if wave.name == GLOBAL:
            yield Issue(
                join_path("rollout", "waves", i, "name"),
                "'global' is the global stack's wave, always the last one; name this wave differently",
            )
        elif wave.name in seen_waves:
            yield Issue(
                join_path("rollout", "waves", i, "name"),
                f"duplicate wave name {wave.name!r} (also rollout.waves[{seen_waves[wave.name]}]); "
                "wave names must be unique",
            )
        seen_waves.setdefault(wave.name, i)
        for j, region in enumerate(wave.regions):
            path = join_path("rollout", "waves", i, "regions", j)
            if region not in names:
                yield _unknown(path, "region", region, names)
            elif region in placed:
                yield Issue(
                    path,
                    f"region {region!r} already deploys in wave {placed[region]!r}; "
                    "list every region in exactly one wave",
                )
            else:
                placed[region] = wave.name
    for region in names:
        if region not in placed:
            yield Issue("rollout.waves", f"region {region!r} is in no wave; add it to one of the waves")
    anchor = anchor_region(env)
    if anchor in placed and anchor not in waves[0].regions:
        yield Issue(
            "rollout.waves[0].regions",
            f"the anchor region {anchor!r} must deploy in the first wave: the anchor holds the tenant keys "
            f"and Karmada, every other stack reads it; move {anchor} into rollout.waves[0]",
        )
