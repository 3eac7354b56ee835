"""Write a Plan to build/<env>/ in the layout of DESIGN.md §3."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from tools.plan.model import Plan
from tools.plan.phases import phase
from tools.plan.report import render_markdown


def plan_document(plan: Plan) -> dict[str, Any]:
    return {
        "environment": plan.environment,
        "project": plan.project,
        "resources": [r.to_json() for r in plan.resources],
        "outputs": plan.outputs,
    }


def manifest_files(plan: Plan) -> dict[str, dict[str, Any]]:
    """Relative path -> manifest, for every Kubernetes object the program declares."""
    files: dict[str, dict[str, Any]] = {}
    for r in plan.kubernetes_objects():
        meta = r.inputs.get("metadata") or {}
        namespace = meta.get("namespace") or "_cluster"
        path = f"{plan.cluster_of(r) or '_unbound'}/{namespace}/{r.inputs['kind']}-{meta.get('name', r.name)}.yaml"
        files[path] = r.inputs
    return files


def helm_files(plan: Plan) -> dict[str, dict[str, Any]]:
    files: dict[str, dict[str, Any]] = {}
    for r in plan.helm_releases():
        release = r.inputs.get("name", r.name)
        files[f"{plan.cluster_of(r) or '_unbound'}/{release}.yaml"] = {
            "chart": r.inputs.get("chart"),
            "repository": (r.inputs.get("repositoryOpts") or {}).get("repo"),
            "version": r.inputs.get("version"),
            "namespace": r.inputs.get("namespace"),
            "values": r.inputs.get("values") or {},
        }
    return files


def write_plan(plan: Plan, out_dir: Path) -> None:
    with phase("write"):
        _write(plan, out_dir)


def _write(plan: Plan, out_dir: Path) -> None:
    if out_dir.exists():
        shutil.rmtree(out_dir)  # no stale manifests from an earlier plan
    out_dir.mkdir(parents=True)
    (out_dir / "plan.json").write_text(json.dumps(plan_document(plan), indent=2, sort_keys=False) + "\n")
    for sub, files in (("manifests", manifest_files(plan)), ("helm", helm_files(plan))):
        (out_dir / sub).mkdir()
        for rel, content in files.items():
            path = out_dir / sub / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(yaml.safe_dump(content, sort_keys=False))
    (out_dir / "policy.json").write_text(json.dumps(plan.policy, indent=2) + "\n")
    # `pulumi preview --policy-pack policies --policy-pack-config <this>` runs with the same settings.
    (out_dir / "policy-config.json").write_text(json.dumps(plan.policy_config, indent=2) + "\n")
    (out_dir / "plan.md").write_text(render_markdown(plan))
