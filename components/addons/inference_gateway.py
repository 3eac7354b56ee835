"""The region's OpenAI-compatible entry: Envoy Gateway + Envoy AI Gateway, routes, tenants, budgets.

Envoy Gateway programs the Envoy proxies; the AI Gateway plugs into it as extension manager (it
rewrites the xDS Envoy Gateway generates: reads `model` from request bodies, records token usage,
talks to endpoint pickers) and adds AIGatewayRoute and friends. Object specs come from
components/serving/gateway_specs.py; this component creates them in dependency order: CRDs
(releases and the Inference Extension manifests) before the objects that use them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.addons.ratelimit_redis import RATELIMIT_CONTAINER, RateLimitRedis, RateLimitRedisArgs
from components.catalog.charts import CHARTS, INFERENCE_EXTENSION_CRDS
from components.config.environment import EnvironmentSpec
from components.config.gateway import ExternalProviderSpec, gateway_hostname
from components.config.region import RegionSpec
from components.k8s import names
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import helm_release, namespace
from components.serving import gateway_specs as specs
from components.serving.deployment import model_placements
from components.serving.inference_pool import InferencePool, InferencePoolArgs
from components.serving.network_policies import gateway_namespace_policies

AI_GATEWAY_NAMESPACE = "envoy-ai-gateway-system"
AI_GATEWAY_CONTROLLER = "ai-gateway-controller"  # ai-gateway-helm controller.fullnameOverride
EXTENSION_SERVER_PORT = 1063  # the controller's gRPC extension server (FACTS.md)
ENVOY_GATEWAY_RELEASE = "envoy-gateway"
AI_GATEWAY_CRDS_RELEASE = "ai-gateway-crds"
AI_GATEWAY_RELEASE = "ai-gateway"
EPP_AUTH_REVIEWER = "inference-epp-auth-reviewer"


def _ratelimit_patch(env: list[dict]) -> dict[str, Any]:
    container = {"name": RATELIMIT_CONTAINER, "env": env}
    return {"patch": {"type": "StrategicMerge", "value": {"spec": {"template": {"spec": {"containers": [container]}}}}}}


def envoy_gateway_values(redis_url: str, redis_env: list[dict], production: bool) -> dict[str, Any]:
    """gateway-helm values: the AI Gateway as extension manager, InferencePool backends, Redis-backed limits.

    From ai-gateway@v1.1.0:manifests/envoy-gateway-values.yaml plus its inference-pool and token-ratelimit
    add-ons. That add-on also pins the rate-limit image (60d8e81b) for Envoy Gateway releases whose default
    predated response costs; v1.9.0's own default (17b1956c) is newer, so it is kept.
    """
    values: dict[str, Any] = {
        "config": {
            "envoyGateway": {
                "gateway": {"controllerName": specs.CONTROLLER_NAME},
                # The rate limiter's REDIS_AUTH, for the platform's Redis: a strategic-merge patch of its
                # container, the way the AI Gateway's token-ratelimit add-on patches it
                # (ai-gateway@v1.1.0:examples/token_ratelimit/envoy-gateway-values-addon.yaml).
                "provider": {"type": "Kubernetes"}
                | ({"kubernetes": {"rateLimitDeployment": _ratelimit_patch(redis_env)}} if redis_env else {}),
                "logging": {"level": {"default": "info"}},
                "extensionApis": {"enableEnvoyPatchPolicy": True, "enableBackend": True},
                "extensionManager": {
                    "hooks": {
                        "xdsTranslator": {
                            "translation": {
                                kind: {"includeAll": True} for kind in ("listener", "route", "cluster", "secret")
                            },
                            "post": ["Translation", "Cluster", "Route"],
                        }
                    },
                    "service": {
                        "fqdn": {
                            "hostname": f"{AI_GATEWAY_CONTROLLER}.{AI_GATEWAY_NAMESPACE}.svc.cluster.local",
                            "port": EXTENSION_SERVER_PORT,
                        }
                    },
                    "backendResources": [
                        {"group": specs.INFERENCE_POOL_GROUP, "kind": "InferencePool", "version": "v1"}
                    ],
                },
                "rateLimit": {"backend": {"type": "Redis", "redis": {"url": redis_url}}},
            }
        },
    }
    if production:
        values["deployment"] = {"replicas": 2}
        values["podDisruptionBudget"] = {"minAvailable": 1}
    return values


def ai_gateway_values(production: bool) -> dict[str, Any]:
    """ai-gateway-helm values: OpenAI paths at the root (`/v1/...`), per-tenant token metrics."""
    return {
        "controller": {
            "fullnameOverride": AI_GATEWAY_CONTROLLER,
            # Observability's per-tenant token panels read the tenant attribute from the gen_ai metrics.
            "metricsRequestHeaderAttributes": f"{names.TENANT_HEADER}:{names.TENANT_METRIC_ATTRIBUTE}",
            "replicaCount": 2 if production else 1,
            "podDisruptionBudget": {"enabled": production},
            "resources": {
                "requests": {"cpu": "100m", "memory": "256Mi"},
                "limits": {"cpu": "1", "memory": "1Gi"},
            },
        },
        "endpointConfig": {"rootPrefix": "/", "openai": ""},
        "envoyGateway": {"namespace": names.ENVOY_GATEWAY_NAMESPACE},
    }


def _provider_credentials(provider: ExternalProviderSpec) -> tuple[str, pulumi.Output[str], dict]:
    """(Secret key, secret value, BackendSecurityPolicy body) of a provider; values stay Pulumi secrets."""
    if provider.type == "openai":
        key = pulumi.Output.secret(provider.api_key.get_secret_value())  # type: ignore[union-attr]
        return "apiKey", key, {"type": "APIKey", "apiKey": {"secretRef": {"name": _credentials(provider)}}}
    key_id = provider.access_key_id.get_secret_value()  # type: ignore[union-attr]
    secret = provider.secret_access_key.get_secret_value()  # type: ignore[union-attr]
    credentials_file = pulumi.Output.secret(
        f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}\n"
    )
    body = {
        "type": "AWSCredentials",
        "awsCredentials": {
            "region": provider.aws_region,
            "credentialsFile": {"secretRef": {"name": _credentials(provider)}, "profile": "default"},
        },
    }
    return "credentials", credentials_file, body


def _credentials(provider: ExternalProviderSpec) -> str:
    return f"{provider.name}-credentials"


def _schema(provider: ExternalProviderSpec) -> dict:
    return {"name": "AWSBedrock"} if provider.type == "bedrock" else {"name": "OpenAI"}


@dataclass(frozen=True)
class InferenceGatewayArgs:
    cluster: ClusterHandle
    env: EnvironmentSpec
    region: RegionSpec
    serving_namespace: k8s.core.v1.Namespace  # model servers, pools and routes live there
    api_keys: Mapping[str, pulumi.Output[str]] = field(default_factory=dict)  # tenant -> secret key


class InferenceGateway(pulumi.ComponentResource):
    """Envoy Gateway, the AI Gateway, the Gateway and its policies, one InferencePool per model, the routes."""

    hostname: str
    pools: dict[str, InferencePool]
    models: list[str]  # routed model names
    routes: dict[str, dict]  # AIGatewayRoute name -> spec

    def __init__(self, name: str, args: InferenceGatewayArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:InferenceGateway", name, None, opts)
        cluster, env, region = args.cluster, args.env, args.region
        gateway = env.gateway
        self.hostname = gateway_hostname(env, region)

        eg_ns = namespace(names.ENVOY_GATEWAY_NAMESPACE, cluster, self)
        for manifest in gateway_namespace_policies(region, specs.HTTPS_PORT):
            k8s.networking.v1.NetworkPolicy(
                f"{cluster.name}-netpol-eg-{manifest['metadata']['name']}",
                metadata=manifest["metadata"],
                spec=manifest["spec"],
                opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[eg_ns]),
            )
        aigw_ns = namespace(AI_GATEWAY_NAMESPACE, cluster, self)
        redis_url, redis_env = gateway.redis.url, []
        if redis_url is None:
            redis = RateLimitRedis(
                region.name, RateLimitRedisArgs(cluster, eg_ns), opts=pulumi.ResourceOptions(parent=self)
            )
            redis_url, redis_env = redis.url, redis.client_env
        envoy_gateway = helm_release(
            ENVOY_GATEWAY_RELEASE,
            CHARTS["gateway-helm"],
            cluster,
            eg_ns,
            envoy_gateway_values(redis_url, redis_env, env.production),
            parent=self,
        )
        ai_crds = helm_release(AI_GATEWAY_CRDS_RELEASE, CHARTS["ai-gateway-crds-helm"], cluster, aigw_ns, {}, self)
        helm_release(
            AI_GATEWAY_RELEASE,
            CHARTS["ai-gateway-helm"],
            cluster,
            aigw_ns,
            ai_gateway_values(env.production),
            parent=self,
            depends_on=[ai_crds, envoy_gateway],
        )
        pool_crds = k8s.yaml.v2.ConfigFile(
            f"{cluster.name}-inference-extension-crds",
            file=INFERENCE_EXTENSION_CRDS,
            opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=cluster.ready),
        )

        def after(*resources: pulumi.Resource) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(
                parent=self, provider=cluster.provider, depends_on=[*cluster.ready, *resources]
            )

        def custom(object_name: str, api: str, kind: str, ns: str, spec: dict, *deps: pulumi.Resource) -> None:
            k8s.apiextensions.CustomResource(
                f"{cluster.name}-{kind.lower()}-{object_name}",
                api_version=api,
                kind=kind,
                metadata={"name": object_name, "namespace": ns} if ns else {"name": object_name},
                spec=spec,
                opts=after(*deps),
            )

        # Envoy Gateway objects (CRDs from its release), in its namespace.
        eg_objects = (envoy_gateway, eg_ns)
        eg = names.ENVOY_GATEWAY_NAMESPACE
        custom(
            specs.GATEWAY_CLASS,
            specs.GATEWAY_API,
            "GatewayClass",
            "",
            {"controllerName": specs.CONTROLLER_NAME},
            envoy_gateway,
        )
        custom(
            names.GATEWAY_NAME,
            specs.ENVOY_GATEWAY_API,
            "EnvoyProxy",
            eg,
            specs.envoy_proxy_spec(cluster.cloud, region.gateway, gateway, env.production),
            *eg_objects,
        )
        custom(
            names.GATEWAY_NAME,
            specs.GATEWAY_API,
            "Gateway",
            eg,
            specs.gateway_spec(self.hostname, region.gateway),
            *eg_objects,
        )
        custom(
            names.GATEWAY_NAME,
            specs.ENVOY_GATEWAY_API,
            "ClientTrafficPolicy",
            eg,
            specs.client_traffic_policy_spec(gateway),
            *eg_objects,
        )
        custom(
            names.GATEWAY_NAME,
            specs.ENVOY_GATEWAY_API,
            "BackendTrafficPolicy",
            eg,
            specs.backend_traffic_policy_spec(env),
            *eg_objects,
        )
        if gateway.auth == "apiKey":
            keys = k8s.core.v1.Secret(
                f"{cluster.name}-{specs.API_KEYS_SECRET}",
                metadata={"name": specs.API_KEYS_SECRET, "namespace": eg},
                type="Opaque",
                string_data=dict(args.api_keys),
                opts=after(eg_ns),
            )
            custom(
                names.GATEWAY_NAME,
                specs.ENVOY_GATEWAY_API,
                "SecurityPolicy",
                eg,
                specs.security_policy_spec(),
                *eg_objects,
                keys,
            )

        # One InferencePool (and endpoint picker) per model served here; KServe runs a disaggregated model's.
        self.pools = {
            p.model.name: InferencePool(
                f"{region.name}-{p.model.name}",
                InferencePoolArgs(
                    cluster,
                    p.model,
                    gateway.endpoint_picker,
                    env.production,
                    p.serving_pods,
                    (args.serving_namespace, pool_crds),
                    queue_wait_seconds=p.queue_wait_seconds if p.cold_start_seconds is not None else None,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            for p in model_placements(env, region)
            if p.disaggregation is None
        }
        # The pickers authenticate scrapes of their /metrics (TokenReview / SubjectAccessReview).
        reviewer = k8s.rbac.v1.ClusterRole(
            f"{cluster.name}-{EPP_AUTH_REVIEWER}",
            metadata={"name": EPP_AUTH_REVIEWER},
            rules=[
                {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
                {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
            ],
            opts=after(),
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{cluster.name}-{EPP_AUTH_REVIEWER}",
            metadata={"name": EPP_AUTH_REVIEWER},
            subjects=[
                {"kind": "ServiceAccount", "name": pool.service_account, "namespace": names.SERVING_NAMESPACE}
                for pool in self.pools.values()
            ],
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": EPP_AUTH_REVIEWER},
            opts=after(reviewer),
        )

        # External providers offered here: Backend (Envoy Gateway), AIServiceBackend + BackendSecurityPolicy.
        serving = names.SERVING_NAMESPACE
        for provider in gateway.external_providers:
            if not provider.offered_in(region.name):
                continue
            secret_key, secret_value, security = _provider_credentials(provider)
            credentials = k8s.core.v1.Secret(
                f"{cluster.name}-{_credentials(provider)}",
                metadata={"name": _credentials(provider), "namespace": serving},
                type="Opaque",
                string_data={secret_key: secret_value},
                opts=after(args.serving_namespace),
            )
            custom(
                provider.name,
                specs.ENVOY_GATEWAY_API,
                "Backend",
                serving,
                {
                    "endpoints": [{"fqdn": {"hostname": provider.endpoint, "port": specs.HTTPS_PORT}}],
                    "tls": {"wellKnownCACertificates": "System", "sni": provider.endpoint},
                },
                envoy_gateway,
                args.serving_namespace,
            )
            custom(
                provider.name,
                specs.AI_GATEWAY_API,
                "AIServiceBackend",
                serving,
                {
                    "schema": _schema(provider),
                    "backendRef": {"group": "gateway.envoyproxy.io", "kind": "Backend", "name": provider.name},
                },
                ai_crds,
                args.serving_namespace,
            )
            custom(
                provider.name,
                specs.AI_GATEWAY_API,
                "BackendSecurityPolicy",
                serving,
                {
                    "targetRefs": [
                        {"group": "aigateway.envoyproxy.io", "kind": "AIServiceBackend", "name": provider.name}
                    ],
                    **security,
                },
                ai_crds,
                credentials,
            )

        # The routes: one rule per model, at most 15 per AIGatewayRoute.
        self.models = [target.model for target in specs.route_targets(env, region)]
        self.routes = specs.route_specs(env, region, self.hostname)
        for route, spec in self.routes.items():
            custom(route, specs.AI_GATEWAY_API, "AIGatewayRoute", serving, spec, ai_crds, args.serving_namespace)
        self.register_outputs({"hostname": self.hostname, "routes": list(self.routes), "pools": list(self.pools)})
