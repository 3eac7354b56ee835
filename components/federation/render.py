"""The federation renders a model with the model deployments' own manifests (components/serving).

A federated model is the same InferenceService a region would run, rendered for each of its members
(the first one is Karmada's template, the others become overrides), and the same PodDisruptionBudget,
for the federation's replica range.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from components.addons.model_cache import model_storage_uri
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.config.workloads import ModelSpec
from components.serving.deployment import inference_service_manifest, model_placement, pod_disruption_budget_manifest

# The InferenceService of `model` as it runs in `region`, on its placement there.
Renderer = Callable[[ModelSpec, RegionSpec], dict[str, Any]]
# The PodDisruptionBudget of `model` running up to `max_replicas` replicas on a member, or None.
BudgetRenderer = Callable[[ModelSpec, int], dict[str, Any] | None]


def inference_service_renderer(env: EnvironmentSpec, stack: str) -> Renderer:
    def render(model: ModelSpec, region: RegionSpec) -> dict[str, Any]:
        placement = next(p for p in model.placements if p.region == region.name)
        return inference_service_manifest(
            model_placement(env, model, placement), model_storage_uri(env, region, stack, model)
        )

    return render


def pod_disruption_budget_renderer(env: EnvironmentSpec) -> BudgetRenderer:
    def render(model: ModelSpec, max_replicas: int) -> dict[str, Any] | None:
        widest = model.placements[0].model_copy(update={"max_replicas": max_replicas})
        return pod_disruption_budget_manifest(model_placement(env, model, widest))

    return render
