"""Obtainable capacity: which consumption models each machine type is sold through, and the config
errors for pools asking for one their type lacks."""

from __future__ import annotations

import json
import typing

import pytest

from components.catalog.machines import MACHINES
from components.spec.region import CapacitySpec
from tests.harness import config_errors, raw_environment

PRICING = "aws-ec2-pricing/2026-07-20/generated-on-demand-us-east-1.json"


def test_every_machine_type_has_its_consumption_models_in_the_spec_s_terms():
    spec_types = set(typing.get_args(CapacitySpec.model_fields["type"].annotation))
    for machine in MACHINES.values():
        assert machine.capacity_types, machine.name
        assert set(machine.capacity_types) <= spec_types, machine.name
        # Capacity Blocks are AWS's, flex-start GCP's.
        assert ("capacityBlock" in machine.capacity_types) <= (machine.cloud == "aws"), machine.name
        assert ("flexStart" in machine.capacity_types) <= (machine.cloud == "gcp"), machine.name


def test_types_with_an_on_demand_price_upstream_are_sold_on_demand(upstream):
    prices = json.loads((upstream.root / PRICING).read_text())["usd_per_hour"]
    priced = [name for name in prices if name in MACHINES]
    assert len(priced) >= 10  # the GPU types of the pricing table, not an empty loop
    for name in priced:
        assert "onDemand" in MACHINES[name].capacity_types, name


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
    assert MACHINES[name].capacity_types == expected


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
            "regions[0].gpuPools[1].capacity: g6e.2xlarge is not offered as Capacity Blocks; use onDemand, spot or "
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
        from components.spec.loader import load_environment

        assert load_environment(raw).regions[region].gpu_pools[pool].capacity.type == changes["capacity"]["type"]
    else:
        assert config_errors(raw) == [message]


def test_p5e_is_not_sold_on_demand():
    raw = raw_environment("prod")
    raw["regions"][0]["gpuPools"][0]["machineType"] = "p5e.48xlarge"
    assert config_errors(raw) == [
        "regions[0].gpuPools[0].capacity: p5e.48xlarge is not offered on demand; use reservation or capacityBlock"
    ]
