"""`rollout:` the order `make rollout` deploys an environment's stacks in, and where it stops to ask.

A wave is a set of region stacks deployed together, then checked (policy before, health after) before the
next wave starts. By default the anchor region goes first, alone, as the canary: it holds the tenant keys and
the Karmada control plane every other stack reads. Then the rest of the anchor's cloud, then each other cloud,
and the global stack always last.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import Field

from components.config.base import Name, Spec
from components.config.stacks import GLOBAL, anchor_region, environment_stacks, layout_of, region_stack_name

if TYPE_CHECKING:
    from components.config.environment import EnvironmentSpec
    from components.config.workloads import ModelSpec

CANARY = "canary"
SINGLE = "environment"  # the one wave of a single-stack environment


class WaveSpec(Spec):
    """One wave: region entries whose stacks deploy together."""

    name: Name = Field(description="Wave name, as `confirmBefore` and `--from-wave` name it.")
    regions: list[str] = Field(min_length=1, description="Region entries whose stacks deploy in this wave.")


class SloRequestSpec(Spec):
    """One kind of request of the SLO load test's mix: a chat prompt and how many tokens it may generate."""

    prompt: str = Field(min_length=1, max_length=32768, description="The user message the request sends.")
    max_tokens: int = Field(
        ge=2,
        le=32768,
        description="The request's max_tokens: at least 2, since TPOT is measured between the first and the last "
        "token of a response.",
    )
    weight: int = Field(1, ge=1, le=100, description="Share of the mix relative to the other entries.")


class SloSpec(Spec):
    """`rollout.slo`: after each wave's health gate, a bounded streaming load test through the wave's gateways with
    a tenant's key; the next wave starts only when its p95 TTFT, p95 TPOT and error rate are within these bounds."""

    tenant: str = Field(
        description="Tenant whose API key the load test calls with: give it a tenant of its own (tenants[]), "
        "granted only the models it tests and with a request budget (the pack checks both)."
    )
    ttft_p95_ms: float = Field(
        gt=0,
        description="Most the 95th percentile of time to first token may be, in ms (request sent to first "
        "output chunk).",
    )
    tpot_p95_ms: float = Field(
        gt=0,
        description="Most the 95th percentile of time per output token may be, in ms: (last token - first token) "
        "/ (tokens - 1) per request.",
    )
    max_error_rate: float = Field(
        0.01,
        ge=0,
        le=1,
        description="Largest share (0-1) of requests that may fail: a status other than 200, an error or a break in "
        "the stream, no content, or the request timeout.",
    )
    requests: list[SloRequestSpec] = Field(
        min_length=1, description="The request mix, sent in turn in proportion to each entry's weight."
    )
    concurrency: int = Field(4, ge=1, le=256, description="Requests in flight at once.")
    duration_seconds: int = Field(
        60, ge=1, le=3600, description="No request starts after this many seconds from the first one."
    )
    max_requests: int = Field(200, ge=1, le=100000, description="Hard cap on the requests one gateway's test sends.")
    min_requests: int = Field(
        20,
        ge=1,
        description="Fewest completed requests a verdict needs: a test that measured fewer fails (a p95 over a "
        "handful of requests says little).",
    )
    request_timeout_seconds: int = Field(
        60, ge=1, le=3600, description="Longest one request may stream; a longer one counts as an error."
    )
    models: list[str] = Field(
        default_factory=list,
        description="Models the test sends to, in each wave that creates them; empty: every model of the tenant "
        "that the wave's gateways serve once the wave is up.",
    )
    waves: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Per wave name, the models to test in that wave instead of `models`; [] skips that wave.",
    )

    def wave_models(self, env: EnvironmentSpec, wave: str) -> list[str]:
        """The models the gate sends to in `wave`: `waves.<wave>`, else `models`, else every model of the tenant."""
        tenant_models = [m for t in env.tenants if t.name == self.tenant for m in t.models]
        return self.waves.get(wave) or self.models or tenant_models


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
    slo: SloSpec | None = Field(
        None,
        description="Gate each wave on a bounded load test through its gateways (p95 TTFT and TPOT, error rate); "
        "off by default.",
    )

    def slo_models(self, env: EnvironmentSpec) -> list[str]:
        """Every model the SLO gate may send to: those `slo.models` and `slo.waves` name, and the tenant's own when a
        region wave is named in neither (tools/rollout/slo.py region_target); what the pack holds its tenant to."""
        if self.slo is None:
            return []
        slo = self.slo
        listed = [*slo.models, *(m for models in slo.waves.values() for m in models)]
        unnamed = [w for w in wave_names(env) if w != GLOBAL and w not in slo.waves]
        if unnamed and not slo.models:
            listed += [m for t in env.tenants if t.name == slo.tenant for m in t.models]
        return sorted(set(listed))


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


def served_base(env: EnvironmentSpec, name: str) -> ModelSpec | None:
    """The self-hosted model that serves `name`: itself, or the base model of a LoRA adapter of that name."""
    return next((m for m in env.models if m.name == name or any(a.name == name for a in m.served_adapters)), None)
