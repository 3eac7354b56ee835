"""Read Pulumi.yaml and Pulumi.<env>.yaml the way the Pulumi CLI hands config to a program."""

from __future__ import annotations

from pathlib import Path

from components.config.loader import ConfigError
from components.config.stackfile import (
    PlanInputError,
    StackConfig,
    read_stack_file,
    read_yaml,
    stack_config_from_mapping,
)


def load_stack_config(project_dir: Path, stack: str) -> StackConfig:
    project_file = project_dir / "Pulumi.yaml"
    project = (read_yaml(project_file) or {}).get("name")
    if not project:
        raise PlanInputError([f"{project_file}: no project `name`; add `name: inference-platform`"])
    config = read_stack_file(project_dir, stack)
    return stack_config_from_mapping(project, stack, config, project_dir / f"Pulumi.{stack}.yaml")


def input_error_lines(exc: PlanInputError | ConfigError, stack: str) -> list[str]:
    """`error: Pulumi.<stack>.yaml: <problem>` lines, as every tool reading a stack file prints them."""
    lines = exc.lines if isinstance(exc, PlanInputError) else [str(i) for i in exc.issues]
    where = f"Pulumi.{stack}.yaml"
    return [f"error: {line}" if line.startswith("Pulumi.") else f"error: {where}: {line}" for line in lines]
