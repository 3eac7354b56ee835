"""A small API server that speaks kube-apiserver's list and watch protocol (KUBE_APISERVER_WATCH_STREAM), for the
rehearsal client's watched kinds (tools/rehearsal/kube.py `Informer`)."""

from __future__ import annotations

import json
import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

POD = ("v1", "Pod")


def pod(name: str, version: int, namespace: str = "serving", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": str(version), "labels": labels},
    }


class FakeApiServer:
    """Pods and ConfigMaps: a list answers `objects`; a watch streams what the test puts in `events` (None ends the
    stream); a POST answers the object at the next version; a DELETE of a ConfigMap answers a Status."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.version = 1
        self.events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.requests: list[str] = []  # "list pods", "list pods?labelSelector=...", "watch pods@<version>", ...
        self.watching = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                pass

            def _answer(self, body: dict[str, Any], status: int = 200) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path == "/api/v1":
                    self._answer(
                        {
                            "resources": [
                                {"name": "pods", "kind": "Pod", "namespaced": True},
                                {"name": "configmaps", "kind": "ConfigMap", "namespaced": True},
                            ]
                        }
                    )
                elif query.get("watch") == "true":
                    server.requests.append(f"watch {url.path.rsplit('/', 1)[-1]}@{query['resourceVersion']}")
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    server.watching.set()
                    while (event := server.events.get()) is not None:
                        line = json.dumps(event).encode() + b"\n"
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                    server.watching.clear()
                else:
                    selector = f"?labelSelector={query['labelSelector']}" if "labelSelector" in query else ""
                    server.requests.append(f"list {url.path.rsplit('/', 1)[-1]}{selector}")
                    items = [o for o in server.objects.values() if o["kind"] == "Pod"]
                    self._answer({"metadata": {"resourceVersion": str(server.version)}, "items": items})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.version += 1
                body["metadata"]["resourceVersion"] = str(server.version)
                server.objects[body["metadata"]["name"]] = body
                self._answer(body, 201)

            def do_DELETE(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                name = self.path.rsplit("/", 1)[-1]
                gone = server.objects.pop(name)
                self._answer(gone if gone["kind"] == "Pod" else {"kind": "Status", "status": "Success"})

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def lists(self) -> list[str]:
        return [r for r in self.requests if r.startswith("list ")]
