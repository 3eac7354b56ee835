"""Monthly cost of an environment at min size, at zero traffic and at max size, per region, pool and model.

A pool costs its nodes x hourly price x 730 hours. What runs at zero traffic (always on) is every
system pool at minSize and every GPU pool at the most of its minSize and the nodes its models'
minReplicas need; cache workers run one per GPU node, so workers beyond those nodes keep more up,
counted on the region's cheapest priced GPU pool (a floor). A model is charged its replicas' share of
their pool's nodes: GPU memory taken (TP x PP slots of the slot's memory) over the node's GPU memory. A
disaggregated placement has a row per side: its prefill pods produce no output tokens, so their cost is
carried into the decode row's price per output token.
An unknown price stays unknown: a figure sums what is priced and names what is not. NAT gateways
and load balancers have no verified price in the catalog and are listed as not priced.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from components.catalog.prices import HOURS_PER_MONTH, Price
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.cost.throughput import DecodeEstimate, estimate_decode
from components.domain.cache_plan import cache_plan
from components.domain.capacity import pool_holds, replica_demands
from components.domain.fit import placement_fit
from components.domain.gpu_resources import schedulable_resources
from platform_catalog.machines import MACHINES


@dataclass(frozen=True)
class PoolCost:
    region: str
    pool: str  # "system" for the system pool
    machine_type: str
    capacity_type: str
    price: Price | None
    min_nodes: int
    always_on_nodes: int
    max_nodes: int

    def monthly(self, nodes: int) -> float | None:
        """USD per month of `nodes` nodes; None when priced nodes are unknown (zero nodes cost nothing)."""
        if not nodes:
            return 0.0
        return None if self.price is None else nodes * self.price.usd_per_hour * HOURS_PER_MONTH


@dataclass(frozen=True)
class ModelCost:
    region: str
    model: str
    pool: str
    price: Price | None
    node_share: float  # of one node, per replica
    min_replicas: int
    max_replicas: int  # what the pool holds of the configured maximum
    decode: DecodeEstimate
    prefill: bool = False  # the prefill pods of a disaggregated placement: no output tokens of their own
    # On a decode row: its placement's prefill pods' USD per hour, per decode replica (None: a price is unknown).
    prefill_usd_per_hour: float | None = 0.0

    def monthly(self, replicas: int) -> float | None:
        if not replicas:
            return 0.0
        return None if self.price is None else replicas * self.node_share * self.price.usd_per_hour * HOURS_PER_MONTH

    @property
    def usd_per_million_output_tokens(self) -> float | None:
        if self.price is None or self.prefill or self.prefill_usd_per_hour is None:
            return None
        hourly = self.node_share * self.price.usd_per_hour + self.prefill_usd_per_hour
        return hourly / (self.decode.tokens_per_second * 3600) * 1e6


@dataclass(frozen=True)
class Total:
    """A sum over what is priced, and the (region/pool) whose price is unknown at that size."""

    usd: float
    unknown: tuple[str, ...]

    def text(self) -> str:
        usd = f"${self.usd:,.0f}"
        return f"{usd} + unknown ({', '.join(self.unknown)})" if self.unknown else usd


@dataclass(frozen=True)
class EnvironmentCost:
    pools: tuple[PoolCost, ...]
    models: tuple[ModelCost, ...]

    def total(self, size: str, region: str | None = None) -> Total:
        """`size`: "min", "always_on" or "max"."""
        usd, unknown = 0.0, []
        for p in self.pools:
            if region is not None and p.region != region:
                continue
            monthly = p.monthly(getattr(p, f"{size}_nodes"))
            if monthly is None:
                unknown.append(f"{p.region}/{p.pool}")
            else:
                usd += monthly
        return Total(usd, tuple(unknown))


def _price(env: EnvironmentSpec, region: RegionSpec, machine_type: str, capacity_type: str) -> Price | None:
    return env.pricing.price(
        cloud=region.cloud, region=region.region, capacity_type=capacity_type, machine_type=machine_type
    )


def _gpu_pools(env: EnvironmentSpec, region: RegionSpec) -> list[PoolCost]:
    demands = replica_demands(env, region)
    pools = []
    for pool in region.gpu_pools:
        per_node = schedulable_resources(pool)
        needed = [
            math.ceil(sum(d.min_units for d in demands if d.pool is pool and d.resource == r) / per_node[r])
            for r in per_node
        ]
        pools.append(
            PoolCost(
                region.name,
                pool.name,
                pool.machine_type,
                pool.capacity.type,
                _price(env, region, pool.machine_type, pool.capacity.type),
                pool.min_size,
                max(pool.min_size, *needed),
                pool.max_size,
            )
        )
    if region.model_cache.enabled and pools:
        extra = cache_plan(region).replicas - sum(p.always_on_nodes for p in pools)
        if extra > 0:
            priced = [p for p in pools if p.price is not None] or pools
            cheapest = min(priced, key=lambda p: p.price.usd_per_hour if p.price else 0)
            i = pools.index(cheapest)
            pools[i] = replace(cheapest, always_on_nodes=cheapest.always_on_nodes + extra)
    return pools


def _models(env: EnvironmentSpec, region: RegionSpec) -> list[ModelCost]:
    demands = replica_demands(env, region)
    costs = []
    for d in demands:
        machine = MACHINES[d.pool.machine_type]
        fit = placement_fit(d.model, d.pool, d.resource)
        share = d.per_replica * fit.slot.gpu_share / machine.gpus
        on_pool = [o for o in demands if o.pool is d.pool]
        costs.append(
            ModelCost(
                region.name,
                d.model.name,
                d.pool.name,
                _price(env, region, d.pool.machine_type, d.pool.capacity.type),
                share,
                d.placement.min_replicas,
                min(d.placement.max_replicas, pool_holds(d, on_pool)),
                estimate_decode(fit, gpu=machine.gpu),
                prefill=d.prefill,
            )
        )
    return [_with_prefill(c, costs) for c in costs]


def _with_prefill(row: ModelCost, rows: list[ModelCost]) -> ModelCost:
    """A decode row with its prefill pods' cost, spread over its (fixed) replicas."""
    prefill = [r for r in rows if r.prefill and r.model == row.model and not row.prefill]
    if not prefill:
        return row
    hourly = [r.monthly(r.max_replicas) for r in prefill]
    known = None if None in hourly else sum(h or 0.0 for h in hourly) / HOURS_PER_MONTH / max(1, row.max_replicas)
    return replace(row, prefill_usd_per_hour=known)


def environment_cost(env: EnvironmentSpec) -> EnvironmentCost:
    pools: list[PoolCost] = []
    models: list[ModelCost] = []
    for region in env.regions:
        system = region.system_pool
        pools.append(
            PoolCost(
                region.name,
                "system",
                system.machine_type,
                "onDemand",
                _price(env, region, system.machine_type, "onDemand"),
                system.min_size,
                system.min_size,
                system.max_size,
            )
        )
        pools += _gpu_pools(env, region)
        models += _models(env, region)
    return EnvironmentCost(tuple(pools), tuple(models))


@dataclass(frozen=True)
class BudgetConversion:
    """What a tenant's money budget buys on one placement of one of its models."""

    tenant: str
    usd_per_month: float
    placement: ModelCost

    @property
    def output_tokens_per_month(self) -> float | None:
        per_million = self.placement.usd_per_million_output_tokens
        return None if per_million is None else self.usd_per_month / per_million * 1e6

    @property
    def output_tokens_per_minute(self) -> float | None:
        tokens = self.output_tokens_per_month
        return None if tokens is None else tokens / (HOURS_PER_MONTH * 60)


def budget_conversions(env: EnvironmentSpec, cost: EnvironmentCost) -> list[BudgetConversion]:
    """Every tenant money budget against every placement of the tenant's models, in config order."""
    return [
        BudgetConversion(tenant.name, tenant.money_budget.usd_per_month, placement)
        for tenant in env.tenants
        if tenant.money_budget is not None
        for placement in cost.models
        if placement.model in tenant.models and not placement.prefill
    ]
