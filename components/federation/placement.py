"""Where a federated model runs and in what proportion: pure functions over the spec.

The plan's report, the tests and the components compute members, labels and weights here, so
the diagram shows exactly what the PropagationPolicy says.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.config.environment import EnvironmentSpec
from components.config.region import GpuPoolSpec, RegionSpec
from components.config.workloads import ModelSpec, PlacementSpec
from components.domain.federation_members import federation_members, gpu_products
from components.domain.slots import placed_pool
from components.k8s.names import cluster_name
from platform_catalog.machines import MACHINES


def member_labels(domain: str, region: RegionSpec) -> dict[str, str]:
    """Labels of a member's Cluster object: where it runs and which GPU products its pools offer."""
    return {
        f"{domain}/cloud": region.cloud,
        f"{domain}/region": region.region,
        **{gpu_product_label(domain, gpu): "true" for gpu in gpu_products(region)},
    }


def gpu_product_label(domain: str, gpu: str) -> str:
    return f"{domain}/gpu-product-{gpu}"


@dataclass(frozen=True)
class MemberShare:
    """One member's part of a federated model: the pool it runs on, in its placement's replica range."""

    region: RegionSpec
    pool: GpuPoolSpec
    placement: PlacementSpec
    cluster: str  # the member's Cluster name in Karmada

    @property
    def gpu(self) -> str:
        return MACHINES[self.pool.machine_type].gpu


def model_shares(env: EnvironmentSpec, stack: str, model: ModelSpec) -> list[MemberShare]:
    """The federated model's members in placement order."""
    shares = []
    for placement in model.placements:
        region = env.region(placement.region)
        shares.append(MemberShare(region, placed_pool(region, placement.pool), placement, cluster_name(stack, region)))
    return shares


def replica_range(model: ModelSpec) -> tuple[int, int]:
    """(minReplicas, maxReplicas) of the federated template: the placements' totals.

    Every member gets the template and its OverridePolicy sets its own placement's range; the totals bound
    the model's PodDisruptionBudget.
    """
    return sum(p.min_replicas for p in model.placements), sum(p.max_replicas for p in model.placements)


def federated_models(env: EnvironmentSpec) -> list[ModelSpec]:
    return [m for m in env.models if m.federated and env.federation.enabled]


def member_regions(env: EnvironmentSpec) -> list[RegionSpec]:
    """The regions whose clusters join (none when federation is off)."""
    return federation_members(env) if env.federation.enabled else []
