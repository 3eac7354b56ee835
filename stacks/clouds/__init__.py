"""Per-cloud cluster assembly (explicit providers, network, cluster)."""

from __future__ import annotations

from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec


def platform_tags(env: EnvironmentSpec, region: RegionSpec, stack: str) -> dict[str, str]:
    """Cost allocation and ownership on every resource (AWS tags, GCP labels)."""
    return {"platform": "inference-platform", "environment": stack, "region-entry": region.name, **env.tags}
