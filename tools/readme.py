"""Generated sections of the documentation (README.md and docs/*.md), so reference material is never written twice.

`python -m tools.readme` rewrites every generated block in place, in whichever document holds it; a test fails
when one is stale. A block lives between `<!-- <name>:start -->` and `<!-- <name>:end -->`.
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


def documents() -> list[Path]:
    """The README and the docs/ tree it links to."""
    return [README, *sorted((README.parent / "docs").glob("*.md"))]


def documentation() -> str:
    """Every document's text, for checks of what the documentation says wherever it says it."""
    return "\n".join(path.read_text() for path in documents())


def replace_block(text: str, name: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.S)
    if not pattern.search(text):
        raise ValueError(f"no document has a <!-- {name}:start --> ... <!-- {name}:end --> block")
    return pattern.sub(lambda m: m.group(1) + body.rstrip("\n") + "\n" + m.group(2), text)


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        names = dict.fromkeys(_type_name(a) for a in args if a is not type(None))  # a union of models: "object"
        return " \\| ".join(names) + (" (optional)" if type(None) in args else "")
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


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models inside list[X] / X | None / dict[str, X]: one, or each of a union's (a region entry per cloud)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found += [model for model in _models_in(arg) if model not in found]
    return found


Row = tuple[str, str, str, str, str]  # key, the cloud it is a key of ("": every one), type, default, description


def _rows(model: type[BaseModel], prefix: str) -> Iterator[Row]:
    for name, field in model.model_fields.items():
        key = f"{prefix}{field.alias or name}"
        if field.is_required():
            default = "**required**"
        elif field.default_factory is not None:
            default = ""
        else:
            default = "" if field.default in (None, PydanticUndefined) else f"`{json.dumps(field.default)}`"
        description = (field.description or "").replace("|", "\\|")
        yield key, "", _type_name(field.annotation), default, description
        models = _models_in(field.annotation)
        if models:
            origin = typing.get_origin(field.annotation)
            entry = "[]" if origin is list else ".<name>" if origin is dict else ""  # a map's entries by name
            yield from _merged(models, f"{key}{entry}.") if len(models) > 1 else _rows(models[0], f"{key}{entry}.")


def _merged(models: list[type[BaseModel]], prefix: str) -> Iterator[Row]:
    """The keys of a union's models (a region entry's, by `cloud`): a key every model takes once, with their types;
    a key some take, marked with theirs (`(gcp)`), where it falls among their keys."""
    rows: dict[str, dict[str, Row]] = {}  # key -> tag -> row, in the order keys first appear
    order: list[str] = []
    for model in models:
        tag = _tag(model)
        after = -1
        for row in _rows(model, prefix):
            if row[0] not in rows:
                rows[row[0]] = {}
                order.insert(after + 1, row[0])
            rows[row[0]][tag] = (row[0], tag, *row[2:])
            after = order.index(row[0])
    tags = [_tag(model) for model in models]
    for key in order:
        variants = rows[key]
        first = next(iter(variants.values()))
        if len(variants) == len(tags) and all(row[3:] == first[3:] for row in variants.values()):
            kinds = list(dict.fromkeys(row[2] for row in variants.values()))
            yield key, "", " \\| ".join(kinds), first[3], first[4]
        else:
            yield from variants.values()


def _tag(model: type[BaseModel]) -> str:
    """The value of `cloud` a per-cloud model is chosen by."""
    return str(typing.get_args(model.model_fields["cloud"].annotation)[0])


def config_reference() -> str:
    from components.config.environment import EnvironmentSpec

    lines = [
        "Keys of the `inference-platform:` namespace in `Pulumi.<env>.yaml` (generated from the",
        "pydantic models in `components/config/`; `make docs` refreshes it). A region entry's `cloud` decides its",
        "keys: one marked (aws) or (gcp) is a key of that cloud's entries only, anywhere else an unknown key.",
        "",
        "| key | type | default | description |",
        "|---|---|---|---|",
        *(
            f"| `{key}`{f' ({cloud})' if cloud else ''} | {kind} | {default} | {description} |"
            for key, cloud, kind, default, description in _rows(EnvironmentSpec, "")
        ),
    ]
    return "\n".join(lines) + "\n"


def policy_rules() -> str:
    from policies.docs import render

    return render()


def upstream_facts() -> str:
    from components.catalog.upstream import FACTS

    lines = [
        "<!-- Generated by `make docs` from components/catalog/upstream.py; do not edit by hand. -->",
        "| fact | what the program relies on | source |",
        "|---|---|---|",
    ]
    for fact in FACTS.values():
        lines.append(f"| `{fact.name}` | {fact.statement} | {fact.source} |".replace("\n", " "))
    return "\n".join(lines) + "\n"


def bringup_facts() -> str:
    from components.catalog.bringup import FACTS

    lines = [
        "<!-- Generated by `make docs` from components/catalog/bringup.py; do not edit by hand. -->",
        "| fact | component | what must exist first | source |",
        "|---|---|---|---|",
    ]
    for fact in FACTS.values():
        lines.append(f"| `{fact.name}` | {fact.component} | {fact.statement} | {fact.source} |".replace("\n", " "))
    return "\n".join(lines) + "\n"


# Generated blocks of the documentation; capabilities with reference material add theirs here.
BLOCKS: dict[str, Callable[[], str]] = {
    "config-reference": config_reference,
    "policy-rules": policy_rules,
    "upstream-facts": upstream_facts,
    "bringup-facts": bringup_facts,
}


def render(text: str) -> str:
    """The text with every block it holds regenerated."""
    for name, make in BLOCKS.items():
        if f"<!-- {name}:start -->" in text:
            text = replace_block(text, name, make())
    return text


def main() -> int:
    held = [name for name in BLOCKS for path in documents() if f"<!-- {name}:start -->" in path.read_text()]
    missing = sorted(set(BLOCKS) - set(held))
    if missing or len(held) != len(set(held)):
        print(f"error: every block must be in exactly one document: {sorted(held)}; missing {missing}", file=sys.stderr)
        return 1
    for path in documents():
        path.write_text(render(path.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
