"""Catalog facts that can be checked against upstream data."""

from __future__ import annotations

import re

import pytest
import yaml

from platform_catalog.gpus import GPUS
from platform_catalog.machines import MACHINES

MIG_CONFIGMAP = "gpu-operator/v26.7.0/assets-state-mig-manager-0400_configmap.default-mig-parted-config.yaml"


@pytest.fixture(scope="module")
def upstream_mig_configs(upstream) -> dict:
    configmap = yaml.safe_load((upstream.root / MIG_CONFIGMAP).read_text())
    return yaml.safe_load(configmap["data"]["config.yaml"])["mig-configs"]


@pytest.mark.parametrize("gpu", [g for g in GPUS.values() if g.mig_capable], ids=lambda g: g.name)
def test_mig_config_names_exist_upstream_with_their_profile_counts(gpu, upstream_mig_configs):
    assert gpu.mig_configs and gpu.mig_profiles, f"{gpu.name} is MIG-capable: it lists configs and profiles"
    for config in gpu.mig_configs:
        assert config in upstream_mig_configs, f"{gpu.name}: {config} is not in the upstream mig-parted config"
    for profile in gpu.mig_profiles:
        entries = upstream_mig_configs[f"all-{profile.name}"]
        counts = {n for e in entries for n in (e.get("mig-devices") or {}).values()}
        assert profile.max_instances in counts, f"{profile.name}: upstream counts {counts}"


@pytest.mark.parametrize("gpu", [g for g in GPUS.values() if g.mig_capable], ids=lambda g: g.name)
def test_mig_geometry_is_consistent(gpu):
    # NVIDIA's MIG user guide: a MIG GPU has 7 compute slices and 8 memory slices; the full profile takes them all
    full = gpu.mig_profiles[-1]
    assert (full.compute_slices, full.memory_slices, full.memory_gib) == (7, 8, gpu.memory_gib)
    for p in gpu.mig_profiles:
        assert re.fullmatch(rf"{p.compute_slices}g\.{p.memory_gib}gb", p.name)
        assert p.max_instances * p.compute_slices <= 7, p.name


def test_gpus_without_mig_have_no_configs():
    for name in ("A10G", "L4", "L40S"):
        assert GPUS[name].mig_configs == ()


@pytest.mark.parametrize(("name", "efa"), [("p4d.24xlarge", 4), ("p5.48xlarge", 32), ("p5en.48xlarge", 16)])
def test_efa_interfaces_per_instance_type(name, efa):
    assert MACHINES[name].efa_interfaces == efa
    assert MACHINES[name].fabric == "efa"


def test_every_machine_names_a_known_gpu():
    assert {m.cloud for m in MACHINES.values()} == {"aws", "gcp"}, "the catalog has machine types of both clouds"
    for m in MACHINES.values():
        assert m.gpu in GPUS
        assert m.gpus >= 1
        assert (m.cloud == "gcp") == bool(m.accelerator)


@pytest.mark.parametrize(
    ("name", "fabric", "nics"),
    [("a3-highgpu-8g", "tcpx", 4), ("a3-megagpu-8g", "tcpxo", 8), ("a3-ultragpu-8g", "roce", 8)],
)
def test_gcp_gpudirect_flavours(name, fabric, nics):
    assert (MACHINES[name].fabric, MACHINES[name].extra_nics) == (fabric, nics)
