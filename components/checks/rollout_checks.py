"""Waves that name each region once, and SLO gates that can be measured in the waves they test."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from components.config.base import Issue, join_path, unknown_name
from components.config.environment import EnvironmentSpec
from components.config.rollout import SINGLE, SloSpec, WaveSpec
from components.config.stacks import GLOBAL
from components.domain.gateways import has_gateway
from components.domain.model_access import granted_tenants, served_base
from components.domain.waves import slo_wave_models


def _unknown(path: str, what: str, value: str, known: list[str]) -> Issue:
    close = difflib.get_close_matches(value, known, n=1)
    issue = unknown_name(path, what, value, known)
    return Issue(path, f"did you mean {close[0]!r}? {issue.message}") if close else issue


def check_rollout(env: EnvironmentSpec) -> Iterator[Issue]:
    """Every region deploys in exactly one wave, the anchor first; confirmations name waves that exist."""
    rollout = env.rollout
    if rollout.waves is not None:
        yield from _check_waves(env, rollout.waves)
    known = env.wave_names()
    for i, name in enumerate(rollout.confirm_before):
        if name not in known:
            yield _unknown(join_path("rollout", "confirmBefore", i), "wave", name, known)
    if rollout.slo is not None:
        yield from _check_slo(env, rollout.slo)


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
    names = env.wave_names()
    waves = dict(env.region_waves()) if env.stack_layout() != "single" else {SINGLE: [r.name for r in env.regions]}
    for wave, models in slo.waves.items():
        where = (*path, "waves", wave)
        if wave == GLOBAL and env.stack_layout() != "single":
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
    wanted = slo_wave_models(env, slo, wave)
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
    if env.stack_layout() == "single":
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
    anchor = env.anchor_region()
    if anchor in placed and anchor not in waves[0].regions:
        yield Issue(
            "rollout.waves[0].regions",
            f"the anchor region {anchor!r} must deploy in the first wave: the anchor holds the tenant keys "
            f"and Karmada, every other stack reads it; move {anchor} into rollout.waves[0]",
        )
