"""Service virtual IPs for the rehearsal's pods: what kube-proxy does, in user space (kube-proxy's original
mode). Each Service's ClusterIP is added to the pod network's bridge and a listener on each of its TCP ports
forwards a connection to a ready endpoint of that Service, at the endpoint's port (targetPort). A pod reaches
`<service>:<port>` through DNS (its /etc/hosts) or the `<SERVICE>_SERVICE_HOST/PORT` variables as it would in a
cluster. Clusters whose ClusterIPs coincide are told apart by the caller's pod address, and a pod reaches only its
own cluster's Services."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from tools.rehearsal.network import PodNetwork, _ip
from tools.rehearsal.processes import background_error

if TYPE_CHECKING:
    from tools.rehearsal.runner import Target

Route = dict[str, tuple[str, int]]  # cluster -> (endpoint address, port)


class ServiceProxy:
    def __init__(
        self, network: PodNetwork, targets: Callable[[], list[Target]], cluster_of: Callable[[str], str | None]
    ):
        self.network = network
        self.targets, self.cluster_of = targets, cluster_of
        self.routes: dict[tuple[str, int], Route] = {}
        self._listeners: dict[tuple[str, int], socket.socket] = {}
        self._addresses: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="service-proxy", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        for listener in self._listeners.values():
            with contextlib.suppress(OSError):
                listener.close()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.wait(2.0):
            try:
                self.refresh()
            except Exception as exc:
                background_error("service proxy", exc)

    def refresh(self) -> None:
        routes: dict[tuple[str, int], Route] = {}
        for target in self.targets():
            if target.region is None:
                continue
            services = target.kube.list("v1", "Service")
            slices = target.kube.list("discovery.k8s.io/v1", "EndpointSlice")
            for svc in services:
                spec, meta = svc.get("spec") or {}, svc["metadata"]
                ip = spec.get("clusterIP")
                if not ip or ip == "None":
                    continue
                mine = [
                    s
                    for s in slices
                    if s["metadata"]["namespace"] == meta["namespace"]
                    and (s["metadata"].get("labels") or {}).get("kubernetes.io/service-name") == meta["name"]
                ]
                for port in spec.get("ports") or []:
                    if port.get("protocol", "TCP") != "TCP":
                        continue
                    endpoint = _ready_endpoint(mine, port.get("name", ""))
                    if endpoint is not None:
                        routes.setdefault((ip, port["port"]), {})[target.name] = endpoint
                    self._listen(ip, port["port"])
        self.routes = routes

    def _listen(self, ip: str, port: int) -> None:
        if (ip, port) in self._listeners:
            return
        if ip not in self._addresses:
            _ip("addr", "add", f"{ip}/32", "dev", self.network.bridge, check=False)
            self._addresses.add(ip)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((ip, port))
        except OSError:
            listener.close()
            return
        listener.listen(64)
        self._listeners[(ip, port)] = listener
        threading.Thread(target=self._accept, args=(listener, ip, port), daemon=True).start()

    def _accept(self, listener: socket.socket, ip: str, port: int) -> None:
        while not self._stop.is_set():
            try:
                client, (source, _) = listener.accept()
            except OSError:
                return
            route = self.routes.get((ip, port)) or {}
            cluster = self.cluster_of(source)
            # a pod reaches its own cluster's Services only; the rehearsal itself (no pod) any cluster's
            endpoint = route.get(cluster) if cluster is not None else next(iter(route.values()), None)
            if endpoint is None:
                client.close()  # no ready endpoint: the connection is refused, as kube-proxy rejects it
                continue
            threading.Thread(target=_forward, args=(client, endpoint), daemon=True).start()


def _ready_endpoint(slices: list[dict], port_name: str) -> tuple[str, int] | None:
    for eps in slices:
        ports = {p.get("name", ""): p.get("port") for p in eps.get("ports") or []}
        target_port = ports.get(port_name)
        if target_port is None:
            continue
        for endpoint in eps.get("endpoints") or []:
            if (endpoint.get("conditions") or {}).get("ready") and endpoint.get("addresses"):
                return endpoint["addresses"][0], target_port
    return None


def _forward(client: socket.socket, endpoint: tuple[str, int]) -> None:
    try:
        upstream = socket.create_connection(endpoint, timeout=5)
    except OSError:
        client.close()
        return
    upstream.settimeout(None)

    def pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    other = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
    other.start()
    pipe(client, upstream)
    other.join()
    client.close()
    upstream.close()
