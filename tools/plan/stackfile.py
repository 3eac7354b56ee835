"""Read Pulumi.yaml and Pulumi.<env>.yaml the way the Pulumi CLI hands config to a program."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from components.config.loader import ConfigError
from components.config.stackfile import PlanInputError, StackConfig, read_stack_file, read_yaml
from tools.plan.engine import SECRET


def load_stack_config(project_dir: Path, stack: str) -> StackConfig:
    project_file = project_dir / "Pulumi.yaml"
    project = (read_yaml(project_file) or {}).get("name")
    if not project:
        raise PlanInputError([f"{project_file}: no project `name`; add `name: inference-platform`"])
    config = read_stack_file(project_dir, stack)
    return stack_config_from_mapping(project, stack, config, project_dir / f"Pulumi.{stack}.yaml")


def stack_config_from_mapping(project: str, stack: str, mapping: dict[str, Any], path: Path) -> StackConfig:
    """Config as the CLI passes it: namespaced keys, non-string values as JSON text."""
    config: dict[str, str] = {}
    secret_keys: list[str] = []
    for key, value in mapping.items():
        full_key = key if ":" in str(key) else f"{project}:{key}"
        value, is_secret = _unwrap_secure(value)
        config[full_key] = value if isinstance(value, str) else json.dumps(value)
        if is_secret:
            secret_keys.append(full_key)
    return StackConfig(project, stack, config, secret_keys, path)


def _unwrap_secure(value: Any) -> tuple[Any, bool]:
    """`secure:` ciphertext cannot be decrypted offline; the program sees a marker instead."""
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return SECRET, True
        pairs = {k: _unwrap_secure(v) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, any(s for _, s in pairs.values())
    if isinstance(value, list):
        items = [_unwrap_secure(v) for v in value]
        return [v for v, _ in items], any(s for _, s in items)
    return value, False


def input_error_lines(exc: PlanInputError | ConfigError, stack: str) -> list[str]:
    """`error: Pulumi.<stack>.yaml: <problem>` lines, as every tool reading a stack file prints them."""
    lines = exc.lines if isinstance(exc, PlanInputError) else [str(i) for i in exc.issues]
    where = f"Pulumi.{stack}.yaml"
    return [f"error: {line}" if line.startswith("Pulumi.") else f"error: {where}: {line}" for line in lines]
