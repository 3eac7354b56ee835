"""The model cache of a region with every default resolved: quotas sized from its smallest GPU node, and the pools
its workers run on."""

from __future__ import annotations

from collections.abc import Sequence

from components.config.model_store import MEMORY_SHARE_DEFAULT, SSD_SHARE_DEFAULT, CachePlan, gib
from components.config.region import GpuPoolSpec, RegionSpec
from platform_catalog.machines import MACHINES


def smallest_node(region: RegionSpec, attribute: str) -> tuple[GpuPoolSpec, int]:
    """The region's GPU pool whose machine has the least of `attribute` (memory_gib, local_nvme_gib), and that amount."""
    pools: Sequence[GpuPoolSpec] = region.gpu_pools
    pool = min(pools, key=lambda p: getattr(MACHINES[p.machine_type], attribute))
    return pool, getattr(MACHINES[pool.machine_type], attribute)


def cache_plan(region: RegionSpec) -> CachePlan:
    """Resolved quotas of an enabled cache (the region must have GPU pools)."""
    spec = region.model_cache
    _, memory = smallest_node(region, "memory_gib")
    _, nvme = smallest_node(region, "local_nvme_gib")
    return CachePlan(
        memory_gib=gib(spec.memory) if spec.memory else max(1, int(memory * MEMORY_SHARE_DEFAULT)),
        ssd_gib=gib(spec.ssd) if spec.ssd else int(nvme * SSD_SHARE_DEFAULT) // 10 * 10,
        replicas=spec.replicas or max(1, sum(p.min_size for p in region.gpu_pools)),
        pools=worker_pools(region),
        fuse_memory_gib=gib(spec.fuse_memory),
    )


def worker_pools(region: RegionSpec) -> tuple[str, ...]:
    """The GPU pools cache workers run on: the always-on ones (minSize >= 1), else those with the fewest GPUs per
    node. A worker that may land on a pool scaled from zero keeps its node up when it has nowhere else to go (the
    autoscaler moves an evictable pod only to a node that exists), so an 8-GPU node scaled up for one model would
    stay for the cache; FUSE daemons, which run wherever a model server mounts the cache, read from these workers."""
    always_on = tuple(p.name for p in region.gpu_pools if p.min_size >= 1)
    if always_on:
        return always_on
    fewest = min(MACHINES[p.machine_type].gpus for p in region.gpu_pools)
    return tuple(p.name for p in region.gpu_pools if MACHINES[p.machine_type].gpus == fewest)
