"""Every MIG / time-slicing / GKE partition / driver ownership error: key path, reason and fix."""

from __future__ import annotations

import pytest

from components.checks.loader import load_environment
from tests.harness import config_errors, raw_environment

# dev: regions[0] is AWS use1 with gpuPools l40s (g6e.xlarge, L40S, time-sliced) and a100-mig
# (p4de.24xlarge, A100-80GB, custom layout). prod: regions[2] is GCP usc1 with h200, l4, a100-mig.
L40S = "regions[0].gpuPools[0]"
A100 = "regions[0].gpuPools[1]"
A100_GPU_CONFIGS = (
    "all-balanced, all-1g.10gb, all-1g.20gb, all-2g.20gb, all-3g.40gb, all-4g.40gb, all-7g.80gb, all-1g.10gb.me"
)
A100_PROFILES = "1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb"
NO_MIG_L40S = (
    "L40S has no MIG; it offers whole GPUs or time-slicing (timeSlicing: {replicas: N}). Remove the MIG "
    "setting, or pick a machine type with a MIG-capable GPU (A100-40GB, A100-80GB, H100-80GB, H200-141GB, B200)"
)


def _pool(raw: dict, region: int, pool: int) -> dict:
    return raw["regions"][region]["gpuPools"][pool]


def _with(env: str, region: int, pool: int, fields: dict) -> dict:
    """The environment with one pool's keys set (None removes a key)."""
    raw = raw_environment(env)
    target = _pool(raw, region, pool)
    for key, value in fields.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = value
    return raw


def _dev_with(pool: int, **fields) -> dict:
    return _with("dev", 0, pool, fields)


def _gcp_with(pool: int, **fields) -> dict:
    return _with("prod", 2, pool, fields)


def test_checked_in_environments_partition_validly():
    for env in ("dev", "prod"):
        load_environment(raw_environment(env))


# --- MIG on a GPU without MIG ------------------------------------------------------------------------


def test_mig_on_a_gpu_without_mig_lists_what_it_supports():
    raw = _dev_with(0, timeSlicing=None, mig={"profile": "all-1g.10gb"})
    assert config_errors(raw) == [f"{L40S}.mig: {NO_MIG_L40S}"]


def test_gke_partition_on_a_gpu_without_mig():
    raw = _gcp_with(1, gkePartitionSize="1g.10gb")  # l4: g2-standard-24
    assert config_errors(raw) == [
        "regions[2].gpuPools[1].gkePartitionSize: L4 has no MIG; it offers whole GPUs or time-slicing "
        "(timeSlicing: {replicas: N}). Remove the MIG setting, or pick a machine type with a MIG-capable GPU "
        "(A100-40GB, A100-80GB, H100-80GB, H200-141GB, B200)"
    ]


# --- profile / layout --------------------------------------------------------------------------------


def test_unknown_mig_config_name_lists_the_gpus_configs():
    raw = _dev_with(1, mig={"profile": "all-3g.20gb"})  # an A100-40GB name on an A100-80GB
    assert config_errors(raw) == [
        f"{A100}.mig.profile: 'all-3g.20gb' is not a MIG config of A100-80GB; use one of {A100_GPU_CONFIGS}"
    ]


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        ("all-disabled", "'all-disabled' turns MIG off; remove mig to use whole GPUs"),
        (
            "all-enabled",
            "'all-enabled' turns MIG on without creating GPU instances, leaving nothing to schedule; "
            "pick a config that creates them (e.g. all-3g.40gb) or a custom layout",
        ),
    ],
)
def test_mig_configs_that_create_no_instances(profile, message):
    assert config_errors(_dev_with(1, mig={"profile": profile})) == [f"{A100}.mig.profile: {message}"]


@pytest.mark.parametrize(
    "mig",
    [
        {"strategy": "mixed"},
        {"profile": "all-3g.40gb", "layout": {"3g.40gb": 2}},
    ],
    ids=["neither", "both"],
)
def test_profile_and_layout_exactly_one(mig):
    assert config_errors(_dev_with(1, mig=mig)) == [
        f"{A100}.mig: set exactly one of profile (a mig-parted config name, e.g. all-3g.40gb) or layout "
        '(a custom per-GPU layout, e.g. {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2})'
    ]


def test_layout_with_unknown_profile_and_bad_count():
    raw = _dev_with(1, mig={"layout": {"3g.20gb": 1, "1g.10gb": 0}})
    assert config_errors(raw) == [
        f"{A100}.mig.layout['3g.20gb']: not a MIG profile of A100-80GB; use one of {A100_PROFILES}",
        f"{A100}.mig.layout['1g.10gb']: count 0 must be at least 1; raise it or remove the profile",
    ]


def test_empty_layout():
    assert config_errors(_dev_with(1, mig={"layout": {}})) == [
        f'{A100}.mig.layout: the layout is empty; list MIG profiles and counts, e.g. {{"3g.40gb": 1, '
        '"2g.20gb": 1, "1g.10gb": 2}'
    ]


def test_single_strategy_needs_one_profile_per_node():
    raw = _dev_with(1, mig={"strategy": "single", "profile": "all-balanced"})
    assert config_errors(raw) == [
        f"{A100}.mig.strategy: the single strategy advertises every MIG instance as nvidia.com/gpu, so a node "
        "must hold one profile, but this layout mixes 1g.10gb, 2g.20gb, 3g.40gb; use strategy: mixed or a "
        "one-profile config"
    ]


# --- the slice budget ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "layout",
    [
        {"7g.80gb": 1},
        {"4g.40gb": 1, "3g.40gb": 1},  # 7 compute, 8 memory
        {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2},  # the dev layout: 7 / 8
        {"2g.20gb": 3, "1g.10gb": 1},  # 7 compute, 7 memory
        {"1g.20gb": 4},  # 4 compute, 8 memory
    ],
)
def test_layouts_within_the_slice_budget_are_accepted(layout):
    raw = _dev_with(1, mig={"layout": layout})
    # Without dev's model on this pool (and its tenant's quota of it): it requests a 3g.40gb slice, which some of
    # these layouts lack.
    raw["models"] = [m for m in raw["models"] if m["placements"][0]["pool"] != "a100-mig"]
    raw["tenants"][0]["models"] = [m["name"] for m in raw["models"]]
    del raw["tenants"][0]["gpuQuotas"][0]["capability"]["nvidia.com/mig-3g.40gb"]
    load_environment(raw)


def test_layout_with_too_many_compute_slices():
    # 8 memory slices fit, 8 compute slices do not.
    raw = _dev_with(1, mig={"layout": {"2g.20gb": 3, "1g.10gb": 2}})
    assert config_errors(raw) == [
        f"{A100}.mig.layout: needs 8 compute slices (3 x 2g.20gb (6) + 2 x 1g.10gb (2)) but one A100-80GB "
        "has 7; remove instances or use smaller profiles"
    ]


def test_layout_with_too_much_memory():
    # 7 compute slices fit, 10 memory slices do not.
    raw = _dev_with(1, mig={"layout": {"3g.40gb": 1, "1g.20gb": 2, "1g.10gb": 2}})
    assert config_errors(raw) == [
        f"{A100}.mig.layout: needs 10 memory slices (1 x 3g.40gb (4) + 2 x 1g.20gb (4) + 2 x 1g.10gb (2)) "
        "but one A100-80GB has 8; remove instances or use smaller profiles"
    ]


def test_layout_over_both_budgets_reports_both():
    raw = _dev_with(1, mig={"layout": {"4g.40gb": 1, "3g.40gb": 1, "1g.10gb": 1}})
    errors = config_errors(raw)
    assert [e.split(":")[0] for e in errors] == [f"{A100}.mig.layout", f"{A100}.mig.layout"]
    assert "needs 8 compute slices" in errors[0]
    assert "needs 9 memory slices" in errors[1]


# --- MIG and time-slicing ------------------------------------------------------------------------------


def test_mig_and_time_slicing_on_one_pool():
    raw = _dev_with(1, timeSlicing={"replicas": 2})
    assert config_errors(raw) == [
        f"{A100}.timeSlicing: MIG and time-slicing cannot be combined on one pool; remove timeSlicing, "
        "or put the time-sliced GPUs in a pool of their own"
    ]


def test_gke_partitions_and_time_slicing_on_one_pool():
    raw = _gcp_with(2, mig=None, driverInstall=None, gkePartitionSize="1g.10gb", timeSlicing={"replicas": 2})
    assert config_errors(raw) == [
        "regions[2].gpuPools[2].timeSlicing: MIG and time-slicing cannot be combined on one pool; remove "
        "timeSlicing, or put the time-sliced GPUs in a pool of their own"
    ]


# --- GKE partitioning -----------------------------------------------------------------------------------


def test_gke_partition_size_on_aws():
    raw = _dev_with(1, mig=None, gkePartitionSize="3g.40gb")
    # An AWS pool is the AWS model: GKE's partitioning is no key of it (the GPU Operator's `mig` is).
    assert config_errors(raw) == [
        f"{A100}.gkePartitionSize: unknown key: only meaningful on GKE; on AWS let the GPU Operator partition the "
        "pool: mig: {profile: all-<size>}"
    ]


def test_gke_partition_size_mixed_with_mig():
    raw = _gcp_with(2, gkePartitionSize="3g.40gb")
    assert config_errors(raw) == [
        "regions[2].gpuPools[2].gkePartitionSize: GKE partitioning and GPU Operator MIG (mig) cannot both "
        "partition one pool; keep one of them"
    ]


def test_gke_partition_size_needs_gke_drivers():
    raw = _gcp_with(2, mig=None, gkePartitionSize="3g.40gb")  # driverInstall: operator stays
    assert config_errors(raw) == [
        "regions[2].gpuPools[2].gkePartitionSize: GKE partitions GPUs only when GKE installs the driver; "
        "with driverInstall: operator use mig: {profile: all-3g.40gb} instead"
    ]


def test_gke_partition_size_must_be_a_profile_of_the_gpu():
    raw = _gcp_with(2, mig=None, driverInstall=None, gkePartitionSize="3g.20gb")
    assert config_errors(raw) == [
        f"regions[2].gpuPools[2].gkePartitionSize: '3g.20gb' is not a MIG profile of A100-80GB; use one of "
        f"{A100_PROFILES}"
    ]


def test_gke_partition_size_is_accepted_on_gke_drivers():
    load_environment(_gcp_with(2, mig=None, driverInstall=None, gkePartitionSize="1g.10gb"))


def test_operator_mig_on_a_gke_managed_pool():
    raw = _gcp_with(2, driverInstall=None)
    assert config_errors(raw) == [
        "regions[2].gpuPools[2].mig: GKE installs the driver and runs its own device plugin on this pool "
        "(driverInstall: cloud), so the GPU Operator's MIG manager cannot partition it; use gkePartitionSize "
        f"(one of {A100_PROFILES}) or set driverInstall: operator"
    ]


# --- driver ownership ------------------------------------------------------------------------------------


def test_operator_driver_on_aws():
    assert config_errors(_dev_with(0, driverInstall="operator")) == [
        f"{L40S}.driverInstall: EKS GPU nodes run the AL2023 NVIDIA AMI, which ships the NVIDIA driver and "
        "container toolkit, so the GPU Operator does not install them on AWS; remove driverInstall (default: cloud)"
    ]


# --- one operator per cluster ------------------------------------------------------------------------------


def test_mig_strategies_must_agree_within_a_region():
    raw = raw_environment()
    raw["regions"][0]["gpuPools"].append(
        {"name": "h100-mig", "machineType": "p5.48xlarge", "maxSize": 1, "zones": ["us-east-1a"]}
        | {"mig": {"strategy": "single", "profile": "all-1g.10gb"}}
    )
    assert config_errors(raw) == [
        "regions[0].gpuPools[2].mig.strategy: the GPU Operator applies one MIG strategy per cluster and pool "
        "'a100-mig' uses 'mixed'; use the same strategy on every MIG pool of region 'use1'"
    ]


def test_a_config_name_has_one_layout_in_a_region_with_custom_layouts():
    raw = raw_environment()
    pools = raw["regions"][0]["gpuPools"]
    pools.append({"name": "a100-80", "machineType": "p4de.24xlarge", "maxSize": 1, "zones": ["us-east-1a"]})
    pools.append({"name": "a100-40", "machineType": "p4d.24xlarge", "maxSize": 1, "zones": ["us-east-1a"]})
    pools[2]["mig"] = pools[3]["mig"] = {"profile": "all-1g.10gb"}
    assert config_errors(raw) == [
        "regions[0].gpuPools[3].mig.profile: 'all-1g.10gb' means {'1g.10gb': 4} on A100-40GB but "
        "{'1g.10gb': 7} on A100-80GB (pool 'a100-80'); with custom layouts in the region the GPU Operator "
        "reads one mig-parted config, where a name has one layout; give one of the pools a custom layout"
    ]
