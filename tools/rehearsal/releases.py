"""A plan's Helm release installed on its rehearsal cluster, as `helm install` (tools/rehearsal/helm.py) does it,
then the release's controllers started where the rehearsal runs them."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from tools.plan.engine import PlannedResource
from tools.rehearsal import helm, pulumi_k8s
from tools.rehearsal.charts import load_files
from tools.rehearsal.kube import ApiError, Kube
from tools.rehearsal.kubelet import stand_in, unknown_flags
from tools.rehearsal.processes import ProcessFailed
from tools.rehearsal.report import Check

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


def unserved(objects: list[dict[str, Any]], served: set[tuple[str, str]]) -> list[tuple[dict[str, Any], list[str]]]:
    """Webhook configurations and APIServices whose Services no process of the rehearsal serves, with them."""
    found = []
    for obj in objects:
        missing = [f"{ns}/{name}" for ns, name in called_services(obj) if (ns, name) not in served]
        if missing:
            found.append((obj, missing))
    return found


def _create_all(run: StackRun, target: Target, release: str, objects: list[dict[str, Any]], failures: list[str]) -> int:
    created = 0
    for obj in objects:
        obj.setdefault("metadata", {})
        try:
            if _namespaced(target.kube, obj) and not obj["metadata"].get("namespace"):
                obj["metadata"]["namespace"] = run.release_namespace
            target.kube.create(obj, field_manager=helm.HELM_FIELD_MANAGER)
            created += 1
        except ApiError as exc:
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

    def result(ok: bool | None, detail: str) -> bool:
        check = run._check(resource, "apply", ok, detail, name=label)
        check.seconds = round(time.monotonic() - started, 1)
        run.r.check(check)
        return ok is not False

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
        installed = f"; its {len(crds)} CRD(s) installed from {origin}" if crds else ""
        if failures:
            return result(False, f"CRDs refused: {'; '.join(failures)}")
        return result(None, f"not rehearsed: {source.unavailable}{installed}")
    missing = source.files.missing()
    if missing:
        return result(False, missing)
    try:
        rendered = helm.render(
            inputs,
            key=key,
            source=source,
            workdir=run.r.work / "helm" / target.name,
            kube_version=run.r.kube_version,
            api_versions=target.kube.api_versions(),
        )
    except helm.RenderError as exc:
        return result(False, str(exc))
    served = run.r.served_services(run, target, resource, rendered)
    for obj, services in unserved(rendered.manifests, served):
        rendered.manifests.remove(obj)
        run.r.check(
            Check(
                pulumi_k8s.describe(obj),
                "apply",
                None,
                f"release {release}: not applied: the API server would call {', '.join(services)}, whose server "
                "the rehearsal does not run (its binary is not built); the kinds it admits are admitted unchecked",
                run.wave.name,
                run.stack,
                cluster=target.name,
                object=pulumi_k8s.describe(obj),
            )
        )
    failures: list[str] = []
    _create_all(run, target, release, rendered.crds, failures)
    crd_names = [c["metadata"]["name"] for c in rendered.crds]
    if crd_names and not failures:
        try:
            wait_crds_established(target.kube, rendered.crds)
        except ProcessFailed as exc:  # helm install fails the same way: the CRDs never become established
            return result(False, f"{len(crd_names)} CRD(s) created; {exc}")
    created = 0
    for phase in (rendered.pre_hooks, rendered.manifests, rendered.post_hooks):
        created += _create_all(run, target, release, phase, failures)
        if failures:
            break
    if failures:
        return result(
            False,
            f"helm install fails at {failures[0]}" + (f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""),
        )
    run.r.start_controllers(run, target, resource, rendered)
    if inputs.get("skipAwait"):
        return result(True, f"{len(crd_names)} CRD(s), {created} object(s) created (skipAwait)")
    waits = [o for o in rendered.manifests if o["kind"] in WAITED_KINDS and pulumi_k8s.awaited(o)]
    stand_in_failures = []
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
                stand_in_failures.append(f"{pulumi_k8s.describe(obj)} {outcome.detail} ({'; '.join(stand_ins)})")
                continue
            return result(
                False,
                f"{len(crd_names)} CRD(s), {created} object(s) created; helm waits (atomic, {inputs.get('timeout', 300)} s) "
                f"and rolls back: {pulumi_k8s.describe(obj)} {outcome.detail}",
            )
    dropped = sorted(
        {
            f"{stand_in(c)} without {', '.join(unknown_flags(c))}"
            for o in waits
            for c in (((o.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
            if unknown_flags(c)
        }
    )
    if dropped and not stand_in_failures:
        return result(
            None,
            f"not rehearsed in full: {len(waits)} of {len(waits)} ready, a stand-in run without the flags of the "
            f"pinned version it does not know: {'; '.join(dropped)}",
        )
    if stand_in_failures:
        return result(
            None,
            f"not rehearsed in full: {len(waits) - len(stand_in_failures)} of {len(waits)} ready; a stand-in, not "
            f"the pinned program, is not: {'; '.join(stand_in_failures)}",
        )
    return result(True, f"{len(crd_names)} CRD(s), {created} object(s) created, {len(waits)} ready")
