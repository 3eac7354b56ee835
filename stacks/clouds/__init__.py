"""Per-cloud cluster assembly (explicit providers, network, cluster)."""

from __future__ import annotations

from typing import assert_never

import pulumi

from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec


def platform_tags(env: EnvironmentSpec, region: RegionSpec, stack: str) -> dict[str, str]:
    """Cost allocation and ownership on every resource (AWS tags, GCP labels)."""
    return {"platform": "inference-platform", "environment": stack, "region-entry": region.name, **env.tags}


def cloud_provider(
    env: EnvironmentSpec, region: RegionSpec, env_name: str, parent: pulumi.Resource | None = None
) -> pulumi.ProviderResource:
    """The region's own explicit cloud provider, tagging everything it creates."""
    opts = pulumi.ResourceOptions(parent=parent)
    match region.cloud:
        case "aws":
            import pulumi_aws as aws

            return aws.Provider(
                f"{region.name}-aws",
                region=region.region,
                default_tags={"tags": platform_tags(env, region, env_name)},
                opts=opts,
            )
        case "gcp":
            import pulumi_gcp as gcp

            return gcp.Provider(
                f"{region.name}-gcp",
                project=region.project,
                region=region.region,
                default_labels=platform_tags(env, region, env_name),
                opts=opts,
            )
        case other:
            assert_never(other)
