"""A plan's Helm release installed on its rehearsal cluster, as `helm install` (tools/rehearsal/helm.py) does it,
then the release's controllers started where the rehearsal runs them."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tools.plan.engine import PlannedResource
from tools.rehearsal import binaries, helm, helm_wait, pulumi_k8s
from tools.rehearsal.charts import load_files
from tools.rehearsal.kube import ApiError, Kube
from tools.rehearsal.kubelet import container_binary, runnable, stand_in, unknown_flags
from tools.rehearsal.processes import ProcessFailed, wait_until
from tools.rehearsal.report import Check, Limit

if TYPE_CHECKING:
    from tools.rehearsal.runner import StackRun, Target

# pulumi-kubernetes@v4.32.0:provider/pkg/provider/helm_release.go L64 (defaultTimeoutSeconds), L607-L612: a
# release's `timeout` (300 s unless set) bounds each hook's wait and the install's; `disableWebhooks` disables hooks.
RELEASE_TIMEOUT_SECONDS = 300
# Helm deletes hooks with background propagation (helm.sh/helm/v3@v3.20.2:pkg/kube/client.go L489-L491).
HOOK_DELETE_PROPAGATION = "Background"
WEBHOOK_KINDS = {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
STAND_IN_CRASH_LOOP_RESTARTS = 3  # restarts after which a stand-in is taken as crash-looping (back-off 10, 20, 40 s)


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
            template = (workload.get("spec") or {}).get("template") or {}  # none in a patch of its replicas
            labels = (template.get("metadata") or {}).get("labels") or {}
            containers = (template.get("spec") or {}).get("containers") or []
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
        try:
            _in_release_namespace(run, target, obj)
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


def _in_release_namespace(run: StackRun, target: Target, obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` with the release's namespace when it is namespaced and names none (Helm builds every object with it)."""
    obj.setdefault("metadata", {})
    if _namespaced(target.kube, obj) and not obj["metadata"].get("namespace"):
        obj["metadata"]["namespace"] = run.release_namespace
    return obj


def _api_version_of(obj: dict[str, Any]) -> str:
    return str(obj.get("apiVersion", "v1"))


def _hook_state(kube: Kube, hook: helm.Hook) -> tuple[bool | None, str]:
    """(True: done, False: failed, None: not yet; what was seen) as Helm's watch of a hook judges it
    (helm.sh/helm/v3@v3.20.2:pkg/kube/client.go L745-L846): a Job is done when its Complete condition is True and
    has failed when its Failed condition is; a Pod when Succeeded, failed when Failed; other kinds once they exist."""
    meta = hook.obj["metadata"]
    live = kube.get(_api_version_of(hook.obj), hook.kind, meta["name"], meta.get("namespace"))
    if live is None:
        return (None, "not found") if hook.kind in ("Job", "Pod") else (True, "deleted")
    status = live.get("status") or {}
    if hook.kind == "Job":
        for condition in status.get("conditions") or []:
            if condition.get("status") != "True":
                continue
            if condition.get("type") == "Complete":
                return True, "complete"
            if condition.get("type") == "Failed":
                return False, f"job {meta['name']} failed: {condition.get('reason', '')}"
        return (
            None,
            f"{status.get('active', 0)} active, {status.get('succeeded', 0)} succeeded, {status.get('failed', 0)} failed",
        )
    if hook.kind == "Pod":
        phase = status.get("phase", "Pending")
        if phase == "Succeeded":
            return True, "succeeded"
        if phase == "Failed":
            return False, f"pod {meta['name']} failed"
        return None, f"phase {phase}"
    return True, "created"


def _delete_hook(target: Target, hook: helm.Hook, timeout: float) -> str | None:
    """Delete a hook's object and wait until it is gone, as Helm's deleteHookByPolicy does (never a CRD:
    pkg/action/hooks.go L147-L172); what failed, or None."""
    if hook.kind == "CustomResourceDefinition":
        return None
    meta = hook.obj["metadata"]
    try:
        target.kube.delete(
            _api_version_of(hook.obj),
            hook.kind,
            meta["name"],
            meta.get("namespace"),
            propagation=HOOK_DELETE_PROPAGATION,
        )
        wait_until(
            f"{pulumi_k8s.describe(hook.obj)} deleted",
            lambda: target.kube.get(_api_version_of(hook.obj), hook.kind, meta["name"], meta.get("namespace")) is None,
            timeout=timeout,
        )
    except (ApiError, ProcessFailed) as exc:
        return f"{pulumi_k8s.describe(hook.obj)}: {exc}"
    return None


def run_hooks(
    run: StackRun, target: Target, event: str, hooks: list[helm.Hook], *, timeout: float, wait: float
) -> tuple[bool, str]:
    """The release's hooks of `event` as Helm's execHook runs them (helm.sh/helm/v3@v3.20.2:pkg/action/hooks.go
    L36-L133): in order, each one's object deleted first under before-hook-creation, created, and watched until done
    (`wait` seconds here, the release's `timeout` in Helm) before the next; the first that fails or does not finish
    fails the install (its hook-failed policy and the earlier hooks' hook-succeeded policy applied). Once all are
    done, those with hook-succeeded are deleted, the last first. (ok, what happened)."""
    done: list[str] = []
    for number, hook in enumerate(hooks):
        _in_release_namespace(run, target, hook.obj)
        what = f"{event} hook {pulumi_k8s.describe(hook.obj)}"
        if helm.BEFORE_HOOK_CREATION in hook.delete_policies:
            problem = _delete_hook(target, hook, timeout)
            if problem:
                return False, f"{what}: its earlier object could not be deleted: {problem}"
        try:
            target.kube.create(hook.obj, field_manager=helm.HELM_FIELD_MANAGER)
        except ApiError as exc:
            return False, f"{what} refused by the API server: {exc}"
        started, deadline = time.monotonic(), time.monotonic() + wait
        while True:
            run.r.sync(target)
            state, seen = _hook_state(target.kube, hook)
            if state is not None or time.monotonic() >= deadline:
                break
            time.sleep(1.0)
        if state:
            if hook.kind in ("Job", "Pod"):
                done.append(f"{hook.kind} {hook.name} {seen} in {time.monotonic() - started:.0f} s")
            continue
        if state is None:
            selector = _hook_pods(hook)
            pods = run.r.pending_reason(target, hook.obj["metadata"]["namespace"], selector) if selector else ""
            seen = (
                f"not complete after {wait:.0f} s ({seen}{'; ' + pods if pods else ''}); Helm waits up to the "
                f"release's timeout ({timeout:.0f} s), then fails the install (failed {event}: timed out waiting "
                "for the condition)"
            )
        if helm.HOOK_FAILED in hook.delete_policies:
            _delete_hook(target, hook, timeout)
        for earlier in hooks[:number]:
            if helm.HOOK_SUCCEEDED in earlier.delete_policies:
                _delete_hook(target, earlier, timeout)
        return False, f"{what}: {seen}"
    for hook in reversed(hooks):
        if helm.HOOK_SUCCEEDED in hook.delete_policies:
            problem = _delete_hook(target, hook, timeout)
            if problem:
                return False, f"{event} hooks done, but deleting one failed: {problem}"
    return True, f"{len(hooks)} {event} hook(s) run" + (f" ({', '.join(done)})" if done else "")


def _hook_pods(hook: helm.Hook) -> str:
    """The label selector of a hook's pods: a Job's (the Job controller labels them with its name)."""
    if hook.kind == "Job":
        return f"batch.kubernetes.io/job-name={hook.name}"
    return ""


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


def _program_of(service: str, objects: list[dict[str, Any]]) -> str:
    """The images of the release's workloads a Service (`namespace/name`) selects (what the API server would call
    through it)."""
    name = service.split("/", 1)[-1]
    svc = next(
        (o for o in objects if o["kind"] == "Service" and o["metadata"].get("name") == name),
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
    """A workload's pod whose stand-in program (not the pinned one) is crash-looping: it will not get better by
    waiting. One exit is not that: a program may lose a race on its first start and get past it on the next (two
    Volcano admission replicas updating the same webhook configuration, volcano@v1.15.1 and v1.14.1 alike:
    cmd/webhook-manager/app/util.go L43-L75, the loser exits on the conflict)."""
    template = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    stand_ins = {c["name"] for c in template.get("containers") or [] if stand_in(c)}
    labels = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    if not stand_ins or not labels:
        return None
    selector = ",".join(f"{k}={v}" for k, v in labels.items())
    for pod in kube.list("v1", "Pod", obj["metadata"].get("namespace"), selector=selector):
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            waiting = (status.get("state") or {}).get("waiting") or {}
            if status["name"] in stand_ins and status.get("restartCount", 0) >= STAND_IN_CRASH_LOOP_RESTARTS:
                return f"pod {pod['metadata']['name']}: {status['name']} exited: {waiting.get('message', '')}"
    return None


def install_release(run: StackRun, resource: PlannedResource) -> bool | ReleaseWait:
    """The release on its cluster; one `apply` check for the release, one per object the server refuses. What Helm
    then waits for is returned to be looked at beside the stack's other resources (ReleaseWait), unless nothing is."""
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
    namespace = run.release_namespace = str(inputs.get("namespace") or "default")
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
        run.r.start_controllers(run, target, resource, None)
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
        programs = "; ".join(f"{s} ({_program_of(s, rendered.manifests)})" for s in services)
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
    failures = []
    new_crds = _create_all(run, target, release, rendered.crds, failures, skip_existing=True)
    new_crds += _create_all(run, target, release, rendered.owned_crds, failures)
    crd_names = [c["metadata"]["name"] for c in new_crds]
    if crd_names and not failures:
        try:
            wait_crds_established(target.kube, new_crds)
        except ProcessFailed as exc:  # helm install fails the same way: the CRDs never become established
            return result(False, f"{len(crd_names)} CRD(s) created; {exc}")
    mark = phase("CRDs", mark)
    timeout = float(inputs.get("timeout") or RELEASE_TIMEOUT_SECONDS)
    hooks_run = not inputs.get("disableWebhooks")
    hooks_done: list[str] = []
    if hooks_run and rendered.pre_hooks:
        ok, detail = run_hooks(
            run, target, helm.PRE_INSTALL, rendered.pre_hooks, timeout=timeout, wait=pulumi_k8s.AWAIT_SECONDS
        )
        mark = phase("pre-install hooks", mark)
        if not ok:
            return result(False, f"{len(crd_names)} CRD(s) created; helm install fails: {detail}")
        hooks_done.append(detail)
    created = len(_create_all(run, target, release, rendered.manifests, failures))
    phase("create", mark)
    if failures:
        return result(
            False,
            f"helm install fails at {failures[0]}" + (f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""),
        )
    run.r.start_controllers(run, target, resource, rendered)
    hook_objects = [h.obj for h in rendered.pre_hooks + rendered.post_hooks] if hooks_run else []
    played = sorted(
        {
            f"{c.get('name')} ({c.get('image', '?')})"
            for c in _workload_containers(rendered.manifests + hook_objects)
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
    wait_for_jobs = bool(inputs.get("waitForJobs"))
    waits = (
        []
        if inputs.get("skipAwait")
        else [o for o in rendered.manifests if helm_wait.waited(o, wait_for_jobs=wait_for_jobs)]
    )
    created_text = f"{len(crd_names)} CRD(s), {created} object(s) created"
    stand_ins: dict[str, list[str]] = {}  # the reason a stand-in is built -> what stands in for which image
    for container in _workload_containers(rendered.manifests):
        if stand_in(container):
            flags = unknown_flags(container)
            without = f", without {', '.join(flags)} (flags only the pinned version knows)" if flags else ""
            reason = binaries.by_binary()[container_binary(container) or ""].stand_in
            stand_ins.setdefault(reason, []).append(f"{stand_in(container)}{without}")

    def finish(mark: float) -> bool:
        """The wait is over: the stand-ins reported, then the post-install hooks, as Helm runs them after its wait."""
        for reason, what in stand_ins.items():
            limit(
                f"{label}: the pinned programs",
                f"the pinned version is not built: {reason}",
                "; ".join(sorted(set(what))),
            )
        mark = phase("wait", mark)
        if hooks_run and rendered.post_hooks:
            run.release_namespace = namespace  # other releases may have been installed during the wait
            ok, detail = run_hooks(
                run, target, helm.POST_INSTALL, rendered.post_hooks, timeout=timeout, wait=pulumi_k8s.AWAIT_SECONDS
            )
            phase("post-install hooks", mark)
            if not ok:
                return result(False, f"{created_text}, {len(waits)} ready; helm install fails: {detail}")
            hooks_done.append(detail)
        waited = " (skipAwait)" if inputs.get("skipAwait") else f", {len(waits)} ready"
        hooks_text = "".join(f"; {d}" for d in hooks_done)
        return result(True, f"{created_text}{waited}{hooks_text}")

    def failed(obj: dict[str, Any], detail: str) -> bool:
        containers = ((obj.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or []
        # A stand-in's failure fails too: the pinned program may fail the same way (its log says which).
        stood_in = "".join(f" ({d})" for d in (stand_in(c) for c in containers) if d)
        return result(
            False,
            f"{created_text}; helm waits (atomic, {timeout:.0f} s) and rolls back: {pulumi_k8s.describe(obj)} "
            f"{detail}{stood_in}",
        )

    if not waits:
        return finish(time.monotonic())
    return ReleaseWait(run, target, waits, finish, failed, timeout, wait_for_jobs=wait_for_jobs)


class ReleaseWait:
    """A release whose objects are created, being waited for as `helm install --wait` does, one look at a time: the
    stack's runner looks at it beside its other awaits and releases, as `pulumi up` installs independent releases
    side by side. Each look is one of Helm's polls (pkg/kube/wait.go L61-L80): the objects in install order, up to
    the first not ready, so an object ready at one look is asked again at the next; the wait ends at a look that
    finds them all ready, then `finish` (post-install hooks, the release's check). An object gone fails it at once
    (a NotFound is not retried). Where Helm waits its whole timeout, the object holding the wait is waited for up to
    AWAIT_SECONDS from the look that first found it holding it (as the rehearsal's Helm wait always did), within the
    release's timeout."""

    def __init__(
        self,
        run: StackRun,
        target: Target,
        waits: list[dict[str, Any]],
        finish: Callable[[float], bool],
        failed: Callable[[dict[str, Any], str], bool],
        timeout: float,
        *,
        wait_for_jobs: bool = False,
    ):
        self.run, self.target, self.waits = run, target, list(waits)
        self.wait_for_jobs = wait_for_jobs
        self._finish, self._failed = finish, failed
        self.started = time.monotonic()
        self.timeout = timeout  # Helm's, for the whole wait
        self.turns: dict[int, float] = {}  # an object's index -> when a look first found it holding the wait

    def look(self) -> bool | None:
        """One look (the cluster synced by the caller): None while an object is not ready, else the outcome. The
        time between two looks (the stack installing another release) counts: the clusters' kubelets run on their
        own meanwhile (kubelet.py's loop)."""
        kube = self.target.kube
        for index, obj in enumerate(self.waits):
            ready, last = helm_wait.ready(kube, obj, wait_for_jobs=self.wait_for_jobs)
            if ready:
                continue
            if last == helm_wait.NOT_FOUND:
                return self._failed(obj, "not found: deleted while Helm waited for it")
            now = time.monotonic()
            turn = self.turns.setdefault(index, now)
            if now >= min(turn + pulumi_k8s.AWAIT_SECONDS, self.started + self.timeout):
                return self._failed(obj, pulumi_k8s.not_ready(obj, last, now - turn, self._why_pending))
            reason = _stand_in_crashed(kube, obj)
            if reason:  # what the rest of the wait cannot change
                return self._failed(obj, f"not ready: {last}; {reason}")
            return None
        return self._finish(self.started)

    def _why_pending(self, namespace: str, selector: str) -> str:
        return self.run.r.pending_reason(self.target, namespace, selector)
