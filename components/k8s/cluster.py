"""What every add-on needs to know about a cluster, whatever cloud it runs on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.catalog.regions import Cloud
from components.config.region import RegionSpec


@dataclass(frozen=True, kw_only=True)
class ExecAuth:
    """Short-lived credentials from a CLI plugin; a kubeconfig never holds a static token."""

    command: str
    args: tuple[str, ...]
    provide_cluster_info: bool = False


def render_kubeconfig(cluster_name: str, endpoint: str, ca_data: str, auth: ExecAuth) -> str:
    user: dict[str, Any] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": auth.command,
            "args": list(auth.args),
            "interactiveMode": "Never",
        }
    }
    if auth.provide_cluster_info:
        user["exec"]["provideClusterInfo"] = True
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": cluster_name, "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}
            ],
            "users": [{"name": cluster_name, "user": user}],
            "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
            "current-context": cluster_name,
        },
        sort_keys=False,
    )


def kubernetes_provider(
    cluster_name: str,
    kubeconfig: pulumi.Output[str],
    parent: pulumi.Resource | None,
    depends_on: list[pulumi.Resource],
) -> k8s.Provider:
    """The cluster's own provider, named after the cluster (the offline plan keys manifests on it)."""
    return k8s.Provider(
        cluster_name,
        kubeconfig=kubeconfig,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=depends_on),
    )


@dataclass(frozen=True, kw_only=True)
class IrsaIdentity:
    """What an IAM role trusts so that an EKS cluster's pods get credentials without static keys (IRSA): the
    cluster's IAM OIDC provider and its issuer URL."""

    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer: pulumi.Input[str]


@dataclass(frozen=True, kw_only=True)
class GkeIdentity:
    """What a Google service account trusts so that a GKE cluster's pods act as it: the cluster's Workload Identity
    pool, `<project>.svc.id.goog`."""

    workload_pool: str


WorkloadIdentity = IrsaIdentity | GkeIdentity
"""What a cloud role must trust so that pods get credentials without static keys: one kind per cloud."""


class ClusterAccess(Protocol):
    """What a cluster component (built here, or read) gives its add-ons: its own provider, kubeconfig and endpoint,
    and what workloads wait for."""

    provider: k8s.Provider
    kubeconfig: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    ready: list[pulumi.Resource]


class ClusterTarget(Protocol):
    """What a component that only places objects on a cluster reads of it: the name its resources are named after,
    its provider, what workloads wait for. A ClusterHandle is one; so is anything a caller holds for a cluster it
    did not build here. (A Helm release needs the whole handle: components/k8s/helm.py.)"""

    @property
    def name(self) -> str: ...

    @property
    def provider(self) -> k8s.Provider: ...

    @property
    def ready(self) -> Sequence[pulumi.Resource]: ...


@dataclass(kw_only=True)
class ClusterHandle:
    """A running cluster as add-ons see it."""

    name: str
    region: RegionSpec
    provider: k8s.Provider
    kubeconfig: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    # Resources that must exist before workloads can be scheduled (node groups, add-ons).
    ready: list[pulumi.Resource] = field(default_factory=list)
    # The cloud provider (aws / gcp) of the cluster's region, for add-ons that create cloud resources.
    cloud_provider: pulumi.ProviderResource | None = None
    identity: WorkloadIdentity | None = None
    # Public IPs the cluster's nodes reach the internet from (NAT), for peers to allow-list.
    egress_ips: pulumi.Output[list[str]] | None = None
    # The network its nodes are in (AWS VPC id, GCP network id) when the stack creates it: private DNS zones bind it.
    network_id: pulumi.Input[str] | None = None
    # GKE: namespace resource name -> its ResourceQuota admitting system-*-critical pods (components/k8s/helm.py).
    critical_pod_quotas: dict[str, pulumi.Resource] = field(default_factory=dict)

    @staticmethod
    def of(
        cluster: ClusterAccess,
        *,
        name: str,
        region: RegionSpec,
        egress_ips: pulumi.Output[list[str]] | None = None,
        network_id: pulumi.Input[str] | None = None,
    ) -> ClusterHandle:
        return ClusterHandle(
            name=name,
            region=region,
            provider=cluster.provider,
            kubeconfig=cluster.kubeconfig,
            endpoint=cluster.endpoint,
            ready=list(cluster.ready),
            egress_ips=egress_ips,
            network_id=network_id,
        )

    @property
    def cloud(self) -> Cloud:
        return self.region.cloud

    @property
    def cloud_providers(self) -> dict[str, pulumi.ProviderResource]:
        """`ResourceOptions.providers` for the cluster's cloud resources: its region's provider, once the backend set
        it."""
        return {self.cloud: self.cloud_provider} if self.cloud_provider is not None else {}

    def irsa(self) -> IrsaIdentity:
        """The IRSA trust of an EKS cluster, which the AWS backend gives its handle."""
        if not isinstance(self.identity, IrsaIdentity):
            raise TypeError(f"cluster {self.name!r} has no IRSA identity: only an EKS cluster's handle carries one")
        return self.identity

    def gke_identity(self) -> GkeIdentity:
        """The Workload Identity pool of a GKE cluster, which the GCP backend gives its handle."""
        if not isinstance(self.identity, GkeIdentity):
            raise TypeError(f"cluster {self.name!r} has no GKE Workload Identity: only a GKE cluster's handle has one")
        return self.identity


@dataclass(frozen=True, kw_only=True)
class PublicLoadBalancer:
    """How a cloud gives a LoadBalancer Service a public address, from its backend: what the Service is annotated
    with, and what a server behind it is reached at (its certificate's names)."""

    annotations: Mapping[str, str]
    # Names the load balancer answers on, where it names itself (an NLB's DNS name): DNS SANs.
    dns_names: tuple[str, ...] = ()
    # An address reserved for it (`loadBalancerIP`), where it has no name of its own: an IP SAN.
    address: pulumi.Output[str] | None = None
