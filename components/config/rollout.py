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
from components.config.gateway import has_gateway
from components.config.stacks import GLOBAL, anchor_region, environment_stacks, layout_of, region_stack_name
from components.config.workloads import granted_tenants

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
    if rollout.slo is not None:
        yield from _check_slo(env, rollout.slo)


def served_base(env: EnvironmentSpec, name: str) -> ModelSpec | None:
    """The self-hosted model that serves `name`: itself, or the base model of a LoRA adapter of that name."""
    return next((m for m in env.models if m.name == name or any(a.name == name for a in m.served_adapters)), None)


def _check_slo(env: EnvironmentSpec, slo: SloSpec) -> Iterator[Issue]:
    """The tenant exists and calls with a key; the models it tests are its own and self-hosted; the waves named
    exist and create a gateway; the bounds agree with each other."""
    path = ("rollout", "slo")
    if not env.gateway.enabled or not any(has_gateway(env, r) for r in env.regions):
        yield Issue(
            join_path(*path),
            "no region runs a gateway (gateway.enabled, regions[].gateway.enabled, a model placed there), so there "
            "is nothing to load-test; remove rollout.slo or enable a gateway",
        )
        return
    if env.gateway.auth != "apiKey":
        yield Issue(
            join_path(*path, "tenant"),
            "the load test calls the gateway with the tenant's API key, and gateway.auth none issues none; set "
            "gateway.auth apiKey or remove rollout.slo",
        )
    tenants = [t.name for t in env.tenants]
    if slo.tenant not in tenants:
        yield _unknown(join_path(*path, "tenant"), "tenant", slo.tenant, tenants)
        return
    if slo.min_requests > slo.max_requests:
        yield Issue(
            join_path(*path, "minRequests"),
            f"{slo.min_requests} is more than maxRequests {slo.max_requests}, so no test could pass; lower "
            "minRequests or raise maxRequests",
        )
    if slo.concurrency > slo.max_requests:
        yield Issue(
            join_path(*path, "concurrency"),
            f"{slo.concurrency} requests in flight is more than the maxRequests {slo.max_requests} a test sends; "
            "lower concurrency or raise maxRequests",
        )
    wrong = list(_check_slo_models(env, slo, slo.models, (*path, "models"), regions=None))
    names = wave_names(env)
    waves = dict(region_waves(env)) if layout_of(env) != "single" else {SINGLE: [r.name for r in env.regions]}
    for wave, models in slo.waves.items():
        where = (*path, "waves", wave)
        if wave == GLOBAL and layout_of(env) != "single":
            wrong.append(
                Issue(
                    join_path(*where),
                    "the global wave creates no gateway of its own, so it is not load-tested; remove it (federated "
                    "models are routable only after it)",
                )
            )
        elif wave not in names:
            wrong.append(_unknown(join_path(*where), "wave", wave, [n for n in names if n != GLOBAL]))
        else:
            wrong += _check_slo_models(env, slo, models, where, regions=waves[wave])
    yield from wrong
    if not wrong:  # a wave that tests nothing because a name is wrong: that name's error says so
        for wave, regions in waves.items():
            yield from _check_wave_tested(env, slo, wave, regions)


def _check_wave_tested(env: EnvironmentSpec, slo: SloSpec, wave: str, regions: list[str]) -> Iterator[Issue]:
    """A wave that deploys models of its own load-tests one of them, or says it deploys untested (`waves.<wave>:
    []`): else its gate stops the rollout (tools/rollout/slo.py untested_wave). Federated models are the global
    wave's."""
    if wave in slo.waves and not slo.waves[wave]:
        return
    federating = env.federation.enabled
    gateways = {r for r in regions if has_gateway(env, env.region(r))}
    own = sorted(
        m.name
        for m in env.models
        if not (m.federated and federating) and any(p.region in gateways for p in m.placements)
    )
    wanted = slo.wave_models(env, wave)
    if not own or any((base := served_base(env, name)) is not None and base.name in own for name in wanted):
        return
    key = ("waves", wave) if wave in slo.waves else ("models",) if slo.models else ("tenant",)
    grant = f"the models of tenant {slo.tenant!r}"
    fix = f"add one of them to {grant}" if key == ("tenant",) else f"list one of them here (and in {grant})"
    yield Issue(
        join_path("rollout", "slo", *key),
        f"wave {wave} deploys {', '.join(own)} and the gate would test none of them ({', '.join(wanted)}), so it "
        f"would stop the rollout there; {fix}, or set rollout.slo.waves.{wave}: [] to deploy {wave} untested",
    )


def _check_slo_models(
    env: EnvironmentSpec, slo: SloSpec, models: list[str], path: tuple[str | int, ...], regions: list[str] | None
) -> Iterator[Issue]:
    """Each model the tenant may call and this environment serves (in one of `regions`, when given)."""
    granted = [m for t in env.tenants if t.name == slo.tenant for m in t.models]
    for j, name in enumerate(models):
        where = join_path(*path, j)
        base = served_base(env, name)
        if slo.tenant not in granted_tenants(env, name):
            yield Issue(
                where,
                f"tenant {slo.tenant!r} may not call {name!r}, so its key would be refused; add {name} to the "
                f"tenant's models or test one of {', '.join(granted) or 'its models'}",
            )
        elif base is None:
            yield Issue(
                where,
                f"{name!r} is an external provider's model; the gate measures the models this environment serves, "
                "remove it",
            )
        elif regions is not None and not any(p.region in regions for p in base.placements):
            yield Issue(
                where,
                f"{name!r} is served in {', '.join(sorted({p.region for p in base.placements}))}, not by this "
                f"wave's regions ({', '.join(regions)}); test it in the wave that deploys it",
            )


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
