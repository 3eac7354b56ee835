"""Priority tiers and tenant GPU quotas: what the Volcano queues and PriorityClasses are made of.

Quotas are written in the extended-resource names the region's pools offer
(`schedulable_resources`), so a queue limit can never name a resource no node has.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from components.config.base import Issue, KeyPath, Name, Spec, duplicates, join_path, unknown_name
from components.config.region import RegionSpec
from components.domain.gpu_resources import schedulable_resources
from platform_catalog.machines import MACHINES

if TYPE_CHECKING:
    from components.config.environment import EnvironmentSpec

GpuCount = Annotated[int, Field(ge=0)]

# Volcano creates these queues itself; a tenant of the same name would collide with them.
RESERVED_QUEUE_NAMES = ("default", "root")


class PriorityTierSpec(Spec):
    """A priority tier: one PriorityClass per cluster, ordered by value."""

    name: Name = Field(description="Tier name that models and tenants refer to, e.g. realtime.")
    value: int = Field(ge=0, le=1_000_000_000, description="PriorityClass value; higher runs first.")
    preempts: bool = Field(
        description="May evict pods of lower tiers to start (preemptionPolicy PreemptLowerPriority, else Never)."
    )
    preemptible: bool = Field(description="May be evicted by higher tiers and by queue reclaim.")
    description: str = Field("", description="What the tier is for; shown on the PriorityClass.")


def default_tiers() -> list[PriorityTierSpec]:
    """The seed's order: real-time beats batch beats best-effort, and only real-time preempts."""
    return [
        PriorityTierSpec(
            name="realtime",
            value=1_000_000,
            preempts=True,
            preemptible=False,
            description="Interactive serving: evicts batch and best-effort pods, is never evicted for them.",
        ),
        PriorityTierSpec(
            name="batch",
            value=10_000,
            preempts=False,
            preemptible=True,
            description="Offline work with a deadline: waits for capacity, yields to real-time.",
        ),
        PriorityTierSpec(
            name="best-effort",
            value=100,
            preempts=False,
            preemptible=True,
            description="Opportunistic work on idle GPUs: first to be evicted.",
        ),
    ]


class GpuQuotaSpec(Spec):
    """A tenant's share of one region's GPUs: the limits of its Volcano queue there."""

    region: str = Field(description="Name of a region entry; the tenant gets a queue on that region's cluster.")
    capability: dict[str, GpuCount] = Field(
        min_length=1,
        description='Most the queue may use, per resource the pools offer, e.g. {"nvidia.com/gpu": 16}; a resource '
        "the region's pools offer and this leaves out (a MIG profile) may not be used at all: its limit is 0.",
    )
    guarantee: dict[str, GpuCount] = Field(
        default_factory=dict,
        description="Reserved for the queue even when others are busy; must fit in the cluster's GPU capacity.",
    )


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


def _unknown_tier(tier: str, tiers: list[str], path: KeyPath) -> Iterator[Issue]:
    if tier not in tiers:
        yield Issue(join_path(*path), f"unknown priority tier {tier!r}; use one of {', '.join(tiers)}")


def check_scheduling(env: EnvironmentSpec) -> Iterator[Issue]:
    """Tiers that resolve; quotas in offered resources, within capability and the cluster's capacity."""
    yield from duplicates([t.name for t in env.priority_tiers], ("priorityTiers",), "tier name")
    yield from duplicates([str(t.value) for t in env.priority_tiers], ("priorityTiers",), "tier value")
    tiers = [t.name for t in env.priority_tiers]
    for i, model in enumerate(env.models):
        yield from _unknown_tier(model.tier, tiers, ("models", i, "tier"))
    for i, tenant in enumerate(env.tenants):
        yield from _unknown_tier(tenant.tier, tiers, ("tenants", i, "tier"))
        if tenant.name in RESERVED_QUEUE_NAMES:
            yield Issue(
                join_path("tenants", i, "name"),
                f"{tenant.name!r} is the name of a queue Volcano manages itself; rename the tenant",
            )
    yield from _check_quotas(env)
    yield from _check_model_queues(env)


def _check_quotas(env: EnvironmentSpec) -> Iterator[Issue]:
    regions = {r.name: r for r in env.regions}
    # region -> resource -> (tenant, path of its guarantee), to report guarantees that overflow the cluster
    guaranteed: dict[str, dict[str, list[tuple[str, int, KeyPath]]]] = {}
    for i, tenant in enumerate(env.tenants):
        yield from duplicates([q.region for q in tenant.gpu_quotas], ("tenants", i, "gpuQuotas"), "quota region")
        for j, quota in enumerate(tenant.gpu_quotas):
            path = ("tenants", i, "gpuQuotas", j)
            region = regions.get(quota.region)
            if region is None:
                yield unknown_name(join_path(*path, "region"), "region", quota.region, regions)
                continue
            offered = gpu_capacity(region)
            for key, amounts in (("capability", quota.capability), ("guarantee", quota.guarantee)):
                for resource in amounts:
                    if resource not in offered:
                        names = ", ".join(sorted(offered)) or "none: the region has no GPU pools"
                        yield Issue(
                            join_path(*path, key),
                            f"{resource!r} is not offered by any GPU pool of region {region.name!r} "
                            f"(offered: {names}); use an offered resource name or add a pool that offers it",
                        )
            for resource, amount in quota.guarantee.items():
                limit = quota.capability.get(resource)
                if limit is not None and amount > limit:
                    yield Issue(
                        join_path(*path, "guarantee"),
                        f"guarantees {amount} {resource} but the capability is only {limit}; "
                        "lower the guarantee or raise the capability",
                    )
                if resource in offered:
                    guaranteed.setdefault(region.name, {}).setdefault(resource, []).append((tenant.name, amount, path))
    for region_name, by_resource in guaranteed.items():
        capacity = gpu_capacity(regions[region_name])
        for resource, entries in by_resource.items():
            total = sum(amount for _, amount, _ in entries)
            if total > capacity[resource]:
                parts = ", ".join(f"{tenant} {amount}" for tenant, amount, _ in entries)
                yield Issue(
                    join_path(*entries[-1][2], "guarantee"),
                    f"guarantees in region {region_name!r} add up to {total} {resource} ({parts}), more than the "
                    f"{capacity[resource]} its GPU pools hold at maxSize; lower the guarantees or raise pool maxSize",
                )


def _check_model_queues(env: EnvironmentSpec) -> Iterator[Issue]:
    """A model owned by a tenant runs in that tenant's queue, so the queue must exist wherever it is placed."""
    tenants = {t.name: t for t in env.tenants}
    regions = {r.name for r in env.regions}
    for i, model in enumerate(env.models):
        tenant = tenants.get(model.tenant or "")
        if tenant is None:
            continue
        quota_regions = {q.region for q in tenant.gpu_quotas}
        for j, placement in enumerate(model.placements):
            if placement.region in regions and placement.region not in quota_regions:
                yield Issue(
                    join_path("models", i, "placements", j, "region"),
                    f"tenant {tenant.name!r} has no GPU quota in region {placement.region!r}, so the model's pods "
                    f"would have no queue there; add a gpuQuotas entry for {placement.region!r} to the tenant",
                )
