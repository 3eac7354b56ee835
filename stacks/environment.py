"""One Pulumi stack of an environment: the whole environment, one region entry, or the global part.

components/domain/stack_split.py says which stacks an environment has and what each reads from the others; the
outputs exported here are what those references read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from components.addons.gateway_tls import GatewayCa
from components.config.base import ConfigError, Issue
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.config.stacks import StackSlice, region_stack_name
from components.domain.federation_members import dialled_from_the_host
from components.domain.gateways import has_gateway
from components.domain.stack_split import resolve_stack
from components.serving.tenant_api_keys import TenantApiKeys, TenantApiKeysArgs
from stacks.clouds import model_store_output, model_store_ref
from stacks.config import BOOTSTRAP_VARIABLE, ProgramMode
from stacks.model_storage import sync_model_stores
from stacks.references import output_item, stack_reference
from stacks.region import RegionalPlatform, RegionalPlatformArgs


def build_stack(env: EnvironmentSpec, stack_name: str, mode: ProgramMode = "full") -> None:
    """What `pulumi up` of `stack_name` creates; `network`: only its region's provider and network."""
    env_name, piece = resolve_stack(env, stack_name)
    if mode == "network":
        _network_step(env, env_name, piece)
        return
    match piece:
        case StackSlice(kind="environment"):
            _whole_environment(env, env_name)
        case StackSlice(kind="region", region=str(region)):
            _region_stack(env, env_name, env.region(region))
        case StackSlice(kind="global"):
            _global_stack(env, env_name)
        case _:
            raise ValueError(f"stack {piece.name!r} is a region stack without its region")


def _network_step(env: EnvironmentSpec, env_name: str, piece: StackSlice) -> None:
    """A region's first step on an empty account, before the runner that lives in its network exists: every resource
    it registers has its parent, dependencies and provider among them, so a targeted `up` of them all creates them
    alone (PULUMI_TARGETED_CREATE, components/catalog/bringup.py). It exports nothing: the stack has no outputs until
    its first full `up` (how the rollout tells a bootstrapped stack from a deployed one)."""
    if piece.kind != "region" or piece.region is None or env.region(piece.region).cluster.existing is not None:
        raise ConfigError(
            [Issue("", f"{BOOTSTRAP_VARIABLE}=network: stack {piece.name} creates no network of its own; unset it")]
        )
    region = env.region(piece.region)
    RegionalPlatform(region.name, RegionalPlatformArgs(env=env, region=region, stack=env_name, network_only=True))


def _needs_api_keys(env: EnvironmentSpec) -> bool:
    return env.gateway.auth == "apiKey" and bool(env.tenants) and any(has_gateway(env, r) for r in env.regions)


def _needs_gateway_ca(env: EnvironmentSpec) -> bool:
    return env.gateway.tls.issuer == "privateCa" and any(has_gateway(env, r) for r in env.regions)


def _gateway_ca(env: EnvironmentSpec, env_name: str) -> GatewayCa | None:
    """The environment's gateway CA, created where the environment's shared secrets live (the anchor's stack): its root
    and an intermediate per region with a gateway."""
    if not _needs_gateway_ca(env):
        return None
    regions = [r.name for r in env.regions if has_gateway(env, r)]
    return GatewayCa("gateway-ca", common_name=f"{env_name} inference gateways", regions=regions)


def _issuing_ca(ca: GatewayCa | None, region: str) -> tuple[pulumi.Output[str], pulumi.Output[str]] | None:
    issuing = ca.intermediates.get(region) if ca is not None else None
    return (issuing.chain_pem, issuing.key_pem) if issuing is not None else None


def _tenant_api_keys(env: EnvironmentSpec) -> dict[str, pulumi.Output[str]]:
    if not _needs_api_keys(env):
        return {}
    return TenantApiKeys("tenant-api-keys", TenantApiKeysArgs(tenants=[t.name for t in env.tenants])).keys


def dialled_by_the_host(env: EnvironmentSpec, region: RegionSpec) -> bool:
    """A member the federation host's pods dial (dialled_from_the_host) whose cluster the program creates: its public
    endpoint admits the host's NAT egress. A team's existing cluster is not changed."""
    return region.cluster.existing is None and region.name in {r.name for r in dialled_from_the_host(env)}


def _whole_environment(env: EnvironmentSpec, env_name: str) -> None:
    api_keys = _tenant_api_keys(env)
    gateway_ca = _gateway_ca(env, env_name)
    regions: dict[str, RegionalPlatform] = {}
    # The anchor (the federation's host) first when it dials a member: that member's endpoint admits its NAT egress.
    dialled = any(dialled_by_the_host(env, r) for r in env.regions)
    for region in sorted(env.regions, key=lambda r: r.name != env.anchor_region()) if dialled else env.regions:
        host = regions.get(env.anchor_region())
        regions[region.name] = RegionalPlatform(
            region.name,
            RegionalPlatformArgs(
                env=env,
                region=region,
                stack=env_name,
                api_keys=api_keys,
                gateway_ca=_issuing_ca(gateway_ca, region.name),
                public_sources=host.cluster.egress_ips
                if host is not None and dialled_by_the_host(env, region)
                else None,
            ),
        )
    regions = {r.name: regions[r.name] for r in env.regions}  # in the environment's order, as before
    sync_model_stores(
        env,
        env_name,
        {name: p.model_storage.ref for name, p in regions.items()},
        providers={name: p.cluster.cloud_providers[p.cluster.cloud] for name, p in regions.items()},
    )
    _export_regions(env, regions)
    if api_keys:
        pulumi.export("apiKeys", pulumi.Output.secret(api_keys))
    if gateway_ca is not None:
        pulumi.export("gatewayCa", gateway_ca.cert_pem)
    if env.federation.enabled:
        from stacks.federation_parts import federate_in_one_stack

        _export_all(federate_in_one_stack(env, env_name, {n: p.cluster for n, p in regions.items()}))
    if env.federation.enabled and env.federation.search.enabled:
        from stacks.search import search_in_one_stack

        search_in_one_stack(env, {n: p.cluster for n, p in regions.items()})


def _region_stack(env: EnvironmentSpec, env_name: str, region: RegionSpec) -> None:
    anchor = env.anchor_region()
    is_anchor = region.name == anchor
    anchor_stack = None if is_anchor else stack_reference(region_stack_name(env_name, anchor))
    if anchor_stack is None:
        api_keys = _tenant_api_keys(env)
    elif _needs_api_keys(env):
        api_keys = {t.name: output_item(anchor_stack, "apiKeys", t.name) for t in env.tenants}
    else:
        api_keys = {}
    gateway_ca = _gateway_ca(env, env_name) if is_anchor else None
    issuing = _issuing_ca(gateway_ca, region.name)
    if anchor_stack is not None and _needs_gateway_ca(env) and has_gateway(env, region):
        # its intermediate only: the root's key stays in the anchor's state
        issuing = (
            output_item(anchor_stack, "gatewayIssuers", region.name, "chain"),
            pulumi.Output.secret(output_item(anchor_stack, "gatewayIssuers", region.name, "key")),
        )
    platform = RegionalPlatform(
        region.name,
        RegionalPlatformArgs(
            env=env,
            region=region,
            stack=env_name,
            api_keys=api_keys,
            gateway_ca=issuing,
            # the anchor is the federation's host: its stack exports its NAT egress
            public_sources=output_item(anchor_stack, "egressIps")
            if anchor_stack is not None and dialled_by_the_host(env, region)
            else None,
        ),
    )
    _export_regions(env, {region.name: platform})
    pulumi.export("modelStore", model_store_output(platform.model_storage.ref))
    pulumi.export("egressIps", platform.cluster.egress_ips or [])
    if is_anchor and api_keys:
        pulumi.export("apiKeys", pulumi.Output.secret(api_keys))
    if is_anchor and gateway_ca is not None:
        pulumi.export("gatewayCa", gateway_ca.cert_pem)  # what clients (and the rollout's gateway gate) trust
        others = {name: ca for name, ca in gateway_ca.intermediates.items() if name != region.name}
        if others:  # each other region's intermediate, read by that region's stack only
            pulumi.export(
                "gatewayIssuers",
                pulumi.Output.secret({name: {"chain": ca.chain_pem, "key": ca.key_pem} for name, ca in others.items()}),
            )
    if env.federation.enabled:
        from stacks.federation_parts import federate_region

        _export_all(federate_region(env, env_name, platform.cluster, anchor_stack))
    if env.federation.enabled and env.federation.search.enabled:
        from stacks.search import search_region

        _export_all(search_region(env, platform.cluster))


def _global_stack(env: EnvironmentSpec, env_name: str) -> None:
    references = {r.name: stack_reference(region_stack_name(env_name, r.name)) for r in env.regions}
    sync_model_stores(
        env,
        env_name,
        {
            name: model_store_ref(env.region(name).cloud, ref.require_output("modelStore"))
            for name, ref in references.items()
        },
    )
    if env.federation.enabled:
        from stacks.federation_parts import federate_globally

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


def _export_all(outputs: Mapping[str, pulumi.Input[Any]]) -> None:
    for key, value in outputs.items():
        pulumi.export(key, value)
