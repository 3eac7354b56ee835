"""The Prometheus metrics a Go package registers, read from its source: each
`prometheus.New<Kind>[Vec](prometheus.<Kind>Opts{Namespace: ..., Subsystem: ..., Name: ..., Help: ...}, ...)`, its
name joined as client_golang's BuildFQName joins it (the non-empty parts, by `_`), each part a string or a constant
of the package; each `prometheus.NewDesc("name", ...)` of a custom collector. A Help text saying
`[Deprecated: Use X]` names the metric's successor. Nothing is built or run."""

from __future__ import annotations

import re
from typing import Any

_CONST = re.compile(r"^\s*(?P<name>\w+)\s*(?:string\s*)?=\s*(?P<value>\"[^\"]*\"|[A-Za-z_]\w*)\s*(?://.*)?$", re.M)
_OPTS = re.compile(
    r"prometheus\.New(?P<kind>Counter|Gauge|Histogram|Summary)(?:Vec)?\(\s*prometheus\.(?P=kind)Opts\{(?P<body>.*?)\n\s*\}",
    re.S,
)
_DESC = re.compile(r"prometheus\.NewDesc\(\s*\"(?P<name>[^\"]+)\"")
_DEPRECATED = re.compile(r"\[Deprecated: Use (?P<successor>\w+)\]")


def _field(body: str, name: str) -> str | None:
    found = re.search(rf"^\s*{name}:\s*(\"[^\"]*\"|[A-Za-z_]\w*)\s*,", body, re.M)
    return found[1] if found else None


def generate(files: list[str]) -> list[dict[str, Any]]:
    """Every metric the files register: name, type (`collector` for a custom collector's descriptor) and, when its
    Help says so, the metric that replaces it (`deprecated_for`). Sorted by name."""
    constants = {m["name"]: m["value"] for text in files for m in _CONST.finditer(text)}

    def resolve(value: str | None, seen: tuple[str, ...] = ()) -> str:
        if value is None:
            return ""
        if value.startswith('"'):
            return value.strip('"')
        if value in seen or value not in constants:
            raise ValueError(f"metric name part {value}: not a string constant of the package")
        return resolve(constants[value], (*seen, value))

    found: dict[str, dict[str, Any]] = {}
    for text in files:
        for match in _OPTS.finditer(text):
            body = match["body"]
            parts = [resolve(_field(body, f)) for f in ("Namespace", "Subsystem", "Name")]
            name = "_".join(p for p in parts if p)
            metric: dict[str, Any] = {"name": name, "type": match["kind"].lower()}
            if deprecated := _DEPRECATED.search(body):
                metric["deprecated_for"] = deprecated["successor"]
            found[name] = metric
        for match in _DESC.finditer(text):
            found.setdefault(match["name"], {"name": match["name"], "type": "collector"})
    return [found[n] for n in sorted(found)]
