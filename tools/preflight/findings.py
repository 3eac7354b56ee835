"""What a preflight check found: one row of the report, and the report itself."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["pass", "warn", "fail", "not checked"]
STATUSES: tuple[Status, ...] = ("pass", "warn", "fail", "not checked")


@dataclass(frozen=True)
class Finding:
    """One check of one subject (a pool, a quota, a reservation, a model) in one region entry."""

    region: str  # region entry name, e.g. use1
    check: str  # offering | instance type | quota | reservation | model files | gcp
    subject: str  # what was checked, e.g. "pool h100 (p5.48xlarge)"
    status: Status
    detail: str
    hint: str = ""  # what to do about a warn / fail
    data: dict[str, Any] = field(default_factory=dict)  # numbers for CI (--json), e.g. model bytes


@dataclass(frozen=True)
class RegionTarget:
    """A region entry as the report heads it."""

    name: str
    cloud: str
    location: str


@dataclass(frozen=True)
class Report:
    environment: str
    account: str | None  # AWS account the checks ran as, when any AWS region exists
    regions: list[RegionTarget]
    findings: list[Finding]

    @property
    def failed(self) -> bool:
        return any(f.status == "fail" for f in self.findings)

    def counts(self) -> dict[str, int]:
        counted = Counter(f.status for f in self.findings)
        return {status: counted[status] for status in STATUSES}

    def of_region(self, name: str) -> list[Finding]:
        return [f for f in self.findings if f.region == name]

    def to_json(self) -> dict[str, Any]:
        return {
            "environment": self.environment,
            "awsAccount": self.account,
            "ok": not self.failed,
            "counts": self.counts(),
            "regions": [
                {**asdict(region), "findings": [asdict(f) for f in self.of_region(region.name)]}
                for region in self.regions
            ],
        }
