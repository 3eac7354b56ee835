"""The inference gateway's narrow inputs from the environment: its hostname, what it routes in the region, the
tenants' budgets and classes, the providers offered there."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.addons.inference_gateway import InferenceGatewayArgs
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.domain.gateways import gateway_hostname
from components.k8s.cluster import ClusterHandle
from components.serving import gateway_specs as specs
from components.serving import stand_in
from components.serving.deployment import model_placements
from components.serving.network_policies import prometheus_namespace
from components.serving.priority_classes import objectives_context


def inference_gateway_args(
    env: EnvironmentSpec,
    region: RegionSpec,
    cluster: ClusterHandle,
    *,
    serving_namespace: k8s.core.v1.Namespace,
    inference_pool_crds: pulumi.Resource,
    api_keys: Mapping[str, pulumi.Output[str]],
    cert_manager: Sequence[pulumi.Resource],
) -> InferenceGatewayArgs:
    hostname = gateway_hostname(env, region)
    routes = specs.route_specs(env, region, hostname)
    stand_ins = stand_in.stand_ins(env, region)
    if stand_ins:
        routes |= stand_in.route_specs(env, region, hostname)
    return InferenceGatewayArgs(
        cluster=cluster,
        cloud=region.cloud,
        hostname=hostname,
        gateway=env.gateway,
        region_gateway=region.gateway,
        production=env.production,
        placements=model_placements(env, region),
        routes=routes,
        routed_models=[target.model for target in specs.route_targets(env, region)],
        webhook_source_cidr=region.network.webhook_source_cidr,
        prometheus_namespace=prometheus_namespace(region.observability),
        serving_namespace=serving_namespace,
        inference_pool_crds=inference_pool_crds,
        stand_ins=stand_ins,
        tenants=env.tenants,
        objectives=objectives_context(env, region),
        external_providers=[p for p in env.gateway.external_providers if p.offered_in(region.name)],
        api_keys=api_keys,
        cert_manager=cert_manager,
    )
