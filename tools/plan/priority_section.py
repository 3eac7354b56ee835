"""plan.md's request priority classes: each pool tenants of several classes share, who is in which class, and how
its endpoint picker holds and sheds them."""

from __future__ import annotations

from components.domain.priority import tenant_classes
from components.serving.deployment import model_placements
from components.serving.priority_classes import priority_bands
from tools.plan.model import Plan

COLUMNS = ("interactive", "batch", "bestEffort")


def priority_section(plan: Plan) -> str:
    env = plan.spec
    rows = [
        "## Request priority classes\n",
        "Pools called by tenants of more than one class (`tenants[].priority`). The gateway names each request's "
        "class from the tenant its API key proved; the pool's endpoint picker dispatches interactive before batch "
        "before best effort while the pool is saturated, holds each request up to the time shown, and refuses best "
        "effort beyond the queue shown (429). Engines stay first-come first-served (docs/serving.md, Request priority "
        "classes).\n",
        "| region | pool | interactive | batch | best effort | held up to | best-effort queue |",
        "|---|---|---|---|---|---|---:|",
    ]
    for region in env.regions:
        for p in model_placements(env, region):
            if not p.request_classes:
                continue
            tenants = tenant_classes(env, p.model)
            cells = [", ".join(t for t, c in tenants.items() if c == column) or "-" for column in COLUMNS]
            limit = next((b["maxRequests"] for b in priority_bands(p) if "maxRequests" in b), "-")
            rows.append(f"| {region.name} | {p.name} | {' | '.join(cells)} | {p.picker_queue_seconds}s | {limit} |")
    return "\n".join(rows) + "\n" if len(rows) > 4 else ""
