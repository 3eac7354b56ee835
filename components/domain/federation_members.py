"""Which region entries' clusters join the Karmada federation, which of them its search indexes, and the GPUs
each offers the federation's placements."""

from __future__ import annotations

from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from platform_catalog.machines import MACHINES


def federation_members(env: EnvironmentSpec) -> list[RegionSpec]:
    """Regions whose clusters join Karmada, in config order: the listed ones, or every one with GPU pools."""
    names = env.federation.members
    return [r for r in env.regions if (r.name in names if names is not None else bool(r.gpu_pools))]


def search_members(env: EnvironmentSpec) -> list[RegionSpec]:
    """Regions whose clusters Clusterpedia indexes, in config order: the listed ones, or every federation member."""
    if not (env.federation.enabled and env.federation.search.enabled):
        return []
    names = env.federation.search.members
    return [r for r in federation_members(env) if names is None or r.name in names]


def dialled_from_the_host(env: EnvironmentSpec) -> list[RegionSpec]:
    """Members other than the federation host whose API servers pods on the host dial, through the member's public
    endpoint from the host's NAT egress: Karmada's controllers dial every push-mode member (catalog.bringup
    KARMADA_PUSH_MEMBER_READY), Clusterpedia's synchro manager every search member (CLUSTERPEDIA_MEMBER_HEALTHY)."""
    fed = env.federation
    if not fed.enabled:
        return []
    pushed = {r.name for r in federation_members(env)} if fed.member_mode == "push" else set()
    indexed = {r.name for r in search_members(env)}
    return [r for r in env.regions if r.name != fed.host and r.name in pushed | indexed]


def gpu_products(region: RegionSpec) -> list[str]:
    """GPU products a region's pools offer (catalog names), in pool order without repeats."""
    return list(dict.fromkeys(MACHINES[p.machine_type].gpu for p in region.gpu_pools))
