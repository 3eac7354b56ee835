"""Request priority classes (`tenants[].priority`): named by the gateway from the authenticated tenant, ordered and
shed by the endpoint picker, engines first-come first-served.

Expected values are written by hand: the classes from Pulumi.prod.yaml's tenants (search and support-bot
interactive, legal batch by default, evals bestEffort; llama-3-1-70b is called by search and evals, llama-3-1-8b by
search, support-bot and legal, its adapter legal-contracts by legal; mistral-7b-trt by support-bot alone, the
disaggregated llama-3-1-70b-rag by search alone), and the names and numbers from the pinned upstream sources cited
beside each.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml
from lupa import lua51, luajit21

from platform_catalog.request_priority import PRIORITY_LUA
from tests.harness import cluster_objects
from tools.plan.report import render_markdown

# gateway-api-inference-extension@v1.5.0:pkg/epp/metadata/consts.go L31-36
OBJECTIVE_HEADER = "x-gateway-inference-objective"
PICKER_INPUT_HEADERS = {OBJECTIVE_HEADER, "x-gateway-inference-fairness-id", "x-gateway-model-name-rewrite"}
# ai-gateway@v1.1.0:internal/internalapi ModelNameHeaderKeyDefault, set in internal/extproc/processor_impl.go L282-290
MODEL_HEADER = "x-ai-eg-model"
# gateway-api-inference-extension@v1.5.0:config/crd/bases (the release tag's file, applied as it is)
OBJECTIVE_CRD = (
    "https://raw.githubusercontent.com/kubernetes-sigs/gateway-api-inference-extension/v1.5.0/config/crd/bases/"
    "inference.networking.x-k8s.io_inferenceobjectives.yaml"
)
POOL_REF = {"group": "inference.networking.k8s.io", "kind": "InferencePool"}
# The classes' picker priorities: above the picker's default 0 (director.go L87, what batch keeps), and negative for
# best effort, which the picker calls sheddable (apix/v1alpha2/inferenceobjective_types.go L60-73).
INTERACTIVE, BATCH, BEST_EFFORT = 1, 0, -1
SEVENTY_B = {"llama-3-1-70b-interactive": INTERACTIVE, "llama-3-1-70b-best-effort": BEST_EFFORT}
EIGHT_B = {"llama-3-1-8b-interactive": INTERACTIVE, "llama-3-1-8b-batch": BATCH}
OBJECTIVES = {"prod-use1": SEVENTY_B | EIGHT_B, "prod-usw2": SEVENTY_B | EIGHT_B, "prod-usc1": SEVENTY_B}
POOLS = {
    "prod-use1": ("llama-3-1-70b", "llama-3-1-8b"),
    "prod-usw2": ("llama-3-1-70b", "llama-3-1-8b"),
    "prod-usc1": ("llama-3-1-70b",),
}
CONTEXT = {
    "llama-3-1-70b": {"search": "llama-3-1-70b-interactive", "evals": "llama-3-1-70b-best-effort"},
    "llama-3-1-8b": {
        "search": "llama-3-1-8b-interactive",
        "support-bot": "llama-3-1-8b-interactive",
        "legal": "llama-3-1-8b-batch",
        "rollout-probe": "llama-3-1-8b-interactive",  # the SLO gate's tenant (rollout.slo), measured as interactive
    },
    "legal-contracts": {"legal": "llama-3-1-8b-batch"},
}
CONTEXTS = {"prod-use1": CONTEXT, "prod-usw2": CONTEXT, "prod-usc1": {"llama-3-1-70b": CONTEXT["llama-3-1-70b"]}}


def test_pools_shared_by_classes_get_an_objective_per_class(prod_plan):
    found: dict[str, dict[str, int]] = {}
    for (cluster, name), objective in cluster_objects(prod_plan, "InferenceObjective").items():
        assert objective["apiVersion"] == "inference.networking.x-k8s.io/v1alpha2"
        assert objective["metadata"]["namespace"] == "inference"
        pool = name.rsplit("-", 2)[0] if name.endswith("best-effort") else name.rsplit("-", 1)[0]
        assert objective["spec"]["poolRef"] == {**POOL_REF, "name": pool}
        found.setdefault(cluster, {})[name] = objective["spec"]["priority"]
    assert found == OBJECTIVES


def test_the_objective_crd_is_applied_before_the_pickers_and_objectives(prod_plan):
    """The picker discovers the objective CRD once, at start: its Deployment waits for it."""
    files = {r.urn: r for r in prod_plan.of_type("kubernetes:yaml/v2:ConfigFile") if r.inputs["file"] == OBJECTIVE_CRD}
    assert sorted(prod_plan.cluster_of(f) for f in files.values()) == sorted(OBJECTIVES)
    crd_of = {prod_plan.cluster_of(f): urn for urn, f in files.items()}
    for r in prod_plan.kubernetes_objects():
        cluster, kind, name = prod_plan.cluster_of(r), r.inputs["kind"], r.inputs["metadata"]["name"]
        waits = crd_of.get(cluster) in r.options.get("dependsOn", [])
        if kind == "InferenceObjective":
            assert waits, (cluster, name)
        if kind == "Deployment" and name in ("llama-3-1-70b-epp", "llama-3-1-8b-epp"):
            assert waits, (cluster, name)


def _picker_config(plan, cluster: str, pool: str) -> tuple[str, dict]:
    text = cluster_objects(plan, "ConfigMap")[cluster, f"{pool}-epp"]["data"]["default-plugins.yaml"]
    return text, yaml.safe_load(text)


def test_pickers_of_shared_pools_order_and_shed_by_class(prod_plan):
    # TTL: as long as the gateway waits, min(AI Gateway ext_proc 300 s, idleTimeoutSeconds 180, requestTimeoutSeconds
    # 900) less 5 s; best effort holds one replica's batch: 70b's maxNumSeqs, the default 64 (it sets none).
    expected = {
        "llama-3-1-70b": [{"priority": INTERACTIVE}, {"priority": BEST_EFFORT, "maxRequests": "64"}],
        "llama-3-1-8b": [{"priority": INTERACTIVE}, {"priority": BATCH}],
    }
    for cluster, pools in POOLS.items():
        for pool in pools:
            _, config = _picker_config(prod_plan, cluster, pool)
            assert config["featureGates"] == ["flowControl"]
            assert config["flowControl"] == {"defaultRequestTTL": "175s", "priorityBands": expected[pool]}
    _, mistral = _picker_config(prod_plan, "prod-usc1", "mistral-7b-trt")
    assert "flowControl" not in mistral and "featureGates" not in mistral


def test_a_new_picker_config_rolls_the_pickers(env_plan):
    deployments = cluster_objects(env_plan, "Deployment")
    pickers = {k: c for k, c in cluster_objects(env_plan, "ConfigMap").items() if k[1].endswith("-epp")}
    # dev: llama-3-1-8b and qwen2-5-7b in use1; prod: 70b in three regions, 8b in two, mistral in usc1
    assert len(pickers) == {"dev": 2, "prod": 6}[env_plan.environment]
    for (cluster, name), config_map in pickers.items():
        text = config_map["data"]["default-plugins.yaml"]
        annotations = deployments[cluster, name]["spec"]["template"]["metadata"]["annotations"]
        assert annotations["inference-platform.io/picker-config-sha256"] == hashlib.sha256(text.encode()).hexdigest()


def test_the_gateway_names_the_objective_from_the_tenant(prod_plan):
    policies = cluster_objects(prod_plan, "EnvoyExtensionPolicy")
    assert {cluster for cluster, _ in policies} == set(CONTEXTS)
    for cluster, context in CONTEXTS.items():
        policy = policies[cluster, "request-priority"]
        assert policy["metadata"]["namespace"] == "envoy-gateway-system"
        assert policy["spec"]["targetRefs"] == [
            {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "inference-gateway"}
        ]
        (lua,) = policy["spec"]["lua"]
        assert lua["type"] == "Inline" and lua["inline"] == PRIORITY_LUA
        assert lua["filterContext"] == {"objectives": context}
        # Lua policies are off in Envoy Gateway v1.9.0 unless enabled (envoygateway_types.go L367-373)
        (release,) = [r for r in prod_plan.helm_releases() if r.name == f"{cluster}-envoy-gateway"]
        assert release.inputs["values"]["config"]["envoyGateway"]["extensionApis"]["enableLua"] is True


def test_the_lua_reads_what_the_gateway_wrote(env_plan):
    """x-tenant-id is what API-key auth forwards (overwritten, upstream.ENVOY_API_KEY_AUTH_OVERWRITES_THE_CLIENT_ID);
    the model header is the AI Gateway's."""
    for policy in cluster_objects(env_plan, "SecurityPolicy").values():
        assert policy["spec"]["apiKeyAuth"]["forwardClientIDHeader"] == "x-tenant-id"
    assert 'headers:get("x-tenant-id")' in PRIORITY_LUA
    assert f'headers:get("{MODEL_HEADER}")' in PRIORITY_LUA
    assert f'headers:replace("{OBJECTIVE_HEADER}", objective)' in PRIORITY_LUA


def test_every_gateway_drops_the_pickers_control_headers(env_plan):
    policies = cluster_objects(env_plan, "ClientTrafficPolicy")
    assert {cluster for cluster, _ in policies} == {
        "dev": {"dev-use1"},
        "prod": {"prod-use1", "prod-usw2", "prod-usc1"},
    }[env_plan.environment]
    for (cluster, _), policy in policies.items():
        assert set(policy["spec"]["headers"]["earlyRequestHeaders"]["remove"]) == PICKER_INPUT_HEADERS, cluster


def test_dev_orders_nothing(dev_plan):
    """dev's tenants are all batch: no objective, no Lua, no CRD file, no band; Lua stays off."""
    assert not cluster_objects(dev_plan, "InferenceObjective")
    assert not cluster_objects(dev_plan, "EnvoyExtensionPolicy")
    assert not [r for r in dev_plan.of_type("kubernetes:yaml/v2:ConfigFile") if r.inputs["file"] == OBJECTIVE_CRD]
    for release in dev_plan.helm_releases():
        if release.name.endswith("envoy-gateway"):
            assert "enableLua" not in release.inputs["values"]["config"]["envoyGateway"]["extensionApis"]
    for (_, name), config_map in cluster_objects(dev_plan, "ConfigMap").items():
        if name.endswith("-epp"):
            assert "priorityBands" not in yaml.safe_load(config_map["data"]["default-plugins.yaml"]).get(
                "flowControl", {}
            )


def test_engines_stay_first_come_first_served(env_plan):
    """vLLM's default is fcfs (the vendored option table); nothing asks for priority scheduling, whose order the
    client's own body would set (upstream.VLLM_PRIORITY_SCHEDULING)."""
    table = Path(__file__).resolve().parents[1] / "conformance/upstream/vllm/v0.33.0/generated-vllm-serve-args.json"
    (option,) = [a for a in json.loads(table.read_text())["args"] if a["name"] == "scheduling-policy"]
    assert option["default"] == "fcfs" and option["choices"] == ["fcfs", "priority"]
    rendered = json.dumps([r.inputs for r in env_plan.kubernetes_objects()])
    assert "scheduling-policy" not in rendered


def test_autoscaling_counts_the_requests_the_picker_holds(prod_plan):
    """The picker's queue gauge (metrics.go: inference_extension_flow_control_queue_size, labels priority and
    inference_pool) of the classes that scale: interactive and batch, not best effort; per waitingRequestsPerReplica
    (prod sets none: 4)."""
    scalers = cluster_objects(prod_plan, "ScaledObject")
    assert len(scalers) == 6  # KEDA's models: 70b in three regions, 8b in two, mistral in one (the P/D one is fixed)
    expected = {"llama-3-1-70b": '"1"', "llama-3-1-8b": '"1|0"'}
    for cluster, pools in POOLS.items():
        for pool in pools:
            (held,) = [t for t in scalers[cluster, pool]["spec"]["triggers"] if t["name"] == "gateway-held"]
            assert held["metadata"]["query"] == (
                f'sum(inference_extension_flow_control_queue_size{{inference_pool="{pool}",priority=~{expected[pool]}}})'
                " or vector(0)"
            )
            assert held["metadata"]["threshold"] == "4" and held["metricType"] == "AverageValue"
    for (cluster, pool), scaler in scalers.items():
        if pool not in POOLS.get(cluster, ()):
            assert "gateway-held" not in [t["name"] for t in scaler["spec"]["triggers"]], (cluster, pool)


def test_plan_md_shows_each_shared_pool_and_its_classes(prod_plan, dev_plan):
    markdown = render_markdown(prod_plan)
    assert "## Request priority classes" in markdown
    assert "| use1 | llama-3-1-70b | search | - | evals | 175s | 64 |" in markdown
    assert "| use1 | llama-3-1-8b | rollout-probe, search, support-bot | legal | - | 175s | - |" in markdown
    assert "| usc1 | mistral-7b-trt |" not in markdown.split("## Request priority classes")[1].split("\n## ")[0]
    assert "## Request priority classes" not in render_markdown(dev_plan)


# --- the Lua, run as Envoy runs it (LuaJIT) and as Lua 5.1 --------------------------------------------------------

HARNESS = """
local script, initial, context = ...
local headers = {data = initial}
function headers:get(key) return self.data[key] end
function headers:replace(key, value) self.data[key] = value end
function headers:remove(key) self.data[key] = nil end
local filter_context = {}
function filter_context:get(key) if type(context) == "table" then return context[key] end return context end
local handle = {}
function handle:headers() return headers end
function handle:filterContext() return filter_context end
assert(loadstring or load)(script)()
envoy_on_request(handle)
return headers.data
"""


@pytest.fixture(params=[luajit21, lua51], ids=["luajit", "lua51"])
def run_lua(request):
    runtime = request.param.LuaRuntime(unpack_returned_tuples=True)

    def run(headers: dict[str, str], context: object) -> dict[str, str]:
        table = runtime.table_from(context, recursive=True) if isinstance(context, dict) else context
        result = runtime.execute(HARNESS, PRIORITY_LUA, runtime.table_from(headers), table)
        return dict(result.items())

    return run


@pytest.mark.parametrize(
    ("headers", "objective"),
    [
        ({"x-tenant-id": "search", MODEL_HEADER: "llama-3-1-70b"}, "llama-3-1-70b-interactive"),
        ({"x-tenant-id": "evals", MODEL_HEADER: "llama-3-1-70b"}, "llama-3-1-70b-best-effort"),
        # a client's own objective never survives: replaced by its tenant's
        (
            {"x-tenant-id": "evals", MODEL_HEADER: "llama-3-1-70b", OBJECTIVE_HEADER: "llama-3-1-70b-interactive"},
            "llama-3-1-70b-best-effort",
        ),
        # a tenant's adapter reaches its base model's pool, in the tenant's class
        ({"x-tenant-id": "legal", MODEL_HEADER: "legal-contracts"}, "llama-3-1-8b-batch"),
        # a pool of one class, or a tenant the context does not name: no objective (the picker's default), and a
        # client's is removed
        ({"x-tenant-id": "support-bot", MODEL_HEADER: "mistral-7b-trt", OBJECTIVE_HEADER: "x"}, None),
        ({"x-tenant-id": "legal", MODEL_HEADER: "llama-3-1-70b", OBJECTIVE_HEADER: "x"}, None),
        ({MODEL_HEADER: "llama-3-1-70b", OBJECTIVE_HEADER: "llama-3-1-70b-interactive"}, None),
        ({"x-tenant-id": "search", OBJECTIVE_HEADER: "llama-3-1-70b-interactive"}, None),
    ],
)
def test_the_lua_sets_the_tenants_objective(run_lua, headers, objective):
    result = run_lua(headers, {"objectives": CONTEXT})
    assert result.get(OBJECTIVE_HEADER) == objective
    assert {k: v for k, v in result.items() if k != OBJECTIVE_HEADER} == {
        k: v for k, v in headers.items() if k != OBJECTIVE_HEADER
    }


@pytest.mark.parametrize("context", [{}, {"objectives": "not a table"}, "example_value"])
def test_the_lua_survives_a_context_it_does_not_expect(run_lua, context):
    """As Envoy Gateway's strict validation runs it against its mocks (filterContext():get returns a string)."""
    headers = {"x-tenant-id": "search", MODEL_HEADER: "llama-3-1-70b", OBJECTIVE_HEADER: "x"}
    assert OBJECTIVE_HEADER not in run_lua(headers, context)
