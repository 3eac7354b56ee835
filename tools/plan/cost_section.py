"""plan.md's cost section and plan.json's `cost` figures: one computation (components/cost) shown twice."""

from __future__ import annotations

from typing import Any

from components.catalog.prices import HOURS_PER_MONTH, Price
from components.cost.monthly import (
    BudgetConversion,
    EnvironmentCost,
    ModelCost,
    PoolCost,
    budget_conversions,
    environment_cost,
)
from tools.plan.engine import integral_numbers
from tools.plan.model import Plan

SIZES = ("min", "always_on", "max")
NOT_PRICED = "NAT gateways, load balancers, disks, storage and traffic: not priced (no verified price in the catalog)"


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.0f}"


def _price_cell(price: Price | None) -> str:
    return "**price unknown**" if price is None else f"${price.usd_per_hour:g}/h"


def _sources(cost: EnvironmentCost) -> list[str]:
    seen = sorted({(p.price.source, p.price.as_of) for p in cost.pools if p.price is not None})
    return [f"- {source}, as of {as_of}" for source, as_of in seen]


def cost_section(plan: Plan) -> str:
    cost = environment_cost(plan.spec)
    rows = [
        "## Cost (monthly, USD)\n",
        f"Nodes x hourly price x {HOURS_PER_MONTH} h. *Always on* is what runs at zero traffic: minSize, the nodes "
        "minReplicas need and the nodes cache workers keep up. A price no source gives is **price unknown**, "
        "never a guess (set `pricing.prices` in the stack file).\n",
        "| region | pool | machine type | capacity | price | nodes min / always on / max | at min | always on "
        "| at max |",
        "|---|---|---|---|---|---|---:|---:|---:|",
    ]
    for p in cost.pools:
        rows.append(
            f"| {p.region} | {p.pool} | {p.machine_type} | {p.capacity_type} | {_price_cell(p.price)} "
            f"| {p.min_nodes} / {p.always_on_nodes} / {p.max_nodes} | {_usd(p.monthly(p.min_nodes))} "
            f"| {_usd(p.monthly(p.always_on_nodes))} | {_usd(p.monthly(p.max_nodes))} |"
        )
    for region in plan.spec.regions:
        cells = " | ".join(cost.total(size, region.name).text() for size in SIZES)
        rows.append(f"| {region.name} | **region total** | | | | | {cells} |")
    cells = " | ".join(f"**{cost.total(size).text()}**" for size in SIZES)
    rows.append(f"| **environment** | **total** | | | | | {cells} |")
    always_on, at_max = cost.total("always_on"), cost.total("max")
    share = f"{100 * always_on.usd / at_max.usd:.0f}%" if at_max.usd else "-"
    rows += [
        "",
        f"Always on: **{share}** of the priced cost at max size" + (" (priced pools only)." if at_max.unknown else "."),
        f"{NOT_PRICED}.\n",
        "| region | model | pool | share of a node per replica | replicas | at min | at max | est. output tokens/s "
        "per replica | $/1M output tokens | sanity vs the 7B-on-A100 reference |",
        "|---|---|---|---:|---|---:|---:|---:|---:|---|",
    ]
    for m in cost.models:
        rows.append(
            f"| {m.region} | {m.model}{' (prefill)' if m.prefill else ''} | {m.pool} | {m.node_share:.4g} "
            f"| {m.min_replicas}-{m.max_replicas} | {_usd(m.monthly(m.min_replicas))} "
            f"| {_usd(m.monthly(m.max_replicas))} | {_throughput_cells(m)} |"
        )
    rows += _budgets(budget_conversions(plan.spec, cost))
    rows += ["", "Price sources:", *(_sources(cost) or ["- none: every price is unknown"])]
    return "\n".join(rows) + "\n"


def _throughput_cells(m: ModelCost) -> str:
    """Output tokens/s, $/1M and the sanity check; a prefill row's output is its decode row's, which carries its
    cost."""
    if m.prefill:
        return "none: prefill hands to decode | in the decode row | -"
    per_million = m.usd_per_million_output_tokens
    d = m.decode
    with_prefill = "" if per_million is None or not m.prefill_usd_per_hour else " with prefill"
    return (
        f"{d.tokens_per_second:,.0f} (batch {d.batch}, context {d.context_tokens}, {d.bandwidth_gbps:,.0f} GB/s) "
        f"| {'unknown' if per_million is None else f'${per_million:.3f}{with_prefill}'} "
        f"| {d.sanity or 'ok'} (≡ {d.reference_equivalent:,.0f} tokens/s)"
    )


def _tokens(value: float | None) -> str:
    return "unknown" if value is None else f"{value:,.0f}"


def _budgets(conversions: list[BudgetConversion]) -> list[str]:
    """Tenants' money budgets as the output tokens they buy on each placement (the gateway enforces `budget`)."""
    if not conversions:
        return []
    rows = [
        "",
        "Money budgets, as output tokens at the estimated $/1M (spent on one placement alone; informative, the "
        "gateway enforces the token `budget`):\n",
        "| tenant | USD / month | region | model | output tokens / month | output tokens / minute |",
        "|---|---:|---|---|---:|---:|",
    ]
    for c in conversions:
        rows.append(
            f"| {c.tenant} | ${c.usd_per_month:,.0f} | {c.placement.region} | {c.placement.model} "
            f"| {_tokens(c.output_tokens_per_month)} | {_tokens(c.output_tokens_per_minute)} |"
        )
    return rows


def _money(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _pool_json(p: PoolCost) -> dict[str, Any]:
    return {
        "region": p.region,
        "pool": p.pool,
        "machineType": p.machine_type,
        "capacityType": p.capacity_type,
        "price": None
        if p.price is None
        else {"usdPerHour": p.price.usd_per_hour, "source": p.price.source, "asOf": p.price.as_of},
        "nodes": {"min": p.min_nodes, "alwaysOn": p.always_on_nodes, "max": p.max_nodes},
        "monthlyUsd": {
            "min": _money(p.monthly(p.min_nodes)),
            "alwaysOn": _money(p.monthly(p.always_on_nodes)),
            "max": _money(p.monthly(p.max_nodes)),
        },
    }


def _model_json(m: ModelCost) -> dict[str, Any]:
    per_million = m.usd_per_million_output_tokens
    return {
        "region": m.region,
        "model": m.model,
        "pool": m.pool,
        "nodeShare": round(m.node_share, 6),
        "prefill": m.prefill,
        "replicas": {"min": m.min_replicas, "max": m.max_replicas},
        "monthlyUsd": {"min": _money(m.monthly(m.min_replicas)), "max": _money(m.monthly(m.max_replicas))},
        "outputTokensPerSecond": 0.0 if m.prefill else round(m.decode.tokens_per_second, 1),
        "usdPerMillionOutputTokens": None if per_million is None else round(per_million, 4),
        "sanity": m.decode.sanity,
    }


def cost_document(plan: Plan) -> dict[str, Any]:
    """plan.json's `cost`: the figures of the plan.md section (USD, rounded to cents; whole numbers as ints)."""
    cost = environment_cost(plan.spec)
    totals = {}
    for size, key in zip(SIZES, ("min", "alwaysOn", "max"), strict=True):
        total = cost.total(size)
        totals[key] = {"usd": _money(total.usd), "unknown": list(total.unknown)}
    return integral_numbers(
        {
            "hoursPerMonth": HOURS_PER_MONTH,
            "pools": [_pool_json(p) for p in cost.pools],
            "models": [_model_json(m) for m in cost.models],
            "total": totals,
            "moneyBudgets": [
                {
                    "tenant": c.tenant,
                    "usdPerMonth": c.usd_per_month,
                    "region": c.placement.region,
                    "model": c.placement.model,
                    "outputTokensPerMonth": None
                    if c.output_tokens_per_month is None
                    else round(c.output_tokens_per_month),
                }
                for c in budget_conversions(plan.spec, cost)
            ],
        }
    )
