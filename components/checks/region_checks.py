"""A region entry against the catalog: location, Kubernetes version, address plan, system pool and node scaling."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from components.catalog import regions as region_catalog
from components.catalog.machines import SYSTEM_MACHINES, system_machine_families, system_machines_of
from components.config.base import Issue, KeyPath, duplicates, join_path
from components.config.region import NodeScaling, RegionSpec
from platform_catalog.machines import MACHINES


def _check_existing_cluster(region: RegionSpec, path: KeyPath) -> Iterator[Issue]:
    existing = region.cluster.existing
    if existing is None or not region.gpu_pools:
        return
    zones = {z for pool in region.gpu_pools for z in region.pool_zones(pool)}
    yield from existing.gpu_node_issues(zones, (*path, "cluster", "existing"))


def check_region(region: RegionSpec, path: KeyPath) -> Iterator[Issue]:
    """Location, version and address-plan checks that need the catalog."""
    yield from _check_existing_cluster(region, path)
    cloud = region.cloud
    known_zones = region_catalog.zones_of(cloud, region.region)
    if known_zones is None:
        yield Issue(
            join_path(*path, "region"),
            f"{region.region!r} is not a known {cloud} region; use one of "
            + ", ".join(region_catalog.regions_of(cloud)),
        )
    else:
        for i, zone in enumerate(region.zones):
            if zone not in known_zones:
                yield Issue(
                    join_path(*path, "zones", i),
                    f"{zone!r} is not a zone of {region.region}; use one of {', '.join(known_zones)}",
                )
    yield from duplicates(region.zones, (*path, "zones"), "zone")

    versions = region_catalog.kubernetes_versions(cloud)
    if region.kubernetes_version not in versions:
        yield Issue(
            join_path(*path, "kubernetesVersion"),
            f"{region.kubernetes_version!r} is not supported on {cloud}; use one of {', '.join(versions)}",
        )

    yield from region.required_key_issues(path)
    yield from _check_network(region, (*path, "network"))

    for i, cidr in enumerate(region.api_access.public_cidrs):
        if cidr.prefixlen == 0:
            yield Issue(
                join_path(*path, "apiAccess", "publicCidrs", i),
                "opens the Kubernetes API to the whole internet; list your office/VPN CIDRs instead "
                "or leave publicCidrs empty for a private endpoint",
            )

    yield from _check_scaling(region.system_pool, (*path, "systemPool"))
    yield from _check_system_machine(region, (*path, "systemPool", "machineType"))
    yield from duplicates([p.name for p in region.gpu_pools], (*path, "gpuPools"), "pool name")
    for i, pool in enumerate(region.gpu_pools):
        pool_path = (*path, "gpuPools", i)
        yield from _check_scaling(pool, pool_path)
        for j, zone in enumerate(pool.zones or []):
            if zone not in region.zones:
                yield Issue(
                    join_path(*pool_path, "zones", j),
                    f"{zone!r} is not one of this region's zones ({', '.join(region.zones)}); "
                    "add it to the region's zones or pick one of them",
                )


def _check_system_machine(region: RegionSpec, path: KeyPath) -> Iterator[Issue]:
    """The system pool's type is a CPU type of the region's cloud: a typo, the other cloud's name or a GPU
    machine (no GPU taint there, so add-ons would fill it) each plan green otherwise."""
    name = region.system_pool.machine_type
    found = SYSTEM_MACHINES.get(name)
    if found is not None and found.cloud == region.cloud:
        return
    article = {"aws": "an AWS", "gcp": "a GCP"}
    families = f"use {article[region.cloud]} type of {system_machine_families(region.cloud)}"
    if found is not None:
        problem = f"{name!r} is {article[found.cloud]} machine type and this region is on {region.cloud}; "
    elif name in MACHINES:
        problem = f"{name!r} is a GPU machine type; the system pool runs controllers and add-ons on CPU nodes; "
    else:
        close = difflib.get_close_matches(name, system_machines_of(region.cloud), n=1, cutoff=0.8)
        hint = f"did you mean {close[0]!r}? " if close else ""
        problem = f"{name!r} is not a known {region.cloud} system-pool machine type; {hint}"
    yield Issue(join_path(*path), problem + families)


def _check_network(region: RegionSpec, path: KeyPath) -> Iterator[Issue]:
    net = region.network
    ranges = {
        "cidr": net.cidr,
        "podsCidr": net.pods_cidr,
        "servicesCidr": net.services_cidr,
        "controlPlaneCidr": net.control_plane_cidr,
    }
    present = [(k, v) for k, v in ranges.items() if v is not None]
    for i, (key_a, a) in enumerate(present):
        for key_b, b in present[i + 1 :]:
            if a.overlaps(b):
                yield Issue(
                    join_path(*path, key_b),
                    f"{b} overlaps {key_a} {a}; choose non-overlapping ranges",
                )
    yield from region.network_issues(path)


def _check_scaling(pool: NodeScaling, path: KeyPath) -> Iterator[Issue]:
    if pool.min_size > pool.max_size:
        yield Issue(
            join_path(*path, "minSize"),
            f"minSize {pool.min_size} is greater than maxSize {pool.max_size}; lower minSize or raise maxSize",
        )
    elif pool.desired_size is not None and not pool.min_size <= pool.desired_size <= pool.max_size:
        yield Issue(
            join_path(*path, "desiredSize"),
            f"desiredSize {pool.desired_size} is outside [{pool.min_size}, {pool.max_size}]; "
            "pick a value between minSize and maxSize",
        )
