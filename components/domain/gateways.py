"""Which clusters run an inference gateway, and the name each one answers on."""

from __future__ import annotations

from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec


def serves_models(env: EnvironmentSpec, region: RegionSpec) -> bool:
    return any(p.region == region.name for m in env.models for p in m.placements)


def has_gateway(env: EnvironmentSpec, region: RegionSpec) -> bool:
    """A gateway runs on every cluster that serves models, unless switched off."""
    return env.gateway.enabled and region.gateway.enabled and serves_models(env, region)


def gateway_hostname(env: EnvironmentSpec, region: RegionSpec) -> str:
    return region.gateway.hostname or f"{region.name}.{env.gateway.domain}"
