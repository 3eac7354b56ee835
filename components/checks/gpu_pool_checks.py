"""GPU pool checks that need the machine catalog: type, fabric, placement and capacity per cloud.

A pool that passes them can be built as asked: the type exists on the region's cloud, the fabric
it asks for is wired on that type, packed pools fit in one zone and bought capacity names its
reservation.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from components.catalog.machines import capacity_types, machines_of
from components.config.base import Issue, KeyPath, config_key, join_path
from components.config.environment import EnvironmentSpec
from components.config.gpu_pools import initial_nodes_per_zone
from components.config.region import (
    GpuPoolSpec,
    NetworkSpec,
    NodeScaling,
    RegionSpec,
    gpu_nic_cidr,
)
from components.domain.gpu_resources import schedulable_resources
from components.domain.queues import queue_capability
from platform_catalog.machines import MACHINES, MachineType

# Capacity types each cloud sells (Capacity Blocks are AWS-only, DWS flex-start GCP-only).
CAPACITY_TYPES = {
    "aws": ("onDemand", "spot", "reservation", "capacityBlock"),
    "gcp": ("onDemand", "spot", "reservation", "flexStart"),
}
RESERVED = ("reservation", "capacityBlock")
# "<type> is not offered <how>" per capacity type.
_OFFERED_AS = {
    "onDemand": "on demand",
    "spot": "as spot capacity",
    "reservation": "through reservations",
    "capacityBlock": "as Capacity Blocks",
    "flexStart": "through flex-start",
}
# The largest GPUDirect layout (RDMA: one gVNIC + 8 GPU NIC subnets) needs nine /24s.
_GPU_NIC_SUBNET_PREFIX = 24
_MAX_GPU_NIC_SUBNETS = 9


def check_gpu_pools(env: EnvironmentSpec) -> Iterator[Issue]:
    for i, region in enumerate(env.regions):
        pools: Sequence[GpuPoolSpec] = region.gpu_pools
        for j, pool in enumerate(pools):
            path = ("regions", i, "gpuPools", j)
            issues = list(_check_pool(region, pool, path))
            yield from issues
            if region.pools_start_per_zone and not issues:
                yield from _check_gke_start(pool, len(region.pool_zones(pool)), path)
        if any(p.gpu_direct for p in region.gpu_pools):
            yield from _check_accelerator_cidr(region.network, ("regions", i, "network"))
        if region.pools_start_per_zone:
            yield from _check_gke_start(region.system_pool, len(region.zones), ("regions", i, "systemPool"))


def _check_gke_start(pool: NodeScaling, zones: int, path: KeyPath) -> Iterator[Issue]:
    """A GKE pool starts with whole nodes per zone, and no autoscaler brings it up to its minimum later
    (upstream.AUTOSCALER_ADDS_NODES_ONLY_FOR_PENDING_PODS): it must start at its minimum."""
    per_zone = initial_nodes_per_zone(pool.desired, pool.max_size, zones)
    if per_zone * zones >= pool.min_size:
        return
    key = "desiredSize" if pool.desired_size is not None else "minSize"
    at_least = -(-pool.desired // zones) * zones
    yield Issue(
        join_path(*path, key),
        f"GKE starts a pool with the same number of nodes in each of its {zones} zones: {pool.desired} cannot be "
        f"reached within maxSize {pool.max_size} ({per_zone * zones} nodes), and the autoscaler never scales up to "
        f"minSize {pool.min_size}; make {key} a multiple of {zones} or raise maxSize to {at_least}",
    )


def unused_pools(env: EnvironmentSpec) -> Iterator[Issue]:
    """Warnings: GPU pools no model is placed on and no tenant's queue may use (their nodes would only idle)."""

    for i, region in enumerate(env.regions):
        placed = {
            pool
            for model in env.models
            for placement in model.placements
            if placement.region == region.name
            for pool in (placement.pool, placement.prefill.pool if placement.prefill else None)
            if pool
        }
        allowed = {
            resource
            for tenant in env.tenants
            for quota in tenant.gpu_quotas
            if quota.region == region.name
            for resource, cap in queue_capability(region, quota).items()
            if cap > 0
        }
        pools: Sequence[GpuPoolSpec] = region.gpu_pools
        for j, pool in enumerate(pools):
            if pool.name in placed or pool.machine_type not in MACHINES:
                continue
            offered = sorted(schedulable_resources(pool))
            if set(offered) & allowed:
                continue
            yield Issue(
                join_path("regions", i, "gpuPools", j),
                f"no model is placed on pool {pool.name!r} and no tenant's queue in region {region.name!r} may use its "
                f"{', '.join(offered)}, so nothing can use its nodes"
                + (f" ({pool.min_size} always on)" if pool.min_size else "")
                + "; place a model on it, give a tenant a quota of it, or remove the pool",
            )


def _check_pool(region: RegionSpec, pool: GpuPoolSpec, path: KeyPath) -> Iterator[Issue]:
    machine = MACHINES.get(pool.machine_type)
    if machine is None or machine.cloud != region.cloud:
        yield Issue(
            join_path(*path, "machineType"),
            f"{pool.machine_type!r} is not a known {region.cloud} GPU machine type; use one of "
            + ", ".join(machines_of(region.cloud)),
        )
        return
    yield from _check_fabric(pool, machine, path)
    yield from _check_placement(region, pool, machine, path)
    yield from _check_capacity(region, pool, machine, path)


def _check_fabric(pool: GpuPoolSpec, machine: MachineType, path: KeyPath) -> Iterator[Issue]:
    """The fabric a pool asks for is wired on its type (each cloud's pool model takes only its own fabric's key)."""
    if pool.efa and not machine.efa_interfaces:
        with_efa = sorted(m.name for m in MACHINES.values() if m.efa_interfaces)
        yield Issue(
            join_path(*path, "efa"),
            f"{machine.name} has no EFA interfaces; remove efa or use one of {', '.join(with_efa)}",
        )
    if pool.gpu_direct and machine.gpudirect == "none":
        with_gpudirect = sorted(m.name for m in MACHINES.values() if m.gpudirect != "none")
        yield Issue(
            join_path(*path, "gpuDirect"),
            f"{machine.name} has no GPUDirect NICs (TCPX, TCPXO or RDMA); remove gpuDirect or use one of "
            + ", ".join(with_gpudirect),
        )


def _check_placement(region: RegionSpec, pool: GpuPoolSpec, machine: MachineType, path: KeyPath) -> Iterator[Issue]:
    zones = region.pool_zones(pool)
    example = f"e.g. zones: [{zones[0]}]"
    if pool.placement_group and not machine.placement_group:
        yield Issue(
            join_path(*path, "placementGroup"),
            f"{machine.name} does not support compact placement; remove placementGroup",
        )
    elif pool.packed and len(zones) > 1:
        yield Issue(
            join_path(*path, "zones"),
            f"{pool.placement_kind} lives in one zone but the pool spans {len(zones)} ({', '.join(zones)}); "
            f"pin the pool to one zone, {example}",
        )
    elif len(zones) > 1 and (pool.efa or (pool.gpu_direct and machine.gpudirect == "rdma")):
        reason = "EFA traffic does not leave its subnet" if pool.efa else "the RoCE network profile is zonal"
        yield Issue(join_path(*path, "zones"), f"{reason}; pin the pool to one zone, {example}")
    elif len(zones) > 1 and pool.capacity.type in RESERVED:
        yield Issue(
            join_path(*path, "zones"),
            f"{pool.capacity.type} capacity sits in one zone; pin the pool to the reservation's zone, {example}",
        )


def _check_capacity(region: RegionSpec, pool: GpuPoolSpec, machine: MachineType, path: KeyPath) -> Iterator[Issue]:
    capacity = pool.capacity
    allowed = CAPACITY_TYPES[region.cloud]
    if capacity.type not in allowed:
        yield Issue(
            join_path(*path, "capacity", "type"),
            f"{capacity.type!r} is not sold on {region.cloud}; use one of {', '.join(allowed)}",
        )
        return
    offered = capacity_types(machine)
    if capacity.type not in offered:
        options = ", ".join(offered[:-1]) + f" or {offered[-1]}" if len(offered) > 1 else offered[0]
        yield Issue(
            join_path(*path, "capacity"),
            f"{machine.name} is not offered {_OFFERED_AS[capacity.type]}; use {options}",
        )
        return
    rid_path = join_path(*path, "capacity", "reservationId")
    if capacity.type in RESERVED and not capacity.reservation_id:
        what = "the Capacity Block id (cr-...)" if capacity.type == "capacityBlock" else "the reservation to consume"
        yield Issue(rid_path, f"capacity type {capacity.type} needs reservationId: set it to {what}")
    elif capacity.type not in RESERVED and capacity.reservation_id:
        yield Issue(rid_path, f"only used with reservation or capacityBlock, not {capacity.type}; remove it")
    elif (
        pool.reservation_id_format is not None
        and capacity.reservation_id
        and not pool.reservation_id_format.match(capacity.reservation_id)
    ):
        yield Issue(
            rid_path,
            f"{capacity.reservation_id!r} is not a capacity reservation id; use the cr-... id AWS shows for it",
        )
    if capacity.type == "flexStart" and pool.desired > 0:
        key, value = ("minSize", pool.min_size) if pool.min_size else ("desiredSize", pool.desired)
        yield Issue(
            join_path(*path, key), f"flex-start nodes are only granted to pending pods; set {key} to 0 (got {value})"
        )


def _check_accelerator_cidr(network: NetworkSpec, path: KeyPath) -> Iterator[Issue]:
    cidr = gpu_nic_cidr(network)
    key = join_path(*path, "acceleratorCidr")
    if cidr.prefixlen > _GPU_NIC_SUBNET_PREFIX - 4:
        yield Issue(
            key,
            f"{cidr} holds fewer than {_MAX_GPU_NIC_SUBNETS} /24 GPU NIC subnets; use a /20 or larger",
        )
    for other_key in ("cidr", "pods_cidr", "services_cidr", "control_plane_cidr"):
        other = getattr(network, other_key)
        if other is not None and cidr.overlaps(other):
            alias = config_key(type(network), other_key)
            yield Issue(key, f"{cidr} overlaps {alias} {other}; choose a range for the GPU NIC subnets outside it")
