"""GCS bucket holding one region's model weights, and Workload Identity readers scoped to that bucket.

Hardening: uniform bucket-level access (no object ACLs), public access prevention enforced,
versioning with noncurrent versions and unfinished multipart uploads expired, optionally a
customer-managed Cloud KMS key (rotated every 90 days). Readers are Google service accounts
that exactly one Kubernetes service account may impersonate, granted `roles/storage.objectViewer`
on this bucket only (no project-level role). In production the bucket and key are protected.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.config.model_store import ModelStoreSpec
from components.gcp.network import GcpLocation
from components.k8s.cluster import GkeIdentity
from components.k8s.workload_identity import ServiceAccountRef

READER_ROLE = "roles/storage.objectViewer"
KEY_ROTATION = "7776000s"  # 90 days


@dataclass(frozen=True, kw_only=True)
class GcsModelStoreArgs:
    bucket_name: str
    location: GcpLocation  # bucket and key live next to the cluster
    cluster_name: str
    spec: ModelStoreSpec
    production: bool
    identity: GkeIdentity
    readers: dict[str, ServiceAccountRef]


class GcsModelStore(pulumi.ComponentResource):
    bucket: gcp.storage.Bucket
    reader_accounts: dict[str, gcp.serviceaccount.Account]

    def __init__(self, name: str, args: GcsModelStoreArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:gcp:GcsModelStore", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        stateful = pulumi.ResourceOptions(parent=self, protect=args.production, retain_on_delete=args.production)
        spec = args.spec

        encryption = None
        bucket_depends: list[pulumi.Resource] = []
        if spec.gcs_cmek:
            ring = gcp.kms.KeyRing(
                f"{name}-models",
                name=args.bucket_name,
                location=args.location.region,
                project=args.location.project,
                opts=stateful,
            )
            key = gcp.kms.CryptoKey(
                f"{name}-models",
                name="model-weights",
                key_ring=ring.id,
                purpose="ENCRYPT_DECRYPT",
                rotation_period=KEY_ROTATION,
                opts=stateful,
            )
            # Cloud Storage encrypts with the key as its service agent, which must be allowed to use it.
            agent = gcp.storage.get_project_service_account_output(project=args.location.project)
            bucket_depends.append(
                gcp.kms.CryptoKeyIAMMember(
                    f"{name}-models-gcs-agent",
                    crypto_key_id=key.id,
                    role="roles/cloudkms.cryptoKeyEncrypterDecrypter",
                    member=agent.email_address.apply(lambda e: f"serviceAccount:{e}"),
                    opts=child,
                )
            )
            encryption = {"default_kms_key_name": key.id}

        self.bucket = gcp.storage.Bucket(
            f"{name}-models",
            name=args.bucket_name,
            project=args.location.project,
            location=args.location.region.upper(),
            storage_class="STANDARD",
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            versioning={"enabled": True},
            lifecycle_rules=[
                {
                    "action": {"type": "Delete"},
                    "condition": {"days_since_noncurrent_time": spec.noncurrent_version_days, "with_state": "ARCHIVED"},
                },
                {
                    "action": {"type": "AbortIncompleteMultipartUpload"},
                    "condition": {"age": spec.abort_multipart_days},
                },
            ],
            encryption=encryption,
            force_destroy=False,
            opts=pulumi.ResourceOptions.merge(stateful, pulumi.ResourceOptions(depends_on=bucket_depends)),
        )

        self.reader_accounts = {}
        for label, sa in args.readers.items():
            account = gcp.serviceaccount.Account(
                f"{name}-{label}",
                account_id=f"{args.cluster_name}-{label}"[:30].rstrip("-"),
                display_name=f"{sa.namespace}/{sa.name} in {args.cluster_name}: reads model weights",
                project=args.location.project,
                opts=child,
            )
            # Only this Kubernetes service account may act as the Google service account.
            gcp.serviceaccount.IAMMember(
                f"{name}-{label}-workload-identity",
                service_account_id=account.name,
                role="roles/iam.workloadIdentityUser",
                member=f"serviceAccount:{args.identity.workload_pool}[{sa.namespace}/{sa.name}]",
                opts=child,
            )
            gcp.storage.BucketIAMMember(
                f"{name}-{label}-reader",
                bucket=self.bucket.name,
                role=READER_ROLE,
                member=account.email.apply(lambda e: f"serviceAccount:{e}"),
                opts=child,
            )
            self.reader_accounts[label] = account
        self.register_outputs({"bucket": self.bucket.name})
