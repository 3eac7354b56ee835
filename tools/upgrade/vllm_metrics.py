"""The Prometheus metrics a vLLM release registers, by a static walk of its Python source (nothing imported).

Every call of a prometheus_client metric class (Gauge, Counter, Histogram, Summary, Info) or of vLLM's
`self._gauge_cls` / `_counter_cls` / `_histogram_cls` indirection whose name (the `name=` keyword or the first
argument) is a `vllm:` string; and every `vllm:` string in a tuple of a module that builds metrics from such
"spec" tuples (`for name, doc in counter_specs: self._counter_cls(name=name, ...)`).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

_KINDS = {
    "Gauge": "gauge",
    "Counter": "counter",
    "Histogram": "histogram",
    "Summary": "summary",
    "Info": "info",
    "_gauge_cls": "gauge",
    "_counter_cls": "counter",
    "_histogram_cls": "histogram",
}
PREFIX = "vllm:"


def _callee(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _name_arg(node: ast.Call) -> ast.expr | None:
    for keyword in node.keywords:
        if keyword.arg == "name":
            return keyword.value
    return node.args[0] if node.args else None


def exposed_as(name: str, kind: str) -> list[str]:
    """The series prometheus_client serves for a metric: counters end in `_total` (once), histograms and
    summaries add `_bucket`/`_sum`/`_count`, info adds `_info`."""
    if kind == "counter":
        return [name if name.endswith("_total") else f"{name}_total"]
    if kind == "histogram":
        return [f"{name}_bucket", f"{name}_sum", f"{name}_count"]
    if kind == "summary":
        return [f"{name}_sum", f"{name}_count"]
    if kind == "info":
        return [f"{name}_info"]
    return [name]


def module_metrics(relative: str, text: str) -> list[dict[str, Any]]:
    tree = ast.parse(text, filename=relative)
    # `NAME = "vllm:..."` anywhere in the module: a constructor may take the name through it.
    constants = {
        node.targets[0].id: node.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and node.value.value.startswith(PREFIX)
    }
    found: list[dict[str, Any]] = []
    spec_kinds: set[str] = set()  # kinds built from a variable name: look for the spec tuples
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or (kind := _KINDS.get(_callee(node))) is None:
            continue
        arg = _name_arg(node)
        if isinstance(arg, ast.Name) and arg.id in constants:
            arg = ast.Constant(constants[arg.id])
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith(PREFIX):
            found.append(
                {"name": arg.value, "type": kind, "source": relative, "line": node.lineno, "created_via": _callee(node)}
            )
        elif isinstance(arg, ast.Name):
            spec_kinds.add(kind)
    if spec_kinds:
        named = {m["name"] for m in found}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Tuple) or not node.elts:
                continue
            first = node.elts[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith(PREFIX):
                if first.value in named or len(spec_kinds) != 1:
                    continue
                (kind,) = spec_kinds
                found.append(
                    {
                        "name": first.value,
                        "type": kind,
                        "source": relative,
                        "line": node.lineno,
                        "created_via": "spec tuple",
                    }
                )
    return found


def generate(root: Path, package: str = "vllm") -> list[dict[str, Any]]:
    """Every metric registration under `root/package`, sorted by name then place."""
    metrics: list[dict[str, Any]] = []
    for path in sorted((root / package).rglob("*.py")):
        text = path.read_text(errors="replace")
        if PREFIX not in text:
            continue
        for metric in module_metrics(path.relative_to(root).as_posix(), text):
            metric["exposed_as"] = exposed_as(metric["name"], metric["type"])
            metrics.append(metric)
    return sorted(metrics, key=lambda m: (m["name"], m["source"], m["line"]))
