"""The rehearsal's pod network: one Linux bridge per run with a private /16, every node's pod CIDR a /24 of it,
and, for each pod the rehearsal runs as a process, a network namespace with the pod's own address (the one kwok
gave it) on a veth into the bridge. So each process listens on the ports its chart gives it, Services reach
their pods' addresses (the API server routes to endpoints), and pods reach the API servers, which listen on the
bridge's address. Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN); everything is removed when the run ends."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import random
import re
import subprocess
from dataclasses import dataclass, field

NODES_PER_CLUSTER = 48  # /24s per cluster: cluster c's node n gets 10.R.(c * 48 + n).0/24


class NetworkError(Exception):
    pass


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise NetworkError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def _used_prefixes() -> set[ipaddress.IPv4Network]:
    routes = _ip("-4", "route", "show", "table", "all", check=False).stdout.split("\n")
    found = set()
    for line in routes:
        head = line.split(" ", 1)[0]
        with contextlib.suppress(ValueError):
            if "/" in head:
                found.add(ipaddress.IPv4Network(head, strict=False))
    return found


def remove_stale() -> list[str]:
    """The bridges and namespaces of earlier runs that ended without closing their network (killed): a bridge or
    namespace named rh<pid> whose process is gone. A run that is alive keeps its own."""

    def gone(name: str) -> bool:
        match = re.match(r"rh(\d+)(?:-|$)", name)
        return match is not None and not os.path.exists(f"/proc/{match.group(1)}")

    removed = []
    for line in _ip("netns", "list", check=False).stdout.splitlines():
        netns = line.split(" ", 1)[0]
        if gone(netns):
            _ip("netns", "del", netns, check=False)
            removed.append(netns)
    for line in _ip("-o", "link", "show", "type", "bridge", check=False).stdout.splitlines():
        bridge = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        if gone(bridge):
            _ip("link", "del", bridge, check=False)
            removed.append(bridge)
    return removed


@dataclass
class PodNetwork:
    prefix: ipaddress.IPv4Network
    bridge: str
    sandboxes: list[str] = field(default_factory=list)

    @classmethod
    def create(cls) -> PodNetwork:
        remove_stale()
        used = _used_prefixes()
        tag = f"{os.getpid() % 100000}"
        for second in random.sample(range(64, 192), 128):
            prefix = ipaddress.IPv4Network(f"10.{second}.0.0/16")
            if any(prefix.overlaps(u) for u in used):
                continue
            network = cls(prefix, f"rh{tag}")
            _ip("link", "add", network.bridge, "type", "bridge")
            _ip("addr", "add", f"{network.host_ip}/16", "dev", network.bridge)
            _ip("link", "set", network.bridge, "up")
            return network
        raise NetworkError("no free 10.x.0.0/16 for the rehearsal's pod network")

    @property
    def host_ip(self) -> str:
        """The bridge's address: where the API servers listen, reachable from every pod."""
        return str(self.prefix.network_address + (255 << 8) + 1)

    def node_cidr(self, cluster_index: int, node_number: int) -> str:
        if node_number >= NODES_PER_CLUSTER or cluster_index * NODES_PER_CLUSTER + node_number >= 255:
            raise NetworkError(f"cluster {cluster_index}: more than {NODES_PER_CLUSTER} nodes")
        third = cluster_index * NODES_PER_CLUSTER + node_number
        return str(ipaddress.ip_network(f"{self.prefix.network_address + (third << 8)}/24"))

    def sandbox(self, name: str, ip: str) -> str:
        """A network namespace holding `ip` on eth0, its default route via the bridge; returns its name."""
        netns = f"{self.bridge}-{name}"[:60]
        veth = f"v{abs(hash(netns)) % 10**9}"[:15]
        _ip("netns", "add", netns)
        self.sandboxes.append(netns)
        _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", netns)
        _ip("link", "set", veth, "master", self.bridge)
        _ip("link", "set", veth, "up")
        _ip("-n", netns, "addr", "add", f"{ip}/16", "dev", "eth0")
        _ip("-n", netns, "link", "set", "eth0", "up")
        _ip("-n", netns, "link", "set", "lo", "up")
        _ip("-n", netns, "route", "add", "default", "via", self.host_ip)
        return netns

    def remove_sandbox(self, netns: str) -> None:
        _ip("netns", "del", netns, check=False)
        if netns in self.sandboxes:
            self.sandboxes.remove(netns)

    def close(self) -> None:
        for netns in list(self.sandboxes):
            self.remove_sandbox(netns)
        _ip("link", "del", self.bridge, check=False)
