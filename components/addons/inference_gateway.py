"""The region's OpenAI-compatible entry: Envoy Gateway + Envoy AI Gateway, routes, tenants, budgets.

Envoy Gateway programs the Envoy proxies; the AI Gateway plugs into it as extension manager (it
rewrites the xDS Envoy Gateway generates: reads `model` from request bodies, records token usage,
talks to endpoint pickers) and adds AIGatewayRoute and friends. Object specs come from
components/serving/gateway_specs.py; this component creates them in dependency order: CRDs
before the objects that use them. The InferencePool CRD is KServe's (kserve-llmisvc-resources,
`components/addons/kserve.py`), and Envoy Gateway waits for it: it watches InferencePools from its start
(ENVOY_GATEWAY_WATCHES_INFERENCE_POOLS).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.addons.ratelimit_redis import RATELIMIT_CONTAINER, RateLimitRedis, RateLimitRedisArgs
from components.catalog.charts import CHARTS
from components.config.environment import EnvironmentSpec
from components.config.gateway import ExternalProviderSpec
from components.config.region import RegionSpec
from components.domain.gateways import gateway_hostname
from components.k8s import names
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import custom_resource, helm_release, namespace
from components.serving import gateway_specs as specs
from components.serving import priority_classes as priority
from components.serving import stand_in
from components.serving.deployment import model_placements
from components.serving.inference_pool import InferencePool, InferencePoolArgs
from components.serving.network_policies import gateway_namespace_policies
from platform_catalog.names import SERVING_NAMESPACE

AI_GATEWAY_NAMESPACE = "envoy-ai-gateway-system"
AI_GATEWAY_CONTROLLER = "ai-gateway-controller"  # ai-gateway-helm controller.fullnameOverride
EXTENSION_SERVER_PORT = 1063  # the controller's gRPC extension server (FACTS.md)
ENVOY_GATEWAY_RELEASE = "envoy-gateway"
AI_GATEWAY_CRDS_RELEASE = "ai-gateway-crds"
AI_GATEWAY_RELEASE = "ai-gateway"
EPP_AUTH_REVIEWER = "inference-epp-auth-reviewer"


def _ratelimit_patch(env: list[dict[str, Any]]) -> dict[str, Any]:
    container = {"name": RATELIMIT_CONTAINER, "env": env}
    return {"patch": {"type": "StrategicMerge", "value": {"spec": {"template": {"spec": {"containers": [container]}}}}}}


def envoy_gateway_values(
    redis_url: str, redis_env: list[dict[str, Any]], production: bool, lua: bool = False
) -> dict[str, Any]:
    """gateway-helm values: the AI Gateway as extension manager, InferencePool backends, Redis-backed limits, and
    Lua EnvoyExtensionPolicies only where request classes need the platform's (`lua`; off by default upstream).

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
                "extensionApis": {"enableEnvoyPatchPolicy": True, "enableBackend": True}
                | ({"enableLua": True} if lua else {}),
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


def ai_gateway_values() -> dict[str, Any]:
    """ai-gateway-helm values: OpenAI paths at the root (`/v1/...`), per-tenant token metrics."""
    return {
        "controller": {
            "fullnameOverride": AI_GATEWAY_CONTROLLER,
            # Observability's per-tenant token panels read the tenant attribute from the gen_ai metrics.
            "metricsRequestHeaderAttributes": f"{names.TENANT_HEADER}:{names.TENANT_METRIC_ATTRIBUTE}",
            # Two everywhere: its pod-mutating webhook is failurePolicy Fail (templates/admission_webhook.yaml at
            # v1.1.0), so with it down no Envoy pod of the Gateway can be created.
            "replicaCount": 2,
            "podDisruptionBudget": {"enabled": True},
            "resources": {
                "requests": {"cpu": "100m", "memory": "256Mi"},
                "limits": {"cpu": "1", "memory": "1Gi"},
            },
        },
        "endpointConfig": {"rootPrefix": "/", "openai": ""},
        "envoyGateway": {"namespace": names.ENVOY_GATEWAY_NAMESPACE},
    }


def _provider_credentials(provider: ExternalProviderSpec) -> tuple[str, pulumi.Output[str], dict[str, Any]]:
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


def _schema(provider: ExternalProviderSpec) -> dict[str, Any]:
    return {"name": "AWSBedrock"} if provider.type == "bedrock" else {"name": "OpenAI"}


@dataclass(frozen=True, kw_only=True)
class InferenceGatewayArgs:
    cluster: ClusterHandle
    env: EnvironmentSpec
    region: RegionSpec
    serving_namespace: k8s.core.v1.Namespace  # model servers, pools and routes live there
    inference_pool_crds: pulumi.Resource  # the release installing the InferencePool CRD (KServe.inference_pool_crds)
    api_keys: Mapping[str, pulumi.Output[str]] = field(default_factory=dict)  # tenant -> secret key


@dataclass(frozen=True, kw_only=True)
class _Installed:
    """What the gateway's objects wait for: the namespace of Envoy Gateway, and the releases and manifests
    installing the CRDs."""

    eg_ns: k8s.core.v1.Namespace
    envoy_gateway: k8s.helm.v3.Release  # Gateway API and Envoy Gateway CRDs
    ai_crds: k8s.helm.v3.Release  # AI Gateway CRDs
    pool_crds: pulumi.Resource  # the release installing the InferencePool and InferenceObjective CRDs


class InferenceGateway(pulumi.ComponentResource):
    """Envoy Gateway, the AI Gateway, the Gateway and its policies, one InferencePool per model, the routes."""

    hostname: str
    pools: dict[str, InferencePool]
    models: list[str]  # routed model names
    routes: dict[str, dict[str, Any]]  # AIGatewayRoute name -> spec

    def __init__(self, name: str, args: InferenceGatewayArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:InferenceGateway", name, None, opts)
        self._cluster = args.cluster
        self.hostname = gateway_hostname(args.env, args.region)
        installed = self._install(args)
        self._gateway(args, installed)
        self.pools = self._pools(args, installed)
        self._picker_auth()
        self._external_providers(args, installed)
        # The routes: one rule per model, at most 15 per AIGatewayRoute; a model with a stand-in has its own.
        region_stand_ins = stand_in.stand_ins(args.env, args.region)
        routed = [target.model for target in specs.route_targets(args.env, args.region)]
        self.models = sorted(routed + [s.model for s in region_stand_ins])
        self.routes = specs.route_specs(args.env, args.region, self.hostname)
        if region_stand_ins:
            self.routes |= stand_in.route_specs(args.env, args.region, self.hostname)
            self._stand_in_backends(args, installed)
        for route, spec in self.routes.items():
            self._custom(
                kind="AIGatewayRoute",
                name=route,
                api_version=specs.AI_GATEWAY_API,
                namespace=SERVING_NAMESPACE,
                spec=spec,
                crd_from=[installed.ai_crds],
                depends_on=[args.serving_namespace],
            )
        self.register_outputs({"hostname": self.hostname, "routes": list(self.routes), "pools": list(self.pools)})

    def _stand_in_backends(self, args: InferenceGatewayArgs, installed: _Installed) -> None:
        """The predictor Services the stand-in rules reach (Backend + AIServiceBackend per model), and the patch that
        marks each stand-in endpoint for the response header."""
        for model, fallback in stand_in.direct_models(stand_in.stand_ins(args.env, args.region)).items():
            named = {"name": stand_in.direct_backend(model), "namespace": SERVING_NAMESPACE}
            self._custom(
                kind="Backend",
                api_version=specs.ENVOY_GATEWAY_API,
                spec=stand_in.backend_spec(model, fallback),
                crd_from=[installed.envoy_gateway],
                depends_on=[args.serving_namespace],
                **named,
            )
            self._custom(
                kind="AIServiceBackend",
                api_version=specs.AI_GATEWAY_API,
                spec=stand_in.ai_service_backend_spec(model),
                crd_from=[installed.ai_crds],
                depends_on=[args.serving_namespace],
                **named,
            )
        self._custom(
            kind="EnvoyPatchPolicy",
            name=stand_in.ROUTE_PREFIX,
            namespace=names.ENVOY_GATEWAY_NAMESPACE,
            api_version=specs.ENVOY_GATEWAY_API,
            spec=stand_in.patch_policy_spec(args.env, args.region),
            crd_from=[installed.envoy_gateway],
            depends_on=[installed.eg_ns],
        )

    def _after(self, *resources: pulumi.Resource) -> pulumi.ResourceOptions:
        cluster = self._cluster
        return pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[*cluster.ready, *resources])

    def _custom(
        self,
        *,
        kind: str,
        name: str,
        api_version: str,
        spec: dict[str, Any],
        crd_from: Sequence[pulumi.Resource],
        namespace: str | None = None,  # None: cluster-scoped
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> None:
        cluster = self._cluster
        custom_resource(
            f"{cluster.name}-{kind.lower()}-{name}",
            {
                "apiVersion": api_version,
                "kind": kind,
                "metadata": {"name": name} if namespace is None else {"name": name, "namespace": namespace},
                "spec": spec,
            },
            cluster=cluster,
            parent=self,
            crd_from=crd_from,
            depends_on=[*cluster.ready, *depends_on],
        )

    def _install(self, args: InferenceGatewayArgs) -> _Installed:
        """Envoy Gateway (with the rate limiter's Redis unless one is configured), the AI Gateway, the CRDs."""
        cluster, env, region = args.cluster, args.env, args.region
        eg_ns = namespace(names.ENVOY_GATEWAY_NAMESPACE, cluster, self)
        for manifest in gateway_namespace_policies(region, specs.HTTPS_PORT):
            k8s.networking.v1.NetworkPolicy(
                f"{cluster.name}-netpol-eg-{manifest['metadata']['name']}",
                metadata=manifest["metadata"],
                spec=manifest["spec"],
                opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[eg_ns]),
            )
        aigw_ns = namespace(AI_GATEWAY_NAMESPACE, cluster, self)
        redis_url, redis_env = env.gateway.redis.url, []
        if redis_url is None:
            redis = RateLimitRedis(
                region.name,
                RateLimitRedisArgs(cluster=cluster, namespace=eg_ns),
                opts=pulumi.ResourceOptions(parent=self),
            )
            redis_url, redis_env = redis.url, redis.client_env
        classed = bool(priority.classed_placements(env, region))
        envoy_gateway = helm_release(
            ENVOY_GATEWAY_RELEASE,
            CHARTS["gateway-helm"],
            cluster,
            eg_ns,
            envoy_gateway_values(redis_url, redis_env, env.production, lua=classed),
            parent=self,
            depends_on=[args.inference_pool_crds],
        )
        ai_crds = helm_release(AI_GATEWAY_CRDS_RELEASE, CHARTS["ai-gateway-crds-helm"], cluster, aigw_ns, {}, self)
        helm_release(
            AI_GATEWAY_RELEASE,
            CHARTS["ai-gateway-helm"],
            cluster,
            aigw_ns,
            ai_gateway_values(),
            parent=self,
            depends_on=[ai_crds, envoy_gateway],
        )
        return _Installed(
            eg_ns=eg_ns,
            envoy_gateway=envoy_gateway,
            ai_crds=ai_crds,
            pool_crds=args.inference_pool_crds,
        )

    def _gateway(self, args: InferenceGatewayArgs, installed: _Installed) -> None:
        """The GatewayClass, and in Envoy Gateway's namespace the Gateway, its proxy and its policies."""
        cluster, env, region, gateway = args.cluster, args.env, args.region, args.env.gateway
        eg_ns = [installed.eg_ns]
        in_eg = partial(
            self._custom,
            name=names.GATEWAY_NAME,
            namespace=names.ENVOY_GATEWAY_NAMESPACE,
            crd_from=[installed.envoy_gateway],
        )
        self._custom(
            kind="GatewayClass",
            name=specs.GATEWAY_CLASS,
            api_version=specs.GATEWAY_API,
            spec={"controllerName": specs.CONTROLLER_NAME},
            crd_from=[installed.envoy_gateway],
        )
        in_eg(
            kind="EnvoyProxy",
            api_version=specs.ENVOY_GATEWAY_API,
            spec=specs.envoy_proxy_spec(cluster.cloud, region.gateway, gateway, env.production),
            depends_on=eg_ns,
        )
        in_eg(
            kind="Gateway",
            api_version=specs.GATEWAY_API,
            spec=specs.gateway_spec(self.hostname, region.gateway),
            depends_on=eg_ns,
        )
        client_traffic = specs.client_traffic_policy_spec(gateway)
        backend_traffic = specs.backend_traffic_policy_spec(
            env, waking=any(p.cold_start_seconds is not None for p in model_placements(env, region))
        )
        if stand_in.stand_ins(env, region):
            stand_in.with_fallback(client_traffic, backend_traffic)
        in_eg(
            kind="ClientTrafficPolicy",
            api_version=specs.ENVOY_GATEWAY_API,
            spec=client_traffic,
            depends_on=eg_ns,
        )
        in_eg(
            kind="BackendTrafficPolicy",
            api_version=specs.ENVOY_GATEWAY_API,
            spec=backend_traffic,
            depends_on=eg_ns,
        )
        if priority.classed_placements(env, region):
            in_eg(
                kind="EnvoyExtensionPolicy",
                name=priority.POLICY_NAME,
                api_version=specs.ENVOY_GATEWAY_API,
                spec=priority.priority_policy_spec(env, region, specs.GATEWAY_REF),
                depends_on=eg_ns,
            )
        if gateway.auth == "apiKey":
            keys = k8s.core.v1.Secret(
                f"{cluster.name}-{specs.API_KEYS_SECRET}",
                metadata={"name": specs.API_KEYS_SECRET, "namespace": names.ENVOY_GATEWAY_NAMESPACE},
                type="Opaque",
                string_data=dict(args.api_keys),
                opts=self._after(installed.eg_ns),
            )
            in_eg(
                kind="SecurityPolicy",
                api_version=specs.ENVOY_GATEWAY_API,
                spec=specs.security_policy_spec(),
                depends_on=[*eg_ns, keys],
            )

    def _pools(self, args: InferenceGatewayArgs, installed: _Installed) -> dict[str, InferencePool]:
        """One InferencePool (and endpoint picker) per model served here; KServe runs a disaggregated model's."""
        env, region = args.env, args.region
        return {
            p.model.name: InferencePool(
                f"{region.name}-{p.model.name}",
                InferencePoolArgs(
                    cluster=args.cluster,
                    model=p.model,
                    picker=env.gateway.endpoint_picker,
                    production=env.production,
                    server_labels=p.serving_pods,
                    depends_on=[args.serving_namespace, installed.pool_crds],
                    queue_wait_seconds=p.picker_queue_seconds,
                    bands=priority.priority_bands(p),
                    objectives=priority.objective_manifests(p),
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            for p in model_placements(env, region)
            if p.disaggregation is None and p.placement.stand_in is None  # a stand-in rule skips the picker
        }

    def _picker_auth(self) -> None:
        """The pickers authenticate scrapes of their /metrics (TokenReview / SubjectAccessReview)."""
        cluster = self._cluster
        reviewer = k8s.rbac.v1.ClusterRole(
            f"{cluster.name}-{EPP_AUTH_REVIEWER}",
            metadata={"name": EPP_AUTH_REVIEWER},
            rules=[
                {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
                {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
            ],
            opts=self._after(),
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{cluster.name}-{EPP_AUTH_REVIEWER}",
            metadata={"name": EPP_AUTH_REVIEWER},
            subjects=[
                {"kind": "ServiceAccount", "name": pool.service_account, "namespace": SERVING_NAMESPACE}
                for pool in self.pools.values()
            ],
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": EPP_AUTH_REVIEWER},
            opts=self._after(reviewer),
        )

    def _external_providers(self, args: InferenceGatewayArgs, installed: _Installed) -> None:
        """External providers offered here: Backend (Envoy Gateway), AIServiceBackend + BackendSecurityPolicy."""
        serving = SERVING_NAMESPACE
        for provider in args.env.gateway.external_providers:
            if not provider.offered_in(args.region.name):
                continue
            secret_key, secret_value, security = _provider_credentials(provider)
            credentials = k8s.core.v1.Secret(
                f"{self._cluster.name}-{_credentials(provider)}",
                metadata={"name": _credentials(provider), "namespace": serving},
                type="Opaque",
                string_data={secret_key: secret_value},
                opts=self._after(args.serving_namespace),
            )
            of_provider = {"name": provider.name, "namespace": serving}
            self._custom(
                kind="Backend",
                api_version=specs.ENVOY_GATEWAY_API,
                spec={
                    "endpoints": [{"fqdn": {"hostname": provider.endpoint, "port": specs.HTTPS_PORT}}],
                    "tls": {"wellKnownCACertificates": "System", "sni": provider.endpoint},
                },
                crd_from=[installed.envoy_gateway],
                depends_on=[args.serving_namespace],
                **of_provider,
            )
            self._custom(
                kind="AIServiceBackend",
                api_version=specs.AI_GATEWAY_API,
                spec={
                    "schema": _schema(provider),
                    "backendRef": {"group": "gateway.envoyproxy.io", "kind": "Backend", "name": provider.name},
                },
                crd_from=[installed.ai_crds],
                depends_on=[args.serving_namespace],
                **of_provider,
            )
            self._custom(
                kind="BackendSecurityPolicy",
                api_version=specs.AI_GATEWAY_API,
                spec={
                    "targetRefs": [
                        {"group": "aigateway.envoyproxy.io", "kind": "AIServiceBackend", "name": provider.name}
                    ],
                    **security,
                },
                crd_from=[installed.ai_crds],
                depends_on=[credentials],
                **of_provider,
            )
