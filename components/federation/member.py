"""One member cluster joined to Karmada, in pull or push mode.

- pull (default): the karmada chart in agent mode runs karmada-agent on the member; it dials the Karmada
  API server (through the member's NAT; the member's own API server stays private) with a client
  certificate of the federation's CA for the identity `system:karmada:agent:<cluster>`. At start it needs
  its RBAC in Karmada and the Karmada API reachable (KARMADA_AGENT_STARTS, components/catalog/bringup.py),
  which the host's stack provides for the host in the first wave and the global stack for every other
  member in the last one (its NAT address joins the API's allowlist only there). So the agent's release
  does not wait for the agent; the rollout's gates do (the host's in its own wave, every member's in the
  global one). The agent registers the member: it creates or re-registers the `Cluster` named after it,
  and exits unless that Cluster's `spec.id` is the member's kube-system Namespace UID
  (KARMADA_AGENT_REGISTERS). The program creates the Cluster first, with that id and the labels no agent
  flag sets, and grants the RBAC only after it: no agent can create the Cluster before the program does
  (PULUMI_CREATE_IS_CLIENT_SIDE). The agent reports no credentials (--report-secrets=None): pull mode has
  Karmada reach the member only through the agent, so no member token is pushed to Karmada, and the RBAC
  grants no Secrets at all.
- push: the program declares the member's `Cluster` (labels, location fields, `secretRef`); the control
  plane dials the member's API server with a service-account token of the member, handed over in the
  Secret the Cluster's `secretRef` names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.catalog.charts import CHARTS, KARMADA_VERSION
from components.catalog.regions import Cloud
from components.federation.certificates import AGENT_USER_PREFIX, KeyPair
from components.federation.control_plane import KARMADA_NAMESPACE
from components.federation.manifests import CLUSTER_API
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import chart_patch_skips, helm_release, namespace
from components.k8s.inputs import InputError
from platform_catalog.names import KARMADA_CLUSTER_NAMESPACE, KARMADA_PUSH_SERVICE_ACCOUNT

AGENT_RELEASE = "karmada-agent"  # the chart names the Deployment and its container after the release
# Pull mode needs no member credentials in Karmada (KARMADA_AGENT_STARTS): the chart has no value for the flag.
AGENT_FLAGS = ["--report-secrets=None"]
EXECUTION_NAMESPACE_PREFIX = "karmada-es-"
# The agent reads its Karmada kubeconfig once, at start (karmada-io/karmada@v1.18.2:cmd/agent/app/agent.go L154):
# a pod annotation of its certificate's digest restarts it when `pulumi up` reissues the certificate.
AGENT_CERTIFICATE_ANNOTATION = "inference-platform.io/agent-certificate-sha256"
KARMADA_SYSTEM_LABEL = "karmada.io/system"  # karmada-io/karmada@v1.18.2:pkg/util/constants.go L56-58
RBAC_API = "rbac.authorization.k8s.io"


# The host's own API as its pods dial it (a push member's Cluster, Clusterpedia's host entry): they reach it there
# whatever its public endpoint admits, which the host's own NAT egress may not be (catalog.bringup
# KARMADA_PUSH_MEMBER_READY); the name is in EKS's and GKE's API server certificates, signed by the cluster's CA.
IN_CLUSTER_API = "https://kubernetes.default.svc"


def api_endpoint(endpoint: str) -> str:
    """A cluster's API server as a URL (a Karmada Cluster's apiEndpoint, a PediaCluster's apiserver): EKS reports its
    endpoint as one, GKE as a bare address."""
    return endpoint if endpoint.startswith("https://") else f"https://{endpoint}"


def agent_secret_values(key_pem: pulumi.Input[str]) -> dict[str, Any]:
    """The agent's private key, for the chart's secret values file."""
    return {"agent": {"kubeconfig": {"key": key_pem}}}


def agent_rules(cluster: str) -> list[dict[str, Any]]:
    """Cluster-wide permissions of a member's agent in Karmada: karmadactl register's, less creating Clusters."""
    karmada = "cluster.karmada.io"
    return [
        {
            "apiGroups": [karmada],
            "resources": ["clusters"],
            "resourceNames": [cluster],
            "verbs": ["get", "update", "patch", "delete"],
        },
        # No create: the program creates the Cluster before this RBAC exists (PULUMI_CREATE_IS_CLIENT_SIDE).
        {"apiGroups": [karmada], "resources": ["clusters"], "verbs": ["list", "watch"]},
        {"apiGroups": [karmada], "resources": ["clusters/status"], "resourceNames": [cluster], "verbs": ["update"]},
        {
            "apiGroups": ["config.karmada.io"],
            "resources": ["resourceinterpreterwebhookconfigurations", "resourceinterpretercustomizations"],
            "verbs": ["get", "list", "watch"],
        },
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]},
        {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"], "verbs": ["get", "create"]},
        {"apiGroups": [""], "resources": ["services"], "verbs": ["list", "watch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["patch", "create", "update"]},
    ]


@dataclass(frozen=True, kw_only=True)
class PullAgent:
    """pull: karmada-agent runs on the member and dials the control plane with its own client certificate."""

    # URL the member's agent dials: the load balancer, or the in-cluster service on the host itself.
    karmada_server: pulumi.Input[str]
    # The federation CA's certificate and the agent's client certificate, signed by the control plane.
    ca_cert: pulumi.Input[str]
    agent_cert: KeyPair
    # The host's karmada-system, created by the control plane: one cluster cannot hold two creators of it.
    host_namespace: k8s.core.v1.Namespace | None = None

    def __post_init__(self) -> None:
        if isinstance(self.karmada_server, str) and not self.karmada_server.startswith("https://"):
            raise InputError(
                "sync.karmada_server", f"the agent dials Karmada's API over TLS: https://…, not {self.karmada_server!r}"
            )


@dataclass(frozen=True, kw_only=True)
class PushAgent:
    """push: the control plane dials the member, with a service-account token made on the member."""


@dataclass(frozen=True, kw_only=True)
class KarmadaAgentArgs:
    member: ClusterHandle
    sync: PullAgent | PushAgent
    production: bool
    # What the release needs first on the member's own cluster (the host: its control plane's release).
    depends_on: Sequence[pulumi.Resource] = ()


class KarmadaAgent(pulumi.ComponentResource):
    """The member's side of joining Karmada: karmada-agent (pull), or the account Karmada dials with (push)."""

    # push: the member's service-account token and CA, which the Karmada side hands to the control plane.
    push_credentials: pulumi.Output[dict[str, str]] | None
    # pull: the agent deployed with its flags; its RBAC in Karmada must come after (none of its pods may start
    # with the chart's default flags and the RBAC in place).
    deployed: list[pulumi.Resource]

    def __init__(self, name: str, args: KarmadaAgentArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:federation:KarmadaAgent", name, None, opts)
        member = args.member
        self.push_credentials = None
        self.deployed = []
        match args.sync:
            case PullAgent() as pull:
                release = self._agent(args, pull)
                self.deployed = [release, self._flags(member, release)]
            case PushAgent():
                self.push_credentials = self._push_account(member)
        self.register_outputs({"cluster": member.name, "syncMode": sync_mode(args.sync)})

    def _agent(self, args: KarmadaAgentArgs, pull: PullAgent) -> k8s.helm.v3.Release:
        """karmada-agent on the member, with its own client certificate; it registers the member's Cluster.

        The release does not wait: the agent becomes ready only once Karmada grants its RBAC, which for every
        member but the host a later stack creates. Pods are replaced, never surged, on a change (Recreate), so
        no pod of the chart's default flags outlives the flag patch."""
        member, cert = args.member, pull.agent_cert
        ns = pull.host_namespace or namespace(KARMADA_NAMESPACE, member, self, "baseline")
        return helm_release(
            AGENT_RELEASE,
            CHARTS["karmada"],
            member,
            ns,
            {
                "installMode": "agent",
                "karmadaImageVersion": KARMADA_VERSION,
                "agent": {
                    "clusterName": member.name,
                    "clusterEndpoint": member.endpoint.apply(api_endpoint),
                    "kubeconfig": {"caCrt": pull.ca_cert, "crt": cert.cert_pem, "server": pull.karmada_server},
                    "podAnnotations": {
                        AGENT_CERTIFICATE_ANNOTATION: pulumi.Output.from_input(cert.cert_pem).apply(
                            lambda pem: hashlib.sha256(pem.encode()).hexdigest()
                        )
                    },
                    "replicaCount": 2 if args.production else 1,
                    "image": {"tag": KARMADA_VERSION},
                    "strategy": {"type": "Recreate", "rollingUpdate": None},
                },
            },
            parent=self,
            depends_on=list(args.depends_on),
            secret_values=agent_secret_values(cert.key_pem),
            wait=False,
        )

    def _flags(self, member: ClusterHandle, release: k8s.helm.v3.Release) -> k8s.apps.v1.DeploymentPatch:
        """--report-secrets=None as container args (the chart sets only `command`, so Helm upgrades keep them).
        It does not wait for the rollout: the agent starts once its RBAC exists, created after this."""
        return k8s.apps.v1.DeploymentPatch(
            f"{member.name}-karmada-agent-flags",
            metadata={
                "name": AGENT_RELEASE,
                "namespace": KARMADA_NAMESPACE,
                "annotations": {
                    "pulumi.com/skipAwait": "true",
                    **chart_patch_skips("karmada", AGENT_RELEASE, "container args"),
                },
            },
            spec={"template": {"spec": {"containers": [{"name": AGENT_RELEASE, "args": AGENT_FLAGS}]}}},
            opts=pulumi.ResourceOptions(parent=self, provider=member.provider, depends_on=[release]),
        )

    def _push_account(self, member: ClusterHandle) -> pulumi.Output[dict[str, str]]:
        """A service account on the member and its token, for Karmada's karmada-cluster/<cluster> Secret."""
        member_opts = pulumi.ResourceOptions(parent=self, provider=member.provider, depends_on=member.ready)
        ns = namespace(KARMADA_CLUSTER_NAMESPACE, member, self, "baseline")
        account = k8s.core.v1.ServiceAccount(
            f"{member.name}-karmada-push",
            metadata={"name": KARMADA_PUSH_SERVICE_ACCOUNT, "namespace": KARMADA_CLUSTER_NAMESPACE},
            opts=pulumi.ResourceOptions.merge(member_opts, pulumi.ResourceOptions(depends_on=[ns])),
        )
        # The control plane manages any kind the federation propagates, as karmadactl join grants.
        role = k8s.rbac.v1.ClusterRole(
            f"{member.name}-karmada-push",
            metadata={"name": KARMADA_PUSH_SERVICE_ACCOUNT},
            rules=[
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["get"]},
            ],
            opts=member_opts,
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{member.name}-karmada-push",
            metadata={"name": KARMADA_PUSH_SERVICE_ACCOUNT},
            role_ref={"apiGroup": RBAC_API, "kind": "ClusterRole", "name": KARMADA_PUSH_SERVICE_ACCOUNT},
            subjects=[
                {"kind": "ServiceAccount", "name": KARMADA_PUSH_SERVICE_ACCOUNT, "namespace": KARMADA_CLUSTER_NAMESPACE}
            ],
            opts=pulumi.ResourceOptions.merge(member_opts, pulumi.ResourceOptions(depends_on=[role, account])),
        )
        token = k8s.core.v1.Secret(
            f"{member.name}-karmada-push-token",
            metadata={
                "name": f"{KARMADA_PUSH_SERVICE_ACCOUNT}-token",
                "namespace": KARMADA_CLUSTER_NAMESPACE,
                "annotations": {"kubernetes.io/service-account.name": KARMADA_PUSH_SERVICE_ACCOUNT},
            },
            type="kubernetes.io/service-account-token",
            opts=pulumi.ResourceOptions.merge(member_opts, pulumi.ResourceOptions(depends_on=[account])),
        )
        return pulumi.Output.secret(
            pulumi.Output.all(token.data, member.kubeconfig).apply(lambda a: _push_secret_data(*a))
        )


@dataclass(frozen=True, kw_only=True)
class PullMember:
    """pull: the member's agent registers its Cluster, created here first with the id the agent checks."""

    cluster_id: pulumi.Input[str]  # the member's kube-system Namespace UID
    # In the agent's own stack: its release and flags, which the RBAC must follow (KarmadaAgent.deployed).
    agent: Sequence[pulumi.Resource] = ()


@dataclass(frozen=True, kw_only=True)
class PushMember:
    """push: Karmada dials the member with its credentials; the Cluster says where the member runs."""

    credentials: pulumi.Input[dict[str, str]]  # KarmadaAgent.push_credentials
    cloud: Cloud
    region: str  # the cloud's region, e.g. us-east-1
    zones: Sequence[str]

    def __post_init__(self) -> None:
        if not self.zones:
            raise InputError("sync.zones", "name the zones the member's nodes run in (its Cluster's spec.zones)")


def sync_mode(sync: PullAgent | PushAgent | PullMember | PushMember) -> Literal["Pull", "Push"]:
    """Karmada's name of the mode (a Cluster's spec.syncMode)."""
    return "Pull" if isinstance(sync, PullAgent | PullMember) else "Push"


@dataclass(frozen=True, kw_only=True)
class KarmadaMembershipArgs:
    karmada: ClusterHandle  # the Karmada API server
    cluster_name: str
    endpoint: pulumi.Input[str]  # the member's Kubernetes API, as its cloud reports it
    labels: dict[str, str]
    sync: PullMember | PushMember


class KarmadaMembership(pulumi.ComponentResource):
    """The Karmada side of a member: the agent's RBAC and the Cluster's labels (pull), or the Cluster (push)."""

    registration: k8s.apiextensions.CustomResource  # the member's Cluster, with its labels
    # pull: what the agent needs in Karmada before it can register: its RBAC and Work namespace, created after
    # its Cluster.
    agent_access: list[pulumi.Resource]

    def __init__(self, name: str, args: KarmadaMembershipArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:federation:KarmadaMembership", name, None, opts)
        karmada = args.karmada
        self._karmada = karmada
        self._karmada_opts = pulumi.ResourceOptions(parent=self, provider=karmada.provider, depends_on=karmada.ready)
        self.agent_access = []
        match args.sync:
            case PullMember() as pull:
                self._pull(args, pull)
            case PushMember() as push:
                self._push(args, push)
        self.register_outputs({"cluster": args.cluster_name, "syncMode": sync_mode(args.sync)})

    def _pull(self, args: KarmadaMembershipArgs, pull: PullMember) -> None:
        karmada = self._karmada
        # The Cluster's Work namespace, before the Cluster: Karmada's cluster controller creates it when the
        # Cluster appears, unless it exists (KARMADA_CREATES_THE_EXECUTION_NAMESPACE), and a create after the
        # Cluster would race it. Labelled as the controller labels it.
        execution = namespace(
            f"{EXECUTION_NAMESPACE_PREFIX}{args.cluster_name}",
            karmada,
            self,
            "baseline",
            labels={KARMADA_SYSTEM_LABEL: "true"},
        )
        # Created first, with the labels and the id the agent checks (KARMADA_AGENT_REGISTERS): the agent then
        # re-registers it (it sets no secretRef with --report-secrets=None). The id and endpoint follow the
        # member: a replaced member cluster has a new kube-system UID, and its agent exits until `spec.id` says so.
        spec = {"syncMode": "Pull", "id": pull.cluster_id, "apiEndpoint": self._endpoint(args)}
        self.registration = self._register(args, spec, after=execution)
        self.agent_access = self._pull_access(args.cluster_name, execution, [self.registration, *pull.agent])

    def _push(self, args: KarmadaMembershipArgs, push: PushMember) -> None:
        karmada = self._karmada
        credentials = k8s.core.v1.Secret(
            f"{karmada.name}-{KARMADA_CLUSTER_NAMESPACE}-{args.cluster_name}",
            metadata={"name": args.cluster_name, "namespace": KARMADA_CLUSTER_NAMESPACE},
            data=pulumi.Output.secret(push.credentials),
            opts=self._karmada_opts,
        )
        spec = {
            "syncMode": "Push",
            "apiEndpoint": self._endpoint(args),
            "provider": push.cloud,
            "region": push.region,
            "zones": list(push.zones),
            "secretRef": {"namespace": KARMADA_CLUSTER_NAMESPACE, "name": args.cluster_name},
        }
        self.registration = self._register(args, spec, after=credentials)

    @staticmethod
    def _endpoint(args: KarmadaMembershipArgs) -> pulumi.Output[str]:
        return pulumi.Output.from_input(args.endpoint).apply(api_endpoint)

    def _register(
        self, args: KarmadaMembershipArgs, spec: dict[str, Any], *, after: pulumi.Resource
    ) -> k8s.apiextensions.CustomResource:
        """The member's Cluster in Karmada, after what it needs there first."""
        return k8s.apiextensions.CustomResource(
            f"{self._karmada.name}-cluster-{args.cluster_name}",
            api_version=CLUSTER_API,
            kind="Cluster",
            metadata={"name": args.cluster_name, "labels": args.labels},
            spec=spec,
            opts=pulumi.ResourceOptions.merge(self._karmada_opts, pulumi.ResourceOptions(depends_on=[after])),
        )

    def _role_for_agent(
        self, cluster: str, metadata: dict[str, Any], rules: list[dict[str, Any]], depends_on: list[pulumi.Resource]
    ) -> list[pulumi.Resource]:
        """A (Cluster)Role in Karmada and its binding to the agent's user; cluster-wide without a namespace."""
        scope = "Role" if "namespace" in metadata else "ClusterRole"
        opts = pulumi.ResourceOptions.merge(self._karmada_opts, pulumi.ResourceOptions(depends_on=depends_on))
        name = f"{self._karmada.name}-{metadata['name'].replace(':', '-')}"  # ':' would read as a URN separator
        role = getattr(k8s.rbac.v1, scope)(f"{name}-role", metadata=metadata, rules=rules, opts=opts)
        binding = getattr(k8s.rbac.v1, f"{scope}Binding")(
            f"{name}-binding",
            metadata=metadata,
            role_ref={"apiGroup": RBAC_API, "kind": scope, "name": metadata["name"]},
            subjects=[{"apiGroup": RBAC_API, "kind": "User", "name": AGENT_USER_PREFIX + cluster}],
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[role])),
        )
        return [role, binding]

    def _pull_access(
        self, cluster: str, execution: k8s.core.v1.Namespace, after: list[pulumi.Resource]
    ) -> list[pulumi.Resource]:
        """RBAC in Karmada for `system:karmada:agent:<cluster>` in its Work namespace and cluster-wide: what the agent
        needs at start, granted once its Cluster exists (and, in its own stack, once it runs with its flags)."""
        prefix = f"system:karmada:{cluster}:agent"
        work_namespace = f"{EXECUTION_NAMESPACE_PREFIX}{cluster}"
        works = [
            {
                "apiGroups": ["work.karmada.io"],
                "resources": ["works"],
                "verbs": ["get", "create", "list", "watch", "update", "delete"],
            },
            {"apiGroups": ["work.karmada.io"], "resources": ["works/status"], "verbs": ["patch", "update"]},
        ]
        return [
            execution,
            *self._role_for_agent(cluster, {"name": prefix}, agent_rules(cluster), after),
            *self._role_for_agent(
                cluster, {"name": f"{prefix}-work", "namespace": work_namespace}, works, [execution, *after]
            ),
        ]


def kube_system_uid(member: ClusterHandle, parent: pulumi.Resource | None = None) -> pulumi.Output[str]:
    """The member's cluster id as Karmada knows it: the UID of its kube-system Namespace (read, never managed)."""
    kube_system = k8s.core.v1.Namespace.get(
        f"{member.name}-kube-system",
        "kube-system",
        opts=pulumi.ResourceOptions(parent=parent, provider=member.provider, depends_on=member.ready),
    )
    uid: pulumi.Output[str] = kube_system.metadata.uid
    return uid


def _push_secret_data(token_data: dict[str, Any] | None, kubeconfig: str) -> dict[str, str]:
    """What Karmada's cluster controllers read: the member's CA (base64 PEM) and the account's token."""
    if not token_data or "token" not in token_data:
        raise ValueError("the member's service-account token Secret has no token yet; run `pulumi up` again")
    ca = yaml.safe_load(kubeconfig)["clusters"][0]["cluster"]["certificate-authority-data"]
    return {"token": token_data["token"], "caBundle": ca}
