"""Components whose inputs depend on a mode (KEDA or fixed replicas, aggregated or disaggregated, Karmada pull or
push), alone under the mocks: the mode's inputs are types, and a missing or bad one is refused with Pulumi's input
error naming the argument (issue 35 §4)."""

from __future__ import annotations

from functools import cache

import pulumi
import pulumi_kubernetes as k8s
import pytest

from components.checks.loader import load_environment
from components.config.karmada import FailoverSpec
from components.federation.certificates import KeyPair
from components.federation.karmada_objects import (
    FederatedModelPlan,
    KarmadaFederation,
    KarmadaFederationArgs,
    MemberRef,
)
from components.federation.member import (
    KarmadaAgent,
    KarmadaAgentArgs,
    KarmadaMembership,
    KarmadaMembershipArgs,
    PullAgent,
    PullMember,
    PushAgent,
    PushMember,
)
from components.serving.deployment import ModelPlacement, model_placements
from components.serving.model_deployment import KedaScaling, ModelDeployment, ModelDeploymentArgs
from tests.harness import cluster_handle, evaluate_program, raw_environment

SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
CLUSTER = "kubernetes:cluster.karmada.io/v1alpha1:Cluster"


def _refused(program) -> pulumi.InputPropertyError:
    with pytest.raises(pulumi.InputPropertyError) as info:
        evaluate_program(program)
    return info.value


@cache
def _placement(env: str, name: str) -> ModelPlacement:
    spec = load_environment(raw_environment(env))
    (placement,) = [p for p in model_placements(spec, spec.region("use1")) if p.name == name]
    return placement


def _deploy(placement: ModelPlacement, *, keda: bool = False, storage_uri: str = "s3://models/m") -> None:
    release = k8s.core.v1.Namespace("keda") if keda else None
    ModelDeployment(
        "model",
        ModelDeploymentArgs(
            cluster=cluster_handle("dev-use1"),
            placement=placement,
            storage_uri=storage_uri,
            depends_on=[],
            llm_inference_service=[k8s.core.v1.Namespace("llmisvc")],
            keda=KedaScaling(release=release, prometheus_url="http://prometheus:9090") if release else None,
        ),
    )


def test_a_keda_autoscaled_model_needs_keda_and_its_prometheus():
    placement = _placement("dev", "llama-3-1-8b")  # autoscaler: keda in the fixture
    (scaled,) = evaluate_program(lambda: _deploy(placement, keda=True)).of_type(SCALED_OBJECT)
    trigger = scaled.inputs["spec"]["triggers"][0]
    assert trigger["metadata"]["serverAddress"] == "http://prometheus:9090"

    error = _refused(lambda: _deploy(placement))
    assert error.property_path == "keda" and "llama-3-1-8b" in error.reason


def test_a_disaggregated_model_reads_the_cache():
    placement = _placement("prod", "llama-3-1-70b-rag")  # prefill/decode in the prod fixture
    plan = evaluate_program(lambda: _deploy(placement, storage_uri="pvc://model-cache/llama"))
    (service,) = plan.of_type("kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService")
    assert service.inputs["spec"]["model"]["uri"] == "pvc://model-cache/llama"

    assert _refused(lambda: _deploy(placement)).property_path == "storage_uri"


def _agent(sync) -> KarmadaAgent:
    return KarmadaAgent("member", KarmadaAgentArgs(member=cluster_handle("prod-usw2"), sync=sync, production=False))


def _pull(server: str) -> PullAgent:
    return PullAgent(
        karmada_server=server, ca_cert="ca", agent_cert=KeyPair(cert_pem="cert", key_pem=pulumi.Output.secret("key"))
    )


def test_a_pull_agent_dials_karmada_over_tls():
    plan = evaluate_program(lambda: _agent(_pull("https://karmada.example.com:5443")))
    (release,) = plan.helm_releases()
    assert release.inputs["values"]["agent"]["kubeconfig"]["server"] == "https://karmada.example.com:5443"
    assert not plan.of_type("kubernetes:core/v1:ServiceAccount")  # no push account

    error = _refused(lambda: _agent(_pull("karmada.example.com:5443")))
    assert error.property_path == "sync.karmada_server"


def test_a_push_agent_makes_the_account_karmada_dials_with():
    plan = evaluate_program(lambda: _agent(PushAgent()))
    assert not plan.helm_releases()
    (account,) = plan.of_type("kubernetes:core/v1:ServiceAccount")
    assert account.inputs["metadata"]["namespace"] == "karmada-cluster"


def _membership(sync) -> None:
    KarmadaMembership(
        "member",
        KarmadaMembershipArgs(
            karmada=cluster_handle("karmada"),
            cluster_name="prod-usw2",
            endpoint="https://10.0.0.1",
            labels={"example.com/region": "usw2"},
            sync=sync,
        ),
    )


def test_a_push_member_says_where_it_runs():
    push = PushMember(credentials={"token": "t"}, cloud="aws", region="us-west-2", zones=["us-west-2a"])
    (cluster,) = evaluate_program(lambda: _membership(push)).of_type(CLUSTER)
    spec = cluster.inputs["spec"]
    assert (spec["syncMode"], spec["provider"], spec["region"], spec["zones"]) == (
        "Push",
        "aws",
        "us-west-2",
        ["us-west-2a"],
    )

    error = _refused(lambda: _membership(PushMember(credentials={}, cloud="aws", region="us-west-2", zones=[])))
    assert error.property_path == "sync.zones"


def test_a_pull_member_is_registered_with_the_id_its_agent_checks():
    (cluster,) = evaluate_program(lambda: _membership(PullMember(cluster_id="uid-1"))).of_type(CLUSTER)
    assert (cluster.inputs["spec"]["syncMode"], cluster.inputs["spec"]["id"]) == ("Pull", "uid-1")


def _federation(models=()) -> None:
    push = PushMember(credentials={"token": "t"}, cloud="aws", region="us-west-2", zones=["us-west-2a"])
    KarmadaFederation(
        "karmada",
        KarmadaFederationArgs(
            karmada=cluster_handle("karmada"),
            members={"usw2": MemberRef(cluster_name="prod-usw2", labels={}, endpoint="https://10.0.0.1", sync=push)},
            models=models,
            failover=FailoverSpec.model_validate({}),
        ),
    )


def test_a_federation_registers_its_members_and_refuses_a_model_on_none():
    (cluster,) = evaluate_program(_federation).of_type(CLUSTER)
    assert cluster.inputs["metadata"]["name"] == "prod-usw2"

    model = load_environment(raw_environment("prod")).models[0]
    error = _refused(lambda: _federation([FederatedModelPlan(model=model, shares=(), renders={}, budget=None)]))
    assert error.property_path == "models[0].shares"
