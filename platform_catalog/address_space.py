"""The internet's address space, for coverage checks shared by config validation and the policy pack.

A set of sources is open to the internet when, together with the address space that is not the internet
(private, loopback, link-local, multicast, documentation, reserved), it collapses to the whole space:
"0.0.0.0/0", "0.0.0.0/1 + 128.0.0.0/1", "1.2.3.4/0" and every public block listed one by one all are.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from functools import cache
from typing import TypeVar

from publicsuffixlist import PublicSuffixList

# IANA special-purpose space (RFC 6890 and successors): not reachable from the internet.
_NOT_INTERNET_V4 = [
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/3",
    )
]
# Global unicast is 2000::/3; everything else (and documentation space) is not the internet.
_NOT_INTERNET_V6 = [ipaddress.IPv6Network(n) for n in ("::/3", "4000::/2", "8000::/1", "2001:db8::/32")]
_Network = TypeVar("_Network", ipaddress.IPv4Network, ipaddress.IPv6Network)


def _networks(cidrs: Iterable[object]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    found: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for cidr in cidrs:
        if not isinstance(cidr, str):
            continue
        text = cidr.strip()
        try:
            found.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            continue
    return found


def covers_internet(cidrs: Iterable[object]) -> bool:
    """True when the blocks, together, reach every internet address of IPv4 or of IPv6."""
    networks = _networks(cidrs)
    v4 = [n for n in networks if isinstance(n, ipaddress.IPv4Network)]
    v6 = [n for n in networks if isinstance(n, ipaddress.IPv6Network)]
    return _cover(v4, _NOT_INTERNET_V4, ipaddress.IPv4Network("0.0.0.0/0")) or _cover(
        v6, _NOT_INTERNET_V6, ipaddress.IPv6Network("::/0")
    )


def _cover(mine: list[_Network], reserved: list[_Network], whole: _Network) -> bool:
    return bool(mine) and list(ipaddress.collapse_addresses([*mine, *reserved])) == [whole]


@cache
def _icann() -> PublicSuffixList:
    return PublicSuffixList(only_icann=True, accept_unknown=False)


def cluster_local(host: str) -> bool:
    """A host a pod's lookup never takes out of the cluster: the loopback, a Service name (`<svc>`), its `.svc`
    names, or `<svc>.<namespace>`, which the pod's DNS search path resolves in the cluster (kubelet's ClusterFirst
    resolv.conf: search <ns>.svc.cluster.local svc.cluster.local cluster.local, ndots 5) and which no public name
    can be unless its last label is an ICANN top-level domain (the Public Suffix List's ICANN section)."""
    host = host.lower().rstrip(".")
    if host in ("localhost", "::1") or host.startswith("127.") or "." not in host:
        return True
    if host.endswith((".svc", ".svc.cluster.local", ".cluster.local")):
        return True
    labels = host.split(".")
    try:
        ipaddress.ip_address(host)
        return False
    except ValueError:
        pass
    return len(labels) == 2 and _icann().publicsuffix(host) is None
