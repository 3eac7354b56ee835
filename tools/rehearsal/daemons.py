"""`scheduled`: the pods every node runs besides the models, bound and Ready on the kwok nodes, holding their requests
there as on a real node: each DaemonSet's pods (the rehearsal's kube-controller-manager runs the DaemonSet controller,
`--controllers=*`, which creates a pod for every node the DaemonSet selects; the scheduler binds it) and the model
cache's workers and masters (the Fluid stand-in creates them as Fluid's AlluxioRuntime controller does). A
DaemonSet whose pod cannot be placed on a node it selects (the node is full) fails the check with the scheduler's
reason."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from tools.rehearsal.kube import ApiError
from tools.rehearsal.report import Check
from tools.rollout.ci import stack_regions

if TYPE_CHECKING:
    from components.domain.waves import Wave
    from tools.rehearsal.runner import Rehearsal, Target

SETTLE_SECONDS = 60.0
CACHE_WORKLOADS = "app=alluxio"  # the Fluid stand-in's StatefulSets (tools/rehearsal/fluid.py runtime_workloads)


def _selector(obj: dict[str, Any]) -> str:
    labels = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return ",".join(f"{k}={v}" for k, v in labels.items())


def daemon_state(obj: dict[str, Any]) -> tuple[bool, str]:
    """(all of its pods bound and Ready, "namespace/name ready/desired") of a DaemonSet or StatefulSet."""
    meta, status = obj["metadata"], obj.get("status") or {}
    if obj["kind"] == "DaemonSet":
        want, bound, ready = (
            status.get("desiredNumberScheduled", 0),
            status.get("currentNumberScheduled", 0),
            status.get("numberReady", 0),
        )
        current = status.get("observedGeneration", 0) >= meta.get("generation", 1)
        return current and bound >= want and ready >= want, f"{meta['namespace']}/{meta['name']} {ready}/{want}"
    want = (obj.get("spec") or {}).get("replicas", 1)
    ready = status.get("readyReplicas", 0)
    return ready >= want, f"{meta['namespace']}/{meta['name']} {ready}/{want}"


def _node_workloads(target: Target) -> list[dict[str, Any]]:
    """The cluster's DaemonSets and cache StatefulSets, each with its kind (a list's items carry none)."""
    return [
        *({**o, "kind": "DaemonSet"} for o in target.kube.list("apps/v1", "DaemonSet")),
        *({**o, "kind": "StatefulSet"} for o in target.kube.list("apps/v1", "StatefulSet", selector=CACHE_WORKLOADS)),
    ]


def check_node_daemons(rehearsal: Rehearsal, wave: Wave) -> None:
    """One check per region cluster a stack of this wave deploys to."""
    for stack in wave.stacks:
        for region in stack_regions(rehearsal.env, rehearsal.slices[stack]):
            target = next(
                (t for t in rehearsal.targets.values() if t.region is not None and t.region.name == region), None
            )
            if target is not None:
                rehearsal.check(_check(rehearsal, target, wave, stack))


def _check(rehearsal: Rehearsal, target: Target, wave: Wave, stack: str) -> Check:
    deadline, started = time.monotonic() + SETTLE_SECONDS, time.monotonic()
    states: list[tuple[dict[str, Any], bool, str]] = []
    while True:
        rehearsal.sync(target)
        try:
            states = [(obj, *daemon_state(obj)) for obj in _node_workloads(target)]
        except ApiError as exc:
            states = []
            problem = str(exc)
        else:
            problem = ""
        if (states and all(ok for _, ok, _ in states)) or time.monotonic() >= deadline:
            break
        time.sleep(2.0)
    name = f"node daemons of {target.name}"
    nodes = len(target.kube.list("v1", "Node"))
    waiting = [(obj, seen) for obj, ok, seen in states if not ok]
    seconds = round(time.monotonic() - started, 1)
    if problem or waiting:
        why = problem or "; ".join(
            f"{seen}: {rehearsal.pending_reason(target, obj['metadata']['namespace'], _selector(obj))}"
            for obj, seen in waiting
        )
        return Check(
            name,
            "scheduled",
            False,
            f"not all bound and Ready after {SETTLE_SECONDS:.0f} s: {why}",
            wave.name,
            stack,
            cluster=target.name,
            seconds=seconds,
        )
    listed = ", ".join(seen for _, _, seen in states)
    return Check(
        name,
        "scheduled",
        True,
        f"{len(states)} DaemonSet(s) and cache StatefulSet(s) bound and Ready on the {nodes} kwok nodes, holding "
        f"their requests there: {listed}",
        wave.name,
        stack,
        cluster=target.name,
        seconds=seconds,
    )
