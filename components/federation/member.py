"""One member cluster joined to Karmada, in pull or push mode.

- pull (default): the karmada chart in agent mode runs karmada-agent on the member; it dials the Karmada
  API server (through the member's NAT; the member's own API server stays private) with a client
  certificate of the federation's CA for the identity `system:karmada:agent:<cluster>`, which gets the
  same least-privilege RBAC `karmadactl register` grants. The agent registers the member itself: it
  creates the `Cluster` with `spec.id` = the member's kube-system UID and exits if a Cluster of that
  name exists with another id (KARMADA_AGENT_REGISTERS, components/catalog/upstream.py), so the
  program never creates it. The labels (cloud, region, GPU products), which no agent flag sets, are
  added afterwards by a server-side-apply patch of `metadata.labels` only: fields the agent never writes.
- push: the program declares the member's `Cluster` (labels, location fields, `secretRef`); the control
  plane dials the member's API server with a service-account token of the member, handed over in the
  Secret the Cluster's `secretRef` names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.catalog.charts import CHARTS, KARMADA_VERSION
from components.federation.certificates import KeyPair, signed_certificate
from components.federation.control_plane import CLUSTER_NAMESPACE, KARMADA_NAMESPACE
from components.federation.manifests import CLUSTER_API
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import helm_release, namespace

AGENT_RELEASE = "karmada-agent"
AGENT_USER_PREFIX = "system:karmada:agent:"
AGENT_GROUP = "system:karmada:agents"
EXECUTION_NAMESPACE_PREFIX = "karmada-es-"
PUSH_SERVICE_ACCOUNT = "karmada-controller-manager"
RBAC_API = "rbac.authorization.k8s.io"


def api_endpoint(endpoint: str) -> str:
    """EKS reports its endpoint as a URL, GKE as a bare address."""
    return endpoint if endpoint.startswith("https://") else f"https://{endpoint}"


def agent_secret_values(key_pem: pulumi.Input[str]) -> dict:
    """The agent's private key, for the chart's secret values file."""
    return {"agent": {"kubeconfig": {"key": key_pem}}}


def agent_rules(cluster: str) -> list[dict]:
    """Cluster-wide permissions of a member's agent in Karmada (karmadactl register's: it creates its Cluster)."""
    karmada = "cluster.karmada.io"
    return [
        {
            "apiGroups": [karmada],
            "resources": ["clusters"],
            "resourceNames": [cluster],
            "verbs": ["get", "update", "patch", "delete"],
        },
        {"apiGroups": [karmada], "resources": ["clusters"], "verbs": ["create", "list", "watch"]},
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


@dataclass(frozen=True)
class KarmadaMemberArgs:
    member: ClusterHandle
    karmada: ClusterHandle  # the Karmada API server
    mode: Literal["pull", "push"]
    labels: dict[str, str]
    production: bool
    ca: KeyPair  # the federation CA: signs the agent's client certificate
    # URL the member's agent dials: the load balancer, or the in-cluster service on the host itself.
    karmada_server: pulumi.Input[str]
    # The host's karmada-system, created by the control plane: one cluster cannot hold two creators of it.
    host_namespace: k8s.core.v1.Namespace | None = None


class KarmadaMember(pulumi.ComponentResource):
    # What makes the member's Cluster object carry its labels: the Cluster itself (push), or the patch
    # of the Cluster the agent registered (pull).
    registration: pulumi.CustomResource

    def __init__(self, name: str, args: KarmadaMemberArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:federation:KarmadaMember", name, None, opts)
        member, karmada = args.member, args.karmada
        region = member.region
        self._karmada = karmada
        self._karmada_opts = pulumi.ResourceOptions(parent=self, provider=karmada.provider, depends_on=karmada.ready)
        endpoint = member.endpoint.apply(api_endpoint)
        if args.mode == "pull":
            agent = self._agent(args, endpoint, depends_on=self._pull_access(member, karmada))
            self.registration = k8s.apiextensions.CustomResourcePatch(
                f"{karmada.name}-cluster-{member.name}-labels",
                api_version=CLUSTER_API,
                kind="Cluster",
                metadata={"name": member.name, "labels": args.labels},
                opts=pulumi.ResourceOptions.merge(self._karmada_opts, pulumi.ResourceOptions(depends_on=[agent])),
            )
        else:
            credentials = self._push_credentials(member, karmada)
            self.registration = k8s.apiextensions.CustomResource(
                f"{karmada.name}-cluster-{member.name}",
                api_version=CLUSTER_API,
                kind="Cluster",
                metadata={"name": member.name, "labels": args.labels},
                spec={
                    "syncMode": "Push",
                    "apiEndpoint": endpoint,
                    "provider": region.cloud,
                    "region": region.region,
                    "zones": list(region.zones),
                    "secretRef": {"namespace": CLUSTER_NAMESPACE, "name": member.name},
                },
                opts=pulumi.ResourceOptions.merge(self._karmada_opts, pulumi.ResourceOptions(depends_on=[credentials])),
            )
        self.register_outputs({"cluster": member.name, "syncMode": args.mode.capitalize()})

    def _role_for_agent(self, cluster: str, metadata: dict, rules: list[dict], depends_on: list) -> list:
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

    def _pull_access(self, member: ClusterHandle, karmada: ClusterHandle) -> list[pulumi.Resource]:
        """RBAC in Karmada for `system:karmada:agent:<cluster>` and its Work namespace, before the agent starts."""
        cluster = member.name
        prefix = f"system:karmada:{cluster}:agent"
        work_namespace = f"{EXECUTION_NAMESPACE_PREFIX}{cluster}"
        execution = namespace(work_namespace, karmada, self, "baseline")
        secrets = [
            {
                "apiGroups": [""],
                "resources": ["secrets"],
                "resourceNames": [cluster, f"{cluster}-impersonator"],
                "verbs": ["get", "patch"],
            },
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},
        ]
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
            *self._role_for_agent(cluster, {"name": prefix}, agent_rules(cluster), []),
            *self._role_for_agent(cluster, {"name": f"{prefix}-secret", "namespace": CLUSTER_NAMESPACE}, secrets, []),
            *self._role_for_agent(cluster, {"name": f"{prefix}-work", "namespace": work_namespace}, works, [execution]),
        ]

    def _agent(
        self, args: KarmadaMemberArgs, endpoint: pulumi.Output[str], depends_on: list[pulumi.Resource]
    ) -> k8s.helm.v3.Release:
        """karmada-agent on the member, with its own client certificate; it registers the member's Cluster."""
        member = args.member
        cert = signed_certificate(
            f"{member.name}-karmada-agent",
            args.ca,
            self,
            common_name=AGENT_USER_PREFIX + member.name,
            organization=AGENT_GROUP,
        )
        ns = args.host_namespace or namespace(KARMADA_NAMESPACE, member, self, "baseline")
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
                    "clusterEndpoint": endpoint,
                    "kubeconfig": {"caCrt": args.ca.cert_pem, "crt": cert.cert_pem, "server": args.karmada_server},
                    "replicaCount": 2 if args.production else 1,
                    "image": {"tag": KARMADA_VERSION},
                },
            },
            parent=self,
            depends_on=depends_on,
            secret_values=agent_secret_values(cert.key_pem),
        )

    def _push_credentials(self, member: ClusterHandle, karmada: ClusterHandle) -> pulumi.Resource:
        """A service account on the member and its token, handed to Karmada in karmada-cluster/<cluster>."""
        member_opts = pulumi.ResourceOptions(parent=self, provider=member.provider, depends_on=member.ready)
        ns = namespace(CLUSTER_NAMESPACE, member, self, "baseline")
        account = k8s.core.v1.ServiceAccount(
            f"{member.name}-karmada-push",
            metadata={"name": PUSH_SERVICE_ACCOUNT, "namespace": CLUSTER_NAMESPACE},
            opts=pulumi.ResourceOptions.merge(member_opts, pulumi.ResourceOptions(depends_on=[ns])),
        )
        # The control plane manages any kind the federation propagates, as karmadactl join grants.
        role = k8s.rbac.v1.ClusterRole(
            f"{member.name}-karmada-push",
            metadata={"name": PUSH_SERVICE_ACCOUNT},
            rules=[
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["get"]},
            ],
            opts=member_opts,
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{member.name}-karmada-push",
            metadata={"name": PUSH_SERVICE_ACCOUNT},
            role_ref={"apiGroup": RBAC_API, "kind": "ClusterRole", "name": PUSH_SERVICE_ACCOUNT},
            subjects=[{"kind": "ServiceAccount", "name": PUSH_SERVICE_ACCOUNT, "namespace": CLUSTER_NAMESPACE}],
            opts=pulumi.ResourceOptions.merge(member_opts, pulumi.ResourceOptions(depends_on=[role, account])),
        )
        token = k8s.core.v1.Secret(
            f"{member.name}-karmada-push-token",
            metadata={
                "name": f"{PUSH_SERVICE_ACCOUNT}-token",
                "namespace": CLUSTER_NAMESPACE,
                "annotations": {"kubernetes.io/service-account.name": PUSH_SERVICE_ACCOUNT},
            },
            type="kubernetes.io/service-account-token",
            opts=pulumi.ResourceOptions.merge(member_opts, pulumi.ResourceOptions(depends_on=[account])),
        )
        data = pulumi.Output.all(token.data, member.kubeconfig).apply(lambda a: _push_secret_data(*a))
        return k8s.core.v1.Secret(
            f"{karmada.name}-{CLUSTER_NAMESPACE}-{member.name}",
            metadata={"name": member.name, "namespace": CLUSTER_NAMESPACE},
            data=pulumi.Output.secret(data),
            opts=self._karmada_opts,
        )


def _push_secret_data(token_data: dict | None, kubeconfig: str) -> dict[str, str]:
    """What Karmada's cluster controllers read: the member's CA (base64 PEM) and the account's token."""
    if not token_data or "token" not in token_data:
        raise ValueError("the member's service-account token Secret has no token yet; run `pulumi up` again")
    ca = yaml.safe_load(kubeconfig)["clusters"][0]["cluster"]["certificate-authority-data"]
    return {"token": token_data["token"], "caBundle": ca}
