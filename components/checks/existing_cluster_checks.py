"""Checks of `regions[].cluster.existing`: ids in the format each cloud takes, egress addresses that peers can
allow, and one region entry per cluster. Plain functions over the typed models, each issue at its key path."""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import IPv4Address, IPv4Network

from components.config.base import Issue, KeyPath, join_path
from components.config.environment import EnvironmentSpec
from components.config.region import ExistingClusterSpec, RegionSpec
from components.domain.federation_members import dialled_from_the_host, federation_members, search_members

# Addresses no peer on the internet sees a cluster come from (RFC 1918, shared CGNAT space RFC 6598, loopback,
# link-local, "this network", multicast and reserved). Documentation ranges (RFC 5737) stay allowed: examples use them.
NOT_EGRESS = tuple(
    IPv4Network(n)
    for n in (
        "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
        "0.0.0.0/8", "224.0.0.0/4", "240.0.0.0/4",
    )
)  # fmt: skip


def _egress_issues(
    existing: ExistingClusterSpec, at: KeyPath, federated_pull: bool, dialling_host: str | None
) -> Iterator[Issue]:
    """`dialling_host`: what dials other members from this cluster, when it is the federation host (None: nothing)."""
    for i, address in enumerate(existing.egress_ips):
        if any(IPv4Address(address) in network for network in NOT_EGRESS):
            yield Issue(
                join_path(*at, "egressIps", i),
                f"{address} is not a public address; list the NAT addresses the cluster reaches the internet from",
            )
    if federated_pull and not existing.egress_ips:
        yield Issue(
            join_path(*at, "egressIps"),
            "a pull member's agent calls the Karmada API from its NAT addresses, which the allowlist must list; "
            "add egressIps: [<NAT address>, ...]",
        )
    if dialling_host and not existing.egress_ips:
        yield Issue(
            join_path(*at, "egressIps"),
            f"pods on the federation host ({dialling_host}) dial other members from its NAT addresses, which the "
            "members' endpoints must admit (the program adds them to the clusters it creates); add egressIps: "
            "[<NAT address>, ...]",
        )


def check_existing_clusters(env: EnvironmentSpec) -> Iterator[Issue]:
    """Every existing cluster: its ids, its egress addresses, and no cluster claimed by two region entries."""
    pull = env.federation.enabled and env.federation.member_mode == "pull"
    members = {r.name for r in federation_members(env)} if pull else set()
    dialling = _dialling(env)
    seen: dict[tuple[str, str, str, str], int] = {}
    for i, region in enumerate(env.regions):
        existing = region.cluster.existing
        if existing is None:
            continue
        at = ("regions", i, "cluster", "existing")
        yield from existing.id_issues(at)
        host = region.name == env.federation.host
        yield from _egress_issues(existing, at, region.name in members, dialling if host else None)
        key = _cluster_key(region, existing)
        if key in seen:
            yield Issue(
                join_path(*at, "name"),
                f"cluster {existing.name!r} is also regions[{seen[key]}]'s: one cluster takes one region entry (its "
                "GPU pools, add-ons and models would be declared twice); merge the two entries",
            )
        seen.setdefault(key, i)


def _dialling(env: EnvironmentSpec) -> str | None:
    """What on the federation host dials other members through their endpoints (None: nothing does)."""
    dialled = {r.name for r in dialled_from_the_host(env)}
    if not dialled:
        return None
    pushed = env.federation.member_mode == "push"
    indexed = dialled & {r.name for r in search_members(env)}
    who = ["Karmada controllers"] * pushed + ["Clusterpedia's synchro manager"] * bool(indexed)
    return " and ".join(who)


def _cluster_key(region: RegionSpec, existing: ExistingClusterSpec) -> tuple[str, str, str, str]:
    return (region.cloud, region.project or "", region.region, existing.name)
