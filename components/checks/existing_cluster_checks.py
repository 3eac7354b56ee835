"""Checks of `regions[].cluster.existing`: ids in the format each cloud takes, egress addresses that peers can
allow, and one region entry per cluster. Plain functions over the typed models, each issue at its key path."""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import IPv4Address, IPv4Network

from components.config.base import Issue, KeyPath, join_path
from components.config.environment import EnvironmentSpec
from components.config.region import ExistingClusterSpec, RegionSpec
from components.domain.federation_members import federation_members

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
    existing: ExistingClusterSpec, at: KeyPath, federated_pull: bool, push_host: bool
) -> Iterator[Issue]:
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
    if push_host and not existing.egress_ips:
        yield Issue(
            join_path(*at, "egressIps"),
            "the push-mode host's Karmada controllers dial each member from its NAT addresses, which the members' "
            "endpoints must admit (the program adds them to the clusters it creates); add egressIps: [<NAT address>, "
            "...]",
        )


def check_existing_clusters(env: EnvironmentSpec) -> Iterator[Issue]:
    """Every existing cluster: its ids, its egress addresses, and no cluster claimed by two region entries."""
    pull = env.federation.enabled and env.federation.member_mode == "pull"
    members = {r.name for r in federation_members(env)} if pull else set()
    # the push host's NAT egress matters only where its controllers dial another member through it
    push = env.federation.enabled and env.federation.member_mode == "push"
    dialled = [r.name for r in federation_members(env) if r.name != env.federation.host] if push else []
    push_host = env.federation.host if dialled else None
    seen: dict[tuple[str, str, str, str], int] = {}
    for i, region in enumerate(env.regions):
        existing = region.cluster.existing
        if existing is None:
            continue
        at = ("regions", i, "cluster", "existing")
        yield from existing.id_issues(at)
        yield from _egress_issues(existing, at, region.name in members, region.name == push_host)
        key = _cluster_key(region, existing)
        if key in seen:
            yield Issue(
                join_path(*at, "name"),
                f"cluster {existing.name!r} is also regions[{seen[key]}]'s: one cluster takes one region entry (its "
                "GPU pools, add-ons and models would be declared twice); merge the two entries",
            )
        seen.setdefault(key, i)


def _cluster_key(region: RegionSpec, existing: ExistingClusterSpec) -> tuple[str, str, str, str]:
    return (region.cloud, region.project or "", region.region, existing.name)
