"""Public LLM routes: authenticated (Envoy Gateway SecurityPolicy) and metered (token budget).

A route is public when one of its parent Gateways is (an internal load balancer is declared
through the Gateway's infrastructure annotations or its EnvoyProxy's Service). Envoy
Gateway applies the most specific policy: a SecurityPolicy / BackendTrafficPolicy on the
route replaces the Gateway's, so the route-level one, when present, is the one checked.
"""

from __future__ import annotations

from collections.abc import Iterator

from policies.framework import Context, Violation, rule
from policies.model import Resource, Stack, as_list, get, peek

AI_GATEWAY_GROUP = "aigateway.envoyproxy.io"
GATEWAY_API_GROUP = "gateway.networking.k8s.io"
ENVOY_GATEWAY_GROUP = "gateway.envoyproxy.io"
AI_ROUTE_KIND = "AIGatewayRoute"
# The AI Gateway controller renders each AIGatewayRoute into an HTTPRoute of the same name.
ROUTE_TARGET_KINDS = ("HTTPRoute", AI_ROUTE_KIND)
AUTHENTICATION = ("apiKeyAuth", "jwt", "oidc", "basicAuth", "extAuth")
TOKEN_METADATA_NAMESPACE = "io.envoy.ai_gateway"
INTERNAL_LB = {
    "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
    "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
    "networking.gke.io/load-balancer-type": "Internal",
    "cloud.google.com/load-balancer-type": "Internal",
}


def is_route(r: Resource) -> bool:
    return r.is_kubernetes and (
        (r.kind == AI_ROUTE_KIND and r.api_group == AI_GATEWAY_GROUP)
        or (r.kind == "HTTPRoute" and r.api_group == GATEWAY_API_GROUP)
    )


def is_ai_route(r: Resource) -> bool:
    return r.is_kubernetes and r.kind == AI_ROUTE_KIND and r.api_group == AI_GATEWAY_GROUP


def internal_load_balancer(annotations: object) -> bool:
    """Service annotations that keep a cloud load balancer off the internet."""
    return isinstance(annotations, dict) and any(
        str(annotations.get(k, "")).lower() == v.lower() for k, v in INTERNAL_LB.items()
    )


def is_public(gateway: Resource, stack: Stack) -> bool:
    if internal_load_balancer(peek(gateway.props, "spec", "infrastructure", "annotations")):
        return False
    ref = peek(gateway.props, "spec", "infrastructure", "parametersRef")
    if isinstance(ref, dict) and ref.get("kind") == "EnvoyProxy":
        for proxy in stack.kubernetes("EnvoyProxy", ENVOY_GATEWAY_GROUP, cluster=gateway.cluster):
            if proxy.k8s_name == ref.get("name") and proxy.namespace == gateway.namespace:
                service = peek(proxy.props, "spec", "provider", "kubernetes", "envoyService")
                if isinstance(service, dict) and (
                    service.get("type") == "ClusterIP" or internal_load_balancer(service.get("annotations"))
                ):
                    return False
    return True


def parent_gateways(route: Resource, stack: Stack) -> list[tuple[str, Resource | None]]:
    """(namespace/name, Gateway or None when not in this stack) for each Gateway the route attaches to."""
    parents = []
    for ref in as_list(get(route.props, "spec", "parentRefs")):
        if not isinstance(ref, dict) or ref.get("kind", "Gateway") != "Gateway":
            continue
        namespace = ref.get("namespace") or route.namespace
        gateway = next(
            (
                g
                for g in stack.kubernetes("Gateway", GATEWAY_API_GROUP, cluster=route.cluster)
                if g.k8s_name == ref.get("name") and g.namespace == namespace
            ),
            None,
        )
        parents.append((f"{namespace}/{ref.get('name')}", gateway))
    return parents


def _targets(policy: Resource, target: Resource, kinds: tuple[str, ...]) -> bool:
    if policy.namespace != target.namespace:
        return False
    spec = get(policy.props, "spec") or {}
    refs = [r for r in [*as_list(spec.get("targetRefs")), spec.get("targetRef")] if isinstance(r, dict)]
    if any(r.get("kind") in kinds and r.get("name") == target.k8s_name for r in refs):
        return True
    for selector in as_list(spec.get("targetSelectors")):
        labels = selector.get("matchLabels") if isinstance(selector, dict) else None
        if selector.get("kind") in kinds and labels and all(target.labels.get(k) == v for k, v in labels.items()):
            return True
    return False


def effective_policies(route: Resource, kind: str, stack: Stack) -> list[tuple[str, list[Resource]]]:
    """(scope, policies) that govern each public parent of the route: the route's own, else its Gateway's."""
    candidates = list(stack.kubernetes(kind, ENVOY_GATEWAY_GROUP, cluster=route.cluster))
    own = [p for p in candidates if _targets(p, route, ROUTE_TARGET_KINDS)]
    if own:
        return [(f"route {route.namespace}/{route.k8s_name}", own)]
    found: list[tuple[str, list[Resource]]] = []
    for where, gateway in parent_gateways(route, stack):
        if gateway is None:
            found.append((f"gateway {where} (not in this stack, assumed public)", []))
        elif is_public(gateway, stack):
            found.append((f"public gateway {where}", [p for p in candidates if _targets(p, gateway, ("Gateway",))]))
    return found


@rule(
    name="gateway-route-authenticated",
    description="Every route on a public Gateway is covered by a SecurityPolicy that authenticates callers "
    "(API key, JWT, OIDC, basic or external auth).",
    severity="critical",
    remediation="attach a gateway.envoyproxy.io SecurityPolicy with apiKeyAuth (tenant keys) or jwt to the Gateway "
    "or the route; a route-level policy replaces the Gateway's, so it must authenticate too",
    applies_to=("AIGatewayRoute", "HTTPRoute"),
    subject=is_route,
    scope="stack",
)
def route_authenticated(r: Resource, ctx: Context) -> Iterator[Violation]:
    for scope, policies in effective_policies(r, "SecurityPolicy", ctx.require_stack()):
        if not policies:
            yield Violation(f"{r.label} on {scope}: no SecurityPolicy, anyone can call it")
        for policy in policies:
            spec = get(policy.props, "spec") or {}
            if not any(spec.get(method) for method in AUTHENTICATION):
                yield Violation(
                    f"{r.label} on {scope}: SecurityPolicy {policy.k8s_name} configures no authentication",
                    urn=policy.urn,
                )


def _token_rules(policy: Resource) -> list[dict]:
    rate_limit = get(policy.props, "spec", "rateLimit") or {}
    if rate_limit.get("type", "Global") != "Global":
        return []
    return [
        rule_
        for rule_ in as_list(get(rate_limit, "global", "rules"))
        if get(rule_, "cost", "response", "from") == "Metadata"
        and get(rule_, "cost", "response", "metadata", "namespace") == TOKEN_METADATA_NAMESPACE
    ]


@rule(
    name="gateway-route-token-budget",
    description="Every public AIGatewayRoute records token costs (llmRequestCosts) and a global-rate-limit "
    "BackendTrafficPolicy charges them per tenant.",
    severity="high",
    remediation="set spec.llmRequestCosts on the route and attach a BackendTrafficPolicy with rateLimit.type Global "
    "whose rules charge cost.response {from: Metadata, metadata: {namespace: io.envoy.ai_gateway, key: <metadataKey>}}",
    applies_to=("AIGatewayRoute",),
    subject=is_ai_route,
    scope="stack",
)
def route_token_budget(r: Resource, ctx: Context) -> Iterator[Violation]:
    governed = effective_policies(r, "BackendTrafficPolicy", ctx.require_stack())
    if not governed:
        return  # not on a public gateway
    keys = {get(c, "metadataKey") for c in as_list(get(r.props, "spec", "llmRequestCosts")) if isinstance(c, dict)}
    if not keys:
        yield Violation(f"{r.label} records no token costs (spec.llmRequestCosts)")
    for scope, policies in governed:
        rules = [rule_ for p in policies for rule_ in _token_rules(p)]
        if not policies:
            yield Violation(f"{r.label} on {scope}: no BackendTrafficPolicy, tokens are not budgeted")
        elif not rules:
            yield Violation(
                f"{r.label} on {scope}: no global rate-limit rule charges token usage from response metadata"
            )
        elif keys and not any(get(rule_, "cost", "response", "metadata", "key") in keys for rule_ in rules):
            charged = sorted({str(get(rule_, "cost", "response", "metadata", "key")) for rule_ in rules})
            yield Violation(
                f"{r.label} on {scope}: budgets charge {charged}, which the route never records ({sorted(keys)})"
            )


MODEL_HEADER = "x-ai-eg-model"  # the AI Gateway's model header (aigateway.envoyproxy.io AIGatewayRoute docs)
_TENANTISH = ("tenant", "client-id", "clientid", "x-user", "x-org")


def _client_id_headers(route: Resource, stack: Stack) -> list[tuple[str, str | None]]:
    """(scope, header the authenticating policy writes the caller's id into) for each public parent."""
    found = []
    for scope, policies in effective_policies(route, "SecurityPolicy", stack):
        headers = [get(p.props, "spec", "apiKeyAuth", "forwardClientIDHeader") for p in policies]
        found.append((scope, next((str(h).lower() for h in headers if h), None)))
    return found


def _header_matches(match: object) -> list[dict]:
    return [h for h in as_list(peek(match, "headers")) if isinstance(h, dict)]


def _tenant_values(route: Resource, header: str) -> set[str]:
    return {
        str(h.get("value"))
        for rule_ in as_list(get(route.props, "spec", "rules"))
        for match in as_list(peek(rule_, "matches"))
        for h in _header_matches(match)
        if str(h.get("name", "")).lower() == header and h.get("type", "Exact") == "Exact"
    }


def selects_tenant(selectors: list[object], tenant: str, header: str) -> bool:
    """A rate-limit rule's client selectors pick the tenant out by its header: its exact value, or every value
    (Distinct)."""
    for selector in selectors:
        for h in _header_matches(selector):
            if str(h.get("name", "")).lower() != header:
                continue
            if h.get("type") == "Distinct" or (h.get("type", "Exact") == "Exact" and h.get("value") == tenant):
                return True
    return False


def _budgeted(tenant: str, header: str, policies: list[Resource]) -> bool:
    return any(
        selects_tenant(as_list(get(rule_, "clientSelectors")), tenant, header)
        for policy in policies
        for rule_ in _token_rules(policy)
    )


@rule(
    name="gateway-tenant-routes",
    description="On a public gateway whose API-key auth writes the caller's tenant into a header "
    "(apiKeyAuth.forwardClientIDHeader), every model or LoRA route match requires that tenant header with one "
    "tenant's exact id (type Exact, not a regular expression: no tenant reaches another's adapter), no match trusts "
    "a tenant-like header the gateway does not set (a client could send it), and every tenant a route admits has a "
    "token budget charged on that header.",
    severity="critical",
    remediation="render each AIGatewayRoute match as {x-ai-eg-model: <model>, <forwardClientIDHeader>: <tenant>} per "
    "tenant the model is open to, and a Global rate-limit rule per tenant charging token usage",
    applies_to=("AIGatewayRoute",),
    subject=is_ai_route,
    scope="stack",
)
def gateway_tenant_routes(r: Resource, ctx: Context) -> Iterator[Violation]:
    stack = ctx.require_stack()
    for scope, header in _client_id_headers(r, stack):
        for i, rule_ in enumerate(as_list(get(r.props, "spec", "rules"))):
            for j, match in enumerate(as_list(peek(rule_, "matches")) or [{}]):
                names = {str(h.get("name", "")).lower() for h in _header_matches(match)}
                where = f"{r.label} on {scope} rules[{i}].matches[{j}]"
                spoofable = [n for n in names if n != header and n != MODEL_HEADER and any(t in n for t in _TENANTISH)]
                if spoofable:
                    yield Violation(f"{where} trusts {spoofable}, which the client sets (the gateway writes {header})")
                if header is None:
                    continue
                tenant_matches = [h for h in _header_matches(match) if str(h.get("name", "")).lower() == header]
                if not tenant_matches:
                    yield Violation(f"{where} has no {header} match: every tenant's key reaches it")
                for h in tenant_matches:
                    kind = h.get("type", "Exact")
                    if kind != "Exact" or not str(h.get("value") or ""):
                        yield Violation(
                            f"{where} matches {header} by {kind} {h.get('value')!r}, not one tenant's exact id: every "
                            "tenant whose id it matches reaches the route"
                        )
        if header is None:
            continue
        budgets = [p for _, ps in effective_policies(r, "BackendTrafficPolicy", stack) for p in ps]
        for tenant in sorted(_tenant_values(r, header)):
            if not _budgeted(tenant, header, budgets):
                yield Violation(f"{r.label} on {scope} admits tenant {tenant!r} with no token budget on {header}")


def _overrides(rule_: object) -> list[str]:
    """The models a rule's backends serve under another name (AIServiceBackend `modelNameOverride`)."""
    return [str(b["modelNameOverride"]) for b in as_list(peek(rule_, "backendRefs")) if peek(b, "modelNameOverride")]


def _admitted(stack: Stack, cluster: str | None, header: str) -> dict[str, set[str]]:
    """Model -> tenants the gateway's routes admit to it by its own name (rules serving what they match)."""
    found: dict[str, set[str]] = {}
    for route in stack.kubernetes(AI_ROUTE_KIND, AI_GATEWAY_GROUP, cluster=cluster):
        for rule_ in as_list(get(route.props, "spec", "rules")):
            if _overrides(rule_):
                continue
            for match in as_list(peek(rule_, "matches")):
                headers = _header_matches(match)
                models = {str(h.get("value")) for h in headers if str(h.get("name", "")).lower() == MODEL_HEADER}
                tenants = {str(h.get("value")) for h in headers if str(h.get("name", "")).lower() == header}
                for model in models:
                    found.setdefault(model, set()).update(tenants)
    return found


@rule(
    name="gateway-stand-in-access",
    description="A route rule whose backends answer with another model (a stand-in: AIServiceBackend "
    "modelNameOverride) names one model in every match and admits only tenants some rule of the same gateway admits "
    "to the stand-in by its own name: a stand-in never widens which models' GPUs a tenant may use.",
    severity="high",
    remediation="grant each tenant of the model its stand-in too (tenants[].models), or remove "
    "models[].placements[].standIn",
    applies_to=("AIGatewayRoute",),
    subject=is_ai_route,
    scope="stack",
)
def gateway_stand_in_access(r: Resource, ctx: Context) -> Iterator[Violation]:
    stack = ctx.require_stack()
    headers = {header for _, header in _client_id_headers(r, stack) if header is not None}
    admitted = {header: _admitted(stack, r.cluster, header) for header in headers}
    for i, rule_ in enumerate(as_list(get(r.props, "spec", "rules"))):
        stand_ins = _overrides(rule_)
        if not stand_ins:
            continue
        for j, match in enumerate(as_list(peek(rule_, "matches")) or [{}]):
            where = f"{r.label} rules[{i}].matches[{j}]"
            named = [
                h
                for h in _header_matches(match)
                if str(h.get("name", "")).lower() == MODEL_HEADER and h.get("type", "Exact") == "Exact"
            ]
            if not named:
                yield Violation(f"{where} answers with {stand_ins} whatever model a request names")
            for header in sorted(headers):
                tenants = {
                    str(h.get("value")) for h in _header_matches(match) if str(h.get("name", "")).lower() == header
                }
                for stand_in in stand_ins:
                    for tenant in sorted(tenants - admitted[header].get(stand_in, set())):
                        yield Violation(
                            f"{where} lets tenant {tenant!r} be answered by {stand_in}, which no rule of the gateway "
                            "admits it to"
                        )


RULES = [route_authenticated, route_token_budget, gateway_tenant_routes, gateway_stand_in_access]
