"""The internet's address space, for coverage checks shared by config validation and the policy pack.

A set of sources is open to the internet when, together with the address space that is not the internet
(private, loopback, link-local, multicast, documentation, reserved), it collapses to the whole space:
"0.0.0.0/0", "0.0.0.0/1 + 128.0.0.0/1", "1.2.3.4/0" and every public block listed one by one all are.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

# IANA special-purpose space (RFC 6890 and successors): not reachable from the internet.
_NOT_INTERNET_V4 = [
    ipaddress.ip_network(n)
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
_NOT_INTERNET_V6 = [ipaddress.ip_network(n) for n in ("::/3", "4000::/2", "8000::/1", "2001:db8::/32")]
_WHOLE = {4: ipaddress.ip_network("0.0.0.0/0"), 6: ipaddress.ip_network("::/0")}


def _networks(cidrs: Iterable[object]) -> list:
    found = []
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
    for version, reserved in ((4, _NOT_INTERNET_V4), (6, _NOT_INTERNET_V6)):
        mine = [n for n in networks if n.version == version]
        if mine and list(ipaddress.collapse_addresses([*mine, *reserved])) == [_WHOLE[version]]:
            return True
    return False
