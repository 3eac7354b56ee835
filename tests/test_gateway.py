"""The inference gateway as planned: routes, pools, auth, budgets, resilience, secrets, CRD conformance."""

from __future__ import annotations

import json

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml

from components.addons.inference_gateway import InferenceGateway
from components.catalog.charts import EPP_IMAGE, REDIS_IMAGE
from components.checks.loader import load_environment
from components.domain.gateways import has_gateway
from components.k8s import names
from components.k8s.cluster import ClusterHandle
from components.serving.gateway_specs import MAX_RULES_PER_ROUTE, MODEL_HEADER, TOKEN_COSTS, route_specs, rule_names
from platform_catalog.names import SERVING_NAMESPACE
from policies.model import Stack
from policies.offline import evaluate_plan, plan_resources
from policies.rules.gateway import is_public
from stacks.gateway import inference_gateway_args
from tests.harness import SERVING_CLUSTERS, evaluate_program, plan_config, raw_environment
from tests.test_serving_config import _multi_node_prod
from tools.conformance import is_custom_resource
from tools.plan.artifacts import helm_files, manifest_files, plan_document

KIND_TYPES = {
    "AIGatewayRoute": "kubernetes:aigateway.envoyproxy.io/v1beta1:AIGatewayRoute",
    "InferencePool": "kubernetes:inference.networking.k8s.io/v1:InferencePool",
}


def _objects(plan, kind: str, cluster: str | None = None) -> list[dict]:
    return [
        r.inputs
        for r in plan.kubernetes_objects()
        if r.inputs["kind"] == kind and (cluster is None or plan.cluster_of(r) == cluster)
    ]


def _object(plan, kind: str, cluster: str, name: str) -> dict:
    (found,) = [o for o in _objects(plan, kind, cluster) if o["metadata"]["name"] == name]
    return found


def _gateway_clusters(plan) -> dict[str, object]:
    """Cluster name -> region spec, for every region with a gateway."""
    return {f"{plan.environment}-{r.name}": r for r in plan.spec.regions if has_gateway(plan.spec, r)}


def _served(plan, region) -> set[str]:
    return {m.name for m in plan.spec.models if any(p.region == region.name for p in m.placements)}


def test_every_serving_cluster_has_one_gateway(env_plan):
    clusters = _gateway_clusters(env_plan)
    assert clusters and set(clusters) == {
        f"{env_plan.environment}-{r.name}" for r in env_plan.spec.regions if _served(env_plan, r)
    }
    for cluster in clusters:
        (gateway,) = _objects(env_plan, "Gateway", cluster)
        assert gateway["metadata"] == {"name": names.GATEWAY_NAME, "namespace": names.ENVOY_GATEWAY_NAMESPACE}
        (listener,) = gateway["spec"]["listeners"]
        assert (listener["protocol"], listener["port"], listener["tls"]["mode"]) == ("HTTPS", 443, "Terminate")
        assert listener["tls"]["certificateRefs"] == [{"group": "", "kind": "Secret", "name": "inference-gateway-tls"}]
        assert env_plan.outputs["gateways"][clusters[cluster].name]["hostname"] == listener["hostname"]
        releases = {r.inputs["name"]: r.inputs for r in env_plan.helm_releases() if env_plan.cluster_of(r) == cluster}
        assert {"envoy-gateway", "ai-gateway-crds", "ai-gateway"} <= set(releases)


def test_one_rule_per_model(env_plan):
    assert sorted(_gateway_clusters(env_plan)) == SERVING_CLUSTERS[env_plan.environment], "clusters with a gateway"
    for cluster, region in _gateway_clusters(env_plan).items():
        routes = _objects(env_plan, "AIGatewayRoute", cluster)
        rules = [rule for route in routes for rule in route["spec"]["rules"]]
        models = [rule["matches"][0]["headers"][0]["value"] for rule in rules]
        served = _served(env_plan, region)
        # A LoRA adapter is a model of its own, sent to its base model's pool.
        base = {m: m for m in served} | {
            lora.name: lora.base_model for t in env_plan.spec.tenants for lora in t.loras if lora.base_model in served
        }
        assert sorted(models) == sorted(base)  # every model and adapter once, each rule one model
        # A disaggregated model's pool is the one KServe creates for its LLMInferenceService: <name>-inference-pool.
        disaggregated = {o["metadata"]["name"] for o in _objects(env_plan, "LLMInferenceService", cluster)}
        for rule in rules:
            assert all(match["headers"][0]["name"] == MODEL_HEADER for match in rule["matches"])
            assert {match["headers"][0]["value"] for match in rule["matches"]} == {rule["name"]}
            model = base[rule["name"]]
            pool = model + "-inference-pool" if model in disaggregated else model
            # CRD CEL: one InferencePool per rule, never mixed with AIServiceBackends.
            assert rule["backendRefs"] == [
                {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": pool}
            ]
        assert all(len(route["spec"]["rules"]) <= MAX_RULES_PER_ROUTE for route in routes)


def test_tenants_reach_only_the_models_they_are_granted(prod_plan):
    route = _object(prod_plan, "AIGatewayRoute", "prod-use1", "models-1")
    grants = {
        rule["name"]: sorted(match["headers"][1]["value"] for match in rule["matches"])
        for rule in route["spec"]["rules"]
    }
    assert grants == {
        "llama-3-1-70b": ["evals", "search"],
        "llama-3-1-70b-rag": ["search"],
        # rollout-probe: the SLO gate's tenant (rollout.slo), granted llama-3-1-8b alone
        "llama-3-1-8b": ["legal", "rollout-probe", "search", "support-bot"],
        "legal-contracts": ["legal"],  # a tenant's LoRA adapter: its owner only
    }
    assert all(
        match["headers"][1]["name"] == names.TENANT_HEADER
        for rule in route["spec"]["rules"]
        for match in rule["matches"]
    )


def test_routes_split_at_fifteen_rules():
    raw = raw_environment("dev")
    template = raw["models"][0]
    raw["models"] = [{**template, "name": f"model-{i:02d}"} for i in range(17)]
    raw["tenants"][0]["models"] = [m["name"] for m in raw["models"]]
    env = load_environment(raw)
    routes = route_specs(env, env.regions[0], "llm.example.com")
    assert {name: len(spec["rules"]) for name, spec in routes.items()} == {"models-1": 15, "models-2": 2}
    assert [rule["name"] for spec in routes.values() for rule in spec["rules"]] == [f"model-{i:02d}" for i in range(17)]


def test_rule_names_are_unique_dns_subdomains():
    assert rule_names(["gpt-4o", "GPT-4o", "anthropic.claude-v1:0", "::"]) == [
        "gpt-4o",
        "gpt-4o-2",
        "anthropic.claude-v1-0",
        "model",
    ]


def test_inference_pool_per_self_hosted_model(env_plan):
    assert sorted(_gateway_clusters(env_plan)) == SERVING_CLUSTERS[env_plan.environment], "clusters with a gateway"
    for cluster, region in _gateway_clusters(env_plan).items():
        pools = {p["metadata"]["name"]: p for p in _objects(env_plan, "InferencePool", cluster)}
        # KServe creates the pool (and picker) of a disaggregated model's LLMInferenceService itself.
        disaggregated = {o["metadata"]["name"] for o in _objects(env_plan, "LLMInferenceService", cluster)}
        assert set(pools) == _served(env_plan, region) - disaggregated
        services = {s["metadata"]["name"]: s for s in _objects(env_plan, "Service", cluster)}
        for model, pool in pools.items():
            assert pool["metadata"]["namespace"] == SERVING_NAMESPACE
            assert pool["spec"]["selector"] == {
                "matchLabels": {names.PART_OF_LABEL: names.PLATFORM_PART_OF, names.MODEL_LABEL: model}
            }
            assert pool["spec"]["targetPorts"] == [{"number": 8080}]
            picker = pool["spec"]["endpointPickerRef"]
            assert picker == {
                "kind": "Service",
                "name": f"{model}-epp",
                "port": {"number": 9002},
                "failureMode": "FailClose",
            }
            service = services[f"{model}-epp"]
            assert service["metadata"]["namespace"] == SERVING_NAMESPACE
            assert service["metadata"]["labels"]["app.kubernetes.io/name"] == f"{model}-epp"  # observability selects it
            assert {p["name"]: p["port"] for p in service["spec"]["ports"]} == {
                "grpc-ext-proc": 9002,
                "http-metrics": 9090,
            }
            deployment = _object(env_plan, "Deployment", cluster, f"{model}-epp")
            assert deployment["spec"]["template"]["metadata"]["labels"].items() >= service["spec"]["selector"].items()
            (container,) = deployment["spec"]["template"]["spec"]["containers"]
            assert container["image"] == EPP_IMAGE
            assert container["args"][:6] == [
                "--pool-name",
                model,
                "--pool-namespace",
                "inference",
                "--pool-group",
                "inference.networking.k8s.io",
            ]


def test_endpoint_picker_scores_prefix_and_kv_cache(prod_plan):
    config = _object(prod_plan, "ConfigMap", "prod-use1", "llama-3-1-70b-epp")
    profile = yaml.safe_load(config["data"]["default-plugins.yaml"])
    weights = {p["pluginRef"]: p["weight"] for p in profile["schedulingProfiles"][0]["plugins"]}
    assert weights == {"queue-scorer": 2, "kv-cache-utilization-scorer": 2, "prefix-cache-scorer": 3}
    # Production pickers are highly available: two replicas, both serving (no leader election: a leader-elected
    # picker is ready only while it leads, so it could only roll by Recreate), rolling one at a time, a PDB.
    deployment = _object(prod_plan, "Deployment", "prod-use1", "llama-3-1-70b-epp")
    assert deployment["spec"]["replicas"] == 2
    assert "--ha-enable-leader-election" not in deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert deployment["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    assert _object(prod_plan, "PodDisruptionBudget", "prod-use1", "llama-3-1-70b-epp")
    # Triton's load and KV-cache gauges have TensorRT-LLM names: the picker's metrics extractor reads them
    # by the built-in `triton-tensorrt-llm` mapping, not by flags (which v1.5.0 rejects at startup).
    triton = yaml.safe_load(
        _object(prod_plan, "ConfigMap", "prod-usc1", "mistral-7b-trt-epp")["data"]["default-plugins.yaml"]
    )
    (extractor,) = [p for p in triton["plugins"] if p["type"] == "core-metrics-extractor"]
    assert extractor["parameters"]["defaultEngine"] == "triton-tensorrt-llm"
    args = _object(prod_plan, "Deployment", "prod-usc1", "mistral-7b-trt-epp")["spec"]["template"]["spec"]
    assert not [a for a in args["containers"][0]["args"] if a.endswith("-metric")]


def test_security_policy_covers_every_route(env_plan):
    assert sorted(_gateway_clusters(env_plan)) == SERVING_CLUSTERS[env_plan.environment], "clusters with a gateway"
    for cluster in _gateway_clusters(env_plan):
        (policy,) = _objects(env_plan, "SecurityPolicy", cluster)
        assert policy["metadata"]["namespace"] == names.ENVOY_GATEWAY_NAMESPACE
        assert {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": names.GATEWAY_NAME} in policy["spec"][
            "targetRefs"
        ]
        auth = policy["spec"]["apiKeyAuth"]
        assert auth["forwardClientIDHeader"] == names.TENANT_HEADER and auth["sanitize"] is True
        (ref,) = auth["credentialRefs"]
        secret = _object(env_plan, "Secret", cluster, ref["name"])
        assert secret["metadata"]["namespace"] == names.ENVOY_GATEWAY_NAMESPACE
        for route in _objects(env_plan, "AIGatewayRoute", cluster):
            (parent,) = route["spec"]["parentRefs"]
            assert (parent["name"], parent["namespace"]) == (names.GATEWAY_NAME, names.ENVOY_GATEWAY_NAMESPACE)
            # No route-level policy would replace the Gateway's.
            for kind in ("SecurityPolicy", "BackendTrafficPolicy"):
                for p in _objects(env_plan, kind, cluster):
                    assert all(t["kind"] == "Gateway" for t in p["spec"]["targetRefs"])


def test_public_gateways_pass_the_gateway_policies(prod_plan):
    evaluation = evaluate_plan(prod_plan)
    for rule in ("gateway-route-authenticated", "gateway-route-token-budget"):
        assert evaluation.subjects[rule] == 3 and evaluation.of(rule) == []
    stack = Stack(plan_resources(prod_plan))
    gateways = [r for r in stack.resources if r.is_kubernetes and r.kind == "Gateway"]
    assert {g.cluster: is_public(g, stack) for g in gateways} == {
        "prod-use1": True,
        "prod-usw2": True,
        "prod-usc1": False,
    }


def test_one_rate_limit_rule_per_tenant_and_token_type(env_plan):
    spec = env_plan.spec
    assert sorted(_gateway_clusters(env_plan)) == SERVING_CLUSTERS[env_plan.environment], "clusters with a gateway"
    for cluster in _gateway_clusters(env_plan):
        (policy,) = _objects(env_plan, "BackendTrafficPolicy", cluster)
        assert policy["spec"]["rateLimit"]["type"] == "Global"
        rules = policy["spec"]["rateLimit"]["global"]["rules"]
        costs = {
            c["metadataKey"]
            for r in _objects(env_plan, "AIGatewayRoute", cluster)
            for c in r["spec"]["llmRequestCosts"]
        }
        seen = []
        for rule in rules:
            (selector,) = rule["clientSelectors"]
            (header,) = selector["headers"]
            assert (header["name"], header["type"]) == (names.TENANT_HEADER, "Exact")
            assert rule["shared"] is True  # one bucket per tenant across every route
            key = rule.get("cost", {}).get("response", {}).get("metadata", {}).get("key", "requests")
            seen.append((header["value"], key, rule["limit"]))
            if key != "requests":
                assert rule["cost"]["request"] == {"from": "Number", "number": 0}
                assert rule["cost"]["response"]["metadata"]["namespace"] == "io.envoy.ai_gateway"
                assert key in costs  # the routes record what the budget charges
        expected = []
        for tenant in spec.tenants:
            for kind, rate in (tenant.budget.tokens() if tenant.budget else {}).items():
                expected.append((tenant.name, TOKEN_COSTS[kind][0], {"requests": rate.limit, "unit": rate.per.title()}))
            if tenant.budget and tenant.budget.requests:
                rate = tenant.budget.requests
                expected.append((tenant.name, "requests", {"requests": rate.limit, "unit": rate.per.title()}))
        assert seen == expected
        assert len({(t, k) for t, k, _ in seen}) == len(seen)  # one rule per tenant and token type


def test_resilience_sized_for_streaming(prod_plan):
    gateway = prod_plan.spec.gateway
    (policy,) = _objects(prod_plan, "BackendTrafficPolicy", "prod-use1")
    assert policy["spec"]["retry"]["retryOn"] == {
        "triggers": ["connect-failure", "retriable-status-codes"],
        "httpStatusCodes": [503],
    }
    assert policy["spec"]["retry"]["numRetries"] == gateway.retries
    assert policy["spec"]["circuitBreaker"] == {
        "maxConnections": 1024,
        "maxPendingRequests": 256,
        "maxParallelRequests": 1024,
        "maxParallelRetries": 16,
    }
    assert policy["spec"]["healthCheck"]["passive"]["consecutive5XxErrors"] == 5
    for rule in _object(prod_plan, "AIGatewayRoute", "prod-use1", "models-1")["spec"]["rules"]:
        assert rule["timeouts"] == {"request": f"{gateway.request_timeout_seconds}s"}
        assert rule["streamIdleTimeout"] == f"{gateway.idle_timeout_seconds}s"
    (client,) = _objects(prod_plan, "ClientTrafficPolicy", "prod-use1")
    assert client["spec"]["timeout"]["http"]["streamIdleTimeout"] == f"{gateway.idle_timeout_seconds}s"
    (proxy,) = _objects(prod_plan, "EnvoyProxy", "prod-use1")
    assert proxy["spec"]["shutdown"]["drainTimeout"] == f"{gateway.request_timeout_seconds}s"
    assert proxy["spec"]["provider"]["kubernetes"]["envoyPDB"] == {"minAvailable": 1}


def test_a_request_no_replica_can_take_gets_a_fast_503_with_retry_after(env_plan):
    """The picker's 503 (a model at zero after its 10 s hold, or no endpoint) and Envoy's own 500 for an unreachable
    picker (the AI Gateway builds the picker's filter fail-closed, Envoy's ext_proc default status is 500) reach the
    client as a 503 with an OpenAI-style JSON error and Retry-After: 30 s where a model may be waking, else 2 s;
    1 s for a picker restarting. The model servers' own 500s (source Backend) are left alone."""
    clusters = sorted(_gateway_clusters(env_plan))
    assert clusters == SERVING_CLUSTERS[env_plan.environment], "clusters with a gateway"
    waking = {"dev-use1"} if env_plan.environment == "dev" else set()  # dev-use1's models scale to zero
    for cluster in clusters:
        (policy,) = _objects(env_plan, "BackendTrafficPolicy", cluster)
        picker_down, no_replica = policy["spec"]["responseOverride"]
        assert picker_down["match"] == {"statusCodes": [{"type": "Value", "value": 500}]}
        assert picker_down["source"] == "Local"
        assert picker_down["response"]["statusCode"] == 503
        assert picker_down["response"]["header"] == {"set": [{"name": "Retry-After", "value": "1"}]}
        assert no_replica["match"] == {"statusCodes": [{"type": "Value", "value": 503}]}
        assert "source" not in no_replica  # the picker's immediate response is local, a draining replica's is not
        retry = "30" if cluster in waking else "2"
        assert no_replica["response"]["header"] == {"set": [{"name": "Retry-After", "value": retry}]}
        for override in (picker_down, no_replica):
            assert override["response"]["contentType"] == "application/json"
            assert json.loads(override["response"]["body"]["inline"])["error"]["code"] == 503


def test_internal_gateways_get_an_internal_load_balancer(prod_plan):
    service = {
        cluster: _objects(prod_plan, "EnvoyProxy", cluster)[0]["spec"]["provider"]["kubernetes"]["envoyService"]
        for cluster in ("prod-use1", "prod-usc1")
    }
    assert service["prod-use1"]["annotations"] == {"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"}
    assert service["prod-usc1"]["annotations"] == {"networking.gke.io/load-balancer-type": "Internal"}


def test_chart_values_wire_the_ai_gateway_into_envoy_gateway(dev_plan):
    releases = {r.inputs["name"]: r.inputs for r in dev_plan.helm_releases() if dev_plan.cluster_of(r) == "dev-use1"}
    config = releases["envoy-gateway"]["values"]["config"]["envoyGateway"]
    manager = config["extensionManager"]
    assert manager["service"]["fqdn"] == {
        "hostname": "ai-gateway-controller.envoy-ai-gateway-system.svc.cluster.local",
        "port": 1063,
    }
    assert manager["hooks"]["xdsTranslator"]["post"] == ["Translation", "Cluster", "Route"]
    assert manager["backendResources"] == [
        {"group": "inference.networking.k8s.io", "kind": "InferencePool", "version": "v1"}
    ]
    assert config["extensionApis"] == {"enableEnvoyPatchPolicy": True, "enableBackend": True}
    assert config["rateLimit"]["backend"] == {
        "type": "Redis",
        "redis": {"url": "ratelimit-redis.envoy-gateway-system.svc.cluster.local:6379"},
    }
    controller = releases["ai-gateway"]["values"]["controller"]
    assert controller["metricsRequestHeaderAttributes"] == f"{names.TENANT_HEADER}:{names.TENANT_METRIC_ATTRIBUTE}"
    assert controller["fullnameOverride"] == "ai-gateway-controller"
    # two even in dev: its pod-mutating webhook is failurePolicy Fail, so with it down no Envoy pod starts
    assert controller["replicaCount"] == 2
    assert controller["podDisruptionBudget"] == {"enabled": True}


def test_custom_resources_wait_for_the_releases_installing_their_crds(env_plan):
    assert sorted(_gateway_clusters(env_plan)) == SERVING_CLUSTERS[env_plan.environment], "clusters with a gateway"

    def urn_of(cluster: str, suffix: str) -> str:
        return next(r.urn for r in env_plan.resources if r.name == f"{cluster}-{suffix}")

    for cluster in _gateway_clusters(env_plan):
        eg, ai_crds = urn_of(cluster, "envoy-gateway"), urn_of(cluster, "ai-gateway-crds")
        # The InferencePool CRD's one owner is KServe's LLMInferenceService release (kserve-llmisvc-resources),
        # which Envoy Gateway waits for: it watches InferencePools from its start.
        crd_manifests = urn_of(cluster, "kserve-llmisvc")
        assert (
            next(r for r in env_plan.resources if r.urn == crd_manifests)
            .inputs["chart"]
            .endswith("/kserve-llmisvc-resources")
        )
        assert crd_manifests in next(r for r in env_plan.resources if r.urn == eg).options["dependsOn"]
        groups = set()
        for r in env_plan.kubernetes_objects():
            if env_plan.cluster_of(r) != cluster or not is_custom_resource(r.inputs):
                continue
            group = r.inputs["apiVersion"].split("/")[0]
            needed = {
                "gateway.networking.k8s.io": eg,
                "gateway.envoyproxy.io": eg,
                "aigateway.envoyproxy.io": ai_crds,
                "inference.networking.k8s.io": crd_manifests,
            }.get(group)
            if needed:
                assert needed in r.options["dependsOn"], f"{r.urn} does not wait for {needed}"
                groups.add(group)
        # Gateway, SecurityPolicy, AIGatewayRoute and InferencePool: every gateway cluster has CRs of all four groups.
        assert groups == {
            "gateway.networking.k8s.io",
            "gateway.envoyproxy.io",
            "aigateway.envoyproxy.io",
            "inference.networking.k8s.io",
        }, cluster


def test_rate_limit_redis_is_small_pinned_authenticated_and_persistent(env_plan):
    """A restart must not refill every tenant's budget: counters (windows up to an hour) survive on a volume; only
    the rate limiter, with the generated password, may use them."""
    assert sorted(_gateway_clusters(env_plan)) == SERVING_CLUSTERS[env_plan.environment], "clusters with a gateway"
    for cluster in {c for c, _ in _gateway_clusters(env_plan).items()}:
        deployment = _object(env_plan, "Deployment", cluster, "ratelimit-redis")
        pod = deployment["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        assert container["image"] == REDIS_IMAGE and "latest" not in REDIS_IMAGE
        args = container["args"]
        assert args[args.index("--appendonly") + 1] == "yes" and args[args.index("--dir") + 1] == "/data"
        (data,) = [m for m in container["volumeMounts"] if m["mountPath"] == "/data"]
        (volume,) = [v for v in pod["volumes"] if v["name"] == data["name"]]
        claim = _object(env_plan, "PersistentVolumeClaim", cluster, volume["persistentVolumeClaim"]["claimName"])
        assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
        assert deployment["spec"]["strategy"] == {"type": "Recreate"}  # the old pod lets go of the volume first
        # the password: Redis requires it, the rate limiter presents it, both from one Secret
        assert args[args.index("--requirepass") + 1] == "$(REDIS_PASSWORD)"
        env = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"]}
        secret = _object(env_plan, "Secret", cluster, env["REDIS_PASSWORD"]["name"])
        assert secret["stringData"] == "[secret]"  # generated; never in plan artefacts
        release = next(
            r.inputs
            for r in env_plan.helm_releases()
            if env_plan.cluster_of(r) == cluster and r.inputs["chart"].endswith("gateway-helm")
        )
        limiter = release["values"]["config"]["envoyGateway"]["provider"]["kubernetes"]["rateLimitDeployment"]
        (patched,) = limiter["patch"]["value"]["spec"]["template"]["spec"]["containers"]
        assert patched["name"] == "envoy-ratelimit"  # Envoy Gateway's rate-limit container
        assert patched["env"] == [{"name": "REDIS_AUTH", "valueFrom": {"secretKeyRef": env["REDIS_PASSWORD"]}}]
        assert set(container["resources"]) == {"requests", "limits"}
        assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
        assert container["securityContext"]["readOnlyRootFilesystem"] is True


def test_api_keys_are_secret_outputs_and_never_in_artifacts(env_plan):
    assert env_plan.outputs["apiKeys"] == "[secret]"
    text = json.dumps([plan_document(env_plan), manifest_files(env_plan), helm_files(env_plan)])
    keys = [
        v for v in env_plan.evaluation.secret_values if len(v) == 48 and v.isalnum()
    ]  # the generated keys (RandomPassword results)
    assert len(keys) == len(env_plan.spec.tenants)
    assert not [k for k in keys if k in text]
    for cluster in _gateway_clusters(env_plan):
        assert _object(env_plan, "Secret", cluster, "tenant-api-keys")["stringData"] == "[secret]"


# --- external providers: not in the checked-in stacks (no secrets provider here), planned from a variant ---


def _with_providers(**credentials) -> dict:
    raw = raw_environment("dev")
    raw["gateway"]["externalProviders"] = [
        {"name": "openai", "type": "openai", "models": ["gpt-4o-mini"], "apiKey": credentials["api_key"]},
        {
            "name": "bedrock",
            "type": "bedrock",
            "awsRegion": "us-east-1",
            "models": ["anthropic.claude-3-5-sonnet-20240620-v1:0"],
            "accessKeyId": credentials["key_id"],
            "secretAccessKey": credentials["secret"],
        },
    ]
    raw["tenants"][0]["models"] += ["gpt-4o-mini", "anthropic.claude-3-5-sonnet-20240620-v1:0"]
    return raw


def _gateway_plan(raw: dict):
    """Only the gateway component of the first region (no cloud resources)."""
    env = load_environment(raw)
    region = env.regions[0]

    def program():
        provider = k8s.Provider("test-use1", kubeconfig="apiVersion: v1")
        handle = ClusterHandle(
            name="test-use1",
            region=region,
            provider=provider,
            kubeconfig=pulumi.Output.from_input("apiVersion: v1"),
            endpoint=pulumi.Output.from_input("https://cluster.example"),
        )
        serving = k8s.core.v1.Namespace(
            "serving", metadata={"name": SERVING_NAMESPACE}, opts=pulumi.ResourceOptions(provider=provider)
        )
        keys = {t.name: pulumi.Output.secret(f"key-of-{t.name}-0123456789") for t in env.tenants}
        pool_crds = k8s.helm.v3.Release(
            "kserve-llmisvc", chart="kserve-llmisvc-resources", opts=pulumi.ResourceOptions(provider=provider)
        )
        InferenceGateway(
            region.name,
            inference_gateway_args(
                env,
                region,
                handle,
                serving_namespace=serving,
                inference_pool_crds=pool_crds,
                api_keys=keys,
                cert_manager=[],
            ),
        )

    return evaluate_program(program)


@pytest.fixture(scope="module")
def provider_plan():
    return _gateway_plan(
        _with_providers(api_key="sk-plain-text-in-config", key_id="AKIAEXAMPLEKEY", secret="aws-secret-value-1234")
    )


@pytest.mark.slow
def test_external_providers_get_backends_with_their_credentials(provider_plan, upstream):
    objects = {(r.inputs["kind"], r.inputs["metadata"]["name"]): r.inputs for r in provider_plan.kubernetes_objects()}
    assert objects[("AIServiceBackend", "openai")]["spec"]["schema"] == {"name": "OpenAI"}
    assert objects[("AIServiceBackend", "bedrock")]["spec"]["schema"] == {"name": "AWSBedrock"}
    assert objects[("Backend", "bedrock")]["spec"]["endpoints"] == [
        {"fqdn": {"hostname": "bedrock-runtime.us-east-1.amazonaws.com", "port": 443}}
    ]
    assert objects[("BackendSecurityPolicy", "openai")]["spec"]["apiKey"] == {
        "secretRef": {"name": "openai-credentials"}
    }
    bedrock = objects[("BackendSecurityPolicy", "bedrock")]["spec"]
    assert bedrock["type"] == "AWSCredentials" and bedrock["awsCredentials"]["region"] == "us-east-1"
    assert objects[("Secret", "openai-credentials")]["stringData"] == "[secret]"
    # One rule per model: the self-hosted one to its pool, each external one to its AIServiceBackend.
    rules = {r["name"]: r["backendRefs"] for r in objects[("AIGatewayRoute", "models-1")]["spec"]["rules"]}
    assert rules["gpt-4o-mini"] == [{"name": "openai"}]
    assert rules["anthropic.claude-3-5-sonnet-20240620-v1-0"] == [{"name": "bedrock"}]
    assert rules["llama-3-1-8b"][0]["kind"] == "InferencePool"
    for obj in objects.values():
        if is_custom_resource(obj):
            assert upstream.validate_custom_resource(obj) == [], obj["kind"]


def test_provider_credentials_never_appear_unencrypted(provider_plan):
    text = json.dumps([plan_document(provider_plan), manifest_files(provider_plan)])
    for plain in ("sk-plain-text-in-config", "AKIAEXAMPLEKEY", "aws-secret-value-1234", "key-of-research-0123456789"):
        assert plain not in text
    assert "sk-plain-text-in-config" in provider_plan.evaluation.secret_values


def test_secure_config_placeholders_plan_as_secrets():
    """`secure:` values reach an offline plan as the `[secret]` marker; it stays a secret, not a leaked value."""
    plan = _gateway_plan(_with_providers(api_key="[secret]", key_id="[secret]", secret="[secret]"))
    secret = next(r for r in plan.kubernetes_objects() if r.inputs["metadata"]["name"] == "openai-credentials")
    assert secret.inputs["stringData"] == "[secret]"
    assert "[secret]" not in plan.evaluation.secret_values


@pytest.mark.plan
def test_pool_of_a_multi_node_model_selects_only_replica_heads():
    """Workers of a multi-node replica carry the model's labels but do not serve on the target port."""
    plan = plan_config(_multi_node_prod())
    pools = {
        plan.cluster_of(r): r.inputs["spec"]["selector"]["matchLabels"]
        for r in plan.kubernetes_objects()
        if r.inputs["kind"] == "InferencePool" and r.inputs["metadata"]["name"] == "llama-3-1-70b"
    }
    head = {**names.model_pod_labels("llama-3-1-70b"), "app": "isvc.llama-3-1-70b-predictor"}
    assert pools == {"test-use1": head, "test-usw2": head}
