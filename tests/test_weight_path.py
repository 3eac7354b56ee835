"""Every model's weights, on every cloud, walked from the bucket to the pod that loads them.

bucket -> identity -> cache runtime -> mount on the node -> pod, each step against the upstream facts it relies on
(components/catalog/upstream.py):
- bucket: the region's bucket holds `models/<model>/`; reads need TLS (S3) and the bucket's key;
- identity: the cache reads as `model-cache/default` (Fluid 1.0.8 sets no service account), bound to an IAM role
  (IRSA: Alluxio's SDK chain takes the web identity, ALLUXIO_S3_READS_WITH_WEB_IDENTITY) or a Google service account
  (Workload Identity, which needs the pod network: FLUID_RUNTIME_ON_HOST_NETWORK) that may read exactly that prefix;
- cache runtime: the Dataset mounts the bucket's models/, its workers may run on the placement's pool, and the FUSE
  pods Fluid creates are admitted (FLUID_CONTROLLER_CREATES_CRITICAL_FUSE_PODS);
- mount on the node: Fluid's mount root is writable on the node image (FLUID_MOUNT_ROOT_ON_THE_NODE);
- pod: the model's server, as its cluster runs it (a federated model's member copy), reads `pvc://models/models/<model>`
  on the placement's pool, through the serving namespace's Dataset that refers to the cache.
"""

from __future__ import annotations

import json

import pytest

from policies.model import Stack
from policies.offline import plan_resources

CR = "kubernetes:data.fluid.io/v1alpha1:"
SA_PATCH = "kubernetes:core/v1:ServiceAccountPatch"
CACHE_SUBJECT = "system:serviceaccount:model-cache:default"
PROJECT = "acme-inference-prod"

# The pools cache workers run on per cluster: the always-on ones, else those of the fewest GPUs per node (dev).
WORKER_POOLS = {
    "dev-use1": ["l40s"],
    "prod-use1": ["h100", "l40s"],
    "prod-usw2": ["h100", "l40s"],
    "prod-usc1": ["h200", "l4"],
}
# (model, region, cloud, pools its pods run on): every placement of Pulumi.dev.yaml and Pulumi.prod.yaml, by hand.
WALKS = {
    "dev": [
        ("llama-3-1-8b", "use1", "aws", {"l40s"}),
        ("qwen2-5-7b", "use1", "aws", {"a100-mig"}),
    ],
    "prod": [
        ("llama-3-1-70b", "use1", "aws", {"h100"}),
        ("llama-3-1-70b", "usw2", "aws", {"h100"}),
        ("llama-3-1-70b", "usc1", "gcp", {"h200"}),
        ("llama-3-1-8b", "use1", "aws", {"l40s"}),
        ("llama-3-1-8b", "usw2", "aws", {"l40s"}),
        ("mistral-7b-trt", "usc1", "gcp", {"l4"}),
        ("llama-3-1-70b-rag", "use1", "aws", {"h100"}),  # decode and prefill pods, both on h100
    ],
}

# Models that read another's weights (their storagePath in Pulumi.prod.yaml): the P/D 70B reads the 70B's.
SHARED_WEIGHTS = {"llama-3-1-70b-rag": "llama-3-1-70b"}


def _walks(plan) -> list[tuple[str, str, str, set[str]]]:
    found = []
    for model in plan.spec.models:
        for placement in model.placements:
            region = plan.spec.region(placement.region)
            pools = {placement.pool} | ({placement.prefill.pool} if placement.prefill else set())
            found.append((model.name, region.name, region.cloud, pools))
    return found


def _one(plan, type_: str, name: str):
    (found,) = [r for r in plan.of_type(type_) if r.name == name]
    return found


def _cr(plan, cluster: str, namespace: str, kind: str, name: str) -> dict:
    (found,) = [
        r
        for r in plan.of_type(CR + kind)
        if plan.cluster_of(r) == cluster
        and (r.inputs["metadata"]["name"], r.inputs["metadata"]["namespace"]) == (name, namespace)
    ]
    return found


def _bucket(plan, env: str, region: str, cloud: str, model: str) -> str:
    """The bucket that holds the model, and (S3) what reading it requires."""
    bucket = f"acme-inference-{env}-{region}-models"
    if cloud == "aws":
        assert _one(plan, "aws:s3/bucket:Bucket", f"{region}-models").inputs["bucket"] == bucket
        policy = json.loads(_one(plan, "aws:s3/bucketPolicy:BucketPolicy", f"{region}-models").inputs["policy"])
        # the only denial is of plain HTTP: the mount asks for TLS (secure.http.enabled, below)
        assert [s["Condition"] for s in policy["Statement"] if s["Effect"] == "Deny"] == [
            {"Bool": {"aws:SecureTransport": "false"}}
        ]
    else:
        assert _one(plan, "gcp:storage/bucket:Bucket", f"{region}-models").inputs["name"] == bucket
    return bucket


def _identity(plan, env: str, region: str, cloud: str, bucket: str, model: str) -> None:
    """The cache's service account, the cloud identity it is bound to, and that identity's right to the prefix."""
    cluster = f"{env}-{region}"
    patch = _one(plan, SA_PATCH, f"{cluster}-model-cache-default")
    assert patch.inputs["metadata"]["namespace"] == "model-cache" and patch.inputs["metadata"]["name"] == "default"
    annotations = patch.inputs["metadata"]["annotations"]
    if cloud == "aws":
        role = _one(plan, "aws:iam/role:Role", f"{region}-model-cache")
        assert role.urn in patch.property_dependencies["metadata"]  # the annotation is this role's ARN
        assert annotations["eks.amazonaws.com/role-arn"].startswith(f"arn:aws:iam::123456789012:role/{region}-model-")
        (trust,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
        assert trust["Action"] == "sts:AssumeRoleWithWebIdentity"
        conditions = trust["Condition"]["StringEquals"]
        assert sorted(conditions.values()) == sorted([CACHE_SUBJECT, "sts.amazonaws.com"])
        oidc = _one(plan, "aws:iam/openIdConnectProvider:OpenIdConnectProvider", f"{region}-oidc")
        assert oidc.urn in role.property_dependencies["assumeRolePolicy"]
        inline = _one(plan, "aws:iam/rolePolicy:RolePolicy", f"{region}-model-cache-inline")
        statements = {s["Sid"]: s for s in json.loads(inline.inputs["policy"])["Statement"]}
        assert statements["ReadPrefix"]["Action"] == "s3:GetObject"
        assert statements["ReadPrefix"]["Resource"] == f"arn:aws:s3:::{bucket}/models/*"  # covers models/<model>/
        assert statements["ListPrefix"]["Condition"] == {"StringLike": {"s3:prefix": ["models", "models/*"]}}
        # the objects are SSE-KMS with the bucket's key: the role may decrypt with it, through S3 only
        key = _one(plan, "aws:kms/key:Key", f"{region}-models")
        assert key.urn in inline.property_dependencies["policy"]
        assert statements["DecryptViaS3"]["Condition"] == {
            "StringEquals": {"kms:ViaService": f"s3.{plan.spec.region(region).region}.amazonaws.com"}
        }
        sse = _one(
            plan,
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
            f"{region}-models",
        )
        assert key.urn in sse.property_dependencies["rules"]
    else:
        email = f"{cluster}-model-cache@{PROJECT}.iam.gserviceaccount.com"
        identity = {k: v for k, v in annotations.items() if not k.startswith("checkov.io/")}
        assert identity == {"iam.gke.io/gcp-service-account": email}
        account = _one(plan, "gcp:serviceaccount/account:Account", f"{region}-model-cache")
        assert account.inputs["accountId"] == f"{cluster}-model-cache"
        binding = _one(plan, "gcp:serviceaccount/iAMMember:IAMMember", f"{region}-model-cache-workload-identity")
        assert binding.inputs["role"] == "roles/iam.workloadIdentityUser"
        assert binding.inputs["member"] == f"serviceAccount:{PROJECT}.svc.id.goog[model-cache/default]"
        assert account.urn in binding.property_dependencies["serviceAccountId"]
        reader = _one(plan, "gcp:storage/bucketIAMMember:BucketIAMMember", f"{region}-model-cache-reader")
        assert (reader.inputs["bucket"], reader.inputs["role"]) == (bucket, "roles/storage.objectViewer")
        assert reader.inputs["member"] == f"serviceAccount:{email}"
        gke = [c for c in plan.of_type("gcp:container/cluster:Cluster") if c.inputs["name"] == cluster]
        assert gke[0].inputs["workloadIdentityConfig"] == {"workloadPool": f"{PROJECT}.svc.id.goog"}


def _runtime(plan, env: str, region: str, cloud: str, bucket: str) -> None:
    """The Dataset over the bucket's models/, workers on the always-on pools (the FUSE daemon beside the model's
    server reads from them), every component on the pod network, and the FUSE pods Fluid creates admitted."""
    cluster = f"{env}-{region}"
    dataset = _cr(plan, cluster, "model-cache", "Dataset", "models").inputs["spec"]
    (mount,) = dataset["mounts"]
    assert mount["mountPoint"] == f"{'s3' if cloud == 'aws' else 'gs'}://{bucket}/models/"
    assert mount["readOnly"] is True and "encryptOptions" not in mount
    if cloud == "aws":
        assert mount["options"]["alluxio.underfs.s3.secure.http.enabled"] == "true"
        assert mount["options"]["alluxio.underfs.s3.inherit.acl"] == "false"
    (term,) = dataset["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert term["matchExpressions"][0]["values"] == WORKER_POOLS[cluster]
    assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"} in dataset[
        "tolerations"
    ]
    runtime = _cr(plan, cluster, "model-cache", "AlluxioRuntime", "models")
    for component in ("master", "worker", "fuse"):
        assert runtime.inputs["spec"][component]["networkMode"] == "ContainerNetwork", component
    quotas = [
        r
        for r in plan.kubernetes_objects()
        if r.inputs["kind"] == "ResourceQuota"
        and plan.cluster_of(r) == cluster
        and r.inputs["metadata"]["namespace"] == "model-cache"
    ]
    if cloud == "gcp":  # GKE admits the system-node-critical FUSE pods only with a quota scoped to that class
        (quota,) = quotas
        (scope,) = quota.inputs["spec"]["scopeSelector"]["matchExpressions"]
        assert "system-node-critical" in scope["values"]
        assert quota.urn in runtime.options["dependsOn"]
    else:
        assert quotas == []


def _node_mount(plan, env: str, region: str, cloud: str) -> None:
    """Fluid's mount root, where the CSI plugin and the FUSE pods mount on the node, is writable there."""
    (release,) = [
        r for r in plan.helm_releases() if r.inputs["chart"] == "fluid" and plan.cluster_of(r) == f"{env}-{region}"
    ]
    root = release.inputs["values"]["runtime"].get("mountRoot", "/runtime-mnt")
    assert root == ("/var/lib/docker/runtime-mnt" if cloud == "gcp" else "/runtime-mnt")
    assert release.inputs["values"]["runtime"].get("criticalFusePod", True) is True


def _pods(stack: Stack, env: str, region: str, model: str, pools: set[str]) -> None:
    """The server objects that run on the cluster read the cache's PVC at the model's path, on its pools."""
    cluster = f"{env}-{region}"
    servers = [
        r
        for r in stack.resources
        if r.kind in ("InferenceService", "LLMInferenceService") and r.k8s_name == model and r.cluster == cluster
    ]
    assert len(servers) == 1, servers
    (server,) = servers
    spec = server.props["spec"]
    assert server.namespace == "inference"
    if server.kind == "InferenceService":
        uri, selectors = spec["predictor"]["model"]["storageUri"], [spec["predictor"]["nodeSelector"]]
    else:
        uri = spec["model"]["uri"]
        selectors = [spec["template"]["nodeSelector"], spec["prefill"]["template"]["nodeSelector"]]
    assert uri == f"pvc://models/models/{SHARED_WEIGHTS.get(model, model)}"
    assert {s["inference-platform.io/pool"] for s in selectors} == pools
    # the PVC `models` is the serving namespace's Dataset over the cache's
    (reference,) = [
        r
        for r in stack.kubernetes("Dataset", "data.fluid.io", cluster)
        if r.namespace == "inference" and r.k8s_name == "models"
    ]
    assert reference.props["spec"]["mounts"] == [
        {"name": "models", "mountPoint": "dataset://model-cache/models", "path": "/"}
    ]


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_every_model_of_every_region_reads_its_weights_through_the_cache(env, dev_plan, prod_plan):
    plan = {"dev": dev_plan, "prod": prod_plan}[env]
    assert [(m, r, c, p) for m, r, c, p in _walks(plan)] == WALKS[env]
    stack = Stack(plan_resources(plan))
    for model, region, cloud, pools in WALKS[env]:
        bucket = _bucket(plan, env, region, cloud, model)
        _identity(plan, env, region, cloud, bucket, model)
        _runtime(plan, env, region, cloud, bucket)
        _node_mount(plan, env, region, cloud)
        _pods(stack, env, region, model, pools)
