"""`--dry-run`: the waves, each stack's offline plan and the gates that would run, with no credentials."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rich.console import Console
from rich.table import Table

from components.config.environment import EnvironmentSpec
from components.domain.stack_split import environment_stacks
from components.domain.waves import Wave
from tools.plan.model import Plan
from tools.rollout.bringup import Report
from tools.rollout.health import Check
from tools.rollout.slo import NotTested, SloGate, SloTarget, untested_wave


def mandatory_findings(plan: Plan) -> list[str]:
    """The plan's mandatory policy violations (its policy already evaluated), one line each."""
    return [
        f"policy {v['policy']}: {v['urn']}: {v['message']}" for v in plan.policy if v["enforcementLevel"] == "mandatory"
    ]


def plan_line(plan: Plan) -> str:
    custom = [r for r in plan.resources if r.custom]
    mandatory = len(mandatory_findings(plan))
    verdict = "rejected" if mandatory else "passed"
    return (
        f"{len(custom)} resources ({len(plan.resources) - len(custom)} components), "
        f"{len(plan.kubernetes_objects())} Kubernetes objects, {len(plan.helm_releases())} Helm releases; "
        f"policy {verdict}: {len(plan.policy_verdicts)} rules, {mandatory} mandatory and "
        f"{len(plan.policy) - mandatory} advisory finding(s)"
    )


def print_dry_run(
    *,
    env: EnvironmentSpec,
    env_name: str,
    waves: list[Wave],
    plans: Mapping[str, Plan],
    health_checks: Callable[[str, Mapping], list[Check]],
    health_timeout_minutes: int,
    console: Console,
    bring_up: Report,
    slo_gate: SloGate | None = None,
) -> int:
    """Exit code: 1 when a stack's offline plan has a mandatory violation (the policy gate would stop) or a wait
    that cannot complete (the bring-up check), else 0."""
    slices = {s.name: s for s in environment_stacks(env, env_name)}
    console.print(
        f"[bold]rollout of {env_name}[/] (dry run: no credentials, no Pulumi CLI): layout {env.stack_layout()}, "
        f"{len(slices)} stack(s) in {len(waves)} wave(s)",
        highlight=False,
    )
    rejected = []
    for number, wave in enumerate(waves, 1):
        console.rule(f"wave {number}: {wave.name}")
        for stack in wave.stacks:
            plan = plans[stack]
            reads = ", ".join(slices[stack].references) or "nothing"
            console.print(f"[bold]{stack}[/] ({slices[stack].kind}, reads {reads})", highlight=False)
            console.print(f"  plan: {plan_line(plan)}", highlight=False)
            for line in mandatory_findings(plan):
                rejected.append(stack)
                console.print(f"  [red]{line}[/]", highlight=False)
        table = Table(show_header=True, box=None, padding=(0, 2))
        table.add_column("gate")
        table.add_column("what it checks")
        violations = [s for s in wave.stacks if s in rejected]
        table.add_row(
            "policy",
            f"offline plan of {', '.join(wave.stacks)}: "
            + (f"[red]would stop: mandatory violations in {', '.join(violations)}[/]" if violations else "passes")
            + "; `pulumi preview --policy-pack build/policy-pack` of each stack before its `up`",
        )
        blocked = [v for stack in wave.stacks for v in bring_up.of(stack)]
        checked = sum(bring_up.checked.get(stack, 0) for stack in wave.stacks)
        table.add_row(
            "bring-up",
            f"[red]would stop: {len(blocked)} of {checked} precondition(s) missing[/]"
            if blocked
            else f"{checked} preconditions of every wait (releases, awaits, gates) created in time",
        )
        for stack in wave.stacks:
            if stack in bring_up.bootstraps:
                step = bring_up.bootstraps[stack]
                table.add_row(
                    "first time: network",
                    f"`make rollout ENV={env_name} WAVE={wave.name} BOOTSTRAP=1` creates {stack}'s network alone "
                    f"({step.resources} resources, cloud APIs only, from any host); then start its runner inside it",
                )
        if wave.confirm:
            table.add_row("confirmation", f"an operator answers y on stdin before {wave.name} (or --yes)")
        checks = [c for stack in wave.stacks for c in health_checks(stack, plans[stack].outputs)]
        for check in checks:
            table.add_row(f"health: {check.name}", check.waits_for)
        if checks:
            table.add_row("", f"(polled until all pass, at most {health_timeout_minutes} min)")
        else:
            table.add_row("health", "no cluster in this wave: nothing to check")
        if slo_gate is not None:
            targets = [t for stack in wave.stacks for t in slo_gate.targets(wave.name, stack, plans[stack].outputs)]
            for target in targets:
                table.add_row(*slo_row(slo_gate, target))
            untested = untested_wave(wave.name, targets)
            if untested:
                rejected.append(wave.name)
                table.add_row("slo", f"[red]would stop: {untested}[/]")
        console.print(table)
        for violation in blocked:
            console.print(f"  [red]bring-up: {violation.line()}[/]", highlight=False)
        for stack in wave.stacks:
            for note in bring_up.notes.get(stack, []):
                console.print(f"  [dim]not waited for: {note}[/]", highlight=False)
    return 1 if rejected or bring_up.violations else 0


def slo_row(gate: SloGate, target: SloTarget | NotTested) -> tuple[str, str]:
    """The SLO gate of one region of a wave, as the dry run lists it: what it sends and the bounds, or why not."""
    if isinstance(target, NotTested):
        return (f"slo: {target.region}" if target.region else "slo", f"not load-tested: {target.reason}")
    slo = gate.slo
    return (
        f"slo: {target.region}",
        f"streamed chat completions to {target.base_url}/chat/completions as tenant {slo.tenant} "
        f"({', '.join(target.models)}): up to {slo.max_requests} requests in {slo.duration_seconds}s, "
        f"{slo.concurrency} at a time; passes with TTFT p95 <= {slo.ttft_p95_ms:g} ms, TPOT p95 <= "
        f"{slo.tpot_p95_ms:g} ms, errors <= {slo.max_error_rate:.1%}, at least {slo.min_requests} requests",
    )
