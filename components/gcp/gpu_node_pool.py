"""One GPU pool on GKE: accelerators, driver ownership, capacity, placement and GPUDirect NICs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv4Network
from typing import Any

import pulumi
import pulumi_gcp as gcp

from components.config.gpu_pools import initial_nodes_per_zone
from components.config.region import GpuPoolSpec
from components.gcp.gpudirect_networks import GpuDirectNetworks, GpuDirectNetworksArgs
from components.gcp.network import GcpLocation
from components.k8s.inputs import InputError, gpu_machine
from components.k8s.topology import gpu_pool_labels, placement_group_name, uses_placement_group
from platform_catalog.machines import MACHINES
from platform_catalog.topology import GPU_TAINT

# GKE installs the driver (COS) unless the GPU Operator owns it; its driver containers need Ubuntu.
DRIVER_VERSION = {"cloud": "LATEST", "operator": "INSTALLATION_DISABLED"}
IMAGE_TYPE = {"cloud": "COS_CONTAINERD", "operator": "UBUNTU_CONTAINERD"}
# Spot VMs and flex-start VMs cannot consume reservations; on-demand nodes use any matching one.
RESERVATION_AFFINITY = {"onDemand": "ANY_RESERVATION", "spot": "NO_RESERVATION", "flexStart": "NO_RESERVATION"}
RESERVATION_NAME_KEY = "compute.googleapis.com/reservation-name"
# create: GKE waits for the initial nodes; an a3-ultragpu-8g takes ~15-20 min to boot (8 GPUs,
#   32 local SSDs, 9 extra NICs) and GPU stockouts make GKE retry: 90 min.
# update: with no spare GPU capacity to surge into, nodes are replaced one at a time: 180 min.
# delete: nodes drain and are deleted together: 60 min.
GPU_NODE_POOL_TIMEOUTS = pulumi.CustomTimeouts(create="90m", update="180m", delete="60m")


@dataclass(frozen=True, kw_only=True)
class GkeGpuNodePoolArgs:
    location: GcpLocation
    zones: Sequence[str]  # the pool's node locations, in the cluster's region
    gpu_nic_cidr: IPv4Network | None = None  # GPUDirect pools: their NICs' subnets are carved from it
    pool: GpuPoolSpec
    cluster_name: str
    label_domain: str
    # The cluster, by id (a GkeCluster's `cluster.name`, or an existing cluster's), and the nodes' account.
    cluster: pulumi.Input[str]
    node_service_account: pulumi.Input[str]

    def __post_init__(self) -> None:
        gpu_machine("pool.machine_type", self.pool.machine_type, "gcp")
        if not self.zones:
            raise InputError("zones", "name at least one zone for the pool's nodes")
        if self.pool.gpu_direct and self.gpu_nic_cidr is None:
            raise InputError("gpu_nic_cidr", "a GPUDirect pool's extra NICs need a range for their subnets")
        capacity = self.pool.capacity
        if capacity.type == "reservation" and not capacity.reservation_id:
            raise InputError("pool.capacity.reservation_id", "a reservation pool names the reservation it consumes")


class GkeGpuNodePool(pulumi.ComponentResource):
    """Compact placement policy, GPUDirect networks and the node pool of one GPU pool."""

    node_pool: gcp.container.NodePool

    def __init__(self, name: str, args: GkeGpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:gcp:GkeGpuNodePool", name, None, opts)
        pool, location, zones = args.pool, args.location, args.zones
        machine = MACHINES[pool.machine_type]

        extra: dict[str, Any] = {}
        if uses_placement_group(pool):
            policy = gcp.compute.ResourcePolicy(
                name,
                name=placement_group_name(args.cluster_name, pool.name),
                project=location.project,
                region=location.region,
                group_placement_policy={"collocation": "COLLOCATED"},
                opts=pulumi.ResourceOptions(parent=self),
            )
            extra["placement_policy"] = {"type": "COMPACT", "policy_name": policy.name}
        if args.gpu_nic_cidr is not None and pool.gpu_direct:
            networks = GpuDirectNetworks(
                name,
                GpuDirectNetworksArgs(
                    location=location,
                    zone=zones[0],
                    gpu_nic_cidr=args.gpu_nic_cidr,
                    pool=pool,
                    cluster_name=args.cluster_name,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            extra["network_config"] = {"additional_node_network_configs": networks.node_networks}

        node_config: dict[str, Any] = {
            "machine_type": machine.name,
            "disk_type": machine.boot_disk_type,
            "disk_size_gb": pool.disk_gib,
            "image_type": IMAGE_TYPE[pool.driver_install],
            "guest_accelerators": [_accelerator(pool)],
            "gvnic": {"enabled": True},
            # Image streaming: containers start before multi-GB inference images are fully pulled.
            "gcfs_config": {"enabled": True},
            "service_account": args.node_service_account,
            "oauth_scopes": ["https://www.googleapis.com/auth/cloud-platform"],
            # Operator-built driver modules are unsigned: Secure Boot would refuse to load them.
            "shielded_instance_config": {
                "enable_secure_boot": pool.driver_install == "cloud",
                "enable_integrity_monitoring": True,
            },
            "workload_metadata_config": {"mode": "GKE_METADATA"},
            "metadata": {"disable-legacy-endpoints": "true"},
            "labels": gpu_pool_labels(args.label_domain, args.cluster_name, pool),
            "taints": [{"key": GPU_TAINT.key, "value": GPU_TAINT.value, "effect": GPU_TAINT.cloud_effect}],
            "reservation_affinity": _reservation_affinity(pool),
        }
        if machine.local_ssd_count:
            # The bundled local SSDs back kubelet and containerd storage (images, emptyDir) as RAID0.
            node_config["ephemeral_storage_local_ssd_config"] = {"local_ssd_count": machine.local_ssd_count}
        if pool.capacity.type == "spot":
            node_config["spot"] = True
        flex_start = pool.capacity.type == "flexStart"
        if flex_start:
            node_config["flex_start"] = True

        self.node_pool = gcp.container.NodePool(
            name,
            name=pool.name,
            project=location.project,
            location=location.region,
            cluster=args.cluster,
            node_locations=list(zones),
            # Per zone: together at least minSize, which no autoscaler reaches for us (config/gpu_pools.py).
            initial_node_count=initial_nodes_per_zone(pool.desired, pool.max_size, len(zones)),
            autoscaling={
                "total_min_node_count": pool.min_size,
                "total_max_node_count": pool.max_size,
                # Take GPUs in whichever zone has them (and flex-start requires ANY).
                "location_policy": "ANY",
            },
            # Flex-start nodes are not repaired (GKE deletes them at the end of their run instead).
            management={"auto_repair": not flex_start, "auto_upgrade": True},
            # No spare GPU capacity to surge into: replace one node at a time.
            upgrade_settings={"strategy": "SURGE", "max_surge": 0, "max_unavailable": 1},
            node_config=node_config,
            **extra,
            opts=pulumi.ResourceOptions(
                parent=self, ignore_changes=["initialNodeCount"], custom_timeouts=GPU_NODE_POOL_TIMEOUTS
            ),
        )
        self.register_outputs({"nodePool": self.node_pool.name})


def _accelerator(pool: GpuPoolSpec) -> dict[str, Any]:
    """The GPUs, who installs their driver, and how GKE shares them (when GKE does)."""
    machine = MACHINES[pool.machine_type]
    accelerator: dict[str, Any] = {
        "type": machine.accelerator,
        "count": machine.gpus,
        "gpu_driver_installation_config": {"gpu_driver_version": DRIVER_VERSION[pool.driver_install]},
    }
    if pool.gke_partition_size:
        accelerator["gpu_partition_size"] = pool.gke_partition_size
    # With the GPU Operator, its device plugin time-slices instead of GKE's.
    if pool.time_slicing is not None and pool.driver_install == "cloud":
        accelerator["gpu_sharing_config"] = {
            "gpu_sharing_strategy": "TIME_SHARING",
            "max_shared_clients_per_gpu": pool.time_slicing.replicas,
        }
    return accelerator


def _reservation_affinity(pool: GpuPoolSpec) -> dict[str, Any]:
    capacity = pool.capacity
    if capacity.type == "reservation":
        return {
            "consume_reservation_type": "SPECIFIC_RESERVATION",
            "key": RESERVATION_NAME_KEY,
            "values": [capacity.reservation_id],
        }
    return {"consume_reservation_type": RESERVATION_AFFINITY[capacity.type]}
