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
        rehearsal = SimpleNamespace(limit=lambda limit: limit, check=lambda check: check, sync=lambda target: None)
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


class ReleasesThatWait(ScriptedStack):
    """A release's objects are created as it starts; Helm's wait for them then takes `looks[name]` looks, each one
    a look of the stack's (StackRun._poll_awaiting, as the rehearsal runs it)."""

    def execute(self, resource: PlannedResource) -> bool | None:
        self.events.append(f"start {resource.name}")
        if resource.type != HELM_RELEASE:
            return True
        events, looks = self.events, self.looks_left

        def look() -> bool | None:
            looks[resource.name] -= 1
            assert looks[resource.name] > -100, f"{resource.name}'s wait was looked at long after it ended"
            if looks[resource.name] > 0:
                return None
            events.append(f"done {resource.name}")
            return True

        self.releasing[resource.urn] = SimpleNamespace(target=SimpleNamespace(), look=look)  # type: ignore[assignment]
        return None

    _poll_awaiting = StackRun._poll_awaiting


def test_independent_releases_are_waited_for_side_by_side_and_each_frees_its_own_dependents():
    """`pulumi up` installs releases that do not depend on each other at once; what depends on one starts when that
    one is done, whatever the other is still waiting for (the rehearsal installed them one after another)."""
    stack = ReleasesThatWait(
        [
            planned(HELM_RELEASE, "karmada"),
            planned(HELM_RELEASE, "volcano"),
            planned(CONFIG_MAP, "queues", depends_on=(f"{HELM_RELEASE}=volcano",)),
            planned(HELM_RELEASE, "search", depends_on=(f"{HELM_RELEASE}=karmada",)),
        ],
        looks={"karmada": 4, "volcano": 2, "search": 1},
    )
    stack.run()
    assert stack.events == [
        "start karmada",
        "start volcano",
        "done volcano",
        "start queues",
        "done karmada",
        "start search",
        "done search",
    ]
    assert stack.outcome == {r.urn: True for r in stack.plan.resources}


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
    monkeypatch: pytest.MonkeyPatch,
    *,
    install_seconds: float = 0.0,
    ready_after: float | None = 0.0,
    change_at: float | None = None,
    churning: bool = False,
) -> Any:
    """The check of a Service awaited beside a release whose install takes `install_seconds`, unlooked-at (its hooks,
    its CRDs; the clusters' kubelets run on meanwhile). From `ready_after` seconds after its creation it has no
    pending address (None: never); its Endpoints change `change_at` seconds after it (None: never), and with
    `churning` at every second from then on. Looks come each second."""
    now, created = [1000.0], 1000.0

    def changes() -> int:
        if change_at is None or now[0] < created + change_at:
            return 0
        return 1 + (int(now[0] - created - change_at) if churning else 0)

    monkeypatch.setattr(
        runner, "time", SimpleNamespace(sleep=lambda s: now.__setitem__(0, now[0] + s), monotonic=lambda: now[0])
    )

    def probe_ready(kube: Any, obj: dict) -> tuple[bool, str]:
        if ready_after is not None and now[0] >= created + ready_after:
            return True, "1 ready endpoint address"
        return False, "1 endpoint address not ready"

    monkeypatch.setattr(pulumi_k8s, "probe_ready", probe_ready)
    monkeypatch.setattr(pulumi_k8s, "waits_for_endpoints", lambda live: True)
    monkeypatch.setattr(pulumi_k8s, "endpoints_version", lambda kube, obj: f"v{changes()}")
    target = SimpleNamespace(kube=SimpleNamespace(get=lambda *args, **kwargs: {"kind": "Service"}))
    checks: list[Any] = []

    class SlowInstall(ScriptedStack):
        def execute(self, resource: PlannedResource) -> bool | None:
            if resource.type == SERVICE:
                obj = {"kind": "Service", "metadata": {"name": resource.name, "namespace": "redis"}}
                deadline = now[0] + pulumi_k8s.AWAIT_SECONDS
                self.awaiting[resource.urn] = Awaiting(resource, target, obj, now[0], deadline)  # type: ignore[arg-type]
                return None
            now[0] += install_seconds
            return True

        _poll_awaiting = StackRun._poll_awaiting

    stack = SlowInstall([planned(SERVICE, "redis"), planned(HELM_RELEASE, "karmada")], looks={})
    stack.r = SimpleNamespace(limit=lambda limit: limit, check=checks.append, sync=lambda target: None)  # type: ignore[assignment]
    stack._check = lambda resource, category, ok, detail, name=None: SimpleNamespace(
        name=resource.name, ok=ok, detail=detail
    )  # type: ignore[method-assign,assignment,misc]
    stack.run()
    [check] = [c for c in checks if c.name == "redis"]
    return check


def test_a_change_seen_after_a_long_install_may_have_come_before_the_first_timer(monkeypatch: pytest.MonkeyPatch):
    """The install is not looked through: the change it saw may have come just after the look before it, and the
    first listing's timer then settled the Endpoints (pulumi-service-awaits-settled-endpoints)."""
    check = _service_beside_a_release(monkeypatch, install_seconds=120.0, change_at=60.0)
    assert check.ok and check.seconds == 120, (check.seconds, check.detail)


def test_a_ready_service_still_settling_when_its_wait_ends_waits_for_its_next_timer(monkeypatch: pytest.MonkeyPatch):
    """Its pod turns ready at 55 s (an Endpoints change): the rehearsal's 60 s end before that change's timer (65 s);
    the provider, whose own wait is 10 minutes, takes the Service when it fires."""
    check = _service_beside_a_release(monkeypatch, ready_after=55.0, change_at=55.0)
    assert check.ok and check.seconds == 65, (check.seconds, check.detail)
    assert "settling" not in check.detail


def test_endpoints_that_keep_changing_settle_when_the_first_change_s_timer_fires(monkeypatch: pytest.MonkeyPatch):
    """No timer is cancelled: the first listing's fires 10 s after it, at a look that also sees a change, and the
    provider takes the Service (its settled channel, service.go L264-L265)."""
    check = _service_beside_a_release(monkeypatch, change_at=1.0, churning=True)
    assert check.ok and check.seconds == 10, (check.seconds, check.detail)


def test_a_service_still_settling_at_the_provider_s_timeout_passes(monkeypatch: pytest.MonkeyPatch):
    """The provider's last look at its timeout takes a ready Service with no pending address, settled or not
    (service.go L255-L258); the rehearsal's wait ends there."""
    monkeypatch.setattr(pulumi_k8s, "PROVIDER_TIMEOUT_SECONDS", 62.0)
    check = _service_beside_a_release(monkeypatch, ready_after=55.0, change_at=55.0)
    assert check.ok and check.seconds == 62, (check.seconds, check.detail)
    assert "still settling at the provider's timeout" in check.detail


def test_a_service_with_an_address_not_ready_fails_at_the_end_of_its_wait_saying_how_long_it_waited(
    monkeypatch: pytest.MonkeyPatch,
):
    check = _service_beside_a_release(monkeypatch, install_seconds=75.0, ready_after=None)
    assert check.ok is False
    # Its 60 s ended during the install, while the kubelets ran on: the first look after it fails it, at 75 s.
    assert check.detail.startswith("created; not ready after 75 s: 1 endpoint address not ready"), check.detail
