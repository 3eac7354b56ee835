"""Karmada federation across the environment's clusters."""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Literal

from pydantic import Field

from components.config.base import Spec


class KarmadaApiServerSpec(Spec):
    """How the Karmada API server is reached from other clouds.

    It sits behind a cloud load balancer of the host cluster on a public address, open only to the
    NAT egress IPs of the environment's clusters (computed) and to `allowedCidrs`: members in other
    clouds have no private path to the host, and a source allow-list plus mutual TLS (client
    certificates signed by the federation's own CA) is what guards it.
    """

    allowed_cidrs: list[IPv4Network] = Field(
        default_factory=list,
        description="Sources allowed besides the clusters' NAT egress IPs: where `pulumi up` and operators reach "
        "the Karmada API from (CI runners, VPN egress), e.g. [203.0.113.0/24].",
    )


class FailoverSpec(Spec):
    """When Karmada takes a federated model's copy off a member (each member runs its own copy)."""

    cluster_toleration_seconds: int = Field(
        300, ge=0, description="How long a copy stays on a member that is not ready or unreachable before eviction."
    )
    application_toleration_seconds: int = Field(
        900,
        ge=0,
        description="How long a model may stay unhealthy on a member before its copy is evicted (and, after the "
        "grace period, created there again: a restart); above the weights' load time.",
    )
    grace_period_seconds: int = Field(
        1800,
        ge=1,
        description="How long an evicted copy keeps serving before it is removed; the other members serve meanwhile.",
    )


class SearchSpec(Spec):
    """Clusterpedia on the federation host: one searchable index of the members' pods, nodes and models."""

    enabled: bool = Field(
        False,
        description="Run Clusterpedia on the federation host and sync every search member into it (read-only).",
    )
    members: list[str] | None = Field(
        None,
        min_length=1,
        description="Federation members whose pods, nodes and models are indexed; default every member. The host's "
        "Clusterpedia dials each other member's API server through its public endpoint (regions[].apiAccess."
        "publicCidrs, to which the program adds the host's NAT egress for the clusters it creates; an existing "
        "cluster's must admit it already).",
    )
    storage_gib: int = Field(
        20, ge=1, le=1024, description="Volume of the index's PostgreSQL database on the host, in GiB."
    )


class FederationSpec(Spec):
    enabled: bool = Field(False, description="Federate the environment's clusters with Karmada.")
    host: str | None = Field(None, description="Region entry whose cluster hosts the Karmada control plane.")
    member_mode: Literal["pull", "push"] = Field(
        "pull",
        description="pull: a karmada-agent in each member dials out to the Karmada API (works through NAT, members' "
        "APIs stay private); push: the control plane dials each member's API server through its public endpoint "
        "(regions[].apiAccess.publicCidrs, to which the program adds the host's NAT egress for the clusters it "
        "creates; an existing cluster's must admit it already).",
    )
    members: list[str] | None = Field(
        None,
        min_length=1,
        description="Region entries whose clusters join Karmada; default every region with GPU pools.",
    )
    api_server: KarmadaApiServerSpec = Field(
        default_factory=KarmadaApiServerSpec, description="Exposure of the Karmada API server to other clouds."
    )
    registry_mirrors: dict[str, str] = Field(
        default_factory=dict,
        description="Region entry -> registry that replaces the registry of the images in federated models on "
        "that member, e.g. {usc1: us-central1-docker.pkg.dev/acme/dockerhub}.",
    )
    failover: FailoverSpec = Field(default_factory=FailoverSpec, description="Cluster and application failover.")
    search: SearchSpec = Field(default_factory=SearchSpec, description="Multi-cluster search (Clusterpedia).")
