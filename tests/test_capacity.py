"""Obtainable capacity: which consumption models each machine type is sold through, and the config
errors for pools asking for one their type lacks."""

from __future__ import annotations

import json
import typing

import pytest

from components.catalog.machines import capacity_types
from components.config.region import CapacitySpec
from platform_catalog.machines import MACHINES
from tests.harness import config_errors, raw_environment

PRICING = "aws-ec2-pricing/2026-07-20/generated-on-demand-us-east-1.json"


def test_every_machine_type_has_its_consumption_models_in_the_spec_s_terms():
    spec_types = set(typing.get_args(CapacitySpec.model_fields["type"].annotation))
    assert {m.cloud for m in MACHINES.values()} == {"aws", "gcp"}, "the catalog has machine types of both clouds"
    for machine in MACHINES.values():
        assert capacity_types(machine), machine.name
        assert set(capacity_types(machine)) <= spec_types, machine.name
        # Capacity Blocks are AWS's, flex-start GCP's.
        assert ("capacityBlock" in capacity_types(machine)) <= (machine.cloud == "aws"), machine.name
        assert ("flexStart" in capacity_types(machine)) <= (machine.cloud == "gcp"), machine.name


def test_types_with_an_on_demand_price_upstream_are_sold_on_demand(upstream):
    prices = json.loads((upstream.root / PRICING).read_text())["usd_per_hour"]
    priced = [name for name in prices if name in MACHINES]
    assert len(priced) >= 10  # the GPU types of the pricing table, not an empty loop
    for name in priced:
        assert "onDemand" in capacity_types(MACHINES[name]), name


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # FACTS-3.md §10: A3 Ultra has no on-demand; A2 and G2 do.
        ("a3-ultragpu-8g", ("reservation", "flexStart", "spot")),
        ("a2-ultragpu-1g", ("onDemand", "reservation", "flexStart", "spot")),
        ("g2-standard-24", ("onDemand", "reservation", "flexStart", "spot")),
        ("p5.48xlarge", ("onDemand", "spot", "reservation", "capacityBlock")),
        ("p5e.48xlarge", ("reservation", "capacityBlock")),
        ("g6e.2xlarge", ("onDemand", "spot", "reservation")),
    ],
)
def test_consumption_models_per_type(name, expected):
    assert capacity_types(MACHINES[name]) == expected


def test_a3_ultra_on_demand_is_rejected_naming_the_options():
    raw = raw_environment("prod")
    del raw["regions"][2]["gpuPools"][0]["capacity"]
    assert config_errors(raw) == [
        "regions[2].gpuPools[0].capacity: a3-ultragpu-8g is not offered on demand; use reservation, flexStart or spot"
    ]


@pytest.mark.parametrize(
    ("region", "pool", "changes", "message"),
    [
        (
            0,
            0,
            {"capacity": {"type": "spot"}},
            None,  # p5 is sold as spot: accepted
        ),
        (
            0,
            1,
            {"capacity": {"type": "capacityBlock", "reservationId": "cr-0123456789abcdef0"}, "zones": ["us-east-1a"]},
            "regions[0].gpuPools[1].capacity: g6e.4xlarge is not offered as Capacity Blocks; use onDemand, spot or "
            "reservation",
        ),
        (
            2,
            1,
            {"capacity": {"type": "flexStart"}},
            "regions[2].gpuPools[1].minSize: flex-start nodes are only granted to pending pods; set minSize to 0 "
            "(got 1)",
        ),
    ],
)
def test_capacity_types_per_machine(region, pool, changes, message):
    raw = raw_environment("prod")
    raw["regions"][region]["gpuPools"][pool].update(changes)
    if message is None:
        from components.checks.loader import load_environment

        raw["production"] = False  # production refuses spot under its realtime models (test_config_input_errors)
        assert load_environment(raw).regions[region].gpu_pools[pool].capacity.type == changes["capacity"]["type"]
    else:
        assert config_errors(raw) == [message]


def test_p5e_is_not_sold_on_demand():
    raw = raw_environment("prod")
    raw["regions"][0]["gpuPools"][0]["machineType"] = "p5e.48xlarge"
    assert config_errors(raw) == [
        "regions[0].gpuPools[0].capacity: p5e.48xlarge is not offered on demand; use reservation or capacityBlock"
    ]


# --- replicas that fit the pool at maxSize and the tenant's queue --------------------------------------


def test_min_replicas_beyond_the_pool_at_max_size_are_rejected_with_the_arithmetic():
    raw = raw_environment("prod")
    raw["models"][1]["placements"][0].update(minReplicas=10, maxReplicas=10)  # llama-3-1-8b on use1/l40s
    assert config_errors(raw) == [
        "regions[0].gpuPools[1].maxSize: minReplicas on pool use1/l40s need 10 nvidia.com/gpu (llama-3-1-8b 10 x 1), "
        "more than the 8 it holds at maxSize 8 (1 per node); raise maxSize to 10 or lower minReplicas"
    ]


def test_models_sharing_a_pool_add_up():
    raw = raw_environment("prod")
    pool = raw["regions"][0]["gpuPools"][0]  # use1/h100: 8 H100 per node, maxSize 4
    pool["maxSize"] = 2
    # 70B at tensor parallel 4 (3 replicas: 12 GPUs), an 8B beside it (6 x 1 GPU) and the disaggregated 70B's
    # decode and prefill pods (TP 4 each): 26 > 2 nodes x 8, 4 nodes hold them.
    raw["models"][0]["placements"][0].update(minReplicas=3, maxReplicas=3)
    raw["models"][1]["placements"][0].update(pool="h100", minReplicas=6, maxReplicas=8)
    assert config_errors(raw) == [
        "regions[0].gpuPools[0].maxSize: minReplicas on pool use1/h100 need 26 nvidia.com/gpu (llama-3-1-70b 3 x 4, "
        "llama-3-1-8b 6 x 1, llama-3-1-70b-rag 1 x 4, llama-3-1-70b-rag prefill 1 x 4), more than the 16 it holds at "
        "maxSize 2 (8 per node); raise maxSize to 4 or lower minReplicas"
    ]


def test_federated_models_fit_each_member():
    raw = raw_environment("prod")
    assert raw["models"][0]["federated"] is True
    raw["models"][0]["placements"][2].update(minReplicas=9, maxReplicas=9)  # usc1/h200: 2 nodes x 8 H200, TP 2
    assert config_errors(raw) == [
        "regions[2].gpuPools[0].maxSize: minReplicas on pool usc1/h200 need 18 nvidia.com/gpu (llama-3-1-70b 9 x 2), "
        "more than the 16 it holds at maxSize 2 (8 per node); raise maxSize to 3 or lower minReplicas",
        "tenants[0].gpuQuotas[2].capability: minReplicas of search's models in region 'usc1' need 18 nvidia.com/gpu "
        "(llama-3-1-70b 9 x 2), more than the queue's 16; raise it to at least 18 or lower minReplicas",
    ]


def test_a_queue_smaller_than_one_replica_is_rejected():
    raw = raw_environment("prod")
    raw["tenants"][0]["gpuQuotas"][0] = {"region": "use1", "capability": {"nvidia.com/gpu": 2}}  # search in use1
    assert config_errors(raw) == [
        f"tenants[0].gpuQuotas[0].capability: one replica of {model} needs 4 nvidia.com/gpu (tensor parallel 4 "
        "x pipeline parallel 1), more than the 2 this queue may use in region 'use1'; raise it to at least 4"
        for model in ("llama-3-1-70b", "llama-3-1-70b-rag", "llama-3-1-70b-rag prefill")
    ]


def test_a_queue_smaller_than_the_minimum_replicas_is_rejected():
    raw = raw_environment("prod")
    raw["tenants"][1]["gpuQuotas"][0] = {"region": "use1", "capability": {"nvidia.com/gpu": 1}}  # support-bot
    assert config_errors(raw) == [
        "tenants[1].gpuQuotas[0].capability: minReplicas of support-bot's models in region 'use1' need 2 "
        "nvidia.com/gpu (llama-3-1-8b 2 x 1), more than the queue's 1; raise it to at least 2 or lower minReplicas"
    ]


def test_a_resource_the_queue_leaves_out_is_capped_at_zero():
    """Volcano leaves a resource a capability does not list unlimited (VOLCANO_UNLISTED_RESOURCES_ARE_UNCAPPED), so
    the queue lists every resource the region offers, 0 where the quota names none: dev's MIG model needs its own."""
    from components.checks.loader import load_environment

    raw = raw_environment("dev")
    assert raw["tenants"][0]["gpuQuotas"][0]["capability"] == {"nvidia.com/gpu": 2, "nvidia.com/mig-3g.40gb": 1}
    assert load_environment(raw).models[1].placements[0].resource == "nvidia.com/mig-3g.40gb"  # qwen
    raw["tenants"][0]["gpuQuotas"][0]["capability"] = {"nvidia.com/gpu": 2}
    assert config_errors(raw) == [
        "tenants[0].gpuQuotas[0].capability: one replica of qwen2-5-7b needs 1 nvidia.com/mig-3g.40gb (tensor "
        "parallel 1 x pipeline parallel 1), more than the 0 this queue may use in region 'use1'; raise it to at least 1"
    ]


def test_plan_exits_2_when_replicas_cannot_fit(tmp_path, capsys):
    import yaml

    from tests.harness import environment_config, ns
    from tools.plan.__main__ import main as plan_main
    from tools.plan.runner import PROJECT_DIR

    for name in ("Pulumi.yaml", "__main__.py"):
        (tmp_path / name).write_text((PROJECT_DIR / name).read_text())
    config = environment_config("dev")
    config[ns("regions")][0]["gpuPools"][0]["maxSize"] = 1  # l40s: 1 node x 2 time-slice shares
    config[ns("models")][0]["placements"][0].update(minReplicas=5, maxReplicas=5)
    config[ns("tenants")][0]["gpuQuotas"][0]["capability"] = {"nvidia.com/gpu": 8, "nvidia.com/mig-3g.40gb": 1}
    (tmp_path / "Pulumi.tight.yaml").write_text(yaml.safe_dump({"config": config}))
    assert plan_main(["tight", "--project-dir", str(tmp_path), "--quiet"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: Pulumi.tight.yaml: regions[0].gpuPools[0].maxSize: minReplicas on pool use1/l40s need 5 nvidia.com/gpu "
        "(llama-3-1-8b 5 x 1), more than the 2 it holds at maxSize 1 (2 per node); raise maxSize to 3 or lower "
        "minReplicas",
    ]
    assert not (tmp_path / "build").exists()


# --- plan.md -------------------------------------------------------------------------------------------------


def _capacity_rows(markdown: str) -> list[str]:
    return markdown.split("## GPU capacity\n\n", 1)[1].split("\n\n", 1)[0].splitlines()


@pytest.mark.plan
def test_plan_md_flags_a_max_the_pool_cannot_hold():
    from tests.harness import environment_config, ns, plan_stacks, scoped_markdown

    config = environment_config("prod")
    config[ns("models")][1]["placements"][0]["maxReplicas"] = 12  # llama-3-1-8b on use1/l40s: 8 nodes x 1 GPU
    # The table is of the spec's pools, every region's; the option changes use1's stack only.
    rows = _capacity_rows(scoped_markdown(plan_stacks(config, "test", ["use1"])))
    assert rows[0].endswith("| capacity | obtained via | max replicas the pool holds |")
    assert (
        "| use1 | l40s | g6e.4xlarge | L40S | 1 | 1-8 | none | us-east-1a, us-east-1b, us-east-1c | "
        "parallel (SOCI, nodeadm FastImagePull) | onDemand | "
        "Cluster Autoscaler: on-demand instances | llama-3-1-8b: 8 **capped by pool** (maxReplicas 12) |"
    ) in rows
    # usw2 keeps its 8: nothing capped there.
    assert sum("capped by pool" in row for row in rows) == 1


def test_plan_md_max_replicas_leave_room_for_the_others_minimum(dev_plan):
    from components.domain.capacity import pool_holds, replica_demands

    region = dev_plan.spec.regions[0]
    demands = replica_demands(dev_plan.spec, region)
    l40s = next(d for d in demands if d.pool.name == "l40s")
    # 2 nodes x 2 time-slice shares, one share per replica.
    assert pool_holds(l40s, demands) == 4
    # A second model keeping 3 replicas on the same shares leaves 1.
    other = type(l40s)(
        l40s.model, l40s.placement.model_copy(update={"min_replicas": 3}), l40s.pool, l40s.resource, 1, 1, 1
    )
    assert pool_holds(l40s, [l40s, other]) == 1
