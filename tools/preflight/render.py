"""The report as rich tables (one per region entry) for people, or JSON for CI."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from tools.preflight.findings import Report, Status

_STYLE: dict[Status, str] = {"pass": "green", "warn": "yellow", "fail": "bold red", "not checked": "dim"}


def report_tables(report: Report) -> Group:
    parts: list = []
    account = f" as AWS account {report.account}" if report.account else ""
    parts.append(Text(f"preflight {report.environment}{account}", style="bold"))
    for region in report.regions:
        table = Table(title=f"{region.name}: {region.cloud} {region.location}", title_justify="left", expand=True)
        table.add_column("status", no_wrap=True)
        table.add_column("check", no_wrap=True)
        table.add_column("subject", ratio=2)
        table.add_column("detail", ratio=3, overflow="fold")  # s3:// URIs and commands stay whole
        table.add_column("hint", ratio=3, overflow="fold")
        for finding in report.of_region(region.name):
            style = _STYLE[finding.status]
            table.add_row(
                Text(finding.status, style=style),
                finding.check,
                finding.subject,
                finding.detail,
                Text(finding.hint, style="italic") if finding.hint else "",
            )
        parts.append(table)
    counts = ", ".join(f"{n} {status}" for status, n in report.counts().items() if n)
    verdict = Text("FAIL", style="bold red") if report.failed else Text("OK", style="bold green")
    parts.append(Text.assemble(verdict, f": {counts}"))
    return Group(*parts)
