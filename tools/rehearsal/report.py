"""What a rehearsal found: named checks per stack, written to build/<env>/rehearsal.json, and shown as they come.

A check passes (`ok: true`) or fails (`ok: false`); one whose object was never attempted because a resource it
depends on failed, as `pulumi up` skips it, has `ok: null` and says which. What the rehearsal cannot rehearse at
all (a release no Go module serves at its pin, a stand-in for a pinned program, a webhook whose server it does
not run, a gate that needs a data plane) is not a check: it is a declared limit (`stacks[].limits[]`), naming
the object, the reason and what stands in its place, counted in the summary and shown as it comes. The run fails
(exit 1) when a check fails; a limit never fails it and never passes for a check."""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from rich.console import Console
from rich.markup import escape
from rich.table import Table

Category = Literal["apply", "member-joined", "propagated", "scheduled", "picker-started", "gateway-translated", "gate"]
CATEGORIES: tuple[Category, ...] = (
    "apply",
    "member-joined",
    "propagated",
    "scheduled",
    "picker-started",
    "gateway-translated",
    "gate",
)


@dataclass
class Check:
    name: str
    category: Category
    ok: bool | None  # None: not run, for the reason in `detail`
    detail: str
    wave: str
    stack: str
    cluster: str | None = None
    object: str | None = None  # Kind namespace/name, when the check is about one object
    seconds: float = 0.0


@dataclass
class Limit:
    """Something of the plan the rehearsal does not rehearse: `object`, `reason` (why it cannot), `stands_in` (what
    takes its place, or what then goes unchecked)."""

    object: str
    category: Category
    reason: str
    stands_in: str
    wave: str
    stack: str
    cluster: str | None = None


@dataclass
class StackReport:
    name: str
    wave: str
    checks: list[Check] = field(default_factory=list)
    limits: list[Limit] = field(default_factory=list)


@dataclass
class Report:
    environment: str
    console: Console
    stacks: list[StackReport] = field(default_factory=list)
    binaries: dict[str, str] = field(default_factory=dict)
    clusters: dict[str, dict] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    stopped_at: str | None = None  # the wave a failure stopped the run in
    waves: dict[str, float] = field(default_factory=dict)  # wave -> its seconds (stacks, checks and gates)
    cpu: dict[str, float] = field(default_factory=dict)  # program -> CPU seconds (the rehearsal's own: "rehearsal")

    def stack(self, name: str, wave: str) -> StackReport:
        for s in self.stacks:
            if s.name == name:
                return s
        report = StackReport(name, wave)
        self.stacks.append(report)
        return report

    def add(self, check: Check) -> Check:
        self.stack(check.stack, check.wave).checks.append(check)
        mark = {True: "[green]pass[/]", False: "[red]FAIL[/]", None: "[yellow]not attempted[/]"}[check.ok]
        where = f"{check.cluster}: " if check.cluster else ""
        if check.ok is not True or check.category != "apply":  # every apply pass would drown the view
            self.console.print(
                f"  {mark} {escape(f'[{check.category}] {where}{check.name}: {check.detail}')}", highlight=False
            )
        return check

    def limit(self, limit: Limit) -> Limit:
        self.stack(limit.stack, limit.wave).limits.append(limit)
        where = f"{limit.cluster}: " if limit.cluster else ""
        self.console.print(
            f"  [cyan]limit[/] {escape(f'[{limit.category}] {where}{limit.object}: {limit.reason}')}; "
            f"in its place: {escape(limit.stands_in)}",
            highlight=False,
        )
        return limit

    @property
    def checks(self) -> list[Check]:
        return [c for s in self.stacks for c in s.checks]

    @property
    def limits(self) -> list[Limit]:
        return [limit for s in self.stacks for limit in s.limits]

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.ok is False]

    def document(self) -> dict:
        return {
            "environment": self.environment,
            "seconds": round(time.monotonic() - self.started, 1),
            "ok": not self.failed,
            "stoppedAt": self.stopped_at,
            "binaries": self.binaries,
            "clusters": self.clusters,
            "waves": {name: round(seconds, 1) for name, seconds in self.waves.items()},
            "cpuSeconds": {name: round(seconds, 1) for name, seconds in sorted(self.cpu.items(), key=lambda i: -i[1])},
            "limits": len(self.limits),
            "summary": {category: _counts(self.checks, self.limits, category) for category in CATEGORIES},
            "stacks": [
                {
                    "name": s.name,
                    "wave": s.wave,
                    "checks": [_check_json(c) for c in s.checks],
                    "limits": [_limit_json(limit) for limit in s.limits],
                }
                for s in self.stacks
            ],
        }

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.document(), indent=2) + "\n")

    def conclude(self) -> int:
        """The summary, and the run's exit code: 1 when a check failed; declared limits do not count."""
        self.console.print(self.summary_table())
        failed, checks = self.failed, self.checks
        limits = f"; {len(self.limits)} declared limit(s), not rehearsed (rehearsal.json: stacks[].limits)"
        if failed:
            stop = f"; `make rollout` would stop in wave {self.stopped_at}" if self.stopped_at else ""
            self.console.print(
                f"[red]rehearsal of {self.environment}: {len(failed)} of {len(checks)} check(s) failed[/]{stop}{limits}"
            )
            return 1
        self.console.print(f"[green]rehearsal of {self.environment}: all {len(checks)} checks passed[/]{limits}")
        return 0

    def summary_table(self) -> Table:
        table = Table(title=f"rehearsal of {self.environment}")
        table.add_column("stack")
        table.add_column("wave")
        for category in CATEGORIES:
            table.add_column(category, justify="right")
        for s in self.stacks:
            cells = [_cell(_counts(s.checks, s.limits, category)) for category in CATEGORIES]
            table.add_row(s.name, s.wave, *cells)
        return table


def _state(check: Check) -> str:
    return {True: "passed", False: "failed", None: "not-attempted"}[check.ok]


def _counts(checks: list[Check], limits: list[Limit], category: Category) -> dict[str, int]:
    counts = Counter(_state(c) for c in checks if c.category == category)
    counts["limits"] = sum(1 for limit in limits if limit.category == category)
    return {state: n for state, n in counts.items() if n}


def _cell(states: dict[str, int]) -> str:
    if not states:
        return "[dim]-[/]"
    parts = []
    if states.get("passed"):
        parts.append(f"[green]{states['passed']}[/]")
    if states.get("failed"):
        parts.append(f"[red]{states['failed']} failed[/]")
    if states.get("not-attempted"):
        parts.append(f"[yellow]{states['not-attempted']} not attempted[/]")
    if states.get("limits"):
        parts.append(f"[cyan]{states['limits']} limits[/]")
    return " ".join(parts)


def _check_json(check: Check) -> dict:
    data = asdict(check)
    return {k: v for k, v in data.items() if v is not None or k == "ok"}


def _limit_json(limit: Limit) -> dict:
    data = {
        "object": limit.object,
        "category": limit.category,
        "rehearsed": False,
        "reason": limit.reason,
        "standsIn": limit.stands_in,
        "wave": limit.wave,
        "stack": limit.stack,
        "cluster": limit.cluster,
    }
    return {k: v for k, v in data.items() if v is not None}
