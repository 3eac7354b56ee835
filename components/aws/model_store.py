"""S3 bucket holding one region's model weights, and the read-only IRSA roles over its models prefix.

Hardening: SSE-KMS with a customer-managed key (rotation on) and S3 bucket keys (one KMS call
per object instead of per request); all four public-access blocks; BucketOwnerEnforced (ACLs
off); a bucket policy that refuses plain HTTP; versioning, with noncurrent versions and
unfinished multipart uploads expired by lifecycle rules. In production the bucket and key are
protected and retained on delete, so a `pulumi destroy` never takes the weights with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.aws.irsa import IrsaRoleArgs, irsa_role
from components.aws.policy_docs import tls_only_bucket_policy
from components.config.model_store import ModelStoreSpec
from components.domain.model_bucket import MODELS_PREFIX, policy, prefix_read_statements
from components.k8s.cluster import IrsaIdentity
from components.k8s.workload_identity import ServiceAccountRef

PUBLIC_ACCESS_BLOCKS = ("block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets")


@dataclass(frozen=True, kw_only=True)
class S3ModelStoreArgs:
    bucket_name: str
    aws_region: str
    spec: ModelStoreSpec
    production: bool
    identity: IrsaIdentity
    # Service accounts granted read-only access to the models prefix, each through its own role,
    # by a short label (e.g. model-server, model-cache).
    readers: dict[str, ServiceAccountRef]


class S3ModelStore(pulumi.ComponentResource):
    bucket: aws.s3.Bucket
    key: aws.kms.Key
    reader_roles: dict[str, aws.iam.Role]

    def __init__(self, name: str, args: S3ModelStoreArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:aws:S3ModelStore", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        stateful = pulumi.ResourceOptions(parent=self, protect=args.production, retain_on_delete=args.production)
        spec = args.spec

        self.key = aws.kms.Key(
            f"{name}-models",
            description=f"Encryption of model weights in s3://{args.bucket_name}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            opts=stateful,
        )
        aws.kms.Alias(f"{name}-models", name=f"alias/{args.bucket_name}", target_key_id=self.key.key_id, opts=child)

        self.bucket = aws.s3.Bucket(f"{name}-models", bucket=args.bucket_name, opts=stateful)
        bucket = self.bucket.id
        public_access = aws.s3.BucketPublicAccessBlock(
            f"{name}-models", bucket=bucket, **dict.fromkeys(PUBLIC_ACCESS_BLOCKS, True), opts=child
        )
        aws.s3.BucketOwnershipControls(
            f"{name}-models", bucket=bucket, rule={"object_ownership": "BucketOwnerEnforced"}, opts=child
        )
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-models",
            bucket=bucket,
            rules=[
                {
                    "apply_server_side_encryption_by_default": {
                        "sse_algorithm": "aws:kms",
                        "kms_master_key_id": self.key.arn,
                    },
                    "bucket_key_enabled": True,
                }
            ],
            opts=child,
        )
        self.versioning = aws.s3.BucketVersioning(
            f"{name}-models", bucket=bucket, versioning_configuration={"status": "Enabled"}, opts=child
        )
        aws.s3.BucketLifecycleConfiguration(
            f"{name}-models",
            bucket=bucket,
            rules=[
                {
                    "id": "expire-noncurrent-versions",
                    "status": "Enabled",
                    "filter": {},
                    "noncurrent_version_expiration": {"noncurrent_days": spec.noncurrent_version_days},
                    "expiration": {"expired_object_delete_marker": True},
                },
                {
                    "id": "abort-incomplete-multipart-uploads",
                    "status": "Enabled",
                    "filter": {},
                    "abort_incomplete_multipart_upload": {"days_after_initiation": spec.abort_multipart_days},
                },
            ],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.versioning]),
        )
        aws.s3.BucketPolicy(
            f"{name}-models",
            bucket=bucket,
            policy=self.bucket.arn.apply(tls_only_bucket_policy),
            # S3 rejects a bucket policy while the public-access block is being applied.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[public_access]),
        )

        read_models = pulumi.Output.all(self.bucket.arn, self.key.arn).apply(
            lambda a: policy(prefix_read_statements(a[0], a[1], MODELS_PREFIX, args.aws_region))
        )
        self.reader_roles = {
            label: irsa_role(
                f"{name}-{label}",
                IrsaRoleArgs(
                    oidc_provider_arn=args.identity.oidc_provider_arn,
                    oidc_issuer_url=args.identity.oidc_issuer,
                    namespace=sa.namespace,
                    service_account=sa.name,
                    inline_policy=read_models,
                ),
                parent=self,
            )
            for label, sa in args.readers.items()
        }
        self.register_outputs({"bucket": self.bucket.id, "keyArn": self.key.arn})
