"""Add-ons alone under the mocks, from hand-written narrow inputs: one that builds, one that is refused with Pulumi's
input error naming the argument (issue 35 §4)."""

from __future__ import annotations

import json

import pulumi
import pytest

from components.addons.dcgm_exporter import DcgmExporter, DcgmExporterArgs
from components.addons.kserve import KServe, KServeArgs
from components.addons.observability import Observability, ObservabilityArgs
from components.addons.scrape_targets import ObservedScope
from components.addons.volcano import FabricDomain, TenantQueue, Volcano, VolcanoArgs
from components.config.observability import ObservabilitySpec
from components.config.scheduling import PriorityTierSpec
from tests.harness import cluster_handle, evaluate_program

TIERS = [
    PriorityTierSpec.model_validate({"name": "realtime", "value": 1000, "preempts": True, "preemptible": False}),
    PriorityTierSpec.model_validate({"name": "batch", "value": 100, "preempts": False, "preemptible": True}),
]


def _refused(program) -> pulumi.InputPropertyError:
    with pytest.raises(pulumi.InputPropertyError) as info:
        evaluate_program(program)
    return info.value


def _volcano(tier: str = "batch", zones: tuple[str, ...] = ("us-east-1a",)) -> None:
    Volcano(
        "volcano",
        VolcanoArgs(
            cluster=cluster_handle("team"),
            label_domain="example.com",
            production=False,
            gpu_resources=["nvidia.com/gpu", "nvidia.com/mig-3g.40gb"],
            priority_tiers=TIERS,
            queues=[
                TenantQueue(tenant="search", tier=tier, weight=3, reclaimable=True, capability={"nvidia.com/gpu": 8})
            ],
            fabrics=[FabricDomain(pool="h100", zones=list(zones))],
        ),
    )


def test_volcano_queues_take_their_tiers_priority():
    plan = evaluate_program(_volcano)
    queues = [r.inputs for r in plan.kubernetes_objects() if r.inputs.get("kind") == "Queue"]
    assert [q["spec"] for q in queues] == [
        {
            "weight": 3,
            "reclaimable": True,
            "priority": 100,
            "capability": {"nvidia.com/gpu": 8, "nvidia.com/mig-3g.40gb": 0},
        }
    ]
    nodes = {r.inputs["metadata"]["name"] for r in plan.kubernetes_objects() if r.inputs.get("kind") == "HyperNode"}
    assert nodes == {"h100-us-east-1a", "zone-us-east-1a"}

    error = _refused(lambda: _volcano(tier="gold"))
    assert error.property_path == "queues[0].tier"
    assert "'gold'" in error.reason and "batch, realtime" in error.reason


def test_volcano_fabric_domains_name_their_zones():
    assert _refused(lambda: _volcano(zones=())).property_path == "fabrics[0].zones"


def _observability(ttft: dict[str, float]) -> None:
    Observability(
        "obs",
        ObservabilityArgs(
            cluster=cluster_handle("team"),
            region_name="use1",
            spec=ObservabilitySpec.model_validate({}),
            scope=ObservedScope(
                gpu_pools=("l40s",),
                dcgm_pools=("l40s",),
                standalone_dcgm_pools=(),
                vllm_models=("llama",),
                triton_models=(),
                disaggregated_models=(),
                has_tenants=False,
                model_cache=False,
            ),
            label_domain="example.com",
            production=False,
            ttft_objectives=ttft,
        ),
    )


def test_observability_alerts_on_the_objectives_of_the_models_it_serves():
    plan = evaluate_program(lambda: _observability({"llama": 1.5}))
    (rules,) = [r.inputs for r in plan.kubernetes_objects() if r.inputs.get("kind") == "PrometheusRule"]
    serving = [g for g in rules["spec"]["groups"] if g["name"] == "inference-platform.serving"]
    assert serving and "llama" in json.dumps(serving) and "1.5" in json.dumps(serving)
    (release,) = plan.helm_releases()
    assert release.inputs["values"]["prometheus"]["prometheusSpec"]["externalLabels"]["region"] == "use1"

    error = _refused(lambda: _observability({"mistral": 1.5}))
    assert error.property_path == "ttft_objectives" and "mistral" in error.reason


def _kserve(mode: str) -> None:
    KServe(
        "kserve",
        KServeArgs(cluster=cluster_handle("team"), label_domain="example.com", deployment_mode=mode, production=False),
    )


def test_kserve_runs_in_the_mode_it_is_given():
    plan = evaluate_program(lambda: _kserve("Knative"))
    (controller,) = [r for r in plan.helm_releases() if r.inputs["name"] == "kserve"]
    assert controller.inputs["values"]["kserve"]["controller"]["deploymentMode"] == "Knative"

    error = _refused(lambda: _kserve("RawDeployment"))
    assert error.property_path == "deployment_mode" and "Knative, Standard" in error.reason


def _dcgm(pools: list[str]) -> None:
    DcgmExporter("dcgm", DcgmExporterArgs(cluster=cluster_handle("team"), label_domain="example.com", pools=pools))


def test_dcgm_exporter_runs_on_the_pools_it_is_given():
    (release,) = evaluate_program(lambda: _dcgm(["l4", "a100"])).helm_releases()
    terms = release.inputs["values"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["l4", "a100"]

    assert _refused(lambda: _dcgm([])).property_path == "pools"
