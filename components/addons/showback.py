"""Showback at run time: recording rules and a dashboard joining tenants' tokens with the GPU cost of each model.

A model's GPU cost per hour is its replica's share of a node (components/cost) x the node's price,
rendered as a constant series per priced model, times its ready replicas (the InferencePool's ready
pods, named after the model). Tenants are charged each model's cost in proportion to their share of
its output tokens (AI Gateway gen_ai metrics): cost while nobody sends tokens stays with the model,
unattributed. A model whose price is unknown has no cost series, so nothing is invented for it.
"""

from __future__ import annotations

from typing import Any

from components.addons.dashboards import TENANT_LABEL, Panel, _dashboard, _variable
from components.catalog import metrics as m
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.cost.monthly import ModelCost, environment_cost

GROUP = "inference-platform.showback"
WINDOW = "5m"
_OUTPUT = f'{m.GEN_AI_TOKEN_USAGE.sum}{{gen_ai_token_type="output"}}'


def _to_model(expr: str, label: str) -> str:
    """`expr` with its `label` copied to `model`, the join key of every showback series."""
    return f'label_replace({expr}, "model", "$1", "{label}", "(.*)")'


def _pod_costs(rows: list[ModelCost]) -> list[tuple[str, float]]:
    """(model, USD per hour of one of its pods) for each fully priced model: one series per model. A disaggregated
    model's pool counts its decode and prefill pods alike, so it is charged their average at its fixed replicas."""
    costs = []
    for model in dict.fromkeys(c.model for c in rows):
        mine = [c for c in rows if c.model == model]
        if any(c.price is None for c in mine):
            continue
        hourly = [(c.node_share * c.price.usd_per_hour, c.max_replicas) for c in mine if c.price is not None]
        pods = sum(n for _, n in hourly)
        costs.append((model, sum(u * n for u, n in hourly) / pods if pods else hourly[0][0]))
    return costs


def showback_groups(env: EnvironmentSpec, region: RegionSpec) -> list[dict[str, Any]]:
    """The PrometheusRule group of recording rules for the models placed in `region`."""
    priced = _pod_costs([c for c in environment_cost(env).models if c.region == region.name])
    if not any(p.region == region.name for model in env.models for p in model.placements):
        return []
    rules: list[dict[str, Any]] = [
        {
            "record": str(m.SHOWBACK_REPLICA_COST),
            "expr": f"vector({usd_per_hour:.6g})",
            "labels": {"model": model},
        }
        for model, usd_per_hour in priced
    ]
    rules += [
        {
            "record": str(m.SHOWBACK_MODEL_COST),
            "expr": f"{m.SHOWBACK_REPLICA_COST} * on (model) "
            + _to_model(f"max by (name) ({m.EPP_POOL_READY_PODS})", "name"),
        },
        {
            "record": str(m.SHOWBACK_TENANT_MODEL_TOKENS),
            "expr": _to_model(
                f"sum by ({TENANT_LABEL}, gen_ai_request_model) (rate({_OUTPUT}[{WINDOW}]))", "gen_ai_request_model"
            ),
        },
        {"record": str(m.SHOWBACK_MODEL_TOKENS), "expr": f"sum by (model) ({m.SHOWBACK_TENANT_MODEL_TOKENS})"},
        {
            "record": str(m.SHOWBACK_MODEL_USD_PER_MILLION),
            "expr": f"{m.SHOWBACK_MODEL_COST} / on (model) (({m.SHOWBACK_MODEL_TOKENS} > 0) * 3600) * 1e6",
        },
        {
            "record": str(m.SHOWBACK_TENANT_COST),
            "expr": f"sum by ({TENANT_LABEL}) ({m.SHOWBACK_TENANT_MODEL_TOKENS} / on (model) group_left "
            f"{m.SHOWBACK_MODEL_TOKENS} * on (model) group_left {m.SHOWBACK_MODEL_COST})",
        },
    ]
    return [{"name": GROUP, "rules": rules}]


def showback_dashboard() -> dict[str, Any]:
    tenant = TENANT_LABEL
    tenants = [
        Panel(
            "GPU cost per tenant per day (USD)",
            ((f'24 * avg_over_time({m.SHOWBACK_TENANT_COST}{{{tenant}=~"$tenant"}}[1d])', "{{" + tenant + "}}"),),
            "currencyUSD",
        ),
        Panel(
            "GPU cost per tenant (USD per hour)",
            ((f'{m.SHOWBACK_TENANT_COST}{{{tenant}=~"$tenant"}}', "{{" + tenant + "}}"),),
            "currencyUSD",
        ),
    ]
    models = [
        Panel("USD per 1M output tokens per model", ((str(m.SHOWBACK_MODEL_USD_PER_MILLION), "{{model}}"),)),
        Panel(
            "GPU cost per model (USD per hour): attributed to tenants and not",
            (
                (str(m.SHOWBACK_MODEL_COST), "{{model}}"),
                (f"sum({m.SHOWBACK_MODEL_COST}) - sum({m.SHOWBACK_TENANT_COST})", "unattributed (no tokens)"),
            ),
            "currencyUSD",
        ),
        Panel(
            "Output tokens per second per model and tenant",
            ((str(m.SHOWBACK_TENANT_MODEL_TOKENS), "{{model}} {{" + tenant + "}}"),),
        ),
    ]
    return _dashboard(
        "inference-showback",
        "Inference / Showback",
        [("Tenants", tenants), ("Models", models)],
        [_variable("tenant", m.SHOWBACK_TENANT_COST, TENANT_LABEL)],
    )
