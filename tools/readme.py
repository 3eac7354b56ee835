"""Generated sections of README.md, so reference material is never written twice.

`python -m tools.readme` rewrites every generated block in place; a test fails when
README.md is stale. A block lives between `<!-- <name>:start -->` and `<!-- <name>:end -->`.
"""

from __future__ import annotations

import json
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

README = Path(__file__).resolve().parents[1] / "README.md"


def replace_block(text: str, name: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.S)
    if not pattern.search(text):
        raise ValueError(f"README has no <!-- {name}:start --> ... <!-- {name}:end --> block")
    return pattern.sub(lambda m: m.group(1) + body.rstrip("\n") + "\n" + m.group(2), text)


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(_type_name(a) for a in args if a is not type(None)) + (
            " (optional)" if type(None) in args else ""
        )
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"map of {_type_name(args[1])}"
    if origin is typing.Annotated:
        return _type_name(args[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "object"
    return getattr(annotation, "__name__", str(annotation)).replace("IPv4Network", "CIDR")


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _rows(model: type[BaseModel], prefix: str) -> Iterator[str]:
    for name, field in model.model_fields.items():
        key = f"{prefix}{field.alias or name}"
        if field.is_required():
            default = "**required**"
        elif field.default_factory is not None:
            default = ""
        else:
            default = "" if field.default in (None, PydanticUndefined) else f"`{json.dumps(field.default)}`"
        description = (field.description or "").replace("|", "\\|")
        yield f"| `{key}` | {_type_name(field.annotation)} | {default} | {description} |"
        inner = _inner_model(field.annotation)
        if inner is not None:
            is_list = typing.get_origin(field.annotation) is list
            yield from _rows(inner, f"{key}{'[]' if is_list else ''}.")


def config_reference() -> str:
    from components.spec.environment import EnvironmentSpec

    lines = [
        "Keys of the `inference-platform:` namespace in `Pulumi.<env>.yaml` (generated from the",
        "pydantic models in `components/spec/`; `make docs` refreshes it).",
        "",
        "| key | type | default | description |",
        "|---|---|---|---|",
        *_rows(EnvironmentSpec, ""),
    ]
    return "\n".join(lines) + "\n"


def policy_rules() -> str:
    from policies.docs import render

    return render()


# Generated blocks of README.md; capabilities with reference material add theirs here.
BLOCKS: dict[str, Callable[[], str]] = {"config-reference": config_reference, "policy-rules": policy_rules}


def render(text: str) -> str:
    for name, make in BLOCKS.items():
        text = replace_block(text, name, make())
    return text


def main() -> int:
    README.write_text(render(README.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
