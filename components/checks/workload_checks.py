"""Models and tenants that reference what the environment defines: regions, pools, tenants, adapters."""

from __future__ import annotations

from collections.abc import Iterator

from components.config.base import Issue, duplicates, join_path, unknown_name
from components.config.environment import EnvironmentSpec


def check_workloads(env: EnvironmentSpec) -> Iterator[Issue]:
    """Unique names and references that resolve: placements to pools, tenants to models."""
    regions = {r.name: r for r in env.regions}
    yield from duplicates([m.name for m in env.models], ("models",), "model name")
    for i, model in enumerate(env.models):
        seen: set[tuple[str, str]] = set()
        for j, placement in enumerate(model.placements):
            path = ("models", i, "placements", j)
            region = regions.get(placement.region)
            if region is None:
                yield unknown_name(join_path(*path, "region"), "region", placement.region, regions)
            elif region.pool(placement.pool) is None:
                pools = ", ".join(p.name for p in region.gpu_pools) or "none defined"
                yield Issue(
                    join_path(*path, "pool"),
                    f"region {region.name!r} has no GPU pool {placement.pool!r} (pools: {pools}); "
                    "add the pool to the region or fix the name",
                )
            if placement.min_replicas > placement.max_replicas:
                yield Issue(
                    join_path(*path, "minReplicas"),
                    f"minReplicas {placement.min_replicas} is greater than maxReplicas "
                    f"{placement.max_replicas}; lower minReplicas or raise maxReplicas",
                )
            key = (placement.region, placement.pool)
            if key in seen:
                yield Issue(join_path(*path), f"duplicate placement on {key[0]}/{key[1]}; merge the entries")
            seen.add(key)

    tenants = {t.name for t in env.tenants}
    for i, model in enumerate(env.models):
        if model.tenant is not None and model.tenant not in tenants:
            yield unknown_name(join_path("models", i, "tenant"), "tenant", model.tenant, sorted(tenants))

    models = {m.name for m in env.models} | set(env.gateway.external_models())
    yield from duplicates([t.name for t in env.tenants], ("tenants",), "tenant name")
    for i, tenant in enumerate(env.tenants):
        for j, name in enumerate(tenant.models):
            if name not in models:
                yield unknown_name(join_path("tenants", i, "models", j), "model", name, sorted(models))
        for j, lora in enumerate(tenant.loras):
            at = join_path("tenants", i, "loras", j, "baseModel")
            base = next((m for m in env.models if m.name == lora.base_model), None)
            if base is None:
                yield unknown_name(at, "model", lora.base_model, sorted(m.name for m in env.models))
            elif lora.rank > base.max_lora_rank:
                yield Issue(
                    join_path("tenants", i, "loras", j, "rank"),
                    f"rank {lora.rank} is above the {base.max_lora_rank} {base.name}'s LoRA slots are sized for; raise "
                    f"that model's maxLoraRank to {lora.rank}",
                )
