"""The programs under examples/: another team's Pulumi program using the platform's components, under the mocks.

examples/existing-eks-gpu-pool builds one GPU pool and serves one model on an EKS cluster that already exists.
Expected values are written by hand from its `Pulumi.dev.yaml`.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.checks.loader import load_environment
from components.config.base import ConfigError
from components.config.stackfile import read_stack_file
from policies.offline import evaluate_plan
from stacks.config import namespace_values
from tests.harness import apply_ops, plan_program
from tools.plan.runner import PROJECT_DIR
from tools.plan.stackfile import load_stack_config
from tools.rollout.bringup import check_bring_up
from tools.rollout.gates import offline_gates

pytestmark = pytest.mark.plan

EXAMPLE = PROJECT_DIR / "examples" / "existing-eks-gpu-pool"
PROJECT = "existing-eks-gpu-pool"  # its Pulumi.yaml
STACK = "dev"
# Its Pulumi.dev.yaml.
CLUSTER = "team-eks"
NODE_ROLE = "arn:aws:iam::123456789012:role/team-gpu-nodes"
SUBNETS = ["subnet-0a1b2c3d", "subnet-4e5f6a7b"]  # us-east-1a, us-east-1b
MODEL = "llama-3-1-8b"
BUCKET = "acme-search-dev-use1-models"  # <modelStore.bucketPrefix>-<stack>-<region entry>-models
SERVING_NAMESPACE = "inference"
INFERENCE_SERVICE = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"


def key(name: str) -> str:
    return f"{PROJECT}:{name}"


def example_config() -> dict[str, Any]:
    """The example's stack file config, to mutate."""
    return copy.deepcopy(read_stack_file(EXAMPLE, STACK))


@pytest.fixture(scope="module")
def example():
    return plan_program(EXAMPLE, STACK)


def _one(plan, type_: str):
    (found,) = plan.of_type(type_)
    return found


def test_nothing_of_the_existing_cluster_is_created(example):
    for type_ in (
        "aws:eks/cluster:Cluster",
        "aws:ec2/vpc:Vpc",
        "aws:ec2/subnet:Subnet",
        "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
        "aws:eks/addon:Addon",
    ):
        assert example.of_type(type_) == [], type_


def test_one_gpu_pool_of_the_declared_type_joins_the_existing_cluster(example):
    group = _one(example, "aws:eks/nodeGroup:NodeGroup").inputs
    assert group["clusterName"] == CLUSTER
    assert group["nodeRoleArn"] == NODE_ROLE
    assert sorted(group["subnetIds"]) == SUBNETS
    assert group["scalingConfig"] == {"minSize": 0, "maxSize": 2, "desiredSize": 0}
    assert group["labels"]["inference-platform.io/pool"] == "l40s"
    assert group["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    assert _one(example, "aws:ec2/launchTemplate:LaunchTemplate").inputs["instanceType"] == "g6e.4xlarge"
    # Cluster Autoscaler grows the pool from zero: its release, on the existing cluster.
    releases = {r.inputs["name"]: r for r in example.helm_releases()}
    assert example.cluster_of(releases["cluster-autoscaler"]) == CLUSTER


def test_every_resource_names_its_provider_the_regions_aws_or_the_existing_clusters(example):
    # The stack file disables default providers: a resource without one would fail at `pulumi up`.
    custom = [r for r in example.resources if r.custom and not r.type.startswith("pulumi:providers:")]
    assert {r.provider.rsplit("::", 1)[1] if r.provider else None for r in custom} == {"use1-aws", CLUSTER}
    providers = [r.name for r in example.of_type("pulumi:providers:kubernetes")]
    assert providers == [CLUSTER]
    objects = example.kubernetes_objects() + example.helm_releases()
    assert len(objects) > 20
    assert {example.cluster_of(r) for r in objects} == {CLUSTER}
    # What the model needs, and nothing the program does not build (no gateway, cache, KEDA or monitoring).
    releases = {r.inputs["name"] for r in example.helm_releases()}
    # KServe with its LLMInferenceService releases, which every serving cluster installs (LLM_INFERENCE_SERVICE_INSTALL)
    assert releases == {
        "cluster-autoscaler",
        "gpu-operator",
        "volcano",
        "cert-manager",
        "kserve-crd",
        "kserve",
        "kserve-llmisvc-crd",
        "kserve-llmisvc",
        "kserve-runtime-configs",
    }


def test_the_model_runs_on_the_pool_and_reads_its_weights_from_the_bucket(example):
    isvc = _one(example, INFERENCE_SERVICE)
    assert isvc.inputs["metadata"]["name"] == MODEL
    assert isvc.inputs["metadata"]["namespace"] == SERVING_NAMESPACE
    predictor = isvc.inputs["spec"]["predictor"]
    assert predictor["nodeSelector"] == {"inference-platform.io/pool": "l40s"}
    assert predictor["model"]["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (1, 1)
    assert predictor["schedulerName"] == "volcano"
    assert predictor["serviceAccountName"] == "model-server"
    assert f"--model=s3://{BUCKET}/models/{MODEL}" in predictor["model"]["args"]
    assert _one(example, "aws:s3/bucket:Bucket").inputs["bucket"] == BUCKET


def test_the_model_waits_for_kserve_its_runtimes_volcano_and_its_identity(example):
    isvc = _one(example, INFERENCE_SERVICE)
    waits = {urn.rsplit("::", 1)[1] for urn in isvc.options["dependsOn"]}
    assert {
        f"{CLUSTER}-kserve",
        f"{CLUSTER}-runtime-inference-platform-vllm",
        f"{CLUSTER}-volcano",
        f"{CLUSTER}-priority-realtime",
        f"{CLUSTER}-inference",
        f"{CLUSTER}-model-server",
    } <= waits


def test_the_model_servers_read_the_bucket_through_irsa_on_the_existing_clusters_issuer(example):
    (account,) = [
        r
        for r in example.of_type("kubernetes:core/v1:ServiceAccount")
        if r.inputs["metadata"]["name"] == "model-server"
    ]
    role_arn = account.inputs["metadata"]["annotations"]["eks.amazonaws.com/role-arn"]
    assert role_arn.rsplit("/", 1)[1].startswith("use1-model-server")  # the mocks suffix physical names
    trust = example.named("use1-model-server", "aws:iam/role:Role").inputs["assumeRolePolicy"]
    # The mocks answer the existing cluster's IAM OIDC provider lookup in its region.
    assert "oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/" in trust
    assert "system:serviceaccount:inference:model-server" in trust


def test_only_the_client_namespaces_reach_the_model_server(example):
    policies = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in example.of_type(NETWORK_POLICY)}
    assert policies["default-deny-ingress"]["ingress"] == []
    clients = policies[f"{MODEL}-clients"]
    assert clients["podSelector"]["matchLabels"]["inference-platform.io/model"] == MODEL
    assert clients["ingress"] == [
        {
            "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "search-api"}}}],
            "ports": [{"protocol": "TCP", "port": 8080}],  # the vLLM runtime's container port
        }
    ]


def test_the_outputs_say_where_to_call_the_model_and_put_its_weights(example):
    # KServe's predictor Service, port 80 (components/catalog/upstream.py KSERVE_PREDICTOR_SERVICE).
    assert example.outputs["url"] == f"http://{MODEL}-predictor.{SERVING_NAMESPACE}.svc.cluster.local/v1"
    assert example.outputs["weights"] == f"s3://{BUCKET}/models/{MODEL}/"
    assert example.outputs["gpuPool"] == f"{CLUSTER}-l40s"


def test_the_example_passes_the_pack_and_its_waits_can_complete(example):
    values = namespace_values(PROJECT, load_stack_config(EXAMPLE, STACK).config)
    values.pop("clientNamespaces")
    example.spec = load_environment(values)
    assert evaluate_plan(example).mandatory == []
    report = check_bring_up(example.spec, STACK, {STACK: example}, offline_gates(example.spec, STACK, {STACK: example}))
    assert report.violations == []
    assert report.checked[STACK] >= 6  # the six releases wait


# --- near variants the program builds -------------------------------------------------------------------------


def test_an_existing_cert_manager_is_not_installed_again():
    config = example_config()
    config[key("regions")][0]["certManager"] = {"existing": True}
    plan = plan_program(EXAMPLE, STACK, config)
    releases = {r.inputs["name"] for r in plan.helm_releases()}
    assert "cert-manager" not in releases and "kserve" in releases


def test_two_fixed_replicas_get_a_disruption_budget():
    config = example_config()
    config[key("models")][0]["placements"][0] |= {"minReplicas": 2, "maxReplicas": 2}
    plan = plan_program(EXAMPLE, STACK, config)
    (budget,) = plan.of_type("kubernetes:policy/v1:PodDisruptionBudget")
    assert budget.inputs["metadata"]["name"] == MODEL
    assert _one(plan, INFERENCE_SERVICE).inputs["spec"]["predictor"]["maxReplicas"] == 2


# --- bad input: the platform's one-line errors, every mistake at once, nothing registered ---------------------

REGION = key("regions") + "[0]"


@pytest.mark.parametrize(
    ("ops", "expected"),
    [
        (
            [("rename", f"{REGION}.gpuPools[0].maxSize", "maxSzie")],
            [
                "regions[0].gpuPools[0].maxSize: required key is missing; add `maxSize` (see docs/configuration.md)",
                # An AWS region's pool: the keys of the AWS pool model only.
                "regions[0].gpuPools[0].maxSzie: unknown key; did you mean 'maxSize'? valid keys here: capacity, "
                "desiredSize, diskGib, driverInstall, efa, imagePull, machineType, maxSize, mig, minSize, name, "
                "placementGroup, timeSlicing, zones",
            ],
        ),
        (
            [("set", "aws:region", "us-east-1")],
            [
                "aws:region: provider configuration is never read: every resource uses the provider the program "
                "creates for its region (default providers are disabled); remove it and set "
                "existing-eks-gpu-pool:regions instead"
            ],
        ),
        (
            [("rename", key("modelStore"), "existing-eks-gpu-pol:modelStore")],
            [
                "existing-eks-gpu-pol:modelStore: the program reads no 'existing-eks-gpu-pol' namespace; did you "
                "mean 'existing-eks-gpu-pool:modelStore'? its keys are existing-eks-gpu-pool:<key> and pulumi:<key>",
                "modelStore: required key is missing; add `modelStore` (see docs/configuration.md)",
            ],
        ),
        (
            [("append", f"{REGION}.gpuPools", {"name": "l4", "machineType": "g6.4xlarge", "maxSize": 1})],
            ["regions[0].gpuPools: this program builds one GPU pool; keep one"],
        ),
        (
            [("del", key("gateway"))],
            [
                "gateway.enabled: this program runs no gateway (clientNamespaces call the model); set it to false",
                # The platform's own checks of a gateway, which the line above makes moot.
                "regions[0].gateway.hostname: region 'use1' serves models, so its gateway needs a hostname for its "
                "HTTPS listener and certificate; set it, or gateway.domain for `<region>.<domain>`",
                "tenants: the gateway serves llama-3-1-8b but no tenant has a key, so it refuses every request; add a "
                "tenant with the models it may call",
            ],
        ),
        (
            [("set", f"{key('models')}[0].placements[0].maxReplicas", 2)],
            [
                "models[0].placements[0].maxReplicas: this program runs a fixed number of replicas (no KEDA); set it "
                "to minReplicas (1)",
                "regions[0].serving.prometheusUrl: llama-3-1-8b autoscale(s) on queue depth and latency in this "
                "region, but observability is off; set prometheusUrl to a Prometheus that scrapes the model servers, "
                "or pin their minReplicas = maxReplicas",
            ],
        ),
        (
            [("set", key("clientNamespaces"), ["Search_API"])],
            [
                "clientNamespaces[0]: 'Search_API' is not a namespace name; use lowercase letters, digits and '-' "
                "(at most 63)"
            ],
        ),
        (
            [("del", key("clientNamespaces"))],
            ["clientNamespaces: list the namespaces whose pods call the model, e.g. [search-api]"],
        ),
        (
            [("del", f"{REGION}.cluster")],
            [
                "regions[0].cluster.existing: this program builds on an EKS cluster that exists; set cloud: aws and "
                "cluster.existing"
            ],
        ),
    ],
    ids=[
        "misspelled-key",
        "provider-config",
        "misspelled-namespace",
        "second-pool",
        "gateway-on",
        "replica-range",
        "bad-namespace",
        "no-clients",
        "not-existing",
    ],
)
def test_bad_config_is_refused_with_one_line_per_mistake(ops, expected):
    registered = []
    with pytest.raises(ConfigError) as info:
        plan_program(EXAMPLE, STACK, apply_ops(example_config(), tuple(ops)), on_register=registered.append)
    assert [str(issue) for issue in info.value.issues] == expected
    assert registered == []


def test_every_mistake_of_a_run_is_reported_at_once():
    config = apply_ops(
        example_config(),
        (
            ("set", key("clientNamespaces"), []),
            ("set", f"{REGION}.gpuPools[0].machineType", "g6e.4xlarg"),
            ("set", f"{REGION}.modelCache", {"enabled": True}),
        ),
    )
    with pytest.raises(ConfigError) as info:
        plan_program(EXAMPLE, STACK, config)
    paths = [issue.path for issue in info.value.issues]
    assert paths[:2] == ["clientNamespaces", "regions[0].modelCache.enabled"]
    assert "regions[0].gpuPools[0].machineType" in paths
