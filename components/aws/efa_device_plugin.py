"""The EFA device plugin: without it pods cannot request `vpc.amazonaws.com/efa` and NCCL falls back to TCP."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.catalog.charts import CHARTS
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import helm_release
from components.k8s.topology import fabric_selector, gpu_tolerations


@dataclass(frozen=True, kw_only=True)
class EfaDevicePluginArgs:
    cluster: ClusterHandle
    label_domain: str
    # The plugin mounts /dev/infiniband and the kubelet socket from the host, so it must run
    # privileged: it shares the GPU Operator's namespace, the one privileged namespace.
    namespace: k8s.core.v1.Namespace


class EfaDevicePlugin(pulumi.ComponentResource):
    """A DaemonSet on the cluster's EFA pools only (their fabric label), tolerating the GPU taint."""

    def __init__(self, name: str, args: EfaDevicePluginArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:aws:EfaDevicePlugin", name, None, opts)
        chart = CHARTS["aws-efa-k8s-device-plugin"]
        self.release = helm_release(
            chart.name,
            chart,
            args.cluster,
            args.namespace,
            {
                # The chart tolerates only CriticalAddonsOnly; GPU pools carry the GPU taint.
                "tolerations": gpu_tolerations(),
                "nodeSelector": fabric_selector(args.label_domain, "efa"),
            },
            parent=self,
        )
        self.register_outputs({})
