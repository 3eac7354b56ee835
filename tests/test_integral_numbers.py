"""Integral numbers reach manifests, Helm values and plan.json as integers (`port: 8080`, not 8080.0).

The mocks' wire format carries every number as a double; a server whose schema says int32 rejects
8080.0, and a reviewer reading `replicas: 2.0` in a manifest cannot trust the rest.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tools.plan.artifacts import helm_files, manifest_files, plan_document
from tools.plan.engine import integral_numbers


def _numbers(value: Any, path: str) -> Iterator[tuple[str, int | float]]:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _numbers(item, f"{path}[{i}]")


def _artifact_numbers(plan) -> list[tuple[str, int | float]]:
    found = []
    for sub, files in (("manifests", manifest_files(plan)), ("helm", helm_files(plan))):
        for rel, content in files.items():
            found.extend(_numbers(content, f"{sub}/{rel}:"))
    found.extend(_numbers(plan_document(plan), "plan.json:"))
    return found


def test_no_integral_float_in_any_artifact(checked_plan):
    numbers = _artifact_numbers(checked_plan)
    floats = [f"{path} = {value!r}" for path, value in numbers if isinstance(value, float) and value.is_integer()]
    assert floats == []
    ports = [value for path, value in numbers if path.endswith(".containerPort")]
    assert ports and all(type(port) is int for port in ports)


def test_only_integral_values_become_ints():
    decoded = integral_numbers({"port": 8080.0, "fraction": 0.9, "list": [2.0, True, "3.0"], "zero": -0.0})
    assert decoded == {"port": 8080, "fraction": 0.9, "list": [2, True, "3.0"], "zero": 0}
    assert [type(v) for v in (decoded["port"], decoded["fraction"], *decoded["list"])] == [int, float, int, bool, str]
