"""The rehearsal client's watched kinds (tools/rehearsal/kube.py `Informer`): listed once, then kept by a watch, against
a small API server that speaks the watch protocol as kube-apiserver does (KUBE_APISERVER_WATCH_STREAM: a chunked
stream of one JSON event per line, ADDED, MODIFIED, DELETED, BOOKMARK, and an expired version as an ERROR event)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fake_apiserver import POD, FakeApiServer, pod
from tools.rehearsal.kube import Kube


@pytest.fixture
def api() -> Iterator[FakeApiServer]:
    server = FakeApiServer()
    yield server
    server.events.put(None)
    server.http.shutdown()


@pytest.fixture
def kube(api: FakeApiServer, tmp_path: Path) -> Iterator[Kube]:
    client = Kube(api.url, tmp_path / "ca.crt", watched={POD})
    yield client
    client.close()
    api.events.put(None)  # the open watch returns, and its thread sees the client closed


def eventually(check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + 10
    while not check():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


def names(kube: Kube, namespace: str | None = None, selector: str | None = None) -> list[str]:
    return sorted(o["metadata"]["name"] for o in kube.list(*POD, namespace, selector=selector))


def test_a_watched_kind_is_listed_once_then_kept_by_its_watch(api, kube):
    api.objects["a"] = pod("a", 1)
    assert names(kube) == ["a"]
    assert eventually(api.watching.is_set)
    assert api.requests[-1] == "watch pods@1"  # from the list's resourceVersion
    api.events.put({"type": "ADDED", "object": pod("b", 2)})
    api.events.put({"type": "MODIFIED", "object": pod("a", 3, role="decode")})
    api.events.put({"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "4"}}})
    assert eventually(lambda: names(kube, selector="role=decode") == ["a"])
    assert names(kube) == ["a", "b"]
    api.events.put({"type": "DELETED", "object": pod("b", 5)})
    assert eventually(lambda: names(kube) == ["a"])
    assert api.lists() == ["list pods"]


def test_the_clients_own_write_is_listed_at_once_and_no_older_event_takes_it_back(api, kube):
    names(kube)
    created = kube.create(pod("d", 0), field_manager="test")
    assert names(kube) == ["d"]  # no watch event yet
    older = {**created, "metadata": {**created["metadata"], "resourceVersion": "1", "labels": {"stale": "yes"}}}
    api.events.put({"type": "MODIFIED", "object": older})
    api.events.put({"type": "MODIFIED", "object": pod("e", 50)})  # a later event: the older one was applied first
    assert eventually(lambda: names(kube) == ["d", "e"])
    assert names(kube, selector="stale=yes") == []


def test_a_deleted_pod_stays_listed_until_its_watch_says_it_went(api, kube):
    """A pod's DELETE answers the pod (its grace period runs): the cache keeps it, as the server's list would."""
    names(kube)
    kube.create(pod("f", 0), field_manager="test")
    kube.delete(*POD, "f", "serving")
    assert names(kube) == ["f"]
    api.events.put({"type": "DELETED", "object": pod("f", 99)})
    assert eventually(lambda: names(kube) == [])


def test_namespace_and_plain_selectors_are_answered_from_the_cache(api, kube):
    api.objects = {"g": pod("g", 1, "serving", app="vllm", tier="a"), "h": pod("h", 1, "gateway", app="vllm")}
    assert names(kube, "serving") == ["g"]
    assert names(kube, selector="app=vllm") == ["g", "h"]
    assert names(kube, selector="app==vllm,tier=a") == ["g"]
    assert names(kube, selector="app=vllm,tier=b") == []
    assert api.lists() == ["list pods"]


@pytest.mark.parametrize("selector", ["app!=vllm", "tier in (a,b)", "!tier", "tier"])
def test_a_selector_of_another_form_is_the_servers_to_evaluate(api, kube, selector):
    names(kube)
    kube.list(*POD, selector=selector)
    assert api.lists() == ["list pods", f"list pods?labelSelector={selector}"]


def test_an_unwatched_kind_is_listed_by_the_server_each_time(api, tmp_path):
    client = Kube(api.url, tmp_path / "ca.crt")
    client.list(*POD)
    client.list(*POD)
    assert api.lists() == ["list pods", "list pods"]
    assert not api.watching.is_set()


def test_a_closed_clients_watch_ends(api, kube):
    names(kube)
    assert eventually(api.watching.is_set)
    [informer] = kube._informers.values()
    kube.close()
    api.events.put({"type": "ADDED", "object": pod("late", 3)})
    informer._thread.join(timeout=10)
    assert not informer._thread.is_alive()
