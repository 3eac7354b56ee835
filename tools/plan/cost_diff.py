"""The change in monthly cost between a base plan.json and this plan, per pool and model: the PR's cost diff.

A row changes when anything its cost depends on changes (machine type, capacity type, node counts, price), not
only its figures: a pool whose price is unknown on either side has an unknown cost change, never "no change".
"""

from __future__ import annotations

from typing import Any

_SIZES = (("min", "at min"), ("alwaysOn", "always on"), ("max", "at max"))
_POOL_KEYS = ("machineType", "capacityType", "nodes", "price", "monthlyUsd")
_MODEL_KEYS = ("pool", "nodeShare", "replicas", "monthlyUsd")


def _rows(cost: dict[str, Any], kind: str) -> dict[tuple[str, str], dict[str, Any]]:
    key = "pool" if kind == "pools" else "model"
    return {(row["region"], row[key]): row for row in cost.get(kind, [])}


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.0f}"


def _change(base: float | None, head: float | None) -> str:
    if base is None or head is None:
        return f"{_money(base)} -> {_money(head)} (**change unknown**)"
    delta = head - base
    return f"{_money(base)} -> {_money(head)} (**{'+' if delta >= 0 else '-'}${abs(delta):,.0f}**)"


def _what(before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    """What changed in a pool row, for the reader: added, removed, machine type, capacity, nodes, price."""
    if before is None:
        return f"added ({after['machineType']})" if after and "machineType" in after else "added"
    if after is None:
        return "removed"
    parts = []
    for key in ("machineType", "capacityType"):
        if before.get(key) != after.get(key):
            parts.append(f"{before.get(key)} -> {after.get(key)}")
    if before.get("nodes") != after.get("nodes") or before.get("replicas") != after.get("replicas"):
        parts.append("size")
    if before.get("nodeShare") != after.get("nodeShare"):
        parts.append("share of a node")
    if (before.get("price") is None) != (after.get("price") is None) or (
        before.get("price") and after.get("price") and before["price"]["usdPerHour"] != after["price"]["usdPerHour"]
    ):
        parts.append("price")
    unknown = [side for side, row in (("base", before), ("this change", after)) if row.get("price") is None]
    if "machineType" in after and unknown:
        parts.append(f"price unknown in {' and '.join(unknown)}")
    return "; ".join(parts)


def cost_diff_markdown(*, base: dict[str, Any], head: dict[str, Any], environment: str) -> str:
    """Markdown of the rows whose cost inputs differ; base or head lacking a row counts as $0 there."""
    lines = [f"## Cost change: `{environment}` (monthly, USD, base -> this change)\n"]
    if not base.get("cost"):
        return "\n".join([*lines, "The base plan.json has no cost figures (planned before costs existed).\n"])
    rows = []
    unknown: list[str] = []
    for kind, keys, sizes in (("pools", _POOL_KEYS, _SIZES), ("models", _MODEL_KEYS, (_SIZES[0], _SIZES[2]))):
        before, after = _rows(base["cost"], kind), _rows(head["cost"], kind)
        for region, name in sorted(before.keys() | after.keys()):
            old, new = before.get((region, name)), after.get((region, name))
            if old is not None and new is not None and all(old.get(k) == new.get(k) for k in keys):
                continue
            zero = {key: 0.0 for key, _ in sizes}
            b = old["monthlyUsd"] if old else zero
            a = new["monthlyUsd"] if new else zero
            if kind == "pools" and any(b[k] is None or a[k] is None for k, _ in sizes):
                unknown.append(f"{region}/{name}")
            cells = " | ".join(_change(b[key], a[key]) if key in zero else "" for key, _ in _SIZES)
            rows.append(f"| {kind[:-1]} | {region} | {name} | {_what(old, new)} | {cells} |")
    if not rows:
        return "\n".join([*lines, "No change in monthly cost.\n"])
    totals = " | ".join(
        _change(base["cost"]["total"][key]["usd"], head["cost"]["total"][key]["usd"]) for key, _ in _SIZES
    )
    note = (
        f"\nThe total covers priced pools only: the cost change of {', '.join(unknown)} is **unknown** (no price for "
        "it in the catalog; give one under `pricing.prices` in Pulumi.<env>.yaml).\n"
        if unknown
        else ""
    )
    return (
        "\n".join(
            [
                *lines,
                "| | region | pool / model | what changed | " + " | ".join(label for _, label in _SIZES) + " |",
                "|---|---|---|---|---:|---:|---:|",
                *rows,
                f"| **total (priced)** | | | | {totals} |",
            ]
        )
        + "\n"
        + note
    )
