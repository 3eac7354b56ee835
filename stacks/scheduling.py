"""Volcano's narrow inputs from the environment: the tiers, each tenant's queue in the region, the packed pools."""

from __future__ import annotations

from components.addons.volcano import FabricDomain, TenantQueue, VolcanoArgs
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.domain.queues import gpu_capacity
from components.k8s.cluster import ClusterHandle
from components.k8s.topology import uses_placement_group


def tenant_queues(env: EnvironmentSpec, region: RegionSpec) -> list[TenantQueue]:
    """A queue per tenant with a GPU quota in this region."""
    queues = []
    for tenant in env.tenants:
        quota = next((q for q in tenant.gpu_quotas if q.region == region.name), None)
        if quota is not None:
            queues.append(
                TenantQueue(
                    tenant=tenant.name,
                    tier=tenant.tier,
                    weight=tenant.weight,
                    reclaimable=tenant.reclaimable,
                    capability=quota.capability,
                    guarantee=quota.guarantee,
                )
            )
    return queues


def fabric_domains(region: RegionSpec) -> list[FabricDomain]:
    """The region's pools packed into a placement group, with their zones."""
    return [FabricDomain(pool=p.name, zones=region.pool_zones(p)) for p in region.gpu_pools if uses_placement_group(p)]


def volcano_args(env: EnvironmentSpec, region: RegionSpec, cluster: ClusterHandle) -> VolcanoArgs:
    return VolcanoArgs(
        cluster=cluster,
        label_domain=env.label_domain,
        production=env.production,
        gpu_resources=sorted(gpu_capacity(region)),
        priority_tiers=env.priority_tiers,
        queues=tenant_queues(env, region),
        fabrics=fabric_domains(region),
    )
