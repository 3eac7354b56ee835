"""Alluxio cache over the region's model bucket, run by Fluid, on the GPU nodes that read from it.

Loading hundreds of GB onto every new GPU node from object storage takes minutes; from a warm
cache on the neighbouring GPU nodes' memory and local NVMe it takes seconds.

Layout (one cache per cluster):
- `model-cache` namespace: the Dataset mounting `s3://<bucket>/models/` (or `gs://`) read-only,
  its AlluxioRuntime (master on system nodes, one worker per GPU node, tiers MEM + local NVMe),
  one DataLoad per model to pre-warm, and the FUSE pods. The namespace is Pod Security
  `privileged` because the FUSE daemon needs it; nothing else runs there. Every component runs on
  the container network, so the pod identity below is the one it reads the bucket with
  (upstream.FLUID_RUNTIME_ON_HOST_NETWORK).
- `inference` namespace: a Dataset referencing the first one (`dataset://model-cache/models`):
  Fluid gives it a PVC named `models`, so model servers read `pvc://models/models/<model>/`
  (the PVC path equals the object key) without the serving namespace being privileged.

Credentials, no static keys: the Dataset sets no `encryptOptions` (no access keys), so
Alluxio's S3 under-store falls back to the AWS SDK default credential chain, whose web-identity
provider uses `AWS_ROLE_ARN` / `AWS_WEB_IDENTITY_TOKEN_FILE` (upstream.ALLUXIO_S3_READS_WITH_WEB_IDENTITY); GCS (`alluxio.underfs.gcs.version:
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
from typing import Any, ClassVar, Literal, assert_never

import pulumi
import pulumi_kubernetes as k8s

from components.catalog.charts import CHARTS
from components.catalog.regions import Cloud
from components.config.environment import EnvironmentSpec
from components.config.model_store import CachePlan
from components.config.region import KubeletCredentials, RegionSpec
from components.config.workloads import ModelSpec
from components.domain.cache_memory import (
    CACHE_COMPONENT_CPU,
    JOB_COMPONENT_CPU,
    JOB_JVM_GIB,
    JOB_WORKER_THREADS,
    WORKER_JVM_GIB,
    direct_mib,
    heap_mib,
)
from components.domain.cache_reads import READ_BUFFER_MESSAGES, CacheReads
from components.domain.model_bucket import MODELS_PREFIX
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import created_pods_quota, custom_resource, helm_release, namespace
from components.k8s.inputs import InputError, required
from components.k8s.names import checkov_skips, model_bucket_name
from components.k8s.topology import gpu_tolerations, pool_selector
from components.k8s.workload_identity import ServiceAccountRef, identity_annotations
from platform_catalog.names import FLUID_NAMESPACE, MODEL_CACHE_NAMESPACE, SERVING_NAMESPACE

FLUID_API = "data.fluid.io/v1alpha1"
CACHE_NAMESPACE = MODEL_CACHE_NAMESPACE
DATASET = "models"
# Fluid 1.0.8's Alluxio pods run as their namespace's default service account (see above).
CACHE_SERVICE_ACCOUNT = ServiceAccountRef(namespace=CACHE_NAMESPACE, name="default")
RUNTIME_KIND = "AlluxioRuntime"
# Master, worker and FUSE on the pod network, where the pod's cloud identity applies.
CONTAINER_NETWORK = "ContainerNetwork"
# Where Fluid mounts FUSE file systems on the node unless its root is read-only (the region's `fluid_mount_root`).
CHART_MOUNT_ROOT = "/runtime-mnt"  # the Fluid chart's default (runtime.mountRoot)
# The cache's blocks can be read again from the bucket: its workers never keep a node from being removed
# (upstream.AUTOSCALER_KEEPS_NODES_WITH_LOCAL_STORAGE).
EVICTABLE = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}

# Fluid fills in JVM options a runtime leaves out: master -Xmx16G, worker -Xmx12G with 32g of direct
# memory, FUSE -Xmx16G -Xms16G with 32g [fluid-cloudnative/fluid@v1.0.8:pkg/ddc/alluxio/
# transform_optimization.go optimizeDefaultForMaster/Worker, optimizeDefaultFuse], with no resources; the job master
# and job worker get none at all (upstream.FLUID_JOB_JVMS_TAKE_THE_RUNTIMES_OPTIONS). Every component here states its
# own, within its container's memory limit (components/domain/cache_memory.py).
MASTER_MEMORY_GIB = 4  # metadata of a few thousand weight files: a 2 GiB heap is ample

# Checkov's CKV_K8S_41 (default account in use) fails by design on the patch that annotates it (checkov.io/skip).
DEFAULT_ACCOUNT_SKIPS = checkov_skips(
    {
        "CKV_K8S_41": "Fluid runs the cache's Alluxio pods under the namespace's default account; its cloud identity "
        "(IRSA / Workload Identity) annotation is what this patch adds",
    }
)


def jvm_options(memory_gib: int) -> list[str]:
    """Heap a quarter and direct buffers half of a container's memory; the rest is the JVM's own (metaspace,
    threads, native buffers of the FUSE library)."""
    return [f"-Xmx{heap_mib(memory_gib)}m", f"-XX:MaxDirectMemorySize={direct_mib(memory_gib)}m"]


def runtime_jvm_options() -> list[str]:
    """What every JVM of the runtime gets: the job JVMs' container memory as the memory HotSpot sizes defaults from
    (a quarter heap, as much direct memory), which the explicit sizes of master, worker and FUSE override."""
    return [f"-XX:MaxRAM={JOB_JVM_GIB * 1024}m"]


def _resources(memory_gib: int, cpu: float) -> dict[str, Any]:
    return {
        "requests": {"cpu": f"{round(cpu * 1000)}m", "memory": f"{memory_gib}Gi"},
        "limits": {"memory": f"{memory_gib}Gi"},
    }


def alluxio_properties(reads: CacheReads) -> dict[str, str]:
    """Large blocks for multi-GB sequential safetensors shards, node-local reads first
    [kserve@v0.20.0:docs/samples/fluid/alluxio.yaml]; read chunks and buffers that hold every stream a node serves
    in the JVMs' direct memory (components/domain/cache_reads.py)."""
    chunk = f"{reads.chunk_mib}MB"  # Alluxio's MB is MiB
    return {
        "alluxio.user.ufs.block.read.location.policy": "alluxio.client.block.policy.LocalFirstAvoidEvictionPolicy",
        "alluxio.user.block.size.bytes.default": "256MB",
        "alluxio.user.streaming.reader.chunk.size.bytes": chunk,
        "alluxio.user.streaming.reader.buffer.size.messages": str(READ_BUFFER_MESSAGES),
        # The worker sends chunks of at most this size, whatever the client asks (default 2MB).
        "alluxio.worker.network.reader.max.chunk.size.bytes": chunk,
        "alluxio.worker.network.reader.buffer.size": chunk,
        "alluxio.job.worker.threadpool.size": str(JOB_WORKER_THREADS),
        "alluxio.user.streaming.data.timeout": "300sec",
    }


@dataclass(frozen=True, kw_only=True)
class CacheNodes:
    """What Fluid's node plugins must know of the cluster's nodes (the region's `fluid_mount_root` and
    `kubelet_credentials`)."""

    # Where FUSE file systems are mounted when the node's root file system is read-only; None: the chart's default.
    mount_root: str | None = None
    # The kubelet's client certificate, for the CSI plugin to borrow; None: it uses its own service account.
    kubelet_credentials: KubeletCredentials | None = None

    @staticmethod
    def of(region: RegionSpec) -> CacheNodes:
        return CacheNodes(mount_root=region.fluid_mount_root, kubelet_credentials=region.kubelet_credentials)


@dataclass(frozen=True, kw_only=True)
class S3UnderStore:
    """An S3 model bucket as Alluxio mounts it: TLS (the bucket's policy refuses plain HTTP), its region,
    credentials from the pod (IRSA)."""

    bucket: str
    aws_region: str
    scheme: ClassVar[Literal["s3"]] = "s3"
    cloud: ClassVar[Cloud] = "aws"


@dataclass(frozen=True, kw_only=True)
class GcsUnderStore:
    """A GCS model bucket as Alluxio mounts it: credentials from the GKE metadata server (Workload Identity)."""

    bucket: str
    scheme: ClassVar[Literal["gs"]] = "gs"
    cloud: ClassVar[Cloud] = "gcp"


UnderStore = S3UnderStore | GcsUnderStore
"""The bucket the cache reads, one kind per cloud: its scheme, the options Alluxio mounts it with, the identity."""


def under_store(region: RegionSpec, bucket: str) -> UnderStore:
    """The region's model bucket `bucket` as the cache mounts it."""
    match region.bucket_scheme:
        case "s3":
            return S3UnderStore(bucket=bucket, aws_region=region.region)
        case "gs":
            return GcsUnderStore(bucket=bucket)
        case other:
            assert_never(other)


def csi_values(kubelet: KubeletCredentials | None) -> dict[str, Any]:
    """Fluid's CSI plugin borrows the kubelet's credentials (node authorization) where the kubelet uses a client
    certificate (`kubelet`); elsewhere it uses its own service account."""
    if kubelet is None:
        return {"useNodeAuthorization": False}
    return {
        "useNodeAuthorization": True,
        "kubelet": {"kubeConfigFile": kubelet.kubeconfig, "certDir": kubelet.cert_dir},
    }


def model_bucket_url(region: RegionSpec, bucket: str) -> str:
    return f"{region.bucket_scheme}://{bucket}"


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


def under_store_options(store: UnderStore) -> dict[str, str]:
    """Alluxio mount options: TLS to the bucket (its policy refuses plain HTTP), credentials from the pod; no ACL
    inheritance on S3, which would ask the read-only role for ListAllMyBuckets and GetBucketAcl. Alluxio picks the
    under-store by the mount point's scheme."""
    match store:
        case S3UnderStore():
            return {
                "alluxio.underfs.s3.region": store.aws_region,
                "alluxio.underfs.s3.secure.http.enabled": "true",
                "alluxio.underfs.s3.inherit.acl": "false",
            }
        case GcsUnderStore():
            return {"alluxio.underfs.gcs.version": "2"}
        case other:
            assert_never(other)


def mount_root(nodes: CacheNodes) -> str:
    """Where Fluid mounts the FUSE file systems on the cluster's nodes."""
    return nodes.mount_root or CHART_MOUNT_ROOT


def mount_root_annotation(label_domain: str) -> str:
    """The annotation recording the mount root a cache object was created under (Fluid bakes it into the FUSE
    DaemonSet and the volumes it creates then)."""
    return f"{label_domain}/fluid-mount-root"


def fluid_values(nodes: CacheNodes) -> dict[str, Any]:
    """The Fluid chart's values on the cluster: the runtimes we use, the CSI plugin's kubelet access and,
    where the node's root file system is read-only, a writable mount root."""
    runtime: dict[str, Any] = {"alluxio": {"enabled": True}, "thin": {"enabled": True}}
    if nodes.mount_root is not None:
        runtime["mountRoot"] = nodes.mount_root
    return {"runtime": runtime, "csi": csi_values(nodes.kubelet_credentials)}


@dataclass(frozen=True, kw_only=True)
class ModelCacheArgs:
    cluster: ClusterHandle
    plan: CachePlan
    store: UnderStore  # the region's model bucket; its kind says which cloud identity the cache reads it as
    nodes: CacheNodes  # CacheNodes.of(region); no default, which would be EKS's answer on any cloud
    # IAM role ARN (EKS) or Google service account email (GKE) the cache reads the bucket as.
    cloud_identity: pulumi.Input[str]
    # The serving namespace, where the model servers' PVC is created.
    serving_namespace: k8s.core.v1.Namespace
    label_domain: str
    reads: CacheReads
    prewarm: tuple[ModelSpec, ...] = ()

    def __post_init__(self) -> None:
        required("store.bucket", self.store.bucket, "the model bucket the cache mounts")
        on = self.cluster.region.cloud  # the cluster's Fluid release, and the identity its pods read the bucket as
        if self.store.cloud != on:
            raise InputError("store", f"a {self.store.scheme}:// bucket, which a cluster on {on} reads no identity for")
        if isinstance(self.store, S3UnderStore):
            required("store.aws_region", self.store.aws_region, "the S3 bucket's region, e.g. us-east-1")
        if not self.plan.pools:
            raise InputError("plan.pools", "no GPU pool for the cache's workers")
        root = self.nodes.mount_root
        if root is not None and not root.startswith("/"):
            raise InputError("nodes.mount_root", f"{root!r}: an absolute path on the node, e.g. /var/lib/runtime-mnt")


class ModelCache(pulumi.ComponentResource):
    dataset: k8s.apiextensions.CustomResource
    runtime: k8s.apiextensions.CustomResource
    serving_dataset: k8s.apiextensions.CustomResource
    data_loads: dict[str, k8s.apiextensions.CustomResource]

    def __init__(self, name: str, args: ModelCacheArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:ModelCache", name, None, opts)
        cluster, store, nodes = args.cluster, args.store, args.nodes

        fluid_ns = namespace(FLUID_NAMESPACE, cluster, self, "privileged")
        values = fluid_values(nodes)
        fluid = helm_release("fluid", CHARTS["fluid"], cluster, fluid_ns, values, parent=self)
        cache_ns = namespace(CACHE_NAMESPACE, cluster, self, "privileged")
        # Fluid creates the FUSE DaemonSet of the runtime in its namespace, with a critical priority class.
        fuse_admitted = created_pods_quota(
            cluster, CHARTS["fluid"], values, f"{FLUID_API.split('/')[0]}/{RUNTIME_KIND}", cache_ns, self
        )
        cache_sa = k8s.core.v1.ServiceAccountPatch(
            f"{cluster.name}-{CACHE_NAMESPACE}-default",
            metadata={
                "name": CACHE_SERVICE_ACCOUNT.name,
                "namespace": CACHE_NAMESPACE,
                "annotations": pulumi.Output.from_input(args.cloud_identity).apply(
                    lambda identity: {**identity_annotations(store.cloud, identity), **DEFAULT_ACCOUNT_SKIPS}
                ),
            },
            opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[cache_ns]),
        )

        def custom(
            kind: str,
            *,
            name: str,
            metadata: dict[str, Any],
            spec: dict[str, Any],
            depends_on: list[pulumi.Resource],
            replace_on_changes: tuple[str, ...],
        ) -> k8s.apiextensions.CustomResource:
            """A Fluid object; Fluid reads its spec once (upstream.FLUID_APPLIES_A_CACHES_SPEC_ONCE), so a change of
            the paths in `replace_on_changes` replaces it, deleting it first (its name stays)."""
            return custom_resource(
                f"{cluster.name}-{metadata['namespace']}-{kind.lower()}-{name}",
                {"apiVersion": FLUID_API, "kind": kind, "metadata": metadata, "spec": spec},
                cluster=cluster,
                parent=self,
                crd_from=[fluid],
                depends_on=depends_on,
                replace_on_changes=replace_on_changes,
            )

        bucket_models = f"{store.scheme}://{store.bucket}/{MODELS_PREFIX}"
        self.dataset = custom(
            "Dataset",
            name=DATASET,
            metadata={"name": DATASET, "namespace": CACHE_NAMESPACE},
            spec={
                # At /models in Alluxio: a path under the PVC equals the object key in the bucket.
                "mounts": [
                    {
                        "name": DATASET,
                        "mountPoint": bucket_models,
                        "path": "/" + MODELS_PREFIX.strip("/"),
                        "readOnly": True,
                        "options": under_store_options(store),
                    }
                ],
                "accessModes": ["ReadOnlyMany"],
                # Cache workers on the GPU pools that never take them away (domain/cache_plan.py worker_pools), so
                # blocks sit next to GPUs reading them; FUSE daemons elsewhere read from them over the pod network.
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
            replace_on_changes=("spec",),
        )
        # Fluid binds a runtime to the Dataset of its name: taking the name from the Dataset makes a replacement of
        # the Dataset replace the runtime too, deleted before it. The mount root the Fluid controller installs the
        # runtime under is recorded on it: a move re-installs it.
        mounted_under = {mount_root_annotation(args.label_domain): mount_root(nodes)}
        self.runtime = custom(
            RUNTIME_KIND,
            name=DATASET,
            metadata={
                "name": self.dataset.metadata.apply(lambda m: m["name"]),
                "namespace": CACHE_NAMESPACE,
                "annotations": mounted_under,
            },
            spec=self._runtime_spec(args),
            depends_on=[cache_sa, *fuse_admitted],
            replace_on_changes=("metadata", "spec"),
        )
        # Both computed from the cache's Dataset and runtime, so that replacing either replaces these first: the
        # serving Dataset (whose deletion Fluid holds while a model server mounts its PVC, and which holds the cache
        # Dataset's) and the prewarms (owned by the Dataset, gone with it).
        cache_ref = pulumi.Output.all(self.dataset.metadata, self.runtime.metadata).apply(
            lambda metadata: {"name": metadata[0]["name"], "namespace": metadata[0]["namespace"]}
        )
        # The serving namespace's view of the same cache: a PVC named `models` for pvc:// URIs. Fluid copies the cache's
        # volume (mount root included) into it when it is created.
        self.serving_dataset = custom(
            "Dataset",
            name=DATASET,
            metadata={"name": DATASET, "namespace": SERVING_NAMESPACE, "annotations": mounted_under},
            spec={
                "mounts": [
                    {
                        "name": DATASET,
                        "mountPoint": cache_ref.apply(lambda ref: f"dataset://{ref['namespace']}/{ref['name']}"),
                        "path": "/",
                    }
                ]
            },
            depends_on=[self.dataset, self.runtime, args.serving_namespace],
            replace_on_changes=("metadata", "spec"),
        )

        self.data_loads = {
            model.name: custom(
                "DataLoad",
                name=f"prewarm-{model.name}",
                metadata={"name": f"prewarm-{model.name}", "namespace": CACHE_NAMESPACE},
                spec={
                    "dataset": cache_ref,
                    "loadMetadata": True,
                    "target": [{"path": "/" + model.weights_prefix.rstrip("/"), "replicas": 1}],
                    "policy": "Once",
                    "nodeSelector": pool_selector(args.label_domain, "system"),
                },
                depends_on=[self.dataset, self.runtime],
                replace_on_changes=("spec",),
            )
            for model in args.prewarm
        }
        self.register_outputs({"dataset": f"{CACHE_NAMESPACE}/{DATASET}", "capacityGib": args.plan.capacity_gib})

    @staticmethod
    def _runtime_spec(args: ModelCacheArgs) -> dict[str, Any]:
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
            # emptyDir on the node's ephemeral storage, which GPU pools put on their local NVMe. emptyDir levels turn
            # short-circuit reads off; why they stay: upstream.FLUID_EMPTYDIR_TIERS_READ_THROUGH_THE_WORKER.
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
            "jvmOptions": runtime_jvm_options(),
            "master": {
                "nodeSelector": pool_selector(args.label_domain, "system"),
                "jvmOptions": jvm_options(MASTER_MEMORY_GIB),
                "resources": _resources(MASTER_MEMORY_GIB, CACHE_COMPONENT_CPU),
                "networkMode": CONTAINER_NETWORK,
            },
            # In the master pod; its JVM sized by runtime_jvm_options.
            "jobMaster": {"resources": _resources(JOB_JVM_GIB, JOB_COMPONENT_CPU)},
            "worker": {
                "jvmOptions": jvm_options(WORKER_JVM_GIB),
                # The tmpfs tier is charged to the worker's memory: request it so the scheduler counts it.
                "resources": _resources(plan.memory_gib + WORKER_JVM_GIB, CACHE_COMPONENT_CPU),
                "networkMode": CONTAINER_NETWORK,
                "podMetadata": {"annotations": EVICTABLE},
            },
            # In the worker pod (counted with it, components/domain/host.py); its JVM sized by runtime_jvm_options.
            "jobWorker": {"resources": _resources(JOB_JVM_GIB, JOB_COMPONENT_CPU)},
            # One FUSE daemon on each node whose model servers mount the cache.
            "fuse": {
                "jvmOptions": jvm_options(plan.fuse_memory_gib),
                "resources": _resources(plan.fuse_memory_gib, CACHE_COMPONENT_CPU),
                "networkMode": CONTAINER_NETWORK,
            },
            "tieredstore": {"levels": levels},
            "properties": alluxio_properties(args.reads),
        }
