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
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from components.config.base import Issue, KeyPath, join_path
from components.config.scheduling import queue_capability
from components.domain.fit import placement_fit, prefill_fit
from components.domain.gpu_resources import schedulable_resources
from components.domain.host import pod_host_resources
from components.domain.slots import placement_resource

if TYPE_CHECKING:
    from components.config.environment import EnvironmentSpec
    from components.config.region import GpuPoolSpec, RegionSpec
    from components.config.workloads import ModelSpec, PlacementSpec


@dataclass(frozen=True)
class ReplicaDemand:
    """One model on one pool: what a replica takes of the pool's resource, and its replica range."""

    model: ModelSpec
    placement: PlacementSpec
    pool: GpuPoolSpec
    resource: str
    per_replica: int  # units of `resource`: tensor parallel x pipeline parallel
    tensor_parallel: int
    pipeline_parallel: int
    prefill: bool = False  # the prefill pods of a disaggregated placement
    # Servers of this model a node runs at once: its slots, or fewer where CPU and memory bound them.
    servers_per_node: int | None = None

    @property
    def label(self) -> str:
        return self.model.name + (" prefill" if self.prefill else "")

    @property
    def min_units(self) -> int:
        return self.placement.min_replicas * self.per_replica


def replica_demands(env: EnvironmentSpec, region: RegionSpec) -> list[ReplicaDemand]:
    """Every placement in `region`, in config order, sized."""
    demands = []
    for model in env.models:
        for placement in model.placements:
            if placement.region != region.name:
                continue
            pool = region.pool(placement.pool)
            assert pool is not None, "placements are validated before"
            resource = placement_resource(pool, placement.resource)
            assert resource is not None, "placements are validated before"
            sizing = placement_fit(model, pool, resource).sizing
            tp, pp = sizing.tensor_parallel, sizing.pipeline_parallel
            servers = pod_host_resources(region, pool, tp, runtime=model.runtime).servers_per_node
            demands.append(ReplicaDemand(model, placement, pool, resource, tp * pp, tp, pp, servers_per_node=servers))
            if placement.serving_mode != "aggregated" and placement.prefill is not None:
                demands.append(_prefill_demand(model, region, placement))
    return demands


def _prefill_demand(model: ModelSpec, region: RegionSpec, placement: PlacementSpec) -> ReplicaDemand:
    """The prefill pods of a disaggregated (or auto) placement: fixed replicas on their own pool."""
    spec = placement.prefill
    assert spec is not None
    pool = region.pool(spec.pool)
    assert pool is not None, "placements are validated before"
    resource = placement_resource(pool, None)
    assert resource is not None, "placements are validated before"
    tp = prefill_fit(model, pool, resource, spec.max_num_seqs).sizing.tensor_parallel
    fixed = placement.model_copy(
        update={"pool": pool.name, "min_replicas": spec.replicas, "max_replicas": spec.replicas, "prefill": None}
    )
    return ReplicaDemand(model, fixed, pool, resource, tp, tp, 1, prefill=True)


def pool_holds(demand: ReplicaDemand, sharing: list[ReplicaDemand]) -> int:
    """Most replicas of `demand` the pool runs at maxSize while the other models on it keep their minimum.

    Whole replicas per node (tensor-parallel pods do not straddle nodes; a pipeline-parallel replica
    takes `pipeline_parallel` nodes), and no more than the units the others leave.
    """
    pool = demand.pool
    per_node = schedulable_resources(pool)[demand.resource]
    servers = per_node // demand.tensor_parallel
    if demand.servers_per_node is not None:
        servers = min(servers, demand.servers_per_node)
    alone = servers * pool.max_size // demand.pipeline_parallel
    others = sum(d.min_units for d in sharing if d is not demand and d.resource == demand.resource)
    return min(alone, (per_node * pool.max_size - others) // demand.per_replica)


def check_capacity(env: EnvironmentSpec) -> Iterator[Issue]:
    for i, region in enumerate(env.regions):
        demands = replica_demands(env, region)
        for j, pool in enumerate(region.gpu_pools):
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
