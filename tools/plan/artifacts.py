"""Write a Plan to build/<env>/ in the layout of DESIGN.md §3.

Every artifact is byte-identical across runs of the same commit (resources in a stable dependency order, keys
sorted), file
names are ones CI artifact stores accept, and the writer only ever removes files it wrote itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from tools.plan.cost_section import cost_document
from tools.plan.model import Plan, is_patch
from tools.plan.phases import phase
from tools.plan.report import render_markdown

# Written into every plan directory: what this writer wrote there, so a later plan removes exactly that.
OWNED_FILES = ".plan-files"
# Characters `actions/upload-artifact` and common filesystems refuse in a path component (RBAC names have `:`).
_UNSAFE = re.compile(r'[":<>|*?\\\r\n]')
# libyaml's emitter writes, ~5x faster, the text PyYAML's own emitter writes, except: it folds long double-quoted
# strings (those holding a character outside printable ASCII) at other points, writes an empty key plainly, measures a
# key in bytes, and keeps a key of 123-128 characters simple where PyYAML writes it as a complex key (`? `). A
# document holding any of these keeps the Python emitter, so plans stay byte-identical (tests/test_plan_yaml.py).
_FAST_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_NOT_PRINTABLE_ASCII = re.compile(r"[^\x20-\x7e]")
# PyYAML writes a key simple when it and its tag (`!!str`, even unwritten) are under 128 characters (emitter.py
# check_simple_key); libyaml does not count an implicit tag.
_SIMPLE_KEY_LIMIT = 128 - len("!!str")


class OutputDirError(Exception):
    """The output directory holds files no plan wrote: refusing to delete them."""


def safe_file_name(name: str) -> str:
    return _UNSAFE.sub("_", name)


def plan_document(plan: Plan, *, with_cost: bool = True) -> dict[str, Any]:
    """`with_cost`: False for one stack of several (the cost is the environment's, in its own plan.json)."""
    return {
        "environment": plan.environment,
        "project": plan.project,
        **({"stacks": list(plan.stacks)} if plan.stacks else {}),
        "resources": [r.to_json() for r in plan.resources],  # dependency order, the same every run
        "outputs": plan.outputs,
        "cost": None if plan.spec is None or not with_cost else cost_document(plan),  # no spec: a component
    }


def _add(files: dict[str, Any], path: str, content: Any) -> None:
    if path in files:
        raise ValueError(f"two objects would be written to {path}")
    files[path] = content


def manifest_files(plan: Plan) -> dict[str, dict[str, Any]]:
    """Relative path -> manifest, for every Kubernetes object the program declares."""
    files: dict[str, dict[str, Any]] = {}
    for r in plan.kubernetes_objects():
        meta = r.inputs.get("metadata") or {}
        namespace = meta.get("namespace") or "_cluster"
        # A patch (server-side apply of some fields) is not the object: it sits beside it, not over it.
        suffix = ".patch" if is_patch(r) else ""
        name = safe_file_name(f"{r.inputs['kind']}-{meta.get('name', r.name)}") + suffix
        _add(files, f"{plan.cluster_of(r) or '_unbound'}/{namespace}/{name}.yaml", r.inputs)
    return files


def helm_files(plan: Plan) -> dict[str, dict[str, Any]]:
    files: dict[str, dict[str, Any]] = {}
    for r in plan.helm_releases():
        release = safe_file_name(r.inputs.get("name", r.name))
        _add(
            files,
            f"{plan.cluster_of(r) or '_unbound'}/{release}.yaml",
            {
                "chart": r.inputs.get("chart"),
                "repository": (r.inputs.get("repositoryOpts") or {}).get("repo"),
                "version": r.inputs.get("version"),
                "namespace": r.inputs.get("namespace"),
                "values": r.inputs.get("values") or {},
            },
        )
    return files


def _laid_out_alike(value: Any) -> bool:
    """Whether both emitters lay `value` out alike: no string outside printable ASCII, each key a string of 1-122."""
    if isinstance(value, str):
        return _NOT_PRINTABLE_ASCII.search(value) is None
    if isinstance(value, dict):
        return all(_simple_key(key) and _laid_out_alike(v) for key, v in value.items())
    if isinstance(value, list):
        return all(_laid_out_alike(v) for v in value)
    return True


def _simple_key(key: Any) -> bool:
    return isinstance(key, str) and 0 < len(key) < _SIMPLE_KEY_LIMIT and _laid_out_alike(key)


def yaml_text(document: dict[str, Any]) -> str:
    """`yaml.safe_dump(document, sort_keys=True)`, byte for byte, with libyaml's emitter where it writes the same."""
    dumper = _FAST_DUMPER if _laid_out_alike(document) else yaml.SafeDumper
    return yaml.dump(document, Dumper=dumper, sort_keys=True)


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def plan_artifacts(plan: Plan) -> dict[str, str]:
    """Relative path -> text of every file a plan writes."""
    texts = {
        "plan.json": _json(plan_document(plan)),
        "policy.json": _json(sorted(plan.policy, key=lambda v: json.dumps(v, sort_keys=True))),
        # `pulumi preview --policy-pack build/policy-pack --policy-pack-config <this>` runs with the same settings.
        "policy-config.json": _json(plan.policy_config),
        "plan.md": render_markdown(plan),
    }
    for sub, files in (("manifests", manifest_files(plan)), ("helm", helm_files(plan))):
        for rel, content in files.items():
            texts[f"{sub}/{rel}"] = yaml_text(content)
    # Several stacks: the objects above are all of them, by cluster; each stack's own plan beside them.
    for name, part in plan.stacks.items():
        texts[f"stacks/{name}/plan.json"] = _json(plan_document(part, with_cost=False))
    return texts


def write_plan(plan: Plan, out_dir: Path, *, extra: dict[str, str] | None = None) -> None:
    """`extra`: further files of this run (the changes against a base plan, which also head plan.md)."""
    texts = {**plan_artifacts(plan), **(extra or {})}
    if "changes.md" in texts:  # a plan compared with its base: the pull request reads the change first
        texts["plan.md"] = texts["changes.md"] + "\n" + texts["plan.md"]
    with phase("write"):
        _write(texts, out_dir)


def owned_files(out_dir: Path) -> list[Path]:
    """The files an earlier plan wrote into out_dir; refuses a non-empty directory no plan wrote."""
    if not out_dir.exists():
        return []
    if not out_dir.is_dir():
        raise OutputDirError(f"--out {out_dir}: not a directory")
    listing = out_dir / OWNED_FILES
    if not listing.is_file():
        if any(out_dir.iterdir()):
            raise OutputDirError(
                f"--out {out_dir}: the directory has files no plan wrote; choose an empty or new directory"
            )
        return []
    return [out_dir / rel for rel in listing.read_text().splitlines() if rel and ".." not in Path(rel).parts]


def withdraw_plan(out_dir: Path) -> bool:
    """Remove an earlier plan's files after a failed one, so nothing reads it as the plan of today's config;
    files no plan wrote are left alone. True when there was a plan to remove."""
    try:
        stale = owned_files(out_dir)
    except OutputDirError:
        return False
    _remove(stale, out_dir)
    (out_dir / OWNED_FILES).unlink(missing_ok=True)
    return bool(stale)


def _remove(stale: list[Path], out_dir: Path) -> None:
    for path in stale:
        path.unlink(missing_ok=True)
    for directory in sorted({p.parent for p in stale}, key=lambda p: len(p.parts), reverse=True):
        while directory != out_dir and directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
            directory = directory.parent


def _write(texts: dict[str, str], out_dir: Path) -> None:
    _remove(owned_files(out_dir), out_dir)  # no stale manifests from an earlier plan, and nothing else touched
    out_dir.mkdir(parents=True, exist_ok=True)
    for rel, text in sorted(texts.items()):
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (out_dir / OWNED_FILES).write_text("".join(f"{rel}\n" for rel in sorted(texts)))
