"""Read Pulumi.yaml and Pulumi.<env>.yaml the way the Pulumi CLI hands config to a program."""

from __future__ import annotations

from pathlib import Path

from components.config.base import ConfigError
from components.config.model_catalog import CATALOG_DIR
from components.config.stackfile import (
    PlanInputError,
    StackConfig,
    overlay_config,
    read_stack_file,
    read_yaml,
    stack_config_from_mapping,
)


def load_stack_config(project_dir: Path, stack: str, config_dir: Path | None = None) -> StackConfig:
    """`config_dir`: where the stack files are (Pulumi's `stackConfigDir`), by default the project's directory; the
    tests plan their own fixture environments from another directory with the project's program."""
    project_file = project_dir / "Pulumi.yaml"
    project = (read_yaml(project_file) or {}).get("name")
    if not project:
        raise PlanInputError([f"{project_file}: no project `name`; add `name: inference-platform`"])
    config_dir = config_dir or project_dir
    config = read_stack_file(config_dir, stack)
    return stack_config_from_mapping(project, stack, config, config_dir / f"Pulumi.{stack}.yaml")


def stack_own_config(environment: StackConfig, stack: str) -> StackConfig:
    """What the engine hands the program of `stack`, one of `environment`'s stacks: for a stack of its own, the
    environment's config; for `<env>.<slice>`, its own `Pulumi.<env>.<slice>.yaml` beside the environment's file
    (where `pulumi config set -s` writes, its secrets included) set by path into the environment's, as the program
    merges them (stacks/config.py)."""
    return _overlaid(environment, stack, [environment.path.parent / f"Pulumi.{stack}.yaml"])


def stack_files(directory: Path, environment: str) -> list[Path]:
    """Every stack's own file of an environment, `Pulumi.<env>.<slice>.yaml`, in name order."""
    return sorted(directory.glob(f"Pulumi.{environment}.*.yaml"))


def with_stack_files(environment: StackConfig) -> StackConfig:
    """The environment as its stacks see it together: every `Pulumi.<env>.<slice>.yaml` beside its file set into
    it (the waves and stacks are read from this; each stack is then evaluated with its own file only)."""
    return _overlaid(environment, environment.stack, stack_files(environment.path.parent, environment.stack))


def _overlaid(environment: StackConfig, stack: str, paths: list[Path]) -> StackConfig:
    config, secret_keys = environment.config, set(environment.secret_keys)
    for path in paths:
        if path.name == f"Pulumi.{environment.stack}.yaml" or not path.exists():  # the environment itself
            continue
        document = read_yaml(path) or {}
        own = stack_config_from_mapping(environment.project, stack, document.get("config") or {}, path)
        config = overlay_config(config, own.config)
        secret_keys |= set(own.secret_keys)
    return StackConfig(environment.project, stack, config, sorted(secret_keys), environment.path)


def input_error_lines(exc: PlanInputError | ConfigError, stack: str) -> list[str]:
    """`error: Pulumi.<stack>.yaml: <problem>` lines, as every tool reading a stack file prints them; a problem in
    a catalog file (`models/<file>.yaml: ...`) names that file instead."""
    lines = exc.lines if isinstance(exc, PlanInputError) else [str(i) for i in exc.issues]
    where = f"Pulumi.{stack}.yaml"
    own_file = ("Pulumi.", f"{CATALOG_DIR}/")
    return [f"error: {line}" if line.startswith(own_file) else f"error: {where}: {line}" for line in lines]
