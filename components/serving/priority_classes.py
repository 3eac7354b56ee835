"""Request priority classes, set by the gateway and obeyed by the endpoint picker (docs/serving.md, Request priority classes).

A request's class is that of the tenant whose API key authenticated it (`tenants[].priority`), never the client's:
1. the Gateway's ClientTrafficPolicy drops the picker's control headers a client sends, as the request arrives
   (PICKER_CONTROL_HEADERS; the picker would take its priority, fairness flow or target model from them,
   upstream.GIE_OBJECTIVE_FROM_HEADER), on every Gateway;
2. where a pool is shared by several classes, a Lua EnvoyExtensionPolicy on the Gateway (PRIORITY_LUA) names the
   request's InferenceObjective in `x-llm-d-inference-objective` (OBJECTIVE_HEADER), from `x-tenant-id` (the API
   key's client id, upstream.ENVOY_API_KEY_AUTH_OVERWRITES_THE_CLIENT_ID) and `x-ai-eg-model`, both set by then,
   before the picker runs (upstream.ENVOY_GATEWAY_LUA_RUNS_AFTER_AUTH_AND_MODEL);
3. each such pool has an InferenceObjective per class and runs flow control with a band per class: while the pool
   is saturated the higher classes are dispatched first, and best effort waits in a bounded band, shed first
   (upstream.GIE_FLOW_CONTROL_BY_PRIORITY).
The engines keep first-come first-served: at these pins the body a model server reads can always be the client's
(upstream.AI_GATEWAY_REPLAYS_THE_CLIENT_BODY_TO_POOLS) and vLLM's priority scheduling obeys the body's `priority`
(upstream.VLLM_PRIORITY_SCHEDULING), so the class is applied where the gateway controls it, the picker's queue.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.config.workloads import PriorityClass
from components.domain.model_access import granted_tenants
from components.domain.priority import OBJECTIVE_PRIORITY, model_routes
from components.k8s import names
from components.serving.deployment import ModelPlacement, model_placements
from platform_catalog.names import SERVING_NAMESPACE
from platform_catalog.request_priority import OBJECTIVE_API, PRIORITY_LUA

POLICY_NAME = "request-priority"
# Classes whose requests held at the picker ask for more replicas; best effort only uses what is there.
SCALING_CLASSES: tuple[PriorityClass, ...] = ("interactive", "batch")
_NAME_OF: dict[PriorityClass, str] = {"interactive": "interactive", "batch": "batch", "bestEffort": "best-effort"}


def objective_name(pool: str, priority_class: PriorityClass) -> str:
    """One objective per class and pool: the picker looks objectives up by name in the namespace of every pool."""
    return f"{pool}-{_NAME_OF[priority_class]}"


def objective_manifests(p: ModelPlacement) -> list[dict[str, Any]]:
    """The pool's InferenceObjectives, one per class of its tenants; none when they are all of one class."""
    return [
        {
            "apiVersion": OBJECTIVE_API,
            "kind": "InferenceObjective",
            "metadata": {
                "name": objective_name(p.name, priority_class),
                "namespace": SERVING_NAMESPACE,
                "labels": {names.MODEL_LABEL: p.name},
            },
            "spec": {
                "priority": OBJECTIVE_PRIORITY[priority_class],
                "poolRef": {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": p.name},
            },
        }
        for priority_class in p.request_classes
    ]


def priority_bands(p: ModelPlacement) -> list[dict[str, Any]]:
    """The picker's flow-control band of each class. Best effort holds at most one replica's batch (maxNumSeqs)
    of requests; the next is refused at once (429), so best-effort traffic cannot pile up behind the others."""
    bands: list[dict[str, Any]] = []
    for priority_class in p.request_classes:
        band: dict[str, Any] = {"priority": OBJECTIVE_PRIORITY[priority_class]}
        if priority_class == "bestEffort":
            band["maxRequests"] = str(p.model.max_num_seqs)
        bands.append(band)
    return bands


def classed(placements: Iterable[ModelPlacement]) -> list[ModelPlacement]:
    """The pools shared by tenants of several classes (aggregated placements: a disaggregated model's picker is
    KServe's): the Gateway runs the priority Lua when a cluster has one."""
    return [p for p in placements if p.request_classes]


def objectives_context(env: EnvironmentSpec, region: RegionSpec) -> dict[str, dict[str, str]]:
    """The Lua's filter context: for each `model` a caller may send to a classed pool (the model, its adapters),
    each tenant granted it -> its objective."""
    classes = {t.name: t.priority for t in env.tenants}
    return {
        route: {tenant: objective_name(p.name, classes[tenant]) for tenant in granted_tenants(env, route)}
        for p in classed(model_placements(env, region))
        for route in model_routes(p.model)
        if granted_tenants(env, route)
    }


def priority_policy_spec(objectives: Mapping[str, Mapping[str, str]], gateway_ref: dict[str, str]) -> dict[str, Any]:
    """The Gateway's EnvoyExtensionPolicy: PRIORITY_LUA with the region's objectives (`objectives_context`) as its
    filter context."""
    return {
        "targetRefs": [gateway_ref],
        "lua": [
            {
                "type": "Inline",
                "inline": PRIORITY_LUA,
                "filterContext": {"objectives": {model: dict(tenants) for model, tenants in objectives.items()}},
            }
        ],
    }
