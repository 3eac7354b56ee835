"""One Pulumi stack of an environment: the whole environment, one region entry, or the global part.

components/config/stacks.py says which stacks an environment has and what each reads from the others; the
outputs exported here are what those references read.
"""

from __future__ import annotations

from collections.abc import Mapping

import pulumi

from components.addons.gateway_tls import GatewayCa
from components.config.environment import EnvironmentSpec
from components.config.gateway import has_gateway
from components.config.stacks import StackSlice, anchor_region, region_stack_name, resolve_stack
from components.serving.tenant_api_keys import TenantApiKeys, TenantApiKeysArgs
from stacks.clouds import ModelStoreRef, model_store_output
from stacks.model_storage import sync_model_stores
from stacks.references import output_item, stack_reference
from stacks.region import RegionalPlatform, RegionalPlatformArgs


def build_stack(env: EnvironmentSpec, stack_name: str) -> None:
    """What `pulumi up` of `stack_name` creates."""
    env_name, piece = resolve_stack(env, stack_name)
    match piece.kind:
        case "environment":
            _whole_environment(env, env_name)
        case "region":
            _region_stack(env, env_name, piece)
        case "global":
            _global_stack(env, env_name)


def _needs_api_keys(env: EnvironmentSpec) -> bool:
    return env.gateway.auth == "apiKey" and bool(env.tenants) and any(has_gateway(env, r) for r in env.regions)


def _needs_gateway_ca(env: EnvironmentSpec) -> bool:
    return env.gateway.tls.issuer == "privateCa" and any(has_gateway(env, r) for r in env.regions)


def _gateway_ca(env: EnvironmentSpec, env_name: str) -> tuple[pulumi.Output[str], pulumi.Output[str]] | None:
    """The environment's gateway CA, created where the environment's shared secrets live (the anchor's stack)."""
    if not _needs_gateway_ca(env):
        return None
    ca = GatewayCa("gateway-ca", common_name=f"{env_name} inference gateways")
    return ca.cert_pem, ca.key_pem


def _tenant_api_keys(env: EnvironmentSpec) -> dict[str, pulumi.Output[str]]:
    if not _needs_api_keys(env):
        return {}
    return TenantApiKeys("tenant-api-keys", TenantApiKeysArgs(tenants=[t.name for t in env.tenants])).keys


def _whole_environment(env: EnvironmentSpec, env_name: str) -> None:
    api_keys = _tenant_api_keys(env)
    gateway_ca = _gateway_ca(env, env_name)
    regions = {
        region.name: RegionalPlatform(
            region.name,
            RegionalPlatformArgs(env=env, region=region, stack=env_name, api_keys=api_keys, gateway_ca=gateway_ca),
        )
        for region in env.regions
    }
    sync_model_stores(
        env,
        env_name,
        {name: p.model_storage.ref for name, p in regions.items()},
        providers={name: p.cluster.cloud_provider for name, p in regions.items()},
    )
    _export_regions(env, regions)
    if api_keys:
        pulumi.export("apiKeys", pulumi.Output.secret(api_keys))
    if gateway_ca is not None:
        pulumi.export("gatewayCa", gateway_ca[0])
    if env.federation.enabled:
        from stacks.federation import federate_in_one_stack

        _export_all(federate_in_one_stack(env, env_name, {n: p.cluster for n, p in regions.items()}))


def _region_stack(env: EnvironmentSpec, env_name: str, piece: StackSlice) -> None:
    region = env.region(piece.region)
    anchor = anchor_region(env)
    is_anchor = region.name == anchor
    anchor_stack = None if is_anchor else stack_reference(region_stack_name(env_name, anchor))
    if is_anchor:
        api_keys = _tenant_api_keys(env)
    elif _needs_api_keys(env):
        assert anchor_stack is not None
        api_keys = {t.name: output_item(anchor_stack, "apiKeys", t.name) for t in env.tenants}
    else:
        api_keys = {}
    if is_anchor:
        gateway_ca = _gateway_ca(env, env_name)
    elif _needs_gateway_ca(env):
        assert anchor_stack is not None
        gateway_ca = (
            anchor_stack.require_output("gatewayCa"),
            pulumi.Output.secret(anchor_stack.require_output("gatewayCaKey")),
        )
    else:
        gateway_ca = None
    platform = RegionalPlatform(
        region.name,
        RegionalPlatformArgs(env=env, region=region, stack=env_name, api_keys=api_keys, gateway_ca=gateway_ca),
    )
    _export_regions(env, {region.name: platform})
    pulumi.export("modelStore", model_store_output(platform.model_storage.ref))
    pulumi.export("egressIps", platform.cluster.egress_ips or [])
    if is_anchor and api_keys:
        pulumi.export("apiKeys", pulumi.Output.secret(api_keys))
    if is_anchor and gateway_ca is not None:
        pulumi.export("gatewayCa", gateway_ca[0])  # what clients (and the rollout's gateway gate) trust
        pulumi.export("gatewayCaKey", pulumi.Output.secret(gateway_ca[1]))
    if env.federation.enabled:
        from stacks.federation import federate_region

        _export_all(federate_region(env, env_name, platform.cluster, anchor_stack))


def _global_stack(env: EnvironmentSpec, env_name: str) -> None:
    references = {r.name: stack_reference(region_stack_name(env_name, r.name)) for r in env.regions}
    sync_model_stores(
        env,
        env_name,
        {
            name: ModelStoreRef.from_output(env.region(name).cloud, ref.require_output("modelStore"))
            for name, ref in references.items()
        },
    )
    if env.federation.enabled:
        from stacks.federation import federate_globally

        _export_all(federate_globally(env, env_name, references))


def _export_regions(env: EnvironmentSpec, regions: Mapping[str, RegionalPlatform]) -> None:
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
    pulumi.export("kubeconfigs", pulumi.Output.secret({name: p.cluster.kubeconfig for name, p in regions.items()}))
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


def _export_all(outputs: Mapping[str, pulumi.Input]) -> None:
    for key, value in outputs.items():
        pulumi.export(key, value)
