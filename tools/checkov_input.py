"""What Checkov scans of a plan: every rendered manifest, plus the Pods KServe would create (`make checkov`).

Checkov's Kubernetes checks read built-in kinds only; a model server is a custom resource whose pod KServe builds
from it (an InferenceService merged with its serving runtime, an LLMInferenceService's templates over KServe's
presets). The pack already computes those pods (policies/pods.py); each is written as a Pod carrying the
annotations of the object it comes from, so a `checkov.io/skip<n>` there reaches the pod.

    python -m tools.checkov_input build/<env> OUT_DIR
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

import yaml

from policies.check import saved_resources
from policies.model import UNKNOWN, Stack
from policies.pods import LLM_KIND, is_model_server, workloads


def kserve_pods(resources: list) -> list[tuple[str, dict]]:
    """(relative path, Pod manifest) of each pod KServe would run for the plan's model servers."""
    stack = Stack(resources)
    pods = []
    for r in stack.resources:
        if not (is_model_server(r) or (r.is_kubernetes and r.kind == LLM_KIND)):
            continue
        for w in workloads(r, stack):
            name = f"{r.k8s_name}-{r.kind.lower()}{pod_suffix(w.where)}"
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": r.namespace,
                    "labels": w.labels,
                    "annotations": {**w.annotations, **r.annotations},
                },
                "spec": w.pod | {"containers": w.containers, "initContainers": w.init_containers},
            }
            cluster = r.propagated or r.cluster or "_"
            pods.append((f"kserve-pods/{cluster}/{r.namespace}/Pod-{name}.yaml", pod))
    return pods


def pod_suffix(where: str) -> str:
    """A name part per pod of one object: none for its main pod (`spec.template`, an InferenceService's predictor),
    else where it sits (spec.prefill.template -> -prefill, spec.router.scheduler.template -> -router-scheduler,
    spec.predictor.workerSpec -> -predictor-workerspec, spec.canary[0].predictor -> -canary-0-predictor)."""
    parts = [p for p in re.split(r"[.\[\]]+", where.lower()) if p and p not in ("spec", "template")]
    return "".join(f"-{p}" for p in parts)


def _plain(value: object) -> object:
    """Unknown (secret) values as the plan writes them."""
    if value is UNKNOWN:
        return "[secret]"
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def write(plan_dir: Path, out: Path) -> int:
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(plan_dir / "manifests", out / "manifests")
    pods = kserve_pods(saved_resources(json.loads((plan_dir / "plan.json").read_text())))
    for relative, pod in pods:
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(_plain(pod), sort_keys=True))
    return len(pods)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan_dir", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if not (args.plan_dir / "plan.json").exists():
        print(f"error: {args.plan_dir}/plan.json not found; run make plan first", file=sys.stderr)
        return 2
    count = write(args.plan_dir, args.out)
    print(f"{args.out}: the plan's manifests and {count} pod(s) KServe would create")
    return 0


if __name__ == "__main__":
    sys.exit(main())
