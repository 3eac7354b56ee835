"""A small API server that speaks kube-apiserver's list and watch protocol (KUBE_APISERVER_WATCH_STREAM), for the
rehearsal client's watched kinds (tools/rehearsal/kube.py `Informer`)."""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

POD = ("v1", "Pod")
NODE = ("v1", "Node")
BREAK = b"break"  # put in `events`: the connection drops mid-stream, without the stream's last chunk


def pod(name: str, version: int, namespace: str = "serving", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": str(version), "labels": labels},
    }


def node(name: str, version: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "resourceVersion": str(version)}}


# What kube-apiserver answers as PartialObjectMetadata (KUBE_APISERVER_WATCH_STREAM)
METADATA_LIST = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
METADATA_WATCH = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"


def with_fields(obj: dict, **annotations: str) -> dict:
    """`obj` as the server has it after a server-side apply: managedFields, and annotations."""
    fields = [{"manager": "rehearsal", "operation": "Apply", "fieldsV1": {"f:spec": {"f:versions": {}}}}]
    return {**obj, "metadata": {**obj["metadata"], "managedFields": fields, "annotations": annotations}}


def eventually(check: Callable[[], bool]) -> bool:
    """Whether `check` holds within 10 s (the watch thread applies events as they come)."""
    deadline = time.monotonic() + 10
    while not check():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


def line(event: dict[str, Any]) -> bytes:
    return json.dumps(event).encode() + b"\n"


class FakeApiServer:
    """Pods (namespaced) and Nodes (cluster-scoped): a list answers `objects` of its kind; a watch streams what the
    test puts in `events`, one HTTP chunk each: an event, raw bytes (several events, or part of one), BREAK, or None
    (the stream ends, as after timeoutSeconds); a POST answers the object at the next version; a DELETE answers the
    object as it was, as a pod deleted at once is answered."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.version = 1
        self.events: queue.Queue[dict[str, Any] | bytes | None] = queue.Queue()
        self.requests: list[str] = []  # "list pods", "list pods?labelSelector=...", "watch pods@<version>", ...
        self.watch_params: list[dict[str, str]] = []
        self.accepts: list[str] = []  # each list's and watch's Accept header, in order
        self.watching = threading.Event()
        self.on_list: Callable[[], None] = lambda: None  # called after a list's answer is taken, before it is sent
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out as two writes: with Nagle's algorithm the body waits for the client's delayed
            # ACK of the headers, 40 ms an answer.
            disable_nagle_algorithm = True

            def log_message(self, *_: Any) -> None:
                pass

            def _answer(self, body: dict[str, Any], status: int = 200) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            def do_GET(self) -> None:
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path != "/api/v1":
                    server.accepts.append(self.headers.get("Accept", ""))
                plural = url.path.rsplit("/", 1)[-1]
                if url.path == "/api/v1":
                    self._answer(
                        {
                            "resources": [
                                {"name": "pods", "kind": "Pod", "namespaced": True},
                                {"name": "nodes", "kind": "Node", "namespaced": False},
                            ]
                        }
                    )
                elif query.get("watch") == "true":
                    server.requests.append(f"watch {plural}@{query['resourceVersion']}")
                    server.watch_params.append(query)
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    server.watching.set()
                    while (event := server.events.get()) is not None:
                        if event == BREAK:
                            server.watching.clear()
                            self.close_connection = True
                            return
                        self._chunk(event if isinstance(event, bytes) else line(event))
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                    server.watching.clear()
                else:
                    selector = f"?labelSelector={query['labelSelector']}" if "labelSelector" in query else ""
                    server.requests.append(f"list {plural}{selector}")
                    kind = {"pods": "Pod", "nodes": "Node"}[plural]
                    items = [o for o in server.objects.values() if o["kind"] == kind]
                    version = str(server.version)
                    server.on_list()
                    self._answer({"metadata": {"resourceVersion": version}, "items": items})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.version += 1
                body["metadata"]["resourceVersion"] = str(server.version)
                server.objects[body["metadata"]["name"]] = body
                self._answer(body, 201)

            def do_DELETE(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._answer(server.objects.pop(self.path.rsplit("/", 1)[-1]))

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()

    def lists(self) -> list[str]:
        return [r for r in self.requests if r.startswith("list ")]
