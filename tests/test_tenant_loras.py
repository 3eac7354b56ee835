"""Tenant LoRA adapters: loaded by the base model's pods, sized into its memory, routed to their tenant only."""

from __future__ import annotations

import pytest

from tests.harness import cluster_objects, config_errors, raw_environment

ADAPTER = "legal-contracts"


def _args(prod_plan, cluster: str) -> list[str]:
    isvc = cluster_objects(prod_plan, "InferenceService")[(cluster, "llama-3-1-8b")]
    return isvc["spec"]["predictor"]["model"]["args"]


@pytest.mark.parametrize("cluster", ["prod-use1", "prod-usw2"])
def test_base_model_pods_load_the_tenants_adapter(prod_plan, cluster):
    args = _args(prod_plan, cluster)
    i = args.index("--lora-modules")
    assert args[i + 1] == f"{ADAPTER}=/mnt/models/loras/{ADAPTER}"  # under the base model's storagePath
    assert {"--enable-lora", "--max-loras=1", "--max-lora-rank=16"} <= set(args)


def test_the_adapter_slot_is_sized_into_the_base_models_memory(prod_plan):
    """8B (8.03e9 params, bf16): 16,060,000,000 bytes; one rank-16 slot on 32 layers x 7 projections, A and B of
    16 x 4096 in 16-bit: 2 x 32 x 7 x 16 x 4096 x 2 = 58,720,256 bytes. (16,060,000,000 + 58,720,256) / 2^30 =
    15.01 GiB, where the weights alone are 14.96."""
    isvc = cluster_objects(prod_plan, "InferenceService")[("prod-use1", "llama-3-1-8b")]
    assert isvc["metadata"]["annotations"]["inference-platform.io/weights-gib"] == "15.01"


def test_only_the_owner_reaches_its_adapter_on_the_base_models_pool(prod_plan):
    route = cluster_objects(prod_plan, "AIGatewayRoute")[("prod-use1", "models-1")]
    (rule,) = [r for r in route["spec"]["rules"] if r["name"] == ADAPTER]
    assert rule["backendRefs"] == [
        {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "llama-3-1-8b"}
    ]
    assert [[h["value"] for h in m["headers"]] for m in rule["matches"]] == [[ADAPTER, "legal"]]


@pytest.mark.parametrize(
    ("lora", "expected"),
    [
        (
            {"name": ADAPTER, "baseModel": "llama-3-1-7b", "rank": 16},
            "tenants[3].loras[0].baseModel: no model named 'llama-3-1-7b'; use one of llama-3-1-70b, llama-3-1-70b-rag, "
            "llama-3-1-8b, mistral-7b-trt",
        ),
        (
            {"name": ADAPTER, "baseModel": "llama-3-1-8b", "rank": 64},
            "tenants[3].loras[0].rank: rank 64 is above the 16 llama-3-1-8b's LoRA slots are sized for; raise that "
            "model's maxLoraRank to 64",
        ),
        (
            {"name": "llama-3-1-70b", "baseModel": "llama-3-1-8b", "rank": 16},
            "tenants[3].loras[0].name: 'llama-3-1-70b' is already a model or adapter name; clients select adapters "
            "by name",
        ),
        (
            {"name": ADAPTER, "baseModel": "mistral-7b-trt", "rank": 16},
            "tenants[3].loras[0].baseModel: mistral-7b-trt runs Triton, whose TensorRT-LLM engine is built with its "
            "adapters; use a vLLM model",
        ),
    ],
)
def test_impossible_adapters_are_config_errors(lora, expected):
    raw = raw_environment("prod")
    assert raw["tenants"][3]["name"] == "legal"
    raw["tenants"][3]["loras"] = [lora]
    assert config_errors(raw) == [expected]
