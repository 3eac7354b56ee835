"""The nodes of one region, as kwok nodes advertising what the real ones would.

Every pool runs at its maxSize (what the autoscaler can reach: the rehearsal does not run it), spread over the
pool's zones the way the cloud balances them. Each node carries:
- the labels and taints the plan gives its node group (EKS `labels`/`taints`, GKE `nodeConfig.labels`/`taints`):
  the shared schema of DESIGN.md §4 among them;
- the labels the cloud adds (instance type, region, zone, node group; EKS's `topology.k8s.aws/network-node-layer-*`
  on EFA instance types, GKE's `cloud.google.com/gce-topology-*` on compact placement) and, on pools the GPU
  Operator manages, those NFD and GPU feature discovery add (`nvidia.com/gpu.present`);
- capacity: the machine's vCPUs and memory (allocatable: ALLOCATABLE_SHARE of them), the GPU resources the
  device plugin advertises (`components/domain/gpu_resources.py`: whole GPUs, MIG slices, time-slice shares) and,
  on EFA pools, `vpc.amazonaws.com/efa` as the EFA device plugin counts interfaces.
Each node gets a /24 of the rehearsal's pod network as its pod CIDR (tools/rehearsal/network.py): kwok gives
pods addresses from it, and a pod the rehearsal runs as a process listens on that address.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from components.catalog.machines import SYSTEM_MACHINES
from components.config.environment import EnvironmentSpec
from components.config.region import GpuPoolSpec, RegionSpec
from components.domain.gpu_partitioning import gpu_software
from components.domain.gpu_resources import EFA_RESOURCE, schedulable_resources
from components.domain.host import ALLOCATABLE_SHARE
from components.k8s.names import cluster_name
from components.k8s.topology import ZONE_LABEL, pool_fabric, uses_placement_group
from platform_catalog.machines import MACHINES
from tools.plan.model import Plan

KWOK_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
PODS_PER_NODE = 110  # the kubelet's default --max-pods (GKE's default too; EKS's AL2023 sets it per ENI)
_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}


@dataclass(frozen=True)
class NodePoolView:
    """A pool as the cloud builds it: its node group's labels and taints from the plan, its size and zones."""

    name: str
    machine_type: str
    size: int
    zones: list[str]
    labels: dict[str, str]
    taints: list[dict[str, str]]
    group: str  # EKS node group / GKE node pool name (the cloud's own label)
    capacity_type: str  # EKS ON_DEMAND | SPOT; GKE: the same words, for the label below
    gpu_pool: GpuPoolSpec | None


def _node_groups(plan: Plan, cluster: str) -> dict[str, dict[str, Any]]:
    """Node group name -> plan inputs, for EKS node groups and GKE node pools of `cluster`."""
    groups: dict[str, dict[str, Any]] = {}
    for r in plan.resources:
        if r.type == "aws:eks/nodeGroup:NodeGroup" and r.inputs.get("clusterName") == cluster:
            groups[r.inputs["nodeGroupName"]] = {
                "labels": r.inputs.get("labels") or {},
                "taints": [
                    {"key": t["key"], "value": t.get("value", ""), "effect": _EFFECTS[t["effect"]]}
                    for t in r.inputs.get("taints") or []
                ],
                "capacity": r.inputs.get("capacityType") or "ON_DEMAND",
            }
        elif r.type == "gcp:container/nodePool:NodePool" and r.inputs.get("cluster") == cluster:
            node_config = r.inputs.get("nodeConfig") or {}
            groups[r.inputs["name"]] = {
                "labels": node_config.get("labels") or {},
                "taints": [
                    {"key": t["key"], "value": t.get("value", ""), "effect": _EFFECTS[t["effect"]]}
                    for t in node_config.get("taints") or []
                ],
                "capacity": "SPOT" if node_config.get("spot") else "ON_DEMAND",
            }
    return groups


def region_pools(plan: Plan, env: EnvironmentSpec, env_name: str, region: RegionSpec) -> list[NodePoolView]:
    cluster = cluster_name(env_name, region)
    groups = _node_groups(plan, cluster)
    aws = region.cloud == "aws"
    pools = []
    system_group = f"{cluster}-system" if aws else "system"
    system = groups.get(system_group, {"labels": {}, "taints": [], "capacity": "ON_DEMAND"})
    pools.append(
        NodePoolView(
            name="system",
            machine_type=region.system_pool.machine_type,
            size=region.system_pool.max_size,
            zones=list(region.zones),
            labels=system["labels"],
            taints=system["taints"],
            group=system_group,
            capacity_type=system["capacity"],
            gpu_pool=None,
        )
    )
    for pool in region.gpu_pools:
        group_name = f"{cluster}-{pool.name}" if aws else pool.name
        group = groups.get(group_name)
        if group is None:
            raise LookupError(f"{cluster}: no node group {group_name} in the plan for GPU pool {pool.name}")
        pools.append(
            NodePoolView(
                name=pool.name,
                machine_type=pool.machine_type,
                size=pool.max_size,
                zones=list(pool.zones or region.zones),
                labels=group["labels"],
                taints=group["taints"],
                group=group_name,
                capacity_type=group["capacity"],
                gpu_pool=pool,
            )
        )
    return pools


def _short_hash(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:10]


def _cloud_labels(region: RegionSpec, cluster: str, pool: NodePoolView, zone: str, index: int) -> dict[str, str]:
    labels = {
        "node.kubernetes.io/instance-type": pool.machine_type,
        "topology.kubernetes.io/region": region.region,
        ZONE_LABEL: zone,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
    }
    gpu = pool.gpu_pool
    if region.cloud == "aws":
        labels |= {"eks.amazonaws.com/nodegroup": pool.group, "eks.amazonaws.com/capacityType": pool.capacity_type}
        machine = MACHINES.get(pool.machine_type)
        if machine is not None and machine.efa_interfaces:
            # EC2 instance topology: three network layers, shared by the nodes of one placement group and zone.
            spine = _short_hash(cluster, pool.name, zone)
            labels |= {
                "topology.k8s.aws/network-node-layer-1": f"nn-{spine}1",
                "topology.k8s.aws/network-node-layer-2": f"nn-{spine}2",
                "topology.k8s.aws/network-node-layer-3": f"nn-{spine}3",
            }
    else:
        labels |= {
            "cloud.google.com/gke-nodepool": pool.group,
            "cloud.google.com/machine-family": pool.machine_type.split("-")[0],
        }
        if pool.capacity_type == "SPOT":
            labels["cloud.google.com/gke-spot"] = "true"
        if gpu is not None:
            labels["cloud.google.com/gke-accelerator"] = MACHINES[gpu.machine_type].accelerator
            if gpu.gke_partition_size:
                labels["cloud.google.com/gke-gpu-partition-size"] = gpu.gke_partition_size
            if uses_placement_group(gpu):
                block = _short_hash(cluster, pool.name, zone)
                labels |= {
                    "cloud.google.com/gce-topology-block": f"b-{block}",
                    "cloud.google.com/gce-topology-subblock": f"sb-{block}",
                    "cloud.google.com/gce-topology-host": f"h-{_short_hash(cluster, pool.name, zone, str(index))}",
                }
    if gpu is not None and gpu_software(gpu).operator_managed:
        labels |= {"feature.node.kubernetes.io/pci-10de.present": "true", "nvidia.com/gpu.present": "true"}
    return labels


def _capacity(pool: NodePoolView) -> dict[str, str]:
    if pool.gpu_pool is not None:
        machine = MACHINES[pool.machine_type]
        vcpus, memory_gib = machine.vcpus, machine.memory_gib
    else:
        system = SYSTEM_MACHINES[pool.machine_type]
        vcpus, memory_gib = system.vcpus, system.memory_gib
    capacity = {
        "cpu": str(vcpus),
        "memory": f"{memory_gib}Gi",
        "pods": str(PODS_PER_NODE),
        "ephemeral-storage": "100Gi",
    }
    if pool.gpu_pool is not None:
        capacity |= {name: str(count) for name, count in schedulable_resources(pool.gpu_pool).items()}
        if pool_fabric(pool.gpu_pool) == "efa":
            capacity[EFA_RESOURCE] = str(MACHINES[pool.machine_type].efa_interfaces)
    return capacity


def _allocatable(capacity: dict[str, str], pool: NodePoolView) -> dict[str, str]:
    if pool.gpu_pool is not None:
        machine = MACHINES[pool.machine_type]
        vcpus, memory_gib = machine.vcpus, machine.memory_gib
    else:
        system = SYSTEM_MACHINES[pool.machine_type]
        vcpus, memory_gib = system.vcpus, system.memory_gib
    return capacity | {
        "cpu": f"{math.floor(vcpus * ALLOCATABLE_SHARE * 1000)}m",
        "memory": f"{math.floor(memory_gib * ALLOCATABLE_SHARE * 1024)}Mi",
    }


def region_nodes(
    plan: Plan, env: EnvironmentSpec, env_name: str, region: RegionSpec, pod_cidr: Callable[[int], str]
) -> Iterator[dict[str, Any]]:
    """Node objects (with status) for every node of every pool of `region`, at maxSize; `pod_cidr(n)` is the n-th
    node's pod range on the rehearsal's pod network."""
    cluster = cluster_name(env_name, region)
    number = 0
    for pool in region_pools(plan, env, env_name, region):
        for index in range(pool.size):
            zone = pool.zones[index % len(pool.zones)]
            name = f"{pool.name}-{zone}-{index}"
            capacity = _capacity(pool)
            yield {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "annotations": {KWOK_ANNOTATION[0]: KWOK_ANNOTATION[1], "node.alpha.kubernetes.io/ttl": "0"},
                    "labels": {
                        "kubernetes.io/hostname": name,
                        **_cloud_labels(region, cluster, pool, zone, index),
                        **pool.labels,
                    },
                },
                "spec": {"taints": pool.taints, "podCIDR": pod_cidr(number)},
                "status": {"capacity": capacity, "allocatable": _allocatable(capacity, pool)},
            }
            number += 1
