"""Read the `inference-platform:` config namespace once into a validated EnvironmentSpec."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args

import pulumi
from pulumi.runtime import config as runtime_config

from components.checks.loader import PROJECT, config_key_issues, load_environment
from components.config.base import ConfigError, Issue
from components.config.environment import EnvironmentSpec
from components.config.model_catalog import read_model_catalog
from components.config.stackfile import (
    PlanInputError,
    overlay_config,
    read_stack_file,
    shared_secret_issues,
    stack_config_from_mapping,
)

# What the program registers: everything, or (a runner's network-first step) only its region's network. An
# environment variable, not config: `pulumi up --config` would save it into the stack's settings.
BOOTSTRAP_VARIABLE = "INFERENCE_PLATFORM_BOOTSTRAP"
ProgramMode = Literal["full", "network"]


def program_mode() -> ProgramMode:
    """`network` when INFERENCE_PLATFORM_BOOTSTRAP=network (`make rollout BOOTSTRAP=1` sets it), else `full`."""
    value = os.environ.get(BOOTSTRAP_VARIABLE, "")
    if value == "":
        return "full"
    if value not in get_args(ProgramMode) or value == "full":
        raise ConfigError(
            [Issue("", f"{BOOTSTRAP_VARIABLE}={value}: the only value is `network`; unset it for a full up")]
        )
    return "network"


def inherited_bootstrap() -> str | None:
    """Why `make plan` and `make rollout` refuse to start, or None: INFERENCE_PLATFORM_BOOTSTRAP in the caller's
    environment. They set it themselves for the network-first step; inherited, a plan and an untargeted `up` (the
    Automation API hands the CLI this environment) would register the network alone, and the `up` delete the rest."""
    value = os.environ.get(BOOTSTRAP_VARIABLE)
    if value is None:
        return None
    return (
        f"{BOOTSTRAP_VARIABLE}={value} is set in this shell; make plan and make rollout set it themselves for the "
        "network-first step (make rollout BOOTSTRAP=1): unset it"
    )


def namespace_values(namespace: str = PROJECT, config: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Every `<namespace>:<key>` the engine passed to the program, structured values decoded.

    pulumi.Config can only fetch keys by name; listing them is what lets a typo in a
    top-level key be reported instead of silently ignored. Tools that read a stack file
    without running the program (preflight) pass its `config` mapping instead.
    """
    merged = config if config is not None else engine_config()
    prefix = namespace + ":"
    return {key[len(prefix) :]: _decode(value) for key, value in merged.items() if key.startswith(prefix)}


def _decode(value: Any) -> Any:
    # The engine passes objects, lists, numbers and booleans as JSON text.
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def environment_file_config(stack: str, project_dir: Path | None = None) -> dict[str, str]:
    """`Pulumi.<env>.yaml`'s config as the engine would pass it, for the stack `<env>.<part>`."""
    env_name, dot, _ = stack.rpartition(".")
    if not dot:
        return {}  # a stack of its own: its config is the environment
    try:
        mapping = read_stack_file(project_dir or Path.cwd(), env_name)
    except PlanInputError as exc:
        raise ConfigError([Issue("", line) for line in exc.lines]) from None
    path = (project_dir or Path.cwd()) / f"Pulumi.{env_name}.yaml"
    parsed = stack_config_from_mapping(PROJECT, stack, mapping, path)
    if parsed.secret_keys:
        raise ConfigError(shared_secret_issues(env_name, parsed.secret_keys, stack))
    return parsed.config


def engine_config() -> dict[str, Any]:
    """Every config key the engine passed to the program."""
    return {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}


def _is_an_environment(config: Mapping[str, Any]) -> bool:
    """Whether the engine passed a whole environment (a stack of its own, or an offline plan's stack) rather than a
    region stack's own keys: its regions each name themselves. A region stack's own `regions[N].…` keys, set by
    path (a region's secret: `pulumi config set --secret --path -s prod.use1 'regions[0]…'`), are a list of partial
    entries that go into the environment file's."""
    text = config.get(f"{PROJECT}:regions")
    try:
        regions = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return False
    return isinstance(regions, list) and bool(regions) and all(isinstance(r, dict) and "name" in r for r in regions)


def read_environment() -> EnvironmentSpec:
    """Raises ConfigError (a pulumi.RunError: printed without traceback) on invalid input.

    A per-region or global stack (`prod.use1`, `prod.global`) has no environment of its own: it reads
    `Pulumi.prod.yaml`, with the stack's own `inference-platform:` keys (its secrets, say) set into it by path,
    as `pulumi config set --path` set them. The project's `models/*.yaml` are read from the directory the CLI runs
    the program in, the project's, beside the stack files."""
    config = engine_config()
    if not _is_an_environment(config):
        config = overlay_config(environment_file_config(pulumi.get_stack()), config)
    issues = config_key_issues(config)
    if issues:
        raise ConfigError(issues)
    secret = {key.split(":", 1)[1] for key in config if runtime_config.is_config_secret(key)}
    try:
        catalog_files = read_model_catalog(Path.cwd())
    except PlanInputError as exc:
        raise ConfigError([Issue("", line) for line in exc.lines]) from None
    return _validated(namespace_values(config=config), secret, catalog_files)


# Validated environments by everything validation reads (a few: an offline plan evaluates each of its stacks'
# programs, and their network-first bootstraps, in one process on the same config; a `pulumi up` runs one).
_VALIDATED: dict[str, EnvironmentSpec] = {}
_VALIDATED_KEPT = 4


def forget_validated_environments() -> None:
    """As in a fresh process: the next read validates its environment again (`make bench` times each warm plan as
    `make plan` runs one, validation included)."""
    _VALIDATED.clear()


def _validated(raw: dict[str, Any], secret: set[str], catalog_files: Mapping[str, Any]) -> EnvironmentSpec:
    """`load_environment`, once per distinct input: its result is a frozen spec and a function of these inputs
    alone (an invalid one raises ConfigError every time and is not kept). Keyed in the inputs' own order, which the
    spec keeps and the plan shows (a mapping of tags, say)."""
    key = json.dumps([raw, sorted(secret), catalog_files], default=repr)
    spec = _VALIDATED.get(key)
    if spec is None:
        spec = load_environment(raw, secret_keys=secret, catalog_files=catalog_files)
        while len(_VALIDATED) >= _VALIDATED_KEPT:
            del _VALIDATED[next(iter(_VALIDATED))]
        _VALIDATED[key] = spec
    return spec
