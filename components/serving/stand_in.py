"""A stand-in while a model wakes: the gateway answers with a light model of the region while the model has no Ready
replica, and returns to the model as soon as one answers.

The AI Gateway v1.1.0 falls over only between AIServiceBackends of one route rule, by Envoy priority: an
InferencePool rule takes one backend and no priority (AI_GATEWAY_NO_FALLBACK_FROM_POOLS), and an Envoy Gateway
response-override redirect replays no request body (ENVOY_CUSTOM_RESPONSE_REDIRECT_DROPS_THE_BODY). So a model with a
stand-in is routed without its endpoint picker, by one rule with two backends (AI_GATEWAY_PRIORITY_FALLBACK):

- priority 0: the model's KServe predictor Service (KSERVE_PREDICTOR_SERVICE), which forwards only to Ready pods, so
  with none the connection is refused;
- priority 1: the stand-in's predictor Service, with `modelNameOverride` set to the stand-in's name (the engine
  serves only its own name).

The Gateway's retry policy retries a refused connection (`connect-failure`) on the next priority
(`numAttemptsPerPriority: 1`), so the first request already gets the stand-in; after 5 such failures the passive
health check ejects the model's Service and requests go to the stand-in at once, until the ejection ends and a
request finds the model Ready. Responses the stand-in served carry `x-inference-platform-stand-in: <stand-in>`: an
EnvoyPatchPolicy puts that value in the stand-in endpoint's metadata, and the listener's late response headers
(ClientTrafficPolicy) copy it, empty (so left out) for every other endpoint (ENVOY_UPSTREAM_METADATA_HEADER).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.domain.model_access import granted_tenants
from components.serving import gateway_specs as specs
from components.serving.deployment import PREDICTOR_SUFFIX
from platform_catalog.names import SERVING_NAMESPACE

HEADER = "x-inference-platform-stand-in"
# Endpoint metadata the header is read from: filter namespace and key.
METADATA_NAMESPACE = "inference-platform"
METADATA_KEY = "stand-in"
ROUTE_PREFIX = "stand-ins"
PREDICTOR_PORT = 80  # the predictor Service's port (KSERVE_PREDICTOR_SERVICE)
STAND_IN_PRIORITY = 1


@dataclass(frozen=True)
class StandIn:
    """One model of a region and the model that answers for it while it has no Ready replica there."""

    model: str
    stand_in: str


def stand_ins(env: EnvironmentSpec, region: RegionSpec) -> list[StandIn]:
    """The region's models with a stand-in, sorted by name; the config checks make each stand-in a model placed here.
    As for any model (`gateway_specs.route_targets`), with API keys one no tenant may call gets no rule: a rule
    without matches would take every request."""
    found = [
        StandIn(model.name, p.stand_in)
        for model in env.models
        for p in model.placements
        if p.region == region.name and p.stand_in is not None
    ]
    if env.gateway.auth == "apiKey":
        found = [s for s in found if granted_tenants(env, s.model)]
    return sorted(found, key=lambda s: s.model)


def direct_backend(model: str) -> str:
    """Name of the Backend and AIServiceBackend that reach `model`'s predictor Service, not its picker."""
    return f"{model}-direct"


def direct_models(region_stand_ins: Sequence[StandIn]) -> dict[str, bool]:
    """Every model a stand-in rule reaches directly, sorted -> whether it is a stand-in (a fallback). The checks keep
    the two apart: a stand-in has no stand-in of its own."""
    found = {s.model: False for s in region_stand_ins} | {s.stand_in: True for s in region_stand_ins}
    return dict(sorted(found.items()))


def backend_spec(model: str, fallback: bool) -> dict[str, Any]:
    """Envoy Gateway Backend: the predictor Service by its cluster DNS name; a stand-in's is a fallback, which Envoy
    Gateway puts at priority 1 as the AI Gateway's `priority` does."""
    hostname = f"{model}{PREDICTOR_SUFFIX}.{SERVING_NAMESPACE}.svc.cluster.local"
    spec: dict[str, Any] = {"endpoints": [{"fqdn": {"hostname": hostname, "port": PREDICTOR_PORT}}]}
    if fallback:
        spec["fallback"] = True
    return spec


def ai_service_backend_spec(model: str) -> dict[str, Any]:
    return {
        "schema": {"name": "OpenAI"},
        "backendRef": {"group": "gateway.envoyproxy.io", "kind": "Backend", "name": direct_backend(model)},
    }


def route_names(region_stand_ins: Sequence[StandIn]) -> list[str]:
    """AIGatewayRoute name of each stand-in rule, in order: at most 15 rules per route."""
    return [f"{ROUTE_PREFIX}-{n // specs.MAX_RULES_PER_ROUTE + 1}" for n in range(len(region_stand_ins))]


def route_specs(env: EnvironmentSpec, region: RegionSpec, hostname: str) -> dict[str, dict[str, Any]]:
    """AIGatewayRoute name -> spec: per model with a stand-in, the model's own rule (matches, timeouts) with the two
    backends by priority."""
    found = stand_ins(env, region)
    routes: dict[str, dict[str, Any]] = {}
    rule_names = specs.rule_names([s.model for s in found])
    for s, route, rule_name in zip(found, route_names(found), rule_names, strict=True):
        target = specs.RouteTarget(s.model, "AIServiceBackend", direct_backend(s.model))
        rule = specs.route_rule(env, target, rule_name)
        rule["backendRefs"] = [
            {"name": direct_backend(s.model), "priority": 0},
            {
                "name": direct_backend(s.stand_in),
                "priority": STAND_IN_PRIORITY,
                "modelNameOverride": s.stand_in,
            },
        ]
        routes.setdefault(route, specs.route_spec(hostname, []))["rules"].append(rule)
    return routes


def cluster_name(route: str, rule_index: int) -> str:
    """The Envoy cluster Envoy Gateway builds for one rule of the HTTPRoute the AI Gateway renders from `route`
    (same name, same rule order)."""
    return f"httproute/{SERVING_NAMESPACE}/{route}/rule/{rule_index}"


def patch_policy_spec(found: Sequence[StandIn]) -> dict[str, Any]:
    """EnvoyPatchPolicy: the stand-in endpoint of each stand-in cluster (its second locality: backendRefs[1]) of the
    region's stand-ins (`stand_ins`) carries the stand-in's name in its metadata, which the late response header
    reads."""
    index_in_route: dict[str, int] = {}
    patches = []
    for s, route in zip(found, route_names(found), strict=True):
        rule_index = index_in_route.get(route, 0)
        index_in_route[route] = rule_index + 1
        patches.append(
            {
                "type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
                "name": cluster_name(route, rule_index),
                "operation": {
                    "op": "add",
                    "path": f"/load_assignment/endpoints/{STAND_IN_PRIORITY}/lb_endpoints/0/metadata",
                    "value": {"filter_metadata": {METADATA_NAMESPACE: {METADATA_KEY: s.stand_in}}},
                },
            }
        )
    return {"targetRef": specs.GATEWAY_REF, "type": "JSONPatch", "jsonPatches": patches}


def late_response_headers() -> dict[str, Any]:
    """ClientTrafficPolicy headers.lateResponseHeaders: the stand-in's name from the endpoint that answered; Envoy
    leaves out a header whose value is empty, so only the stand-in's responses carry it."""
    value = f'%UPSTREAM_METADATA(["{METADATA_NAMESPACE}","{METADATA_KEY}"])%'
    return {"set": [{"name": HEADER, "value": value}]}


def with_fallback(client_traffic: dict[str, Any], backend_traffic: dict[str, Any]) -> None:
    """The Gateway's policies where a model has a stand-in: the header, and a refused attempt retried on the next
    priority (previous_priorities) rather than on the same Service."""
    client_traffic.setdefault("headers", {})["lateResponseHeaders"] = late_response_headers()
    backend_traffic["retry"]["numAttemptsPerPriority"] = 1
