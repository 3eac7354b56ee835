"""PLACEHOLDER rendering of federated InferenceServices, until the KServe model deployments land.

INTEGRATOR: issue 7 builds `inference_service_manifest(...)`, the one renderer of InferenceServices.
When it is merged, make `inference_service_renderer` return a function that calls it for
(model, region) and delete `_placeholder_manifest`; `stacks/environment.py` takes the renderer from
here and nothing else changes. Until then this minimal, CRD-valid manifest (no sizing, no GPU
resources) keeps the federation path of the program whole.
"""

from __future__ import annotations

from collections.abc import Callable

from components.addons.model_cache import VLLM_LOAD_ARGS, model_storage_uri
from components.k8s.names import MODEL_LABEL, MODEL_SERVER_SERVICE_ACCOUNT, SERVING_NAMESPACE
from components.k8s.topology import gpu_tolerations, pool_selector
from components.spec.environment import EnvironmentSpec
from components.spec.region import RegionSpec
from components.spec.workloads import ModelSpec

# The InferenceService of `model` as it runs in `region` (on its placement there): the template Karmada
# propagates, before the federation's replica counts and per-member overrides.
Renderer = Callable[[ModelSpec, RegionSpec], dict]

# runtime -> (model format, ClusterServingRuntime) [kserve@v0.20.0:config/runtimes, FACTS.md]
_RUNTIMES = {"vllm": ("vLLM", "kserve-vllmserver"), "triton": ("triton", "kserve-tritonserver")}


def inference_service_renderer(env: EnvironmentSpec, stack: str) -> Renderer:
    def render(model: ModelSpec, region: RegionSpec) -> dict:
        return _placeholder_manifest(env, stack, model, region)

    return render


def _placeholder_manifest(env: EnvironmentSpec, stack: str, model: ModelSpec, region: RegionSpec) -> dict:
    placement = next(p for p in model.placements if p.region == region.name)
    model_format, runtime = _RUNTIMES[model.runtime]
    served = {
        "modelFormat": {"name": model_format},
        "runtime": runtime,
        "storageUri": model_storage_uri(env, region, stack, model),
    }
    if model.runtime == "vllm":
        served["args"] = list(VLLM_LOAD_ARGS)
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": model.name, "namespace": SERVING_NAMESPACE, "labels": {MODEL_LABEL: model.name}},
        "spec": {
            "predictor": {
                "serviceAccountName": MODEL_SERVER_SERVICE_ACCOUNT,
                "minReplicas": placement.min_replicas,
                "maxReplicas": placement.max_replicas,
                "nodeSelector": pool_selector(env.label_domain, placement.pool),
                "tolerations": gpu_tolerations(),
                "model": served,
            }
        },
    }
