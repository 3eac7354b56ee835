"""Evaluate environments or single components under the plan's recording mocks, and query them."""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tools.plan.engine import evaluate
from tools.plan.model import Plan
from tools.plan.runner import PROJECT_DIR, build_plan
from tools.plan.stackfile import load_stack_config, stack_config_from_mapping

PROJECT = "inference-platform"


@cache
def plan_for(env: str) -> Plan:
    """The plan of a checked-in environment, built once per test session."""
    return build_plan(load_stack_config(PROJECT_DIR, env))


def environment_config(env: str) -> dict[str, Any]:
    """A deep copy of `Pulumi.<env>.yaml`'s config mapping, to mutate in a test."""
    document = yaml.safe_load((PROJECT_DIR / f"Pulumi.{env}.yaml").read_text())
    return copy.deepcopy(document["config"])


def plan_config(config: dict[str, Any], stack: str = "test") -> Plan:
    """Plan an environment given as a config mapping (keys with or without the project namespace)."""
    return build_plan(stack_config_from_mapping(PROJECT, stack, config, Path(f"Pulumi.{stack}.yaml")))


def evaluate_program(program: Callable[[], None], stack: str = "test") -> Plan:
    """Evaluate a component-level program (no config) and wrap it for queries."""
    evaluation = evaluate(program, project=PROJECT, stack=stack, config={})
    return Plan(environment=stack, project=PROJECT, evaluation=evaluation)


def ns(key: str) -> str:
    """`regions` -> `inference-platform:regions`."""
    return f"{PROJECT}:{key}"


def program_values(config: dict[str, Any]) -> dict[str, Any]:
    """A stack file's config as the program reads it: the `inference-platform:` keys, unprefixed."""
    return {k.split(":", 1)[1]: v for k, v in config.items() if k.startswith(f"{PROJECT}:")}


def raw_environment(env: str = "dev") -> dict[str, Any]:
    """`Pulumi.<env>.yaml`'s program values (a deep copy), to mutate in a test."""
    return program_values(environment_config(env))


def config_errors(raw: dict[str, Any]) -> list[str]:
    """The lines a config is rejected with; fails the test when it is accepted."""
    import pytest

    from components.spec.loader import ConfigError, load_environment

    with pytest.raises(ConfigError) as info:
        load_environment(raw)
    return [str(issue) for issue in info.value.issues]
