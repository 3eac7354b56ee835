"""Hourly prices of machine types, each with its source and "as of" date; no entry means "price unknown".

AWS us-east-1 on-demand (Linux) list prices are the AWS Pricing API data Karpenter embeds
(aws/karpenter-provider-aws@6fc13b52, main, pkg/providers/pricing/zz_generated.pricing_aws.go,
"generated at 2026-07-20T13:44:30Z for us-east-1"; FACTS-3.md §10; vendored as
conformance/upstream/aws-ec2-pricing/2026-07-20/generated-on-demand-us-east-1.json, which a test
compares with this table). That table holds only us-east-1.

AWS us-west-2, and p4de.24xlarge (absent from Karpenter's table) in us-east-1, are SkyPilot's catalog of the
AWS Price List (skypilot-org/skypilot-catalog@00148f2a:catalogs/v8/aws/vms.csv, on-demand `Price`; vendored
reduced by tools/price_lists.py as conformance/upstream/aws-ec2-pricing/skypilot-catalog/vms-on-demand.csv,
which a test compares with this table). That snapshot carries no date: its as-of is the date of Karpenter's
table, which its us-east-1 rows equal for every type both list (g6.xlarge, g6e.4xlarge, g6e.12xlarge,
m7i.2xlarge, p4d.24xlarge, p5.48xlarge; a test checks it).

GCP us-central1 on-demand prices are SkyPilot's catalog of GCP's Cloud Billing SKUs
(skypilot-org/skypilot-catalog@006059e0:catalogs/v8/gcp/vms.csv; vendored reduced by tools/price_lists.py as
conformance/upstream/gcp-compute-pricing/skypilot-catalog/vms-us-central1.csv, which a test compares with this
table). SkyPilot prices a machine type's row from its vCPU and memory SKUs only and lists the GPUs as rows of their
own (skypilot-org/skypilot, sky/catalog/data_fetchers/fetch_gcp.py, get_vm_df skips resource group GPU;
get_gpu_df): GCP bills A2/A3/G2 GPUs per GPU, so a g2-standard-24 costs its row plus the row of 2 L4s. The snapshot
carries no date and nothing dated to check it against: its as-of is the day it was read (2026-12-02), an upper
bound.

Not in the catalog (price unknown): other AWS and GCP regions; spot, reservation, Capacity Block and flex-start
prices; A3 Ultra (a3-ultragpu-8g), which GCP does not sell on demand (machines.py: reservation, flex-start, spot)
and whose reservation price is the contract's; and a2-ultragpu-1g, whose A100-80GB row in us-central1 is not a
usable on-demand price: its `Price` 1.8462 is below its own `SpotPrice` 1.964 (and below europe-west4's 2.03285),
in this snapshot and an earlier one (8427bbff), so it is not taken. An environment gives the prices it pays
(negotiated rates, reservations) under `pricing.prices` in its Pulumi.<env>.yaml: a plan never shows a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

# A month of always-on capacity, the 730 hours (8760 / 12) cloud price pages and calculators use.
HOURS_PER_MONTH = 730


@dataclass(frozen=True)
class Price:
    """USD per hour of one machine of one type in one region, bought one way."""

    usd_per_hour: float
    source: str
    # ISO date the source gives its figures for; an undated list: the dated one it was checked against, or with none
    # to check against, the day it was read.
    as_of: str


_KARPENTER_US_EAST_1 = (
    "AWS Pricing API via aws/karpenter-provider-aws@6fc13b52:pkg/providers/pricing/zz_generated.pricing_aws.go"
)
_KARPENTER_AS_OF = "2026-07-20"

_AWS_US_EAST_1_ON_DEMAND = {
    "g5.xlarge": 1.006,
    "g5.12xlarge": 5.672,
    "g6.xlarge": 0.8048,
    "g6e.xlarge": 1.861,
    "g6e.2xlarge": 2.24208,
    "g6e.4xlarge": 3.00424,
    "g6e.12xlarge": 10.49264,
    "g6e.24xlarge": 15.06559,
    "g6e.48xlarge": 30.13118,
    "p4d.24xlarge": 21.957642,
    "p5.48xlarge": 55.04,
    "p5en.48xlarge": 63.296,
    "p6-b200.48xlarge": 113.9328,
    "m7i.xlarge": 0.2016,
    "m7i.2xlarge": 0.4032,
    "m7i.4xlarge": 0.8064,
}

_SKYPILOT_AWS = (
    "AWS Price List via skypilot-org/skypilot-catalog@00148f2a:catalogs/v8/aws/vms.csv "
    "(undated snapshot; its us-east-1 rows equal Karpenter's 2026-07-20 table)"
)

# From the SkyPilot snapshot (the row of each type and region, conformance/upstream/aws-ec2-pricing/skypilot-catalog).
_AWS_SKYPILOT_ON_DEMAND = {
    "us-east-1": {"p4de.24xlarge": 27.44705},
    "us-west-2": {
        "g6.xlarge": 0.8048,
        "g6e.4xlarge": 3.00424,
        "g6e.12xlarge": 10.49264,
        "m7i.2xlarge": 0.4032,
        "p4d.24xlarge": 21.95764,
        "p4de.24xlarge": 27.44705,
        "p5.48xlarge": 55.04,
    },
}

_SKYPILOT_GCP = (
    "GCP Cloud Billing SKUs via skypilot-org/skypilot-catalog@006059e0:catalogs/v8/gcp/vms.csv "
    "(undated snapshot, read 2026-12-02)"
)
_SKYPILOT_GCP_AS_OF = "2026-12-02"

# Machine row + its GPUs' row (conformance/upstream/gcp-compute-pricing/skypilot-catalog/vms-us-central1.csv):
# n2-standard-8 0.38847; g2-standard-24 0.88075 + L4 x 2 1.12008 = 2.00083.
_GCP_SKYPILOT_ON_DEMAND = {"us-central1": {"n2-standard-8": 0.38847, "g2-standard-24": 2.00083}}

# (cloud, cloud region, capacity type) -> machine type -> list price.
LIST_PRICES: dict[tuple[str, str, str], dict[str, Price]] = {
    ("aws", "us-east-1", "onDemand"): {
        **{name: Price(usd, _KARPENTER_US_EAST_1, _KARPENTER_AS_OF) for name, usd in _AWS_US_EAST_1_ON_DEMAND.items()},
        **{
            name: Price(usd, _SKYPILOT_AWS, _KARPENTER_AS_OF)
            for name, usd in _AWS_SKYPILOT_ON_DEMAND["us-east-1"].items()
        },
    },
    ("aws", "us-west-2", "onDemand"): {
        name: Price(usd, _SKYPILOT_AWS, _KARPENTER_AS_OF) for name, usd in _AWS_SKYPILOT_ON_DEMAND["us-west-2"].items()
    },
    ("gcp", "us-central1", "onDemand"): {
        name: Price(usd, _SKYPILOT_GCP, _SKYPILOT_GCP_AS_OF)
        for name, usd in _GCP_SKYPILOT_ON_DEMAND["us-central1"].items()
    },
}


def list_price(*, cloud: str, region: str, capacity_type: str, machine_type: str) -> Price | None:
    """The catalog's price, or None: unknown (not verified), never estimated from another region or type."""
    return LIST_PRICES.get((cloud, region, capacity_type), {}).get(machine_type)
