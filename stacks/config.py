"""Read the `inference-platform:` config namespace once into a validated EnvironmentSpec."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pulumi.runtime import config as runtime_config

from components.config.environment import EnvironmentSpec
from components.config.loader import PROJECT, ConfigError, config_key_issues, load_environment


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


def engine_config() -> dict[str, Any]:
    """Every config key the engine passed to the program."""
    return {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}


def read_environment() -> EnvironmentSpec:
    """Raises ConfigError (a pulumi.RunError: printed without traceback) on invalid input."""
    config = engine_config()
    issues = config_key_issues(config)
    if issues:
        raise ConfigError(issues)
    secret = {key.split(":", 1)[1] for key in config if runtime_config.is_config_secret(key)}
    return load_environment(namespace_values(config=config), secret_keys=secret)
