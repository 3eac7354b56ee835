"""The tenant `make rollout`'s SLO gate calls as (rollout.slo.tenant): its API key sits with the rollout's runner, so the
gateways admit it only to the models the gate tests and charge each of its requests against an enforced limit.

Envoy Gateway's global rate limit charges a rule 1 per request unless its `cost.request` says otherwise, and never
enforces a rule in `shadowMode` (envoyproxy/gateway@v1.9.0:api/v1alpha1/ratelimit_types.go L118-124, L131-139,
L148-158; the platform's catalog fact envoy-gateway-global-rate-limit-counts-requests).
"""

from __future__ import annotations

from collections.abc import Iterator

from policies.framework import Context, Violation, rule
from policies.model import Resource, Stack, as_list, get, peek
from policies.rules.gateway import (
    ENVOY_GATEWAY_GROUP,
    MODEL_HEADER,
    ROUTE_TARGET_KINDS,
    _header_matches,
    _targets,
    is_ai_route,
    parent_gateways,
)


def _governing(route: Resource, kind: str, stack: Stack) -> list[Resource]:
    """The policies of `kind` Envoy Gateway applies to the route: its own, else its Gateways' (public or internal)."""
    candidates = list(stack.kubernetes(kind, ENVOY_GATEWAY_GROUP, cluster=route.cluster))
    own = [p for p in candidates if _targets(p, route, ROUTE_TARGET_KINDS)]
    if own:
        return own
    gateways = [g for _, g in parent_gateways(route, stack) if g is not None]
    return [p for p in candidates if any(_targets(p, g, ("Gateway",)) for g in gateways)]


def _counts_requests(rule_: object) -> bool:
    """An enforced global rule charging every request at least 1."""
    if not isinstance(rule_, dict) or peek(rule_, "shadowMode") is True:
        return False
    request = peek(rule_, "cost", "request")
    if request is None:
        return True  # no request cost: 1 per request
    return peek(request, "from") == "Number" and isinstance(peek(request, "number"), int) and request["number"] >= 1


def _request_limited(tenant: str, header: str, policies: list[Resource]) -> bool:
    for policy in policies:
        rate_limit = get(policy.props, "spec", "rateLimit") or {}
        if rate_limit.get("type", "Global") != "Global":
            continue
        for rule_ in as_list(get(rate_limit, "global", "rules")):
            if not _counts_requests(rule_):
                continue
            for selector in as_list(peek(rule_, "clientSelectors")):
                for h in _header_matches(selector):
                    if str(h.get("name", "")).lower() != header:
                        continue
                    if h.get("type") == "Distinct" or (h.get("type", "Exact") == "Exact" and h.get("value") == tenant):
                        return True
    return False


@rule(
    name="rollout-slo-tenant-least-privilege",
    description="The tenant whose API key `make rollout`'s SLO gate calls with (rollout.slo.tenant) is admitted by "
    "AIGatewayRoutes only to the models the gate tests, and every route that admits it is under an enforced global "
    "rate-limit rule charging each of its requests on the gateway's tenant header: the key, held by the rollout's "
    "runner, reaches nothing else and spends a bounded number of requests if it leaks.",
    severity="high",
    remediation="give rollout.slo a tenant of its own whose models are the ones the gate tests, with "
    "budget.requests (tenants[].budget)",
    applies_to=("AIGatewayRoute",),
    subject=is_ai_route,
    scope="stack",
    config=("rolloutSloTenant", "rolloutSloModels"),
)
def rollout_slo_tenant_least_privilege(r: Resource, ctx: Context) -> Iterator[Violation]:
    tenant = ctx.config.get("rolloutSloTenant")
    if not tenant:
        return
    tested = set(ctx.config.get("rolloutSloModels") or [])
    stack = ctx.require_stack()
    headers = {
        str(h).lower()
        for p in _governing(r, "SecurityPolicy", stack)
        if (h := get(p.props, "spec", "apiKeyAuth", "forwardClientIDHeader"))
    }
    admitted = False
    for header in sorted(headers):
        for i, rule_ in enumerate(as_list(get(r.props, "spec", "rules"))):
            for j, match in enumerate(as_list(peek(rule_, "matches")) or [{}]):
                found = _header_matches(match)
                if not any(
                    str(h.get("name", "")).lower() == header
                    and h.get("value") == tenant
                    and h.get("type", "Exact") == "Exact"
                    for h in found
                ):
                    continue
                admitted = True
                models = [str(h.get("value")) for h in found if str(h.get("name", "")).lower() == MODEL_HEADER]
                for model in models or ["any model"]:
                    if model not in tested:
                        yield Violation(
                            f"{r.label} rules[{i}].matches[{j}] admits tenant {tenant!r}, whose key the rollout's "
                            f"SLO gate holds, to {model!r}, which the gate does not test ({', '.join(sorted(tested))})"
                        )
        if admitted and not _request_limited(tenant, header, _governing(r, "BackendTrafficPolicy", stack)):
            yield Violation(
                f"{r.label} admits tenant {tenant!r} (the SLO gate's) with no enforced per-request limit on {header}: "
                "a leaked key could send requests without bound"
            )


RULES = [rollout_slo_tenant_least_privilege]
