"""DCGM exporter on GKE-managed GPU pools (driverInstall: cloud): GPU metrics where no GPU Operator runs.

The GPU Operator stays off those pools (components/domain/gpu_partitioning.py), and with it its DCGM
exporter; GKE's managed DCGM metrics go to Cloud Monitoring, not to the cluster's Prometheus the
dashboards and the utilisation alert read. So NVIDIA's own chart runs there, set up for GKE's
Container-Optimized OS: GKE's driver directory /home/kubernetes/bin/nvidia mounted at /usr/local/nvidia
(with its libraries on LD_LIBRARY_PATH, as GKE's GPU pods use it, FACTS-3.md §7), privileged because it
requests no GPU yet reads every GPU of the node, and GPU ids matched by device name as GKE's device
plugin reports them. The scrape target (components/addons/scrape_targets.py) adds the pool label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.catalog.charts import CHARTS
from components.config.region import GpuPoolSpec, RegionSpec
from components.domain.gpu_partitioning import gpu_software
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import helm_release, namespace
from components.k8s.inputs import InputError
from components.k8s.topology import gpu_tolerations
from platform_catalog.names import DCGM_EXPORTER_NAMESPACE

RELEASE = "dcgm-exporter"
GKE_DRIVER_DIR = "/home/kubernetes/bin/nvidia"
DRIVER_MOUNT = "/usr/local/nvidia"


def gke_managed_pools(region: RegionSpec) -> list[GpuPoolSpec]:
    """GPU pools whose driver and device plugin GKE runs: the GPU Operator's exporter does not reach them."""
    return [p for p in region.gpu_pools if not gpu_software(p).operator_managed]


def chart_values(label_domain: str, pools: Sequence[str]) -> dict[str, Any]:
    defaults = {"name": "exporter-metrics-volume", "mountPath": "/etc/dcgm-exporter/default-counters.csv"}
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": f"{label_domain}/pool", "operator": "In", "values": list(pools)}]}
                    ]
                }
            }
        },
        "tolerations": gpu_tolerations(),
        "securityContext": {"privileged": True},
        "extraHostVolumes": [{"name": "nvidia-install-dir-host", "hostPath": GKE_DRIVER_DIR}],
        # A list value replaces the chart's: its counters mount is kept (the exporter's -f reads it).
        "extraVolumeMounts": [
            {**defaults, "subPath": "default-counters.csv"},
            {"name": "nvidia-install-dir-host", "mountPath": DRIVER_MOUNT, "readOnly": True},
        ],
        "extraEnv": [
            {"name": "LD_LIBRARY_PATH", "value": f"{DRIVER_MOUNT}/lib64"},
            {"name": "DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE", "value": "device-name"},
        ],
        # The platform's own ServiceMonitor scrapes it (with the pool label), as for the operator's exporter.
        "serviceMonitor": {"enabled": False},
    }


@dataclass(frozen=True, kw_only=True)
class DcgmExporterArgs:
    cluster: ClusterHandle
    label_domain: str
    pools: Sequence[str]  # the GKE-managed GPU pools (gke_managed_pools): the exporter runs on their nodes

    def __post_init__(self) -> None:
        if not self.pools:
            raise InputError("pools", "name the GKE-managed GPU pools whose nodes the exporter runs on")


class DcgmExporter(pulumi.ComponentResource):
    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: DcgmExporterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:DcgmExporter", name, None, opts)
        pools = args.pools
        ns = namespace(DCGM_EXPORTER_NAMESPACE, args.cluster, self, "privileged")
        self.release = helm_release(
            RELEASE, CHARTS["dcgm-exporter"], args.cluster, ns, chart_values(args.label_domain, pools), parent=self
        )
        self.register_outputs({"namespace": DCGM_EXPORTER_NAMESPACE, "pools": list(pools)})
