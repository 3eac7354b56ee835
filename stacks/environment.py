"""One environment: every region's platform, then cross-region pieces and stack outputs."""

from __future__ import annotations

import pulumi

from components.serving.tenant_api_keys import TenantApiKeys, TenantApiKeysArgs
from components.spec.environment import EnvironmentSpec
from components.spec.gateway import has_gateway
from stacks.model_storage import sync_model_stores
from stacks.region import RegionalPlatform, RegionalPlatformArgs


def build_environment(env: EnvironmentSpec, stack: str) -> dict[str, RegionalPlatform]:
    api_keys = {}
    if env.gateway.auth == "apiKey" and env.tenants and any(has_gateway(env, r) for r in env.regions):
        api_keys = TenantApiKeys("tenant-api-keys", TenantApiKeysArgs([t.name for t in env.tenants])).keys
    regions = {
        region.name: RegionalPlatform(
            region.name, RegionalPlatformArgs(env=env, region=region, stack=stack, api_keys=api_keys)
        )
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
    gateways = {name: p.gateway for name, p in regions.items() if p.gateway is not None}
    if gateways:
        pulumi.export(
            "gateways",
            {
                name: {
                    "hostname": g.hostname,
                    "baseUrl": f"https://{g.hostname}/v1",  # OpenAI SDK base_url
                    "exposure": env.region(name).gateway.exposure,
                    "models": g.models,
                }
                for name, g in gateways.items()
            },
        )
    if api_keys:
        pulumi.export("apiKeys", pulumi.Output.secret(api_keys))
    return regions
