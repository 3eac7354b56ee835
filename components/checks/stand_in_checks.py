"""Checks of `placements[].standIn`: a model of the same region, awake, reachable the way the gateway falls over.

The gateway sends a model with a stand-in straight to its KServe Service at priority 0 and the stand-in's Service at
priority 1 (components/serving/stand_in.py), so both must be plain aggregated InferenceServices in Standard mode, the
stand-in must be up whenever the model is not, and every request the model accepts must fit the stand-in.
"""

from __future__ import annotations

from collections.abc import Iterator

from components.config.base import Issue, join_path
from components.config.environment import EnvironmentSpec
from components.config.workloads import ModelSpec, PlacementSpec
from components.domain.gateways import has_gateway
from components.domain.model_access import granted_tenants


def _placement_in(model: ModelSpec, region: str) -> tuple[int, PlacementSpec] | None:
    return next(((j, p) for j, p in enumerate(model.placements) if p.region == region), None)


def check_stand_ins(env: EnvironmentSpec) -> Iterator[Issue]:
    """One issue per mistake, at the key to change: the stand-in's own keys where the fix is there."""
    index = {m.name: i for i, m in enumerate(env.models)}
    seen: set[Issue] = set()
    for i, model in enumerate(env.models):
        for j, placement in enumerate(model.placements):
            if placement.stand_in is None:
                continue
            for issue in _check_one(env, (i, j), index):
                if issue not in seen:  # a model standing in in two regions is one mistake
                    seen.add(issue)
                    yield issue


def _check_one(env: EnvironmentSpec, at_placement: tuple[int, int], index: dict[str, int]) -> Iterator[Issue]:
    i, j = at_placement
    model = env.models[i]
    placement = model.placements[j]
    at = join_path("models", i, "placements", j, "standIn")
    name, region = placement.stand_in, env.region(placement.region)
    assert name is not None
    if not has_gateway(env, region):
        yield Issue(
            at, f"a stand-in is chosen by the gateway, which {region.name} does not run; enable it or remove standIn"
        )
        return
    if name == model.name:
        yield Issue(at, f"{model.name} cannot stand in for itself; name a smaller model of {region.name}")
        return
    if name not in index:
        here = sorted(m.name for m in env.models if m.name != model.name and _placement_in(m, region.name))
        yield Issue(
            at,
            f"no model named {name!r}; a stand-in is a model of this environment placed in {region.name} (an external "
            f"provider's is not served there): use one of {', '.join(here) or '(none placed there)'}",
        )
        return
    k = index[name]
    stand_in = env.models[k]
    found = _placement_in(stand_in, region.name)
    if found is None:
        yield Issue(
            at,
            f"{name} is not placed in {region.name}: a stand-in answers from the model's own cluster; add a placement "
            f"of {name} in {region.name} (models[{k}].placements) or pick a model placed there",
        )
        return
    m, theirs = found
    theirs_at = ("models", k, "placements", m)
    if region.serving.deployment_mode != "Standard":
        yield Issue(
            at,
            f"{region.name} runs KServe in {region.serving.deployment_mode} mode, whose activator holds a request for "
            "a model at zero instead of refusing it, so the gateway never falls over; use serving.deploymentMode "
            "Standard there, or remove standIn",
        )
    if theirs.min_replicas < 1:
        yield Issue(
            join_path(*theirs_at, "minReplicas"),
            f"{name} stands in for {model.name} in {region.name}, so it must be up while {model.name} wakes: set "
            "minReplicas to 1 or more",
        )
    if theirs.stand_in is not None:
        yield Issue(
            join_path(*theirs_at, "standIn"),
            f"{name} stands in for {model.name} in {region.name} and is always up, so it needs no stand-in of its own "
            "(stand-ins do not chain); remove this standIn",
        )
    for key, who, where in (
        (join_path("models", i, "placements", j, "servingMode"), model.name, placement),
        (join_path(*theirs_at, "servingMode"), name, theirs),
    ):
        if where.serving_mode != "aggregated":
            yield Issue(
                key,
                f"{who} takes part in a stand-in in {region.name}, which the gateway reaches through its KServe "
                "predictor Service: set servingMode aggregated (a disaggregated model has no such Service)",
            )
    if model.served_adapters:
        adapters = ", ".join(a.name for a in model.served_adapters)
        yield Issue(
            at,
            f"{model.name} serves LoRA adapters ({adapters}) the stand-in does not load; remove the stand-in, or the "
            "adapters",
        )
    if stand_in.max_model_len < model.max_model_len:
        yield Issue(
            join_path("models", k, "maxModelLen"),
            f"{name} stands in for {model.name} (maxModelLen {model.max_model_len}) with {stand_in.max_model_len}: a "
            f"prompt {model.name} accepts would be refused (400) while it wakes; raise it to {model.max_model_len}, or "
            "pick a stand-in with a longer context",
        )
    if env.gateway.auth == "apiKey":
        model_callers = set(granted_tenants(env, model.name))
        for t, tenant in enumerate(env.tenants):
            if tenant.name in model_callers and name not in tenant.models:
                yield Issue(
                    join_path("tenants", t, "models"),
                    f"{tenant.name} may call {model.name}, whose stand-in in {region.name} is {name}, which it may not "
                    f"call: a stand-in serves only tenants that may call it; add {name}, or remove the stand-in",
                )
        callers = model_callers | set(granted_tenants(env, name))
        classes = sorted({t.priority for t in env.tenants if t.name in callers})
        if len(classes) > 1:
            yield Issue(
                at,
                f"{name} answers for {model.name} at its Service, past its endpoint picker, so the request classes "
                f"of their callers ({', '.join(classes)}) would be neither ordered nor shed while {model.name} wakes; "
                "stand in only where every caller of both models is of one class (tenants[].priority), or remove "
                "the stand-in",
            )
