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
