"""The model buckets' layout and the read grant on it, the same on every cloud.

Weights live under one prefix of every model bucket; read access (IRSA / Workload Identity, the S3-to-GCS
transfer's role) and the cache's mount are limited to it. The AWS store and the GCS transfer, which reads
the S3 source, grant the same read, so the IAM statements live here, below both clouds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

MODELS_PREFIX = "models/"


def listed_prefixes(prefix: str) -> list[str]:
    """The `s3:prefix` values a reader may list: the prefix as a directory (`models`, the key a metadata sync of the
    cache's mount point asks for) and everything under it. S3 answers a missing key 404 only to a caller that may
    list that key as a prefix, else 403, which Alluxio takes for an error (upstream.S3_MISSING_KEY_IS_404_ONLY_IF_LISTABLE)."""
    return [prefix.rstrip("/"), f"{prefix}*"]


def prefix_read_statements(bucket_arn: str, key_arn: str, prefix: str, region: str) -> list[dict[str, Any]]:
    """List and read objects under one prefix of an SSE-KMS bucket, and decrypt them through S3 only."""
    return [
        {
            "Sid": "ListPrefix",
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": bucket_arn,
            "Condition": {"StringLike": {"s3:prefix": listed_prefixes(prefix)}},
        },
        {"Sid": "ReadPrefix", "Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{bucket_arn}/{prefix}*"},
        {
            "Sid": "DecryptViaS3",
            "Effect": "Allow",
            "Action": "kms:Decrypt",
            "Resource": key_arn,
            "Condition": {"StringEquals": {"kms:ViaService": f"s3.{region}.amazonaws.com"}},
        },
    ]


def policy(statements: list[dict[str, Any]]) -> str:
    """An IAM policy document granting `statements`."""
    return json.dumps({"Version": "2012-10-17", "Statement": statements})


@dataclass(frozen=True, kw_only=True)
class S3BucketRef:
    """A model bucket as cross-region wiring sees it: from this stack's store or another stack's outputs."""

    bucket_id: pulumi.Input[str]
    bucket_arn: pulumi.Input[str]
    key_arn: pulumi.Input[str]
    # What must exist first in this stack (versioning, before S3 accepts a replication configuration).
    ready: Sequence[pulumi.Resource] = ()
