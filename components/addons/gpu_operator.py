"""NVIDIA GPU Operator: device plugin, MIG manager, GPU Feature Discovery and DCGM exporter per cluster.

What the operator installs follows who owns each layer of the GPU stack on each pool
(components/domain/gpu_partitioning.py): the driver and container toolkit only where no node
image or GKE provides them, nothing at all on GKE-managed pools. Partitioning is per pool,
through node labels the operator reads: `nvidia.com/mig.config` selects a mig-parted config
(custom layouts come from our ConfigMap), `nvidia.com/device-plugin.config` a time-slicing
entry of the device plugin's ConfigMap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.catalog.charts import CHARTS
from components.config.region import GpuPoolSpec, RegionSpec
from components.domain.gpu_partitioning import (
    gpu_software,
    mig_config_name,
    mig_layout,
    time_slicing_config_key,
)
from components.domain.gpu_resources import WHOLE_GPU
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import helm_release, namespace
from components.k8s.inputs import InputError
from components.k8s.topology import gpu_tolerations
from platform_catalog.gpus import MIG_DISABLED
from platform_catalog.names import GPU_OPERATOR_NAMESPACE

NAMESPACE = GPU_OPERATOR_NAMESPACE
RELEASE = "gpu-operator"
MIG_PARTED_CONFIGMAP = "mig-parted-config"
MIG_PARTED_KEY = "config.yaml"  # the key the MIG manager reads from a custom ConfigMap
DEVICE_PLUGIN_CONFIGMAP = "device-plugin-config"
DEVICE_PLUGIN_DEFAULT = "default"  # entry for nodes without a device-plugin.config label


@dataclass(frozen=True, kw_only=True)
class GpuOperatorArgs:
    cluster: ClusterHandle
    # The cluster's GPU pools whose GPUs the operator runs (`operator_pools`): not GKE-managed ones, and of one MIG
    # strategy (the chart takes one per cluster).
    pools: Sequence[GpuPoolSpec]
    # True once Prometheus Operator CRDs exist in the cluster (the observability add-on): the
    # DCGM exporter then gets a ServiceMonitor. Off by default: without the CRD it cannot apply.
    monitoring: bool = False

    def __post_init__(self) -> None:
        if not self.pools:
            raise InputError("pools", "no GPU pool: the operator runs on a cluster's GPU pools")
        for i, pool in enumerate(self.pools):
            if not gpu_software(pool).operator_managed:
                raise InputError(f"pools[{i}]", f"{pool.name}: GKE manages its GPU stack, so the operator runs none")
        strategies = sorted({p.mig.strategy for p in self.pools if p.mig is not None})
        if len(strategies) > 1:
            raise InputError("pools", f"MIG strategies {', '.join(strategies)}: the operator takes one per cluster")


def operator_pools(region: RegionSpec) -> list[GpuPoolSpec]:
    """Pools whose GPUs the operator runs (all but GKE-managed ones)."""
    return [p for p in region.gpu_pools if gpu_software(p).operator_managed]


def needs_gpu_operator(region: RegionSpec) -> bool:
    return bool(operator_pools(region))


def mig_strategy(pools: Sequence[GpuPoolSpec]) -> str:
    """The cluster's MIG strategy: that of its operator-MIG pools (checked to agree), else none."""
    return next((p.mig.strategy for p in pools if p.mig is not None), "none")


def mig_parted_config(pools: Sequence[GpuPoolSpec]) -> dict[str, Any] | None:
    """The mig-parted config (version v1) for a cluster with custom layouts, else None.

    A named ConfigMap replaces the MIG manager's generated config, so it carries every config a
    node of the cluster may select: all-disabled (the default) and each MIG pool's own.
    """
    if not any(p.mig is not None and p.mig.layout for p in pools):
        return None
    configs: dict[str, list[dict[str, Any]]] = {MIG_DISABLED: [{"devices": "all", "mig-enabled": False}]}
    for pool in pools:
        name = mig_config_name(pool)  # None: a pool without MIG
        if name is not None:
            configs[name] = [{"devices": "all", "mig-enabled": True, "mig-devices": mig_layout(pool)}]
    return {"version": "v1", "mig-configs": configs}


def device_plugin_config(pools: Sequence[GpuPoolSpec]) -> dict[str, dict[str, Any]] | None:
    """Device-plugin config entries (key -> v1 config) when a pool is time-sliced by the operator, else None."""
    entries: dict[str, dict[str, Any]] = {}
    for pool in pools:
        key = time_slicing_config_key(pool)
        if key is not None and pool.time_slicing is not None:
            entries[key] = {
                "version": "v1",
                "sharing": {
                    "timeSlicing": {
                        # A pod asking for two shares of one GPU would get no more memory or compute.
                        "failRequestsGreaterThanOne": True,
                        "resources": [{"name": WHOLE_GPU, "replicas": pool.time_slicing.replicas}],
                    }
                },
            }
    if not entries:
        return None
    return {DEVICE_PLUGIN_DEFAULT: {"version": "v1", "flags": {"migStrategy": mig_strategy(pools)}}, **entries}


def gpu_operator_values(pools: Sequence[GpuPoolSpec], monitoring: bool = False) -> dict[str, Any]:
    """Chart values for one cluster, derived from its operator pools' node images and partitioning."""
    software = [gpu_software(p) for p in pools]
    installs_toolkit = any(s.toolkit == "operator" for s in software)
    mig_pools = [p for p in pools if p.mig is not None]
    mig_manager: dict[str, Any] = {"enabled": bool(mig_pools)}
    if mig_parted_config(pools) is not None:
        mig_manager["config"] = {"name": MIG_PARTED_CONFIGMAP}
    device_plugin: dict[str, Any] = {"enabled": True}
    if device_plugin_config(pools) is not None:
        device_plugin["config"] = {"create": False, "name": DEVICE_PLUGIN_CONFIGMAP, "default": DEVICE_PLUGIN_DEFAULT}
    return {
        # Node images (EKS AL2023 NVIDIA) and GKE bring their own driver and toolkit; the
        # operator installs them only for pools where GKE driver installation is disabled.
        "driver": {"enabled": any(s.driver == "operator" for s in software)},
        "toolkit": {"enabled": installs_toolkit},
        # CDI is set up by the operator's toolkit; a node image's toolkit injects devices itself.
        "cdi": {"enabled": installs_toolkit},
        "mig": {"strategy": mig_strategy(pools)},
        "migManager": mig_manager,
        "devicePlugin": device_plugin,
        "gfd": {"enabled": True},
        "dcgmExporter": {"enabled": True, "serviceMonitor": {"enabled": monitoring}},
        "daemonsets": {"tolerations": gpu_tolerations()},
        # NFD's worker labels the GPU nodes the operator then selects, so it must run on them.
        "node-feature-discovery": {"worker": {"tolerations": gpu_tolerations()}},
    }


class GpuOperator(pulumi.ComponentResource):
    """The GPU Operator release in the cluster's only privileged namespace, with its per-pool configs."""

    release: k8s.helm.v3.Release
    namespace: k8s.core.v1.Namespace  # also home of other node-level device plugins (EFA)

    def __init__(self, name: str, args: GpuOperatorArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:GpuOperator", name, None, opts)
        cluster, pools = args.cluster, args.pools
        # Driver, toolkit and MIG manager pods need host access: privileged here and nowhere else.
        ns = self.namespace = namespace(NAMESPACE, cluster, self, pod_security="privileged")

        def config_map(config_name: str, data: dict[str, str]) -> k8s.core.v1.ConfigMap:
            return k8s.core.v1.ConfigMap(
                f"{cluster.name}-{config_name}",
                metadata={"name": config_name, "namespace": ns.metadata["name"]},
                data=data,
                opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[ns, *cluster.ready]),
            )

        configs = []
        mig = mig_parted_config(pools)
        if mig is not None:
            configs.append(config_map(MIG_PARTED_CONFIGMAP, {MIG_PARTED_KEY: yaml.safe_dump(mig, sort_keys=False)}))
        sharing = device_plugin_config(pools)
        if sharing is not None:
            configs.append(
                config_map(
                    DEVICE_PLUGIN_CONFIGMAP,
                    {key: yaml.safe_dump(entry, sort_keys=False) for key, entry in sharing.items()},
                )
            )
        self.release = helm_release(
            RELEASE,
            CHARTS["gpu-operator"],
            cluster,
            ns,
            gpu_operator_values(pools, args.monitoring),
            parent=self,
            depends_on=configs,
        )
        self.register_outputs({"namespace": NAMESPACE, "release": self.release.name})
