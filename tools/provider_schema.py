"""Recorded resource inputs checked against the installed provider SDKs' input types.

Each SDK's `*Args` classes (`pulumi.input_type`) carry the provider schema: the camelCase property
names (their getters' Pulumi names), which are required (a getter whose type admits no None), the
type of each value and closed enums. The mocks accept any dict; the provider would reject a
misnamed or mistyped input at `pulumi up`. Nothing here is generated ahead: it follows the SDK
versions `requirements.txt` installs.
"""

from __future__ import annotations

import collections.abc
import difflib
import enum
import importlib
import json
import types
import typing
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pulumi
from pulumi._types import input_type_py_to_pulumi_names, is_input_type
from pulumi.runtime.rpc import UNKNOWN, get_resource_module, get_resource_package

from tools.plan.engine import SECRET

_OPAQUE = {SECRET, UNKNOWN}  # a redacted secret, an unknown output: any type may hide behind them
_HINT_NAMESPACE = {"Output": pulumi.Output, "T": type(None)}  # as the SDK resolves its own hints
_PACKAGES = {"aws": "pulumi_aws", "gcp": "pulumi_gcp", "kubernetes": "pulumi_kubernetes"}


@dataclass(frozen=True)
class Property:
    name: str  # the Pulumi (wire) name
    hint: Any
    required: bool


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    properties: int = 0  # values checked, at every depth
    enums: int = 0  # values checked against a closed enum


@cache
def args_class(resource_type: str) -> type | None:
    """The SDK's Args class of a resource type token (`aws:eks/cluster:Cluster` ->
    `pulumi_aws.eks.ClusterArgs`; `pulumi:providers:aws` -> `pulumi_aws.ProviderArgs`), or None
    when the SDK has no such resource (a Kubernetes CR goes through `CustomResource`)."""
    if resource_type.startswith("pulumi:providers:"):
        package = resource_type.rsplit(":", 1)[1]
        _import(package)
        found = get_resource_package(package, "")
        info = getattr(found, "pkg_info", None) if found else None
    else:
        package, module, _ = resource_type.split(":")
        _import(package)
        registered = get_resource_module(package, module, "")
        mod_info = getattr(registered, "mod_info", None) if registered else None
        name = (mod_info or {}).get("classes", {}).get(resource_type)
        info = {"fqn": mod_info["fqn"], "class": name} if mod_info and name else None
    if not info:
        return None
    # The one input type the resource's own module exports: `<Class>Args`, or `<Class>InitArgs` where
    # the package namespace has a nested input type of that name (pulumi_aws.s3's BucketVersioningArgs).
    resource = getattr(importlib.import_module(info["fqn"]), info["class"])
    own_module = importlib.import_module(resource.__module__)
    (found,) = (cls for export in own_module.__all__ if is_input_type(cls := getattr(own_module, export)))
    return found


def _import(package: str) -> None:
    """Importing an SDK registers its resource modules with the Pulumi runtime."""
    importlib.import_module(_PACKAGES.get(package, f"pulumi_{package}"))


@cache
def properties(cls: type) -> dict[str, Property]:
    """Pulumi name -> Property of an input type, from its getters' type hints."""
    found = {}
    for python_name, pulumi_name in input_type_py_to_pulumi_names(cls).items():
        hint = typing.get_type_hints(getattr(cls, python_name).fget, localns=_HINT_NAMESPACE)["return"]
        _, optional = _members(hint)
        found[pulumi_name] = Property(pulumi_name, hint, required=not optional)
    return found


def _members(hint: Any) -> tuple[tuple[Any, ...], bool]:
    """The value types a hint admits, with Input's Awaitable / Output wrappers dropped, and
    whether it admits None."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        members: list[Any] = []
        optional = False
        for arg in typing.get_args(hint):
            sub, sub_optional = _members(arg)
            members.extend(m for m in sub if m not in members)
            optional = optional or sub_optional
        return tuple(members), optional
    if hint is type(None):
        return (), True
    if typing.get_origin(hint) in (collections.abc.Awaitable, pulumi.Output) or hint is pulumi.Output:
        return (), False
    return (hint,), False


def check_inputs(resource_type: str, inputs: dict[str, Any]) -> Report | None:
    """Problems of one resource's inputs, or None when the SDKs have no Args class for its type."""
    cls = args_class(resource_type)
    if cls is None:
        return None
    report = Report()
    if resource_type.startswith("pulumi:providers:"):
        props = properties(cls)
        inputs = {key: _provider_value(value, props.get(key)) for key, value in inputs.items()}
    _check_object(inputs, cls, "", report)
    return report


def _provider_value(value: Any, prop: Property | None) -> Any:
    """A provider's inputs travel as strings, JSON for any property that is not a string (the SDK
    encodes them so)."""
    if prop is None or str in _members(prop.hint)[0] or not isinstance(value, str) or value in _OPAQUE:
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def _check_object(value: dict, cls: type, path: str, report: Report) -> None:
    props = properties(cls)
    for key, item in value.items():
        where = f"{path}.{key}" if path else key
        prop = props.get(key)
        if prop is None:
            report.problems.append(f"{where}: no property {key!r} in {cls.__name__}{_suggest(key, props)}")
            continue
        _check_value(item, prop.hint, where, report)
    for prop in props.values():
        if prop.required and prop.name not in value:
            report.problems.append(f"{path or '<root>'}: required property {prop.name!r} of {cls.__name__} is missing")


def _suggest(key: str, props: dict[str, Property]) -> str:
    close = difflib.get_close_matches(key, props, n=3)
    return f"; did you mean {', '.join(close)}?" if close else ""


def _check_value(value: Any, hint: Any, path: str, report: Report) -> None:
    report.properties += 1
    if value is None or (isinstance(value, str) and value in _OPAQUE):
        return
    members, _ = _members(hint)
    failures: list[list[str]] = []
    for member in members:
        trial = Report()
        if _matches(value, member, path, trial):
            report.problems.extend(trial.problems)
            report.properties += trial.properties
            report.enums += trial.enums
            return
        failures.append(trial.problems)
    structural = [f for f in failures if f]
    if structural:  # the value has the shape of a member (an object, a list) but wrong contents
        shortest = min(structural, key=len)
        report.problems.extend(shortest)
    else:
        expected = " | ".join(_type_name(m) for m in members)
        report.problems.append(f"{path}: {value!r:.60} is not {expected}")


def _matches(value: Any, member: Any, path: str, report: Report) -> bool:
    """Whether `value` has `member`'s shape; problems below it go to `report`."""
    origin = typing.get_origin(member)
    if member is Any:
        return True
    if isinstance(member, type) and is_input_type(member):
        if not isinstance(value, dict):
            return False
        _check_object(value, member, path, report)
        return not report.problems
    if origin in (list, collections.abc.Sequence):
        if not isinstance(value, list):
            return False
        (item_hint,) = typing.get_args(member) or (Any,)
        for i, item in enumerate(value):
            _check_value(item, item_hint, f"{path}[{i}]", report)
        return not report.problems
    if origin in (dict, collections.abc.Mapping):
        if not isinstance(value, dict):
            return False
        _, item_hint = typing.get_args(member) or (str, Any)
        for key, item in value.items():
            _check_value(item, item_hint, f"{path}.{key}", report)
        return not report.problems
    if isinstance(member, type) and issubclass(member, enum.Enum):
        report.enums += 1
        return value in {e.value for e in member}
    if member is bool:
        return isinstance(value, bool)
    if member is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if member is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if member is str:
        return isinstance(value, str)
    if member in (dict, list):
        return isinstance(value, member)
    if isinstance(member, type):  # assets, archives, resources: what the SDK would serialise them to
        return not isinstance(value, str | int | float | bool | list | dict)
    return True


def _type_name(member: Any) -> str:
    if isinstance(member, type) and issubclass(member, enum.Enum):
        return f"{member.__name__} {sorted(e.value for e in member)}"
    return getattr(member, "__name__", None) or str(member)
