"""Component inputs checked at the boundary: a bad one raises Pulumi's input error naming the argument, not a
KeyError (or a half-built resource) deep inside the component."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

import pulumi

from components.catalog.regions import Cloud
from platform_catalog.machines import MACHINES, MachineType

T = TypeVar("T")


class InputError(pulumi.InputPropertyError):
    """pulumi.InputPropertyError that prints as `argument: reason` (the SDK's prints its arguments' tuple)."""

    def __str__(self) -> str:
        return f"{self.property_path}: {self.reason}"


def known(argument: str, value: str, choices: Mapping[str, T], what: str) -> T:
    """choices[value], or an InputError naming the argument and every value it may take."""
    if value not in choices:
        raise InputError(argument, f"unknown {what} {value!r}; known: {', '.join(sorted(choices))}")
    return choices[value]


def required(argument: str, value: str | None, reason: str) -> str:
    """A string argument that must not be empty (an id the cloud API needs)."""
    if not value:
        raise InputError(argument, reason)
    return value


def within(argument: str, values: Iterable[str], allowed: Iterable[str], what: str) -> None:
    """Every value is one of `allowed` (zones a pool asks for among those the cluster has subnets in)."""
    allowed = list(allowed)
    missing = [v for v in values if v not in allowed]
    if missing:
        raise InputError(argument, f"{', '.join(missing)} not among the {what}: {', '.join(allowed)}")


def gpu_machine(argument: str, machine_type: str, cloud: Cloud) -> MachineType:
    """The catalog's GPU machine type of `cloud`, or an InputError listing the cloud's known types."""
    return known(
        argument, machine_type, {n: m for n, m in MACHINES.items() if m.cloud == cloud}, f"{cloud} GPU machine type"
    )
