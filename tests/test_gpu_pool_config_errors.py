"""GPU pool configs that cannot be built are rejected with the key path and the fix."""

from __future__ import annotations

import pytest

from components.catalog.machines import machines_of
from components.checks.loader import load_environment
from tests.harness import config_errors, raw_environment


def _prod_pool(region: int, pool: int, **changes) -> dict:
    raw = raw_environment("prod")
    raw["regions"][region]["gpuPools"][pool].update(changes)
    return raw


@pytest.mark.parametrize(("region", "machine_type", "cloud"), [(0, "p9.48xlarge", "aws"), (0, "a3-highgpu-8g", "aws"), (2, "p5.48xlarge", "gcp")])  # fmt: skip
def test_unknown_machine_type_lists_the_clouds_types(region, machine_type, cloud):
    raw = _prod_pool(region, 0, machineType=machine_type)
    assert config_errors(raw) == [
        f"regions[{region}].gpuPools[0].machineType: {machine_type!r} is not a known {cloud} GPU machine type; "
        f"use one of {', '.join(machines_of(cloud))}"
    ]


def test_efa_on_a_type_without_efa():
    raw = raw_environment()
    raw["regions"][0]["gpuPools"][0].update(efa=True, zones=["us-east-1a"])
    assert config_errors(raw) == [
        "regions[0].gpuPools[0].efa: g6e.4xlarge has no EFA interfaces; remove efa or use one of g5.12xlarge, "
        "g5.16xlarge, g5.24xlarge, g5.48xlarge, g5.8xlarge, g6.12xlarge, g6.16xlarge, g6.24xlarge, g6.48xlarge, "
        "g6.8xlarge, g6e.12xlarge, g6e.16xlarge, g6e.24xlarge, g6e.48xlarge, g6e.8xlarge, p4d.24xlarge, "
        "p4de.24xlarge, p5.48xlarge, p5e.48xlarge, p5en.48xlarge, p6-b200.48xlarge"
    ]


def test_gpudirect_on_a_type_without_gpudirect_nics():
    raw = _prod_pool(2, 1, gpuDirect=True, zones=["us-central1-a"])
    assert config_errors(raw) == [
        "regions[2].gpuPools[1].gpuDirect: g2-standard-24 has no GPUDirect NICs (TCPX, TCPXO or RDMA); remove "
        "gpuDirect or use one of a3-highgpu-8g, a3-megagpu-8g, a3-ultragpu-8g, a4-highgpu-8g"
    ]


def test_fabric_of_the_other_cloud():
    raw = _prod_pool(2, 0, efa=True)
    raw["regions"][0]["gpuPools"][0]["gpuDirect"] = True
    # Each region's cloud decides its pools' keys: the other cloud's fabric is an unknown key, with what to set.
    assert config_errors(raw) == [
        "regions[0].gpuPools[0].gpuDirect: unknown key: GPUDirect networking is GCP's; on AWS set efa instead",
        "regions[2].gpuPools[0].efa: unknown key: EFA is an AWS fabric; on GCP set gpuDirect on an A3/A4 type instead",
    ]


def test_placement_group_across_several_zones():
    raw = raw_environment("prod")
    del raw["regions"][0]["gpuPools"][0]["zones"]
    del raw["regions"][2]["gpuPools"][0]["zones"]
    assert config_errors(raw) == [
        "regions[0].gpuPools[0].zones: a cluster placement group lives in one zone but the pool spans 3 "
        "(us-east-1a, us-east-1b, us-east-1c); pin the pool to one zone, e.g. zones: [us-east-1a]",
        "regions[2].gpuPools[0].zones: compact placement lives in one zone but the pool spans 3 "
        "(us-central1-a, us-central1-b, us-central1-c); pin the pool to one zone, e.g. zones: [us-central1-a]",
    ]


def test_explicit_placement_group_is_checked_too():
    raw = raw_environment()
    raw["regions"][0]["gpuPools"][0]["placementGroup"] = True
    assert config_errors(raw)[0].startswith("regions[0].gpuPools[0].zones: a cluster placement group lives in one zone")


def test_zonal_fabrics_without_placement_still_need_one_zone():
    raw = raw_environment("prod")
    for region in (0, 2):
        pool = raw["regions"][region]["gpuPools"][0]
        del pool["zones"]
        pool["placementGroup"] = False
    assert config_errors(raw) == [
        "regions[0].gpuPools[0].zones: EFA traffic does not leave its subnet; pin the pool to one zone, "
        "e.g. zones: [us-east-1a]",
        "regions[2].gpuPools[0].zones: the RoCE network profile is zonal; pin the pool to one zone, "
        "e.g. zones: [us-central1-a]",
    ]


def test_compact_placement_on_a_type_without_it():
    raw = _prod_pool(2, 1, placementGroup=True)
    assert config_errors(raw) == [
        "regions[2].gpuPools[1].placementGroup: g2-standard-24 does not support compact placement; "
        "remove placementGroup"
    ]


@pytest.mark.parametrize(
    ("region", "capacity", "message"),
    [
        (
            0,
            {"type": "capacityBlock"},
            "regions[0].gpuPools[0].capacity.reservationId: capacity type capacityBlock needs reservationId: "
            "set it to the Capacity Block id (cr-...)",
        ),
        (
            2,
            {"type": "reservation"},
            "regions[2].gpuPools[0].capacity.reservationId: capacity type reservation needs reservationId: "
            "set it to the reservation to consume",
        ),
        (
            0,
            {"type": "spot", "reservationId": "cr-0123456789abcdef0"},
            "regions[0].gpuPools[0].capacity.reservationId: only used with reservation or capacityBlock, "
            "not spot; remove it",
        ),
        (
            0,
            {"type": "reservation", "reservationId": "my-odcr"},
            "regions[0].gpuPools[0].capacity.reservationId: 'my-odcr' is not a capacity reservation id; "
            "use the cr-... id AWS shows for it",
        ),
        (
            2,
            {"type": "capacityBlock", "reservationId": "cr-0123456789abcdef0"},
            "regions[2].gpuPools[0].capacity.type: 'capacityBlock' is not sold on gcp; "
            "use one of onDemand, spot, reservation, flexStart",
        ),
        (
            0,
            {"type": "flexStart"},
            "regions[0].gpuPools[0].capacity.type: 'flexStart' is not sold on aws; "
            "use one of onDemand, spot, reservation, capacityBlock",
        ),
    ],
)
def test_capacity_errors(region, capacity, message):
    assert config_errors(_prod_pool(region, 0, capacity=capacity)) == [message]


def test_flex_start_pools_start_empty():
    raw = _prod_pool(2, 1, capacity={"type": "flexStart"})
    assert config_errors(raw) == [
        "regions[2].gpuPools[1].minSize: flex-start nodes are only granted to pending pods; set minSize to 0 (got 1)"
    ]
    raw = _prod_pool(2, 1, capacity={"type": "flexStart"}, minSize=0, desiredSize=2)
    assert config_errors(raw) == [
        "regions[2].gpuPools[1].desiredSize: flex-start nodes are only granted to pending pods; "
        "set desiredSize to 0 (got 2)"
    ]


def test_reserved_capacity_is_zonal():
    raw = _prod_pool(0, 1, capacity={"type": "reservation", "reservationId": "cr-0123456789abcdef0"})
    assert config_errors(raw) == [
        "regions[0].gpuPools[1].zones: reservation capacity sits in one zone; pin the pool to the reservation's "
        "zone, e.g. zones: [us-east-1a]"
    ]


@pytest.mark.parametrize(
    ("cidr", "message"),
    [
        ("10.64.0.0/16", "10.64.0.0/16 overlaps podsCidr 10.64.0.0/14; choose a range for the GPU NIC subnets outside it"),
        ("192.168.0.0/22", "192.168.0.0/22 holds fewer than 9 /24 GPU NIC subnets; use a /20 or larger"),
    ],
)  # fmt: skip
def test_accelerator_cidr_of_gpudirect_pools(cidr, message):
    raw = raw_environment("prod")
    raw["regions"][2]["network"]["acceleratorCidr"] = cidr
    assert config_errors(raw) == [f"regions[2].network.acceleratorCidr: {message}"]
    # Without GPUDirect pools the range is unused and not checked.
    raw["regions"][2]["gpuPools"][0].pop("gpuDirect")
    load_environment(raw)
