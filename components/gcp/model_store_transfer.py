"""Storage Transfer Service job feeding a GCS model bucket from the source-of-truth S3 bucket.

Why a transfer job: S3 cannot replicate to GCS, and a scheduled Storage Transfer job is the
managed way to keep a GCS bucket in step with S3. It authenticates to AWS without keys: it
assumes an IAM role through web-identity federation with Google (the role trusts exactly this
project's transfer service agent, by its subject id), reads only the models prefix, copies
objects that are new or changed and deletes those removed at the source.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp

from components.domain.model_bucket import MODELS_PREFIX, S3BucketRef, policy, prefix_read_statements

# The Storage Transfer service agent needs to list, create and delete objects in the sink
# (cloud.google.com/storage-transfer/docs/sink-cloud-storage).
SINK_ROLE = "roles/storage.legacyBucketWriter"
# Anchors the repeating schedule; the first run starts as soon as the job exists.
SCHEDULE_START = {"year": 2025, "month": 1, "day": 1}


@dataclass(frozen=True, kw_only=True)
class S3ToGcsTransferArgs:
    source: S3BucketRef
    source_region: str
    sink_bucket: pulumi.Input[str]  # the GCS bucket's name
    project: str
    interval_hours: int


def google_federation_trust(subject_id: str) -> str:
    """Trust policy for AssumeRoleWithWebIdentity by one Google identity (the transfer service agent)."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": "accounts.google.com"},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {"StringEquals": {"accounts.google.com:sub": subject_id}},
                }
            ],
        }
    )


class S3ToGcsTransfer(pulumi.ComponentResource):
    """Needs both providers: `aws` of the source region (the role) and `gcp` of the sink (the job)."""

    def __init__(self, name: str, args: S3ToGcsTransferArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:gcp:S3ToGcsTransfer", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        agent = gcp.storage.get_transfer_project_service_account_output(project=args.project)

        role = aws.iam.Role(
            f"{name}-source", assume_role_policy=agent.subject_id.apply(google_federation_trust), opts=child
        )
        read = pulumi.Output.all(args.source.bucket_arn, args.source.key_arn).apply(
            lambda a: policy(
                [
                    {"Sid": "Locate", "Effect": "Allow", "Action": "s3:GetBucketLocation", "Resource": a[0]},
                    *prefix_read_statements(a[0], a[1], MODELS_PREFIX, args.source_region),
                ]
            )
        )
        role_policy = aws.iam.RolePolicy(f"{name}-source", role=role.id, policy=read, opts=child)
        sink_access = gcp.storage.BucketIAMMember(
            f"{name}-sink", bucket=args.sink_bucket, role=SINK_ROLE, member=agent.member, opts=child
        )
        self.job = gcp.storage.TransferJob(
            f"{name}-job",
            project=args.project,
            description=pulumi.Output.concat("Model weights from s3://", args.source.bucket_id),
            transfer_spec={
                "aws_s3_data_source": {
                    "bucket_name": args.source.bucket_id,
                    "path": MODELS_PREFIX,
                    "role_arn": role.arn,
                },
                "gcs_data_sink": {"bucket_name": args.sink_bucket, "path": MODELS_PREFIX},
                "transfer_options": {"overwrite_when": "DIFFERENT", "delete_objects_unique_in_sink": True},
            },
            schedule={"schedule_start_date": SCHEDULE_START, "repeat_interval": f"{args.interval_hours * 3600}s"},
            opts=pulumi.ResourceOptions(parent=self, depends_on=[role_policy, sink_access]),
        )
        self.register_outputs({"job": self.job.name})
