"""What it costs: prices with their sources, monthly cost per pool and environment, and the tokens/s model.

Every expected figure is computed by hand in the test from list prices and datasheet numbers."""

from __future__ import annotations

import csv
import io
import json

import pytest

from components.catalog.machines import SYSTEM_MACHINES
from components.catalog.prices import LIST_PRICES, list_price
from components.checks.loader import load_environment
from components.config.pricing import PricingSpec
from components.cost.throughput import DecodeEstimate, decode_tokens_per_second
from platform_catalog.machines import MACHINES
from tests.harness import PROJECT, config_errors, environment_config, ns, plan_config, program_values, raw_environment
from tools.plan.artifacts import plan_document
from tools.plan.engine import Evaluation
from tools.plan.model import Plan

PRICING = "aws-ec2-pricing/2026-07-20/generated-on-demand-us-east-1.json"
SKYPILOT = "aws-ec2-pricing/skypilot-catalog/vms-on-demand.csv"
KARPENTER = "karpenter-provider-aws@6fc13b52"
SKYPILOT_SOURCE = "skypilot-catalog@00148f2a"
GCP = "gcp-compute-pricing/skypilot-catalog/vms-us-central1.csv"
GCP_SOURCE = "skypilot-catalog@006059e0"


def _skypilot_rows(upstream) -> dict[tuple[str, str], float]:
    from tools.price_lists import prices

    return prices((upstream.root / SKYPILOT).read_text())


def test_the_catalog_s_aws_prices_are_the_vendored_pricing_files(upstream):
    upstream_prices = json.loads((upstream.root / PRICING).read_text())["usd_per_hour"]
    ours = LIST_PRICES[("aws", "us-east-1", "onDemand")]
    catalogued = {n for n in upstream_prices if n in MACHINES or n in SYSTEM_MACHINES}
    assert len(catalogued) >= 16
    from_karpenter = {n: p.usd_per_hour for n, p in ours.items() if KARPENTER in p.source}
    assert from_karpenter == {n: upstream_prices[n] for n in catalogued}
    # What Karpenter's us-east-1 table lacks, and all of us-west-2, is the SkyPilot snapshot's row.
    rows = _skypilot_rows(upstream)
    from_skypilot = {
        (n, region): p.usd_per_hour
        for (_, region, _), table in LIST_PRICES.items()
        for n, p in table.items()
        if SKYPILOT_SOURCE in p.source
    }
    assert from_skypilot == {k: v for k, v in rows.items() if k[1] == "us-west-2" or k[0] not in upstream_prices}
    assert set(ours) == catalogued | {"p4de.24xlarge"}


def test_the_undated_snapshot_agrees_with_the_dated_table_it_takes_its_date_from(upstream):
    """SkyPilot's file has no date: its prices are dated by Karpenter's 2026-07-20 table, which every us-east-1 row
    both list must equal (p5.48xlarge 55.04 after AWS's June 2025 P5 cut, g6e.4xlarge 3.00424, m7i.2xlarge 0.4032,
    p4d.24xlarge 21.957642, g6.xlarge 0.8048, g6e.12xlarge 10.49264)."""
    karpenter = json.loads((upstream.root / PRICING).read_text())["usd_per_hour"]
    both = {t: usd for (t, region), usd in _skypilot_rows(upstream).items() if region == "us-east-1" and t in karpenter}
    assert len(both) == 6
    assert both == {t: karpenter[t] for t in both}


def _gcp_rows(upstream) -> tuple[dict[str, dict[str, str]], dict[tuple[str, int], dict[str, str]]]:
    """The vendored GCP rows: machine rows by type, GPU rows by (SkyPilot's GPU name, count)."""
    rows = list(csv.DictReader(io.StringIO((upstream.root / GCP).read_text())))
    machines = {r["InstanceType"]: r for r in rows if r["InstanceType"]}
    gpus = {(r["AcceleratorName"], int(r["AcceleratorCount"])): r for r in rows if not r["InstanceType"]}
    assert {r["Region"] for r in rows} == {"us-central1"}
    return machines, gpus


def test_the_catalog_s_gcp_prices_are_the_vendored_machine_row_plus_its_gpus_row(upstream):
    """GCP bills G2/A2/A3 GPUs per GPU: SkyPilot's machine row is vCPUs and memory, the GPUs a row of their own."""
    machines, gpus = _gcp_rows(upstream)
    ours = LIST_PRICES[("gcp", "us-central1", "onDemand")]
    assert MACHINES["g2-standard-24"].gpus == 2  # so the L4 row to add is the count-2 one
    assert ours["n2-standard-8"].usd_per_hour == float(machines["n2-standard-8"]["Price"]) == 0.38847
    assert ours["g2-standard-24"].usd_per_hour == pytest.approx(
        float(machines["g2-standard-24"]["Price"]) + float(gpus[("L4", 2)]["Price"])
    )
    assert ours["g2-standard-24"].usd_per_hour == pytest.approx(0.88075 + 1.12008)
    # The A100-80GB row is vendored to show why a2-ultragpu-1g has no price: on demand below its own spot price.
    a100 = gpus[("A100-80GB", 1)]
    assert float(a100["Price"]) < float(a100["SpotPrice"])
    assert "a2-ultragpu-1g" not in ours and set(ours) == {"n2-standard-8", "g2-standard-24"}
    assert all(GCP_SOURCE in p.source and p.as_of == "2026-12-02" for p in ours.values())


def test_the_gcp_price_list_generator_reproduces_the_vendored_file(upstream):
    from tools.price_lists import PriceListError, reduce_gcp_rows

    vendored = (upstream.root / GCP).read_text()
    assert reduce_gcp_rows(vendored) == vendored
    header, *rows = vendored.splitlines()
    # Another region, a later zone and a GPU count not wanted are dropped; the first row of a wanted key is kept.
    other_region = [r.replace("us-central1,us-central1-a", "us-east4,us-east4-a") for r in rows]
    extra = [
        rows[2].replace("us-central1-a", "us-central1-b").replace(",0.38847,", ",9.0,"),
        rows[4].replace(",L4,2,", ",L4,4,"),
    ]
    assert reduce_gcp_rows("\n".join([header, *other_region, *rows, *extra])) == vendored
    with pytest.raises(PriceListError, match=r"no us-central1 row for .*L4"):
        reduce_gcp_rows("\n".join([header, *rows[:-1]]))


def test_the_price_list_generator_reproduces_the_vendored_file(upstream, tmp_path):
    from tools.price_lists import PriceListError, reduce_rows

    vendored = (upstream.root / SKYPILOT).read_text()
    assert reduce_rows(vendored) == vendored  # the reduction of the reduction is itself
    # The first row of a type and region is kept, later zones dropped; a type it wants but lacks is an error.
    header, *rows = vendored.splitlines()
    later_zone = rows[-1].replace("usw2-az1", "usw2-az2").replace(",55.04,", ",99.0,")
    assert reduce_rows("\n".join([header, *rows, later_zone])) == vendored
    with pytest.raises(PriceListError, match=r"no row for p5\.48xlarge in us-west-2"):
        reduce_rows("\n".join([header, *rows[:-1]]))


def test_every_catalog_price_names_its_source_and_date():
    prices = [p for table in LIST_PRICES.values() for p in table.values()]
    assert len(prices) >= 24
    aws = [p for p in prices if GCP_SOURCE not in p.source]
    assert all((KARPENTER in p.source or SKYPILOT_SOURCE in p.source) and p.as_of == "2026-07-20" for p in aws)
    assert all(p.as_of == "2026-12-02" for p in prices if p not in aws)


@pytest.mark.parametrize(
    ("cloud", "region", "capacity", "machine"),
    [
        ("aws", "eu-west-1", "onDemand", "p5.48xlarge"),  # neither list is read for other regions
        ("aws", "us-east-1", "spot", "p5.48xlarge"),  # no spot price was verified
        ("aws", "us-west-2", "onDemand", "p5en.48xlarge"),  # not among the SkyPilot rows vendored
        ("gcp", "us-east1", "onDemand", "g2-standard-24"),  # only us-central1's rows are vendored
        ("gcp", "us-central1", "onDemand", "a2-ultragpu-1g"),  # its A100-80GB row is below its spot price
        ("gcp", "us-central1", "spot", "g2-standard-24"),  # no spot price is listed
        ("gcp", "us-central1", "reservation", "a3-ultragpu-8g"),  # negotiated
    ],
)
def test_prices_not_verified_are_unknown_not_guessed(cloud, region, capacity, machine):
    assert list_price(cloud=cloud, region=region, capacity_type=capacity, machine_type=machine) is None


def test_an_environment_s_discount_and_own_prices_replace_list_prices():
    pricing = PricingSpec.model_validate(
        {
            "discountPercent": 10,
            "discountSource": "EDP 2026",
            "prices": [
                {"machineType": "p5.48xlarge", "usdPerHour": 40, "source": "quote A", "asOf": "2026-11-01"},
                {
                    "machineType": "p5.48xlarge",
                    "region": "us-west-2",
                    "usdPerHour": 42,
                    "source": "quote B",
                    "asOf": "2026-11-02",
                },
            ],
        }
    )

    def price(region: str, machine: str):
        return pricing.price(cloud="aws", region=region, capacity_type="onDemand", machine_type=machine)

    # 55.04 x 0.9 = 49.536: the discount applies to list prices, not to the environment's own.
    assert price("us-east-1", "m7i.2xlarge").usd_per_hour == pytest.approx(0.4032 * 0.9)
    assert "less 10% (EDP 2026)" in price("us-east-1", "m7i.2xlarge").source
    assert (price("us-east-1", "p5.48xlarge").usd_per_hour, price("us-east-1", "p5.48xlarge").source) == (40, "quote A")
    assert (price("us-west-2", "p5.48xlarge").usd_per_hour, price("us-west-2", "p5.48xlarge").as_of) == (
        42,
        "2026-11-02",
    )
    assert price("us-west-2", "g6e.2xlarge") is None


def test_pricing_config_errors_name_the_key_and_the_fix():
    raw = raw_environment("dev")
    raw["pricing"] = {
        "discountPercent": 5,
        "prices": [
            {"machineType": "p9.huge", "usdPerHour": 1, "source": "q", "asOf": "2026-01-01"},
            {"machineType": "g6e.xlarge", "region": "eu-west-1", "usdPerHour": 1, "source": "q", "asOf": "2026-01-01"},
            {
                "machineType": "g6e.xlarge",
                "capacityType": "flexStart",
                "usdPerHour": 1,
                "source": "q",
                "asOf": "2026-01-01",
            },
        ],
    }
    errors = config_errors(raw)
    assert any(e.startswith("pricing.discountSource: a discount needs its source") for e in errors), errors
    assert any(e.startswith("pricing.prices[0].machineType: 'p9.huge' is not a machine type") for e in errors)
    assert any(e.startswith("pricing.prices[1].region: no region entry is in 'eu-west-1'") for e in errors)
    assert (
        "pricing.prices[2].capacityType: g6e.xlarge is not sold as flexStart; use one of onDemand, spot, reservation"
        in (errors)
    )


def test_a_price_needs_a_source():
    raw = raw_environment("dev")
    raw["pricing"] = {"prices": [{"machineType": "g6e.xlarge", "usdPerHour": 1, "asOf": "2026-01-01"}]}
    assert any("pricing.prices[0].source" in e for e in config_errors(raw))


def _pool(doc: dict, region: str, pool: str) -> dict:
    return next(p for p in doc["cost"]["pools"] if (p["region"], p["pool"]) == (region, pool))


def test_dev_aws_monthly_cost_at_min_always_on_and_max(dev_plan):
    doc = plan_document(dev_plan)
    # system m7i.xlarge $0.2016/h: 2 nodes x 0.2016 x 730 = 294.34 (min), 4 nodes = 588.67 (max).
    # l40s g6e.4xlarge $3.00424/h: minSize 0, but the one cache worker keeps one node up: 2193.10; max 2 = 4386.19.
    # a100-mig p4de.24xlarge $27.44705/h (skypilot-catalog@00148f2a row "p4de.24xlarge,A100-80GB,...,27.44705,...,
    # us-east-1,use1-az4"): 0 nodes at min and always on, 1 at max = 27.44705 x 730 = 20,036.35.
    # max: 588.672 + 4,386.1904 + 20,036.3465 = 25,011.2089.
    assert doc["cost"]["total"] == {
        "min": {"usd": 294.34, "unknown": []},
        "alwaysOn": {"usd": 2487.43, "unknown": []},
        "max": {"usd": 25011.21, "unknown": []},
    }
    assert _pool(doc, "use1", "a100-mig")["price"]["usdPerHour"] == 27.44705
    assert _pool(doc, "use1", "l40s")["nodes"] == {"min": 0, "alwaysOn": 1, "max": 2}
    section = dev_plan_md(dev_plan)
    assert "| use1 | a100-mig | p4de.24xlarge | onDemand | $27.4471/h | 0 / 0 / 1 | $0 | $0 | $20,036 |" in section
    assert "| **environment** | **total** | | | | | **$294** | **$2,487** | **$25,011** |" in section
    assert "- AWS Pricing API via aws/karpenter-provider-aws@6fc13b52" in section
    assert "- AWS Price List via skypilot-org/skypilot-catalog@00148f2a" in section


def dev_plan_md(plan) -> str:
    from tools.plan.cost_section import cost_section

    return cost_section(plan)


def _costed(config: dict, stack: str) -> Plan:
    """What a plan's cost figures read of it: the environment, validated as the program validates it
    (tools/plan/cost_section.py reads `plan.spec` only); the program is not run (a prod variant: 7 runs, ~1.4 s of
    CPU). The test below holds it to the real plan's figures."""
    evaluation = Evaluation(resources=[], outputs={}, stack_urn="")
    return Plan(
        environment=stack, project=PROJECT, evaluation=evaluation, spec=load_environment(program_values(config))
    )


@pytest.mark.plan
def test_a_plans_cost_figures_are_its_environments(prod_plan):
    """`_costed`'s shortcut: prod's cost section and document without running the program are the plan's own."""
    costed = _costed(environment_config("prod"), "prod")
    assert plan_document(costed)["cost"] == plan_document(prod_plan)["cost"]
    assert dev_plan_md(costed) == dev_plan_md(prod_plan)


@pytest.fixture(scope="module")
def gcp_priced_plan():
    """prod with the prices a GCP contract would give for usc1: they replace the catalog's and fill in its unknowns."""
    config = environment_config("prod")
    quote = {"source": "test quote GCP-1", "asOf": "2026-11-30"}
    config[ns("pricing")] = {
        "prices": [
            {"machineType": "n2-standard-8", "region": "us-central1", "usdPerHour": 0.4, **quote},
            {"machineType": "a3-ultragpu-8g", "capacityType": "reservation", "usdPerHour": 80, **quote},
            {"machineType": "g2-standard-24", "usdPerHour": 2, **quote},
            {"machineType": "a2-ultragpu-1g", "usdPerHour": 5, **quote},
        ]
    }
    return _costed(config, "gcpprices")


def test_gcp_monthly_cost_with_the_environment_s_own_prices(gcp_priced_plan):
    # min: 3 x 0.4 + 1 x 80 + 1 x 2 + 0 x 5 (a100-mig: no model, minSize 0) = 83.2 $/h x 730 = 60,736. Always on:
    # mistral's 1 replica takes 1 of the l4 node's 2 GPUs, 2 cache workers fit the 2 GPU nodes up: the same.
    # max: 6 x 0.4 + 2 x 80 + 6 x 2 + 3 x 5 = 189.4 $/h x 730 = 138,262.
    section = dev_plan_md(gcp_priced_plan)
    assert "| usc1 | **region total** | | | | | $60,736 | $60,736 | $138,262 |" in section
    assert (
        "| usc1 | h200 | a3-ultragpu-8g | reservation | $80/h | 1 / 1 / 2 | $58,400 | $58,400 | $116,800 |" in section
    )
    assert "- test quote GCP-1, as of 2026-11-30" in section
    mistral = next(m for m in plan_document(gcp_priced_plan)["cost"]["models"] if m["model"] == "mistral-7b-trt")
    assert mistral["nodeShare"] == 0.5  # 1 of g2-standard-24's 2 L4s
    # 0.5 x $2/h = $1/h over the L4 estimate (below).
    assert mistral["usdPerMillionOutputTokens"] == pytest.approx(1e6 / (mistral["outputTokensPerSecond"] * 3600), 1e-3)


def test_prod_prices_us_west_2_and_us_central1_from_the_catalog(prod_plan):
    total = plan_document(prod_plan)["cost"]["total"]
    # usc1: h200 is a reservation (the contract's price) and a100-mig's A100-80GB row is unusable (above); a100-mig
    # has 0 nodes at min and always on, so only its max is unknown.
    assert [total[k]["unknown"] for k in ("min", "alwaysOn", "max")] == [
        ["usc1/h200"],
        ["usc1/h200"],
        ["usc1/h200", "usc1/a100-mig"],
    ]
    # us-west-2 rows of skypilot-catalog@00148f2a: m7i.2xlarge 0.4032, p5.48xlarge 55.04, g6e.4xlarge 3.00424 (the
    # us-east-1 prices too). use1 and usw2 each at max: 6 x 0.4032 + 4 x 55.04 + 8 x 3.00424 = 246.61312 $/h x 730
    # = 180,027.5776; both = 360,055.1552. us-central1 rows of skypilot-catalog@006059e0: n2-standard-8 0.38847,
    # g2-standard-24 0.88075 + 2 L4 1.12008 = 2.00083; usc1 at max: 6 x 0.38847 + 6 x 2.00083 = 14.3358 $/h x 730
    # = 10,465.134; total 370,520.2892.
    assert total["max"]["usd"] == 370520.29
    # min, each AWS region: 3 x 0.4032 + 1 x 55.04 + 1 x 3.00424 = 59.25384 $/h x 730 = 43,255.3032; usc1:
    # 3 x 0.38847 + 1 x 2.00083 = 3.16624 $/h x 730 = 2,311.3552; 88,821.9616.
    assert total["min"]["usd"] == 88821.96
    # always on: use1 3 x 0.4032 + 2 x 55.04 + 2 x 3.00424 = 117.29808 $/h (85,627.5984); usw2 keeps 1 h100 node
    # (1 x 55.04): 62.25808 $/h (45,448.3984); usc1 as at min (2,311.3552); 133,387.352.
    assert total["alwaysOn"]["usd"] == 133387.35
    l4 = _pool(plan_document(prod_plan), "usc1", "l4")
    assert l4["price"]["usdPerHour"] == 2.00083 and GCP_SOURCE in l4["price"]["source"]
    assert l4["monthlyUsd"] == {"min": 1460.61, "alwaysOn": 1460.61, "max": 8763.64}  # 2.00083 x 730 x 1, x 6
    usw2 = _pool(plan_document(prod_plan), "usw2", "h100")
    assert (
        usw2["price"]
        == {
            "usdPerHour": 55.04,
            "source": usw2["price"]["source"],
            "asOf": "2026-07-20",
        }
        and "skypilot-catalog@00148f2a" in usw2["price"]["source"]
    )


def test_decode_roofline_on_an_l40s_by_hand():
    # Llama 3.1 8B in FP8 (8.03e9 bytes) on a whole L40S (864 GB/s), batch 8 at 1024 tokens of FP8 KV
    # (2 x 32 layers x 8 KV heads x 128 x 1 byte = 65,536 bytes/token): a step reads 8.03e9 + 8 x 1024 x 65,536
    # = 8,566,870,912 bytes, 9.915 ms at 864e9 B/s, so 8 tokens per 9.915 ms = 806.8 tokens/s.
    tokens = decode_tokens_per_second(
        weight_bytes=8.03e9, kv_bytes_per_token=65536, batch=8, context_tokens=1024, bandwidth_gbps=864
    )
    assert tokens == pytest.approx(806.83, abs=0.01)


def test_decode_roofline_of_prod_s_70b_on_four_h100s(prod_plan):
    # Llama 3.1 70B bf16: 70.6e9 x 2 bytes = 131.50 GiB; TP 4 x 3350 GB/s = 13,400 GB/s; batch 64 (default) at
    # half of 8192 tokens of FP8 KV (2 x 80 x 8 x 128 = 163,840 bytes/token): 64 x 4096 x 163,840 = 42.95e9 bytes.
    # (141.197e9 + 42.950e9) bytes / 13.4e12 B/s = 13.742 ms per step -> 64 / 13.742 ms = 4,657 tokens/s.
    seventy = next(
        m for m in plan_document(prod_plan)["cost"]["models"] if (m["region"], m["model"]) == ("use1", "llama-3-1-70b")
    )
    assert seventy["outputTokensPerSecond"] == pytest.approx(4657.2, abs=0.1)
    # Half a p5.48xlarge ($55.04/h): $27.52/h over 4657.2 x 3600 tokens/h = $1.6414 per 1M output tokens.
    assert seventy["usdPerMillionOutputTokens"] == pytest.approx(1.6414, abs=1e-4)
    # Far beyond the seed's path at full batch on the roofline: flagged.
    assert seventy["sanity"].startswith("17x the reference's tuned 320 tokens/s")


def test_the_seed_s_reference_lies_on_its_own_path():
    # 7B FP16 (14e9 bytes) on one A100-40GB (1555 GB/s), batch 1, short context: 1555e9 / 14e9 = 111 tokens/s,
    # between the seed's static 40 and tuned 320.
    tokens = decode_tokens_per_second(
        weight_bytes=14e9, kv_bytes_per_token=0, batch=1, context_tokens=0, bandwidth_gbps=1555
    )
    assert tokens == pytest.approx(111.07, abs=0.01)
    assert DecodeEstimate(tokens, 1555, 1, 0, tokens).sanity == ""
    assert DecodeEstimate(30, 1555, 1, 0, 30).sanity.startswith("below the reference's static 40")
    assert DecodeEstimate(2600, 1555, 64, 0, 2600).sanity.startswith("8x the reference's tuned 320")


def _max_size_config(env: str, region: str, pool: str, max_size: int) -> dict:
    """The fixture environment with one GPU pool's maxSize changed."""
    config = environment_config(env)
    pools = next(r for r in config[ns("regions")] if r["name"] == region)["gpuPools"]
    next(p for p in pools if p["name"] == pool)["maxSize"] = max_size
    return config


def _cost_diff(base, head, env: str) -> str:
    from tools.plan.cost_diff import cost_diff_markdown

    return cost_diff_markdown(base=plan_document(base), head=plan_document(head), environment=env)


@pytest.fixture(scope="module")
def l40s_one_more_node_plan():
    return plan_config(_max_size_config("dev", "use1", "l40s", 3), stack="dev")


def test_the_cost_diff_of_one_more_l40s_node(dev_plan, l40s_one_more_node_plan):
    text = _cost_diff(dev_plan, l40s_one_more_node_plan, "dev")
    # One g6e.4xlarge more at max: 3.00424 x 730 = $2,193.10; min and always-on are unchanged, and so are the models
    # (llama-3-1-8b stays at maxReplicas 2).
    assert (
        "| pool | use1 | l40s | size | $0 -> $0 (**+$0**) | $2,193 -> $2,193 (**+$0**) | $4,386 -> $6,579 (**+$2,193**) |"
        in (text)
    )
    assert "| model |" not in text
    assert (
        "| **total (priced)** | | | | $294 -> $294 (**+$0**) | $2,487 -> $2,487 (**+$0**) | $25,011 -> $27,204 (**+$2,193**) |"
        in (text)
    )


def test_the_cost_diff_prices_a_gcp_pool_change(prod_plan):
    text = _cost_diff(prod_plan, _costed(_max_size_config("prod", "usc1", "l4", 8), "prod"), "prod")
    # g2-standard-24 at 0.88075 + 2 L4 x 0.56004 = 2.00083 $/h (skypilot-catalog@006059e0): 6 nodes at max
    # = 8,763.6354, 8 nodes = 11,684.8472, +2,921.2118; min and always on keep 1 node (1,460.6059).
    assert (
        "| pool | usc1 | l4 | size | $1,461 -> $1,461 (**+$0**) | $1,461 -> $1,461 (**+$0**) "
        "| $8,764 -> $11,685 (**+$2,921**) |" in text
    )
    assert "usc1/l4" not in text  # priced: not among the unknown cost changes


@pytest.mark.plan
def test_plan_compare_writes_and_prints_the_diff(tmp_path, capsys, l40s_one_more_node_plan, fixture_project):
    from tools.plan.__main__ import main as plan_main

    base = tmp_path / "base.json"
    base.write_text(json.dumps(plan_document(l40s_one_more_node_plan)))
    project = ["--project-dir", str(fixture_project)]
    assert plan_main(["dev", *project, "--out", str(tmp_path / "out"), "--quiet", "--compare", str(base)]) == 0
    written = (tmp_path / "out" / "cost-diff.md").read_text()
    assert "$6,579 -> $4,386 (**-$2,193**)" in written
    changes = (tmp_path / "out" / "changes.md").read_text()
    assert changes.endswith(written) and changes in capsys.readouterr().out
    # plan.md, the pull-request comment, starts with the changes; changes.json holds them whole.
    assert (tmp_path / "out" / "plan.md").read_text().startswith(changes)
    assert json.loads((tmp_path / "out" / "changes.json").read_text())["environment"] == "dev"


def test_a_base_plan_without_costs_says_so():
    from tools.plan.cost_diff import cost_diff_markdown

    text = cost_diff_markdown(base={"resources": []}, head={"cost": {}}, environment="dev")
    assert "has no cost figures" in text


def test_a_money_budget_becomes_output_tokens_per_model(dev_plan):
    budgets = plan_document(dev_plan)["cost"]["moneyBudgets"]
    assert [(b["tenant"], b["model"]) for b in budgets] == [("research", "llama-3-1-8b"), ("research", "qwen2-5-7b")]
    # llama-3-1-8b on half an L40S (864 / 2 = 432 GB/s): AWQ weights 5.21 GiB (4-bit layers, and the embedding and
    # output head, 2 x 128,256 x 4,096 = 1.0507e9 parameters, in 16 bits: 6.9793e9 x 0.5 + 1.0507e9 x 2 = 5.5910e9
    # bytes), batch 16 at 2048 tokens of FP8 KV (65,536 bytes/token): 16 x 432e9 / (5.5910e9 + 2.1475e9) = 893.2
    # tokens/s. Half of $3.00424/h = $1.50212/h over 893.2 x 3600 tokens/h = $0.46715 per 1M; $2,000 buys
    # 2000 / 0.46715 = 4,281 M output tokens a month.
    assert budgets[0]["outputTokensPerMonth"] == pytest.approx(4.2813e9, rel=1e-3)
    # qwen2-5-7b on one of the p4de.24xlarge's 16 MIG slices (share 0.0625 of $27.44705/h = $1.71544/h) at the
    # 1,434 tokens/s of the cost table: $2,000 buys 2000 / 1.71544 = 1,165.9 h x 1,434 x 3600 = 6,019 M tokens.
    assert budgets[1]["outputTokensPerMonth"] == pytest.approx(2000 / (0.0625 * 27.44705) * 1434 * 3600, rel=1e-3)


def test_the_pr_workflow_plans_the_base_and_posts_the_cost_diff():
    import yaml

    from tools.plan.runner import PROJECT_DIR

    workflow = yaml.safe_load((PROJECT_DIR / ".github" / "workflows" / "plan.yml").read_text())
    steps = workflow["jobs"]["plan"]["steps"]
    names = [s.get("name", "") for s in steps]
    base, plan = names.index("Plan the base commit"), names.index("make plan ENV=${{ matrix.env }}")
    assert base < plan
    assert "git worktree add ../base ${{ github.event.pull_request.base.sha }}" in steps[base]["run"]
    assert "--compare $base" in steps[plan]["run"] and 'PLAN_FLAGS="$flags"' in steps[plan]["run"]
    comment = next(s for s in steps if s.get("name") == "Comment plan.md on the pull request")
    assert "changes.md" in comment["with"]["script"]  # plan.md starts with it (tests: test_plan_compare_...)
