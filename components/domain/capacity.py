"""What each placement demands of its pool, and how many replicas a pool holds at maxSize: the arithmetic
the capacity checks (components/checks/capacity_checks.py), plan.md and the cost estimate share."""

from __future__ import annotations

from dataclasses import dataclass

from components.config.environment import EnvironmentSpec
from components.config.region import GpuPoolSpec, RegionSpec
from components.config.workloads import ModelSpec, PlacementSpec, PrefillSpec
from components.domain.fit import placement_fit, prefill_fit
from components.domain.gpu_resources import schedulable_resources
from components.domain.host import pod_host_resources
from components.domain.slots import placed_in, placed_pool, placed_resource


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
    for model, placement, pool, resource in placed_in(env, region):
        sizing = placement_fit(model, pool, resource).sizing
        tp, pp = sizing.tensor_parallel, sizing.pipeline_parallel
        servers = pod_host_resources(region, pool, tp, runtime=model.runtime).servers_per_node
        demands.append(ReplicaDemand(model, placement, pool, resource, tp * pp, tp, pp, servers_per_node=servers))
        if placement.serving_mode != "aggregated" and placement.prefill is not None:
            demands.append(_prefill_demand(model, region, placement, placement.prefill))
    return demands


def _prefill_demand(model: ModelSpec, region: RegionSpec, placement: PlacementSpec, spec: PrefillSpec) -> ReplicaDemand:
    """The prefill pods (`spec`) of a disaggregated (or auto) placement: fixed replicas on their own pool."""
    pool = placed_pool(region, spec.pool)
    resource = placed_resource(pool, None)
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
