"""Karmada federation that can work: a host and members that are region entries, search that reaches the members,
federated models whose GPUs every member offers."""

from __future__ import annotations

from collections.abc import Iterator

from components.config.base import Issue, join_path, unknown_name
from components.config.environment import EnvironmentSpec
from components.domain.federation_members import federation_members, gpu_products, search_members
from platform_catalog.machines import MACHINES


def check_search(env: EnvironmentSpec) -> Iterator[Issue]:
    """Clusterpedia runs on the federation host and reaches each member's API server from there."""
    fed, search = env.federation, env.federation.search
    if not search.enabled:
        return
    if not fed.enabled:
        yield Issue(
            "federation.search.enabled",
            "Clusterpedia runs on the federation host; set federation.enabled: true or remove federation.search",
        )
        return
    if fed.host not in [r.name for r in env.regions]:
        return  # check_federation reports the host
    members = [r.name for r in federation_members(env)]
    for i, name in enumerate(search.members or []):
        if name not in members:
            yield Issue(
                join_path("federation", "search", "members", i),
                f"{name!r} is not a federation member ({', '.join(members)}); Clusterpedia indexes members only",
            )
    for region in search_members(env):
        if region.name == fed.host or region.api_access.public_cidrs:
            continue
        i = next(i for i, r in enumerate(env.regions) if r.name == region.name)
        fix = (
            f"{region.name} is a cluster the program does not change: open its public endpoint to {fed.host}'s NAT "
            f"egress yourself (the `egressIps` output of {fed.host}'s stack, or regions[].cluster.existing.egressIps "
            "of an existing host) and list here the CIDRs it admits"
            if region.cluster.existing is not None
            else "open its public endpoint by listing here the CIDRs it admits (the program adds "
            f"{fed.host}'s NAT egress itself to a cluster it creates)"
        )
        yield Issue(
            join_path("regions", i, "apiAccess", "publicCidrs"),
            f"Clusterpedia on {fed.host} syncs {region.name} through its API server, which is private and has no "
            f"path from {fed.host}; {fix}, or leave {region.name} out of federation.search.members",
        )


def check_federation(env: EnvironmentSpec) -> Iterator[Issue]:
    """Structure of the federation: the host, the members and the mirrors name regions of the environment."""
    fed = env.federation
    names = [r.name for r in env.regions]
    if fed.host is not None and fed.host not in names:
        yield unknown_name("federation.host", "region", fed.host, names)
    for i, name in enumerate(fed.members or []):
        if name not in names:
            yield unknown_name(join_path("federation", "members", i), "region", name, names)
    for name in fed.registry_mirrors:
        if name not in names:
            yield unknown_name(join_path("federation", "registryMirrors", name), "region", name, names)
    if not fed.enabled:
        return
    if fed.host is None:
        yield Issue("federation.host", "required when federation is enabled; name the hosting region")
    if len(env.regions) < 2:
        yield Issue("federation.enabled", "federation needs at least two clusters; add a region or disable it")
    if fed.member_mode == "push":
        members = {r.name for r in federation_members(env)}
        for i, region in enumerate(env.regions):
            if region.name != fed.host and region.name in members and not region.api_access.public_cidrs:
                yield Issue(
                    join_path("regions", i, "apiAccess", "publicCidrs"),
                    f"push mode needs the Karmada controllers on {fed.host} to reach this cluster's API server, which "
                    f"is private; open its public endpoint by listing here the CIDRs it admits (the program adds "
                    f"{fed.host}'s NAT egress itself to a cluster it creates), or use federation.memberMode: pull",
                )


def check_federated_models(env: EnvironmentSpec) -> Iterator[Issue]:
    """Federated models run where members offer their GPU: one InferenceService per member cluster.

    Runs after placements and machine types are known to resolve.
    """
    fed = env.federation
    members = {r.name: r for r in federation_members(env)} if fed.enabled else {}
    for i, model in enumerate(env.models):
        if not model.federated:
            continue
        if not fed.enabled:
            yield Issue(
                join_path("models", i, "federated"),
                "federation is not enabled; set federation.enabled: true or remove federated",
            )
            continue
        seen: dict[str, int] = {}
        for j, placement in enumerate(model.placements):
            path = ("models", i, "placements", j)
            region = env.region(placement.region)
            pool = region.pool(placement.pool)
            assert pool is not None  # check_workloads resolved it
            gpu = MACHINES[pool.machine_type].gpu
            if placement.region not in members:
                offering = [name for name, r in members.items() if gpu in gpu_products(r)]
                where = (
                    f"members offering {gpu}: {', '.join(offering)}"
                    if offering
                    else f"{gpu} exists in no member ({', '.join(members) or 'none'})"
                )
                yield Issue(
                    join_path(*path, "region"),
                    f"{placement.region!r} is not a federation member, so it cannot serve the federated model "
                    f"{model.name!r} on {gpu}; {where}. Add {placement.region} to federation.members or place the "
                    "model on a member's pool",
                )
            if placement.region in seen:
                yield Issue(
                    join_path(*path),
                    f"a federated model runs one InferenceService per member cluster, and placements"
                    f"[{seen[placement.region]}] already puts {model.name!r} in {placement.region}; keep one pool "
                    "per region",
                )
            seen.setdefault(placement.region, j)
