"""What this environment pays: prices it gives (negotiated rates, reservations, GCP) over the catalog's list prices."""

from __future__ import annotations

import datetime
from typing import Literal

from pydantic import Field

from components.catalog.prices import Price, list_price
from components.config.base import Spec

CapacityType = Literal["onDemand", "spot", "reservation", "capacityBlock", "flexStart"]


class PriceOverrideSpec(Spec):
    """One price this environment pays, with where it comes from (a price is never shown without its source)."""

    machine_type: str = Field(description="GPU or system machine type the price is for.")
    region: str | None = Field(None, description="Cloud region (e.g. `us-west-2`); default every region.")
    capacity_type: CapacityType = Field("onDemand", description="How the machines are bought.")
    usd_per_hour: float = Field(gt=0, description="USD per machine-hour, discounts included.")
    source: str = Field(min_length=1, description="Where the price comes from: a quote, contract or price page.")
    as_of: datetime.date = Field(description="Date of the source's figure (YYYY-MM-DD).")


class MoneyBudgetSpec(Spec):
    """A tenant's budget in money: plan.md converts it to the output tokens it buys on each of the tenant's models,
    from the same $/1M output tokens estimates (informative: the gateway enforces token budgets, `budget`)."""

    usd_per_month: float = Field(gt=0, description="USD per month the tenant may spend on GPU capacity.")


class PricingSpec(Spec):
    """Prices the environment pays; a machine without one (here or in the catalog) shows as "price unknown"."""

    discount_percent: float = Field(
        0, ge=0, lt=100, description="Negotiated discount off the catalog's list prices (not off `prices`)."
    )
    discount_source: str | None = Field(None, description="Agreement the discount comes from; required with one.")
    prices: list[PriceOverrideSpec] = Field(
        default_factory=list, description="Prices that replace the catalog's (or fill in its unknowns)."
    )

    def price(self, *, cloud: str, region: str, capacity_type: str, machine_type: str) -> Price | None:
        """The environment's own price (a region-specific entry first), else the discounted list price."""
        own = [
            p
            for p in self.prices
            if p.machine_type == machine_type and p.capacity_type == capacity_type and p.region in (region, None)
        ]
        if own:
            best = min(own, key=lambda p: p.region is None)
            return Price(best.usd_per_hour, best.source, best.as_of.isoformat())
        listed = list_price(cloud=cloud, region=region, capacity_type=capacity_type, machine_type=machine_type)
        if listed is None or not self.discount_percent:
            return listed
        return Price(
            listed.usd_per_hour * (1 - self.discount_percent / 100),
            f"{listed.source}, less {self.discount_percent:g}% ({self.discount_source})",
            listed.as_of,
        )
