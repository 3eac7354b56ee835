"""Replicas that fit what exists: a model's replica range against its pool at maxSize and its tenant's queue.

A node autoscaler adds nodes up to a pool's maxSize and no further; Volcano admits a tenant's pods up to
its queue's capability. Minimum replicas beyond either never start, so they are config errors with the
arithmetic. A maximum beyond the pool is reported in plan.md ("capped by pool"): the autoscaler may ask,
the extra replicas stay pending. Federated models are checked per member (each member runs within its
placement's range). A disaggregated (or auto) placement's prefill pods are a demand of their own on the prefill
pool, fixed at `prefill.replicas`. Runs after the serving checks: every placement here is sized.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from components.config.base import Issue, KeyPath, join_path
from components.config.environment import EnvironmentSpec
from components.config.region import GpuPoolSpec, RegionSpec
from components.domain.capacity import ReplicaDemand, replica_demands
from components.domain.gpu_resources import schedulable_resources
from components.domain.queues import queue_capability


def check_capacity(env: EnvironmentSpec) -> Iterator[Issue]:
    for i, region in enumerate(env.regions):
        demands = replica_demands(env, region)
        pools: Sequence[GpuPoolSpec] = region.gpu_pools
        for j, pool in enumerate(pools):
            on_pool = [d for d in demands if d.pool.name == pool.name]
            yield from _check_pool(region, pool, on_pool, ("regions", i, "gpuPools", j, "maxSize"))
        yield from _check_queues(env, region, demands)


def _check_pool(region: RegionSpec, pool: GpuPoolSpec, demands: list[ReplicaDemand], path: KeyPath) -> Iterator[Issue]:
    per_node = schedulable_resources(pool)
    for resource in per_node:
        mine = [d for d in demands if d.resource == resource and d.min_units]
        needed = sum(d.min_units for d in mine)
        held = per_node[resource] * pool.max_size
        if needed <= held:
            continue
        parts = ", ".join(f"{d.label} {d.placement.min_replicas} x {d.per_replica}" for d in mine)
        nodes = math.ceil(needed / per_node[resource])
        yield Issue(
            join_path(*path),
            f"minReplicas on pool {region.name}/{pool.name} need {needed} {resource} ({parts}), more than the "
            f"{held} it holds at maxSize {pool.max_size} ({per_node[resource]} per node); raise maxSize to "
            f"{nodes} or lower minReplicas",
        )


def _check_queues(env: EnvironmentSpec, region: RegionSpec, demands: list[ReplicaDemand]) -> Iterator[Issue]:
    """A model's pods run in its tenant's queue: one replica, and all minimum replicas, within its capability."""
    for i, tenant in enumerate(env.tenants):
        for j, quota in enumerate(tenant.gpu_quotas):
            if quota.region != region.name:
                continue
            path = join_path("tenants", i, "gpuQuotas", j, "capability")
            mine = [d for d in demands if d.model.tenant == tenant.name]
            for resource, cap in queue_capability(region, quota).items():
                using = [d for d in mine if d.resource == resource]
                for d in using:
                    if d.per_replica > cap:
                        yield Issue(
                            path,
                            f"one replica of {d.label} needs {d.per_replica} {resource} (tensor parallel "
                            f"{d.tensor_parallel} x pipeline parallel {d.pipeline_parallel}), more than the "
                            f"{cap} this queue may use in region {region.name!r}; raise it to at least {d.per_replica}",
                        )
                needed = sum(d.min_units for d in using)
                if needed > cap and all(d.per_replica <= cap for d in using):
                    parts = ", ".join(f"{d.label} {d.placement.min_replicas} x {d.per_replica}" for d in using)
                    yield Issue(
                        path,
                        f"minReplicas of {tenant.name}'s models in region {region.name!r} need {needed} {resource} "
                        f"({parts}), more than the queue's {cap}; raise it to at least {needed} or lower minReplicas",
                    )
