"""kwok (v0.8.0) for one cluster: it keeps the nodes we create Ready (with leases) and plays each pod bound to
them (running, ready, deleted) with the stages kwok ships at the pin (`kustomize/stage/node/fast`,
`node/heartbeat-with-lease`, `pod/fast`), all but `pod-complete`: a Job's pod is the rehearsal's kubelet's to end,
since the kubelet runs some of them (a chart's script); it completes the others exactly as that stage does
(tools/rehearsal/kubelet.py).

One condition is added to kwok's `pod-ready` stage: the pod carries REFERENCES_CONDITION True, which the rehearsal's
kubelet sets once every Secret and ConfigMap the pod needs exists (tools/rehearsal/references.py). A real kubelet
does not start a pod's containers before that (catalog fact `kubelet-waits-for-referenced-objects`); kwok alone
would mark the pod Running and Ready at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tools.rehearsal import cache
from tools.rehearsal.charts import ModuleFiles, yaml_files
from tools.rehearsal.nodes import KWOK_ANNOTATION
from tools.rehearsal.processes import Process, Supervisor, free_port

KWOK = "sigs.k8s.io/kwok"
KWOK_VERSION = "v0.8.0"
POD_COMPLETE = "pod-complete.yaml"
POD_READY = "pod-ready.yaml"
STAGES = tuple(
    ModuleFiles(KWOK, KWOK_VERSION, f"kustomize/stage/{path}")
    for path in ("node/fast", "node/heartbeat-with-lease", "pod/fast")
)
# A pod condition of the rehearsal's own (a qualified name, as the API requires of condition types it does not
# know): True once the pod's Secrets and ConfigMaps exist.
REFERENCES_CONDITION = "rehearsal.inference-platform.io/ReferencedObjectsExist"


def gated_pod_ready(stage: dict[str, Any]) -> dict[str, Any]:
    """kwok's `pod-ready` stage, matching only pods whose REFERENCES_CONDITION is True."""
    expressions = stage["spec"]["selector"]["matchExpressions"]
    gate = {
        "key": f'.status.conditions.[] | select( .type == "{REFERENCES_CONDITION}" ) | .status',
        "operator": "In",
        "values": ["True"],
    }
    return {
        **stage,
        "spec": {**stage["spec"], "selector": {**stage["spec"]["selector"], "matchExpressions": [*expressions, gate]}},
    }


def stage_files(workdir: Path) -> list[Path]:
    """kwok's stages at the pin, `pod-ready` gated (written under `workdir`), `pod-complete` left out."""
    files = []
    for stages in STAGES:
        missing = stages.missing()
        if missing:
            raise FileNotFoundError(missing)
        for path in yaml_files(stages.directory):
            if path.name in ("kustomization.yaml", POD_COMPLETE):
                continue
            if path.name == POD_READY:
                gated = workdir / f"gated-{POD_READY}"
                gated.parent.mkdir(parents=True, exist_ok=True)
                gated.write_text(yaml.safe_dump(gated_pod_ready(yaml.safe_load(path.read_text())), sort_keys=False))
                path = gated
            files.append(path)
    return files


def start_kwok(supervisor: Supervisor, *, cluster: str, kubeconfig: Path, node_ip: str, workdir: Path) -> Process:
    return supervisor.start(
        f"{cluster}/kwok",
        [
            str(cache.binary_path("kwok")),
            f"--kubeconfig={kubeconfig}",
            *[f"--config={p}" for p in stage_files(workdir)],
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION[0]}={KWOK_ANNOTATION[1]}",
            f"--node-ip={node_ip}",
            f"--server-address=127.0.0.1:{free_port()}",
            "--node-lease-duration-seconds=40",
        ],
    )
