"""Multi-cluster search: Clusterpedia on the federation host, indexing every search member read-only.

- `SearchIndex` (the host's stack, `search_index.py`): Clusterpedia's namespace, its database (`search_store.py`),
  its CRDs (the v0.9.0 ones, CLUSTERPEDIA_CRDS), its API server and synchro manager. The API server is an aggregated
  API of the host's Kubernetes API (`/apis/clusterpedia.io/v1beta1/resources/...`); the synchro manager lists and
  watches each member's API server and writes what it sees to the database.
- `SearchReader` (each member's own stack): the identity Clusterpedia uses there, a service account whose
  ClusterRole lists and watches only what is indexed and what Clusterpedia's discovery watches; no Secrets, no
  ConfigMaps, no writes. Its token Secret is made by the member's token controller.
- `PediaCluster`s on the host: the host's own in its stack, read in-cluster with the reader token Secret beside
  Clusterpedia; another member's in the global stack, which copies that member's reader token and CA into a
  Secret on the host. Credentials never sit in a PediaCluster: it names them (`spec.authenticationFrom`,
  Clusterpedia's ClusterAuthenticationFromSecret), so the synchro manager reads them from Secrets of its own
  namespace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.k8s.cluster import ClusterHandle
from components.k8s.helm import custom_resource, namespace
from platform_catalog.names import SEARCH_NAMESPACE, SEARCH_READER

READER_TOKEN = f"{SEARCH_READER}-token"
PEDIA_CLUSTER_API = "cluster.clusterpedia.io/v1alpha2"
# What Clusterpedia indexes on each member: model pods and their nodes (pool labels), the namespaces, the
# Deployments KServe makes and the InferenceServices.
SYNCED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("", ("pods", "nodes", "namespaces")),
    ("apps", ("deployments",)),
    ("serving.kserve.io", ("inferenceservices",)),
)
# What the synchro manager's discovery lists and watches on every member besides
# [clusterpedia-io/clusterpedia@v0.9.0:pkg/runtime/discovery/dynamic_discovery.go L116-135].
DISCOVERY: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("apiextensions.k8s.io", ("customresourcedefinitions",)),
    ("apiregistration.k8s.io", ("apiservices",)),
)
# The synchro manager only lists and watches (reflectors and informers: pkg/synchromanager/clustersynchro/
# cluster_synchro.go L128-131, pkg/runtime/discovery/controller/crd.go L151-171); /readyz, /healthz and /version
# are open to every authenticated caller (system:public-info-viewer).
READ_VERBS = ("list", "watch")


def reader_rules() -> list[dict[str, Any]]:
    return [
        {"apiGroups": [group], "resources": list(resources), "verbs": list(READ_VERBS)}
        for group, resources in (*SYNCED, *DISCOVERY)
    ]


@dataclass(frozen=True, kw_only=True)
class SearchReaderArgs:
    member: ClusterHandle
    # Clusterpedia's namespace when the member is the host (the index reads the token Secret there); None makes
    # the namespace on the member.
    namespace: k8s.core.v1.Namespace | None = None


class SearchReader(pulumi.ComponentResource):
    """Clusterpedia's read-only identity on one member, and its token."""

    token: k8s.core.v1.Secret
    # What another stack copies to the host: the token and the member's CA (base64, as the token Secret holds them).
    credentials: pulumi.Output[dict[str, str]]

    def __init__(self, name: str, args: SearchReaderArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:federation:SearchReader", name, None, opts)
        member = args.member
        ns = args.namespace or namespace(SEARCH_NAMESPACE, member, self, "restricted")
        on_member = pulumi.ResourceOptions(parent=self, provider=member.provider, depends_on=[*member.ready, ns])
        account = k8s.core.v1.ServiceAccount(
            f"{member.name}-{SEARCH_READER}",
            metadata={"name": SEARCH_READER, "namespace": SEARCH_NAMESPACE},
            automount_service_account_token=False,
            opts=on_member,
        )
        role = k8s.rbac.v1.ClusterRole(
            f"{member.name}-{SEARCH_READER}", metadata={"name": SEARCH_READER}, rules=reader_rules(), opts=on_member
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{member.name}-{SEARCH_READER}",
            metadata={"name": SEARCH_READER},
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": SEARCH_READER},
            subjects=[{"kind": "ServiceAccount", "name": SEARCH_READER, "namespace": SEARCH_NAMESPACE}],
            opts=pulumi.ResourceOptions.merge(on_member, pulumi.ResourceOptions(depends_on=[role, account])),
        )
        self.token = k8s.core.v1.Secret(
            f"{member.name}-{READER_TOKEN}",
            metadata={
                "name": READER_TOKEN,
                "namespace": SEARCH_NAMESPACE,
                "annotations": {"kubernetes.io/service-account.name": SEARCH_READER},
            },
            type="kubernetes.io/service-account-token",
            opts=pulumi.ResourceOptions.merge(on_member, pulumi.ResourceOptions(depends_on=[account])),
        )
        self.credentials = pulumi.Output.secret(self.token.data.apply(_token_credentials))
        self.register_outputs({})


def _token_credentials(data: dict[str, Any] | None) -> dict[str, str]:
    """The token Secret's `token` and `ca.crt`, filled by the member's token controller after it is created."""
    if not data or not data.get("token"):
        raise ValueError(f"the member's {READER_TOKEN} Secret has no token yet; run `pulumi up` of its stack again")
    return {"token": data["token"], "ca.crt": data["ca.crt"]}


def pedia_cluster_manifest(name: str, api_server: pulumi.Input[str], credentials_secret: str) -> dict[str, Any]:
    """A PediaCluster that names its credentials (token and CA keys of a Secret in Clusterpedia's namespace)."""
    return {
        "apiVersion": PEDIA_CLUSTER_API,
        "kind": "PediaCluster",
        "metadata": {"name": name},
        "spec": {
            "apiserver": api_server,
            "authenticationFrom": {
                "token": {"name": credentials_secret, "key": "token"},
                "ca": {"name": credentials_secret, "key": "ca.crt"},
            },
            "syncResources": [{"group": group, "resources": list(resources)} for group, resources in SYNCED],
        },
    }


@dataclass(frozen=True, kw_only=True)
class IndexedMemberArgs:
    host: ClusterHandle
    member_cluster: str  # the member's cluster name, which names its PediaCluster (`search.clusterpedia.io/clusters`)
    api_server: pulumi.Input[str]
    # The member's reader token and CA to copy beside Clusterpedia; None for the host, whose reader token Secret
    # is already there.
    credentials: pulumi.Input[dict[str, str]] | None
    crds: Sequence[pulumi.Resource]  # SearchIndex.crds, or what stands for them in another stack
    depends_on: Sequence[pulumi.Resource] = ()


class IndexedMember(pulumi.ComponentResource):
    """One member's PediaCluster on the host (and the Secret with its credentials when it is another cluster)."""

    def __init__(self, name: str, args: IndexedMemberArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:federation:IndexedMember", name, None, opts)
        host = args.host
        secret_name = READER_TOKEN
        depends = [*args.depends_on]
        if args.credentials is not None:
            secret_name = f"{args.member_cluster}-{SEARCH_READER}"
            depends.append(
                k8s.core.v1.Secret(
                    f"{host.name}-{secret_name}",
                    metadata={"name": secret_name, "namespace": SEARCH_NAMESPACE},
                    data=pulumi.Output.secret(args.credentials),
                    opts=pulumi.ResourceOptions(parent=self, provider=host.provider, depends_on=host.ready),
                )
            )
        custom_resource(
            f"{host.name}-pediacluster-{args.member_cluster}",
            pedia_cluster_manifest(args.member_cluster, args.api_server, secret_name),
            cluster=host,
            parent=self,
            crd_from=args.crds,
            depends_on=[*host.ready, *depends],
        )
        self.register_outputs({})
