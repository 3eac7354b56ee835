"""Base model and shared field types for every spec."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Annotated, Literal

import pulumi
from pydantic import AfterValidator, BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")


def _check_name(value: str) -> str:
    if not _NAME.match(value):
        raise ValueError(
            f"{value!r} is not a valid name; use 1-40 lowercase letters, digits and '-', "
            "starting with a letter and not ending with '-'"
        )
    return value


Name = Annotated[str, AfterValidator(_check_name)]
"""A DNS-1123 label short enough to prefix cloud and Kubernetes resource names."""

KeyPath = tuple[str | int, ...]
"""Where a value sits in the config, in `join_path`'s parts: `("regions", 1, "gpuPools")`."""


class Spec(BaseModel):
    """camelCase keys in YAML, snake_case in Python; unknown keys are errors, values immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
    )


@dataclass(frozen=True)
class Issue:
    """One problem in the configuration: where (key path) and what to do about it."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def config_key(model: type[BaseModel], field: str) -> str:
    """The key a model's field has in the config (its camelCase alias)."""
    return model.model_fields[field].alias or field


def join_path(*parts: str | int) -> str:
    """`("regions", 1, "gpuPools", 0, "name")` -> `regions[1].gpuPools[0].name`."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part:
            out += f".{part}" if out else part
    return out


def duplicates(values: list[str], path: KeyPath, what: str) -> Iterator[Issue]:
    """Yield an Issue for every value already seen earlier in `values`."""
    seen: dict[str, int] = {}
    for i, value in enumerate(values):
        if value in seen:
            yield Issue(
                join_path(*path, i),
                f"duplicate {what} {value!r} (also at index {seen[value]}); {what}s must be unique",
            )
        else:
            seen[value] = i


def unknown_name(path: str, what: str, value: str, known: Iterable[str]) -> Issue:
    """A reference to something the environment does not define, listing what it does define."""
    choices = ", ".join(known) or f"(no {what}s defined)"
    return Issue(path, f"no {what} named {value!r}; use one of {choices}")


# Weight formats a model is served in, and the KV cache dtypes: what `precision` / `kvCacheDtype` accept, and the
# sizing maths (components/domain/sizing.py) reads.
Precision = Literal["bf16", "fp16", "fp8", "int8", "awq", "gptq"]
KvDtype = Literal["auto", "fp8"]


class ConfigError(pulumi.RunError):
    """Invalid configuration. A RunError, so the Pulumi CLI prints the lines without a traceback."""

    def __init__(self, issues: list[Issue]):
        self.issues = issues
        super().__init__("invalid configuration:\n" + "\n".join(f"  {i}" for i in issues))
