"""Upstream behaviour the program relies on: who creates which object, what is admitted, what a repo serves.

Each fact is stated once, with its source at the pinned version; components cite the constant, the
README lists them (`make docs`) and tests/test_upstream_behaviour.py asserts each against the rendered
plans. Refresh: re-read the source at the new pin, update the statement, and let those tests tell what
the program must change.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UpstreamFact:
    name: str
    statement: str
    source: str  # repo@ref:path (lines), or the FACTS file section that cites it


FACTS: dict[str, UpstreamFact] = {}


def _fact(name: str, statement: str, source: str) -> UpstreamFact:
    fact = UpstreamFact(name, statement, source)
    FACTS[name] = fact
    return fact


KARMADA_AGENT_REGISTERS = _fact(
    "karmada-agent-registers-its-cluster",
    "karmada-agent (v1.18.2) creates its member's `cluster.karmada.io/v1alpha1` Cluster itself, with "
    "`spec.id` = the member's kube-system Namespace UID and `syncMode: Pull`, and exits when a Cluster of that "
    "name exists with another or no `spec.id`. It sets no labels (no flag for them); the chart passes no "
    "--cluster-provider/--cluster-region/--cluster-zones. A Cluster pre-created with that `spec.id` and "
    "`syncMode: Pull` is re-registered (the agent rewrites only `spec`; labels are kept). So the program creates "
    "pull members' Clusters with the id and the labels, and leaves `spec` to the agent.",
    "karmada-io/karmada@v1.18.2:cmd/agent/app/agent.go L181-200, L449-498; pkg/util/cluster.go L82-119, "
    "L168-196; charts/karmada/templates/karmada-agent.yaml L108-117 (FACTS-3.md §9)",
)

PATCH_FORCE_TAKES_OVER_FIELDS = _fact(
    "kubernetes-patch-force-takes-over-fields",
    "A pulumi-kubernetes (v4.34.2) `*Patch` resource applies its fields by server-side apply with a field manager "
    "of its own; a field another manager owns is a conflict, an error unless the patch carries the annotation "
    '`pulumi.com/patchForce: "true"`, which forces the apply and takes the field over. The global stack\'s '
    "patch of the Karmada Service's `loadBalancerSourceRanges` carries it, and the host's stack, which created "
    "the Service, ignores changes to that field so the two never fight over it.",
    "pulumi/pulumi-kubernetes@v4.34.2: sdk/python/pulumi_kubernetes/core/v1/ServicePatch.py (class docstring, "
    "installed as pulumi_kubernetes 4.34.2); docs: registry/packages/kubernetes/how-to-guides/"
    "managing-resources-with-server-side-apply",
)

PULUMI_CREATES_OBJECTS = _fact(
    "pulumi-kubernetes-creates-objects",
    "With its defaults (server-side apply mode on, upsertExistingObjects off), pulumi-kubernetes (v4.34.2) creates "
    "a resource's object with a plain create (field manager `pulumi-kubernetes`): an object that already exists "
    "fails the `up`. A `*Patch` resource is a server-side apply with its own field manager "
    "(`pulumi.com/patchFieldManager`, else `pulumi-kubernetes-<random>`), forced only with "
    "`pulumi.com/patchForce`. A kind not served yet (its CRD missing) or a namespace not there is retried 5 times "
    "with doubling back-off. Deployments, StatefulSets, DaemonSets, Jobs, Pods, Services (endpoints; a load "
    "balancer's address) and PersistentVolumeClaims (Bound, or Pending under WaitForFirstConsumer) are awaited, "
    "10 minutes by default; custom resources are not (generic await is opt-in, PULUMI_K8S_AWAIT_ALL). The "
    "rehearsal replays exactly this (tools/rehearsal/pulumi_k8s.py).",
    "pulumi/pulumi-kubernetes@v4.32.0 (the mirror's newest tag; the module proxy refuses v4.34.2): "
    "provider/pkg/await/await.go L150-L297 (Creation: SSA only for Patch or upsert, retries, AlreadyExists), "
    "L1031 patchForce; provider/pkg/provider/provider.go L651-L694 (defaults), L2878-L2910 fieldManagerName; "
    "provider/pkg/await/awaiters.go L183-L240, L288-L322; installed pulumi_kubernetes 4.34.2: Provider "
    "upsert_existing_objects and *Patch docstrings",
)

HELM_INSTALLS_IN_ORDER = _fact(
    "helm-install-order-and-wait",
    "A `helm.sh/v3:Release` runs Helm's install action (helm v3.20.2 in pulumi-kubernetes' go.mod): the chart's "
    "crds/ first (unless skipCrds), then pre-install hooks, then every template in Helm's kind order (kinds it "
    "does not list, webhook configurations among them, last), then post-install hooks; with wait (the default) "
    "it waits for Deployments, StatefulSets, DaemonSets, PVCs (Bound) and LoadBalancer Services (an address), "
    "and for Jobs only with waitForJobs; atomic rolls the release back when the wait times out.",
    "helm/helm@v3.20.2:pkg/releaseutil/kind_sorter.go L31-L68 (InstallOrder), pkg/kube/ready.go L253 "
    "(serviceReady), pkg/action/install.go; pulumi/pulumi-kubernetes@v4.32.0:provider/go.mod L30",
)

KSERVE_NEEDS_CERT_MANAGER = _fact(
    "kserve-resources-needs-cert-manager",
    "kserve-resources (v0.20.0) always renders a cert-manager `Certificate` (serving-cert) and `Issuer` for its "
    "webhooks, with `cert-manager.io/inject-ca-from` on the webhook configurations: without cert-manager's CRDs "
    "and webhook running, the release fails. cert-manager v1.21.1 is published as "
    "oci://quay.io/jetstack/charts/cert-manager version v1.21.1 and installs its CRDs with crds.enabled.",
    "kserve/kserve@v0.20.0:charts/kserve-resources/files/kserve/resources.yaml L535-556, "
    "templates/kserve/resources.yaml; cert-manager/cert-manager@v1.21.1:RELEASE.md L16, "
    "deploy/charts/cert-manager/values.yaml L102-117 (FACTS-3.md §1)",
)

REPOSITORIES_SERVE_PINS = _fact(
    "repositories-serve-the-pinned-charts",
    "A chart is installed from a repository whose index lists the pinned version. The raw karmada master/charts "
    "index stops at v1.18.1 (patch releases arrive only by a manual PR); v1.18.2 is pushed to "
    "oci://docker.io/karmada. volcano-sh.github.io/helm-charts serves 1.15.0 as its newest. OCI registries and "
    "repositories without a copied index are not determinable offline.",
    "helm-index/* snapshots, karmada-io/karmada@v1.18.2:.github/workflows/dockerhub-released-chart.yml, "
    "Makefile L100-103; volcano-sh/helm-charts@be34e957:index.yaml (FACTS-3.md §3)",
)

# GKE limits these classes by default (ResourceQuota admission `limitedResources`), as kube-system's own
# `gcp-critical-pods` quota shows: a pod using one outside kube-system needs a quota scoped to it.
GKE_CRITICAL_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")
GKE_CRITICAL_PODS_NEED_QUOTA = _fact(
    "gke-critical-pods-need-a-quota",
    "GKE admits a pod with priorityClassName system-node-critical or system-cluster-critical outside kube-system "
    "only if its namespace has a ResourceQuota whose scopeSelector matches that class (PriorityClass In [...]), "
    "else `insufficient quota to match these scopes`. Volcano's templates, the GPU Operator's and Karmada's "
    "values (agent included) use these classes by default.",
    "kubernetes.io/docs/concepts/policy/resource-quotas/#limit-priority-class-consumption-by-default; GKE's "
    "kube-system/gcp-critical-pods (openservicemesh/osm#4408, NVIDIA/aicr#915) (FACTS-3.md §8)",
)

GKE_NODE_COUNT_PER_ZONE = _fact(
    "gke-initial-node-count-is-per-zone",
    "A GKE node pool's `initialNodeCount` (and `node_count`) is per zone: a regional pool over N zones starts "
    "with N x initialNodeCount nodes; `autoscaling.totalMin/MaxNodeCount` bound the total.",
    "pulumi_gcp container.NodePool initialNodeCount: 'In regional or multi-zonal clusters, this is the number "
    "of nodes per zone' (pulumi_gcp 10.2.0, from the google provider's container_node_pool docs)",
)

GKE_POOLS_NEED_THEIR_OWN_DCGM_EXPORTER = _fact(
    "gke-managed-gpu-pools-need-their-own-dcgm-exporter",
    "On GKE pools whose driver GKE installs, the GPU Operator does not run (so neither does its DCGM exporter), "
    "and GKE's managed DCGM metrics go to Cloud Monitoring, not to an in-cluster Prometheus; NVIDIA's "
    "dcgm-exporter chart runs there with GKE's driver directory /home/kubernetes/bin/nvidia mounted at "
    "/usr/local/nvidia and a critical-pods quota in its namespace.",
    "NVIDIA/dcgm-exporter@4.5.3-4.8.2:deployment (chart 4.8.2, priorityClassName system-node-critical); "
    "GoogleCloudPlatform/container-engine-accelerators@992db81:gpudirect-rdma/nccl-test.yaml (driver mount, "
    "FACTS-3.md §7); cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics",
)

# --- The weight path: bucket -> identity -> cache runtime -> mount on the node -> pod (issue 31) ------------------

FLUID_RUNTIME_ON_HOST_NETWORK = _fact(
    "fluid-runtime-runs-on-the-host-network-by-default",
    "Fluid (v1.0.8) runs an AlluxioRuntime's master, worker and FUSE pods with hostNetwork unless that component's "
    "`networkMode` is `ContainerNetwork`: an empty networkMode is HostNetwork. GKE Workload Identity does not apply "
    "to host-network pods (their metadata requests reach the Compute Engine metadata server, which answers as the "
    "node's service account), so every component runs on the container network. There the worker still registers "
    "the node's IP as its hostname (locality) and its pod IP as its container hostname (where clients connect).",
    "fluid-cloudnative/fluid@v1.0.8:api/v1alpha1/container_network.go L22-36, pkg/ddc/alluxio/transform.go L309, "
    "L414, transform_fuse.go L106, charts/alluxio/templates/worker/statefulset.yaml L80-81, L139-147; "
    "cloud.google.com/kubernetes-engine/docs/concepts/workload-identity (limitations: Pods on the host network)",
)

FLUID_MOUNT_ROOT_ON_THE_NODE = _fact(
    "fluid-mount-root-must-be-writable-on-the-node",
    "Fluid (v1.0.8) mounts each FUSE file system under `runtime.mountRoot` (default /runtime-mnt), a hostPath "
    "(DirectoryOrCreate) of both the CSI node plugin and the FUSE DaemonSet; its install guide says to move it where "
    "the cloud's root file system is read-only (`--set runtime.mountRoot=/var/lib/docker/runtime-mnt`). "
    "Container-Optimized OS (GKE's node image) mounts / read-only; /var/lib/docker is writable, executable and "
    "stateful. EKS's AL2023 nodes have a writable root, so the default stays there.",
    "fluid-cloudnative/fluid@v1.0.8:charts/fluid/fluid/values.yaml L90, templates/csi/daemonset.yaml L81, L116, "
    "L160-163, docs/en/userguide/install.md L168-171, charts/alluxio/templates/fuse/daemonset.yaml L203-206; "
    "cloud.google.com/container-optimized-os/docs/concepts/disks-and-filesystem",
)

FLUID_CONTROLLER_CREATES_CRITICAL_FUSE_PODS = _fact(
    "fluid-creates-system-node-critical-fuse-pods",
    "Fluid's chart (v1.0.8) sets `runtime.criticalFusePod: true`, which its Alluxio runtime controller turns into "
    "`priorityClassName: system-node-critical` on the FUSE DaemonSet it creates for each AlluxioRuntime, in the "
    "runtime's namespace: that namespace needs a critical-pods quota on GKE, though no chart is installed there. "
    "DataLoad jobs carry no priority class; the FUSE DaemonSet Fluid copies for a reference Dataset selects "
    "`fluid.io/fuse-balloon=true`, which no node carries, so it creates no pods.",
    "fluid-cloudnative/fluid@v1.0.8:charts/fluid/fluid/values.yaml L85, templates/controller/"
    "alluxioruntime_controller.yaml L76-79, pkg/ddc/alluxio/transform_fuse.go L114, charts/alluxio/templates/fuse/"
    "daemonset.yaml L76-77, charts/fluid-dataloader/alluxio/templates/job.yaml, pkg/ddc/thin/referencedataset/"
    "cm.go L56-71",
)

FLUID_EMPTYDIR_TIERS_READ_THROUGH_THE_WORKER = _fact(
    "fluid-emptydir-tiers-turn-off-short-circuit-reads",
    "Fluid (v1.0.8) turns short-circuit reads off (`alluxio.user.short.circuit.enabled=false`) when any tiered-store "
    "level is an emptyDir, and mounts only hostPath or PVC levels into the FUSE pod: every read then goes through "
    "the node's worker over gRPC. The cache keeps emptyDir levels all the same: a hostPath level is sized by no "
    "pod (neither the tmpfs of the memory level nor the NVMe level counts against a request or an emptyDir "
    "sizeLimit), outlives the worker with its blocks, and needs a writable NVMe path that differs by node image; "
    "reads stay on the node (LocalFirst placement), sized by `cache_reads`.",
    "fluid-cloudnative/fluid@v1.0.8:pkg/ddc/alluxio/transform.go L527-549, charts/alluxio/templates/_helpers.tpl "
    "L214-260 (worker levels, emptyDir with sizeLimit) and L326-366 (FUSE levels: hostPath and PVC only)",
)

ALLUXIO_READ_BUFFERS = _fact(
    "alluxio-read-buffers-per-stream",
    "Alluxio 2.9.0 buffers up to `alluxio.user.streaming.reader.buffer.size.messages` (default 16) chunks of "
    "`alluxio.user.streaming.reader.chunk.size.bytes` (default 1MB) per read stream in the client (the FUSE daemon, "
    "Netty direct memory), and the worker holds `alluxio.worker.network.reader.buffer.size` (default 4MB; 'higher "
    "value will increase the memory consumed by each read request') per stream. Sizes written `MB` are MiB. So the "
    "chunk is sized from the streams a node serves at once and the FUSE daemon's and worker's direct memory.",
    "org.alluxio:alluxio-core-common:2.9.0 (Maven Central) alluxio/conf/PropertyKey: "
    "USER_STREAMING_READER_BUFFER_SIZE_MESSAGES, USER_STREAMING_READER_CHUNK_SIZE_BYTES, "
    "WORKER_NETWORK_READER_BUFFER_SIZE",
)

AUTOSCALER_KEEPS_NODES_WITH_LOCAL_STORAGE = _fact(
    "cluster-autoscaler-keeps-nodes-with-local-storage",
    "Cluster Autoscaler (1.35.0) never removes a node running a pod with a hostPath or a non-memory emptyDir "
    "(`--skip-nodes-with-local-storage`, default true) unless the pod is annotated "
    '`cluster-autoscaler.kubernetes.io/safe-to-evict: "true"`, which is checked first. Fluid (v1.0.8) puts an '
    "AlluxioRuntime's `worker.podMetadata.annotations` on the worker pods, whose NVMe level is an emptyDir: the cache "
    "is a cache, so its workers are marked safe to evict. An evictable pod still has to fit on another existing node "
    "in the removal simulation (`NoPlaceToMovePods`), so workers run only on always-on pools (or the smallest nodes), "
    "never alone on an 8-GPU node scaled up from zero.",
    "kubernetes/autoscaler@cluster-autoscaler-1.35.0:cluster-autoscaler/config/flags/flags.go L200, "
    "simulator/cluster.go L126-158 (SimulateNodeRemoval: GetPodsToMove, then findPlaceFor), "
    "utils/drain/drain.go L36, L140-147, simulator/drainability/rules/rules.go L55-70; "
    "fluid-cloudnative/fluid@v1.0.8:pkg/ddc/alluxio/transform.go L250-264",
)

AUTOSCALER_ADDS_NODES_ONLY_FOR_PENDING_PODS = _fact(
    "cluster-autoscaler-does-not-scale-up-to-min-size",
    "Cluster Autoscaler (1.35.0) does not bring a node group below its minimum up to it "
    "(`--enforce-node-group-min-size`, default false): it adds nodes only for pending pods. How GKE runs its own "
    "autoscaler is not published, so a GKE pool must start at its total minimum: its per-zone initialNodeCount times "
    "its zones at least minSize (GKE_NODE_COUNT_PER_ZONE).",
    "kubernetes/autoscaler@cluster-autoscaler-1.35.0:cluster-autoscaler/config/flags/flags.go L74",
)

ALLUXIO_S3_READS_WITH_WEB_IDENTITY = _fact(
    "alluxio-s3-reads-with-the-pods-web-identity",
    "Alluxio 2.9's S3 under-store uses `DefaultAWSCredentialsProviderChain` when no access keys are set; in AWS SDK "
    "for Java 1.11.815 (the version alluxio-parent 2.9.0 pins) that chain is environment, system properties, "
    "`WebIdentityTokenCredentialsProvider` (AWS_ROLE_ARN + AWS_WEB_IDENTITY_TOKEN_FILE, which the EKS pod identity "
    "webhook injects), profile, then the instance role. The web-identity step loads "
    "`com.amazonaws.services.securitytoken.internal.STSProfileCredentialsService` from aws-java-sdk-sts, which "
    "underfs/s3a/pom.xml has declared since Alluxio PR #13173 (April 2021) and the under-store's jar-with-dependencies "
    "bundles unrelocated (maven-shade-plugin without relocations). With ACL inheritance on (the default) it also asks "
    "for ListAllMyBuckets and GetBucketAcl, and falls back to defaults on a denial: the mount turns it off.",
    "org.alluxio:alluxio-parent:2.9.0 pom (aws.amazonaws.version 1.11.815, aws-java-sdk-sts managed); "
    "org.alluxio:alluxio-underfs:2.9.0 pom (shade execution); org.alluxio:alluxio-underfs-s3a:2.9.3 and 2.9.4 poms "
    "(aws-java-sdk-sts; 2.9.0's is not on Maven Central); alluxio-underfs-s3a-2.9.4.jar S3AUnderFileSystem "
    "createAwsCredentialsProvider, getPermissionsInternal; com.amazonaws:aws-java-sdk-core:1.11.815 "
    "DefaultAWSCredentialsProviderChain, STSProfileCredentialsServiceProvider; Alluxio/alluxio#13173; "
    "org.alluxio:alluxio-core-common:2.9.0 PropertyKey UNDERFS_S3_INHERIT_ACL (default true)",
)

FLUID_INJECTION_IS_PER_POD = _fact(
    "fluid-webhook-selects-pods-by-label",
    'Fluid\'s pod webhook (v1.0.8) is called only for pods labelled `serverless.fluid.io/inject: "true"` or '
    '`fuse.serverful.fluid.io/inject: "true"` (objectSelector, no namespaceSelector); `fluid.io/enable-injection` '
    "is read only as a pod label, to skip a pod (`false`). A namespace label of that name does nothing.",
    "fluid-cloudnative/fluid@v1.0.8:charts/fluid/fluid/templates/webhook/webhookconfiguration.yaml L1-48, "
    "pkg/webhook/handler/mutating/mutating_handler.go L90-93, pkg/common/label.go L58-59",
)

VOLCANO_ADMITS_NO_PODS = _fact(
    "volcano-installs-no-pod-webhook-by-default",
    "Volcano's chart (v1.15.1) enables only the admission paths in `custom.enabled_admissions` (default: jobs, "
    "podgroups, queues, hypernodes and cronjobs); its pod webhooks render only when that list names /pods/mutate "
    "or /pods/validate. Every webhook it renders is failurePolicy Fail, so with the admission pods down no Queue, "
    "PodGroup or Job is admitted, while pods are still created. KServe's pod webhook (v0.20.0, failurePolicy Fail) "
    "selects only InferenceService pods.",
    "volcano-sh/volcano@v1.15.1:installer/helm/chart/volcano/values.yaml L58, templates/webhooks.yaml L3, L21, "
    "L293; kserve/kserve@v0.20.0:charts/kserve-resources/files/kserve/resources.yaml L585-610",
)

VOLCANO_UNLISTED_RESOURCES_ARE_UNCAPPED = _fact(
    "volcano-caps-only-the-resources-a-queue-lists",
    "Volcano's proportion plugin (v1.15.1) bounds a queue by realCapability = (cluster total - all guarantees + its "
    "guarantee), lowered per dimension by `capability` with missing dimensions taken as infinite: a scalar resource "
    "the capability does not list (a MIG profile) is bounded only by the cluster. A listed 0 is a cap of 0.",
    "volcano-sh/volcano@v1.15.1:pkg/scheduler/plugins/proportion/proportion.go L120-139, "
    "pkg/scheduler/api/resource_info.go L87-123, L949-985",
)

NVIDIA_VISIBLE_DEVICES_IS_HONOURED = _fact(
    "nvidia-visible-devices-is-honoured-from-any-container",
    "The NVIDIA Container Toolkit (v1.20.0; `accept-nvidia-visible-devices-envvar-when-unprivileged` defaults to "
    "true) exposes the GPUs a container's NVIDIA_VISIBLE_DEVICES names when its runtime is the default one, as on "
    "EKS's NVIDIA node images, where the GPU Operator runs no toolkit and CDI stays off here. The device plugin's "
    "default list strategy is that same variable, and a container's own env is applied after the plugin's, so a "
    "pod that sets NVIDIA_VISIBLE_DEVICES=all on a shared node sees every GPU of it. Tenants have no Kubernetes "
    "access: every pod is one the platform renders, and the policy pack forbids the variable in them.",
    "NVIDIA/nvidia-container-toolkit@v1.20.0:api/config/v1/config.go L64, L106; gpu-operator@v26.7.0 chart values "
    "`cdi.enabled` (components/addons/gpu_operator.py turns it on only with the operator's toolkit)",
)

PULUMI_PATCH_AWAITS = _fact(
    "pulumi-patch-awaits-like-its-kind",
    "A pulumi-kubernetes (v4.34.2) Patch resource waits for its object as the full resource of its kind would (a "
    "DeploymentPatch until the Deployment is Available after the rollout it causes), unless the patch carries the "
    'annotation `pulumi.com/skipAwait: "true"`. The agent flags patch carries it: the agent it rolls out starts only '
    "once its RBAC in Karmada exists, created after the patch.",
    "pulumi_kubernetes 4.34.2 (installed): apps/v1/DeploymentPatch.py class docstring ('This resource waits until its "
    "status is ready'); pulumi/pulumi-kubernetes@v4.32.0:provider/pkg/await/await.go L190-240",
)

EKS_ACCESS_ENTRIES = _fact(
    "eks-api-authentication-admits-only-access-entries",
    "With `authenticationMode: API` only IAM principals with an access entry can use an EKS cluster; "
    "`bootstrapClusterCreatorAdminPermissions` gives one to the principal that created it, nobody else. A CI preview "
    "identity or an operator role needs its own entry and an access policy (AmazonEKSViewPolicy reads, "
    "AmazonEKSClusterAdminPolicy administers): `stacks.access`.",
    "docs.aws.amazon.com/eks/latest/userguide/access-entries.html; docs.aws.amazon.com/eks/latest/userguide/"
    "access-policy-permissions.html",
)

KARMADA_AGENT_IDENTITY = _fact(
    "karmada-agent-identity-as-register-issues-it",
    "`karmadactl register` (v1.18.2) gives a pull member's karmada-agent a client certificate with CN "
    "`system:karmada:agent:<cluster>` and O `system:karmada:agents`, an RSA 3072 key and the usages digital "
    "signature, key encipherment and client auth, and RBAC bound to that user only: its own Cluster and cluster "
    "status by resourceNames, its own Secrets (<cluster>, <cluster>-impersonator) by resourceNames, Works only in "
    "`karmada-es-<cluster>`. The chart's own leaf certificates expire after 43800h, its root CA after 3650 days, "
    "with RSA 3072. The policy pack's karmada-agent-identity and karmada-agent-rbac-scoped rules hold every plan "
    "to it (policies/upstream.py carries the same facts).",
    "karmada-io/karmada@v1.18.2:pkg/karmadactl/register/register.go L88-90, L643-671, L707-745, L779-800, "
    "L846-857, L1097-1112, L1372-1374; charts/karmada/values.yaml L136-155",
)

KSERVE_LLM_PRESETS_MERGE = _fact(
    "kserve-llm-templates-merge-onto-presets",
    "KServe (v0.20.0) runs an LLMInferenceService's pods as its `template` / `prefill.template` strategically "
    "merged onto the well-known LLMInferenceServiceConfig presets: `kserve-config-llm-template` without prefill, "
    "`kserve-config-llm-decode-template` (vLLM on 8001 behind the llm-d routing sidecar on 8000, whose resources "
    "are `{}`) and `kserve-config-llm-prefill-template` with it; the presets set the image, probes and a "
    "restricted security context, and label the pods app.kubernetes.io/{component,name,part-of}, "
    "kserve.io/component=workload and llm-d.ai/role. So the decode template gives the sidecar resources (a GPU pod "
    "stays Guaranteed) and the pack judges the merged pods.",
    "kserve/kserve@v0.20.0:pkg/controller/v1alpha2/llmisvc/config_merge.go L228-262, L779-829; "
    "workload_single_node.go L95-97, L222-229, L503-509; config/llmisvcconfig/config-llm-{template,"
    "decode-template,prefill-template}.yaml (vendored)",
)

VLLM_RUNTIME_LORA_ENV = _fact(
    "vllm-runtime-lora-updating-env",
    "vLLM reads VLLM_ALLOW_RUNTIME_LORA_UPDATING as `.strip().lower() in ('1', 'true')`; when on, its OpenAI "
    "server serves POST /v1/load_lora_adapter and /v1/unload_lora_adapter, loading an adapter from any path the "
    "caller names. The platform never sets it; the pack refuses it in production.",
    "vllm-project/vllm:vllm/envs.py (VLLM_ALLOW_RUNTIME_LORA_UPDATING), vllm/entrypoints/serve/lora/api_router.py "
    "(read from the repository's default branch; the pinned v0.27.1 wheel was not unpacked)",
)
