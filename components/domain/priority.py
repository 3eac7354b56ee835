"""Request priority classes: which tenant's request a model server shared by several tenants serves first.

A tenant's class (`tenants[].priority`) reaches the model's endpoint picker through an InferenceObjective per class
on the pool, whose priority orders the picker's flow control: higher first, 0 for a request naming none
(upstream.GIE_OBJECTIVE_FROM_HEADER). A pool gets them only when its tenants are of more than one class: with one
there is nothing to order. The model servers stay first-come first-served: vLLM reads a priority only from the
request body, which a client writes (upstream.VLLM_PRIORITY_SCHEDULING).
"""

from __future__ import annotations

from components.config.environment import EnvironmentSpec
from components.config.workloads import ModelSpec, PriorityClass
from components.domain.model_access import granted_tenants

# The picker's priority per class. `batch` is the picker's own default (0), so a tenant that sets nothing is
# ordered as before; `bestEffort` is negative, which the picker treats as sheddable.
OBJECTIVE_PRIORITY: dict[PriorityClass, int] = {"interactive": 1, "batch": 0, "bestEffort": -1}


def model_routes(model: ModelSpec) -> tuple[str, ...]:
    """The names callers send as `model` to reach the model's pool: the model and each adapter its pods load."""
    return (model.name, *(adapter.name for adapter in model.served_adapters))


def tenant_classes(env: EnvironmentSpec, model: ModelSpec) -> dict[str, PriorityClass]:
    """Tenant -> class of every tenant the gateway routes to the model's pool, by tenant name."""
    classes = {t.name: t.priority for t in env.tenants}
    callers = {tenant for route in model_routes(model) for tenant in granted_tenants(env, route)}
    return {tenant: classes[tenant] for tenant in sorted(callers)}


def request_classes(env: EnvironmentSpec, model: ModelSpec) -> tuple[PriorityClass, ...]:
    """The classes of the tenants calling the model's pool, most urgent first, when there is more than one; else none:
    with one class there is nothing to order."""
    present = set(tenant_classes(env, model).values())
    if len(present) < 2:
        return ()
    return tuple(sorted(present, key=lambda c: -OBJECTIVE_PRIORITY[c]))
