"""Hourly prices of machine types, each with its source and "as of" date; no entry means "price unknown".

AWS us-east-1 on-demand (Linux) list prices are the AWS Pricing API data Karpenter embeds
(aws/karpenter-provider-aws@6fc13b52, main, pkg/providers/pricing/zz_generated.pricing_aws.go,
"generated at 2026-07-20T13:44:30Z for us-east-1"; FACTS-3.md §10; vendored as
conformance/upstream/aws-ec2-pricing/2026-07-20/generated-on-demand-us-east-1.json, which a test
compares with this table). That table holds only us-east-1, so us-west-2 and every other AWS region
are unknown; no spot, reservation or Capacity Block price was verified; no GCP price list could be
retrieved, so every GCP price is unknown. An environment gives the prices it pays (negotiated rates,
reservations, GCP) under `pricing.prices` in its Pulumi.<env>.yaml: a plan never shows a guess.
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
    as_of: str  # ISO date the source gives its figures for


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

# (cloud, cloud region, capacity type) -> machine type -> list price.
LIST_PRICES: dict[tuple[str, str, str], dict[str, Price]] = {
    ("aws", "us-east-1", "onDemand"): {
        name: Price(usd, _KARPENTER_US_EAST_1, _KARPENTER_AS_OF) for name, usd in _AWS_US_EAST_1_ON_DEMAND.items()
    },
}


def list_price(*, cloud: str, region: str, capacity_type: str, machine_type: str) -> Price | None:
    """The catalog's price, or None: unknown (not verified), never estimated from another region or type."""
    return LIST_PRICES.get((cloud, region, capacity_type), {}).get(machine_type)
