"""What lets pods use a GPUDirect pool's extra NICs: GKE pod networks and the NCCL plugin on the nodes.

The node pool attaches the NICs (components/gcp/gpudirect_networks.py); a pod reaches them only through
GKE multi-networking objects: per NIC a `GKENetworkParamSet` (its VPC, subnet and device mode) and the
`Network` (type Device) pods name in their `networking.gke.io/interfaces` annotation; GKE rejects a pod
that names a Network that does not exist (FACTS-3.md §7). NCCL finds the NICs through Google's plugin,
which a DaemonSet per GPUDirect flavour installs into GKE's driver directory on those nodes: gIB for
RDMA (A3 Ultra, A4), the TCPX plugin for A3 High.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.catalog.machines import MACHINES
from components.config.region import GpuPoolSpec
from components.gcp.gpudirect_networks import gpu_nic_vpc, gpu_nics
from components.k8s.cluster import ClusterHandle
from components.k8s.names import PINNED_IMAGE_SKIPS, SYSTEM_NAMESPACE, checkov_skips

NETWORKING_API = "networking.gke.io/v1"  # the storage version of gke-networking-api v0.2.0's CRDs
INSTALLER_NAMESPACE = SYSTEM_NAMESPACE  # as upstream's; GKE admits system-node-critical pods there
PAUSE_IMAGE = "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"


@dataclass(frozen=True)
class NcclInstaller:
    """Google's NCCL plugin installer for one GPUDirect flavour, as its upstream DaemonSet runs it.

    [GoogleCloudPlatform/container-engine-accelerators@992db81: gpudirect-rdma/nccl-rdma-installer.yaml,
    gpudirect-tcpx/nccl-tcpx-installer.yaml]
    """

    name: str
    image: str
    host_paths: dict[str, str]  # volume -> host directory
    mounts: dict[str, str]  # volume -> mount path in the installer
    script: str  # what the installer image runs: install, then copy the libraries to the host


# TCPXO (A3 Mega) has none here: its upstream installer first runs a host script (iptables, aperture
# device bind mounts) from an unpinned `ubuntu` image; until that step is pinned and owned, A3 Mega pools
# get their pod networks but no NCCL plugin.
NCCL_INSTALLERS: dict[str, NcclInstaller] = {
    "rdma": NcclInstaller(
        "nccl-rdma-installer",
        "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.1.1",
        {"library-dir-host": "/home/kubernetes/bin/nvidia/lib64", "gib": "/home/kubernetes/bin/gib"},
        {
            "library-dir-host": "/usr/local/home/kubernetes/bin/nvidia/lib64",
            "gib": "/usr/local/home/kubernetes/bin/gib",
        },
        "set -ex\n/scripts/container_entry.sh install\n"
        "cp -r /var/lib/gib/lib64/. /usr/local/home/kubernetes/bin/nvidia/lib64\n"
        "cp -r /var/lib/gib/. /usr/local/home/kubernetes/bin/gib\n",
    ),
    "tcpx": NcclInstaller(
        "nccl-tcpx-installer",
        "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9",
        {"var-lib": "/var/lib", "library-dir-host": "/home/kubernetes/bin"},
        {"var-lib": "/var/lib", "library-dir-host": "/usr/local"},
        "set -ex\n/scripts/container_entry.sh install --install-nccl\nmkdir -p /usr/local/nvidia/lib64\n"
        "cp -r /var/lib/tcpx/lib64/. /usr/local/nvidia/lib64\n",
    ),
}


def pod_network_objects(cluster_name: str, pool: GpuPoolSpec) -> list[dict[str, Any]]:
    """The pool's GKENetworkParamSet and Network objects, one pair per extra NIC (cluster-scoped)."""
    objects: list[dict[str, Any]] = []
    for nic in gpu_nics(pool):
        params = {
            "vpc": gpu_nic_vpc(cluster_name, pool, nic.network),
            "vpcSubnet": gpu_nic_vpc(cluster_name, pool, nic.subnet),
            "deviceMode": nic.device_mode,
        }
        objects.append(
            {
                "apiVersion": NETWORKING_API,
                "kind": "GKENetworkParamSet",
                "metadata": {"name": nic.pod_network},
                "spec": params,
            }
        )
        ref = {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": nic.pod_network}
        objects.append(
            {
                "apiVersion": NETWORKING_API,
                "kind": "Network",
                "metadata": {"name": nic.pod_network},
                "spec": {"type": "Device", "parametersRef": ref},
            }
        )
    return objects


# The installer must be what Checkov flags: it writes the NCCL plugin to the host from a privileged init
# container with host network and PID (upstream's own DaemonSet), then a pause container holds the pod.
INSTALLER_REASON = (
    "GKE's NCCL RDMA installer (container-engine-accelerators gpudirect-rdma) installs the NCCL plugin on the host "
    "from an init container: privileged, host network and PID by design, in kube-system; a pause container holds it"
)
INSTALLER_CHECKOV_SKIPS = checkov_skips(
    {
        **PINNED_IMAGE_SKIPS,
        **dict.fromkeys(
            ("CKV_K8S_8", "CKV_K8S_9", "CKV_K8S_16", "CKV_K8S_17", "CKV_K8S_19", "CKV_K8S_20", "CKV_K8S_22",
             "CKV_K8S_23", "CKV_K8S_28", "CKV_K8S_29", "CKV_K8S_30", "CKV_K8S_31", "CKV_K8S_37", "CKV_K8S_38",
             "CKV_K8S_40"),
            INSTALLER_REASON,
        ),
    }
)  # fmt: skip


def installer_daemonset(installer: NcclInstaller, label_domain: str, pools: list[str]) -> dict[str, Any]:
    """The installer on the pools' nodes: host network and PID, privileged, as upstream's; a pause keeps it."""
    labels = {"k8s-app": installer.name}
    return {
        "metadata": {
            "name": installer.name,
            "namespace": INSTALLER_NAMESPACE,
            "labels": labels,
            "annotations": INSTALLER_CHECKOV_SKIPS,
        },
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {"key": f"{label_domain}/pool", "operator": "In", "values": pools}
                                        ]
                                    }
                                ]
                            }
                        }
                    },
                    "tolerations": [{"operator": "Exists"}],
                    "hostNetwork": True,
                    "hostPID": True,
                    "volumes": [{"name": v, "hostPath": {"path": path}} for v, path in installer.host_paths.items()],
                    "initContainers": [
                        {
                            "name": installer.name,
                            "image": installer.image,
                            # Upstream requests 150m CPU; the memory and the limits are ours (it copies files).
                            "resources": {
                                "requests": {"cpu": "150m", "memory": "128Mi"},
                                "limits": {"cpu": "1", "memory": "512Mi"},
                            },
                            "securityContext": {"privileged": True},
                            "volumeMounts": [{"name": v, "mountPath": path} for v, path in installer.mounts.items()],
                            "command": ["/bin/sh", "-c"],
                            "args": [installer.script],
                        }
                    ],
                    "containers": [
                        {
                            "name": "pause",
                            "image": PAUSE_IMAGE,
                            "resources": {
                                "requests": {"cpu": "10m", "memory": "16Mi"},
                                "limits": {"cpu": "10m", "memory": "16Mi"},
                            },
                        }
                    ],
                },
            },
        },
    }


@dataclass(frozen=True)
class GpuDirectPodsArgs:
    cluster: ClusterHandle
    label_domain: str
    depends_on: tuple[pulumi.Resource, ...] = ()  # the node pools whose VPCs the param sets name


class GpuDirectPods(pulumi.ComponentResource):
    """Pod networks for every GPUDirect pool of a GKE cluster, and one NCCL installer per flavour."""

    def __init__(self, name: str, args: GpuDirectPodsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:gcp:GpuDirectPods", name, None, opts)
        cluster = args.cluster
        k8s_opts = pulumi.ResourceOptions(
            parent=self, provider=cluster.provider, depends_on=[*cluster.ready, *args.depends_on]
        )
        pools = [p for p in cluster.region.gpu_pools if p.gpu_direct]
        for pool in pools:
            for obj in pod_network_objects(cluster.name, pool):
                k8s.apiextensions.CustomResource(
                    f"{cluster.name}-{obj['kind'].lower()}-{obj['metadata']['name']}",
                    api_version=obj["apiVersion"],
                    kind=obj["kind"],
                    metadata=obj["metadata"],
                    spec=obj["spec"],
                    opts=k8s_opts,
                )
        flavours: dict[str, list[str]] = {}
        for pool in pools:
            flavours.setdefault(MACHINES[pool.machine_type].gpudirect, []).append(pool.name)
        for flavour, names in flavours.items():
            installer = NCCL_INSTALLERS.get(flavour)
            if installer is None:
                continue  # TCPXO: not installed, see NCCL_INSTALLERS
            ds = installer_daemonset(installer, args.label_domain, names)
            k8s.apps.v1.DaemonSet(
                f"{cluster.name}-{installer.name}", metadata=ds["metadata"], spec=ds["spec"], opts=k8s_opts
            )
        self.register_outputs({"pools": [p.name for p in pools], "installers": sorted(flavours)})
