"""What a tenant's Volcano queue may use in a region: its quota in the resources the region's pools offer."""

from __future__ import annotations

from collections import Counter

from components.config.region import RegionSpec
from components.config.scheduling import GpuQuotaSpec
from components.domain.gpu_resources import schedulable_resources
from platform_catalog.machines import MACHINES


def gpu_capacity(region: RegionSpec) -> dict[str, int]:
    """Resource name -> count the region's GPU pools hold at their maxSize."""
    capacity: Counter[str] = Counter()
    for pool in region.gpu_pools:
        if pool.machine_type not in MACHINES:
            continue  # reported by the region checks
        for resource, per_node in schedulable_resources(pool).items():
            capacity[resource] += per_node * pool.max_size
    return dict(capacity)


def queue_capability(region: RegionSpec, quota: GpuQuotaSpec) -> dict[str, int]:
    """The queue's limit on every GPU resource the region's pools offer: the quota's, else 0. Volcano bounds a queue
    only in the resources its capability lists (upstream.VOLCANO_UNLISTED_RESOURCES_ARE_UNCAPPED)."""
    return {**dict.fromkeys(sorted(gpu_capacity(region)), 0), **quota.capability}
