"""Read Pulumi.yaml and Pulumi.<env>.yaml as the Pulumi CLI does: one YAML document, no repeated keys.

The offline plan reads stack files with it, and so does the program of a per-region stack, which takes the
environment from `Pulumi.<env>.yaml` (components/domain/stack_split.py).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components.config.base import Issue

# What a `secure:` value reads as when it cannot be decrypted (the offline plan's redaction marker too).
SECRET_MARKER = "[secret]"


class PlanInputError(Exception):
    """A stack file that cannot be read; one line per problem, exit code 2."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class StackConfig:
    project: str
    stack: str
    config: dict[str, str]  # "namespace:key" -> value as the engine passes it (JSON text for non-strings)
    secret_keys: list[str]
    path: Path


# Top-level keys of a stack settings file the Pulumi CLI reads (pulumi.com/docs/iac/concepts/projects/stack-settings-file).
STACK_FILE_KEYS = ("config", "encryptedkey", "encryptionsalt", "environment", "secretsprovider")


class _DuplicateKeyLoader(yaml.SafeLoader):
    """Refuses a mapping that repeats a key: PyYAML would keep the last value, the Pulumi CLI rejects the file."""

    duplicates: list[str]

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if key in seen:
                self.duplicates.append(f"{line}: duplicate key {key!r} (first at line {seen[key]}); keep one of them")
            else:
                seen.setdefault(key, line)
        return super().construct_mapping(node, deep)


def read_yaml(path: Path) -> Any:
    loader = _DuplicateKeyLoader(path.read_text())
    loader.duplicates = []
    try:
        document = loader.get_single_data()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path.name}:{mark.line + 1}:{mark.column + 1}" if mark else path.name
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise PlanInputError(
            [f"{where}: YAML syntax error: {problem}; fix the indentation, quoting or ':' on that line"]
        ) from None
    finally:
        loader.dispose()
    if loader.duplicates:
        raise PlanInputError([f"{path.name}:{line}" for line in loader.duplicates])
    return document


def read_stack_file(project_dir: Path, stack: str) -> dict[str, Any]:
    """The `config:` mapping of `Pulumi.<stack>.yaml`, its top-level keys checked."""
    stack_file = project_dir / f"Pulumi.{stack}.yaml"
    if not stack_file.exists():
        names = (p.name[len("Pulumi.") : -len(".yaml")] for p in project_dir.glob("Pulumi.*.yaml"))
        known = sorted(n for n in names if "." not in n)  # not the per-stack files of an environment
        raise PlanInputError(
            [f"{stack_file.name} not found; create it (start from Pulumi.dev.yaml) or use ENV={'|'.join(known)}"]
        )
    document = read_yaml(stack_file)
    if document is None:
        document = {}  # an empty file: reported as having no config below
    if not isinstance(document, dict) or not isinstance(document.get("config") or {}, dict):
        raise PlanInputError([f"{stack_file.name}: expected a mapping with a `config:` mapping at the top level"])
    unknown = [
        f"{stack_file.name}: {key}: not a stack file key; {did_you_mean(str(key), STACK_FILE_KEYS)}"
        f"the file's keys are {', '.join(STACK_FILE_KEYS)}"
        for key in document
        if key not in STACK_FILE_KEYS
    ]
    if unknown:
        raise PlanInputError(unknown)
    if not document.get("config"):
        raise PlanInputError(
            [f"{stack_file.name}: no `config:` entries; describe the environment there (start from Pulumi.dev.yaml)"]
        )
    config: dict[str, Any] = document["config"]
    return config


def did_you_mean(word: str, options: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1)
    return f"did you mean {close[0]!r}? " if close else ""


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
    """`secure:` ciphertext cannot be decrypted here; the program sees a marker instead."""
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return SECRET_MARKER, True
        pairs = {k: _unwrap_secure(v) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, any(s for _, s in pairs.values())
    if isinstance(value, list):
        items = [_unwrap_secure(v) for v in value]
        return [v for v, _ in items], any(s for _, s in items)
    return value, False


def merge_by_path(base: Any, overlay: Any) -> Any:
    """`overlay` set into `base` key by key and list index by list index, as `pulumi config set --path` sets one
    leaf of a structured value: `gateway.externalProviders[0].apiKey` on a stack keeps the environment's
    `gateway.domain` and the provider's `name`. Anything else (a scalar, a list against a mapping) is replaced."""
    if isinstance(base, dict) and isinstance(overlay, dict):
        merged = dict(base)
        for key, value in overlay.items():
            merged[key] = merge_by_path(base[key], value) if key in base else value
        return merged
    if isinstance(base, list) and isinstance(overlay, list):
        merged_list = list(base)
        for i, value in enumerate(overlay):
            if i < len(merged_list):
                # `--path 'regions[1]…'` on a stack without the key pads the indexes before it with nulls
                # (pulumi/pulumi sdk/go/common/resource/config/object.go newContainer): they keep the base's item.
                merged_list[i] = merged_list[i] if value is None else merge_by_path(merged_list[i], value)
            else:
                merged_list.append(value)
        return merged_list
    return overlay


def overlay_config(environment: dict[str, str], stack: dict[str, str]) -> dict[str, str]:
    """A stack's own config over its environment's, both as the engine passes them (JSON text for structured
    values), merged by path (merge_by_path)."""
    merged = dict(environment)
    for key, value in stack.items():
        if key in merged:
            base, over = _json_or_text(merged[key]), _json_or_text(value)
            if isinstance(base, dict | list) and isinstance(over, dict | list):
                merged[key] = json.dumps(merge_by_path(base, over))
                continue
        merged[key] = value
    return merged


def _json_or_text(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


def shared_secret_issues(env_name: str, secret_keys: list[str], stack: str) -> list[Issue]:
    """A `secure:` value in `Pulumi.<env>.yaml` when the environment is several stacks: only a stack named `<env>`
    could decrypt it, and none is; each such key, refused the same way by `pulumi up` of any of the environment's
    stacks and by `make plan`."""
    return [
        Issue(
            key,
            f"Pulumi.{env_name}.yaml holds a `secure:` value, which only stack {env_name!r} could decrypt; set it on "
            f"the stack that uses it: pulumi config set --secret --path -s {stack} '{key}' <value>",
        )
        for key in secret_keys
    ]
