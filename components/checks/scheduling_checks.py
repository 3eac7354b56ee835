"""Priority tiers and tenant quotas that name what exists: tiers, regions and the resources their pools offer."""

from __future__ import annotations

from collections.abc import Iterator

from components.config.base import Issue, KeyPath, duplicates, join_path, unknown_name
from components.config.environment import EnvironmentSpec
from components.config.scheduling import RESERVED_QUEUE_NAMES
from components.domain.queues import gpu_capacity


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
