"""What a rehearsal found: named checks per stack, written to build/<env>/rehearsal.json, and shown as they come.

A check passes, fails, or was not run for a stated reason (`ok: null`, never a silent pass); the run fails
when any check fails."""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from rich.console import Console
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
class StackReport:
    name: str
    wave: str
    checks: list[Check] = field(default_factory=list)


@dataclass
class Report:
    environment: str
    console: Console
    stacks: list[StackReport] = field(default_factory=list)
    binaries: dict[str, str] = field(default_factory=dict)
    clusters: dict[str, dict] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    stopped_at: str | None = None  # the wave a failure stopped the run in

    def stack(self, name: str, wave: str) -> StackReport:
        for s in self.stacks:
            if s.name == name:
                return s
        report = StackReport(name, wave)
        self.stacks.append(report)
        return report

    def add(self, check: Check) -> Check:
        self.stack(check.stack, check.wave).checks.append(check)
        mark = {True: "[green]pass[/]", False: "[red]FAIL[/]", None: "[yellow]not run[/]"}[check.ok]
        where = f"{check.cluster}: " if check.cluster else ""
        if check.ok is not True or check.category != "apply":  # every apply pass would drown the view
            self.console.print(f"  {mark} [{check.category}] {where}{check.name}: {check.detail}", highlight=False)
        return check

    @property
    def checks(self) -> list[Check]:
        return [c for s in self.stacks for c in s.checks]

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
            "summary": {
                category: dict(Counter(_state(c) for c in self.checks if c.category == category))
                for category in CATEGORIES
            },
            "stacks": [
                {"name": s.name, "wave": s.wave, "checks": [_check_json(c) for c in s.checks]} for s in self.stacks
            ],
        }

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.document(), indent=2) + "\n")

    def summary_table(self) -> Table:
        table = Table(title=f"rehearsal of {self.environment}")
        table.add_column("stack")
        table.add_column("wave")
        for category in CATEGORIES:
            table.add_column(category, justify="right")
        for s in self.stacks:
            cells = []
            for category in CATEGORIES:
                states = Counter(_state(c) for c in s.checks if c.category == category)
                cells.append(_cell(states))
            table.add_row(s.name, s.wave, *cells)
        return table


def _state(check: Check) -> str:
    return {True: "passed", False: "failed", None: "not-run"}[check.ok]


def _cell(states: Counter) -> str:
    if not states:
        return "[dim]-[/]"
    parts = []
    if states["passed"]:
        parts.append(f"[green]{states['passed']}[/]")
    if states["failed"]:
        parts.append(f"[red]{states['failed']} failed[/]")
    if states["not-run"]:
        parts.append(f"[yellow]{states['not-run']} not run[/]")
    return " ".join(parts)


def _check_json(check: Check) -> dict:
    data = asdict(check)
    return {k: v for k, v in data.items() if v is not None or k == "ok"}
