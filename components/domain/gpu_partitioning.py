"""Who runs a GPU pool's NVIDIA software, and how its GPUs are split (MIG, time-slicing).

The pool's node labels (topology.gpu_pool_labels), the GPU Operator's values and ConfigMaps
and the schedulable resources are all derived from these answers, so they cannot disagree.

Ownership per node image (the rule agreed with the GPU pool components):
- EKS, AL2023 NVIDIA AMI: the image ships the driver and the container toolkit; the GPU
  Operator runs the device plugin, GFD, DCGM exporter and the MIG manager.
- GKE, driverInstall=cloud: GKE installs the driver, configures containerd and runs its own
  device plugin (time-sharing via gpu_sharing_config, MIG via gpu_partition_size). The
  operator's operands all need its `nvidia` runtime class, which such nodes lack, so the
  operator stays off them entirely (`nvidia.com/gpu.deploy.operands=false`).
- GKE, driverInstall=operator: GKE driver installation is disabled and GKE's device plugin is
  turned off by a node label; the GPU Operator installs and runs everything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from components.config.region import GpuPoolSpec
from platform_catalog.gpus import MIG_DISABLED
from platform_catalog.machines import MACHINES

Owner = Literal["node-image", "gke", "operator"]

# Node labels read by the GPU Operator, its MIG manager and device plugin, and by GKE.
OPERANDS_LABEL = "nvidia.com/gpu.deploy.operands"
DRIVER_LABEL = "nvidia.com/gpu.deploy.driver"
TOOLKIT_LABEL = "nvidia.com/gpu.deploy.container-toolkit"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
# GKE skips its own device plugin on nodes with this label (NVIDIA GPU Operator on GKE guide).
GKE_NO_DEVICE_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"

CUSTOM_MIG_CONFIG_PREFIX = "custom-"


@dataclass(frozen=True)
class GpuSoftware:
    """Who provides each layer of a pool's GPU stack."""

    driver: Owner
    toolkit: Owner
    device_plugin: Literal["gke", "operator"]

    @property
    def operator_managed(self) -> bool:
        """The GPU Operator runs its operands (device plugin, GFD, DCGM exporter, MIG manager) on the pool."""
        return self.device_plugin == "operator"


def gpu_software(pool: GpuPoolSpec) -> GpuSoftware:
    if pool.driver_in_node_image:
        # driverInstall=operator is rejected there by the config checks.
        return GpuSoftware(driver="node-image", toolkit="node-image", device_plugin="operator")
    if pool.driver_install == "cloud":
        return GpuSoftware(driver="gke", toolkit="gke", device_plugin="gke")
    return GpuSoftware(driver="operator", toolkit="operator", device_plugin="operator")


def mig_config_name(pool: GpuPoolSpec) -> str | None:
    """The `nvidia.com/mig.config` value of an operator-MIG pool: the upstream name, or a generated one."""
    if pool.mig is None:
        return None
    return pool.mig.profile or f"{CUSTOM_MIG_CONFIG_PREFIX}{pool.name}"


def mig_layout(pool: GpuPoolSpec) -> dict[str, int]:
    """MIG devices per GPU (mig-parted spelling, e.g. `1g.10gb+me`) from the operator or GKE partitioning."""
    gpu = MACHINES[pool.machine_type].gpu_model
    if pool.mig is not None:
        return dict(pool.mig.layout) if pool.mig.layout else gpu.mig_config_layout(pool.mig.profile or "") or {}
    if pool.gke_partition_size:
        profile = gpu.mig_profile(pool.gke_partition_size)
        return {profile.name: profile.max_instances} if profile else {}
    return {}


def mig_resource_name(device: str) -> str:
    """The mixed-strategy resource of a MIG device; the device plugin turns `+` into `.` (`1g.10gb.me`)."""
    return "nvidia.com/mig-" + device.replace("+", ".")


def time_slicing_config_key(pool: GpuPoolSpec) -> str | None:
    """The device-plugin config entry of a pool the operator time-slices (GKE time-shares its own pools)."""
    if pool.time_slicing is None or not gpu_software(pool).operator_managed:
        return None
    return f"time-sliced-{pool.time_slicing.replicas}"


def partitioning_labels(pool: GpuPoolSpec) -> dict[str, str]:
    """Driver ownership and partitioning labels of a pool's nodes."""
    software = gpu_software(pool)
    if not software.operator_managed:
        return {OPERANDS_LABEL: "false"}
    labels: dict[str, str] = {}
    if software.driver != "operator":
        labels[DRIVER_LABEL] = "false"
    if software.toolkit != "operator":
        labels[TOOLKIT_LABEL] = "false"
    if pool.cloud_device_plugin:
        labels[GKE_NO_DEVICE_PLUGIN_LABEL] = "true"
    config = mig_config_name(pool)
    if config is not None:
        labels[MIG_CONFIG_LABEL] = config
    elif MACHINES[pool.machine_type].gpu_model.mig_capable:
        # Explicit: a reused or repaired node with MIG left on is reset to whole GPUs.
        labels[MIG_CONFIG_LABEL] = MIG_DISABLED
    key = time_slicing_config_key(pool)
    if key is not None:
        labels[DEVICE_PLUGIN_CONFIG_LABEL] = key
    return labels
