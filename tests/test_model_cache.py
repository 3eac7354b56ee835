"""The Alluxio cache via Fluid: what the Dataset, AlluxioRuntime and DataLoads say, and where models are read."""

from __future__ import annotations

import pytest

from components.addons.model_cache import (
    model_storage_uri,
    prewarmed_models,
)
from components.checks.loader import load_environment
from components.domain.cache_plan import cache_plan
from components.serving.engine import VLLM_LOAD_ARGS
from tests.harness import environment_config, ns, plan_config, raw_environment

CR = "kubernetes:data.fluid.io/v1alpha1:"


def _cr(plan, cluster: str, namespace: str, kind: str, name: str) -> dict:
    found = [
        r.inputs
        for r in plan.of_type(CR + kind)
        if plan.cluster_of(r) == cluster
        and (r.inputs["metadata"]["name"], r.inputs["metadata"]["namespace"]) == (name, namespace)
    ]
    assert len(found) == 1, f"{kind} {namespace}/{name} on {cluster}: {len(found)}"
    return found[0]


# --- Dataset --------------------------------------------------------------------------------------


def test_dataset_mounts_the_regions_bucket_read_only_without_keys(prod_plan):
    spec = _cr(prod_plan, "prod-use1", "model-cache", "Dataset", "models")["spec"]
    (mount,) = spec["mounts"]
    assert mount["mountPoint"] == "s3://acme-inference-prod-use1-models/models/"
    assert mount["path"] == "/models"
    assert mount["readOnly"] is True
    assert mount["options"] == {
        "alluxio.underfs.s3.region": "us-east-1",
        "alluxio.underfs.s3.secure.http.enabled": "true",
        # ACL inheritance asks for ListAllMyBuckets and GetBucketAcl, which the read-only role lacks
        "alluxio.underfs.s3.inherit.acl": "false",
    }
    # Credentials come from the pod's web identity: no access keys anywhere.
    assert "encryptOptions" not in mount and "sharedEncryptOptions" not in spec
    assert spec["accessModes"] == ["ReadOnlyMany"]


def test_gcs_dataset_uses_application_default_credentials(prod_plan):
    (mount,) = _cr(prod_plan, "prod-usc1", "model-cache", "Dataset", "models")["spec"]["mounts"]
    assert mount["mountPoint"] == "gs://acme-inference-prod-usc1-models/models/"
    assert mount["options"] == {"alluxio.underfs.gcs.version": "2"}
    assert "encryptOptions" not in mount


def test_cache_workers_run_on_the_always_on_gpu_pools_and_tolerate_their_taint(prod_plan):
    spec = _cr(prod_plan, "prod-use1", "model-cache", "Dataset", "models")["spec"]
    (term,) = spec["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert term["matchExpressions"] == [
        {"key": "inference-platform.io/pool", "operator": "In", "values": ["h100", "l40s"]}
    ]
    assert spec["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    ]


def test_no_worker_lands_on_a_pool_scaled_from_zero(dev_plan, prod_plan):
    """An evictable worker still needs another node to move to: alone on a p4de (dev's a100-mig, scaled up for qwen)
    it would keep the node; so workers run on the always-on pools, else on the pools of the fewest GPUs per node."""
    for plan, cluster, pools in (
        (dev_plan, "dev-use1", ["l40s"]),  # l40s and a100-mig both scale from 0; g6e.4xlarge has 1 GPU, p4de 8
        (prod_plan, "prod-usc1", ["h200", "l4"]),  # a100-mig starts empty (minSize 0)
    ):
        spec = _cr(plan, cluster, "model-cache", "Dataset", "models")["spec"]
        (term,) = spec["nodeAffinity"]["required"]["nodeSelectorTerms"]
        assert term["matchExpressions"][0]["values"] == pools, cluster


def test_serving_namespace_gets_a_reference_dataset_for_pvc_uris(prod_plan):
    spec = _cr(prod_plan, "prod-use1", "inference", "Dataset", "models")["spec"]
    assert spec == {"mounts": [{"name": "models", "mountPoint": "dataset://model-cache/models", "path": "/"}]}


# --- AlluxioRuntime -------------------------------------------------------------------------------


def test_runtime_tiers_memory_then_local_nvme_with_quotas_from_config(prod_plan):
    spec = _cr(prod_plan, "prod-use1", "model-cache", "AlluxioRuntime", "models")["spec"]
    # Defaults from the smallest GPU node of use1 (g6e.4xlarge: 128 GiB memory / 8, 600 GiB NVMe x 60%).
    assert spec["replicas"] == 2  # h100 minSize 1 + l40s minSize 1
    mem, ssd = spec["tieredstore"]["levels"]
    assert (mem["mediumtype"], mem["path"], mem["quota"], mem["volumeType"]) == ("MEM", "/dev/shm", "16Gi", "emptyDir")
    assert (ssd["mediumtype"], ssd["quota"], ssd["volumeType"]) == ("SSD", "360Gi", "emptyDir")
    assert {mem["high"], mem["low"]} == {"0.95", "0.7"}
    worker = spec["worker"]["resources"]
    # the 16Gi memory tier and the worker's 4 GiB JVM heap
    assert worker["requests"]["memory"] == worker["limits"]["memory"] == "20Gi"
    assert spec["master"]["nodeSelector"] == {"inference-platform.io/pool": "system"}
    # Safetensors shards are read whole and once per engine process: 256MB blocks, the local worker first (its copy
    # in node memory), a read timeout long enough for a cold shard from the object store, and read chunks that hold
    # an h100 node's 128 streams (16 per engine process x its 8 GPUs: 24 processes are placed on the pool) in 2048
    # MiB of FUSE direct memory at 4 chunks each (4 MiB) and in half the worker's 2048 MiB at one chunk each; the
    # worker sends chunks that size (its max, 2MB by default), and a job worker runs 4 block loads at once.
    assert spec["properties"] == {
        "alluxio.user.ufs.block.read.location.policy": "alluxio.client.block.policy.LocalFirstAvoidEvictionPolicy",
        "alluxio.user.block.size.bytes.default": "256MB",
        "alluxio.user.streaming.reader.chunk.size.bytes": "4MB",
        "alluxio.user.streaming.reader.buffer.size.messages": "4",
        "alluxio.worker.network.reader.max.chunk.size.bytes": "4MB",
        "alluxio.worker.network.reader.buffer.size": "4MB",
        "alluxio.job.worker.threadpool.size": "4",
        "alluxio.user.streaming.data.timeout": "300sec",
    }


def test_configured_quotas_and_replicas_win_over_defaults():
    raw = raw_environment("prod")
    raw["regions"][0]["modelCache"] = {"enabled": True, "memory": "12Gi", "ssd": "0Gi", "replicas": 4}
    plan = cache_plan(load_environment(raw).regions[0])
    assert (plan.memory_gib, plan.ssd_gib, plan.replicas, plan.capacity_gib) == (12, 0, 4, 48)


def test_default_quotas_fit_the_smallest_gpu_node(prod_plan, dev_plan):
    assert cache_plan(dev_plan.spec.region("use1")) == cache_plan(dev_plan.spec.region("use1")).__class__(
        memory_gib=16, ssd_gib=360, replicas=1, pools=("l40s",), fuse_memory_gib=2
    )  # sized by the smallest GPU node: g6e.4xlarge, 128 GiB RAM / 8, 600 GB NVMe x 60%; dev sets fuseMemory 2Gi.
    # Workers: no dev pool is always on, so the one with the fewest GPUs per node (l40s: 1, a100-mig's p4de: 8).
    # usc1: memory from g2-standard-24 (96 GiB / 8); NVMe from a2-ultragpu-1g (1 x 375 GiB x 60% = 225,
    # rounded down to 220); one worker per pool minimum node (h200 1 + l4 1 + a100-mig 0).
    usc1 = cache_plan(prod_plan.spec.region("usc1"))
    assert (usc1.memory_gib, usc1.ssd_gib, usc1.replicas) == (12, 220, 2)


def _gib(quantity: str) -> float:
    units = {"Gi": 1, "Mi": 1 / 1024, "m": 1 / 1024}
    for unit, factor in units.items():
        if quantity.endswith(unit):
            return float(quantity[: -len(unit)]) * factor
    raise ValueError(quantity)


def _jvm_gib(options: list[str]) -> float:
    """Heap + direct memory a JVM may take, from its -Xmx and -XX:MaxDirectMemorySize options."""
    sizes = {o.split("=")[0] if "=" in o else o[:4]: o.split("=")[-1] if "=" in o else o[4:] for o in options}
    return _gib(sizes["-Xmx"]) + _gib(sizes["-XX:MaxDirectMemorySize"])


def test_every_cache_jvm_is_bounded_and_counted_on_its_node(env_plan):
    """Fluid's defaults without jvmOptions are 16 GiB heaps and 32 GiB of direct memory, without resources: every
    component states both, within its container's limit, and the GPU nodes' model servers leave room for the
    worker and the FUSE daemon that run beside them."""
    from components.serving.deployment import model_placements
    from platform_catalog.machines import MACHINES

    runtimes = {env_plan.cluster_of(r): r.inputs for r in env_plan.of_type(CR + "AlluxioRuntime")}
    assert runtimes
    for cluster, runtime in runtimes.items():
        dataset = _cr(env_plan, cluster, "model-cache", "Dataset", "models")["spec"]
        worker_pools = set(dataset["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"])
        for component in ("master", "worker", "fuse"):
            spec = runtime["spec"][component]
            limit = _gib(spec["resources"]["limits"]["memory"])
            assert _jvm_gib(spec["jvmOptions"]) < limit, (cluster, component)
            assert spec["resources"]["requests"]["memory"] == spec["resources"]["limits"]["memory"]
        region = env_plan.spec.region(cluster.removeprefix(f"{env_plan.environment}-"))
        for p in model_placements(env_plan.spec, region):
            # the FUSE daemon on every GPU node, the worker where workers run
            beside = sum(
                _gib(runtime["spec"][c]["resources"]["limits"]["memory"])
                for c in ("worker", "fuse")
                if c == "fuse" or p.pool.name in worker_pools
            )
            node = MACHINES[p.pool.machine_type].memory_gib
            servers = p.host.memory_gib * p.host.slots_per_node / p.fit.sizing.tensor_parallel  # pods per node
            assert servers + beside <= node * 0.9, (cluster, p.name)  # kubelet reserve and eviction threshold


# --- DataLoad -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cluster", "models"),
    [
        # llama-3-1-70b-rag reads llama-3-1-70b's weights (storagePath): one load of that prefix
        ("prod-use1", {"llama-3-1-70b", "llama-3-1-8b"}),
        ("prod-usc1", {"llama-3-1-70b", "mistral-7b-trt"}),
    ],
)
def test_one_dataload_per_weights_prefix_placed_in_the_region(prod_plan, cluster, models):
    loads = [r.inputs for r in prod_plan.of_type(CR + "DataLoad") if prod_plan.cluster_of(r) == cluster]
    assert {load["metadata"]["name"] for load in loads} == {f"prewarm-{m}" for m in models}
    for load in loads:
        model = load["metadata"]["name"].removeprefix("prewarm-")
        assert load["metadata"]["namespace"] == "model-cache"
        assert load["spec"]["dataset"] == {"name": "models", "namespace": "model-cache"}
        assert load["spec"]["target"] == [{"path": f"/models/{model}", "replicas": 1}]
        assert load["spec"]["loadMetadata"] is True


def test_prewarm_off_loads_nothing_ahead_of_use():
    raw = raw_environment("prod")
    raw["regions"][0]["modelCache"] = {"enabled": True, "prewarm": False}
    env = load_environment(raw)
    assert prewarmed_models(env, env.regions[0]) == []
    assert [m.name for m in prewarmed_models(env, env.regions[1])] == ["llama-3-1-70b", "llama-3-1-8b"]


def test_fluid_resources_wait_for_the_chart_that_installs_their_crds(prod_plan):
    release = prod_plan.named("prod-use1-fluid", "kubernetes:helm.sh/v3:Release")
    fluid = prod_plan.of_type(CR + "Dataset") + prod_plan.of_type(CR + "AlluxioRuntime")
    in_use1 = [r for r in fluid if prod_plan.cluster_of(r) == "prod-use1"]
    # the cache's Dataset and AlluxioRuntime, and the Dataset the serving namespace mounts
    assert len(in_use1) == 3, [r.name for r in in_use1]
    for r in in_use1:
        assert release.urn in r.options["dependsOn"], r.name


# --- identity and namespaces ----------------------------------------------------------------------


def test_cache_runs_as_the_annotated_default_account_of_its_own_namespace(prod_plan):
    patch = prod_plan.named("prod-use1-model-cache-default", "kubernetes:core/v1:ServiceAccountPatch").inputs
    assert patch["metadata"]["namespace"] == "model-cache"
    assert patch["metadata"]["name"] == "default"
    assert patch["metadata"]["annotations"]["eks.amazonaws.com/role-arn"].startswith(
        "arn:aws:iam::123456789012:role/use1-model-cache-"
    )
    gke = prod_plan.named("prod-usc1-model-cache-default", "kubernetes:core/v1:ServiceAccountPatch").inputs
    identity = {k: v for k, v in gke["metadata"]["annotations"].items() if not k.startswith("checkov.io/")}
    assert identity == {
        "iam.gke.io/gcp-service-account": "prod-usc1-model-cache@acme-inference-prod.iam.gserviceaccount.com"
    }


def test_only_the_cache_namespace_is_privileged(prod_plan):
    labels = {
        r.inputs["metadata"]["name"]: r.inputs["metadata"]["labels"]
        for r in prod_plan.of_type("kubernetes:core/v1:Namespace")
        if prod_plan.cluster_of(r) == "prod-use1"
    }
    assert labels["model-cache"]["pod-security.kubernetes.io/enforce"] == "privileged"
    assert labels["inference"]["pod-security.kubernetes.io/enforce"] == "baseline"
    # Fluid 1.0.8's webhook selects pods by label; a namespace label does nothing (FLUID_INJECTION_IS_PER_POD).
    assert not any(key.startswith("fluid.io/") for ns_labels in labels.values() for key in ns_labels)


# GKE's kubelet authenticates with node authorization from its own kubeconfig and certificates; EKS's nodes need none.
GKE_CSI = {
    "useNodeAuthorization": True,
    "kubelet": {"kubeConfigFile": "/var/lib/kubelet/kubeconfig", "certDir": "/var/lib/kubelet/pki"},
}


@pytest.mark.parametrize(
    ("cluster", "csi"), [("prod-use1", {"useNodeAuthorization": False}), ("prod-usc1", GKE_CSI)], ids=["aws", "gcp"]
)
def test_fluid_chart_enables_alluxio_and_thin_runtimes_and_fits_the_kubelet(prod_plan, cluster, csi):
    values = prod_plan.named(f"{cluster}-fluid", "kubernetes:helm.sh/v3:Release").inputs["values"]
    runtime = {"alluxio": {"enabled": True}, "thin": {"enabled": True}}
    if cluster == "prod-usc1":  # COS mounts / read-only: Fluid's mount root moves under /var/lib/docker
        runtime["mountRoot"] = "/var/lib/docker/runtime-mnt"
    assert values["runtime"] == runtime
    assert values["csi"] == csi


# --- where model servers read ---------------------------------------------------------------------


def test_model_storage_uri_is_the_cache_pvc_when_on_else_the_bucket(dev_plan, prod_plan):
    dev = dev_plan.spec
    model = dev.models[0]
    assert model_storage_uri(dev, dev.region("use1"), "dev", model) == "pvc://models/models/llama-3-1-8b"
    off = dev.region("use1").model_copy(
        update={"model_cache": dev.region("use1").model_cache.model_copy(update={"enabled": False})}
    )
    assert model_storage_uri(dev, off, "dev", model) == "s3://acme-inference-dev-use1-models/models/llama-3-1-8b/"
    prod = prod_plan.spec
    usc1 = prod.region("usc1")
    gcs_off = usc1.model_copy(update={"model_cache": usc1.model_cache.model_copy(update={"enabled": False})})
    assert model_storage_uri(prod, gcs_off, "prod", prod.models[2]) == (
        "gs://acme-inference-prod-usc1-models/models/mistral-7b-trt/"
    )
    assert VLLM_LOAD_ARGS == ("--load-format", "runai_streamer")


@pytest.mark.plan
def test_cache_off_keeps_buckets_and_serving_identity_but_no_fluid():
    config = environment_config("dev")
    config[ns("regions")][0]["modelCache"] = {"enabled": False}
    plan = plan_config(config, stack="dev")
    assert not [r for r in plan.resources if r.type.startswith(CR) or r.type.endswith(":ModelCache")]
    assert not [r for r in plan.helm_releases() if r.inputs["chart"] == "fluid"]
    assert [r.name for r in plan.of_type("aws:iam/role:Role") if "model" in r.name] == ["use1-model-server"]
    namespace = next(
        r.inputs for r in plan.of_type("kubernetes:core/v1:Namespace") if r.inputs["metadata"]["name"] == "inference"
    )
    assert set(namespace["metadata"]["labels"]) == {
        "pod-security.kubernetes.io/enforce",
        "pod-security.kubernetes.io/warn",
    }


def test_fluid_resources_validate_against_the_upstream_crds(prod_plan, upstream):
    fluid = [r for r in prod_plan.kubernetes_objects() if r.inputs["apiVersion"] == "data.fluid.io/v1alpha1"]
    assert {r.inputs["kind"] for r in fluid} == {"Dataset", "AlluxioRuntime", "DataLoad"}
    for r in fluid:
        assert upstream.validate_custom_resource(r.inputs) == [], r.urn
    # The layout of Fluid's s3_configuration.md sample (encryptOptions inside options) is rejected.
    bad = {
        "apiVersion": "data.fluid.io/v1alpha1",
        "kind": "Dataset",
        "metadata": {},
        "spec": {
            "mounts": [{"mountPoint": "s3://b/models/", "options": {"encryptOptions": [{"name": "aws.secretKey"}]}}]
        },
    }
    assert upstream.validate_custom_resource(bad)
