"""Specs of the inference gateway's objects, computed from config alone so they can be tested without resources.

Requests enter a region's Gateway over HTTPS, are authenticated by tenant API key (SecurityPolicy,
the tenant id forwarded as `x-tenant-id`), routed by model (AIGatewayRoute rules on `x-ai-eg-model`,
which the AI Gateway sets from the request body) to the model's InferencePool or an external
provider, and charged against the tenant's budgets after the response (BackendTrafficPolicy global
rate limits over the token counts the AI Gateway records in `io.envoy.ai_gateway` metadata).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from components.config.environment import EnvironmentSpec
from components.config.gateway import GatewaySpec, RegionGatewaySpec
from components.config.region import RegionSpec
from components.config.workloads import TenantSpec
from components.domain.model_access import granted_tenants
from components.k8s import names
from components.serving.deployment import QUEUE_ANSWER_MARGIN_SECONDS, model_placements, queue_wait_seconds
from components.serving.llm_inference_service import pool_name as llmisvc_pool_name
from platform_catalog.names import SERVING_NAMESPACE
from platform_catalog.request_priority import PICKER_CONTROL_HEADERS

GATEWAY_API = "gateway.networking.k8s.io/v1"
ENVOY_GATEWAY_API = "gateway.envoyproxy.io/v1alpha1"
AI_GATEWAY_API = "aigateway.envoyproxy.io/v1beta1"
INFERENCE_POOL_GROUP = "inference.networking.k8s.io"
INFERENCE_POOL_API = f"{INFERENCE_POOL_GROUP}/v1"

CONTROLLER_NAME = "gateway.envoyproxy.io/gatewayclass-controller"  # gateway-helm's config.envoyGateway default
GATEWAY_CLASS = "envoy-ai-gateway"
GATEWAY_REF = {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": names.GATEWAY_NAME}
LISTENER = "https"
HTTPS_PORT = 443

# The AI Gateway copies the request body's `model` into this header before routing (FACTS.md).
MODEL_HEADER = "x-ai-eg-model"
# Envoy Gateway's filter names (api/v1alpha1/envoyproxy_types.go EnvoyFilter) for EnvoyProxy.spec.filterOrder.
CUSTOM_RESPONSE_FILTER = "envoy.filters.http.custom_response"
API_KEY_AUTH_FILTER = "envoy.filters.http.api_key_auth"
MAX_RULES_PER_ROUTE = 15  # AIGatewayRoute CRD: spec.rules maxItems
# Token counts the AI Gateway writes to dynamic metadata per request, by budget type: metadata key and
# llmRequestCosts type (ai-gateway@v1.1.0:examples/token_ratelimit/token_ratelimit.yaml).
TOKEN_METADATA_NAMESPACE = "io.envoy.ai_gateway"
TOKEN_COSTS: dict[str, tuple[str, str]] = {
    "input": ("llm_input_token", "InputToken"),
    "output": ("llm_output_token", "OutputToken"),
    "total": ("llm_total_token", "TotalToken"),
}
RATE_UNITS = {"minute": "Minute", "hour": "Hour"}

# Tenants' keys: one Secret entry per tenant (key = client id = tenant name, value = API key). Clients
# send `Authorization: Bearer <key>`; Envoy Gateway compares the key without the scheme
# (envoyproxy/gateway#7706, docs #7767).
API_KEYS_SECRET = "tenant-api-keys"
API_KEY_HEADER = "authorization"

# Cloud load balancer of the Envoy Service. EKS runs no AWS Load Balancer Controller here, so the in-tree
# provider's annotations apply: an NLB (L4: TLS ends at Envoy; idle timeout 350 s, longer than ours).
LOAD_BALANCER_ANNOTATIONS: dict[tuple[str, str], dict[str, str]] = {
    ("aws", "public"): {"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"},
    ("aws", "internal"): {
        "service.beta.kubernetes.io/aws-load-balancer-type": "nlb",
        "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
    },
    ("gcp", "public"): {},
    ("gcp", "internal"): {"networking.gke.io/load-balancer-type": "Internal"},
}
# Envoy proxy container: its defaults request 100m / 512Mi with no limits.
PROXY_RESOURCES = {
    True: {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "4", "memory": "4Gi"}},
    False: {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
}
# Request bodies the proxy buffers for the AI Gateway to read `model` from: long prompts and images.
REQUEST_BUFFER = "16Mi"


def seconds(n: int) -> str:
    return f"{n}s"


def proxy_replicas(region_gateway: RegionGatewaySpec, production: bool) -> int:
    return region_gateway.replicas or (2 if production else 1)


def envoy_proxy_spec(
    cloud: str, region_gateway: RegionGatewaySpec, gateway: GatewaySpec, production: bool
) -> dict[str, Any]:
    """The proxies' Deployment and Service: sized, spread over a PDB, behind the right load balancer.

    Draining waits as long as the longest request, so a rollout does not cut streams; Envoy Gateway
    gives the pods that drain timeout plus 300 s to terminate.
    """
    replicas = proxy_replicas(region_gateway, production)
    service: dict[str, Any] = {
        "type": "LoadBalancer",
        "externalTrafficPolicy": "Local",  # keeps client addresses for the access log and source ranges
        "annotations": LOAD_BALANCER_ANNOTATIONS[(cloud, region_gateway.exposure)],
    }
    if region_gateway.allowed_cidrs:
        service["loadBalancerSourceRanges"] = [str(c) for c in region_gateway.allowed_cidrs]
    kubernetes: dict[str, Any] = {
        "envoyDeployment": {"replicas": replicas, "container": {"resources": PROXY_RESOURCES[production]}},
        "envoyService": service,
    }
    if replicas > 1:
        kubernetes["envoyPDB"] = {"minAvailable": replicas - 1}
    return {
        "provider": {"type": "Kubernetes", "kubernetes": kubernetes},
        "shutdown": {"drainTimeout": seconds(gateway.request_timeout_seconds), "minDrainDuration": "10s"},
        # The AI Gateway's ext_proc goes in front of the first of a list of filters that includes custom_response,
        # which Envoy Gateway puts first: moved behind API-key auth, the model's route is chosen with the tenant
        # known (AI_GATEWAY_EXTPROC_PRECEDES_CUSTOM_RESPONSE). Without API keys there is no such filter and no move.
        "filterOrder": [{"name": CUSTOM_RESPONSE_FILTER, "after": API_KEY_AUTH_FILTER}],
    }


def gateway_spec(hostname: str, region_gateway: RegionGatewaySpec) -> dict[str, Any]:
    """One HTTPS listener for the region's hostname; routes may attach from the serving namespace only."""
    return {
        "gatewayClassName": GATEWAY_CLASS,
        "infrastructure": {
            "parametersRef": {"group": "gateway.envoyproxy.io", "kind": "EnvoyProxy", "name": names.GATEWAY_NAME}
        },
        "listeners": [
            {
                "name": LISTENER,
                "protocol": "HTTPS",
                "port": HTTPS_PORT,
                "hostname": hostname,
                "tls": {
                    "mode": "Terminate",
                    "certificateRefs": [{"group": "", "kind": "Secret", "name": region_gateway.tls_secret}],
                },
                "allowedRoutes": {
                    "namespaces": {
                        "from": "Selector",
                        "selector": {"matchLabels": {"kubernetes.io/metadata.name": SERVING_NAMESPACE}},
                    },
                    "kinds": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}],
                },
            }
        ],
    }


def client_traffic_policy_spec(gateway: GatewaySpec) -> dict[str, Any]:
    """Client side: streams may idle as long as a model server may, large prompts fit the buffer, and the endpoint
    picker's control headers a client sends are dropped on arrival (priority_classes.PICKER_CONTROL_HEADERS: the
    picker obeys them whoever sets them)."""
    return {
        "targetRefs": [GATEWAY_REF],
        "headers": {"earlyRequestHeaders": {"remove": list(PICKER_CONTROL_HEADERS)}},
        "timeout": {
            "http": {
                "streamIdleTimeout": seconds(gateway.idle_timeout_seconds),
                # Envoy disarms it only once every decoding filter has let the request go upstream, the endpoint
                # picker's too: it runs while the picker queues the request (upstream.ENVOY_REQUEST_TIMEOUT_COVERS_
                # THE_PICKERS_QUEUE), so it must outlast the queue, whose 503 then comes first.
                "requestReceivedTimeout": seconds(queue_wait_seconds(gateway) + QUEUE_ANSWER_MARGIN_SECONDS),
            }
        },
        "connection": {"bufferLimit": REQUEST_BUFFER},
    }


def security_policy_spec() -> dict[str, Any]:
    """Every route on the Gateway requires a tenant API key; the key never reaches a backend."""
    return {
        "targetRefs": [GATEWAY_REF],
        "apiKeyAuth": {
            "credentialRefs": [{"group": "", "kind": "Secret", "name": API_KEYS_SECRET}],
            "extractFrom": [{"headers": [API_KEY_HEADER]}],
            "forwardClientIDHeader": names.TENANT_HEADER,
            "sanitize": True,
        },
    }


def _tenant_selector(tenant: str) -> list[dict[str, Any]]:
    return [{"headers": [{"name": names.TENANT_HEADER, "type": "Exact", "value": tenant}]}]


def rate_limit_rules(tenants: Sequence[TenantSpec]) -> list[dict[str, Any]]:
    """One global rule per tenant and token type, plus one per tenant request rate.

    Token rules check the budget before the request (cost 0) and charge the tokens the response used;
    `shared` makes one bucket per tenant across every route of the Gateway, whatever model it calls.
    """
    rules: list[dict[str, Any]] = []
    for tenant in tenants:
        if tenant.budget is None:
            continue
        for kind, rate in tenant.budget.tokens().items():
            rules.append(
                {
                    "clientSelectors": _tenant_selector(tenant.name),
                    "limit": {"requests": rate.limit, "unit": RATE_UNITS[rate.per]},
                    "cost": {
                        "request": {"from": "Number", "number": 0},
                        "response": {
                            "from": "Metadata",
                            "metadata": {"namespace": TOKEN_METADATA_NAMESPACE, "key": TOKEN_COSTS[kind][0]},
                        },
                    },
                    "shared": True,
                }
            )
        if tenant.budget.requests is not None:
            rate = tenant.budget.requests
            rules.append(
                {
                    "clientSelectors": _tenant_selector(tenant.name),
                    "limit": {"requests": rate.limit, "unit": RATE_UNITS[rate.per]},
                    "shared": True,
                }
            )
    return rules


# Seconds a client is told to wait before retrying a 503 (Retry-After): a model waking from zero (its cold start is
# minutes; each retry is held WAKE_HOLD_SECONDS and keeps it waking), or one with no free replica.
RETRY_AFTER_SECONDS = {"waking": 30, "busy": 2}
# An endpoint picker that cannot be reached fails the request with Envoy's ext_proc default, 500, whatever its
# pool's failureMode says (AI_GATEWAY_PICKER_FAIL_CLOSED): the gateway answers 503 for it, to be retried soon.
PICKER_DOWN_RETRY_AFTER_SECONDS = 1


def _error_body(message: str) -> dict[str, Any]:
    """An OpenAI-style error body, which the clients of /v1 parse."""
    body = json.dumps({"error": {"message": message, "type": "service_unavailable", "code": 503}})
    return {"type": "Inline", "inline": body}


def response_overrides(waking: bool) -> list[dict[str, Any]]:
    """What a client gets instead of Envoy's and the picker's bare errors.

    - a 500 Envoy generated itself (the picker unreachable, or another ext_proc or ext_authz service of the
      path): 503 with Retry-After 1, since a picker restarts in seconds and production runs two;
    - any 503 (the picker's "no endpoint" / "timed out in queue" for a model at zero or saturated, or no healthy
      replica): the same 503 with Retry-After, 30 s where a model of the region may be at zero, else 2 s.
    Responses from the model servers themselves (source Backend) keep their own 500s.
    """
    retry = RETRY_AFTER_SECONDS["waking" if waking else "busy"]
    return [
        {
            "match": {"statusCodes": [{"type": "Value", "value": 500}]},
            "source": "Local",
            "response": {
                "statusCode": 503,
                "contentType": "application/json",
                "body": _error_body(
                    "the gateway could not reach a service on the request's path (such as the model's endpoint picker); retry"
                ),
                "header": {"set": [{"name": "Retry-After", "value": str(PICKER_DOWN_RETRY_AFTER_SECONDS)}]},
            },
        },
        {
            "match": {"statusCodes": [{"type": "Value", "value": 503}]},
            "response": {
                "contentType": "application/json",
                "body": _error_body(
                    "no replica of the model can take the request now (it may be starting from zero); retry after "
                    "the Retry-After seconds"
                ),
                "header": {"set": [{"name": "Retry-After", "value": str(retry)}]},
            },
        },
    ]


def backend_traffic_policy_spec(
    gateway: GatewaySpec, tenants: Sequence[TenantSpec], waking: bool = False
) -> dict[str, Any]:
    """Budgets, retries, circuit breaking, passive health checks and error answers for every route of the Gateway.

    Retries only where nothing was generated yet: a refused connection or an upstream's 503 (a replica draining;
    on a stand-in route, the next priority). A picker's own 503 is an ext_proc local reply, never retried, and on
    an InferencePool route a retry goes back to the pod the picker chose. Outlier detection ejects a backend host
    that keeps failing.
    `tenants`: their budgets (`rate_limit_rules`); `waking`: a model of the region may be at zero replicas
    (`response_overrides`).
    """
    breaker = gateway.circuit_breaker
    spec: dict[str, Any] = {
        "targetRefs": [GATEWAY_REF],
        "retry": {
            "numRetries": gateway.retries,
            # the codes only count with their trigger (ENVOY_GATEWAY_STATUS_RETRIES_NEED_THEIR_TRIGGER)
            "retryOn": {"triggers": ["connect-failure", "retriable-status-codes"], "httpStatusCodes": [503]},
            "perRetry": {"backOff": {"baseInterval": "250ms", "maxInterval": "2s"}},
        },
        "circuitBreaker": {
            "maxConnections": breaker.max_connections,
            "maxPendingRequests": breaker.max_pending_requests,
            "maxParallelRequests": breaker.max_parallel_requests,
            "maxParallelRetries": breaker.max_parallel_retries,
        },
        "healthCheck": {
            "passive": {
                "consecutive5XxErrors": 5,
                "consecutiveLocalOriginFailures": 5,
                "interval": "10s",
                "baseEjectionTime": "30s",
                "maxEjectionPercent": 50,
            }
        },
        "timeout": {"tcp": {"connectTimeout": "5s"}},
    }
    rules = rate_limit_rules(tenants)
    if rules:
        spec["rateLimit"] = {"type": "Global", "global": {"rules": rules}}
    spec["responseOverride"] = response_overrides(waking)
    return spec


@dataclass(frozen=True)
class RouteTarget:
    """Where one model's requests go: its InferencePool, or an external provider's AIServiceBackend."""

    model: str
    kind: Literal["InferencePool", "AIServiceBackend"]
    backend: str


def route_targets(env: EnvironmentSpec, region: RegionSpec) -> list[RouteTarget]:
    """The models this region's gateway routes, sorted by name.

    Each LoRA adapter its pods load gets a route of its own to the base model's pool. With API keys, a model
    no tenant is granted gets no route (nobody may call it). A disaggregated model's
    pool is the one KServe creates for its LLMInferenceService (`llm_inference_service.py`).
    """
    pools = {
        p.name: p.name if p.disaggregation is None else llmisvc_pool_name(p.name)
        for p in model_placements(env, region)
        if p.placement.stand_in is None  # routed by its stand-in rule instead (`stand_in.py`)
    }
    # A LoRA adapter is a `model` of its own, sent to its base model's pool: every pod there loads it.
    targets = [
        RouteTarget(name, "InferencePool", pool)
        for m in env.models
        if (pool := pools.get(m.name)) is not None
        for name in (m.name, *(a.name for a in m.served_adapters))
    ]
    targets += [
        RouteTarget(model, "AIServiceBackend", provider.name)
        for provider in env.gateway.external_providers
        if provider.offered_in(region.name)
        for model in provider.models
    ]
    if env.gateway.auth == "apiKey":
        targets = [t for t in targets if granted_tenants(env, t.model)]
    return sorted(targets, key=lambda t: t.model)


def rule_names(models: list[str]) -> list[str]:
    """DNS subdomains for the rules (copied to the generated HTTPRoute rules), unique within a route as the
    CRD requires: external model ids may hold `:`, `/` or capitals."""
    names_: list[str] = []
    for model in models:
        base = re.sub(r"[^a-z0-9.-]+", "-", model.lower()).strip("-.")[:240] or "model"
        name, n = base, 1
        while name in names_:
            n += 1
            name = f"{base}-{n}"
        names_.append(name)
    return names_


def route_rule(env: EnvironmentSpec, target: RouteTarget, name: str) -> dict[str, Any]:
    """Match the model, and (with API keys) only the tenants granted it: others get no route (404)."""
    model = {"type": "Exact", "name": MODEL_HEADER, "value": target.model}
    if env.gateway.auth == "apiKey":
        matches = [
            {"headers": [model, {"type": "Exact", "name": names.TENANT_HEADER, "value": tenant}]}
            for tenant in granted_tenants(env, target.model)
        ]
    else:
        matches = [{"headers": [model]}]
    backend: dict[str, Any] = {"name": target.backend}
    if target.kind == "InferencePool":
        backend = {"group": INFERENCE_POOL_GROUP, "kind": "InferencePool", "name": target.backend}
    return {
        "name": name,
        "matches": matches,
        "backendRefs": [backend],
        # The AI Gateway's own default is 60 s, too short for long generations; the idle timeout bounds
        # the wait for each next byte (the first token included) and lets a retry try another replica.
        "timeouts": {"request": seconds(env.gateway.request_timeout_seconds)},
        "streamIdleTimeout": seconds(env.gateway.idle_timeout_seconds),
    }


def llm_request_costs() -> list[dict[str, Any]]:
    return [{"metadataKey": key, "type": cost} for key, cost in TOKEN_COSTS.values()]


def route_specs(env: EnvironmentSpec, region: RegionSpec, hostname: str) -> dict[str, dict[str, Any]]:
    """AIGatewayRoute name -> spec: one rule per routed model, at most 15 rules per route."""
    targets = route_targets(env, region)
    rules = [
        route_rule(env, target, name)
        for target, name in zip(targets, rule_names([t.model for t in targets]), strict=True)
    ]
    chunks = [rules[i : i + MAX_RULES_PER_ROUTE] for i in range(0, len(rules), MAX_RULES_PER_ROUTE)]
    return {f"models-{n}": route_spec(hostname, chunk) for n, chunk in enumerate(chunks, start=1)}


def route_spec(hostname: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    """An AIGatewayRoute on the Gateway's listener for the region's hostname, charging token costs."""
    return {
        "parentRefs": [{**GATEWAY_REF, "namespace": names.ENVOY_GATEWAY_NAMESPACE, "sectionName": LISTENER}],
        "hostnames": [hostname],
        "rules": rules,
        "llmRequestCosts": llm_request_costs(),
    }
