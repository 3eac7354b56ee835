"""The serving checks of a region's wave: `scheduled`, each placed model's pods (made by KServe's controllers
from its InferenceService or LLMInferenceService) bound by the real scheduler (the default one, or Volcano's) to
a node of the pool the placement names, a model that cannot fit reported with the scheduler's reason; and
`picker-started`, each endpoint picker running with its rendered flags and config and polling the metrics of each
of its pool's ready pods (it lists them). The picker counts as ready only the pods whose metrics it read
(`inference_pool_ready_pods`), and no engine serves them here: that count is a declared limit."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

import requests

from components.domain.waves import rollout_waves
from components.k8s.names import cluster_name
from platform_catalog.names import SERVING_NAMESPACE
from tools.plan.model import K8S_PROVIDER
from tools.rehearsal.binaries import by_binary
from tools.rehearsal.keda import SCALED_OBJECTS, KedaStandIn, idle_target
from tools.rehearsal.kube import ApiError, is_ready
from tools.rehearsal.kubelet import binary_for, runnable, stand_in, unknown_flags
from tools.rehearsal.network import PodNetwork, _ip
from tools.rehearsal.report import Category, Check, Limit

if TYPE_CHECKING:
    from components.domain.waves import Wave
    from tools.rehearsal.runner import Rehearsal, Target

SCHEDULE_SECONDS = 60.0
PICKER_SECONDS = 60.0
# The labels KServe v0.20.0 puts on a model's pods: an InferenceService's predictor (raw deployment); an
# LLMInferenceService's decode and prefill workloads, not its router-scheduler (the picker, which runs on system
# nodes: catalog fact KSERVE_LLM_WORKLOAD_LABELS).
MODEL_POD_SELECTORS = {
    "InferenceService": lambda name: {"serving.kserve.io/inferenceservice": name},
    "LLMInferenceService": lambda name: {
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/part-of": "llminferenceservice",
        "kserve.io/component": "workload",
    },
}
SERVING = {
    "InferenceService": ("serving.kserve.io/v1beta1", "kserve-manager"),
    "LLMInferenceService": ("serving.kserve.io/v1alpha2", "kserve-llmisvc"),
}


def _model_pods(target: Target, kind: str, name: str) -> list[dict[str, Any]]:
    labels = MODEL_POD_SELECTORS[kind](name)
    return target.kube.list("v1", "Pod", SERVING_NAMESPACE, selector=",".join(f"{k}={v}" for k, v in labels.items()))


def _unscheduled(pod: dict[str, Any]) -> str | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") != "True":
            return condition.get("message") or condition.get("reason") or "not scheduled"
    return None if (pod.get("spec") or {}).get("nodeName") else "not scheduled yet"


def check_scheduled(rehearsal: Rehearsal, wave: Wave) -> None:
    """Each placement of a model whose serving object a stack of this wave creates: on the placement's cluster
    itself (a region's stack), or on Karmada, which propagates it to the member (the global stack)."""
    env, env_name = rehearsal.env, rehearsal.env_name
    domain = env.label_domain
    karmada = _karmada_providers(rehearsal)
    for stack in wave.stacks:
        created = {
            (r.inputs["metadata"]["name"], rehearsal.plan.cluster_of(r)): r.inputs["kind"]
            for r in rehearsal.plan.stacks.get(stack, rehearsal.plan).kubernetes_objects()
            if r.inputs.get("kind") in SERVING
        }
        for model in env.models:
            for placement in model.placements:
                cluster = cluster_name(env_name, env.region(placement.region))
                kind = created.get((model.name, cluster)) or next(
                    (created[(model.name, k)] for k in karmada if (model.name, k) in created), None
                )
                target = rehearsal.targets.get(cluster)
                if kind is None or target is None:
                    continue  # created by another wave's stack, checked there
                name = f"{model.name} on {cluster}"
                if env.region(placement.region).serving.deployment_mode == "Knative":
                    rehearsal.limit(
                        knative_limit(f"{kind} {SERVING_NAMESPACE}/{model.name}", "scheduled", wave, stack, cluster)
                    )
                    continue
                controller = SERVING[kind][1]
                if not rehearsal.has_binary(controller):
                    rehearsal.check(
                        Check(
                            name,
                            "scheduled",
                            False,
                            f"{controller} is not built (`make rehearsal-tools`), so nothing turns the {kind} into pods",
                            wave.name,
                            stack,
                            cluster=cluster,
                            object=f"{kind} {SERVING_NAMESPACE}/{model.name}",
                        )
                    )
                    continue
                pools = {placement.pool, *([placement.prefill.pool] if placement.prefill is not None else [])}
                at_zero = placement.min_replicas == 0
                rehearsal.check(
                    _schedule(rehearsal, target, kind, model.name, pools, domain, wave, stack, name, at_zero=at_zero)
                )
                played = _played_images(target, model.name)
                if played:
                    rehearsal.limit(
                        Limit(
                            f"{kind} {SERVING_NAMESPACE}/{model.name} on {cluster}: its pods' containers",
                            "scheduled",
                            f"no program of the rehearsal runs their images ({', '.join(played)}): no engine serves "
                            "a token here, and the LLMInferenceService's own picker (llm-d-router v0.9.0) is not "
                            "built: the module proxy refuses it, and its config names plugins the stand-in lacks",
                            "kwok plays the pods KServe made: bound by the real scheduler (this wave's scheduled "
                            "check), then Running and Ready without a process",
                            wave.name,
                            stack,
                            cluster=cluster,
                        )
                    )


def knative_limit(what: str, category: Category, wave: Wave, stack: str, cluster: str | None) -> Limit:
    """A region in Knative mode serves through Knative Serving, which the platform does not install (its config
    says so) and the rehearsal does not run: KServe's controller makes no pod there."""
    return Limit(
        what,
        category,
        "the region serves in Knative mode, which needs Knative Serving installed beforehand: the platform does not "
        "install it (regions[].serving.deploymentMode) and the rehearsal runs none, so KServe makes no Knative "
        "Service and no pod",
        "nothing: the objects were applied and admitted (apply checks); their pods and Ready are not rehearsed",
        wave.name,
        stack,
        cluster=cluster,
    )


def _played_images(target: Target, model: str) -> list[str]:
    """The images of the model's pods (its workloads and, for an LLMInferenceService, its router-scheduler) that
    no program of the rehearsal runs."""
    pods = target.kube.list("v1", "Pod", SERVING_NAMESPACE)
    images = {
        c.get("image", "?")
        for p in pods
        if model
        in (
            (p["metadata"].get("labels") or {}).get("serving.kserve.io/inferenceservice"),
            (p["metadata"].get("labels") or {}).get("app.kubernetes.io/name"),
        )
        for c in (p.get("spec") or {}).get("containers") or []
        if runnable(c) is None
    }
    return sorted(images)


def _schedule(
    rehearsal: Rehearsal,
    target: Target,
    kind: str,
    model: str,
    pools: set[str],
    domain: str,
    wave: Wave,
    stack: str,
    name: str,
    *,
    at_zero: bool = False,
) -> Check:
    """The model's pods bound to its pools; `at_zero` (minReplicas 0): or none, its autoscaler's target scaled to
    zero (KEDA's first poll with no request, tools/rehearsal/keda.py)."""
    deadline = time.monotonic() + SCHEDULE_SECONDS
    problems: list[str] = ["no pods: the controller made none"]
    with contextlib.suppress(ApiError):
        if target.kube.get(SERVING[kind][0], kind, model, SERVING_NAMESPACE) is None:  # its apply check says why
            return Check(
                name,
                "scheduled",
                False,
                f"no pods: no {kind} {model} on this cluster (see its apply check, or its propagated one when federated)",
                wave.name,
                stack,
                cluster=target.name,
                object=f"{kind} {SERVING_NAMESPACE}/{model}",
            )
    while time.monotonic() < deadline:
        rehearsal.sync(target)
        try:
            pods = _model_pods(target, kind, model)
            nodes = {n["metadata"]["name"]: n for n in target.kube.list("v1", "Node")}
        except ApiError as exc:
            problems = [str(exc)]
            time.sleep(2)
            continue
        if at_zero and not [p for p in pods if not p["metadata"].get("deletionTimestamp")]:
            bound = _bound_before_zero(target, kind, model)
            if bound is not None:
                node_pools = {
                    node: (nodes.get(node, {}).get("metadata", {}).get("labels") or {}).get(f"{domain}/pool")
                    for node in bound
                }
                outside = {node: pool for node, pool in node_pools.items() if pool not in pools}
                return Check(
                    name,
                    "scheduled",
                    not outside,
                    f"at zero (minReplicas 0): its first pod(s) bound to {', '.join(sorted(node_pools))} "
                    f"(pool {'/'.join(sorted(set(map(str, node_pools.values()))))}), then KEDA scaled it to zero"
                    + (f"; not pool {'/'.join(sorted(pools))}" if outside else ""),
                    wave.name,
                    stack,
                    cluster=target.name,
                    object=f"{kind} {SERVING_NAMESPACE}/{model}",
                )
        problems = [] if pods else ["no pods: the controller made none" + serving_state(target, kind, model)]
        placed = []
        for pod in pods:
            waiting = _unscheduled(pod)
            if waiting:
                problems.append(f"pod {pod['metadata']['name']} Pending: {waiting}")
                continue
            node = nodes.get(pod["spec"]["nodeName"], {})
            pool = (node.get("metadata", {}).get("labels") or {}).get(f"{domain}/pool")
            if pool not in pools:
                problems.append(
                    f"pod {pod['metadata']['name']} bound to {pod['spec']['nodeName']} of pool {pool}, not {'/'.join(sorted(pools))}"
                )
            else:
                scheduler = pod["spec"].get("schedulerName", "default-scheduler")
                placed.append(f"{pod['metadata']['name']} -> {pod['spec']['nodeName']} ({scheduler})")
        if not problems:
            return Check(
                name,
                "scheduled",
                True,
                f"{len(placed)} pod(s) bound to pool {'/'.join(sorted(pools))}: {'; '.join(placed[:4])}",
                wave.name,
                stack,
                cluster=target.name,
                object=f"{kind} {SERVING_NAMESPACE}/{model}",
            )
        time.sleep(2)
    return Check(
        name,
        "scheduled",
        False,
        f"after {SCHEDULE_SECONDS:.0f} s: {'; '.join(problems[:3])}",
        wave.name,
        stack,
        cluster=target.name,
        object=f"{kind} {SERVING_NAMESPACE}/{model}",
    )


def _bound_before_zero(target: Target, kind: str, model: str) -> list[str] | None:
    """The nodes the model's pods were bound to when the KEDA stand-in scaled its ScaledObject's target to zero
    (tools/rehearsal/keda.py), those pods the model's own; None when it did not (no KEDA, not at zero, not yet)."""
    keda = next((c for c in target.controllers if isinstance(c, KedaStandIn)), None)
    if keda is None:
        return None
    try:
        scaled_object = target.kube.get(*SCALED_OBJECTS, model, SERVING_NAMESPACE)
    except ApiError:  # KEDA's kind not served, or a moment's answer: the check looks again
        return None
    found = idle_target(scaled_object) if scaled_object is not None else None
    pods = keda.scaled.get(f"{SERVING_NAMESPACE}/{found[2]}") if found is not None else None
    own = MODEL_POD_SELECTORS[kind](model).items()
    if not pods or not all(own <= labels.items() for _, labels in pods):
        return None
    return [node for node, _ in pods]


def serving_state(target: Target, kind: str, model: str) -> str:
    try:
        obj = target.kube.get(SERVING[kind][0], kind, model, SERVING_NAMESPACE)
    except ApiError as exc:
        return f" ({exc})"
    if obj is None:
        return f" (no {kind} {model} on this cluster)"
    conditions = (obj.get("status") or {}).get("conditions") or []
    failing = [
        f"{c.get('type')}: {c.get('message') or c.get('reason')}" for c in conditions if c.get("status") != "True"
    ]
    return f" ({kind}: {'; '.join(failing[:2]) or 'no conditions yet'})"


def check_pickers(rehearsal: Rehearsal, wave: Wave) -> None:
    """Every Deployment of the wave's stacks that runs the endpoint picker, once its pool can have pods: a picker
    whose model a later wave creates (a federated one, which Karmada propagates in the global wave) is checked in
    that wave, so that it is seen listing its pods rather than an empty pool."""
    found = [
        (stack, r)
        for stack in wave.stacks
        for r in rehearsal.plan.stacks.get(stack, rehearsal.plan).kubernetes_objects()
    ]
    found += rehearsal.deferred_pickers.pop(wave.name, [])
    for stack, resource in found:
        obj = resource.inputs
        if obj.get("kind") != "Deployment":
            continue
        template = (obj.get("spec") or {}).get("template") or {}  # none in a patch of its replicas
        containers = (template.get("spec") or {}).get("containers") or []
        picker = next((c for c in containers if binary_for(c.get("image", "")) == "epp"), None)
        if picker is None:
            continue
        cluster = rehearsal.plan.cluster_of(resource)
        pool = _flag(picker.get("args") or [], "--pool-name")
        later = _wave_serving(rehearsal, wave, pool, cluster)
        if later is not None:
            rehearsal.deferred_pickers.setdefault(later, []).append((stack, resource))
            continue
        _check_picker(rehearsal, wave, stack, obj, picker, cluster, pool)


def _wave_serving(rehearsal: Rehearsal, wave: Wave, pool: str | None, cluster: str | None) -> str | None:
    """The wave after `wave` that creates the serving object named `pool` for `cluster` (on it, or on Karmada,
    which propagates it), when no earlier one does; else None."""
    waves = rollout_waves(rehearsal.env, rehearsal.env_name)
    names = [w.name for w in waves]

    def creates(stack: str) -> bool:
        return any(
            r.inputs.get("kind") in SERVING
            and r.inputs["metadata"]["name"] == pool
            and (rehearsal.plan.cluster_of(r) or "") in (cluster, *_karmada_providers(rehearsal))
            for r in rehearsal.plan.stacks.get(stack, rehearsal.plan).kubernetes_objects()
        )

    if any(creates(s) for w in waves[: names.index(wave.name) + 1] for s in w.stacks):
        return None
    return next((w.name for w in waves[names.index(wave.name) + 1 :] if any(creates(s) for s in w.stacks)), None)


def _karmada_providers(rehearsal: Rehearsal) -> set[str]:
    return {r.name for r in rehearsal.plan.resources if r.type == K8S_PROVIDER and r.name.endswith("-karmada")}


def _check_picker(
    rehearsal: Rehearsal,
    wave: Wave,
    stack: str,
    obj: dict[str, Any],
    picker: dict[str, Any],
    cluster: str | None,
    pool: str | None,
) -> None:
    target = rehearsal.targets.get(cluster or "")
    name = f"picker {obj['metadata']['namespace']}/{obj['metadata']['name']}"
    where = f"Deployment {obj['metadata']['namespace']}/{obj['metadata']['name']}"
    if not rehearsal.has_binary("epp"):
        rehearsal.check(
            Check(
                name,
                "picker-started",
                False,
                "epp is not built: run `make rehearsal-tools`",
                wave.name,
                stack,
                cluster=cluster,
                object=where,
            )
        )
        return
    if target is None:
        rehearsal.check(
            Check(
                name,
                "picker-started",
                False,
                f"{cluster} is not up",
                wave.name,
                stack,
                cluster=cluster,
                object=where,
            )
        )
        return
    rehearsal.check(_picker(rehearsal, target, obj, pool, wave, stack, name, where))
    stood_in = picker_stand_in(picker)
    if stood_in is not None:
        rehearsal.limit(
            Limit(f"{name}: the pinned picker", "picker-started", *stood_in, wave.name, stack, cluster=cluster)
        )
    rehearsal.limit(
        Limit(
            f"{name}: its count of ready pods (inference_pool_ready_pods)",
            "picker-started",
            "the picker counts the pods whose /metrics it read (the stand-in's code, gateway-api-inference-extension"
            "@v1.5.0:pkg/epp/datalayer/logger/logger.go L78-L115), and no engine serves them in the rehearsal",
            "its polls of each ready pod's metrics endpoint, seen at the pod's address (answered 503)",
            wave.name,
            stack,
            cluster=cluster,
        )
    )


def picker_stand_in(picker: dict[str, Any]) -> tuple[str, str] | None:
    """(why the pinned picker is not built, what runs instead) when the picker runs a declared stand-in
    (tools/rehearsal/binaries.py): the report names it, and any rendered flag the stand-in would not know."""
    stood_in = stand_in(picker)
    if stood_in is None:
        return None
    flags = unknown_flags(picker)
    without = f", without {', '.join(flags)} (flags only the pinned version knows)" if flags else ""
    return f"the pinned version is not built: {by_binary()['epp'].stand_in}", f"{stood_in}{without}"


def _flag(args: list[str], flag: str) -> str | None:
    for index, arg in enumerate(args):
        if arg == flag and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(f"{flag}="):
            return arg.split("=", 1)[1]
    return None


def _picker(
    rehearsal: Rehearsal,
    target: Target,
    obj: dict[str, Any],
    pool: str | None,
    wave: Wave,
    stack: str,
    name: str,
    where: str,
) -> Check:
    """The picker runs with its rendered flags and config, and lists its pool's ready pods: it polls each one's
    metrics endpoint, which the rehearsal answers at the pod's address (no engine runs there: PollWitness)."""
    namespace = obj["metadata"]["namespace"]
    selector = ",".join(f"{k}={v}" for k, v in obj["spec"]["selector"]["matchLabels"].items())
    token = rehearsal.metrics_token(target)
    deadline = time.monotonic() + PICKER_SECONDS
    seen = "no picker pod running"
    ever_in_pool: set[str] = set()  # a pod that left the pool meanwhile (a model at zero scaled away) is no stranger
    assert rehearsal.network is not None
    with PollWitness(rehearsal.network) as witness:
        while time.monotonic() < deadline:
            rehearsal.sync(target)
            try:
                pods = target.kube.list("v1", "Pod", namespace, selector=selector)
                pool_pods, ports = _pool_ready_pods(target, namespace, pool)
            except ApiError as exc:
                seen = str(exc)
                time.sleep(2)
                continue
            ever_in_pool |= set(pool_pods.values())
            served = {s.ip for s in target.kubelet.sandboxes.values()} if target.kubelet is not None else set()
            witness.answer({ip for ip in pool_pods.values() if ip not in served}, ports)
            running = [
                p for p in pods if any(c.get("started") for c in (p.get("status") or {}).get("containerStatuses") or [])
            ]
            for pod in running:
                ip = pod["status"].get("podIP")
                try:
                    text = requests.get(
                        f"http://{ip}:9090/metrics", headers={"Authorization": f"Bearer {token}"}, timeout=3
                    ).text
                except requests.RequestException as exc:
                    seen = f"pod {pod['metadata']['name']}: metrics not served ({type(exc).__name__})"
                    continue
                counted = _gauge(text, "inference_pool_ready_pods", pool)
                if counted is None:
                    seen = f"pod {pod['metadata']['name']} runs, but reports no inference_pool_ready_pods for pool {pool} yet"
                    continue
                polled = witness.polled_by(ip)
                missing = sorted(
                    n for n, address in pool_pods.items() if address not in polled and address not in served
                )
                strangers = sorted(polled - ever_in_pool)
                if not missing and not strangers:
                    listed = ", ".join(sorted(pool_pods)) or "none: the pool has no ready pod"
                    return Check(
                        name,
                        "picker-started",
                        True,
                        f"pod {pod['metadata']['name']} runs with its rendered flags and config and polls the metrics "
                        f"of each of the {len(pool_pods)} ready pod(s) of pool {pool}: {listed}",
                        wave.name,
                        stack,
                        cluster=target.name,
                        object=where,
                    )
                seen = (
                    f"pod {pod['metadata']['name']} runs; of pool {pool}'s ready pods it has not polled "
                    + (", ".join(missing) or "-")
                    + (f"; it polled addresses outside the pool: {', '.join(strangers)}" if strangers else "")
                )
            if not running:
                seen = rehearsal.pending_reason(target, namespace, selector) or seen
            time.sleep(2)
    return Check(
        name,
        "picker-started",
        False,
        f"after {PICKER_SECONDS:.0f} s: {seen}",
        wave.name,
        stack,
        cluster=target.name,
        object=where,
    )


def _pool_ready_pods(target: Target, namespace: str, pool: str | None) -> tuple[dict[str, str], set[int]]:
    """The ready pods of the InferencePool (name -> address) and its target ports."""
    if pool is None:
        return {}, set()
    obj = target.kube.get("inference.networking.k8s.io/v1", "InferencePool", pool, namespace)
    spec = (obj or {}).get("spec") or {}
    labels = (spec.get("selector") or {}).get("matchLabels") or {}
    ports = {int(p["number"]) for p in spec.get("targetPorts") or []}
    if not labels:
        return {}, ports
    pods = target.kube.list("v1", "Pod", namespace, selector=",".join(f"{k}={v}" for k, v in labels.items()))
    return {
        p["metadata"]["name"]: p["status"]["podIP"]
        for p in pods
        if (p.get("status") or {}).get("podIP") and is_ready(p)
    }, ports


class PollWitness:
    """The addresses of pods no process serves (kwok plays them), taken on the pod network's bridge while a check
    runs: each HTTP request there is recorded (caller, address) and answered 503, since no engine runs. So a
    picker's polls of its pool's pods' metrics show which pods it lists, without anything pretending to serve."""

    def __init__(self, network: PodNetwork):
        self.network = network
        self._listeners: dict[tuple[str, int], socket.socket] = {}
        self._polls: set[tuple[str, str]] = set()  # (caller address, pod address)
        self._lock = threading.Lock()

    def __enter__(self) -> PollWitness:
        return self

    def __exit__(self, *_: object) -> None:
        for listener in self._listeners.values():
            with contextlib.suppress(OSError):
                listener.close()
        for address in {a for a, _ in self._listeners}:
            _ip("addr", "del", f"{address}/32", "dev", self.network.bridge, check=False)

    def answer(self, addresses: set[str], ports: set[int]) -> None:
        for address in addresses:
            for port in ports:
                if (address, port) in self._listeners:
                    continue
                _ip("addr", "add", f"{address}/32", "dev", self.network.bridge, check=False)
                listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    listener.bind((address, port))
                except OSError:
                    listener.close()
                    continue
                listener.listen(16)
                self._listeners[(address, port)] = listener
                threading.Thread(target=self._accept, args=(listener, address), daemon=True).start()

    def _accept(self, listener: socket.socket, address: str) -> None:
        while True:
            try:
                client, (caller, _) = listener.accept()
            except OSError:
                return
            with client, contextlib.suppress(OSError):
                client.settimeout(5)
                client.recv(4096)
                with self._lock:
                    self._polls.add((caller, address))
                client.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    def polled_by(self, caller: str) -> set[str]:
        with self._lock:
            return {address for who, address in self._polls if who == caller}


def _gauge(text: str, metric: str, pool: str | None) -> float | None:
    for line in text.splitlines():
        if line.startswith(metric + "{") and f'name="{pool}"' in line:
            return float(line.rsplit(" ", 1)[-1])
    return None
