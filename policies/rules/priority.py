"""Request priority classes: a client never picks its own class, at the endpoint picker or in the engine.

The endpoint picker (llm-d-router v0.9.0) obeys its control headers whoever sends them
(upstream.GIE_OBJECTIVE_FROM_HEADER), so the Gateway drops a client's on arrival and only the platform's Lua names the
objective, from the tenant the API key proved (components/serving/priority_classes.py). vLLM's priority scheduling
obeys the body's `priority`, which at these pins can always be the client's
(upstream.AI_GATEWAY_REPLAYS_THE_CLIENT_BODY_TO_POOLS), so engines stay first-come first-served.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator

from platform_catalog.request_priority import OBJECTIVE_GROUP, OBJECTIVE_HEADER, PICKER_CONTROL_HEADERS, PRIORITY_LUA
from policies.framework import CannotCheck, Context, Violation, rule
from policies.model import Resource, Stack, as_list, get, peek
from policies.pods import RUNTIME_KINDS, WORKLOAD_KINDS, is_workload, workloads
from policies.rules.gateway import (
    ENVOY_GATEWAY_GROUP,
    GATEWAY_API_GROUP,
    MODEL_HEADER,
    _targets,
    is_ai_route,
    parent_gateways,
)
from policies.rules.llm import _runs_vllm

POOL_GROUP = "inference.networking.k8s.io"
TENANT_HEADERS = ("x-tenant-id",)  # what the gateway's API-key auth forwards (gateway_specs.security_policy_spec)


def _is_gateway(r: Resource) -> bool:
    return r.is_kubernetes and r.kind == "Gateway" and r.api_group == GATEWAY_API_GROUP


def _pool_rules(route: Resource) -> Iterator[tuple[int, dict, str]]:
    """(index, rule, InferencePool name) of each rule of an AIGatewayRoute that sends requests to a pool."""
    for i, rule_ in enumerate(as_list(get(route.props, "spec", "rules"))):
        for ref in as_list(peek(rule_, "backendRefs")):
            if isinstance(ref, dict) and ref.get("kind") == "InferencePool" and ref.get("group") == POOL_GROUP:
                yield i, rule_, str(ref.get("name"))


def _routes_of(gateway: Resource, stack: Stack) -> list[Resource]:
    return [
        r
        for r in stack.kubernetes("AIGatewayRoute", cluster=gateway.cluster)
        if is_ai_route(r) and any(g is gateway for _, g in parent_gateways(r, stack))
    ]


def _policies(kind: str, gateway: Resource, stack: Stack) -> list[Resource]:
    return [
        p
        for p in stack.kubernetes(kind, ENVOY_GATEWAY_GROUP, cluster=gateway.cluster)
        if _targets(p, gateway, ("Gateway",))
    ]


@rule(
    name="gateway-drops-picker-control-headers",
    description="A Gateway that routes to InferencePools drops, as a request arrives (its ClientTrafficPolicy's "
    "earlyRequestHeaders.remove), every header the endpoint picker (llm-d-router v0.9.0) obeys whoever sends it, "
    "under its name and its deprecated alias: "
    f"{', '.join(PICKER_CONTROL_HEADERS)}. Otherwise a client picks its own priority class and fairness flow, or "
    "makes the picker rewrite its model to another one of the pool, such as another tenant's LoRA adapter.",
    severity="critical",
    remediation="give the Gateway's ClientTrafficPolicy headers.earlyRequestHeaders.remove with those headers "
    "(components/serving/gateway_specs.py client_traffic_policy_spec)",
    applies_to=("Gateway",),
    subject=_is_gateway,
    scope="stack",
)
def gateway_drops_picker_control_headers(r: Resource, ctx: Context) -> Iterator[Violation]:
    stack = ctx.require_stack()
    if not any(True for route in _routes_of(r, stack) for _ in _pool_rules(route)):
        return
    removed: set[str] = set()
    for policy in _policies("ClientTrafficPolicy", r, stack):
        early = get(policy.props, "spec", "headers", "earlyRequestHeaders", "remove")
        removed |= {str(h).lower() for h in as_list(early)}
    missing = [h for h in PICKER_CONTROL_HEADERS if h not in removed]
    if missing:
        yield Violation(f"{r.label} routes to InferencePools but lets clients send {', '.join(missing)}")


def _is_objective(r: Resource) -> bool:
    return r.is_kubernetes and r.kind == "InferenceObjective" and r.api_group == OBJECTIVE_GROUP


def _header_values(rule_: dict, name: str) -> list[set[str]]:
    """Per match of a route rule, the exact values it requires of header `name` (empty set: any value)."""
    found = []
    for match in as_list(peek(rule_, "matches")) or [{}]:
        headers = [h for h in as_list(peek(match, "headers")) if isinstance(h, dict)]
        found.append({str(h.get("value")) for h in headers if str(h.get("name", "")).lower() == name})
    return found


@rule(
    name="request-class-set-by-gateway",
    description="An InferenceObjective (a request class of an endpoint picker) is named only by the platform's Lua "
    "on the Gateways that route to its pool, from the tenant the API key proved and the model: every Lua "
    "EnvoyExtensionPolicy on such a Gateway is that script, and its filter context names, for each model and tenant "
    "a route admits to the pool, an objective of that pool (another's would be ignored, a missing one leaves the "
    "tenant at the picker's default).",
    severity="critical",
    remediation="let components/serving/priority_classes.py render the Gateway's request-priority "
    "EnvoyExtensionPolicy from tenants[].priority; remove other Lua policies from the Gateway",
    applies_to=("InferenceObjective",),
    subject=_is_objective,
    scope="stack",
)
def request_class_set_by_gateway(r: Resource, ctx: Context) -> Iterator[Violation | CannotCheck]:
    stack = ctx.require_stack()
    pool = str(get(r.props, "spec", "poolRef", "name"))
    objectives = {
        o.k8s_name: str(get(o.props, "spec", "poolRef", "name"))
        for o in stack.kubernetes("InferenceObjective", OBJECTIVE_GROUP, cluster=r.cluster)
        if o.namespace == r.namespace
    }
    gateways: dict[str, Resource] = {}
    routes = []
    for route in stack.kubernetes("AIGatewayRoute", cluster=r.cluster):
        pool_rules = [(i, x) for i, x, name in _pool_rules(route) if name == pool and route.namespace == r.namespace]
        if is_ai_route(route) and pool_rules:
            routes.append((route, pool_rules))
            gateways.update({where: g for where, g in parent_gateways(route, stack) if g is not None})
    if not routes:
        return
    for gateway in gateways.values():
        luas = [
            (policy, entry)
            for policy in _policies("EnvoyExtensionPolicy", gateway, stack)
            for entry in as_list(get(policy.props, "spec", "lua"))
            if isinstance(entry, dict)
        ]
        for policy, entry in luas:
            if entry.get("inline") != PRIORITY_LUA:
                yield Violation(
                    f"{policy.label} runs Lua on {gateway.label} other than the platform's request-priority script: "
                    f"it could set {OBJECTIVE_HEADER} from what the client sent"
                )
        named = {
            model: tenants
            for _, entry in luas
            if entry.get("inline") == PRIORITY_LUA
            for model, tenants in (peek(entry, "filterContext", "objectives") or {}).items()
            if isinstance(tenants, dict)
        }
        if not named:
            yield Violation(f"{r.label}: no request-priority Lua on {gateway.label} names it; nothing sets its class")
            continue
        for route, pool_rules in routes:
            for i, rule_ in pool_rules:
                where = f"{route.label} rules[{i}]"
                for models, tenants in zip(
                    _header_values(rule_, MODEL_HEADER), _header_values(rule_, TENANT_HEADERS[0]), strict=True
                ):
                    if not tenants:
                        yield CannotCheck(f"{where} admits any tenant; which class each is cannot be told")
                    for model in models:
                        for tenant in tenants:
                            objective = (named.get(model) or {}).get(tenant)
                            if objective is None:
                                yield Violation(f"{where}: tenant {tenant!r} calling {model!r} is named no class")
                            elif objectives.get(str(objective)) != pool:
                                yield Violation(
                                    f"{where}: tenant {tenant!r} calling {model!r} is named {objective!r}, not an "
                                    f"objective of pool {pool}"
                                )


def _priority_scheduling(args: list[str]) -> bool:
    """Does a vLLM command line ask for priority scheduling (`--scheduling-policy priority` or `=priority`)?"""
    words = [w for a in args for w in (shlex.split(a) if " " in a else [a])]
    for i, word in enumerate(words):
        if word == "--scheduling-policy=priority":
            return True
        if word == "--scheduling-policy" and i + 1 < len(words) and words[i + 1] == "priority":
            return True
    return False


def _containers(r: Resource, stack: Stack) -> list[tuple[str, dict]]:
    if r.is_kubernetes and r.kind in RUNTIME_KINDS:
        spec = get(r.props, "spec") or {}
        found = [*as_list(spec.get("containers")), *as_list(peek(spec, "workerSpec", "containers"))]
        return [(r.label, c) for c in found if isinstance(c, dict)]
    return [(w.label, c) for w in workloads(r, stack) for c in w.all_containers()]


@rule(
    name="vllm-first-come-first-served",
    description="No vLLM server runs --scheduling-policy priority: it orders requests by the body's `priority`, "
    "which at the pinned AI Gateway can always be the client's (retries and streaming requests reach the server "
    "with the body the client sent), so each client would pick its own place. Request classes are ordered at the "
    "endpoint picker instead.",
    severity="critical",
    remediation="drop --scheduling-policy priority; give tenants classes with tenants[].priority",
    applies_to=(*WORKLOAD_KINDS, *RUNTIME_KINDS),
    subject=lambda r: is_workload(r) or (r.is_kubernetes and r.kind in RUNTIME_KINDS),
    scope="stack",
)
def vllm_first_come_first_served(r: Resource, ctx: Context) -> Iterator[Violation]:
    for where, container in _containers(r, ctx.require_stack()):
        words = [str(t) for t in [*as_list(container.get("command")), *as_list(container.get("args"))]]
        if _runs_vllm(container) and _priority_scheduling(words):
            yield Violation(f"{where} container {container.get('name')} runs --scheduling-policy priority")


RULES = [gateway_drops_picker_control_headers, request_class_set_by_gateway, vllm_first_come_first_served]
