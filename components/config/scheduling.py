"""Priority tiers and tenant GPU quotas: what the Volcano queues and PriorityClasses are made of.

Quotas are written in the extended-resource names the region's pools offer
(`schedulable_resources`), so a queue limit can never name a resource no node has.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from components.config.base import Name, Spec

GpuCount = Annotated[int, Field(ge=0)]

# Volcano creates these queues itself; a tenant of the same name would collide with them.
RESERVED_QUEUE_NAMES = ("default", "root")


class PriorityTierSpec(Spec):
    """A priority tier: one PriorityClass per cluster, ordered by value."""

    name: Name = Field(description="Tier name that models and tenants refer to, e.g. realtime.")
    value: int = Field(ge=0, le=1_000_000_000, description="PriorityClass value; higher runs first.")
    preempts: bool = Field(
        description="May evict pods of lower tiers to start (preemptionPolicy PreemptLowerPriority, else Never)."
    )
    preemptible: bool = Field(description="May be evicted by higher tiers and by queue reclaim.")
    description: str = Field("", description="What the tier is for; shown on the PriorityClass.")


def default_tiers() -> list[PriorityTierSpec]:
    """The seed's order: real-time beats batch beats best-effort, and only real-time preempts."""
    return [
        PriorityTierSpec(
            name="realtime",
            value=1_000_000,
            preempts=True,
            preemptible=False,
            description="Interactive serving: evicts batch and best-effort pods, is never evicted for them.",
        ),
        PriorityTierSpec(
            name="batch",
            value=10_000,
            preempts=False,
            preemptible=True,
            description="Offline work with a deadline: waits for capacity, yields to real-time.",
        ),
        PriorityTierSpec(
            name="best-effort",
            value=100,
            preempts=False,
            preemptible=True,
            description="Opportunistic work on idle GPUs: first to be evicted.",
        ),
    ]


class GpuQuotaSpec(Spec):
    """A tenant's share of one region's GPUs: the limits of its Volcano queue there."""

    region: str = Field(description="Name of a region entry; the tenant gets a queue on that region's cluster.")
    capability: dict[str, GpuCount] = Field(
        min_length=1,
        description='Most the queue may use, per resource the pools offer, e.g. {"nvidia.com/gpu": 16}; a resource '
        "the region's pools offer and this leaves out (a MIG profile) may not be used at all: its limit is 0.",
    )
    guarantee: dict[str, GpuCount] = Field(
        default_factory=dict,
        description="Reserved for the queue even when others are busy; must fit in the cluster's GPU capacity.",
    )
