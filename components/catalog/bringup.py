"""What each component waits on when a stack first comes up, and what must exist before: one fact per component.

`tools/rollout/bringup.py` walks an environment's stacks in wave order and checks, for every thing a stack waits
on (a Helm release that waits, a Pulumi await, a rollout gate), that each precondition stated here is created by
that stack before it, by an earlier wave, or by the cloud. A statement says what the pinned upstream does; the
source is where it was read (`repo@tag:path Lx-y`, or a documentation page). Refresh with the pins.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BringUpFact:
    name: str
    component: str  # what waits (or is waited for)
    statement: str
    source: str


FACTS: dict[str, BringUpFact] = {}


def _fact(name: str, component: str, statement: str, source: str) -> BringUpFact:
    fact = BringUpFact(name, component, statement, source)
    FACTS[name] = fact
    return fact


HELM_RELEASE_WAITS = _fact(
    "helm-release-waits-for-its-workloads",
    "pulumi-kubernetes helm.v3.Release",
    "A Release waits until every resource it installs is ready (Deployments available, Jobs of hooks complete) "
    "unless `skipAwait` is set; with `atomic` a release that is not ready within `timeout` is rolled back and the "
    "`pulumi up` fails. So whatever its pods need at start must exist before the release, in its stack or earlier.",
    "pulumi_kubernetes 4.34.2 (installed): helm/v3/Release.py L65 (`atomic` disables `skipAwait`), L89 (`skip_await`)",
)

PULUMI_CREATE_IS_CLIENT_SIDE = _fact(
    "pulumi-kubernetes-creates-client-side",
    "pulumi-kubernetes object create",
    "Since v4.29.0 a (non-Patch) resource is created with a client-side create, not an upsert: if a controller "
    "created an object of that name first, `pulumi up` fails with AlreadyExists. An object an agent may also "
    "create must be created by the program before the agent can.",
    "pulumi/pulumi-kubernetes@v4.32.0:provider/pkg/await/await.go L190 (apply only for upserts and Patch "
    "resources), L241-252 (client.Create otherwise); commit 0d18fe4f 'Use client-side create to prevent silent "
    "upsert of existing objects (#4278)', first in sdk/v4.29.0",
)

PULUMI_PATCH_DELETE_RELINQUISHES = _fact(
    "pulumi-patch-delete-removes-its-fields",
    "pulumi-kubernetes *Patch (destroy)",
    "Deleting a Patch resource applies an empty object with the patch's field manager (ssa.Relinquish): every field "
    "that manager alone owns is removed from the live object, a field it took over with pulumi.com/patchForce "
    "included. `retainOnDelete` skips the provider's Delete (on destroy and on the delete half of a replace).",
    "pulumi/pulumi-kubernetes@v4.32.0:provider/pkg/await/await.go L958-961, provider/pkg/ssa/actions.go L34-57 "
    "(unchanged on main 94977969); pulumi.com/docs/iac/concepts/options/retainondelete",
)

LOAD_BALANCER_OPEN_WITHOUT_SOURCE_RANGES = _fact(
    "load-balancer-without-source-ranges-is-open",
    "Service type LoadBalancer",
    "A LoadBalancer Service with no `spec.loadBalancerSourceRanges` (and no source-ranges annotation) admits "
    "0.0.0.0/0: removing the field opens the load balancer to the internet.",
    "kubernetes/kubernetes@v1.33.13 staging k8s.io/cloud-provider@v0.33.13:service/helpers/helper.go L40, L61-85",
)

KARMADA_AGENT_STARTS = _fact(
    "karmada-agent-needs-karmada-at-start",
    "karmada-agent (chart karmada v1.18.2, installMode agent)",
    "At start karmada-agent lists every Cluster in the Karmada API (Validate), then with the default "
    "--report-secrets=KubeCredentials,KubeImpersonator creates cluster-admin ServiceAccounts on its member and "
    "pushes their tokens to Karmada as Secrets, then creates or re-registers its Cluster; any error exits the "
    "process. So it needs, before it starts: RBAC in the Karmada API for `system:karmada:agent:<cluster>`, the "
    "Karmada API reachable from the member (the host in-cluster, any other member through the API's load-balancer "
    "allowlist), and its Cluster created by the program first if the program declares it. The chart renders a "
    "liveness probe and no readiness probe, and has no value for --report-secrets; --report-secrets=None leaves "
    "both tokens on the member and `spec.secretRef` unset.",
    "karmada-io/karmada@v1.18.2:cmd/agent/app/agent.go L181-200, L449-498; pkg/util/cluster.go L82-119; "
    "pkg/util/credential.go L57-134, L137-211; cmd/agent/app/options/options.go L202; "
    "charts/karmada/templates/karmada-agent.yaml L72-75, L106-127",
)

KARMADA_MEMBER_READY = _fact(
    "karmada-cluster-ready-from-its-agent",
    "Karmada Cluster (pull mode)",
    "A pull member's Cluster turns Ready=True only when its agent's cluster-status controller reports it: the "
    "agent must have started (its RBAC and reach to Karmada) and registered the Cluster.",
    "karmada-io/karmada@v1.18.2:pkg/controllers/status/cluster_status_controller.go L194, L456-466",
)

KARMADA_PUSH_MEMBER_READY = _fact(
    "karmada-push-cluster-ready-from-the-control-plane",
    "Karmada Cluster (push mode): karmada-controller-manager v1.18.2, cluster-status controller",
    "A push member's Cluster turns Ready=True only when karmada-controller-manager's cluster-status controller "
    "reports it. That controller takes only Clusters with syncMode Push and a secretRef, once the cluster "
    "controller has put its finalizer on them; it builds a client from the Cluster's apiEndpoint and the Secret "
    "its secretRef names in the Karmada API (`token`, the bearer token; `caBundle`, the member's CA, unless "
    "insecureSkipTLSVerification) and asks the member's /readyz (else /healthz): a missing apiEndpoint, Secret "
    "or key sets Ready=False (StatusCollectionFailed), no answer Ready=False (ClusterNotReachable), any status "
    "but 200 Ready=False (ClusterNotReady). So it needs: the control plane running (the host's release), the "
    "Cluster and its Secret in Karmada, the member's service-account token populated on the member (its account "
    "bound there to list and watch nodes and pods, which the controller's cluster resource modeling, on by default, "
    "reads before it writes Ready, and to write every kind the execution controller propagates), and the "
    "member's API server reachable from the control plane's pods on the host: through the host's NAT egress, "
    "which a member's public endpoint must admit (EKS publicAccessCidrs, GKE master authorized networks); the "
    "host itself is reached by its in-cluster address (https://kubernetes.default.svc, in EKS's and GKE's API "
    "server certificates), which its pods reach whatever its public endpoint admits. No agent and no RBAC in "
    "Karmada; "
    "impersonatorSecretRef is read by the cluster proxy and the unified-auth controller only.",
    "karmada-io/karmada@v1.18.2:cmd/controller-manager/app/controllermanager.go L320-376; "
    "pkg/controllers/status/cluster_status_controller.go L153-164, L190-209, L432-467; "
    "pkg/util/membercluster_client.go L110-128, L191-235; pkg/apis/cluster/v1alpha1/types.go L247-250; "
    "pkg/controllers/cluster/cluster_controller.go L202-218, L366-376; cluster_status_controller.go L226-229, "
    "L263-271, cmd/controller-manager/app/options/options.go L218 (enable-cluster-resource-modeling); "
    "pkg/controllers/execution/execution_controller.go L125; "
    "docs.aws.amazon.com/eks/latest/userguide/cluster-endpoint.html (publicAccessCidrs)",
)

CLUSTERPEDIA_MEMBER_HEALTHY = _fact(
    "clusterpedia-indexes-a-member-it-reaches-from-the-host",
    "Clusterpedia v0.9.0 PediaCluster: clustersynchro-manager on the federation host",
    "Clusterpedia has no agent on a member: for each PediaCluster its synchro manager, in its pod on the host, dials "
    "the PediaCluster's `apiserver` with its credentials. A member it cannot reach at first is never synced: creating "
    "the cluster's synchro asks the member's /version, and its failure sets SynchroRunning=False (reason "
    "InitialFailed) and ClusterHealthy=Unknown (MonitorStop), so Ready=False, retried forever (after 2, 4, 8, 15 and "
    "15 s, then every 1 to 2 min): an endpoint opened late is picked up within about two minutes. Once running, its "
    "monitor asks /readyz (else /healthz) every 5 s (jittered) with a 5 s timeout; a member lost then shows "
    "ClusterHealthy=False (NotReachable) and its synchros stop until it answers. Ready is True only while "
    "Validated, SynchroRunning and ClusterHealthy all are; the rollout's gate waits for each PediaCluster its wave "
    "created to be Ready, read on the host. So a member other than the host must admit the host's NAT egress on "
    "its public endpoint (EKS publicAccessCidrs, GKE master authorized networks); the host indexes itself by its "
    "in-cluster API.",
    "clusterpedia-io/clusterpedia@v0.9.0: pkg/synchromanager/clustersynchro/cluster_synchro.go L84-L124 (New: the "
    "discovery manager and the checker are the PediaCluster's config), pkg/runtime/discovery/dynamic_discovery.go "
    "L73-L82 (ServerVersion); pkg/synchromanager/clustersynchro_manager.go L86-L88, L696-L722 (the retries), "
    "L473-L503 (InitialFailed, MonitorStop, requeued forever), L638-L663 (Ready); pkg/synchromanager/clustersynchro/"
    "cluster_monitor.go L22 (5 s, jitter 0.5), L37-L58 (NotReachable, stopRunner), L108-L113 (/readyz, /healthz); "
    "staging/src/github.com/clusterpedia-io/api/cluster/v1alpha2/types.go L11, L32; "
    "docs.aws.amazon.com/eks/latest/userguide/cluster-endpoint.html (publicAccessCidrs)",
)

KARMADA_HOST_HOOKS_NEED_BASH = _fact(
    "karmada-host-hooks-run-bash-in-the-kubectl-image",
    "karmada control plane (chart karmada v1.18.2, installMode host)",
    "In host mode the release waits on its static-resource Job and on Deployments whose `wait` init containers "
    "run `/bin/sh -c 'bash <<EOF ... kubectl ...; sleep 2'` in `kubectl.image` (the etcd wait runs the same with "
    "curl in `cfssl.image`): the image must carry /bin/sh, bash, sleep and kubectl, or the release never becomes "
    "ready.",
    "karmada-io/karmada@v1.18.2:charts/karmada/templates/_helpers.tpl L647-694; "
    "templates/karmada-static-resource-job.yaml L36-56",
)

KUBECTL_IMAGE_HAS_NO_SHELL = _fact(
    "registry-k8s-io-kubectl-has-no-shell",
    "registry.k8s.io/kubectl",
    "registry.k8s.io/kubectl at v1.35.2 (and v1.33.13) is FROM the go-runner image (kubectl is built statically) "
    "with /bin/kubectl added; go-runner v2.4.0-go1.25.x-bookworm.0 is FROM gcr.io/distroless/static-debian12 with "
    "only /go-runner: no /bin/sh, no bash. The bash and jq of kubernetes/kubernetes#119592 (1.28) are not in the "
    "image's build definition at these tags.",
    "kubernetes/kubernetes@v1.35.2:build/server-image/kubectl/Dockerfile L17-23, build/common.sh L84, L97, L101-107, "
    "L115, hack/lib/golang.sh L319-332, L354-367; kubernetes/release@6f1db24a:images/build/go-runner/variants.yaml "
    "(go1.25-bookworm: DISTROLESS_IMAGE static-debian12), images/build/go-runner/Dockerfile L71-77",
)

ALPINE_K8S_IMAGE_HAS_BASH = _fact(
    "alpine-k8s-image-has-bash-and-kubectl",
    "docker.io/alpine/k8s",
    "alpine/k8s is FROM alpine (busybox: /bin/sh, sleep) and installs bash with apk and kubectl of its tag's "
    "version from dl.k8s.io: what the Karmada chart's hook scripts run. The tag 1.34.1 was built from the "
    "Dockerfile at 9431d53 (2025-09-25); its manifest-list digest sha256:ec714df3...065547f is the one four "
    "independent public repositories pin (not verified against the registry, which is not reachable here).",
    "alpine-docker/k8s@9431d53:Dockerfile L1, L29 ('apk add --update --no-cache curl ca-certificates bash git'), "
    "L43-46 (kubectl); the digest: public manifests pinning docker.io/alpine/k8s:1.34.1@sha256:ec714df3813b540"
    "5292860f8a1c55c5727bf8c33c88992f1e981efad8065547f",
)

EKS_PRIVATE_ENDPOINT_ADMITS_ITS_SECURITY_GROUP = _fact(
    "eks-cluster-security-group-admits-only-itself",
    "EKS API server (private endpoint)",
    "EKS creates the cluster security group with one inbound rule: all traffic from itself. A runner inside the "
    "VPC with any other security group is refused on 443 by the private endpoint until a rule admits its "
    "address; with `endpointPublicAccess: false` the API is reachable only from inside the VPC (or a link into "
    "it).",
    "docs.aws.amazon.com/eks/latest/userguide/sec-group-reqs.html (Default cluster security group); "
    "docs.aws.amazon.com/eks/latest/APIReference/API_VpcConfigRequest.html (endpointPublicAccess)",
)

GKE_PRIVATE_ENDPOINT_AUTHORIZED_NETWORKS = _fact(
    "gke-private-endpoint-admits-authorized-networks",
    "GKE API server (private endpoint)",
    "A private GKE control plane with `enablePrivateEndpoint` answers only on its private address, to sources in "
    "the master authorized networks (the node subnet is authorized by listing it); without global access only "
    "from the cluster's region.",
    "cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks; "
    "cloud.google.com/kubernetes-engine/docs/concepts/network-isolation",
)

ENVOY_GATEWAY_LISTENER_NEEDS_ITS_SECRET = _fact(
    "envoy-gateway-https-listener-needs-its-secret",
    "Envoy Gateway v1.9.0 HTTPS listener",
    "An HTTPS listener whose certificateRefs name a Secret that does not exist gets ResolvedRefs=False "
    "(InvalidCertificateRef) and is not programmed: the gateway serves nothing on it until the kubernetes.io/tls "
    "Secret exists.",
    "envoyproxy/gateway@v1.9.0:internal/gatewayapi/validate.go L374-395, L515-522",
)

CERT_MANAGER_ISSUES_INTO_A_SECRET = _fact(
    "cert-manager-certificate-writes-its-secret",
    "cert-manager v1.21.1 Certificate",
    "A Certificate makes cert-manager write `spec.secretName` (type kubernetes.io/tls) in the Certificate's "
    "namespace once its issuer signs; a ClusterIssuer of kind CA signs with the key pair in Secret `spec.ca."
    "secretName`, read from the cluster resource namespace (by default the namespace cert-manager runs in).",
    "cert-manager/cert-manager@v1.21.1: deploy/crds cert-manager.io_certificates.yaml (spec.secretName), "
    "cert-manager.io_clusterissuers.yaml (spec.ca.secretName); cert-manager.io/docs/configuration/ca/ "
    "('cluster resource namespace')",
)

DNS_NAME_PUBLISHED = _fact(
    "gateway-hostname-needs-a-record",
    "rollout gateway gate / tenants",
    "`https://<region>.<gateway.domain>/v1` resolves only once a record for the name exists in a zone that serves "
    "the domain; nothing in Kubernetes or Envoy Gateway publishes one.",
    "envoyproxy/gateway@v1.9.0: the Gateway's status.addresses is the only place its load balancer address "
    "appears (internal/gatewayapi/status/gateway.go L103-112); RFC 1034 §3.6 (names resolve from records of their "
    "zone)",
)

KSERVE_READY_ON_THE_SERVING_OBJECT = _fact(
    "kserve-model-ready-on-its-serving-object",
    "KServe v0.20.0 InferenceService / LLMInferenceService",
    "KServe reports a model's readiness as the Ready condition (a living condition set) of the object that serves "
    "it: an InferenceService (serving.kserve.io/v1beta1) for an aggregated model, an LLMInferenceService "
    "(serving.kserve.io/v1alpha2) for a disaggregated one (whose Ready needs a route of KServe's own: without one, "
    "its WorkloadsReady and SchedulerWorkloadReady, kserve-llmisvc-ready-needs-its-own-route). A gate waiting on the "
    "other kind, or on an object no stack has created yet, never passes.",
    "kserve/kserve@v0.20.0:pkg/apis/serving/v1beta1/inference_service_status.go L36-43, L295; "
    "pkg/apis/serving/v1alpha2/llm_inference_service_lifecycle.go L125",
)

KSERVE_DELETES_MULTI_NODE_WORKERS = _fact(
    "kserve-v0-20-deletes-multi-node-workers",
    "KServe v0.20.0 InferenceService (Standard mode, predictor.workerSpec)",
    "In Standard mode each reconcile of an InferenceService makes its Deployments and then cleans up 'orphaned' "
    "predictor Deployments and Services: every one labelled serving.kserve.io/inferenceservice=<name> and "
    "component=predictor whose name is neither the predictor's nor a canary's. A multi-node replica's worker "
    "Deployment (<name>-predictor-worker) and its head and worker headless Services carry exactly those labels, "
    "which KServe sets itself, so they are deleted on every reconcile and made again: the workers never stay up and "
    "the InferenceService never turns Ready (kserve/kserve#6113, a regression of v0.20.0; fixed on master by #5899, "
    "in no release at the pin). A gate waiting for such a model never passes.",
    "kserve/kserve@v0.20.0:pkg/controller/v1beta1/inferenceservice/components/predictor.go L228-L233 "
    "(reconcileCanaryDeployments after every raw reconcile), L913-L923 (the names kept), L1002-L1037 (the "
    "deletions), L533-L546 (the worker's labels); seen in a rehearsal of the multi-node option on 2026-12-04 (the "
    "controller's log: 'Deleting orphaned predictor deployment llama-3-1-70b-predictor-worker', 101 and 207 times)",
)

PULUMI_ENGINE_READS_ITS_STACKS_CONFIG = _fact(
    "pulumi-engine-reads-the-stacks-own-config",
    "Pulumi engine (`pulumi up -s <stack>`)",
    "The engine takes `pulumi:` keys such as `pulumi:disable-default-providers` from the config of the stack being "
    "updated (its `Pulumi.<stack>.yaml` or backend config); a program that reads another file for its environment "
    "does not hand them to the engine. Without the key a resource with no explicit provider silently gets a default "
    "one, configured from the runner's ambient credentials and region.",
    "pulumi.com/docs/iac/concepts/resources/providers/#disabling-default-providers ('pulumi config set --path "
    'pulumi:disable-default-providers[0] "*"\' sets it per stack)',
)

GKE_MULTI_NETWORK_CRDS = _fact(
    "gke-serves-the-multi-network-crds",
    "GKE multi-networking",
    "A GKE cluster created with multi-networking enabled serves the networking.gke.io Network and "
    "GKENetworkParamSet kinds itself: nothing is installed for them, they exist once the cluster does.",
    "cloud.google.com/kubernetes-engine/docs/how-to/setup-multinetwork-support-for-pods ('Create a "
    "GKENetworkParamSet', 'Create a Network' after creating the cluster with --enable-multi-networking)",
)

STACK_KEYS_SET_BY_PATH = _fact(
    "pulumi-config-set-path-sets-one-leaf",
    "Pulumi CLI config (`pulumi config set --path`)",
    "`pulumi config set --path 'inference-platform:gateway.externalProviders[0].apiKey' <v> -s <stack>` writes "
    "only that leaf into the stack's own settings file: `gateway: {externalProviders: [{apiKey: ...}]}`. The engine "
    "hands the program that structured value as the whole `gateway` key; a program that reads its environment "
    "from Pulumi.<env>.yaml must set the stack's keys into it by path, or the leaf replaces the object.",
    "pulumi.com/docs/iac/concepts/config/#structured-configuration ('--path ... sets a value within a structured "
    "configuration value')",
)

CFSSL_IMAGE_HAS_BASH_AND_CURL = _fact(
    "cfssl-image-has-bash-and-curl",
    "docker.io/cfssl/cfssl",
    "cfssl/cfssl v1.6.5 is FROM golang:1.20, a Debian (buildpack-deps) image with bash and curl: what the chart's "
    "etcd wait loop runs.",
    "cloudflare/cfssl@v1.6.5:Dockerfile L1; docker-library/golang 1.20 Dockerfiles FROM buildpack-deps:*-scm",
)

# The images the Karmada chart's hook and wait scripts run in (registry/repository), and what each is known to hold.
SCRIPT_IMAGES: dict[str, tuple[bool, BringUpFact]] = {  # image -> (has /bin/sh and bash, the fact)
    "docker.io/alpine/k8s": (True, ALPINE_K8S_IMAGE_HAS_BASH),
    "docker.io/cfssl/cfssl": (True, CFSSL_IMAGE_HAS_BASH_AND_CURL),
    "registry.k8s.io/kubectl": (False, KUBECTL_IMAGE_HAS_NO_SHELL),
}

PULUMI_TARGETED_CREATE = _fact(
    "pulumi-targeted-up-creates-only-closed-targets",
    "Pulumi engine (`pulumi up --target`)",
    "A targeted update skips the create of every resource not targeted, but targets every provider implicitly; a "
    "step (a provider's included) whose parent, `dependsOn`, property dependency or provider is such a skipped "
    "create fails the update with 'untargeted create'. `--target-dependents` targets every resource depending on a "
    "target, transitively (from a network: the cluster and all after it). So a network-first step must register "
    "only resources whose parents, dependencies and providers it also creates.",
    "pulumi/pulumi pkg@v3.274.0:resource/deploy/step_generator.go L1381-1396 (providers and the root stack "
    "implicitly targeted), L1874-1878 (an untargeted create is skipped), L529-590 ('untargeted create'), L174-201 "
    "(--target-dependents); resource/state.go L366-392 (the parent is a dependency); "
    "engine/lifecycletest/target_test.go L2905-2923",
)

KARMADA_CREATES_THE_EXECUTION_NAMESPACE = _fact(
    "karmada-cluster-controller-creates-its-execution-namespace",
    "karmada-controller-manager cluster controller (v1.18.2)",
    "On every reconcile of a Cluster the controller gets Namespace `karmada-es-<cluster>` in the Karmada API and "
    "creates it (labelled karmada.io/system=true) when it does not exist; it creates nothing when it exists. With "
    "client-side creates (pulumi-kubernetes-creates-client-side) a program's create of that namespace after its "
    "Cluster races the controller: it must come before the Cluster, or not at all.",
    "karmada-io/karmada@v1.18.2:pkg/controllers/cluster/cluster_controller.go L202-208 (syncCluster first creates "
    "the execution space), L381-402 (get, create only when not found); pkg/util/constants.go L56-58",
)

PULUMI_KUBERNETES_REACHES_ITS_CLUSTER_AT_CONFIGURE = _fact(
    "pulumi-kubernetes-reaches-its-cluster-once-at-configure",
    "pulumi-kubernetes provider (Configure)",
    "The provider asks the API server for its version and resource schemas once, when it is configured; on an "
    "error it marks the cluster unreachable for the whole update and every Create then fails with 'configured "
    "Kubernetes cluster is unreachable' (no retry). A provider whose API is a cloud load balancer created minutes "
    "earlier (an NLB answers only once its DNS name resolves and its targets pass health checks) must be "
    "configured only after a wait that reaches the API through that load balancer.",
    "pulumi/pulumi-kubernetes@v4.32.0:provider/pkg/provider/provider.go L225-243 (getResources, no retry), "
    "L987-999 (discovery at Configure; error -> clusterUnreachable), L1704-1708 (Create fails when unreachable); "
    "unchanged on main 94977969 but for a lint comment; docs.aws.amazon.com/elasticloadbalancing/latest/network/"
    "target-group-health-checks.html (targets receive traffic once healthy)",
)

EXTERNAL_DNS_KEEPS_A_ZONE = _fact(
    "external-dns-writes-only-zones-its-filters-keep",
    "ExternalDNS v0.15.1 (aws and google providers)",
    "ExternalDNS writes a name only into a zone its filters keep. AWS: a hosted zone passes --zone-id-filter (a "
    "suffix of its id), --aws-zone-type, and --domain-filter matched against the zone's own name (the zone is the "
    "filter or under it); a parent zone of the filter passes only with --aws-zone-match-parent (default off). "
    "Google: a managed zone passes only when --domain-filter matches its DNS name, its visibility and "
    "--zone-id-filter (its id or name); there is no parent matching. A name the kept zones do not serve is not "
    "published, and nothing reports it as an error.",
    "kubernetes-sigs/external-dns@v0.15.1:provider/aws/aws.go L345-361; pkg/apis/externaldns/types.go L100, L250, "
    "L484 (aws-zone-match-parent, default false); endpoint/domain_filter.go L95-125 (Match), L209-228 (MatchParent); "
    "provider/google/google.go L175-201; provider/zone_id_filter.go L32-46",
)

CUSTOM_RESOURCE_AFTER_ITS_CHARTS_CRDS = _fact(
    "custom-resource-after-the-release-that-installs-its-crd",
    "Helm v3.20.2 install (pulumi-kubernetes helm.v3.Release)",
    "An API server accepts an object of a custom kind only once a CRD (or an aggregated API) serves it. A release "
    "installs its chart's CRDs: those in the crds/ directories of the chart and of each subchart its values enable, "
    "first (none with skipCrds), and CRDs among its templates before the other templates; a subchart its condition "
    "disables, or a template a value gates off, installs none. So an object of a kind a chart installs is created "
    "after a release of that chart, with values that install the kind, on the cluster that serves it: in its stack's "
    "dependency closure or an earlier wave.",
    "helm/helm@v3.20.2 (pulumi-kubernetes v4.32.0 provider/go.mod L30, and on main 94977969): "
    "pkg/action/install.go L250-252 (disabled subcharts dropped), L259-268 (crds/ first, unless SkipCRDs), "
    "L161-187 (created, then waited for up to 60 s); pkg/chart/chart.go L154-168 (subcharts' crds/ too); "
    "pkg/releaseutil/kind_sorter.go L31-46 (InstallOrder: CustomResourceDefinition before the rest); "
    "pulumi/pulumi-kubernetes@v4.32.0:provider/pkg/provider/helm_release.go L619 (skipCrds is SkipCRDs)",
)

WEBHOOK_SERVES_BEFORE_WHAT_IT_ADMITS = _fact(
    "webhook-serves-before-what-it-admits",
    "kube-apiserver admission webhooks (failurePolicy Fail) of a Helm release",
    "An object a release's webhook admits with failurePolicy Fail is refused ('no endpoints available for service', "
    "or a refused connection) until the webhook's Service has a ready endpoint, which the endpoints controller adds "
    "after the pods turn Ready; the release's wait ends on the pods, and neither Pulumi's create nor Helm's install "
    "of a later release retries the refusal. So what such a webhook admits, created in the release's stack, waits "
    "for a Service or ServicePatch of the webhook's name that Pulumi awaits (ready, settled endpoints); a release "
    "whose own hook calls its webhook before the install ends (cert-manager's startupapicheck) needs none.",
    "k8s.io/apiserver@v0.33.13:pkg/util/proxy/proxy.go L55-L79; pulumi/pulumi-kubernetes@v4.32.0:"
    "provider/pkg/await/service.go L318-L366, L402-L425, provider/pkg/await/await.go L168-L273 (a create is retried "
    "only on NotFound and NoMatch, not on an admission refusal); helm.sh/helm/v3@v3.20.2:pkg/kube/ready.go L253; cert-manager/cert-manager@v1.21.1:"
    "deploy/charts/cert-manager/templates/startupapicheck-job.yaml L62-L65, values.yaml L1575-L1578",
)
