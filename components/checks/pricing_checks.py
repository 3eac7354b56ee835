"""Prices that can be applied: a discount with its source, overrides of a catalog machine type, sold that way, in a
region the environment uses, each given once."""

from __future__ import annotations

from collections.abc import Iterable

from components.catalog.machines import SYSTEM_MACHINES, capacity_types
from components.config.base import Issue, join_path
from components.config.environment import EnvironmentSpec
from platform_catalog.machines import MACHINES


def check_pricing(env: EnvironmentSpec) -> Iterable[Issue]:
    pricing = env.pricing
    if pricing.discount_percent and not pricing.discount_source:
        yield Issue(
            join_path("pricing", "discountSource"),
            "a discount needs its source; name the agreement (e.g. 'EDP 2026') or remove discountPercent",
        )
    regions = sorted({r.region for r in env.regions})
    seen: dict[tuple[str, str | None, str], int] = {}
    for i, p in enumerate(pricing.prices):
        path = ("pricing", "prices", i)
        if p.machine_type not in MACHINES and p.machine_type not in SYSTEM_MACHINES:
            yield Issue(
                join_path(*path, "machineType"),
                f"{p.machine_type!r} is not a machine type of the catalog; use a GPU or system machine type",
            )
        machine = MACHINES.get(p.machine_type)
        if machine is not None and p.capacity_type not in capacity_types(machine):
            yield Issue(
                join_path(*path, "capacityType"),
                f"{p.machine_type} is not sold as {p.capacity_type}; use one of {', '.join(capacity_types(machine))}",
            )
        if p.region is not None and p.region not in regions:
            yield Issue(
                join_path(*path, "region"),
                f"no region entry is in {p.region!r}; use one of {', '.join(regions)} or leave region out",
            )
        key = (p.machine_type, p.region, p.capacity_type)
        if key in seen:
            yield Issue(
                join_path(*path),
                f"a second price for {p.machine_type} ({p.region or 'every region'}, {p.capacity_type}); "
                f"also at index {seen[key]}: keep one",
            )
        seen.setdefault(key, i)
