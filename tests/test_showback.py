"""Showback at run time: recording rules joining tenants' output tokens with each model's GPU cost."""

from __future__ import annotations

from components.catalog import metrics
from tests.test_observability import RULE, _dashboards, _panel_exprs, metric_names


def _recording_rules(plan, region: str) -> list[dict]:
    return [
        rule
        for r in plan.of_type(RULE)
        if plan.region_of(r) == region
        for group in r.inputs["spec"]["groups"]
        if group["name"] == "inference-platform.showback"
        for rule in group["rules"]
    ]


def test_recording_rules_parse_and_record_and_read_only_catalogued_series(env_plan):
    regions = [r.name for r in env_plan.spec.regions]
    rules = [rule for region in regions for rule in _recording_rules(env_plan, region)]
    assert len(rules) >= 5 * len(regions)
    for rule in rules:
        assert rule["record"] in metrics.KNOWN_SERIES
        unknown = metric_names(rule["expr"]) - metrics.KNOWN_SERIES
        assert not unknown, f"{rule['record']}: unknown metrics {unknown}"


def test_replica_cost_is_the_node_share_times_the_price(dev_plan, prod_plan):
    def replica_costs(plan, region):
        return {
            r["labels"]["model"]: r["expr"]
            for r in _recording_rules(plan, region)
            if r["record"] == metrics.SHOWBACK_REPLICA_COST.name
        }

    # dev: half a g6e.4xlarge, 0.5 x 3.00424 = 1.50212 $/h; qwen2-5-7b on one mig-3g.40gb slice of a p4de.24xlarge
    # (8 A100-80GB x 2 such slices = 16 per node): 27.44705 / 16 = 1.71544 (SkyPilot's us-east-1 on-demand row).
    assert replica_costs(dev_plan, "use1") == {"llama-3-1-8b": "vector(1.50212)", "qwen2-5-7b": "vector(1.71544)"}
    # prod use1: half a p5.48xlarge, 0.5 x 55.04 = 27.52 (the 70B, and the decode side of the disaggregated
    # 70b-rag: 4 of 8 GPUs); a whole g6e.4xlarge, 3.00424. usw2 (SkyPilot's rows, same prices): the 70B and the 8B.
    assert replica_costs(prod_plan, "use1") == {
        "llama-3-1-70b": "vector(27.52)",
        "llama-3-1-70b-rag": "vector(27.52)",
        "llama-3-1-8b": "vector(3.00424)",
    }
    assert replica_costs(prod_plan, "usw2") == {"llama-3-1-70b": "vector(27.52)", "llama-3-1-8b": "vector(3.00424)"}


def test_tenant_cost_joins_token_shares_with_model_cost(dev_plan):
    rules = {r["record"]: r["expr"] for r in _recording_rules(dev_plan, "use1") if "labels" not in r}
    tenant_cost = rules[metrics.SHOWBACK_TENANT_COST.name]
    assert metric_names(tenant_cost) == {
        metrics.SHOWBACK_TENANT_MODEL_TOKENS.name,
        metrics.SHOWBACK_MODEL_TOKENS.name,
        metrics.SHOWBACK_MODEL_COST.name,
    }
    assert 'gen_ai_token_type="output"' in rules[metrics.SHOWBACK_TENANT_MODEL_TOKENS.name]
    assert metrics.EPP_POOL_READY_PODS.name in metric_names(rules[metrics.SHOWBACK_MODEL_COST.name])


def test_the_showback_dashboard_shows_dollars_per_tenant_per_day_and_per_million_tokens(dev_plan):
    exprs = _panel_exprs(_dashboards(dev_plan, "use1")["inference-showback.json"])
    assert any(e.startswith("24 * avg_over_time(inference_platform:tenant_gpu_cost_usd_per_hour") for e in exprs)
    assert metrics.SHOWBACK_MODEL_USD_PER_MILLION.name in exprs
