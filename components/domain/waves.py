"""The waves `make rollout` deploys an environment's stacks in, and the models each wave's SLO gate tests.

Which region entries each wave holds is the environment's (`rollout.waves`, or the default that
EnvironmentSpec.region_waves resolves); this names each wave's stacks in deployment order.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.config.environment import EnvironmentSpec
from components.config.rollout import SINGLE, SloSpec
from components.config.stacks import GLOBAL, region_stack_name
from components.domain.stack_split import environment_stacks


@dataclass(frozen=True)
class Wave:
    """A wave as `make rollout` drives it: its stacks in deployment order."""

    name: str
    stacks: tuple[str, ...]
    confirm: bool


def rollout_waves(env: EnvironmentSpec, env_name: str) -> list[Wave]:
    """The waves `make rollout` deploys, each stack named as components/config/stacks.py names it."""
    confirm = set(env.rollout.confirm_before)
    slices = environment_stacks(env, env_name)
    if env.stack_layout() == "single":
        return [Wave(SINGLE, (slices[0].name,), SINGLE in confirm)]
    # A wave's stacks in the order the plan evaluates them: a stack after those it reads (the anchor first), so each
    # `up` reads outputs this rollout has just deployed, not the previous ones (or none, on a first rollout).
    order = {s.name: i for i, s in enumerate(slices)}
    waves = [
        Wave(
            name,
            tuple(sorted((region_stack_name(env_name, r) for r in regions), key=order.__getitem__)),
            name in confirm,
        )
        for name, regions in env.region_waves()
    ]
    return [*waves, Wave(GLOBAL, (slices[-1].name,), GLOBAL in confirm)]


def slo_wave_models(env: EnvironmentSpec, slo: SloSpec, wave: str) -> list[str]:
    """The models the gate sends to in `wave`: `waves.<wave>`, else `models`, else every model of the tenant."""
    tenant_models = [m for t in env.tenants if t.name == slo.tenant for m in t.models]
    return slo.waves.get(wave) or slo.models or tenant_models
