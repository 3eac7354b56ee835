"""The change in monthly cost between a base plan.json and this plan, per pool and model: the PR's cost diff."""

from __future__ import annotations

from typing import Any

_SIZES = (("min", "at min"), ("alwaysOn", "always on"), ("max", "at max"))


def _rows(cost: dict[str, Any], kind: str) -> dict[tuple[str, str], dict[str, Any]]:
    key = "pool" if kind == "pools" else "model"
    return {(row["region"], row[key]): row for row in cost.get(kind, [])}


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.0f}"


def _change(base: float | None, head: float | None) -> str:
    if base is None or head is None:
        return f"{_money(base)} -> {_money(head)}"
    delta = head - base
    return f"{_money(base)} -> {_money(head)} (**{'+' if delta >= 0 else '-'}${abs(delta):,.0f}**)"


def cost_diff_markdown(*, base: dict[str, Any], head: dict[str, Any], environment: str) -> str:
    """Markdown of the rows whose monthly figures differ; base or head lacking a row counts as $0 there."""
    lines = [f"## Cost change: `{environment}` (monthly, USD, base -> this change)\n"]
    if "cost" not in base:
        return "\n".join([*lines, "The base plan.json has no cost figures (planned before costs existed).\n"])
    rows = []
    for kind, sizes in (("pools", _SIZES), ("models", (_SIZES[0], _SIZES[2]))):
        before, after = _rows(base["cost"], kind), _rows(head["cost"], kind)
        for region, name in sorted(before.keys() | after.keys()):
            zero = {key: 0.0 for key, _ in sizes}
            b = before.get((region, name), {}).get("monthlyUsd", zero)
            a = after.get((region, name), {}).get("monthlyUsd", zero)
            if all(b[key] == a[key] for key, _ in sizes):
                continue
            cells = " | ".join(_change(b[key], a[key]) if key in zero else "" for key, _ in _SIZES)
            rows.append(f"| {kind[:-1]} | {region} | {name} | {cells} |")
    if not rows:
        return "\n".join([*lines, "No change in monthly cost.\n"])
    totals = " | ".join(
        _change(base["cost"]["total"][key]["usd"], head["cost"]["total"][key]["usd"]) for key, _ in _SIZES
    )
    return (
        "\n".join(
            [
                *lines,
                "| | region | pool / model | " + " | ".join(label for _, label in _SIZES) + " |",
                "|---|---|---|---:|---:|---:|",
                *rows,
                f"| **total (priced)** | | | {totals} |",
            ]
        )
        + "\n"
    )
