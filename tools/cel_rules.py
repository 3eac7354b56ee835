"""A CRD's validation rules (`x-kubernetes-validations`, CEL) evaluated on a CR as the API server would.

The API server defaults the object from its schema, then evaluates each rule with `self` bound to the
value at the rule's schema node, wherever that value is present. We do the same with cel-python.
Transition rules (those reading `oldSelf`) have nothing to compare with on create, and rules calling a
function of the Kubernetes CEL libraries that is not implemented here are reported as not evaluated,
by name, never passed.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import celpy
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.evaluation import CELEvalError
from pulumi.runtime.rpc import UNKNOWN

from tools.plan.engine import SECRET

_OPAQUE = {SECRET, UNKNOWN}  # a redacted secret, an unknown output: nothing to evaluate a rule on
_UNDECLARED = re.compile(r"undeclared reference to '([^']+)'")


# Kubernetes CEL libraries (k8s.io/apiserver/pkg/cel/library and cel-go's strings extension, which
# Kubernetes enables): those our CRDs' rules call. Any other is reported as not evaluated.
def _split(text: celtypes.StringType, separator: celtypes.StringType, limit: celtypes.IntType | None = None):
    if limit is not None and int(limit) == 0:
        return celtypes.ListType()
    parts = str(text).split(str(separator), -1 if limit is None or int(limit) < 0 else int(limit) - 1)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _ascii(convert: Callable[[str], str]) -> Callable[[celtypes.StringType], celtypes.StringType]:
    """lowerAscii / upperAscii change ASCII letters only (str.lower would fold any Unicode letter)."""
    table = {c: convert(chr(c)) for c in range(ord("A"), ord("Z") + 1)} | {
        c: convert(chr(c)) for c in range(ord("a"), ord("z") + 1)
    }
    return lambda text: celtypes.StringType(str(text).translate(table))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "split": _split,
    "lowerAscii": _ascii(str.lower),
    "upperAscii": _ascii(str.upper),
}


@dataclass(frozen=True)
class Outcome:
    path: str  # where in the object the rule was evaluated
    rule: str
    message: str
    verdict: str  # "pass", "fail" or "not evaluated"
    reason: str = ""

    @property
    def name(self) -> str:
        """How a report names the rule: its location and its text."""
        return f"{self.path}: {self.rule}"


@cache
def _environment() -> celpy.Environment:
    """Built on first use: its parser takes ~0.1 s to build, which a process evaluating no rule need not pay."""
    return celpy.Environment()


@cache
def _program(rule: str) -> celpy.Runner:
    environment = _environment()
    return environment.program(environment.compile(rule), functions=FUNCTIONS)


def evaluate(obj: dict, schema: dict) -> list[Outcome]:
    """Every rule of `schema` that applies to `obj` (defaulted first, as the API server stores it)."""
    body = copy.deepcopy(obj)
    # Rules see only metadata.name and generateName of an object's metadata.
    body["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items() if k in ("name", "generateName")}
    _default(body, schema)
    return list(_walk(body, schema, ""))


def _children(value: Any, schema: dict) -> Iterator[tuple[str | int, Any, dict]]:
    """(key or index, value, schema) of each value nested in `value` that the schema describes."""
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            sub = properties.get(key, extra if isinstance(extra, dict) else None)
            if sub is not None:
                yield key, item, sub
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            yield i, item, schema["items"]


def _default(value: Any, schema: dict) -> None:
    """Fill in the schema's defaults at every depth, in place, before any rule runs (the server stores
    the defaulted object; a parent's rule sees its children's defaults)."""
    if isinstance(value, dict):
        for key, sub in (schema.get("properties") or {}).items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
    for _, item, sub in _children(value, schema):
        _default(item, sub)


def _walk(value: Any, schema: dict, path: str) -> Iterator[Outcome]:
    if value is None or (isinstance(value, str) and value in _OPAQUE):
        return
    for rule in schema.get("x-kubernetes-validations") or ():
        yield _evaluate(value, schema, path or "<root>", rule)
    for key, item, sub in _children(value, schema):
        yield from _walk(item, sub, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else key)


def _evaluate(value: Any, schema: dict, path: str, rule: dict) -> Outcome:
    text = rule["rule"]
    message = rule.get("message") or f"failed rule: {text}"
    if "oldSelf" in text:
        return Outcome(path, text, message, "not evaluated", "transition rule: no oldSelf on create")
    try:
        result = _program(text).evaluate({"self": _to_cel(value, schema)})
    except CELEvalError as error:
        return _error(path, text, message, error)
    if isinstance(result, CELEvalError):
        return _error(path, text, message, result)
    return Outcome(path, text, message, "pass" if bool(result) else "fail")


def _error(path: str, rule: str, message: str, error: CELEvalError) -> Outcome:
    missing = _UNDECLARED.search(str(error.args[0] if error.args else error))
    if missing:
        return Outcome(path, rule, message, "not evaluated", f"function {missing.group(1)}() not implemented")
    # The API server rejects an object whose rule cannot be evaluated (e.g. it reads an absent field).
    return Outcome(path, rule, message, "fail", f"evaluation error: {error.args[0] if error.args else error}")


def _to_cel(value: Any, schema: dict) -> Any:
    """JSON -> CEL values typed by the schema: a `number` is a double even when written `1`."""
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        return celtypes.MapType(
            {
                celtypes.StringType(k): _to_cel(v, properties.get(k, extra if isinstance(extra, dict) else {}))
                for k, v in value.items()
            }
        )
    if isinstance(value, list):
        item = items if isinstance(items := schema.get("items"), dict) else {}
        return celtypes.ListType([_to_cel(v, item) for v in value])
    if schema.get("type") == "number" and isinstance(value, int) and not isinstance(value, bool):
        return celtypes.DoubleType(value)
    return json_to_cel(value)
