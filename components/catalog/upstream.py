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
