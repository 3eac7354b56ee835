"""Checks of `regions[].cluster.existing`: ids in the format each cloud takes, egress addresses that peers can
allow, and one region entry per cluster. Plain functions over the typed models, each issue at its key path."""

from __future__ import annotations

import re
from collections.abc import Iterator
from ipaddress import IPv4Address, IPv4Network

from components.config.base import Issue, KeyPath, join_path
from components.config.environment import EnvironmentSpec
from components.config.region import (
    AwsExistingClusterSpec,
    ExistingClusterSpec,
    GcpExistingClusterSpec,
    RegionSpec,
)
from components.domain.federation_members import federation_members

# EKS CreateCluster `name` (botocore 1.44.8 data/eks/2017-11-01 service-2.json, shape ClusterName): 1-100 characters,
# `^[0-9A-Za-z][A-Za-z0-9\-_]*`.
EKS_CLUSTER_NAME = re.compile(r"^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$")
# GKE Cluster.name (cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters): up to 40
# characters, lowercase letters, digits and hyphens, starting with a letter and ending with a letter or digit.
GKE_CLUSTER_NAME = re.compile(r"^[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?$")
# An IAM role ARN in any partition (docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html): account
# id of 12 digits, path and name of [\w+=,.@-].
ROLE_ARN = re.compile(r"^arn:aws(?:-[a-z]+)*:iam::\d{12}:role/(?:[\w+=,.@-]+/)*[\w+=,.@-]{1,64}$")
# A subnet id: `subnet-` and 8 or 17 hexadecimal digits (EC2's resource id formats).
SUBNET_ID = re.compile(r"^subnet-(?:[0-9a-f]{8}|[0-9a-f]{17})$")
# A user-managed service account (cloud.google.com/iam/docs/service-accounts-create: 6-30 characters).
SERVICE_ACCOUNT = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z][a-z0-9-]{4,28}[a-z0-9]\.iam\.gserviceaccount\.com$")


def _name_issues(existing: ExistingClusterSpec, at: KeyPath) -> Iterator[Issue]:
    aws = isinstance(existing, AwsExistingClusterSpec)
    if aws and existing.name.startswith("arn:"):
        yield Issue(join_path(*at, "name"), f"{existing.name!r} is an ARN; give the cluster's name, e.g. team-eks")
    elif aws and not EKS_CLUSTER_NAME.match(existing.name):
        yield Issue(
            join_path(*at, "name"),
            f"{existing.name!r} is not an EKS cluster name (letters, digits, '-', '_', starting with a letter or "
            "digit, at most 100); give the name `aws eks list-clusters` shows",
        )
    elif not aws and not GKE_CLUSTER_NAME.match(existing.name):
        yield Issue(
            join_path(*at, "name"),
            f"{existing.name!r} is not a GKE cluster name (lowercase letters, digits, '-', at most 40); give the "
            "name `gcloud container clusters list` shows, not its path",
        )


def _id_issues(existing: ExistingClusterSpec, at: KeyPath) -> Iterator[Issue]:
    if isinstance(existing, GcpExistingClusterSpec):
        yield from _service_account_issues(existing, at)
        return
    if existing.node_role_arn is not None and not ROLE_ARN.match(existing.node_role_arn):
        yield Issue(
            join_path(*at, "nodeRoleArn"),
            f"{existing.node_role_arn!r} is not an IAM role ARN; write arn:aws:iam::<12-digit account>:role/<name>",
        )
    for zone, subnet in existing.subnets.items():
        if not SUBNET_ID.match(subnet):
            yield Issue(
                join_path(*at, "subnets", zone),
                f"{subnet!r} is not a subnet id; write subnet- and its 8 or 17 hex digits (aws ec2 describe-subnets)",
            )


def _service_account_issues(existing: GcpExistingClusterSpec, at: KeyPath) -> Iterator[Issue]:
    account = existing.node_service_account
    if account is not None and (
        account.endswith("-compute@developer.gserviceaccount.com") or not SERVICE_ACCOUNT.match(account)
    ):
        yield Issue(
            join_path(*at, "nodeServiceAccount"),
            f"{account!r} is not a user-managed service account e-mail (<name>@<project>.iam.gserviceaccount.com; "
            "not the Compute Engine default)",
        )


# Addresses no peer on the internet sees a cluster come from (RFC 1918, shared CGNAT space RFC 6598, loopback,
# link-local, "this network", multicast and reserved). Documentation ranges (RFC 5737) stay allowed: examples use them.
NOT_EGRESS = tuple(
    IPv4Network(n)
    for n in (
        "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
        "0.0.0.0/8", "224.0.0.0/4", "240.0.0.0/4",
    )
)  # fmt: skip


def _egress_issues(existing: ExistingClusterSpec, at: KeyPath, federated_pull: bool) -> Iterator[Issue]:
    for i, address in enumerate(existing.egress_ips):
        if any(IPv4Address(address) in network for network in NOT_EGRESS):
            yield Issue(
                join_path(*at, "egressIps", i),
                f"{address} is not a public address; list the NAT addresses the cluster reaches the internet from",
            )
    if federated_pull and not existing.egress_ips:
        yield Issue(
            join_path(*at, "egressIps"),
            "a pull member's agent calls the Karmada API from its NAT addresses, which the allowlist must list; "
            "add egressIps: [<NAT address>, ...]",
        )


def check_existing_clusters(env: EnvironmentSpec) -> Iterator[Issue]:
    """Every existing cluster: its ids, its egress addresses, and no cluster claimed by two region entries."""
    pull = env.federation.enabled and env.federation.member_mode == "pull"
    members = {r.name for r in federation_members(env)} if pull else set()
    seen: dict[tuple[str, str, str, str], int] = {}
    for i, region in enumerate(env.regions):
        existing = region.cluster.existing
        if existing is None:
            continue
        at = ("regions", i, "cluster", "existing")
        yield from _name_issues(existing, at)
        yield from _id_issues(existing, at)
        yield from _egress_issues(existing, at, region.name in members)
        key = _cluster_key(region, existing)
        if key in seen:
            yield Issue(
                join_path(*at, "name"),
                f"cluster {existing.name!r} is also regions[{seen[key]}]'s: one cluster takes one region entry (its "
                "GPU pools, add-ons and models would be declared twice); merge the two entries",
            )
        seen.setdefault(key, i)


def _cluster_key(region: RegionSpec, existing: ExistingClusterSpec) -> tuple[str, str, str, str]:
    return (region.cloud, region.project or "", region.region, existing.name)
