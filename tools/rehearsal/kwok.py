"""kwok (v0.8.0) for one cluster: it keeps the nodes we create Ready (with leases) and plays each pod bound to
them (running, ready, deleted) with the stages kwok ships at the pin (`kustomize/stage/node/fast`,
`node/heartbeat-with-lease`, `pod/fast`), all but `pod-complete`: a Job's pod is the rehearsal's kubelet's to end,
since the kubelet runs some of them (a chart's script); it completes the others exactly as that stage does
(tools/rehearsal/kubelet.py)."""

from __future__ import annotations

from pathlib import Path

from tools.rehearsal import cache
from tools.rehearsal.charts import ModuleFiles, yaml_files
from tools.rehearsal.nodes import KWOK_ANNOTATION
from tools.rehearsal.processes import Process, Supervisor, free_port

KWOK = "sigs.k8s.io/kwok"
KWOK_VERSION = "v0.8.0"
POD_COMPLETE = "pod-complete.yaml"
STAGES = tuple(
    ModuleFiles(KWOK, KWOK_VERSION, f"kustomize/stage/{path}")
    for path in ("node/fast", "node/heartbeat-with-lease", "pod/fast")
)


def stage_files() -> list[Path]:
    files = []
    for stages in STAGES:
        missing = stages.missing()
        if missing:
            raise FileNotFoundError(missing)
        files += [p for p in yaml_files(stages.directory) if p.name not in ("kustomization.yaml", POD_COMPLETE)]
    return files


def start_kwok(supervisor: Supervisor, *, cluster: str, kubeconfig: Path, node_ip: str) -> Process:
    return supervisor.start(
        f"{cluster}/kwok",
        [
            str(cache.binary_path("kwok")),
            f"--kubeconfig={kubeconfig}",
            *[f"--config={p}" for p in stage_files()],
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION[0]}={KWOK_ANNOTATION[1]}",
            f"--node-ip={node_ip}",
            f"--server-address=127.0.0.1:{free_port()}",
            "--node-lease-duration-seconds=40",
        ],
    )
