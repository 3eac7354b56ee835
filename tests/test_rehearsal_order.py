"""The order a rehearsal's stack starts its resources in, as `pulumi up` would (tools/rehearsal/runner.py): a
resource starts once what it depends on is done, whatever else is still being awaited. A scripted stack: each
Service is awaited for a given number of looks, a release is done as it starts; no cluster."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.test_rehearsal_install import planned
from tools.plan.engine import PlannedResource
from tools.plan.model import HELM_RELEASE
from tools.rehearsal import pulumi_k8s, runner
from tools.rehearsal.runner import Awaiting, StackRun

SERVICE = "kubernetes:core/v1:Service"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"


class ScriptedStack(StackRun):
    """`execute` records each start; a Service is awaited until it has been looked at `looks[name]` times; a release
    is done as it starts, and records so."""

    def __init__(self, resources: list[PlannedResource], looks: dict[str, int]):
        plan = SimpleNamespace(resources=resources, by_urn={r.urn: r for r in resources}, descendants=lambda urn: [])
        rehearsal = SimpleNamespace(limit=lambda limit: limit, check=lambda check: check)
        super().__init__(rehearsal, SimpleNamespace(name="canary"), "prod.use1", plan)  # type: ignore[arg-type]
        self.looks_left = dict(looks)
        self.events: list[str] = []

    def execute(self, resource: PlannedResource) -> bool | None:
        self.events.append(f"start {resource.name}")
        if resource.type == SERVICE:
            self.awaiting[resource.urn] = SimpleNamespace(resource=resource, deadline=0.0)  # type: ignore[assignment]
            return None
        if resource.type == HELM_RELEASE:
            self.events.append(f"done {resource.name}")
        return True

    def _poll_awaiting(self) -> bool:
        finished = False
        for urn, waiting in list(self.awaiting.items()):
            name = waiting.resource.name
            self.looks_left[name] -= 1
            if self.looks_left[name] <= 0:
                self.events.append(f"ready {name}")
                self.outcome[urn] = True
                del self.awaiting[urn]
                finished = True
        return finished


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's one-second pause between looks, skipped: what the tests check is the order."""
    clock: Any = SimpleNamespace(sleep=lambda seconds: None, monotonic=runner.time.monotonic)
    monkeypatch.setattr(runner, "time", clock)


def test_a_release_does_not_wait_for_a_service_it_does_not_depend_on():
    """Pulumi starts the release as soon as its own dependencies are done; the Service's Endpoints settle meanwhile
    (the rehearsal waited for every await before a release: prod's Services held its releases 10-16 s each)."""
    stack = ScriptedStack(
        [planned(SERVICE, "redis"), planned(HELM_RELEASE, "volcano")],
        looks={"redis": 3},
    )
    stack.run()
    assert stack.events == ["start redis", "start volcano", "done volcano", "ready redis"]
    assert stack.outcome == {r.urn: True for r in stack.plan.resources}


def test_a_release_that_depends_on_an_awaited_service_starts_after_it_is_ready():
    stack = ScriptedStack(
        [planned(SERVICE, "redis"), planned(HELM_RELEASE, "gateway", depends_on=(f"{SERVICE}=redis",))],
        looks={"redis": 3},
    )
    stack.run()
    assert stack.events == ["start redis", "ready redis", "start gateway", "done gateway"]


def test_awaits_get_a_look_before_a_release_and_what_they_free_goes_first():
    """A Service ready at its first look frees its dependents (plain objects, seconds) before a release (minutes)
    takes the stack's turn."""
    stack = ScriptedStack(
        [
            planned(SERVICE, "webhook"),
            planned(CONFIG_MAP, "after-webhook", depends_on=(f"{SERVICE}=webhook",)),
            planned(HELM_RELEASE, "karmada"),
        ],
        looks={"webhook": 1},
    )
    stack.run()
    assert stack.events == ["start webhook", "ready webhook", "start after-webhook", "start karmada", "done karmada"]


def test_releases_ready_together_start_one_after_another_while_a_service_settles():
    stack = ScriptedStack(
        [planned(SERVICE, "redis"), planned(HELM_RELEASE, "volcano"), planned(HELM_RELEASE, "fluid")],
        looks={"redis": 5},
    )
    stack.run()
    assert stack.events == ["start redis", "start volcano", "done volcano", "start fluid", "done fluid", "ready redis"]


def test_a_dependency_cycle_is_reported_once_nothing_is_awaited():
    checks: list[Any] = []
    stack = ScriptedStack(
        [
            planned(SERVICE, "redis"),
            planned(HELM_RELEASE, "a", depends_on=(f"{HELM_RELEASE}=b",)),
            planned(HELM_RELEASE, "b", depends_on=(f"{HELM_RELEASE}=a",)),
        ],
        looks={"redis": 2},
    )
    stack.r = SimpleNamespace(limit=lambda limit: limit, check=checks.append)  # type: ignore[assignment]
    stack._check = lambda resource, category, ok, detail, name=None: (resource.name, ok, detail)  # type: ignore[method-assign,assignment]
    stack.run()
    assert stack.events == ["start redis", "ready redis"]
    assert sorted(checks) == [
        ("a", False, "never reached: a dependency cycle"),
        ("b", False, "never reached: a dependency cycle"),
    ]


def _service_beside_a_release(
    monkeypatch: pytest.MonkeyPatch, *, ready: bool, then: tuple[tuple[str, float], ...] = (), churning: bool = False
) -> list[Any]:
    """The checks of a stack whose Service (probed `ready`) is awaited while a two-minute release runs; its pods turn
    ready meanwhile (an Endpoints change); `then`: resources freed by the release, each taking its seconds;
    `churning`: after the release, its Endpoints change at every look (each second)."""
    now, endpoints = [1000.0], ["v1"]
    monkeypatch.setattr(
        runner, "time", SimpleNamespace(sleep=lambda s: now.__setitem__(0, now[0] + s), monotonic=lambda: now[0])
    )
    seen = "1 ready endpoint address" if ready else "1 endpoint address not ready"
    monkeypatch.setattr(pulumi_k8s, "probe_ready", lambda kube, obj: (ready, seen))
    monkeypatch.setattr(pulumi_k8s, "waits_for_endpoints", lambda live: True)

    def endpoints_version(kube: Any, obj: dict) -> str:
        if churning and endpoints[0] != "v1":
            endpoints[0] = f"v{now[0]}"
        return endpoints[0]

    monkeypatch.setattr(pulumi_k8s, "endpoints_version", endpoints_version)
    target = SimpleNamespace(kube=SimpleNamespace(get=lambda *args, **kwargs: {"kind": "Service"}))
    seconds = dict(then)
    checks: list[Any] = []

    class TwoMinuteRelease(ScriptedStack):
        def execute(self, resource: PlannedResource) -> bool | None:
            if resource.type == SERVICE:
                obj = {"kind": "Service", "metadata": {"name": resource.name, "namespace": "redis"}}
                deadline = now[0] + pulumi_k8s.AWAIT_SECONDS
                self.awaiting[resource.urn] = Awaiting(resource, target, obj, now[0], deadline)  # type: ignore[arg-type]
                return None
            if resource.type == HELM_RELEASE:
                now[0] += 120
                endpoints[0] = "v2"
            now[0] += seconds.get(resource.name, 0.0)
            return True

        _poll_awaiting = StackRun._poll_awaiting

    freed = [planned(CONFIG_MAP, name, depends_on=(f"{HELM_RELEASE}=karmada",)) for name, _ in then]
    stack = TwoMinuteRelease([planned(SERVICE, "redis"), planned(HELM_RELEASE, "karmada"), *freed], looks={})
    stack.r = SimpleNamespace(limit=lambda limit: limit, check=checks.append, sync=lambda target: None)  # type: ignore[assignment]
    stack._check = lambda resource, category, ok, detail, name=None: SimpleNamespace(
        name=resource.name, ok=ok, detail=detail
    )  # type: ignore[method-assign,assignment,misc]
    stack.run()
    return checks


def test_a_service_whose_endpoints_change_during_a_long_release_still_settles(monkeypatch: pytest.MonkeyPatch):
    """The release is not looked through: the first look after it sees the Endpoints' change, and the Service gets
    the provider's 10 s settle from there, however long the release took (pulumi-service-awaits-settled-endpoints;
    the provider's own await runs for minutes)."""
    checks = _service_beside_a_release(monkeypatch, ready=True)
    assert [(c.name, c.ok) for c in checks] == [("redis", True)], checks[0].detail
    assert "not yet settled" not in checks[0].detail


def test_a_settle_that_began_late_in_the_wait_gets_its_10_s(monkeypatch: pytest.MonkeyPatch):
    """What the release freed took 6 s before the first look saw the Endpoints' change, so the fresh look's margin
    after the release was too short for the settle: the wait is extended once, to the settle's end
    (pulumi-service-awaits-settled-endpoints: the provider's own wait runs for minutes)."""
    checks = _service_beside_a_release(monkeypatch, ready=True, then=(("slow-config", 6.0),))
    by_name = {c.name: c for c in checks}
    assert by_name["redis"].ok, by_name["redis"].detail


def test_endpoints_that_keep_changing_fail_the_service_at_the_end_of_its_wait(monkeypatch: pytest.MonkeyPatch):
    """No change's 10 s timer fires after a later change: the provider would wait out its whole timeout."""
    checks = _service_beside_a_release(monkeypatch, ready=True, churning=True)
    assert [(c.name, c.ok) for c in checks] == [("redis", False)]
    assert "settling" in checks[0].detail, checks[0].detail


def test_a_service_with_an_address_not_ready_fails_at_the_end_of_its_wait_saying_how_long_it_waited(
    monkeypatch: pytest.MonkeyPatch,
):
    checks = _service_beside_a_release(monkeypatch, ready=False)
    assert [(c.name, c.ok) for c in checks] == [("redis", False)]
    # 120 s of release, then the fresh 15 s look: the wait ended 135 s after the Service was created.
    assert checks[0].detail.startswith("created; not ready after 135 s: 1 endpoint address not ready"), checks[0].detail
