"""Drive an environment's waves: policy gate, confirmation, preview and up per stack, health gate; stop at the
first failure with the state saved and the command that resumes."""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from components.domain.waves import Wave
from tools.rollout.bootstrap import NetworkBootstrap
from tools.rollout.health import Check, CheckResult, wait_healthy
from tools.rollout.slo import NotTested, SloGate, SloResult, not_tested_json, untested_wave
from tools.rollout.state import Identity, RolloutState, Step, load_state
from tools.rollout.workspace import StepResult, Workspace

EXIT_STOPPED = 1
GATE = "gate"  # the stack column of a gate's row: gates judge a whole wave


class RolloutInputError(Exception):
    """A command-line choice that names nothing in the environment (exit 2)."""


@dataclass(frozen=True)
class Rollout:
    """What to roll out: the waves, and the mandatory policy findings of each stack's offline plan."""

    env_name: str
    waves: list[Wave]
    violations: Mapping[str, list[str]]
    health_timeout_seconds: float
    # The bring-up check's violations per stack (tools/rollout/bringup.py): a wave that could not complete.
    bring_up: Mapping[str, list[str]] = field(default_factory=dict)


def first_wave(waves: list[Wave], from_wave: str | None) -> int:
    if from_wave is None:
        return 0
    names = [w.name for w in waves]
    if from_wave not in names:
        close = difflib.get_close_matches(from_wave, names, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise RolloutInputError(f"--from-wave {from_wave}: no such wave; {hint}the waves are {', '.join(names)}")
    return names.index(from_wave)


def resume_hint(env_name: str, wave: str) -> str:
    return (
        f"resume with `make rollout ENV={env_name} RESUME=1` (`python -m tools.rollout {env_name} --resume`), "
        f"or restart this wave with `make rollout ENV={env_name} FROM_WAVE={wave}`"
    )


class _Run:
    def __init__(self, *, rollout: Rollout, state: RolloutState, state_path: Path, console: Console, clock):
        self.rollout = rollout
        self.state = state
        self.state_path = state_path
        self.console = console
        self.clock = clock

    def record(self, stack: str, wave: str, action: str, ok: bool, result: str, started: float) -> bool:
        step = Step(stack, wave, action, ok, result, round(self.clock() - started, 1))
        self.state.steps.append(step)
        mark = "[green]pass[/]" if ok else "[red]FAIL[/]"
        subject = action if stack == GATE else f"{action} {stack}"
        self.console.print(f"  {mark} {subject}: {result}", highlight=False)
        return ok

    def gate(self, wave: Wave, name: str, ok: bool, result: str, started: float) -> bool:
        return self.record(GATE, wave.name, f"gate {name}", ok, result, started)

    def stop(self, wave: Wave) -> int:
        self.state.stopped_at = wave.name
        self.state.save(self.state_path)
        self.console.print(summary_table(self.state.steps))
        self.console.print(f"[red]rollout of {self.rollout.env_name} stopped in wave {wave.name}[/]")
        self.console.print(resume_hint(self.rollout.env_name, wave.name), highlight=False)
        return EXIT_STOPPED


def run_rollout(
    rollout: Rollout,
    *,
    workspace: Workspace,
    health_checks: Callable[[str, Mapping[str, Any]], list[Check]],
    confirm: Callable[[str], bool],
    state_path: Path,
    identity: Identity,
    resume: bool,
    from_wave: str | None,
    yes: bool,
    console: Console,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    only_wave: str | None = None,
    slo_gate: SloGate | None = None,
) -> int:
    """Waves in order, stacks of a wave one after another; 0 when every wave is deployed and healthy (and within
    its SLO, with `slo_gate`).

    `only_wave`: that wave alone (its gates included), for a job on the runner that reaches its stacks."""
    start = first_wave(rollout.waves, only_wave or from_wave)
    previous = load_state(state_path) if resume else None
    done: set[str] = set()
    if previous is not None and previous.matches(identity):
        done = set(previous.waves_done)
    elif resume:
        console.print("no rollout state for this commit and Pulumi file: starting from the first wave")
    state = RolloutState(rollout.env_name, identity.commit, identity.config_hash, waves_done=[])
    run = _Run(rollout=rollout, state=state, state_path=state_path, console=console, clock=clock)
    for index, wave in enumerate(rollout.waves):
        if index < start or wave.name in done:
            if wave.name in done:
                state.waves_done.append(wave.name)
            console.print(f"[dim]wave {wave.name}: skipped ({'done' if wave.name in done else '--from-wave'})[/]")
            continue
        console.rule(f"wave {wave.name}: {', '.join(wave.stacks)}")
        if not _deploy_wave(
            run,
            wave,
            workspace=workspace,
            health_checks=health_checks,
            confirm=confirm,
            yes=yes,
            sleep=sleep,
            slo_gate=slo_gate,
        ):
            return run.stop(wave)
        state.waves_done.append(wave.name)
        state.save(state_path)
        if only_wave is not None:
            break
    state.save(state_path)
    console.print(summary_table(state.steps))
    console.print(f"[green]rollout of {rollout.env_name} done[/]: {', '.join(w.name for w in rollout.waves)}")
    return 0


def run_bootstrap(
    rollout: Rollout,
    *,
    workspace: Workspace,
    bootstraps: Mapping[str, NetworkBootstrap],
    runner_of: Callable[[str], str],
    only_wave: str | None,
    console: Console,
    clock: Callable[[], float],
) -> int:
    """The network-first step of the waves' stacks whose runner lives in the network they create: `pulumi up
    --target` of the program in its network mode (cloud APIs only), then where to start the runner; a stack deployed
    before is left alone. No gates: nothing but the network exists yet."""
    start = first_wave(rollout.waves, only_wave)
    waves = rollout.waves[start : start + 1] if only_wave else rollout.waves[start:]
    stacks = [s for w in waves for s in w.stacks if s in bootstraps]
    wave_of = {s: w.name for w in waves for s in w.stacks}
    if not stacks:
        console.print("no stack of these waves creates the network its runner lives in: nothing to bootstrap")
        return 0
    state = RolloutState(rollout.env_name, "", "", waves_done=[])
    run = _Run(rollout=rollout, state=state, state_path=Path(os.devnull), console=console, clock=clock)
    for stack in stacks:
        step = bootstraps[stack]
        started = clock()
        ops = workspace.select_stack(stack)
        if ops.outputs():  # the network-first program exports nothing; a full `up` exports the stack's outputs
            run.record(stack, "bootstrap", "up --target network", True, "deployed before: its network exists", started)
            continue
        with console.status(f"{stack}: pulumi up --target ({step.resources} network resources, network mode)"):
            result = ops.bootstrap(list(step.targets))
        text = result.summary + (f" ({result.detail})" if result.detail else "")
        if not run.record(stack, "bootstrap", "up --target network", result.ok, text, started):
            console.print(summary_table(state.steps))
            return EXIT_STOPPED
        console.print(
            f"  next: start the runner labelled {runner_of(stack)} in {stack}'s network (its private subnets reach "
            f"the internet through its NAT), then `make rollout ENV={rollout.env_name} WAVE={wave_of[stack]}` on it",
            highlight=False,
        )
    console.print(summary_table(state.steps))
    return 0


def _deploy_wave(
    run: _Run,
    wave: Wave,
    *,
    workspace: Workspace,
    health_checks: Callable[[str, Mapping[str, Any]], list[Check]],
    confirm: Callable[[str], bool],
    yes: bool,
    sleep: Callable[[float], None],
    slo_gate: SloGate | None = None,
) -> bool:
    """Gates and steps of one wave; False at the first failure (recorded)."""
    clock = run.clock
    started = clock()
    findings = [f"{stack}: {line}" for stack in wave.stacks for line in run.rollout.violations.get(stack, [])]
    verdict = f"{len(findings)} mandatory violation(s): {'; '.join(findings)}" if findings else "offline plan passed"
    if not run.gate(wave, "policy", not findings, verdict, started):
        return False
    started = clock()
    blocked = [line for stack in wave.stacks for line in run.rollout.bring_up.get(stack, [])]
    verdict = f"{len(blocked)} precondition(s) missing: {'; '.join(blocked)}" if blocked else "every wait can complete"
    if not run.gate(wave, "bring-up", not blocked, verdict, started):
        return False
    if wave.confirm:
        started = clock()
        ok = yes or confirm(f"deploy wave {wave.name} ({', '.join(wave.stacks)})? [y/N] ")
        answer = "--yes" if yes else ("confirmed" if ok else "declined by the operator")
        if not run.gate(wave, "confirmation", ok, answer, started):
            return False
    outputs: dict[str, Mapping[str, Any]] = {}
    for stack in wave.stacks:
        ops = workspace.select_stack(stack)
        for action in ("preview", "up"):
            started = clock()
            with run.console.status(f"{stack}: pulumi {action}"):
                result: StepResult = getattr(ops, action)()
            text = result.summary + (f" ({result.detail})" if result.detail else "")
            if not run.record(stack, wave.name, action, result.ok, text, started):
                return False
        outputs[stack] = ops.outputs()
    if not _health_gate(run, wave, health_checks=health_checks, outputs=outputs, sleep=sleep):
        return False
    return slo_gate is None or _slo_gate(run, wave, slo_gate, outputs)


def _health_gate(
    run: _Run,
    wave: Wave,
    *,
    health_checks: Callable[[str, Mapping[str, Any]], list[Check]],
    outputs: Mapping[str, Mapping[str, Any]],
    sleep: Callable[[float], None],
) -> bool:
    clock = run.clock
    started = clock()
    checks = [check for stack in wave.stacks for check in health_checks(stack, outputs[stack])]
    if not checks:
        return run.gate(wave, "health", True, "no cluster in this wave: nothing to check", started)
    results = wait_healthy(
        checks,
        timeout_seconds=run.rollout.health_timeout_seconds,
        clock=clock,
        sleep=sleep,
        on_result=lambda r: _print_check(run.console, r),
    )
    failed = [r for r in results if not r.ok]
    verdict = (
        f"{len(failed)} of {len(results)} checks not passed: {', '.join(r.name for r in failed)}"
        if failed
        else f"{len(results)} checks passed"
    )
    return run.gate(wave, "health", not failed, verdict, started)


def _slo_gate(run: _Run, wave: Wave, gate: SloGate, outputs: Mapping[str, Mapping[str, Any]]) -> bool:
    """A bounded load test through each gateway of the wave (tools/rollout/slo.py); fails when one broke a bound."""
    started = run.clock()
    found = [t for stack in wave.stacks for t in gate.targets(wave.name, stack, outputs[stack])]
    results: list[SloResult | NotTested] = []
    for target in found:
        if isinstance(target, NotTested):
            results.append(target)
            run.state.slo.append(not_tested_json(wave.name, target))
            continue
        slo = gate.slo
        run.console.print(
            f"    load test of {target.region}: {target.base_url}/chat/completions as tenant {slo.tenant}, "
            f"{', '.join(target.models)}; up to {slo.max_requests} requests in {slo.duration_seconds}s, "
            f"{slo.concurrency} at a time",
            highlight=False,
        )
        with run.console.status(f"load test of {target.region}"):
            result = gate.run(wave.name, target)
        results.append(result)
        run.state.slo.append(result.to_json(slo))
        mark = "[green]ok[/]" if result.passed else "[red]failed[/]"
        run.console.print(f"    {mark} {result.line(slo)}", highlight=False)
    tested = [r for r in results if isinstance(r, SloResult)]
    failed = [r for r in tested if not r.passed]
    untested = untested_wave(wave.name, found)
    lines = [r.line(gate.slo) if isinstance(r, SloResult) else r.line() for r in (failed or results)]
    verdict = "; ".join(lines) if lines else "not load-tested: no gateway in this wave"
    if tested and not failed:
        verdict = f"{len(tested)} gateway(s) within the SLO: {verdict}"
    if untested:
        verdict = f"{untested}: {verdict}"
    return run.gate(wave, "slo", not failed and untested is None, verdict, started)


def _print_check(console: Console, result: CheckResult) -> None:
    mark = "[green]ok[/]" if result.ok else "[red]not ready[/]"
    console.print(f"    {mark} {result.name}: {result.message}", highlight=False)


def summary_table(steps: list[Step]) -> Table:
    table = Table(title="rollout")
    for column in ("stack", "wave", "action", "result", "duration"):
        table.add_column(column, justify="right" if column == "duration" else "left")
    for step in steps:
        result = f"[green]{step.result}[/]" if step.ok else f"[red]{step.result}[/]"
        table.add_row(step.stack, step.wave, step.action, result, f"{step.seconds:.0f}s")
    return table
