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
from dataclasses import dataclass
from functools import partial
from ipaddress import IPv4Network
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.addons.ratelimit_redis import RATELIMIT_CONTAINER, RateLimitRedis, RateLimitRedisArgs
from components.catalog.charts import CHARTS
from components.catalog.regions import BUILTIN_STORAGE_CLASS, Cloud
from components.config.gateway import ExternalProviderSpec, GatewaySpec, RegionGatewaySpec
from components.config.workloads import TenantSpec
from components.k8s import names
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import custom_resource, helm_release, namespace
from components.k8s.inputs import InputError, known, required
from components.serving import gateway_specs as specs
from components.serving import priority_classes as priority
from components.serving import stand_in
from components.serving.deployment import ModelPlacement
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
            # Its certificate from cert-manager, renewed before it expires (catalog fact
            # ai-gateway-webhook-certificate-lasts-a-year-unless-cert-manager-renews-it): the chart's own is made
            # once, for 365 days, and reused on every upgrade.
            "mutatingWebhook": {"certManager": {"enable": True}},
            "resources": {
                "requests": {"cpu": "100m", "memory": "256Mi"},
                "limits": {"cpu": "1", "memory": "1Gi"},
            },
        },
        "endpointConfig": {"rootPrefix": "/", "openai": ""},
        "envoyGateway": {"namespace": names.ENVOY_GATEWAY_NAMESPACE},
    }


def _provider_credentials(
    provider: ExternalProviderSpec, argument: str
) -> tuple[str, pulumi.Output[str], dict[str, Any]]:
    """(Secret key, secret value, BackendSecurityPolicy body) of a provider; values stay Pulumi secrets. A provider
    without its type's credentials is refused naming them (`argument`: where the provider is among the inputs)."""
    if provider.type == "openai":
        if provider.api_key is None:
            raise InputError(f"{argument}.api_key", f"{provider.name}: an openai provider needs its API key")
        key = pulumi.Output.secret(provider.api_key.get_secret_value())
        return "apiKey", key, {"type": "APIKey", "apiKey": {"secretRef": {"name": _credentials(provider)}}}
    if provider.access_key_id is None or provider.secret_access_key is None or not provider.aws_region:
        raise InputError(
            argument, f"{provider.name}: a bedrock provider needs access_key_id, secret_access_key and aws_region"
        )
    key_id = provider.access_key_id.get_secret_value()
    secret = provider.secret_access_key.get_secret_value()
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
    """What one cluster's gateway serves, resolved for its region (stacks/gateway.py builds it from an environment)."""

    cluster: ClusterHandle
    cloud: Cloud  # which load balancer the proxies' Service asks for
    hostname: str  # the name clients call (domain/gateways.py gateway_hostname)
    gateway: GatewaySpec  # the environment's gateway: auth, timeouts, retries, circuit breaker, picker, Redis
    region_gateway: RegionGatewaySpec  # this cluster's: exposure, proxy replicas, allowed client ranges
    production: bool
    # The models placed on the cluster (deployment.model_placements): an InferencePool each, unless disaggregated
    # (KServe's) or routed by a stand-in rule.
    placements: Sequence[ModelPlacement]
    routes: Mapping[str, dict[str, Any]]  # AIGatewayRoute name -> spec (gateway_specs and stand_in route_specs)
    routed_models: Sequence[str]  # model names the routes match, stand-in rules' aside (gateway_specs.route_targets)
    # Where the API server's webhook calls come from (the region network's webhook_source_cidr).
    webhook_source_cidr: IPv4Network | None
    prometheus_namespace: str | None  # the Prometheus that scrapes the gateway; None: none does
    serving_namespace: k8s.core.v1.Namespace  # model servers, pools and routes live there
    inference_pool_crds: pulumi.Resource  # the release installing the InferencePool CRD (KServe.inference_pool_crds)
    stand_ins: Sequence[stand_in.StandIn]  # models with a stand-in here (stand_in.stand_ins)
    tenants: Sequence[TenantSpec]  # whose budgets the gateway enforces
    # Model (or adapter) on a pool ordering request classes -> tenant -> its objective (priority_classes.
    # objectives_context).
    objectives: Mapping[str, Mapping[str, str]]
    external_providers: Sequence[ExternalProviderSpec]  # those offered here
    api_keys: Mapping[str, pulumi.Output[str]]  # tenant -> secret key (gateway.auth apiKey)
    # cert-manager's release (CRDs, webhook, cainjector), which issues and renews the AI Gateway's webhook
    # certificate; empty where the cluster already runs cert-manager.
    cert_manager: Sequence[pulumi.Resource]

    def __post_init__(self) -> None:
        """A hostname, the cluster's cloud, a webhook source, stand-ins among the placed models, each provider with its
        credentials. What it enforces and routes (tenants, stand-ins, objectives, providers, keys) has no default:
        an empty one is the caller's statement, not a forgotten argument."""
        required("hostname", self.hostname, "the name clients call, e.g. llm.example.com")
        known("cloud", self.cloud, {cloud: cloud for cloud, _ in specs.LOAD_BALANCER_ANNOTATIONS}, "cloud")
        if self.cloud != self.cluster.region.cloud:  # its releases' critical-pod quotas follow the cluster's cloud
            raise InputError("cloud", f"{self.cloud!r}, but the cluster runs on {self.cluster.region.cloud!r}")
        self.webhook_source()
        placed = {p.name for p in self.placements}
        for i, s in enumerate(self.stand_ins):
            for key, model in (("model", s.model), ("stand_in", s.stand_in)):
                if model not in placed:
                    where = ", ".join(sorted(placed)) or "none"
                    raise InputError(f"stand_ins[{i}].{key}", f"{model!r} is not placed here (placed: {where})")
        for i, provider in enumerate(self.external_providers):
            _provider_credentials(provider, f"external_providers[{i}]")

    def webhook_source(self) -> IPv4Network:
        """`webhook_source_cidr`, which a gateway cannot do without: its controller's webhook admits only it."""
        if self.webhook_source_cidr is None:
            raise InputError(
                "webhook_source_cidr", "the range the API server calls webhooks from (GKE: controlPlaneCidr)"
            )
        return self.webhook_source_cidr


@dataclass(frozen=True, kw_only=True)
class _Installed:
    """What the gateway's objects wait for: the namespace of Envoy Gateway, and the releases and manifests
    installing the CRDs."""

    eg_ns: k8s.core.v1.Namespace
    envoy_gateway: k8s.helm.v3.Release  # Gateway API and Envoy Gateway CRDs
    ai_crds: k8s.helm.v3.Release  # AI Gateway CRDs
    # The AI Gateway's controller: it puts a finalizer on each of its kinds' objects and alone takes it off, so
    # they depend on it and a destroy deletes them while it still runs (upstream.AI_GATEWAY_FINALIZES_ITS_OBJECTS).
    ai_controller: k8s.helm.v3.Release
    pool_crds: pulumi.Resource  # the release installing the InferencePool and InferenceObjective CRDs


class InferenceGateway(pulumi.ComponentResource):
    """Envoy Gateway, the AI Gateway, the Gateway and its policies, one InferencePool per model, the routes."""

    hostname: str
    pools: dict[str, InferencePool]
    models: list[str]  # routed model names
    routes: dict[str, dict[str, Any]]  # AIGatewayRoute name -> spec

    def __init__(self, name: str, args: InferenceGatewayArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:InferenceGateway", name, None, opts)
        self._cluster, self._name = args.cluster, name
        self.hostname = args.hostname
        installed = self._install(args)
        self._gateway(args, installed)
        self.pools = self._pools(args, installed)
        self._picker_auth()
        self._external_providers(args, installed)
        # The routes: one rule per model, at most 15 per AIGatewayRoute; a model with a stand-in has its own.
        self.models = sorted([*args.routed_models, *(s.model for s in args.stand_ins)])
        self.routes = dict(args.routes)
        if args.stand_ins:
            self._stand_in_backends(args, installed)
        for route, spec in self.routes.items():
            self._custom(
                kind="AIGatewayRoute",
                name=route,
                api_version=specs.AI_GATEWAY_API,
                namespace=SERVING_NAMESPACE,
                spec=spec,
                crd_from=[installed.ai_crds],
                depends_on=[installed.ai_controller, args.serving_namespace],
            )
        self.register_outputs({"hostname": self.hostname, "routes": list(self.routes), "pools": list(self.pools)})

    def _stand_in_backends(self, args: InferenceGatewayArgs, installed: _Installed) -> None:
        """The predictor Services the stand-in rules reach (Backend + AIServiceBackend per model), and the patch that
        marks each stand-in endpoint for the response header."""
        for model, fallback in stand_in.direct_models(args.stand_ins).items():
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
                depends_on=[installed.ai_controller, args.serving_namespace],
                **named,
            )
        self._custom(
            kind="EnvoyPatchPolicy",
            name=stand_in.ROUTE_PREFIX,
            namespace=names.ENVOY_GATEWAY_NAMESPACE,
            api_version=specs.ENVOY_GATEWAY_API,
            spec=stand_in.patch_policy_spec(args.stand_ins),
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
        cluster = args.cluster
        eg_ns = namespace(names.ENVOY_GATEWAY_NAMESPACE, cluster, self)
        for manifest in gateway_namespace_policies(args.webhook_source(), args.prometheus_namespace, specs.HTTPS_PORT):
            k8s.networking.v1.NetworkPolicy(
                f"{cluster.name}-netpol-eg-{manifest['metadata']['name']}",
                metadata=manifest["metadata"],
                spec=manifest["spec"],
                opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[eg_ns]),
            )
        aigw_ns = namespace(AI_GATEWAY_NAMESPACE, cluster, self)
        redis_url, redis_env = args.gateway.redis.url, []
        if redis_url is None:
            redis = RateLimitRedis(
                self._name,
                RateLimitRedisArgs(cluster=cluster, namespace=eg_ns, storage_class=BUILTIN_STORAGE_CLASS[args.cloud]),
                opts=pulumi.ResourceOptions(parent=self),
            )
            redis_url, redis_env = redis.url, redis.client_env
        envoy_gateway = helm_release(
            ENVOY_GATEWAY_RELEASE,
            CHARTS["gateway-helm"],
            cluster,
            eg_ns,
            envoy_gateway_values(redis_url, redis_env, args.production, lua=bool(priority.classed(args.placements))),
            parent=self,
            depends_on=[args.inference_pool_crds],
        )
        ai_crds = helm_release(AI_GATEWAY_CRDS_RELEASE, CHARTS["ai-gateway-crds-helm"], cluster, aigw_ns, {}, self)
        ai_controller = helm_release(
            AI_GATEWAY_RELEASE,
            CHARTS["ai-gateway-helm"],
            cluster,
            aigw_ns,
            ai_gateway_values(),
            parent=self,
            depends_on=[ai_crds, envoy_gateway, *args.cert_manager],
        )
        return _Installed(
            eg_ns=eg_ns,
            envoy_gateway=envoy_gateway,
            ai_crds=ai_crds,
            ai_controller=ai_controller,
            pool_crds=args.inference_pool_crds,
        )

    def _gateway(self, args: InferenceGatewayArgs, installed: _Installed) -> None:
        """The GatewayClass, and in Envoy Gateway's namespace the Gateway, its proxy and its policies."""
        cluster, gateway = args.cluster, args.gateway
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
            spec=specs.envoy_proxy_spec(args.cloud, args.region_gateway, gateway, args.production),
            depends_on=eg_ns,
        )
        in_eg(
            kind="Gateway",
            api_version=specs.GATEWAY_API,
            spec=specs.gateway_spec(self.hostname, args.region_gateway),
            depends_on=eg_ns,
        )
        client_traffic = specs.client_traffic_policy_spec(gateway)
        backend_traffic = specs.backend_traffic_policy_spec(
            gateway, args.tenants, waking=any(p.cold_start_seconds is not None for p in args.placements)
        )
        if args.stand_ins:
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
        if priority.classed(args.placements):
            in_eg(
                kind="EnvoyExtensionPolicy",
                name=priority.POLICY_NAME,
                api_version=specs.ENVOY_GATEWAY_API,
                spec=priority.priority_policy_spec(args.objectives, specs.GATEWAY_REF),
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
        return {
            p.model.name: InferencePool(
                f"{self._name}-{p.model.name}",
                InferencePoolArgs(
                    cluster=args.cluster,
                    model=p.model,
                    picker=args.gateway.endpoint_picker,
                    production=args.production,
                    server_labels=p.serving_pods,
                    depends_on=[args.serving_namespace, installed.pool_crds],
                    queue_wait_seconds=p.picker_queue_seconds,
                    bands=priority.priority_bands(p),
                    objectives=priority.objective_manifests(p),
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            for p in args.placements
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
        for i, provider in enumerate(args.external_providers):
            secret_key, secret_value, security = _provider_credentials(provider, f"external_providers[{i}]")
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
                depends_on=[installed.ai_controller, args.serving_namespace],
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
                depends_on=[installed.ai_controller, credentials],
                **of_provider,
            )
