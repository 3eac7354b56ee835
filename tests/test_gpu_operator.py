"""The GPU Operator per cluster: values per node image, per-pool configs, and what the plans declare."""

from __future__ import annotations

import pytest
import yaml

from components.addons.gpu_operator import (
    DEVICE_PLUGIN_CONFIGMAP,
    MIG_PARTED_CONFIGMAP,
    NAMESPACE,
    device_plugin_config,
    gpu_operator_values,
    mig_parted_config,
    needs_gpu_operator,
    operator_pools,
)
from components.k8s.topology import gpu_pool_labels
from tests.gpu_specs import pool, region

OPERATOR_TYPE = "inference-platform:addons:GpuOperator"
CONFIGMAP_TYPE = "kubernetes:core/v1:ConfigMap"
NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"


def _installs(values: dict) -> tuple[bool, bool, bool]:
    return values["driver"]["enabled"], values["toolkit"]["enabled"], values["cdi"]["enabled"]


# --- values per node image ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reg", "installs"),
    [
        # EKS AL2023 NVIDIA AMI: driver and toolkit are in the image
        (region("aws", pool("l40s", "g6e.xlarge")), (False, False, False)),
        (
            region("aws", pool("h100", "p5.48xlarge"), pool("mig", "p4de.24xlarge", mig={"layout": {"7g.80gb": 1}})),
            (
                False,
                False,
                False,
            ),
        ),
        # GKE with driver installation disabled: the operator installs driver and toolkit
        (region("gcp", pool("a100", "a2-ultragpu-1g", driverInstall="operator")), (True, True, True)),
        # GKE cluster mixing both: the operator installs them, and stays off the GKE-managed nodes (labels)
        (
            region("gcp", pool("l4", "g2-standard-8"), pool("a100", "a2-ultragpu-1g", driverInstall="operator")),
            (True, True, True),
        ),
    ],
    ids=["eks-al2023", "eks-al2023-mig", "gke-operator-driver", "gke-mixed"],
)
def test_driver_and_toolkit_follow_the_node_image(reg, installs):
    assert needs_gpu_operator(reg)
    values = gpu_operator_values(operator_pools(reg))
    assert _installs(values) == installs
    assert values["devicePlugin"]["enabled"] is True
    assert values["dcgmExporter"]["enabled"] is True
    assert values["gfd"]["enabled"] is True


def test_gke_managed_pools_need_no_operator():
    reg = region(
        "gcp",
        pool("l4", "g2-standard-8", timeSlicing={"replicas": 4}),
        pool("a100", "a2-ultragpu-1g", gkePartitionSize="1g.10gb"),
    )
    assert not needs_gpu_operator(reg)
    # ...and the GKE-managed nodes of a mixed cluster are closed to the operator's operands.
    for spec in reg.gpu_pools:
        assert gpu_pool_labels("d", "c", spec)["nvidia.com/gpu.deploy.operands"] == "false"


def test_no_gpu_pools_need_no_operator():
    assert not needs_gpu_operator(region("aws"))


def test_gke_time_sharing_is_left_to_gke():
    reg = region(
        "gcp",
        pool("l4", "g2-standard-8", timeSlicing={"replicas": 4}),
        pool("a", "a2-ultragpu-1g", driverInstall="operator"),
    )
    assert device_plugin_config(operator_pools(reg)) is None
    assert "config" not in gpu_operator_values(operator_pools(reg))["devicePlugin"]


def test_operator_tolerates_the_gpu_taint_everywhere_it_runs():
    values = gpu_operator_values(operator_pools(region("aws", pool("l40s", "g6e.xlarge"))))
    # the taint every GPU pool carries (nvidia.com/gpu=present:NoSchedule, the node groups' and node pools' taint)
    tolerations = [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}]
    assert values["daemonsets"]["tolerations"] == tolerations
    assert values["node-feature-discovery"]["worker"]["tolerations"] == tolerations


def test_dcgm_service_monitor_follows_the_monitoring_switch():
    reg = region("aws", pool("l40s", "g6e.xlarge"))
    assert gpu_operator_values(operator_pools(reg))["dcgmExporter"]["serviceMonitor"] == {"enabled": False}
    assert gpu_operator_values(operator_pools(reg), monitoring=True)["dcgmExporter"]["serviceMonitor"] == {
        "enabled": True
    }


# --- MIG ---------------------------------------------------------------------------------------------------


def test_whole_gpu_cluster_runs_no_mig_manager():
    values = gpu_operator_values(operator_pools(region("aws", pool("h100", "p5.48xlarge"))))
    assert values["mig"] == {"strategy": "none"}
    assert values["migManager"] == {"enabled": False}


def test_named_mig_configs_use_the_generated_config():
    reg = region("aws", pool("mig", "p5.48xlarge", mig={"strategy": "single", "profile": "all-1g.10gb"}))
    values = gpu_operator_values(operator_pools(reg))
    assert values["mig"] == {"strategy": "single"}
    assert values["migManager"] == {"enabled": True}  # no config.name: the MIG manager generates the names
    assert mig_parted_config(operator_pools(reg)) is None


def test_custom_layouts_get_a_mig_parted_config_with_every_config_the_cluster_uses():
    reg = region(
        "aws",
        pool("custom", "p4de.24xlarge", mig={"layout": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}}),
        pool("named", "p5.48xlarge", mig={"profile": "all-1g.10gb.me"}),
        pool("whole", "p5.48xlarge"),
    )
    values = gpu_operator_values(operator_pools(reg))
    assert values["mig"] == {"strategy": "mixed"}
    assert values["migManager"] == {"enabled": True, "config": {"name": MIG_PARTED_CONFIGMAP}}
    assert mig_parted_config(operator_pools(reg)) == {
        "version": "v1",
        "mig-configs": {
            "all-disabled": [{"devices": "all", "mig-enabled": False}],
            "custom-custom": [
                {"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}}
            ],
            "all-1g.10gb.me": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb+me": 1}}],
        },
    }
    # every MIG config label of the cluster names an entry of the ConfigMap
    configs = mig_parted_config(operator_pools(reg))["mig-configs"]
    for spec in reg.gpu_pools:
        assert gpu_pool_labels("d", "c", spec)["nvidia.com/mig.config"] in configs


# --- time-slicing --------------------------------------------------------------------------------------------


def test_time_slicing_entries_are_selected_by_the_pool_label():
    reg = region(
        "aws",
        pool("small", "g6e.xlarge", timeSlicing={"replicas": 4}),
        pool("tiny", "g6.xlarge", timeSlicing={"replicas": 8}),
        pool("twin", "g6e.2xlarge", timeSlicing={"replicas": 4}),
        pool("whole", "g6e.xlarge"),
    )
    values = gpu_operator_values(operator_pools(reg))
    assert values["devicePlugin"] == {
        "enabled": True,
        "config": {"create": False, "name": DEVICE_PLUGIN_CONFIGMAP, "default": "default"},
    }
    entries = device_plugin_config(operator_pools(reg))
    assert entries == {
        "default": {"version": "v1", "flags": {"migStrategy": "none"}},
        "time-sliced-4": {
            "version": "v1",
            "sharing": {
                "timeSlicing": {
                    "failRequestsGreaterThanOne": True,
                    "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
                }
            },
        },
        "time-sliced-8": {
            "version": "v1",
            "sharing": {
                "timeSlicing": {
                    "failRequestsGreaterThanOne": True,
                    "resources": [{"name": "nvidia.com/gpu", "replicas": 8}],
                }
            },
        },
    }
    for spec in reg.gpu_pools:
        key = gpu_pool_labels("d", "c", spec).get("nvidia.com/device-plugin.config")
        assert key == (None if spec.time_slicing is None else f"time-sliced-{spec.time_slicing.replicas}")


# --- the plans ------------------------------------------------------------------------------------------------


def _operators(plan) -> dict[str, object]:
    return {plan.region_of(r): r for r in plan.of_type(OPERATOR_TYPE)}


def test_one_operator_per_cluster_with_operator_run_pools(env_plan):
    expected = {r.name for r in env_plan.spec.regions if needs_gpu_operator(r)}
    assert set(_operators(env_plan)) == expected
    releases = [r for r in env_plan.helm_releases() if r.inputs["name"] == "gpu-operator"]
    assert sorted(env_plan.cluster_of(r) for r in releases) == sorted(f"{env_plan.environment}-{n}" for n in expected)
    for release in releases:
        assert release.inputs["namespace"] == NAMESPACE
        assert release.inputs["version"] == "v26.7.0"
        reg = env_plan.spec.region(env_plan.region_of(release))
        assert release.inputs["values"] == gpu_operator_values(operator_pools(reg))


def test_prod_covers_each_node_image(prod_plan):
    values = {
        prod_plan.region_of(r): r.inputs["values"]
        for r in prod_plan.helm_releases()
        if r.inputs["name"] == "gpu-operator"
    }
    assert _installs(values["use1"]) == (False, False, False)  # EKS AL2023 NVIDIA
    assert _installs(values["usc1"]) == (True, True, True)  # GKE a100-mig: driver installation disabled
    # ...while usc1's h200 and l4 pools stay GKE's
    usc1 = prod_plan.spec.region("usc1")
    for name in ("h200", "l4"):
        assert gpu_pool_labels("d", "c", usc1.pool(name))["nvidia.com/gpu.deploy.operands"] == "false"


def test_gpu_operator_namespace_is_the_only_privileged_one(env_plan):
    """Besides the cache's FUSE daemons (Fluid's CSI plugin and the Alluxio workers), which the issue allows,
    and the standalone DCGM exporter of GKE-managed pools."""
    from components.addons.model_cache import CACHE_NAMESPACE, FLUID_NAMESPACE
    from platform_catalog.names import DCGM_EXPORTER_NAMESPACE

    privileged = [
        r.inputs["metadata"]["name"]
        for r in env_plan.of_type(NAMESPACE_TYPE)
        if r.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
        and r.inputs["metadata"]["name"] not in (CACHE_NAMESPACE, FLUID_NAMESPACE, DCGM_EXPORTER_NAMESPACE)
    ]
    assert privileged == [NAMESPACE] * len(_operators(env_plan))


def test_dev_configmaps_exist_before_the_release_and_match_the_labels(dev_plan):
    release = next(r for r in dev_plan.helm_releases() if r.inputs["name"] == "gpu-operator")
    operator = _operators(dev_plan)["use1"]
    config_maps = {
        r.inputs["metadata"]["name"]: r for r in dev_plan.descendants(operator.urn) if r.type == CONFIGMAP_TYPE
    }
    assert set(config_maps) == {MIG_PARTED_CONFIGMAP, DEVICE_PLUGIN_CONFIGMAP}
    for cm in config_maps.values():
        assert cm.inputs["metadata"]["namespace"] == NAMESPACE
        assert cm.urn in release.options["dependsOn"]
        assert dev_plan.cluster_of(cm) == "dev-use1"
    mig_configs = yaml.safe_load(config_maps[MIG_PARTED_CONFIGMAP].inputs["data"]["config.yaml"])["mig-configs"]
    sharing = config_maps[DEVICE_PLUGIN_CONFIGMAP].inputs["data"]
    reg = dev_plan.spec.region("use1")
    labels = {p.name: gpu_pool_labels(dev_plan.spec.label_domain, "dev-use1", p) for p in reg.gpu_pools}
    assert labels["a100-mig"]["nvidia.com/mig.config"] == "custom-a100-mig"
    assert labels["a100-mig"]["nvidia.com/mig.config"] in mig_configs
    assert labels["l40s"]["nvidia.com/device-plugin.config"] == "time-sliced-2"
    assert yaml.safe_load(sharing["time-sliced-2"])["sharing"]["timeSlicing"]["resources"] == [
        {"name": "nvidia.com/gpu", "replicas": 2}
    ]
