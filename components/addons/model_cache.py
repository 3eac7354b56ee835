"""Alluxio cache over the region's model bucket, run by Fluid, on the GPU nodes that read from it.

Loading hundreds of GB onto every new GPU node from object storage takes minutes; from a warm
cache on the neighbouring GPU nodes' memory and local NVMe it takes seconds.

Layout (one cache per cluster):
- `model-cache` namespace: the Dataset mounting `s3://<bucket>/models/` (or `gs://`) read-only,
  its AlluxioRuntime (master on system nodes, one worker per GPU node, tiers MEM + local NVMe),
  one DataLoad per model to pre-warm, and the FUSE pods. The namespace is Pod Security
  `privileged` because FUSE and Fluid's host-network workers need it; nothing else runs there.
- `inference` namespace: a Dataset referencing the first one (`dataset://model-cache/models`):
  Fluid gives it a PVC named `models`, so model servers read `pvc://models/models/<model>/`
  (the PVC path equals the object key) without the serving namespace being privileged.

Credentials, no static keys: the Dataset sets no `encryptOptions` (no access keys), so
Alluxio's S3 under-store falls back to the AWS SDK default credential chain, whose web-identity
provider uses `AWS_ROLE_ARN` / `AWS_WEB_IDENTITY_TOKEN_FILE`; GCS (`alluxio.underfs.gcs.version:
2`, no `fs.gcs.credential.path`) falls back to Application Default Credentials, i.e. the GKE
metadata server. Both come from the pod's service account. Fluid 1.0.8's Alluxio chart sets no
`serviceAccountName`, so its pods run as the namespace's `default` service account: we annotate
that one (IRSA role / Google service account), and since only the cache runs in `model-cache`,
it is the cache's own identity. The EKS pod identity webhook then injects the token and env.

FUSE + mmap: vLLM's default safetensors loader mmaps each shard; over FUSE every page fault is
a small synchronous read through the FUSE daemon, so loads crawl and the kernel page cache holds
a second copy of the weights next to Alluxio's. The deployment avoids mmap altogether: model
servers load with `--load-format runai_streamer` (`serving/engine.py` VLLM_LOAD_ARGS), which reads the shards with
large concurrent sequential reads into a bounded CPU buffer and streams them to the GPU. The
same loader streams straight from `s3://` / `gs://` when the cache is off (the alternative mode
`model_storage_uri` returns then), using the model server's IRSA / Workload Identity.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.catalog.charts import CHARTS
from components.config.environment import EnvironmentSpec
from components.config.model_store import CachePlan
from components.config.region import RegionSpec
from components.config.workloads import ModelSpec
from components.domain.host import WORKER_JVM_GIB
from components.domain.model_bucket import MODELS_PREFIX
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import custom_resource, helm_release, namespace
from components.k8s.names import (
    FLUID_NAMESPACE,
    MODEL_CACHE_NAMESPACE,
    SERVING_NAMESPACE,
    model_bucket_name,
)
from components.k8s.topology import gpu_tolerations, pool_selector
from components.k8s.workload_identity import ServiceAccountRef, identity_annotations

FLUID_API = "data.fluid.io/v1alpha1"
CACHE_NAMESPACE = MODEL_CACHE_NAMESPACE
DATASET = "models"
# Fluid 1.0.8's Alluxio pods run as their namespace's default service account (see above).
CACHE_SERVICE_ACCOUNT = ServiceAccountRef(CACHE_NAMESPACE, "default")
# Label that turns on Fluid's pod webhook (cache-affine scheduling of PVC users) in a namespace
# [fluid@v1.0.8:charts/fluid/fluid/templates/webhook/v1/webhookconfiguration.yaml].
FLUID_INJECTION_LABEL = {"fluid.io/enable-injection": "true"}

# Fluid fills in JVM options a runtime leaves out: master -Xmx16G, worker -Xmx12G with 32g of direct
# memory, FUSE -Xmx16G -Xms16G with 32g [fluid-cloudnative/fluid@v1.0.8:pkg/ddc/alluxio/
# transform_optimization.go optimizeDefaultForMaster/Worker, optimizeDefaultFuse], with no resources.
# Every component here states its own, within its container's memory limit.
MASTER_MEMORY_GIB = 4  # metadata of a few thousand weight files: a 2 GiB heap is ample
CACHE_COMPONENT_CPU = "500m"  # request of the worker and of the FUSE daemon (`domain/host.py` reserves them)


def jvm_options(memory_gib: int) -> list[str]:
    """Heap a quarter and direct buffers half of a container's memory; the rest is the JVM's own (metaspace,
    threads, native buffers of the FUSE library)."""
    mib = memory_gib * 1024
    return [f"-Xmx{mib // 4}m", f"-XX:MaxDirectMemorySize={mib // 2}m"]


def _resources(memory_gib: int, cpu: str) -> dict:
    return {"requests": {"cpu": cpu, "memory": f"{memory_gib}Gi"}, "limits": {"memory": f"{memory_gib}Gi"}}


# Large blocks and chunks for multi-GB sequential safetensors shards, node-local reads first
# [kserve@v0.20.0:docs/samples/fluid/alluxio.yaml].
ALLUXIO_PROPERTIES = {
    "alluxio.user.ufs.block.read.location.policy": "alluxio.client.block.policy.LocalFirstAvoidEvictionPolicy",
    "alluxio.user.block.size.bytes.default": "256MB",
    "alluxio.user.streaming.reader.chunk.size.bytes": "256MB",
    "alluxio.user.local.reader.chunk.size.bytes": "256MB",
    "alluxio.worker.network.reader.buffer.size": "256MB",
    "alluxio.user.streaming.data.timeout": "300sec",
}
# Fluid's CSI plugin borrows the kubelet's credentials (node authorization) where the kubelet
# uses a client certificate (GKE: /var/lib/kubelet/kubeconfig + pki). EKS kubelets authenticate
# with an IAM exec plugin the CSI container cannot run, so it uses its own service account there.
CSI_VALUES = {
    "aws": {"useNodeAuthorization": False},
    "gcp": {
        "useNodeAuthorization": True,
        "kubelet": {"kubeConfigFile": "/var/lib/kubelet/kubeconfig", "certDir": "/var/lib/kubelet/pki"},
    },
}


def model_bucket_url(region: RegionSpec, bucket: str) -> str:
    return f"{'s3' if region.cloud == 'aws' else 'gs'}://{bucket}"


def model_storage_uri(env: EnvironmentSpec, region: RegionSpec, stack: str, model: ModelSpec) -> str:
    """Where model servers in `region` read `model`: the cache's PVC when it is on, else the bucket.

    Either way the server loads with `VLLM_LOAD_ARGS` (no mmap over FUSE; streaming from the bucket).
    """
    if region.model_cache.enabled:
        return f"pvc://{DATASET}/{model.weights_prefix.rstrip('/')}"
    bucket = model_bucket_name(env.model_store.bucket_prefix, stack, region.name)
    return f"{model_bucket_url(region, bucket)}/{model.weights_prefix}"


def prewarmed_models(env: EnvironmentSpec, region: RegionSpec) -> list[ModelSpec]:
    """Models the cache of `region` loads ahead of use: those placed in the region, when asked; one per weights
    prefix, since models sharing their weights (same preset and precision) read the same files."""
    if not (region.model_cache.enabled and region.model_cache.prewarm):
        return []
    first: dict[str, ModelSpec] = {}
    for model in env.models:
        if any(p.region == region.name for p in model.placements):
            first.setdefault(model.weights_prefix, model)
    return list(first.values())


def under_store_options(region: RegionSpec) -> dict[str, str]:
    """Alluxio mount options: TLS to the bucket (its policy refuses plain HTTP), credentials from the pod."""
    if region.cloud == "aws":
        return {"alluxio.underfs.s3.region": region.region, "alluxio.underfs.s3.secure.http.enabled": "true"}
    return {"alluxio.underfs.gcs.version": "2"}


@dataclass(frozen=True, kw_only=True)
class ModelCacheArgs:
    cluster: ClusterHandle
    plan: CachePlan
    bucket: str
    # IAM role ARN (EKS) or Google service account email (GKE) the cache reads the bucket as.
    cloud_identity: pulumi.Input[str]
    # The serving namespace, where the model servers' PVC is created.
    serving_namespace: k8s.core.v1.Namespace
    label_domain: str
    prewarm: tuple[ModelSpec, ...] = ()


class ModelCache(pulumi.ComponentResource):
    dataset: k8s.apiextensions.CustomResource
    runtime: k8s.apiextensions.CustomResource
    data_loads: dict[str, k8s.apiextensions.CustomResource]

    def __init__(self, name: str, args: ModelCacheArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:ModelCache", name, None, opts)
        cluster = args.cluster
        region = cluster.region

        fluid_ns = namespace(FLUID_NAMESPACE, cluster, self, "privileged")
        fluid = helm_release(
            "fluid",
            CHARTS["fluid"],
            cluster,
            fluid_ns,
            {
                # Alluxio caches; thin runtime serves the cross-namespace reference Dataset.
                "runtime": {"alluxio": {"enabled": True}, "thin": {"enabled": True}},
                "csi": CSI_VALUES[region.cloud],
            },
            parent=self,
        )
        cache_ns = namespace(CACHE_NAMESPACE, cluster, self, "privileged")
        cache_sa = k8s.core.v1.ServiceAccountPatch(
            f"{cluster.name}-{CACHE_NAMESPACE}-default",
            metadata={
                "name": CACHE_SERVICE_ACCOUNT.name,
                "namespace": CACHE_NAMESPACE,
                "annotations": pulumi.Output.from_input(args.cloud_identity).apply(
                    lambda identity: identity_annotations(region, identity)
                ),
            },
            opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[cache_ns]),
        )

        def custom(
            kind: str, *, namespace: str, name: str, spec: dict, depends_on: list
        ) -> k8s.apiextensions.CustomResource:
            manifest = {
                "apiVersion": FLUID_API,
                "kind": kind,
                "metadata": {"name": name, "namespace": namespace},
                "spec": spec,
            }
            return custom_resource(
                f"{cluster.name}-{namespace}-{kind.lower()}-{name}",
                manifest,
                cluster=cluster,
                parent=self,
                crd_from=[fluid],
                depends_on=depends_on,
            )

        bucket_models = f"{model_bucket_url(region, args.bucket)}/{MODELS_PREFIX}"
        self.dataset = custom(
            "Dataset",
            namespace=CACHE_NAMESPACE,
            name=DATASET,
            spec={
                # At /models in Alluxio: a path under the PVC equals the object key in the bucket.
                "mounts": [
                    {
                        "name": DATASET,
                        "mountPoint": bucket_models,
                        "path": "/" + MODELS_PREFIX.strip("/"),
                        "readOnly": True,
                        "options": under_store_options(region),
                    }
                ],
                "accessModes": ["ReadOnlyMany"],
                # Cache workers only on the GPU pools, so blocks sit next to the GPUs reading them.
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": f"{args.label_domain}/pool",
                                        "operator": "In",
                                        "values": list(args.plan.pools),
                                    }
                                ]
                            }
                        ]
                    }
                },
                "tolerations": gpu_tolerations(),
            },
            depends_on=[cache_sa],
        )
        self.runtime = custom(
            "AlluxioRuntime",
            namespace=CACHE_NAMESPACE,
            name=DATASET,
            spec=self._runtime_spec(args),
            depends_on=[cache_sa],
        )
        # The serving namespace's view of the same cache: a PVC named `models` for pvc:// URIs.
        custom(
            "Dataset",
            namespace=SERVING_NAMESPACE,
            name=DATASET,
            spec={"mounts": [{"name": DATASET, "mountPoint": f"dataset://{CACHE_NAMESPACE}/{DATASET}", "path": "/"}]},
            depends_on=[self.dataset, self.runtime, args.serving_namespace],
        )

        self.data_loads = {
            model.name: custom(
                "DataLoad",
                namespace=CACHE_NAMESPACE,
                name=f"prewarm-{model.name}",
                spec={
                    "dataset": {"name": DATASET, "namespace": CACHE_NAMESPACE},
                    "loadMetadata": True,
                    "target": [{"path": "/" + model.weights_prefix.rstrip("/"), "replicas": 1}],
                    "policy": "Once",
                    "nodeSelector": pool_selector(args.label_domain, "system"),
                },
                depends_on=[self.dataset, self.runtime],
            )
            for model in args.prewarm
        }
        self.register_outputs({"dataset": f"{CACHE_NAMESPACE}/{DATASET}", "capacityGib": args.plan.capacity_gib})

    @staticmethod
    def _runtime_spec(args: ModelCacheArgs) -> dict:
        plan = args.plan
        levels = [
            {
                "mediumtype": "MEM",
                "path": "/dev/shm",
                "quota": f"{plan.memory_gib}Gi",
                "volumeType": "emptyDir",
                "high": "0.95",
                "low": "0.7",
            }
        ]
        if plan.ssd_gib:
            # emptyDir on the node's ephemeral storage, which GPU pools put on their local NVMe.
            levels.append(
                {
                    "mediumtype": "SSD",
                    "path": "/cache/nvme",
                    "quota": f"{plan.ssd_gib}Gi",
                    "volumeType": "emptyDir",
                    "high": "0.95",
                    "low": "0.7",
                }
            )
        return {
            "replicas": plan.replicas,
            "master": {
                "nodeSelector": pool_selector(args.label_domain, "system"),
                "jvmOptions": jvm_options(MASTER_MEMORY_GIB),
                "resources": _resources(MASTER_MEMORY_GIB, CACHE_COMPONENT_CPU),
            },
            "worker": {
                "jvmOptions": jvm_options(WORKER_JVM_GIB),
                # The tmpfs tier is charged to the worker's memory: request it so the scheduler counts it.
                "resources": _resources(plan.memory_gib + WORKER_JVM_GIB, CACHE_COMPONENT_CPU),
            },
            # One FUSE daemon on each node whose model servers mount the cache.
            "fuse": {
                "jvmOptions": jvm_options(plan.fuse_memory_gib),
                "resources": _resources(plan.fuse_memory_gib, CACHE_COMPONENT_CPU),
            },
            "tieredstore": {"levels": levels},
            "properties": ALLUXIO_PROPERTIES,
        }
