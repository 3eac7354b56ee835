"""Kubernetes service accounts bound to cloud identities: IRSA on EKS, Workload Identity on GKE."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.catalog.regions import Cloud

# The service-account annotation each cloud's credential plumbing reads: the EKS Pod Identity
# webhook injects a web-identity token for the annotated IAM role; the GKE metadata server
# impersonates the annotated Google service account.
IDENTITY_ANNOTATION = {"aws": "eks.amazonaws.com/role-arn", "gcp": "iam.gke.io/gcp-service-account"}


@dataclass(frozen=True, kw_only=True)
class ServiceAccountRef:
    """One Kubernetes service account a cloud identity trusts."""

    namespace: str
    name: str

    @property
    def subject(self) -> str:
        """The token subject (`sub` claim) of the service account."""
        return f"system:serviceaccount:{self.namespace}:{self.name}"


def identity_annotations(cloud: Cloud, identity: pulumi.Input[str]) -> dict[str, pulumi.Input[str]]:
    """Annotations binding a service account to an IAM role ARN (EKS) or Google SA email (GKE)."""
    return {IDENTITY_ANNOTATION[cloud]: identity}
