"""Cloud regions, zones, Kubernetes versions and managed add-on versions we support.

Facts are pinned here once. Zone lists come from `aws ec2 describe-availability-zones`
and `gcloud compute zones list` (public region pages); a region missing here is
rejected by config validation rather than failing deep inside `pulumi up`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Cloud = Literal["aws", "gcp"]

# Source: https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-availability-zones.html
AWS_ZONES: dict[str, tuple[str, ...]] = {
    "us-east-1": ("a", "b", "c", "d", "e", "f"),
    "us-east-2": ("a", "b", "c"),
    "us-west-2": ("a", "b", "c", "d"),
    "ca-central-1": ("a", "b", "d"),
    "eu-west-1": ("a", "b", "c"),
    "eu-west-2": ("a", "b", "c"),
    "eu-central-1": ("a", "b", "c"),
    "eu-north-1": ("a", "b", "c"),
    "ap-northeast-1": ("a", "c", "d"),
    "ap-northeast-2": ("a", "b", "c", "d"),
    "ap-southeast-1": ("a", "b", "c"),
    "ap-southeast-2": ("a", "b", "c"),
    "ap-south-1": ("a", "b", "c"),
    "sa-east-1": ("a", "b", "c"),
}

# Source: https://cloud.google.com/compute/docs/regions-zones#available
GCP_ZONES: dict[str, tuple[str, ...]] = {
    "us-central1": ("a", "b", "c", "f"),
    "us-east1": ("b", "c", "d"),
    "us-east4": ("a", "b", "c"),
    "us-east5": ("a", "b", "c"),
    "us-south1": ("a", "b", "c"),
    "us-west1": ("a", "b", "c"),
    "us-west4": ("a", "b", "c"),
    "europe-west1": ("b", "c", "d"),
    "europe-west4": ("a", "b", "c"),
    "asia-northeast1": ("a", "b", "c"),
    "asia-southeast1": ("a", "b", "c"),
}


def zones_of(cloud: Cloud, region: str) -> tuple[str, ...] | None:
    """Full zone names of a region, or None when we do not know the region."""
    facts = CLOUDS[cloud]
    suffixes = facts.zones.get(region)
    return None if suffixes is None else tuple(f"{region}{facts.zone_separator}{s}" for s in suffixes)


def regions_of(cloud: Cloud) -> tuple[str, ...]:
    return tuple(CLOUDS[cloud].zones)


# EKS managed add-on versions per Kubernetes minor, as listed by
# `aws eks describe-addon-versions --kubernetes-version <v> --addon-name <name>`
# (default version for that Kubernetes release). Pinned: an upgrade is a reviewed change.
EKS_ADDON_VERSIONS: dict[str, dict[str, str]] = {
    "1.33": {
        "vpc-cni": "v1.19.5-eksbuild.1",
        "coredns": "v1.12.1-eksbuild.2",
        "kube-proxy": "v1.33.0-eksbuild.2",
        "aws-ebs-csi-driver": "v1.44.0-eksbuild.1",
    },
    "1.34": {
        "vpc-cni": "v1.20.4-eksbuild.1",
        "coredns": "v1.12.4-eksbuild.1",
        "kube-proxy": "v1.34.0-eksbuild.4",
        "aws-ebs-csi-driver": "v1.51.0-eksbuild.1",
    },
}

# GKE: versions offered on the REGULAR channel (https://cloud.google.com/kubernetes-engine/docs/release-notes).
GKE_VERSIONS: tuple[str, ...] = ("1.33", "1.34")


def kubernetes_versions(cloud: Cloud) -> tuple[str, ...]:
    return CLOUDS[cloud].kubernetes_versions


@dataclass(frozen=True, kw_only=True)
class CloudFacts:
    """What the program and its reports need to know of a cloud, in one entry per cloud."""

    cluster_kind: str  # the managed Kubernetes service
    zones: dict[str, tuple[str, ...]]  # region -> zone suffixes
    zone_separator: str  # us-east-1 + a; us-central1 + - + a
    kubernetes_versions: tuple[str, ...]
    compact_placement: str  # what GPU nodes of one pool are placed close with


CLOUDS: dict[Cloud, CloudFacts] = {
    "aws": CloudFacts(
        cluster_kind="EKS",
        zones=AWS_ZONES,
        zone_separator="",
        kubernetes_versions=tuple(EKS_ADDON_VERSIONS),
        compact_placement="placement group",
    ),
    "gcp": CloudFacts(
        cluster_kind="GKE",
        zones=GCP_ZONES,
        zone_separator="-",
        kubernetes_versions=GKE_VERSIONS,
        compact_placement="compact",
    ),
}


# StorageClass every new cluster has, for PVCs of platform components (e.g. Karmada's etcd): EKS
# creates `gp2` (EBS, served by the aws-ebs-csi-driver add-on through CSI migration; since 1.30 it is
# no longer annotated default, so it is named explicitly) [docs.aws.amazon.com/eks/latest/userguide/
# create-storage-class.html]; GKE creates `standard-rwo` (pd-balanced, CSI)
# [cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/gce-pd-csi-driver].
BUILTIN_STORAGE_CLASS: dict[Cloud, str] = {"aws": "gp2", "gcp": "standard-rwo"}
