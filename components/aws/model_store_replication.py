"""S3 replication of model weights from the source-of-truth bucket to every other AWS region's bucket.

Why replication, not a copy job: S3 replicates each new or overwritten object version within
minutes, re-encrypts it with the destination bucket's own KMS key, and replicates deletes
(delete markers), so every region serves the same weights without anyone running a sync.
Objects that existed before replication was turned on need one S3 Batch Replication job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from components.aws.policy_docs import service_trust
from components.domain.model_bucket import MODELS_PREFIX, S3BucketRef, policy


@dataclass(frozen=True, kw_only=True)
class S3ModelReplicationArgs:
    source: S3BucketRef
    source_region: str
    # Region entry name -> (its bucket, its AWS region).
    destinations: dict[str, tuple[S3BucketRef, str]]


def replication_policy(
    source_bucket: str, source_key: str, source_region: str, destinations: list[tuple[str, str, str]]
) -> str:
    """Read versions from the source, write replicas to each destination, with the keys on both sides."""
    statements: list[dict[str, Any]] = [
        {
            "Sid": "ReadSourceConfiguration",
            "Effect": "Allow",
            "Action": ["s3:GetReplicationConfiguration", "s3:ListBucket"],
            "Resource": source_bucket,
        },
        {
            "Sid": "ReadSourceVersions",
            "Effect": "Allow",
            "Action": ["s3:GetObjectVersionForReplication", "s3:GetObjectVersionAcl", "s3:GetObjectVersionTagging"],
            "Resource": f"{source_bucket}/*",
        },
        {
            "Sid": "DecryptSource",
            "Effect": "Allow",
            "Action": "kms:Decrypt",
            "Resource": source_key,
            "Condition": {"StringEquals": {"kms:ViaService": f"s3.{source_region}.amazonaws.com"}},
        },
    ]
    for i, (bucket, key, region) in enumerate(destinations):
        statements += [
            {
                "Sid": f"WriteReplicas{i}",
                "Effect": "Allow",
                "Action": ["s3:ReplicateObject", "s3:ReplicateDelete", "s3:ReplicateTags"],
                "Resource": f"{bucket}/*",
            },
            {
                "Sid": f"EncryptReplicas{i}",
                "Effect": "Allow",
                "Action": ["kms:Encrypt", "kms:GenerateDataKey"],
                "Resource": key,
                "Condition": {"StringEquals": {"kms:ViaService": f"s3.{region}.amazonaws.com"}},
            },
        ]
    return policy(statements)


class S3ModelReplication(pulumi.ComponentResource):
    """Runs on the source region's AWS provider (the replication configuration belongs to the source bucket)."""

    def __init__(self, name: str, args: S3ModelReplicationArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:aws:S3ModelReplication", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        targets = list(args.destinations.items())
        role = aws.iam.Role(f"{name}-role", assume_role_policy=service_trust("s3.amazonaws.com"), opts=child)
        aws.iam.RolePolicy(
            f"{name}-role",
            role=role.id,
            policy=pulumi.Output.all(
                args.source.bucket_arn,
                args.source.key_arn,
                pulumi.Output.all(*[pulumi.Output.all(s.bucket_arn, s.key_arn, r) for _, (s, r) in targets]),
            ).apply(lambda a: replication_policy(a[0], a[1], args.source_region, a[2])),
            opts=child,
        )
        self.config = aws.s3.BucketReplicationConfig(
            f"{name}-config",
            bucket=args.source.bucket_id,
            role=role.arn,
            rules=[
                {
                    "id": f"models-to-{entry}",
                    "priority": priority,
                    "status": "Enabled",
                    "filter": {"prefix": MODELS_PREFIX},
                    "delete_marker_replication": {"status": "Enabled"},
                    "source_selection_criteria": {"sse_kms_encrypted_objects": {"status": "Enabled"}},
                    "destination": {
                        "bucket": store.bucket_arn,
                        "encryption_configuration": {"replica_kms_key_id": store.key_arn},
                    },
                }
                for priority, (entry, (store, _)) in enumerate(targets)
            ],
            # Both sides must be versioned before S3 accepts the configuration.
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[*args.source.ready, *(r for _, (store, _) in targets for r in store.ready)]
            ),
        )
        self.register_outputs({"destinations": [entry for entry, _ in targets]})
