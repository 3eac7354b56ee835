"""A plan's Helm release installed on its rehearsal cluster, as `helm install` (tools/rehearsal/helm.py) does it,
then the release's controllers started where the rehearsal runs them."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from tools.plan.engine import PlannedResource
from tools.rehearsal import binaries, helm, pulumi_k8s
from tools.rehearsal.charts import load_files
from tools.rehearsal.kube import ApiError, Kube
from tools.rehearsal.kubelet import binary_for, runnable, stand_in, unknown_flags
from tools.rehearsal.processes import ProcessFailed
from tools.rehearsal.report import Check, Limit

if TYPE_CHECKING:
    from tools.rehearsal.runner import StackRun, Target

WAITED_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "PersistentVolumeClaim", "Service"}
WEBHOOK_KINDS = {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}


def called_services(obj: dict[str, Any]) -> list[tuple[str, str]]:
    """(namespace, name) of the Services the API server calls for a webhook configuration or an APIService."""
    if obj["kind"] in WEBHOOK_KINDS:
        refs = [(w.get("clientConfig") or {}).get("service") for w in obj.get("webhooks") or []]
    elif obj["kind"] == "APIService":
        refs = [(obj.get("spec") or {}).get("service")]
    else:
        return []
    return [(r.get("namespace", ""), r.get("name", "")) for r in refs if r]


def served_by_programs(objects: list[dict[str, Any]], default_namespace: str) -> set[tuple[str, str]]:
    """(namespace, Service) of `objects` whose pods (a Deployment, StatefulSet or DaemonSet of `objects` it selects)
    run a program the rehearsal has."""
    served = set()
    workloads = [o for o in objects if o["kind"] in ("Deployment", "StatefulSet", "DaemonSet")]
    for svc in (o for o in objects if o["kind"] == "Service"):
        selector = (svc.get("spec") or {}).get("selector") or {}
        for workload in workloads:
            template = workload["spec"]["template"]
            labels = (template.get("metadata") or {}).get("labels") or {}
            containers = template["spec"].get("containers") or []
            if selector and selector.items() <= labels.items() and any(runnable(c) == "binary" for c in containers):
                served.add((svc["metadata"].get("namespace") or default_namespace, svc["metadata"]["name"]))
    return served


def unserved(objects: list[dict[str, Any]], served: set[tuple[str, str]]) -> list[tuple[dict[str, Any], list[str]]]:
    """Webhook configurations and APIServices whose Services no process of the rehearsal serves, with them."""
    found = []
    for obj in objects:
        missing = [f"{ns}/{name}" for ns, name in called_services(obj) if (ns, name) not in served]
        if missing:
            found.append((obj, missing))
    return found


def _create_all(
    run: StackRun,
    target: Target,
    release: str,
    objects: list[dict[str, Any]],
    failures: list[str],
    skip_existing: bool = False,
) -> list[dict[str, Any]]:
    """The objects created; `skip_existing`: one that exists is left alone, as Helm leaves a chart's crds/ file
    whose CRD exists (helm.sh/helm/v3@v3.20.2:pkg/action/install.go L172-L178)."""
    created = []
    for obj in objects:
        obj.setdefault("metadata", {})
        try:
            if _namespaced(target.kube, obj) and not obj["metadata"].get("namespace"):
                obj["metadata"]["namespace"] = run.release_namespace
            target.kube.create(obj, field_manager=helm.HELM_FIELD_MANAGER)
            created.append(obj)
        except ApiError as exc:
            if skip_existing and exc.status == 409:
                continue
            failures.append(f"{pulumi_k8s.describe(obj)}: {exc}")
            run.r.check(
                Check(
                    pulumi_k8s.describe(obj),
                    "apply",
                    False,
                    f"release {release}: refused by the API server: {exc}",
                    run.wave.name,
                    run.stack,
                    cluster=target.name,
                    object=pulumi_k8s.describe(obj),
                )
            )
    return created


def _namespaced(kube: Kube, obj: dict[str, Any]) -> bool:
    try:
        return kube.resource(obj["apiVersion"], obj["kind"]).namespaced
    except ApiError:
        return True


def _workload_containers(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        c
        for o in objects
        if o["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job")
        for c in (((o.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    ]


def _program_of(service: tuple[str, str], objects: list[dict[str, Any]]) -> str:
    """The images of the release's workloads a Service selects (what the API server would call through it)."""
    svc = next(
        (o for o in objects if o["kind"] == "Service" and o["metadata"].get("name") == service[1]),
        None,
    )
    selector = ((svc or {}).get("spec") or {}).get("selector") or {}
    images = sorted(
        {
            c.get("image", "?")
            for o in objects
            if o["kind"] in ("Deployment", "StatefulSet", "DaemonSet") and selector
            if selector.items()
            <= ((((o.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}).items()
            for c in (((o.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
        }
    )
    return ", ".join(images) or "no workload of the release"


def _stand_in_crashed(kube: Kube, obj: dict[str, Any]) -> str | None:
    """A workload's pod whose stand-in program (not the pinned one) exited: it will not get better by waiting."""
    template = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    stand_ins = {c["name"] for c in template.get("containers") or [] if stand_in(c)}
    labels = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    if not stand_ins or not labels:
        return None
    selector = ",".join(f"{k}={v}" for k, v in labels.items())
    for pod in kube.list("v1", "Pod", obj["metadata"].get("namespace"), selector=selector):
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            waiting = (status.get("state") or {}).get("waiting") or {}
            if status["name"] in stand_ins and status.get("restartCount", 0) >= 1:
                return f"pod {pod['metadata']['name']}: {status['name']} exited: {waiting.get('message', '')}"
    return None


def install_release(run: StackRun, resource: PlannedResource) -> bool:
    """The release on its cluster; one `apply` check for the release, one per object the server refuses."""
    from tools.rehearsal.runner import vendored_crds, wait_crds_established

    inputs = resource.inputs
    release = str(inputs.get("name") or resource.name)
    target = run.target(resource)
    key, source = helm.release_source(inputs)
    label = f"release {release} ({key[0]} {key[1]})"
    started = time.monotonic()
    phases: dict[str, float] = {}  # phase -> seconds, for the detail (where a release's time goes)

    def phase(name: str, since: float) -> float:
        now = time.monotonic()
        phases[name] = phases.get(name, 0.0) + now - since
        return now

    def result(ok: bool, detail: str) -> bool:
        if phases:
            detail += " (" + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in phases.items()) + ")"
        check = run._check(resource, "apply", ok, detail, name=label)
        check.seconds = round(time.monotonic() - started, 1)
        run.r.check(check)
        return ok

    def limit(obj: str, reason: str, stands_in: str) -> None:
        run.r.limit(run._limit(resource, "apply", obj, reason, stands_in))

    if target is None:
        return result(False, f"cluster {run.plan.cluster_of(resource)} is not up")
    if source is None:
        return result(
            False, f"no source for chart {key[0]} {key[1]} in tools/rehearsal/charts.py: add the pin's module files"
        )
    run.release_namespace = str(inputs.get("namespace") or "default")
    if source.files is None:
        crds = vendored_crds(source.vendored_crds)
        origin = "conformance/upstream (vendored, reduced)"
        if source.crd_files is not None:
            missing = source.crd_files.missing()
            if missing:
                return result(False, missing)
            crds = [d for d in load_files(source.crd_files.directory) if d["kind"] == "CustomResourceDefinition"]
            origin = source.crd_files.source
        failures: list[str] = []
        _create_all(run, target, release, crds, failures)
        if crds and not failures:
            try:
                wait_crds_established(target.kube, crds)
            except ProcessFailed as exc:
                return result(False, str(exc))
        if failures:
            return result(False, f"CRDs refused: {'; '.join(failures)}")
        installed = f"its {len(crds)} CRD(s), installed from {origin}" if crds else "none of its objects"
        limit(label, f"not rehearsed: {source.unavailable}", f"{installed}; {source.stands_in}")
        if not crds:
            return True
        return result(
            True, f"{len(crds)} CRD(s) created and established (from {origin}); the chart's other objects not"
        )
    missing = source.files.missing()
    if missing:
        return result(False, missing)
    try:
        mark = time.monotonic()
        rendered = helm.render(
            inputs,
            key=key,
            source=source,
            workdir=run.r.work / "helm" / target.name,
            kube_version=run.r.kube_version,
            api_versions=target.kube.api_versions(),
            kubeconfig=target.plane.admin_kubeconfig,
        )
    except helm.RenderError as exc:
        return result(False, str(exc))
    mark = phase("render", mark)
    served = run.r.served_services(run, target, resource, rendered)
    for obj, services in unserved(rendered.manifests, served):
        rendered.manifests.remove(obj)
        programs = "; ".join(f"{s} ({_program_of(tuple(s.split('/', 1)), rendered.manifests)})" for s in services)
        run.r.limit(
            Limit(
                pulumi_k8s.describe(obj),
                "apply",
                f"release {release}: not applied: the API server would call {programs}, a program the rehearsal "
                "does not run (no binary of it at the pin: tools/rehearsal/binaries.py), so every request it "
                "admits would fail",
                "nothing: the requests it would admit are admitted unchecked",
                run.wave.name,
                run.stack,
                cluster=target.name,
            )
        )
    failures: list[str] = []
    new_crds = _create_all(run, target, release, rendered.crds, failures, skip_existing=True)
    new_crds += _create_all(run, target, release, rendered.owned_crds, failures)
    crd_names = [c["metadata"]["name"] for c in new_crds]
    if crd_names and not failures:
        try:
            wait_crds_established(target.kube, new_crds)
        except ProcessFailed as exc:  # helm install fails the same way: the CRDs never become established
            return result(False, f"{len(crd_names)} CRD(s) created; {exc}")
    mark = phase("CRDs", mark)
    created = 0
    for objects in (rendered.pre_hooks, rendered.manifests, rendered.post_hooks):
        created += len(_create_all(run, target, release, objects, failures))
        if failures:
            break
    mark = phase("create", mark)
    if failures:
        return result(
            False,
            f"helm install fails at {failures[0]}" + (f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""),
        )
    run.r.start_controllers(run, target, resource, rendered)
    played = sorted(
        {
            f"{c.get('name')} ({c.get('image', '?')})"
            for c in _workload_containers(rendered.manifests + rendered.pre_hooks + rendered.post_hooks)
            if runnable(c) is None
        }
    )
    if played:
        limit(
            f"{label}: container(s) {', '.join(played)}",
            "no program of the rehearsal runs their images (tools/rehearsal/binaries.py builds the ones it runs)",
            "kwok plays their pods: scheduled and bound by the real scheduler, then Running and Ready without a "
            "process",
        )
    if inputs.get("skipAwait"):
        return result(True, f"{len(crd_names)} CRD(s), {created} object(s) created (skipAwait)")
    waits = [o for o in rendered.manifests if o["kind"] in WAITED_KINDS and pulumi_k8s.awaited(o)]
    mark = time.monotonic()
    stand_in_failures: list[tuple[str, str]] = []  # (workload, why not ready)
    for obj in waits:
        outcome = pulumi_k8s.await_ready(
            target.kube,
            obj,
            why_pending=lambda ns, sel: run.r.pending_reason(target, ns, sel),
            helm_wait=True,
            before_probe=lambda: run.r.sync(target),
            give_up=lambda obj=obj: _stand_in_crashed(target.kube, obj),
        )
        if not outcome.ok:
            containers = ((obj.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or []
            stand_ins = [d for d in (stand_in(c) for c in containers) if d]
            if stand_ins:  # not the pinned program failing: the build's declared stand-in for it
                stand_in_failures.append((pulumi_k8s.describe(obj), f"{outcome.detail} ({'; '.join(stand_ins)})"))
                continue
            return result(
                False,
                f"{len(crd_names)} CRD(s), {created} object(s) created; helm waits (atomic, {inputs.get('timeout', 300)} s) "
                f"and rolls back: {pulumi_k8s.describe(obj)} {outcome.detail}",
            )
    stand_ins: dict[str, list[str]] = {}  # the reason a stand-in is built -> what stands in for which image
    for container in _workload_containers(rendered.manifests):
        if stand_in(container):
            flags = unknown_flags(container)
            without = f", without {', '.join(flags)} (flags only the pinned version knows)" if flags else ""
            reason = binaries.by_binary()[binary_for(container["image"]) or ""].stand_in
            stand_ins.setdefault(reason, []).append(f"{stand_in(container)}{without}")
    for reason, what in stand_ins.items():
        limit(
            f"{label}: the pinned programs", f"the pinned version is not built: {reason}", "; ".join(sorted(set(what)))
        )
    for workload, why in stand_in_failures:
        limit(
            f"{label}: {workload}",
            f"a stand-in for its pinned program did not become ready: {why}",
            "nothing: what it does is not rehearsed",
        )
    ready = len(waits) - len(stand_in_failures)
    phase("wait", mark)
    return result(True, f"{len(crd_names)} CRD(s), {created} object(s) created, {ready} of {len(waits)} ready")
