"""One environment: every region's platform, then cross-region pieces and stack outputs."""

from __future__ import annotations

import pulumi

from components.config.environment import EnvironmentSpec
from components.config.gateway import has_gateway
from components.serving.tenant_api_keys import TenantApiKeys, TenantApiKeysArgs
from stacks.model_storage import sync_model_stores
from stacks.region import RegionalPlatform, RegionalPlatformArgs


def build_environment(env: EnvironmentSpec, stack: str) -> dict[str, RegionalPlatform]:
    api_keys = {}
    if env.gateway.auth == "apiKey" and env.tenants and any(has_gateway(env, r) for r in env.regions):
        api_keys = TenantApiKeys("tenant-api-keys", TenantApiKeysArgs(tenants=[t.name for t in env.tenants])).keys
    regions = {
        region.name: RegionalPlatform(
            region.name, RegionalPlatformArgs(env=env, region=region, stack=stack, api_keys=api_keys)
        )
        for region in env.regions
    }
    sync_model_stores(env, regions)
    if env.federation.enabled:
        _federate(env, stack, regions)
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


def _federate(env: EnvironmentSpec, stack: str, regions: dict[str, RegionalPlatform]) -> None:
    """Karmada over every region's cluster; its API server's kubeconfig is a secret output."""
    from components.federation.federation import KarmadaFederation, KarmadaFederationArgs
    from components.federation.render import inference_service_renderer, pod_disruption_budget_renderer

    federation = KarmadaFederation(
        f"{stack}-karmada",
        KarmadaFederationArgs(
            env=env,
            stack=stack,
            clusters={name: platform.cluster for name, platform in regions.items()},
            render=inference_service_renderer(env, stack),
            budget=pod_disruption_budget_renderer(env),
        ),
    )
    pulumi.export(
        "karmada",
        {
            "endpoint": federation.control_plane.endpoint,
            "host": federation.control_plane.api.region.name,
            "members": {name: member.registration.metadata["name"] for name, member in federation.members.items()},
            "federatedModels": list(federation.models),
        },
    )
    pulumi.export("karmadaKubeconfig", federation.control_plane.kubeconfig)
