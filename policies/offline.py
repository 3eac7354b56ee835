"""Run the pack in-process on an offline plan (no engine): the same rule functions CrossGuard runs.

`production` and `labelDomain` come from the environment spec; other settings (enforcement
overrides, privilegedNamespaces, ...) from an optional file in the `--policy-pack-config`
format, so one file configures both runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from platform_catalog.names import (
    KARMADA_CLUSTER_NAMESPACE,
    KARMADA_PUSH_SERVICE_ACCOUNT,
    SEARCH_NAMESPACE,
    SEARCH_SYNCHRO_MANAGER,
)
from policies.framework import Evaluation, PackSettings, Rule, evaluate_stack
from policies.model import Resource, normalize
from policies.rules import ALL_RULES
from policies.rules.federation import federated_members


def plan_resources(plan: Any) -> list[Resource]:
    """The plan's custom resources as rules see them (components are not resources)."""
    return [
        Resource(
            urn=r.urn,
            type=r.type,
            name=r.name,
            props=normalize(r.inputs),
            protect=bool(r.options.get("protect")),
            retain_on_delete=bool(r.options.get("retainOnDelete")),
            parent=r.parent,
            provider=r.provider,
            deps={k: sorted(v) for k, v in r.property_dependencies.items()},
        )
        for r in plan.resources
        if r.custom
    ]


def spec_settings(spec: Any) -> dict[str, Any]:
    """What the pack cannot see on resources, taken from the environment spec the components read."""
    federation = spec.federation
    push = federation.enabled and federation.member_mode == "push"
    search = federation.enabled and federation.search.enabled
    return {
        "production": bool(spec.production),
        "labelDomain": spec.label_domain,
        # In push mode Karmada's controllers act on each member with cluster-wide rights (karmadactl join's).
        "clusterAdminServiceAccounts": [f"{KARMADA_CLUSTER_NAMESPACE}/{KARMADA_PUSH_SERVICE_ACCOUNT}"]
        if push
        else None,
        # Clusterpedia's synchro manager reads the members' credentials from its namespace's Secrets with an
        # informer, which lists them all (components/catalog/upstream.py CLUSTERPEDIA_HOST_CALLS).
        "namespaceSecretReaders": [f"{SEARCH_NAMESPACE}/{SEARCH_SYNCHRO_MANAGER}"] if search else None,
        # Flex-start capacity is granted to pending pods; GKE's auto-repair would recreate the nodes it grants.
        "noAutoRepairPools": sorted(
            {p.name for region in spec.regions for p in region.gpu_pools if p.capacity.type == "flexStart"}
        )
        or None,
        **_rollout_slo(spec),
    }


def _rollout_slo(spec: Any) -> dict[str, Any]:
    """The SLO gate's tenant and every model it may send to (the spec's EnvironmentSpec.slo_models)."""
    slo = spec.rollout.slo
    if slo is None:
        return {"rolloutSloTenant": None, "rolloutSloModels": None}
    return {"rolloutSloTenant": slo.tenant, "rolloutSloModels": spec.slo_models()}


def load_settings(path: Path | None) -> PackSettings:
    """A `--policy-pack-config` JSON file (or none). Raises ValueError with the problem."""
    if path is None:
        return PackSettings()
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read policy config ({exc})") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected a JSON object of policy name -> level or settings")
    known = {r.name for r in ALL_RULES} | {"all"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"{path}: unknown policies {', '.join(unknown)}; see docs/policy.md")
    settings = PackSettings(raw)
    for r in ALL_RULES:
        settings.level(r)  # validates the levels
    return settings


def environment_settings(resources: Iterable[Resource]) -> dict[str, Any]:
    """What only the whole environment's resources tell a stack previewed alone: the members its federation
    declares (in the global stack of a per-region environment, while the host's stack issues their agents'
    certificates)."""
    return {"federationMembers": sorted(federated_members(resources)) or None}


def plan_settings(plan: Any, settings: PackSettings | None = None, rules: Iterable[Rule] = ALL_RULES) -> PackSettings:
    """The settings both runs use: the given ones plus what only the spec and the whole plan know (its `.raw` is the
    `--policy-pack-config` `make rollout` previews each stack of this environment with)."""
    return _settings(plan.spec, plan_resources(plan), settings, rules)


def _settings(
    spec: Any, resources: list[Resource], settings: PackSettings | None, rules: Iterable[Rule]
) -> PackSettings:
    return (settings or PackSettings()).merged({**spec_settings(spec), **environment_settings(resources)}, rules)


def judge_plan(
    plan: Any, settings: PackSettings | None = None, rules: Iterable[Rule] = ALL_RULES
) -> tuple[Evaluation, PackSettings]:
    """The pack on the plan, judged as a whole and as each of its stacks is previewed (`judge_environment`), and the
    settings it was judged with (`plan_settings`); the plan's resources are read once for both."""
    rules = tuple(rules)
    resources = plan_resources(plan)
    pack = _settings(plan.spec, resources, settings, rules)
    return judge_environment(rules, resources, pack), pack


def evaluate_plan(plan: Any, settings: PackSettings | None = None, rules: Iterable[Rule] = ALL_RULES) -> Evaluation:
    """`judge_plan`'s evaluation."""
    return judge_plan(plan, settings, rules)[0]


def judge_environment(rules: Iterable[Rule], resources: list[Resource], settings: PackSettings) -> Evaluation:
    """The pack over the whole environment, and what each of its stacks alone adds: each finding once.

    The whole: offline every stack's resources are known, so a federated model in the global stack is also checked
    against the serving runtime and the NetworkPolicies of the region stacks. Each stack alone (its resources by
    their URN's stack): `make rollout` previews every stack with the pack, whose stack rules see only that stack, so
    a violation there fails (or warns) that stack's preview whatever the whole says. What a stack alone cannot
    check, the whole has judged with everything in view, so only its violations and rule errors are added.
    """
    rules = tuple(rules)
    evaluation = evaluate_stack(rules, resources, settings)
    by_stack: dict[str, list[Resource]] = {}
    for r in resources:
        by_stack.setdefault(r.urn.split("::", 1)[0], []).append(r)
    if len(by_stack) < 2:
        return evaluation
    seen = {(f.policy, f.urn, f.message) for f in evaluation.findings}
    stack_rules = [r for r in rules if r.scope == "stack"]  # a resource rule sees one resource, wherever it is
    for alone in by_stack.values():
        for finding in evaluate_stack(stack_rules, alone, settings, previewed_alone=True).findings:
            if finding.kind != "cannot-check" and (finding.policy, finding.urn, finding.message) not in seen:
                seen.add((finding.policy, finding.urn, finding.message))
                evaluation.findings.append(finding)
    return evaluation


def verdicts(evaluation: Evaluation, rules: Iterable[Rule] = ALL_RULES) -> list[dict[str, Any]]:
    """One row per rule: how many resources it checked and what it found."""
    rows = []
    for r in rules:
        findings = evaluation.of(r.name)
        level = evaluation.levels.get(r.name, r.enforcement)
        violations = [f for f in findings if f.kind == "violation"]
        unchecked = [f for f in findings if f.kind != "violation"]
        if level == "disabled":
            verdict = "disabled"
        elif any(f.enforcement_level == "mandatory" for f in violations):
            verdict = "fail"
        elif violations or unchecked:
            verdict = "warn"
        else:
            verdict = "pass" if evaluation.subjects.get(r.name) else "n/a"
        rows.append(
            {
                "policy": r.name,
                "severity": r.severity,
                "enforcementLevel": level,
                "resources": evaluation.subjects.get(r.name, 0),
                "violations": len(violations),
                "cannotCheck": len(unchecked),
                "verdict": verdict,
            }
        )
    return rows


_STYLE = {"fail": "bold red", "warn": "yellow", "pass": "green", "n/a": "dim", "disabled": "dim"}


def verdict_table(rows: list[dict[str, Any]]):
    """Rich table of the rules that applied or found something; the rest are counted in the caption."""
    from rich.table import Table

    shown = [row for row in rows if row["verdict"] not in ("n/a", "disabled")]
    idle = len(rows) - len(shown)
    table = Table(title="Policy", caption=f"{idle} more rule(s) had nothing to check" if idle else None)
    table.add_column("rule", no_wrap=True, min_width=30)
    table.add_column("level")
    table.add_column("resources", justify="right")
    table.add_column("findings", justify="right")
    table.add_column("verdict")
    for row in shown:
        findings = str(row["violations"]) + (f" +{row['cannotCheck']} unchecked" if row["cannotCheck"] else "")
        table.add_row(
            row["policy"],
            row["enforcementLevel"],
            str(row["resources"]),
            findings,
            f"[{_STYLE[row['verdict']]}]{row['verdict']}[/]",
        )
    return table
