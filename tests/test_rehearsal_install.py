"""A Helm release installed by the rehearsal as Helm v3.20.2's install action installs it (catalog facts
`helm-install-order-and-wait`, `helm-install-runs-hooks`): its hooks run one at a time, in Helm's order, each waited
for before the next and before any of the release's own objects; a hook Job that never completes fails the
release, naming it. On a cluster of the test's own (no binaries)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tools.plan.engine import PlannedResource
from tools.rehearsal import helm, pulumi_k8s, releases
from tools.rehearsal.charts import ChartSource
from tools.rehearsal.kube import ApiError
from tools.rehearsal.report import Check, Limit

RELEASE, NAMESPACE = "gateway", "gateway-system"


def _doc(source: str, body: str) -> str:
    return f"---\n# Source: gateway/templates/{source}\n{body}"


def _hook(kind: str, name: str, events: str, weight: str | None = None, policy: str | None = None) -> str:
    api = {"Job": "batch/v1", "ClusterRole": "rbac.authorization.k8s.io/v1"}.get(kind, "v1")
    annotations = f'    helm.sh/hook: "{events}"\n'
    if weight is not None:
        annotations += f'    helm.sh/hook-weight: "{weight}"\n'
    if policy is not None:
        annotations += f'    helm.sh/hook-delete-policy: "{policy}"\n'
    spec = (
        "spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
        "      - name: certgen\n        image: docker.io/envoyproxy/gateway:v1.9.0\n"
        if kind == "Job"
        else ""
    )
    return f"apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\n  annotations:\n{annotations}{spec}"


# What `helm template` prints for a chart like gateway-helm v1.9.0 (templates/certgen.yaml, certgen-rbac.yaml):
# hooks in several templates, with weights, names, kinds, events and delete policies to order them by.
TEMPLATE = "".join(
    [
        _doc("certgen-rbac.yaml", _hook("ServiceAccount", "certgen", "pre-install, pre-upgrade", "-1")),
        _doc("certgen-rbac.yaml", _hook("ClusterRole", "certgen", "pre-install, pre-upgrade", "-1")),
        _doc("certgen.yaml", _hook("Job", "certgen", "pre-install, pre-upgrade")),
        _doc("a-first.yaml", _hook("ConfigMap", "zz-settings", "pre-install", "-1")),
        _doc("a-first.yaml", _hook("ConfigMap", "aa-settings", "pre-install", " 2")),  # not an integer: weight 0
        _doc("upgrade.yaml", _hook("Job", "migrate", "pre-upgrade", "-5")),  # not an install event
        _doc("odd.yaml", _hook("Job", "odd", "pre-install, crd-install")),  # an unknown event: skipped
        _doc("check.yaml", _hook("Job", "check", "post-install", "1", "before-hook-creation,hook-succeeded")),
        _doc("config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gateway-config\n"),
        _doc("sa.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: gateway\n"),
    ]
)


def test_hooks_are_split_out_and_ordered_as_helm_runs_them():
    rendered = helm.split_rendered(TEMPLATE, RELEASE, NAMESPACE)
    # By weight, then name, then (same weight and name) kind in InstallOrder: ServiceAccount before ClusterRole
    # before Job (helm.sh/helm/v3@v3.20.2:pkg/action/hooks.go L135-L146, pkg/releaseutil/kind_sorter.go L31-L68).
    assert [(h.kind, h.name, h.weight) for h in rendered.pre_hooks] == [
        ("ServiceAccount", "certgen", -1),
        ("ClusterRole", "certgen", -1),
        ("ConfigMap", "zz-settings", -1),
        ("ConfigMap", "aa-settings", 0),
        ("Job", "certgen", 0),
    ]
    assert [(h.kind, h.name, h.delete_policies) for h in rendered.post_hooks] == [
        ("Job", "check", ("before-hook-creation", "hook-succeeded"))
    ]
    assert rendered.pre_hooks[-1].delete_policies == ("before-hook-creation",)  # the default (hooks.go L52-L59)
    # The templates' objects are the release's own, in kind order; no hook among them, none of the skipped ones.
    assert [(o["kind"], o["metadata"]["name"]) for o in rendered.manifests] == [
        ("ServiceAccount", "gateway"),
        ("ConfigMap", "gateway-config"),
    ]
    assert rendered.manifests[0]["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "Helm"}
    assert "labels" not in rendered.pre_hooks[0].obj["metadata"]  # hooks are not the release's own


def test_kinds_helm_does_not_list_go_last_alphabetically():
    kinds = ["ValidatingWebhookConfiguration", "Deployment", "APIService", "MutatingWebhookConfiguration"]
    ordered = sorted(kinds, key=helm.kind_rank)
    # kind_sorter.go L135-L160 lessByKind: listed kinds in InstallOrder, then the others by name.
    assert ordered == ["Deployment", "APIService", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]


class Cluster:
    """An API server of the test's own: what is created, in order, and a Job controller the test drives."""

    def __init__(self, job_outcome: str | None):
        self.objects: dict[tuple[str, str, str | None], dict[str, Any]] = {}
        self.created: list[str] = []
        self.deleted: list[str] = []
        self.job_outcome = job_outcome  # "Complete" / "Failed" once created; None: never finishes

    def resource(self, api_version: str, kind: str) -> Any:
        return SimpleNamespace(namespaced=kind not in ("ClusterRole", "Namespace"))

    def create(self, obj: dict[str, Any], *, field_manager: str) -> dict[str, Any]:
        meta = obj["metadata"]
        key = (obj["kind"], meta["name"], meta.get("namespace"))
        if key in self.objects:
            raise ApiError(409, "AlreadyExists", f"{obj['kind']} {meta['name']} already exists")
        live = {**obj, "status": {}}
        if obj["kind"] == "Service":  # the API server allocates its cluster IP (Helm's wait asks for one)
            live["spec"] = {**obj["spec"], "clusterIP": f"10.96.0.{len(self.objects) + 10}"}
        if obj["kind"] == "Job" and self.job_outcome is not None:
            reason = "BackoffLimitExceeded" if self.job_outcome == "Failed" else ""
            live["status"] = {"conditions": [{"type": self.job_outcome, "status": "True", "reason": reason}]}
        self.objects[key] = live
        self.created.append(f"{obj['kind']} {meta['name']}")
        return live

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        return self.objects.get((kind, name, namespace))

    def delete(self, api_version, kind, name, namespace=None, *, propagation=None) -> None:
        if self.objects.pop((kind, name, namespace), None) is not None:
            self.deleted.append(f"{kind} {name} ({propagation})")

    def list(self, api_version, kind, namespace=None, *, selector=None) -> list[dict[str, Any]]:
        return []

    def api_versions(self) -> list[str]:
        return ["v1", "batch/v1"]


class Run:
    """The StackRun a release is installed from: its wave and stack, and where checks and limits go."""

    def __init__(self, cluster: Cluster):
        self.checks: list[Check] = []
        self.limits: list[Limit] = []
        self.release_namespace = "default"
        self.wave, self.stack = SimpleNamespace(name="environment"), "dev"
        self.plan = SimpleNamespace(cluster_of=lambda resource: "dev-use1")
        self.cluster = SimpleNamespace(
            name="dev-use1",
            kube=cluster,
            plane=SimpleNamespace(admin_kubeconfig=Path("/nonexistent")),
        )
        self.r = SimpleNamespace(
            work=Path("/nonexistent"),
            kube_version="v1.33.13",
            check=self.checks.append,
            limit=self.limits.append,
            sync=lambda target: None,
            pending_reason=lambda target, namespace, selector: f"pods of {selector} Pending",
            served_services=lambda *args: set(),
            start_controllers=lambda *args: None,
        )

    def target(self, resource: PlannedResource) -> Any:
        return self.cluster

    def _check(self, resource, category, ok, detail, name=None) -> Check:
        return Check(name or resource.name, category, ok, detail, self.wave.name, self.stack)

    def _limit(self, resource, category, obj, reason, stands_in) -> Limit:
        return Limit(obj, category, reason, stands_in, self.wave.name, self.stack)


def _begin(monkeypatch, cluster: Cluster, template: str = TEMPLATE, **inputs: Any) -> tuple[Run, Any, list[float]]:
    """The install of a release rendering `template`: its run, what install_release returned, and the clock."""
    source = ChartSource(files=SimpleNamespace(missing=lambda: None, source="gateway-helm"))  # type: ignore[arg-type]
    monkeypatch.setattr(helm, "release_source", lambda inputs: (("gateway-helm", "v1.9.0"), source))
    monkeypatch.setattr(helm, "render", lambda inputs, **_: helm.split_rendered(template, RELEASE, NAMESPACE))
    monkeypatch.setattr(pulumi_k8s, "AWAIT_SECONDS", 1.5)
    # A clock that a sleep moves on: the hook waits pass in no time, instead of polling for AWAIT_SECONDS.
    now = [0.0]
    monkeypatch.setattr(releases.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(releases.time, "sleep", lambda seconds: now.__setitem__(0, now[0] + seconds))
    resource = PlannedResource(
        urn="urn:pulumi:dev::p::kubernetes:helm.sh/v3:Release::dev-use1-gateway",
        type="kubernetes:helm.sh/v3:Release",
        name="dev-use1-gateway",
        parent=None,
        provider=None,
        custom=True,
        inputs={"name": RELEASE, "namespace": NAMESPACE, "chart": "gateway-helm", "version": "v1.9.0", **inputs},
        options={},
    )
    run = Run(cluster)
    return run, releases.install_release(run, resource), now  # type: ignore[arg-type]


def _look(run: Run, wait: Any) -> bool | None:
    """A look of the stack's: the cluster's kubelet runs, then the release's wait is looked at."""
    run.r.sync(run.cluster)
    return wait.look()


def _release_check(run: Run) -> Check:
    (check,) = [c for c in run.checks if c.name.startswith("release gateway")]
    return check


def _install(monkeypatch, cluster: Cluster, **inputs: Any) -> Check:
    run, installed, _ = _begin(monkeypatch, cluster, **inputs)
    assert installed in (True, False)  # nothing to wait for: done as it returns
    return _release_check(run)


def test_pre_install_hooks_complete_before_the_release_s_objects_and_post_install_hooks_after(monkeypatch):
    cluster = Cluster("Complete")
    check = _install(monkeypatch, cluster)
    assert check.ok is True, check.detail
    assert cluster.created == [
        "ServiceAccount certgen",
        "ClusterRole certgen",
        "ConfigMap zz-settings",
        "ConfigMap aa-settings",
        "Job certgen",
        "ServiceAccount gateway",
        "ConfigMap gateway-config",
        "Job check",
    ]
    # hook-succeeded: the post-install Job is deleted once it succeeded, with Helm's background propagation.
    assert cluster.deleted == ["Job check (Background)"]
    assert "5 pre-install hook(s) run (Job certgen complete in" in check.detail
    assert "1 post-install hook(s) run (Job check complete in" in check.detail


def test_a_pre_install_job_that_never_completes_fails_the_release_naming_it(monkeypatch):
    """The old rehearsal created the hooks and went on: the release passed and its pods started without the
    Secret the Job makes (Envoy Gateway's certgen)."""
    cluster = Cluster(None)
    check = _install(monkeypatch, cluster)
    assert check.ok is False
    assert "helm install fails: pre-install hook Job gateway-system/certgen: not complete after 2 s" in check.detail
    assert "pods of batch.kubernetes.io/job-name=certgen Pending" in check.detail
    assert "release's timeout (300 s)" in check.detail
    # Nothing of the release's own was created: Helm never gets past the hook.
    assert "ServiceAccount gateway" not in cluster.created and "ConfigMap gateway-config" not in cluster.created


def test_a_failed_pre_install_job_fails_the_release_with_its_reason(monkeypatch):
    cluster = Cluster("Failed")
    check = _install(monkeypatch, cluster, timeout=600)
    assert check.ok is False
    assert (
        "helm install fails: pre-install hook Job gateway-system/certgen: job certgen failed: BackoffLimitExceeded"
        in check.detail
    )
    assert "ConfigMap gateway-config" not in cluster.created


def test_disabled_hooks_are_not_run(monkeypatch):
    """pulumi-kubernetes passes `disableWebhooks` as Helm's DisableHooks (helm_release.go L607)."""
    cluster = Cluster(None)
    check = _install(monkeypatch, cluster, disableWebhooks=True)
    assert check.ok is True
    assert cluster.created == ["ServiceAccount gateway", "ConfigMap gateway-config"]


@pytest.mark.parametrize(("weight", "expected"), [("-3", -3), ("+2", 2), ("2 ", 0), ("", 0), ("two", 0)])
def test_a_hook_weighs_what_go_reads_as_an_integer(weight, expected):
    """manifest_sorter.go L227-L234: strconv.Atoi, else 0."""
    obj = {
        "kind": "Job",
        "metadata": {"name": "x", "annotations": {"helm.sh/hook": "pre-install", "helm.sh/hook-weight": weight}},
    }
    hook = helm.parse_hook(obj, "t.yaml")
    assert hook is not None and hook.weight == expected


def planned(urn_type: str, name: str, *, depends_on: tuple[str, ...] = ()) -> PlannedResource:
    """A resource of prod.use1's plan; `depends_on`: "<type>=<name>" of each resource it names in dependsOn."""
    return PlannedResource(
        urn=f"urn:pulumi:prod.use1::p::{urn_type}::{name}",
        type=urn_type,
        name=name,
        parent=None,
        provider=None,
        custom=True,
        inputs={},
        options={"dependsOn": [f"urn:pulumi:prod.use1::p::{t}::{n}" for t, n in (d.split("=") for d in depends_on)]},
    )


def test_what_the_rehearsal_does_not_execute_is_a_limit_not_a_pass():
    """A cloud resource, a random value and a command `pulumi up` runs on the deployer's machine are taken as done;
    each type is declared once per stack as a limit with its reason. The tls provider's resources (computed by the
    rehearsal's plan) and the Kubernetes providers (its clusters) are executed: no limit."""
    from tools.rehearsal.runner import StackRun

    resources = [
        planned("aws:ec2/vpc:Vpc", "prod-use1-vpc"),
        planned("aws:eks/nodeGroup:NodeGroup", "prod-use1-h100"),
        planned("aws:eks/nodeGroup:NodeGroup", "prod-use1-l40s"),
        planned("command:local:Command", "prod-use1-karmada-apiserver-reachable"),
        planned("random:index/randomPassword:RandomPassword", "prod-use1-redis"),
        planned("tls:index/privateKey:PrivateKey", "prod-use1-karmada-ca-key"),
        planned("pulumi:providers:kubernetes", "prod-use1"),
    ]
    plan = SimpleNamespace(resources=resources, by_urn={r.urn: r for r in resources}, descendants=lambda urn: [])
    limits: list[Limit] = []
    checks: list[Check] = []
    rehearsal = SimpleNamespace(limit=limits.append, check=checks.append)
    StackRun(rehearsal, SimpleNamespace(name="canary"), "prod.use1", plan).run()  # type: ignore[arg-type]
    assert checks == []
    assert [(lim.object, lim.wave, lim.stack) for lim in limits] == [
        ("aws:ec2/vpc:Vpc x1 (prod-use1-vpc)", "canary", "prod.use1"),
        ("aws:eks/nodeGroup:NodeGroup x2 (prod-use1-h100, prod-use1-l40s)", "canary", "prod.use1"),
        ("command:local:Command x1 (prod-use1-karmada-apiserver-reachable)", "canary", "prod.use1"),
        ("random:index/randomPassword:RandomPassword x1 (prod-use1-redis)", "canary", "prod.use1"),
    ]
    reasons = {lim.object.split(" ", 1)[0]: (lim.reason, lim.stands_in) for lim in limits}
    assert (
        reasons["aws:ec2/vpc:Vpc"][0] == "a cloud resource, and the rehearsal has no cloud account: it is not created"
    )
    assert "kwok nodes" in reasons["aws:eks/nodeGroup:NodeGroup"][1]
    assert "deployer's machine" in reasons["command:local:Command"][0]
    assert "fixed value" in reasons["random:index/randomPassword:RandomPassword"][0]


LOAD_BALANCER = _doc(
    "service.yaml",
    "apiVersion: v1\nkind: Service\nmetadata:\n  name: gateway\nspec:\n  type: LoadBalancer\n"
    "  selector:\n    app: gateway\n  ports:\n  - port: 443\n",
)

ADMIN_LOAD_BALANCER = LOAD_BALANCER.replace("name: gateway\n", "name: gateway-admin\n")


def test_helm_s_wait_is_looked_at_beside_the_stack_and_post_install_hooks_run_after_it(monkeypatch):
    """The release's objects are created and Helm's wait is handed back (ReleaseWait), to be looked at beside the
    stack's other resources; its post-install hooks run once the wait is over (Helm asks a Service only for its load
    balancer's address)."""
    cluster = Cluster("Complete")
    run, wait, _ = _begin(monkeypatch, cluster, TEMPLATE + LOAD_BALANCER)
    assert isinstance(wait, releases.ReleaseWait)
    assert "Service gateway" in cluster.created and "Job check" not in cluster.created
    assert _look(run, wait) is None and _look(run, wait) is None
    assert not [c for c in run.checks if c.name.startswith("release gateway")]
    cluster.objects[("Service", "gateway", NAMESPACE)]["status"] = {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}
    assert _look(run, wait) is True
    assert cluster.created[-1] == "Job check"  # the post-install hook, after the wait
    check = _release_check(run)
    assert check.ok is True and "1 ready" in check.detail, check.detail


def test_a_release_whose_object_is_not_ready_in_time_fails_naming_it(monkeypatch):
    cluster = Cluster("Complete")
    run, wait, now = _begin(monkeypatch, cluster, TEMPLATE + LOAD_BALANCER)
    assert _look(run, wait) is None
    now[0] += 2.0  # past the object's 1.5 s
    assert _look(run, wait) is False
    check = _release_check(run)
    assert check.ok is False
    assert (
        f"helm waits (atomic, 300 s) and rolls back: Service {NAMESPACE}/gateway not ready after 2 s" in check.detail
    ), check.detail
    assert "Job check" not in cluster.created  # no post-install hook after a failed wait


def _ingress(cluster: Cluster, name: str) -> None:
    cluster.objects[("Service", name, NAMESPACE)]["status"] = {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}


def test_each_object_of_a_release_gets_its_whole_wait_from_its_turn(monkeypatch):
    cluster = Cluster("Complete")
    run, wait, now = _begin(monkeypatch, cluster, TEMPLATE + LOAD_BALANCER + ADMIN_LOAD_BALANCER)
    assert _look(run, wait) is None
    now[0] = 1.0
    _ingress(cluster, "gateway")
    assert _look(run, wait) is None  # the first ready at 1 s; the second's 1.5 s start now
    now[0] = 2.0
    assert _look(run, wait) is None  # 2 s after the release began, 1 s into the second's turn
    _ingress(cluster, "gateway-admin")
    assert _look(run, wait) is True, _release_check(run).detail


def test_a_crashed_stand_in_ends_the_wait_at_once_and_the_failure_says_how_long_it_waited(monkeypatch):
    cluster = Cluster("Complete")
    run, wait, now = _begin(monkeypatch, cluster, TEMPLATE + LOAD_BALANCER)
    now[0] = 1.0  # within the object's 1.5 s
    monkeypatch.setattr(releases, "_stand_in_crashed", lambda kube, obj: "pod gateway-0: envoy exited: flag")
    assert _look(run, wait) is False
    detail = _release_check(run).detail
    assert f"rolls back: Service {NAMESPACE}/gateway not ready: " in detail, detail
    assert "; pod gateway-0: envoy exited: flag" in detail, detail


def test_a_wait_that_runs_out_says_how_long_the_object_was_waited_for(monkeypatch):
    cluster = Cluster("Complete")
    run, wait, now = _begin(monkeypatch, cluster, TEMPLATE + LOAD_BALANCER)
    assert _look(run, wait) is None
    for second in (1.0, 2.9):  # its 1.5 s have run out by the look at 2.9 s
        now[0] = second
        if _look(run, wait) is not None:
            break
    assert f"Service {NAMESPACE}/gateway not ready after 3 s" in _release_check(run).detail


def test_the_second_object_s_failure_counts_from_its_own_turn(monkeypatch):
    cluster = Cluster("Complete")
    run, wait, now = _begin(monkeypatch, cluster, TEMPLATE + LOAD_BALANCER + ADMIN_LOAD_BALANCER)
    now[0] = 1.0
    _ingress(cluster, "gateway")
    assert _look(run, wait) is None  # the second's turn from 1 s
    now[0] = 3.0
    assert _look(run, wait) is False
    assert f"Service {NAMESPACE}/gateway-admin not ready after 2 s" in _release_check(run).detail


def test_an_object_ready_at_one_look_is_asked_again_at_the_next(monkeypatch):
    """Each look is one of Helm's polls over every object (wait.go L61-L80): the first load balancer, ready at one
    look, lost its address by the next, when the second got one; the wait goes on until one look finds both."""
    cluster = Cluster("Complete")
    run, wait, now = _begin(monkeypatch, cluster, TEMPLATE + LOAD_BALANCER + ADMIN_LOAD_BALANCER)
    _ingress(cluster, "gateway")
    assert _look(run, wait) is None  # the first ready, the second not
    cluster.objects[("Service", "gateway", NAMESPACE)]["status"] = {}
    _ingress(cluster, "gateway-admin")
    assert _look(run, wait) is None  # the second ready, the first no longer
    now[0] = 1.0
    _ingress(cluster, "gateway")
    assert _look(run, wait) is True, _release_check(run).detail


def test_an_object_deleted_during_the_wait_fails_the_release_at_once(monkeypatch):
    """A NotFound is the one error Helm's wait does not retry (wait.go L93-L110)."""
    cluster = Cluster("Complete")
    run, wait, _ = _begin(monkeypatch, cluster, TEMPLATE + LOAD_BALANCER)
    assert _look(run, wait) is None
    cluster.delete("v1", "Service", "gateway", NAMESPACE)
    assert _look(run, wait) is False
    assert f"Service {NAMESPACE}/gateway not found: deleted while Helm waited for it" in _release_check(run).detail


def test_an_object_found_ready_at_a_late_look_passes(monkeypatch):
    """A look that comes after the object's time (the stack was installing another release) asks it first."""
    cluster = Cluster("Complete")
    run, wait, now = _begin(monkeypatch, cluster, TEMPLATE + LOAD_BALANCER)
    assert _look(run, wait) is None
    now[0] = 40.0
    _ingress(cluster, "gateway")
    assert _look(run, wait) is True, _release_check(run).detail


def test_post_install_hooks_go_to_the_release_s_namespace_whatever_was_installed_during_its_wait(monkeypatch):
    cluster = Cluster("Complete")
    run, wait, _ = _begin(monkeypatch, cluster, TEMPLATE + LOAD_BALANCER)
    run.release_namespace = "other-system"  # another release installed meanwhile
    created_in: list[tuple[str, str | None]] = []
    create = cluster.create

    def recording(obj: dict[str, Any], *, field_manager: str) -> dict[str, Any]:
        created_in.append((obj["metadata"]["name"], obj["metadata"].get("namespace")))
        return create(obj, field_manager=field_manager)

    monkeypatch.setattr(cluster, "create", recording)
    _ingress(cluster, "gateway")
    assert _look(run, wait) is True
    assert created_in == [("check", NAMESPACE)]


def test_a_release_s_wait_never_runs_past_the_release_s_timeout(monkeypatch):
    """Helm's `timeout` is for its whole wait: the second object's turn ends with it."""
    cluster = Cluster("Complete")
    run, wait, now = _begin(monkeypatch, cluster, TEMPLATE + LOAD_BALANCER + ADMIN_LOAD_BALANCER, timeout=2)
    now[0] = 1.0
    _ingress(cluster, "gateway")
    assert _look(run, wait) is None  # the second's turn: 1.5 s, but only 1 s of the release's 2 s left
    now[0] = 2.2
    assert _look(run, wait) is False
    assert "helm waits (atomic, 2 s) and rolls back" in _release_check(run).detail
