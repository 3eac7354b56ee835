"""What changes between the pinned facts of a component and those of a new release: flags, metric names, CRD
fields (by schema path), chart values (by key path), and which of the removed ones the platform renders."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tools.vendor_upstream import strip_schema

PROJECT_DIR = Path(__file__).resolve().parents[2]
# What the platform renders and checks: a flag or metric named here is used.
RENDER_ROOTS = ("components", "stacks", "policies")


@dataclass
class Report:
    """Lines of one file's diff; `breaking`: what the platform uses that the new release removes or refuses."""

    title: str
    lines: list[str] = field(default_factory=list)
    breaking: list[str] = field(default_factory=list)

    def section(self, heading: str, items: Iterable[str]) -> None:
        items = sorted(items)
        if items:
            self.lines.append(f"  {heading} ({len(items)}):")
            self.lines.extend(f"    {item}" for item in items)


@cache
def _sources() -> tuple[tuple[str, tuple[str, ...]], ...]:
    files = []
    for root in RENDER_ROOTS:
        for path in sorted((PROJECT_DIR / root).rglob("*.py")):
            files.append((path.relative_to(PROJECT_DIR).as_posix(), tuple(path.read_text().splitlines())))
    return tuple(files)


def where(pattern: str, files: tuple[str, ...] = ()) -> list[str]:
    """file:line of each line of the platform's code (comments aside) matching `pattern` (only in `files` when
    given)."""
    regex = re.compile(pattern)
    return [
        f"{path}:{number}"
        for path, lines in _sources()
        if not files or path in files
        for number, line in enumerate(lines, 1)
        if regex.search(line) and not line.lstrip().startswith("#")  # a comment renders nothing
    ]


def flag_uses(name: str, key_files: tuple[str, ...]) -> list[str]:
    """Where the platform renders `--name` or offers `name` as an engine-args key."""
    found = where(rf"[\"'{{ ]--{re.escape(name)}(?![\w-])")
    if key_files:
        found += where(rf"^\s*\"{re.escape(name)}\":\s", key_files)
    return sorted(set(found))


# --- flag lists ---------------------------------------------------------------------------------------------


def _argparse_flags(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["name"]: a for a in document["args"] if a.get("option_strings")}


def _go_flags(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["name"]: {**f, "dest": f["name"], "option_strings": [f"--{f['name']}"]} for f in document["flags"]}


def _options(flags: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Every long option string -> the destination it sets."""
    return {o: f["dest"] for f in flags.values() for o in f["option_strings"] if o.startswith("--")}


def flags(old: dict[str, Any], new: dict[str, Any], key_files: tuple[str, ...], report: Report) -> None:
    """argparse dumps (`args`) or Go flag lists (`flags`), option string by option string: added, removed, renamed
    (another option string now sets the same destination), changed kind or choices, newly deprecated or refused.
    An option string the platform renders that the new release no longer accepts (or refuses) is breaking."""
    parse = _argparse_flags if "args" in old else _go_flags
    before, after = parse(old), parse(new)
    old_options, new_options = _options(before), _options(after)
    old_dests, new_dests = set(old_options.values()), set(new_options.values())
    gone = sorted(set(old_options) - set(new_options))
    renamed = {
        option: sorted(o for o, d in new_options.items() if d == old_options[option] and o not in old_options)
        for option in gone
        if old_options[option] in new_dests
    }
    report.section("flags added", (o for o, d in new_options.items() if d not in old_dests))
    report.section("flags removed", (o for o in gone if o not in renamed))
    report.section(
        "flags renamed",
        (f"{o} -> {', '.join(n) or '(another option of ' + old_options[o] + ')'}" for o, n in renamed.items()),
    )
    changed, defaults, choices_gone = [], [], {}
    for name in sorted(set(before) & set(after)):
        a, b = before[name], after[name]
        for key in ("action", "type", "nargs"):
            if key in a and key in b and a[key] != b[key]:
                changed.append(f"--{name}: {key} {a.get(key)!r} -> {b.get(key)!r}")
        # A field one list does not record (a hand-made list's choices, a default the generator cannot resolve) is
        # not compared.
        if "choices" in a and "choices" in b and a["choices"] != b["choices"] and (a["choices"] or b["choices"]):
            dropped = sorted(set(map(str, a.get("choices") or [])) - set(map(str, b.get("choices") or [])))
            added = sorted(set(map(str, b.get("choices") or [])) - set(map(str, a.get("choices") or [])))
            changed.append(f"--{name}: choices -{dropped} +{added}")
            if dropped and b.get("choices"):
                choices_gone[name] = dropped
        if "default" in a and "default" in b and a["default"] != b["default"]:
            defaults.append(f"--{name}: {a.get('default')!r} -> {b.get('default')!r}")
        for key, what in (("deprecated", "now deprecated"), ("rejected_if_set", "now refused when set")):
            if b.get(key) and not a.get(key):
                changed.append(f"--{name}: {what}" + (f" ({b[key]})" if isinstance(b[key], str) else ""))
                if key == "rejected_if_set" and (uses := flag_uses(name, key_files)):
                    report.breaking.append(f"--{name} is refused when set by the new release; rendered at {_at(uses)}")
    report.section("flags changed", changed)
    report.section("defaults changed", defaults)
    for option in gone:
        if uses := flag_uses(option.removeprefix("--"), key_files):
            now = f"is now {', '.join(renamed[option])}" if renamed.get(option) else "is removed by the new release"
            report.breaking.append(f"{option} {now}; rendered at {_at(uses)}")
    for name, dropped in sorted(choices_gone.items()):
        uses = flag_uses(name, key_files)
        files = tuple(sorted({u.rsplit(":", 1)[0] for u in uses}))
        for choice in dropped if files else []:
            if at := where(rf"[\"']{re.escape(choice)}[\"']", files):
                report.breaking.append(f"--{name} no longer takes {choice!r}; rendered at {_at(at)}")


def _at(places: list[str]) -> str:
    return ", ".join(places)


# --- metric names -------------------------------------------------------------------------------------------


def metrics(old: dict[str, Any], new: dict[str, Any], report: Report) -> None:
    before = {m["name"]: m for m in old["metrics"]}
    after = {m["name"]: m for m in new["metrics"]}
    report.section("metrics added", set(after) - set(before))
    report.section("metrics removed", set(before) - set(after))
    report.section(
        "metric types changed",
        (
            f"{n}: {before[n]['type']} -> {after[n]['type']}"
            for n in set(before) & set(after)
            if before[n]["type"] != after[n]["type"]
        ),
    )
    deprecated = {n: after[n]["deprecated_for"] for n in after if after[n].get("deprecated_for")}
    report.section(
        "metrics now deprecated",
        (f"{n} (use {s})" for n, s in deprecated.items() if not before.get(n, {}).get("deprecated_for")),
    )
    for name in sorted(set(before) - set(after)):
        if uses := _reads(name):
            report.breaking.append(f"metric {name} is removed by the new release; read at {_at(uses)}")
    report.section(
        "deprecated metrics the platform reads (not breaking yet)",
        (f"{n} -> {deprecated[n]}: read at {_at(uses)}" for n in sorted(deprecated) if (uses := _reads(n))),
    )


def _reads(name: str) -> list[str]:
    """Where the platform's code names metric `name` (or a series of it: _total, _bucket, _sum, _count)."""
    return where(rf"[\"'{{]{re.escape(name)}(?:_total|_bucket|_sum|_count)?(?![\w:])")


# --- CRDs and chart values ------------------------------------------------------------------------------------


def schema_paths(node: Any, prefix: str = "") -> dict[str, str]:
    """schema path (spec.template.containers[].image) -> type of every node of an OpenAPI v3 schema."""
    out: dict[str, str] = {}
    if not isinstance(node, dict):
        return out
    if prefix:
        out[prefix] = str(node.get("type", "")) or ("int-or-string" if node.get("x-kubernetes-int-or-string") else "")
    for name, sub in (node.get("properties") or {}).items():
        out.update(schema_paths(sub, f"{prefix}.{name}" if prefix else name))
    if isinstance(node.get("items"), dict):
        out.update(schema_paths(node["items"], f"{prefix}[]"))
    if isinstance(node.get("additionalProperties"), dict):
        out.update(schema_paths(node["additionalProperties"], f"{prefix}.*"))
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in node.get(key) or []:
            out.update({k: v for k, v in schema_paths(sub, prefix).items() if k != prefix})
    return out


def crd_versions(text: str) -> dict[tuple[str, str], dict[str, dict[str, str]]]:
    """(group, kind) -> served version -> schema paths (without status, which the server writes)."""
    out: dict[tuple[str, str], dict[str, dict[str, str]]] = {}
    for doc in yaml.safe_load_all(text):
        if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
            continue
        key = (doc["spec"]["group"], doc["spec"]["names"]["kind"])
        for version in doc["spec"]["versions"]:
            schema = strip_schema((version.get("schema") or {}).get("openAPIV3Schema") or {})
            (schema.get("properties") or {}).pop("status", None)
            out.setdefault(key, {})[version["name"]] = schema_paths(schema)
    return out


def crds(old_text: str, new_text: str, select: list[str], report: Report) -> None:
    """The selected kinds (group/version/Kind) of the pinned file against the new one: fields added and removed
    by schema path; a kind found only under another group is compared and its move said."""
    before, after = crd_versions(old_text), crd_versions(new_text)
    for entry in select:
        group, version, kind = entry.rsplit("/", 2)
        old_paths = before.get((group, kind), {}).get(version, {})
        target = (group, kind)
        if target not in after:
            moved = [key for key in after if key[1] == kind]
            if not moved:
                report.breaking.append(f"{entry}: the new release has no {kind} CRD in this file")
                continue
            target = moved[0]
            report.breaking.append(f"{entry}: the new release serves {kind} in group {target[0]}, not {group}")
        if version not in after[target]:
            report.breaking.append(
                f"{entry}: the new release does not serve {version} (serves {sorted(after[target])})"
            )
            continue
        new_paths = after[target][version]
        if new_paths == old_paths:
            report.lines.append(f"  {kind} {version}: the same {len(new_paths)} fields")
        report.section(f"{kind} {version} fields added", set(new_paths) - set(old_paths))
        report.section(f"{kind} {version} fields removed", set(old_paths) - set(new_paths))
        report.section(
            f"{kind} {version} field types changed",
            (
                f"{p}: {old_paths[p]} -> {new_paths[p]}"
                for p in set(old_paths) & set(new_paths)
                if old_paths[p] != new_paths[p]
            ),
        )


def value_paths(node: Any, prefix: str = "") -> set[str]:
    """Key paths of a values document (a list is one value)."""
    if not isinstance(node, dict) or not node:
        return {prefix} if prefix else set()
    out: set[str] = set()
    for key, sub in node.items():
        out |= value_paths(sub, f"{prefix}.{key}" if prefix else str(key))
    return out


def values(old_text: str, new_text: str, report: Report) -> None:
    before, after = value_paths(yaml.safe_load(old_text)), value_paths(yaml.safe_load(new_text))
    report.section("chart values added", after - before)
    report.section("chart values removed", before - after)


def chart(old_text: str, new_text: str, report: Report) -> None:
    before, after = yaml.safe_load(old_text) or {}, yaml.safe_load(new_text) or {}
    for key in ("version", "appVersion", "kubeVersion"):
        if before.get(key) != after.get(key):
            report.lines.append(f"  {key}: {before.get(key)} -> {after.get(key)}")
    deps = lambda c: {d["name"]: d.get("version") for d in c.get("dependencies") or []}  # noqa: E731
    old_deps, new_deps = deps(before), deps(after)
    report.section(
        "dependencies changed",
        (
            f"{n}: {old_deps.get(n)} -> {new_deps.get(n)}"
            for n in old_deps.keys() | new_deps.keys()
            if old_deps.get(n) != new_deps.get(n)
        ),
    )


def listed(old: dict[str, list[str]], new: dict[str, list[str]], renders: tuple[str, ...], report: Report) -> None:
    """Lists derived from both releases (config fields, plugin types): what each adds and removes; a removed name
    (a path's last key) that the files rendering it quote is breaking."""
    for key in sorted(old.keys() | new.keys()):
        before, after = set(old.get(key, [])), set(new.get(key, []))
        what = key.replace("_", " ")
        report.section(f"{what} added", after - before)
        report.section(f"{what} removed", before - after)
        for item in sorted(before - after):
            leaf = item.rsplit(".", 1)[-1].removesuffix("[]")
            if renders and (at := where(rf"[\"']{re.escape(leaf)}[\"']", renders)):
                report.breaking.append(
                    f"{what.rstrip('s')} {item} is removed by the new release; rendered at {_at(at)}"
                )


def api_versions(kind: str, accepted: list[str], renders: tuple[str, ...], report: Report) -> None:
    """Each apiVersion the rendering files give `kind` (`"apiVersion": "g/v", "kind": "Kind"`) must be one the new
    release decodes it as: else breaking, with where."""
    rendered = re.compile(
        rf"[\"']apiVersion[\"']\s*:\s*[\"'](?P<version>[^\"']+)[\"']\s*,\s*[\"']kind[\"']\s*:\s*[\"']{re.escape(kind)}[\"']"
    )
    for path, source in _sources():
        if path not in renders:
            continue
        text = "\n".join(source)
        for match in rendered.finditer(text):
            if match["version"] not in accepted:
                line = text.count("\n", 0, match.start()) + 1
                report.breaking.append(
                    f"{kind} apiVersion {match['version']} is not one the new release decodes ({', '.join(accepted)}); "
                    f"rendered at {path}:{line}"
                )


def lines(old_text: str, new_text: str, report: Report) -> None:
    before, after = set(old_text.splitlines()), set(new_text.splitlines())
    report.section("lines added", after - before)
    report.section("lines removed", before - after)
