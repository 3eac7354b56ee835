"""The rehearsal client's watched kinds (tools/rehearsal/kube.py `Informer`): listed once, then kept by a watch, against
a small API server that speaks the watch protocol as kube-apiserver does (KUBE_APISERVER_WATCH_STREAM: a chunked
stream of one JSON event per line, ADDED, MODIFIED, DELETED, BOOKMARK, and an expired version as an ERROR event)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.fake_apiserver import (
    BREAK,
    METADATA_LIST,
    METADATA_WATCH,
    NODE,
    POD,
    FakeApiServer,
    eventually,
    line,
    node,
    pod,
    with_fields,
)
from tools.rehearsal import kube as kube_module
from tools.rehearsal.kube import Kube


@pytest.fixture
def api() -> Iterator[FakeApiServer]:
    server = FakeApiServer()
    yield server
    server.events.put(None)
    server.http.shutdown()


@pytest.fixture(autouse=True)
def quick_relist(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client's wait before it lists again, a second, shortened: what these tests see is the order of requests."""
    monkeypatch.setattr(kube_module, "RELIST_SECONDS", 0.05)


@pytest.fixture
def kube(api: FakeApiServer, tmp_path: Path) -> Iterator[Kube]:
    client = Kube(api.url, tmp_path / "ca.crt", watched={POD, NODE})
    yield client
    client.close()
    api.events.put(None)  # the open watch returns, and its thread sees the client closed


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


def test_the_watch_asks_for_bookmarks_and_outwaits_the_servers_end_of_it(api, kube, monkeypatch):
    """A kind nothing writes to may get no bookmark before the server ends the watch at timeoutSeconds: only a
    silence past that is a stalled watch."""
    timeouts = []
    get = requests.Session.get

    def recording(session, url, **kwargs):
        if kwargs.get("stream"):
            timeouts.append(kwargs["timeout"])
        return get(session, url, **kwargs)

    monkeypatch.setattr(requests.Session, "get", recording)
    names(kube)
    assert eventually(api.watching.is_set)
    assert api.watch_params[0]["allowWatchBookmarks"] == "true"
    ends = int(api.watch_params[0]["timeoutSeconds"])
    [(_, read)] = timeouts
    assert 0 < ends < read <= ends + 60


def test_versions_are_compared_as_numbers(api, kube):
    names(kube)
    kube.create(pod("n", 0), field_manager="test")  # version 2
    api.events.put({"type": "MODIFIED", "object": pod("n", 10, at="10")})
    assert eventually(lambda: names(kube, selector="at=10") == ["n"])
    kube._wrote("v1", "Pod", pod("n", 9, at="9"))  # an answer that was on its way
    assert names(kube, selector="at=10") == ["n"]


def test_a_deleted_object_does_not_come_back_with_an_answer_that_was_on_its_way(api, kube):
    """The watch's DELETED came first; the answer of a write made before the deletion (a status patch, the DELETE's
    own answer: the pod as it was) comes after it and must not put the pod back."""
    names(kube)
    kube.create(pod("f", 0), field_manager="test")  # version 2
    api.events.put({"type": "ADDED", "object": pod("f", 2)})
    api.events.put({"type": "DELETED", "object": pod("f", 3)})
    assert eventually(lambda: names(kube) == [])
    kube._wrote("v1", "Pod", pod("f", 2, late="status"))
    kube.delete(*POD, "f", "serving")
    assert names(kube) == []
    api.events.put({"type": "ADDED", "object": pod("f", 4, again="yes")})  # made again, at a later version
    assert eventually(lambda: names(kube, selector="again=yes") == ["f"])


def test_an_older_deletion_does_not_remove_a_later_version(api, kube):
    names(kube)
    kube._wrote("v1", "Pod", pod("k", 20))
    api.events.put({"type": "DELETED", "object": pod("k", 19)})
    api.events.put({"type": "ADDED", "object": pod("m", 21)})
    assert eventually(lambda: names(kube) == ["k", "m"])


def test_events_are_read_across_and_within_chunks(api, kube):
    """kube-apiserver flushes when no event is queued: a chunk may hold several events, or part of one."""
    names(kube)
    two = line({"type": "ADDED", "object": pod("p", 2)}) + line({"type": "ADDED", "object": pod("q", 3)})
    third = line({"type": "ADDED", "object": pod("r", 4, big="x" * 60)})
    api.events.put(two + third[:40])
    api.events.put(third[40:])
    assert eventually(lambda: names(kube) == ["p", "q", "r"])


def test_a_broken_connection_lists_afresh_and_meanwhile_the_server_answers(api, kube):
    api.objects["a"] = pod("a", 1)
    names(kube)
    assert eventually(api.watching.is_set)
    [informer] = kube._informers.values()
    relisting = threading.Event()
    relist = informer._relist
    informer._relist = lambda: (relisting.wait(10), relist())[1]
    api.objects, api.version = {"s": pod("s", 8)}, 8
    api.events.put(BREAK)
    assert eventually(lambda: not informer.live)
    lists = len(api.lists())
    assert names(kube) == ["s"]
    assert len(api.lists()) == lists + 1  # not live: the server's list
    relisting.set()
    assert eventually(lambda: "watch pods@8" in api.requests)
    assert informer.live
    lists = len(api.lists())
    assert names(kube) == ["s"]
    assert len(api.lists()) == lists


@pytest.mark.parametrize("garbage", [b"[1]\n", b'{"type": "ADDED"}\n', b"not json\n"])
def test_an_event_it_cannot_read_lists_afresh(api, kube, garbage):
    names(kube)
    assert eventually(api.watching.is_set)
    api.objects, api.version = {"t": pod("t", 5)}, 5
    api.events.put(garbage)
    assert eventually(lambda: "watch pods@5" in api.requests)
    assert names(kube) == ["t"]


def test_a_cluster_scoped_kind_ignores_the_namespace_as_the_server_does(api, kube):
    api.objects = {"n1": node("n1", 1), "n2": node("n2", 1)}
    assert sorted(o["metadata"]["name"] for o in kube.list(*NODE, "serving")) == ["n1", "n2"]


def test_namespace_and_plain_selectors_are_answered_from_the_cache(api, kube):
    api.objects = {"g": pod("g", 1, "serving", app="vllm", tier="a"), "h": pod("h", 1, "gateway", app="vllm")}
    assert names(kube, "serving") == ["g"]
    assert names(kube, selector="app=vllm") == ["g", "h"]
    assert names(kube, selector="app==vllm,tier=a") == ["g"]
    assert names(kube, selector="app=vllm,tier=b") == []
    assert api.lists() == ["list pods"]


@pytest.mark.parametrize("selector", ["app!=vllm", "tier in (a,b)", "!tier", "tier", "app=vllm,app=triton"])
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


def test_a_closed_clients_watch_ends_and_its_lists_are_the_servers(api, kube):
    names(kube)
    assert eventually(api.watching.is_set)
    [informer] = kube._informers.values()
    kube.close()
    api.events.put({"type": "ADDED", "object": pod("late", 3)})
    informer._thread.join(timeout=10)
    assert not informer._thread.is_alive()
    names(kube)
    assert api.lists() == ["list pods", "list pods"]


@pytest.fixture
def metadata_kube(api: FakeApiServer, tmp_path: Path) -> Iterator[Kube]:
    client = Kube(api.url, tmp_path / "ca.crt", watched_metadata={NODE})
    yield client
    client.close()
    api.events.put(None)


def metadata(kube: Kube) -> dict[str, dict]:
    return {o["metadata"]["name"]: o["metadata"] for o in kube.list_metadata(*NODE)}


def test_a_write_is_in_the_metadata_cache_at_once(api, metadata_kube):
    metadata(metadata_kube)
    written = metadata_kube.create(with_fields(node("crd", 0), inject="x/y"), field_manager="test")
    assert metadata(metadata_kube)["crd"] == {
        k: v for k, v in written["metadata"].items() if k != "managedFields"
    }  # no watch event yet
    assert metadata_kube.list(*NODE)[0]["metadata"]["managedFields"]  # `list` of an unwatched kind: the server's


def test_full_and_metadata_caches_of_one_kind_are_kept_apart(api, tmp_path):
    client = Kube(api.url, tmp_path / "ca.crt", watched={NODE}, watched_metadata={NODE})
    try:
        api.objects["n"] = with_fields(node("n", 1))
        assert client.list(*NODE)[0]["metadata"]["managedFields"]
        assert "managedFields" not in client.list_metadata(*NODE)[0]["metadata"]
        assert client.list(*NODE)[0]["metadata"]["managedFields"]
        assert eventually(lambda: len([a for a in api.accepts if a == METADATA_WATCH]) == 1)
    finally:
        client.close()
        api.events.put(None)
        api.events.put(None)


def test_an_unwatched_kinds_metadata_is_the_servers_each_time(api, kube):
    api.objects["n"] = with_fields(node("n", 1))
    assert kube.list_metadata(*NODE)[0]["metadata"]["managedFields"]  # as the server answers it
    kube.list_metadata(*NODE)
    assert api.lists() == ["list nodes", "list nodes"]
    assert api.accepts == [METADATA_LIST, METADATA_LIST]


def test_a_write_answered_while_the_first_list_is_on_its_way_is_listed(api, kube):
    """The list was taken before the write; the write's answer came first: the cache keeps the later version."""
    api.on_list = lambda: (setattr(api, "on_list", lambda: None), kube.create(pod("w", 0), field_manager="test"))
    assert names(kube) == ["w"]  # no watch event for it yet
    assert api.lists() == ["list pods"]


def test_a_write_answered_while_a_fresh_list_is_on_its_way_is_kept(api, kube):
    names(kube)
    assert eventually(api.watching.is_set)
    api.on_list = lambda: (setattr(api, "on_list", lambda: None), kube.create(pod("x", 0), field_manager="test"))
    api.events.put({"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}})
    assert eventually(lambda: len(api.lists()) == 2 and sum(r.startswith("watch ") for r in api.requests) == 2)
    assert names(kube) == ["x"]
    assert len(api.lists()) == 2  # from the cache, live again


def test_a_watch_that_ends_at_once_with_nothing_is_listed_again_after_a_wait(api, kube):
    names(kube)
    assert eventually(api.watching.is_set)
    api.events.put(None)
    ended = time.monotonic()
    assert eventually(lambda: len(api.lists()) == 2)
    assert time.monotonic() - ended >= kube_module.RELIST_SECONDS
