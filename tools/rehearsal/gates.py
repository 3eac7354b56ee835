"""The rollout's own gates, run against the rehearsal's clusters after each wave: the policy gate (the plan's
mandatory findings for the wave's stacks) and the health gate of `tools/rollout` (its checks, its Kubernetes
probe, its polling), each stack's checks built from the stack's planned outputs as `make rollout` builds them
from the deployed stack's. A kubeconfig in those outputs names its cluster; the probe talks to the rehearsal's
cluster of that name. The gateway check sends a request through the data plane, which the rehearsal does not
run: it is a declared limit, with the URL it would call."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import yaml

from components.catalog.charts import CLUSTERPEDIA_VERSION
from components.domain.waves import Wave
from components.k8s.names import cluster_name
from tools.rehearsal.report import Check, Limit
from tools.rehearsal.serving import knative_limit, serving_state
from tools.rollout.gates import stack_health
from tools.rollout.health import ClusterProbe, KubernetesProbe, ProbeError, wait_healthy

if TYPE_CHECKING:
    from tools.rehearsal.runner import Rehearsal

HEALTH_SECONDS = 60.0  # the rollout polls for healthTimeoutMinutes; kwok pods are ready in seconds
POLL_SECONDS = 3.0
DATA_PLANE = "gateway"  # what tools/rollout/health.py's gateway and models checks wait for (their Target)
MODELS = "serving"
SEARCH = "search"


def _no_data_plane(url: str, _headers: Mapping[str, str], **_tls: Any) -> tuple[int, Any]:
    raise ProbeError(f"the rehearsal runs no data plane: GET {url} is not sent")


def run_gates(rehearsal: Rehearsal, wave: Wave) -> None:
    plan = rehearsal.plan
    env, env_name = rehearsal.env, rehearsal.env_name
    rehearsal.check(_policy_gate(rehearsal, wave))

    def outputs(stack: str) -> Mapping[str, Any]:
        part = plan.stacks.get(stack, plan)
        return part.evaluation.referenced.values

    def probe(kubeconfig: Any) -> ClusterProbe:
        document = yaml.safe_load(kubeconfig) if isinstance(kubeconfig, str) else kubeconfig
        name = document["clusters"][0]["name"]
        target = rehearsal.targets.get(name) or rehearsal.provider_target(name)
        if target is None:
            raise ProbeError(f"cluster {name} is not up")
        return KubernetesProbe(target.kubeconfig())

    health = stack_health(
        env=env,
        env_name=env_name,
        cluster_probe=probe,
        http_get=_no_data_plane,
        outputs_of=outputs,
    )
    for stack in wave.stacks:
        checks = health(stack, outputs(stack))
        if not checks:
            rehearsal.check(
                Check("health", "gate", True, "no cluster in this stack: nothing to check", wave.name, stack)
            )
            continue
        for check in (c for c in checks if _waits_for(c, DATA_PLANE)):
            rehearsal.limit(
                Limit(
                    f"health: {check.name}",
                    "gate",
                    f"the rehearsal runs no data plane (no Envoy, no engine serving tokens), so it cannot {check.waits_for}",
                    "the gate's checks of the same wave that need no data plane: the models' Ready conditions, "
                    "and the gateway objects' translation (gateway-translated)",
                    wave.name,
                    stack,
                )
            )
        for check in (c for c in checks if _waits_for(c, SEARCH)):
            rehearsal.limit(
                Limit(
                    f"health: {check.name}",
                    "gate",
                    "the rehearsal runs no Clusterpedia (the module proxy refuses github.com/clusterpedia-io/"
                    f"clusterpedia@{CLUSTERPEDIA_VERSION}; its pods run no program), so nothing sets a PediaCluster's "
                    f"conditions: it cannot {check.waits_for}",
                    "each PediaCluster created on the host (the apply of its wave), and its member's endpoint against "
                    "the host's egress (make plan's bring-up check, search reach)",
                    wave.name,
                    stack,
                )
            )
        knative = [c for c in checks if _waits_for(c, MODELS) and _knative(rehearsal, c)]
        for check in knative:
            rehearsal.limit(knative_limit(f"health: {check.name}", "gate", wave, stack, None))
        checks = [c for c in checks if c not in knative]
        controllers = [b for b in ("kserve-manager", "kserve-llmisvc") if not rehearsal.has_binary(b)]
        for check in (c for c in checks if _waits_for(c, MODELS) and controllers):
            rehearsal.check(
                Check(
                    f"health: {check.name}",
                    "gate",
                    False,
                    f"{', '.join(controllers)} not built (`make rehearsal-tools`), so nothing makes a model Ready: "
                    f"{check.waits_for}",
                    wave.name,
                    stack,
                )
            )
        polled = [
            c
            for c in checks
            if not _waits_for(c, DATA_PLANE)
            and not _waits_for(c, SEARCH)
            and not (_waits_for(c, MODELS) and controllers)
        ]
        started = time.monotonic()
        results = wait_healthy(polled, timeout_seconds=HEALTH_SECONDS, clock=time.monotonic, sleep=_every(POLL_SECONDS))
        for check, result in zip(polled, results, strict=True):
            rehearsal.check(
                Check(
                    f"health: {check.name}",
                    "gate",
                    result.ok,
                    result.message
                    if result.ok
                    else f"{result.message} (the gate waits for: {check.waits_for}){_why(rehearsal, check)}",
                    wave.name,
                    stack,
                    seconds=round(time.monotonic() - started, 1),
                )
            )


def _why(rehearsal: Rehearsal, check: Any) -> str:
    """For a models check that failed: what the serving objects' own conditions say, on their cluster."""
    target = check.target
    if target is None or target.what != MODELS or target.region is None or target.kind is None:
        return ""
    cluster = rehearsal.targets.get(cluster_name(rehearsal.env_name, rehearsal.env.region(target.region)))
    if cluster is None:
        return ""
    return "; " + "; ".join(f"{name}{serving_state(cluster, target.kind, name)}" for name in target.names)


def _knative(rehearsal: Rehearsal, check: Any) -> bool:
    """Whether a models check is of a region serving in Knative mode (serving.knative_limit)."""
    region = check.target.region
    return region is not None and rehearsal.env.region(region).serving.deployment_mode == "Knative"


def _waits_for(check: Any, what: str) -> bool:
    return check.target is not None and check.target.what == what


def _policy_gate(rehearsal: Rehearsal, wave: Wave) -> Check:
    """The plan's verdict as `make plan` wrote it (build/<env>/policy.json): the rehearsal's own evaluation
    holds secrets in plain text, which the pack rightly flags, so it is not the one judged."""
    path = rehearsal.out_dir / "policy.json"
    if not path.exists():
        return Check(
            "policy",
            "gate",
            False,
            f"no {path} to judge: run `make plan ENV={rehearsal.env_name}` first",
            wave.name,
            wave.stacks[0],
        )
    findings = [
        f"{v['urn'].split('::', 1)[0].removeprefix('urn:pulumi:')}: policy {v['policy']}: {v['message']}"
        for v in json.loads(path.read_text())
        if v["enforcementLevel"] == "mandatory" and any(v["urn"].startswith(f"urn:pulumi:{s}::") for s in wave.stacks)
    ]
    detail = f"{len(findings)} mandatory violation(s): {'; '.join(findings)}" if findings else "offline plan passed"
    return Check("policy", "gate", not findings, detail, wave.name, wave.stacks[0])


def _every(seconds: float) -> Callable[[float], None]:
    """The rollout sleeps up to 15 s between polls; the rehearsal polls every few seconds."""

    def sleep(_: float) -> None:
        time.sleep(seconds)

    return sleep
