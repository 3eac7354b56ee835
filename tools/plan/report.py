"""plan.md (a pull-request comment) and the terminal summary tree."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from tools.plan.model import REGION_TYPE, Plan


def component_counts(plan: Plan) -> dict[str | None, Counter]:
    """Region name (None = environment level) -> component label -> custom resources under it."""
    counts: dict[str | None, Counter] = {}
    for r in plan.resources:
        if not r.custom:
            continue
        region = plan.region_of(r)
        chain = [a for a in plan.ancestors(r) if a.type not in (REGION_TYPE, "pulumi:pulumi:Stack")]
        top = chain[-1] if chain else None
        label = f"{top.type.rsplit(':', 1)[-1]} {top.name}" if top else "providers"
        counts.setdefault(region, Counter())[label] += 1
    return counts


def _summary(plan: Plan) -> str:
    custom = [r for r in plan.resources if r.custom]
    return (
        f"# Plan: `{plan.environment}`\n\n"
        f"**{len(custom)}** resources ({len(plan.resources) - len(custom)} components), "
        f"**{len(plan.kubernetes_objects())}** Kubernetes objects, **{len(plan.helm_releases())}** Helm releases "
        f"across **{len(plan.spec.regions)}** region(s).\n"
    )


def _counts(plan: Plan) -> str:
    rows = ["## Resources per region and component\n", "| region | component | resources |", "|---|---|---:|"]
    for region, counter in component_counts(plan).items():
        for label, n in sorted(counter.items()):
            rows.append(f"| {region or '(environment)'} | {label} | {n} |")
    return "\n".join(rows) + "\n"


def _policy(plan: Plan) -> str:
    mandatory = sum(v["enforcementLevel"] == "mandatory" for v in plan.policy)
    verdict = "**rejected**" if mandatory else "passed"
    rows = [
        "## Policy\n",
        f"Policy {verdict}: {len(plan.policy_verdicts)} rules, {mandatory} mandatory and "
        f"{len(plan.policy) - mandatory} advisory finding(s).\n",
    ]
    if not plan.policy:
        rows.append("No violations.")
    else:
        rows += ["| policy | level | resource | message |", "|---|---|---|---|"]
        for v in plan.policy:
            message = v["message"].replace("|", "\\|")
            rows.append(f"| {v['policy']} | {v['enforcementLevel']} | `{v['urn']}` | {message} |")
    if plan.policy_verdicts:
        rows += [
            "",
            "<details><summary>Verdict per rule</summary>\n",
            "| rule | severity | level | resources | violations | cannot check | verdict |",
            "|---|---|---|---:|---:|---:|---|",
        ]
        for v in plan.policy_verdicts:
            rows.append(
                f"| {v['policy']} | {v['severity']} | {v['enforcementLevel']} | {v['resources']} | {v['violations']} "
                f"| {v['cannotCheck']} | {v['verdict']} |"
            )
        rows.append("\n</details>")
    return "\n".join(rows) + "\n"


def _node_id(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", "_".join(parts))


def _diagram(plan: Plan) -> str:
    env = plan.spec
    lines = ["## Topology\n", "```mermaid", "flowchart LR"]
    for region in env.regions:
        cluster = f"{plan.environment}-{region.name}"
        kind = "EKS" if region.cloud == "aws" else "GKE"
        lines.append(f'  subgraph {_node_id("r", region.name)}["{region.name}: {region.cloud} {region.region}"]')
        lines.append(
            f'    {_node_id("c", region.name)}["{kind} {cluster}<br/>system {region.system_pool.machine_type} '
            f'{region.system_pool.min_size}-{region.system_pool.max_size}"]'
        )
        for pool in region.gpu_pools:
            lines.append(
                f'    {_node_id("p", region.name, pool.name)}["GPU pool {pool.name}<br/>{pool.machine_type} '
                f'{pool.min_size}-{pool.max_size}"]'
            )
            lines.append(f"    {_node_id('c', region.name)} --- {_node_id('p', region.name, pool.name)}")
        lines.append("  end")
    for model in env.models:
        lines.append(f'  {_node_id("m", model.name)}(["model {model.name}<br/>{model.runtime}"])')
        for pl in model.placements:
            lines.append(
                f'  {_node_id("m", model.name)} -->|"{pl.min_replicas}-{pl.max_replicas}"| '
                f"{_node_id('p', pl.region, pl.pool)}"
            )
    for tenant in env.tenants:
        lines.append(f'  {_node_id("t", tenant.name)}{{{{"tenant {tenant.name}"}}}}')
        for model in tenant.models:
            lines.append(f"  {_node_id('t', tenant.name)} -.-> {_node_id('m', model)}")
    if env.federation.enabled:
        lines.append(f'  fed[["Karmada on {env.federation.host}"]]')
        for region in env.regions:
            lines.append(f"  fed -.- {_node_id('c', region.name)}")
    lines.append("```")
    return "\n".join(lines) + "\n"


# Sections of plan.md, in order; capabilities add theirs here.
SECTIONS: tuple[Callable[[Plan], str], ...] = (_summary, _diagram, _counts, _policy)


def render_markdown(plan: Plan) -> str:
    return "\n".join(section(plan) for section in SECTIONS)


def summary_tree(plan: Plan):
    """Regions -> cluster -> components -> resource counts, for the terminal."""
    from rich.tree import Tree

    tree = Tree(f"[bold]{plan.environment}[/] ({sum(r.custom for r in plan.resources)} resources)")
    counts = component_counts(plan)
    for region in plan.spec.regions:
        branch = tree.add(
            f"[cyan]{region.name}[/] {region.cloud} {region.region} -> cluster {plan.environment}-{region.name}"
        )
        for label, n in sorted(counts.get(region.name, Counter()).items()):
            branch.add(f"{label}: {n}")
    for label, n in sorted(counts.get(None, Counter()).items()):
        tree.add(f"{label}: {n}")
    return tree
