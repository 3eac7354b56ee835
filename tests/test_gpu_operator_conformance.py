"""GPU Operator facts against upstream: chart values per pairing, mig-parted config format, MIG layouts."""

from __future__ import annotations

import pytest
import yaml

from components.addons.gpu_operator import (
    MIG_PARTED_CONFIGMAP,
    MIG_PARTED_KEY,
    gpu_operator_values,
    mig_parted_config,
    operator_pools,
)
from components.catalog.charts import CHARTS
from platform_catalog.gpus import GPUS
from tests.gpu_specs import pool, region
from tools.conformance import unknown_values

MIG_PARTED_EXAMPLE = "mig-parted/v0.15.0/examples-config.yaml"
OPERATOR_DEFAULT_MIG_CONFIG = (
    "gpu-operator/v26.7.0/assets-state-mig-manager-0400_configmap.default-mig-parted-config.yaml"
)

# One region per pairing of node image and partitioning the operator has to handle.
PAIRINGS = {
    "eks-al2023-whole": region("aws", pool("h100", "p5.48xlarge")),
    "eks-al2023-time-sliced": region("aws", pool("l40s", "g6e.xlarge", timeSlicing={"replicas": 4})),
    "eks-al2023-mig-named": region("aws", pool("a100", "p4de.24xlarge", mig={"profile": "all-3g.40gb"})),
    "eks-al2023-mig-custom": region(
        "aws",
        pool("a100", "p4de.24xlarge", mig={"layout": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}}),
        pool("l40s", "g6e.xlarge", timeSlicing={"replicas": 2}),
    ),
    "gke-operator-driver": region(
        "gcp",
        pool("a100", "a2-ultragpu-1g", driverInstall="operator", mig={"layout": {"4g.40gb": 1, "3g.40gb": 1}}),
        pool("l4", "g2-standard-8", driverInstall="operator", timeSlicing={"replicas": 4}),
    ),
    "gke-mixed": region(
        "gcp", pool("h200", "a3-ultragpu-8g"), pool("a100", "a2-ultragpu-1g", driverInstall="operator")
    ),
}


@pytest.mark.parametrize("monitoring", [False, True])
@pytest.mark.parametrize("pairing", sorted(PAIRINGS))
def test_operator_values_exist_in_the_pinned_chart(pairing, monitoring, upstream):
    chart = CHARTS["gpu-operator"]
    values = dict(gpu_operator_values(operator_pools(PAIRINGS[pairing]), monitoring))
    for key, values_file in chart.subcharts.items():
        assert unknown_values(values.pop(key, None), upstream.chart_values(values_file), chart.free_form) == []
    assert unknown_values(values, upstream.chart_values(chart.upstream_values), chart.free_form) == []


def test_mig_strategy_is_one_the_clusterpolicy_accepts(upstream):
    crd = yaml.safe_load((upstream.root / "gpu-operator/v26.7.0/nvidia.com_clusterpolicies.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    allowed = spec["mig"]["properties"]["strategy"]["enum"]
    for reg in PAIRINGS.values():
        assert gpu_operator_values(operator_pools(reg))["mig"]["strategy"] in allowed


# --- the mig-parted config ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def upstream_mig_configs(upstream) -> list[dict]:
    """Upstream mig-parted configs: the operator's default ConfigMap and mig-parted's example."""
    configmap = yaml.safe_load((upstream.root / OPERATOR_DEFAULT_MIG_CONFIG).read_text())
    return [
        yaml.safe_load(configmap["data"][MIG_PARTED_KEY]),
        yaml.safe_load((upstream.root / MIG_PARTED_EXAMPLE).read_text()),
    ]


def _check_format(config: dict, upstream_configs: list[dict]) -> list[str]:
    """Problems of a mig-parted config against the shape and names the upstream configs use."""
    entry_keys = {k for up in upstream_configs for entries in up["mig-configs"].values() for e in entries for k in e}
    devices = {
        d
        for up in upstream_configs
        for entries in up["mig-configs"].values()
        for e in entries
        for d in e.get("mig-devices") or {}
    }
    problems = []
    if set(config) != {"version", "mig-configs"} or config["version"] != upstream_configs[0]["version"]:
        problems.append(f"top level {sorted(config)} version {config.get('version')}")
    for name, entries in config["mig-configs"].items():
        for entry in entries:
            if not set(entry) <= entry_keys:
                problems.append(f"{name}: unknown keys {set(entry) - entry_keys}")
            if entry.get("devices") != "all" and not all(isinstance(d, int) for d in entry.get("devices", [None])):
                problems.append(f"{name}: devices {entry.get('devices')}")
            if not isinstance(entry.get("mig-enabled"), bool):
                problems.append(f"{name}: mig-enabled {entry.get('mig-enabled')!r}")
            for device, count in (entry.get("mig-devices") or {}).items():
                if device not in devices or not isinstance(count, int) or count < 1:
                    problems.append(f"{name}: mig-devices {device}: {count!r}")
            if entry.get("mig-enabled") is False and entry.get("mig-devices"):
                problems.append(f"{name}: MIG devices on a GPU with MIG disabled")
    return problems


def _named_entries_match_upstream(config: dict, upstream_configs: list[dict]) -> list[str]:
    """A config that keeps an upstream name must mean what upstream means by it (for some GPU)."""
    upstream = upstream_configs[0]["mig-configs"]
    problems = []
    for name, entries in config["mig-configs"].items():
        if name in upstream:
            known = [{k: v for k, v in e.items() if k != "device-filter"} for e in upstream[name]]
            problems += [f"{name}: {e} is not upstream's {known}" for e in entries if e not in known]
    return problems


def test_dev_mig_parted_configmap_has_the_upstream_format(dev_plan, upstream_mig_configs):
    configmap = next(
        r
        for r in dev_plan.of_type("kubernetes:core/v1:ConfigMap")
        if r.inputs["metadata"]["name"] == MIG_PARTED_CONFIGMAP
    )
    assert set(configmap.inputs["data"]) == {MIG_PARTED_KEY}
    config = yaml.safe_load(configmap.inputs["data"][MIG_PARTED_KEY])
    assert _check_format(config, upstream_mig_configs) == []
    assert _named_entries_match_upstream(config, upstream_mig_configs) == []


def test_mig_parted_config_with_named_and_custom_configs_matches_upstream(upstream_mig_configs):
    reg = region(
        "aws",
        pool("custom", "p4de.24xlarge", mig={"layout": {"4g.40gb": 1, "2g.20gb": 1, "1g.10gb": 1}}),
        pool("balanced", "p5.48xlarge", mig={"profile": "all-balanced"}),
        pool("me", "p5e.48xlarge", mig={"profile": "all-1g.18gb.me"}),
        pool("b200", "p6-b200.48xlarge", mig={"profile": "all-2g.45gb"}),
    )
    config = mig_parted_config(operator_pools(reg))
    assert _check_format(config, upstream_mig_configs) == []
    assert _named_entries_match_upstream(config, upstream_mig_configs) == []


def test_format_check_catches_malformed_configs(upstream_mig_configs):
    bad = {
        "version": "v1",
        "mig-configs": {
            "a": [{"devices": "all", "mig-enabled": "yes", "mig-devices": {"3g.40gb": 1}}],
            "b": [{"devices": "all", "mig-enabled": True, "mig-device": {"3g.40gb": 1}}],
            "c": [{"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40GB": 1}}],
            "all-3g.40gb": [{"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 3}}],
        },
    }
    problems = _check_format(bad, upstream_mig_configs)
    assert any(p.startswith("a: mig-enabled") for p in problems)
    assert any(p.startswith("b: unknown keys") for p in problems)
    assert any(p.startswith("c: mig-devices 3g.40GB") for p in problems)
    assert _named_entries_match_upstream(bad, upstream_mig_configs) != []


@pytest.mark.parametrize("gpu", [g for g in GPUS.values() if g.mig_capable], ids=lambda g: g.name)
def test_catalog_config_layouts_are_upstream_entries(gpu, upstream_mig_configs):
    upstream = upstream_mig_configs[0]["mig-configs"]
    checked = 0
    for name in gpu.mig_configs:
        layout = gpu.mig_config_layout(name)
        if layout is None:
            continue
        assert layout in [e.get("mig-devices") for e in upstream[name]], f"{gpu.name} {name}: {layout}"
        checked += 1
    # all-disabled and all-enabled name no layout; all-balanced and the seven single-profile configs do.
    assert checked == 8, f"{gpu.name}: {checked} layouts checked"
