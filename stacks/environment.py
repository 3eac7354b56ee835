"""One environment: every region's platform, then cross-region pieces and stack outputs."""

from __future__ import annotations

import pulumi

from components.spec.environment import EnvironmentSpec
from stacks.model_storage import sync_model_stores
from stacks.region import RegionalPlatform, RegionalPlatformArgs


def build_environment(env: EnvironmentSpec, stack: str) -> dict[str, RegionalPlatform]:
    regions = {
        region.name: RegionalPlatform(region.name, RegionalPlatformArgs(env=env, region=region, stack=stack))
        for region in env.regions
    }
    sync_model_stores(env, regions)
    pulumi.export(
        "clusters",
        {
            name: {
                "name": platform.cluster.name,
                "cloud": platform.cluster.cloud,
                "region": platform.cluster.region.region,
                "endpoint": platform.cluster.endpoint,
            }
            for name, platform in regions.items()
        },
    )
    pulumi.export(
        "kubeconfigs",
        pulumi.Output.secret({name: p.cluster.kubeconfig for name, p in regions.items()}),
    )
    return regions
