"""The serving identity, GPU Operator, model cache, model deployment and inference gateway alone under the mocks, from
narrow inputs written by hand (no environment, or one placement of the dev fixture): one input that builds, one
that is refused with Pulumi's input error naming the argument (issue 35 §4).

The test cluster's handle is of a test region (tests/gpu_specs.py) of the inputs' cloud, which the gateway and the
cache refuse to mix; every other input a test passes differs from what that region would give (the webhook source
range, the cache's mount root), and the rendered objects follow the inputs: the component does not read the region
through the handle. The serving identity and the model deployment take no handle at all: a name, a provider and
what workloads wait for (ClusterTarget)."""

from __future__ import annotations

import dataclasses
from functools import cache
from ipaddress import IPv4Network
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from components.addons.gpu_operator import GpuOperator, GpuOperatorArgs
from components.addons.inference_gateway import InferenceGateway, InferenceGatewayArgs
from components.addons.model_cache import CacheNodes, GcsUnderStore, ModelCache, ModelCacheArgs, S3UnderStore
from components.checks.loader import load_environment
from components.config.gateway import ExternalProviderSpec, GatewaySpec, RegionGatewaySpec
from components.config.model_store import CachePlan
from components.config.region import KubeletCredentials
from components.config.serving import ServingSpec
from components.domain.cache_reads import CacheReads
from components.serving.deployment import ModelPlacement, model_placements
from components.serving.identity import ServingIdentity, ServingIdentityArgs
from components.serving.model_deployment import KedaScaling, ModelDeployment, ModelDeploymentArgs
from components.serving.stand_in import StandIn
from tests.gpu_specs import pool
from tests.harness import cluster_handle, evaluate_program, raw_environment


@dataclasses.dataclass(frozen=True)
class _Cluster:
    """A cluster as a caller that did not build it holds it: no region, no ClusterHandle."""

    name: str
    provider: k8s.Provider
    ready: tuple[pulumi.Resource, ...] = ()


def _cluster() -> _Cluster:
    return _Cluster(name="team", provider=k8s.Provider("team"))


def _cache_dataset(plan) -> dict[str, Any]:
    """The Dataset in the cache's namespace (the serving namespace's has the same name)."""
    datasets = [r.inputs for r in plan.kubernetes_objects() if r.inputs.get("kind") == "Dataset"]
    (cache,) = [d for d in datasets if d["metadata"]["namespace"] == "model-cache"]
    return cache


def _refused(program) -> pulumi.InputPropertyError:
    with pytest.raises(pulumi.InputPropertyError) as info:
        evaluate_program(program)
    return info.value


def _objects(plan, kind: str) -> dict[str, dict[str, Any]]:
    return {r.inputs["metadata"]["name"]: r.inputs for r in plan.kubernetes_objects() if r.inputs.get("kind") == kind}


def _serving_identity(cloud: str, prometheus: str | None = "metrics") -> None:
    ServingIdentity(
        "serving",
        ServingIdentityArgs(
            cluster=_cluster(),
            cloud=cloud,  # type: ignore[arg-type]
            cloud_identity="reader@team.iam.gserviceaccount.com",
            prometheus_namespace=prometheus,
        ),
    )


def test_serving_identity_binds_the_clouds_identity_and_admits_the_prometheus_it_is_given():
    plan = evaluate_program(lambda: _serving_identity("gcp"))
    (account,) = _objects(plan, "ServiceAccount").values()
    assert account["metadata"]["annotations"] == {
        "iam.gke.io/gcp-service-account": "reader@team.iam.gserviceaccount.com"
    }
    policies = _objects(plan, "NetworkPolicy")
    peers = policies["allow-prometheus"]["spec"]["ingress"][0]["from"]
    assert peers[0]["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "metrics"}
    assert set(_objects(evaluate_program(lambda: _serving_identity("aws", None)), "NetworkPolicy")) == {
        "default-deny-ingress"
    }

    error = _refused(lambda: _serving_identity("azure"))
    assert error.property_path == "cloud" and "'azure'" in error.reason and "aws, gcp" in error.reason


def _gpu_operator(*pools) -> None:
    GpuOperator("gpu-operator", GpuOperatorArgs(cluster=cluster_handle("team"), pools=list(pools)))


MIG_CUSTOM = pool("a100", "p4de.24xlarge", mig={"strategy": "mixed", "layout": {"3g.40gb": 2}})


def test_gpu_operator_configures_the_pools_it_is_given():
    plan = evaluate_program(lambda: _gpu_operator(MIG_CUSTOM, pool("l40s", "g6e.xlarge", timeSlicing={"replicas": 4})))
    (release,) = plan.helm_releases()
    values = release.inputs["values"]
    assert values["mig"] == {"strategy": "mixed"}
    assert values["migManager"]["config"] == {"name": "mig-parted-config"}
    assert values["devicePlugin"]["config"]["name"] == "device-plugin-config"
    assert set(_objects(plan, "ConfigMap")) == {"mig-parted-config", "device-plugin-config"}


def test_gpu_operator_refuses_a_pool_it_does_not_run_and_disagreeing_mig_strategies():
    gke_managed = pool("l4", "g2-standard-8", timeSlicing={"replicas": 4})
    error = _refused(lambda: _gpu_operator(MIG_CUSTOM, gke_managed))
    assert error.property_path == "pools[1]" and "l4" in error.reason

    single = pool("h100", "p5.48xlarge", mig={"strategy": "single", "profile": "all-1g.10gb"})
    error = _refused(lambda: _gpu_operator(MIG_CUSTOM, single))
    assert error.property_path == "pools" and "mixed, single" in error.reason
    assert _refused(lambda: _gpu_operator()).property_path == "pools"


CACHE_PLAN = CachePlan(memory_gib=64, ssd_gib=0, replicas=2, pools=("l40s",), fuse_memory_gib=8)
READS = CacheReads(streams_per_node=4, busiest_pool="l40s", chunk_mib=4, worker_bound=False)


def _model_cache(store, nodes: CacheNodes, plan: CachePlan = CACHE_PLAN, *, on: str | None = None) -> None:
    ModelCache(
        "cache",
        ModelCacheArgs(
            cluster=cluster_handle("team", cloud=on or store.cloud),
            plan=plan,
            store=store,
            nodes=nodes,
            cloud_identity="cache@team.iam.gserviceaccount.com",
            serving_namespace=k8s.core.v1.Namespace("inference"),
            label_domain="example.com",
            reads=READS,
        ),
    )


# Not the test GCP region's own (CacheNodes.of(region): /var/lib/docker/runtime-mnt): the cache mounts what it is told.
GKE_NODES = CacheNodes(
    mount_root="/mnt/team/runtime-mnt",
    kubelet_credentials=KubeletCredentials(kubeconfig="/var/lib/kubelet/kubeconfig", cert_dir="/var/lib/kubelet/pki"),
)


def test_model_cache_mounts_the_bucket_of_its_kind_on_the_nodes_it_is_told_of():
    plan = evaluate_program(lambda: _model_cache(GcsUnderStore(bucket="team-models"), GKE_NODES))
    (mount,) = _cache_dataset(plan)["spec"]["mounts"]
    assert mount["mountPoint"] == "gs://team-models/models/"
    assert mount["options"] == {"alluxio.underfs.gcs.version": "2"}
    (fluid,) = plan.helm_releases()
    assert fluid.inputs["values"]["runtime"]["mountRoot"] == "/mnt/team/runtime-mnt"
    assert fluid.inputs["values"]["csi"]["useNodeAuthorization"] is True
    (account,) = [r.inputs for r in plan.resources if r.type == "kubernetes:core/v1:ServiceAccountPatch"]
    assert account["metadata"]["annotations"]["iam.gke.io/gcp-service-account"] == "cache@team.iam.gserviceaccount.com"

    s3 = evaluate_program(
        lambda: _model_cache(S3UnderStore(bucket="team-models", aws_region="eu-west-1"), CacheNodes())
    )
    assert _cache_dataset(s3)["spec"]["mounts"][0]["options"]["alluxio.underfs.s3.region"] == "eu-west-1"


def test_model_cache_refuses_a_relative_mount_root_an_s3_bucket_without_region_and_no_worker_pool():
    relative = CacheNodes(mount_root="runtime-mnt")
    error = _refused(lambda: _model_cache(GcsUnderStore(bucket="team-models"), relative))
    assert error.property_path == "nodes.mount_root" and "'runtime-mnt'" in error.reason
    no_region = S3UnderStore(bucket="team-models", aws_region="")
    assert _refused(lambda: _model_cache(no_region, CacheNodes())).property_path == "store.aws_region"
    no_pools = dataclasses.replace(CACHE_PLAN, pools=())
    assert _refused(lambda: _model_cache(no_region, CacheNodes(), no_pools)).property_path == "store.aws_region"
    gcs = GcsUnderStore(bucket="team-models")
    assert _refused(lambda: _model_cache(gcs, CacheNodes(), no_pools)).property_path == "plan.pools"
    error = _refused(lambda: _model_cache(gcs, GKE_NODES, on="aws"))  # a GCS bucket on an EKS cluster
    assert error.property_path == "store" and "gs://" in error.reason and "aws" in error.reason


@cache
def _dev_placement(name: str) -> ModelPlacement:
    spec = load_environment(raw_environment("dev"))
    (placement,) = [p for p in model_placements(spec, spec.region("use1")) if p.name == name]
    return placement


def _deploy(placement: ModelPlacement, *, keda: bool) -> None:
    ModelDeployment(
        "model",
        ModelDeploymentArgs(
            cluster=_cluster(),
            placement=placement,
            storage_uri="gs://team-models/models/llama",
            depends_on=[],
            keda=KedaScaling(release=k8s.core.v1.Namespace("keda"), prometheus_url="http://p:9090") if keda else None,
        ),
    )


def test_a_placement_renders_from_its_own_serving_mode_bucket_client_and_prometheus():
    knative = dataclasses.replace(
        _dev_placement("llama-3-1-8b"),
        serving=ServingSpec.model_validate({"deploymentMode": "Knative"}),
        bucket_client_env={"BUCKET_CLIENT": "team"},
    )
    plan = evaluate_program(lambda: _deploy(knative, keda=False))
    (isvc,) = _objects(plan, "InferenceService").values()
    assert isvc["metadata"]["annotations"]["serving.kserve.io/deploymentMode"] == "Knative"
    assert {"name": "BUCKET_CLIENT", "value": "team"} in isvc["spec"]["predictor"]["model"]["env"]
    (server,) = _objects(plan, "NetworkPolicy").values()
    callers = [peer for rule in server["spec"]["ingress"] for peer in rule["from"]]
    assert {"kubernetes.io/metadata.name": "knative-serving"} in [
        peer.get("namespaceSelector", {}).get("matchLabels") for peer in callers
    ]

    error = _refused(lambda: _deploy(knative, keda=True))
    assert error.property_path == "keda" and "knative" in error.reason


GATEWAY = GatewaySpec.model_validate({})
OPENAI = {"name": "openai", "type": "openai", "models": ["gpt-4o"], "hostname": "api.openai.com"}


def _gateway_args(**fields: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "cluster": cluster_handle("team", cloud="gcp"),
        "cloud": "gcp",
        "hostname": "llm.team.example.com",
        "gateway": GATEWAY,
        "region_gateway": RegionGatewaySpec.model_validate({"exposure": "internal"}),
        "production": False,
        "placements": [],
        "routes": {},
        "routed_models": [],
        "webhook_source_cidr": IPv4Network("172.31.240.0/28"),  # not the test region's controlPlaneCidr
        "prometheus_namespace": None,
        "serving_namespace": k8s.core.v1.Namespace("inference"),
        "inference_pool_crds": k8s.core.v1.Namespace("pool-crds"),
        "stand_ins": [],
        "tenants": [],
        "objectives": {},
        "external_providers": [ExternalProviderSpec.model_validate({**OPENAI, "apiKey": "sk-test"})],
        "api_keys": {},
        "cert_manager": [],  # the team's cluster runs cert-manager already
    }
    return args | fields


def _gateway(**fields: Any) -> None:
    InferenceGateway("team", InferenceGatewayArgs(**_gateway_args(**fields)))


def test_inference_gateway_fits_a_cluster_from_its_own_inputs():
    plan = evaluate_program(_gateway)
    (proxy,) = _objects(plan, "EnvoyProxy").values()
    service = proxy["spec"]["provider"]["kubernetes"]["envoyService"]
    assert service["annotations"] == {"networking.gke.io/load-balancer-type": "Internal"}
    (gateway,) = _objects(plan, "Gateway").values()
    assert [listener["hostname"] for listener in gateway["spec"]["listeners"]] == ["llm.team.example.com"]
    webhook = _objects(plan, "NetworkPolicy")["allow-webhook"]
    assert webhook["spec"]["ingress"][0]["from"] == [{"ipBlock": {"cidr": "172.31.240.0/28"}}]
    assert "openai" in _objects(plan, "AIServiceBackend")
    (redis_volume,) = _objects(plan, "PersistentVolumeClaim").values()
    assert redis_volume["spec"]["storageClassName"] == "standard-rwo"  # GKE's


def test_inference_gateway_refuses_inputs_naming_the_argument():
    error = _refused(lambda: _gateway(webhook_source_cidr=None))
    assert error.property_path == "webhook_source_cidr"
    error = _refused(lambda: _gateway(stand_ins=[StandIn("llama", "mistral")]))
    assert error.property_path == "stand_ins[0].model" and "'llama'" in error.reason
    keyless = [ExternalProviderSpec.model_validate(OPENAI)]
    error = _refused(lambda: _gateway(external_providers=keyless))
    assert error.property_path == "external_providers[0].api_key" and "openai" in error.reason
    assert _refused(lambda: _gateway(hostname="")).property_path == "hostname"
    error = _refused(lambda: _gateway(cloud="aws"))  # the cluster is on GCP
    assert error.property_path == "cloud" and "'gcp'" in error.reason
    for forgotten in ("tenants", "stand_ins", "objectives", "external_providers", "api_keys"):
        given = {key: value for key, value in _gateway_args().items() if key != forgotten}
        with pytest.raises(TypeError, match=forgotten):  # none defaults to nothing: an empty one is said
            InferenceGatewayArgs(**given)
