"""Are the weights of every model placed in an AWS region in that region's model bucket?"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.config.workloads import ModelSpec
from components.k8s.names import model_bucket_name
from tools.preflight.aws_api import AccessDenied, ClientFactory, collect, error_code
from tools.preflight.findings import Finding
from tools.preflight.model_layout import check_layout

_GIB = 1024**3


def models_in(env: EnvironmentSpec, region: RegionSpec) -> list[tuple[int, ModelSpec]]:
    """Models with a placement in this region entry, with their index in `models`."""
    return [(i, m) for i, m in enumerate(env.models) if any(p.region == region.name for p in m.placements)]


def check_aws_models(
    env: EnvironmentSpec, stack: str, region: RegionSpec, bucket_prefix: str, client_for: ClientFactory
) -> list[Finding]:
    placed = models_in(env, region)
    if not placed:
        return []
    bucket = model_bucket_name(bucket_prefix, stack, region.name)
    s3 = client_for("s3", region.region)
    return [_check_model(region, bucket, index, model, s3) for index, model in placed]


def _check_model(region: RegionSpec, bucket: str, index: int, model: ModelSpec, s3: Any) -> Finding:
    prefix = model.weights_prefix
    subject = f"model {model.name}"
    where = f"s3://{bucket}/{prefix}"
    try:
        listed = collect(s3, "list_objects_v2", "s3:ListBucket", "Contents", Bucket=bucket, Prefix=prefix)
    except AccessDenied as denied:
        return Finding(
            region.name,
            "model files",
            subject,
            "warn",
            f"not checked: access denied listing {where}",
            f"grant {denied.action} on arn:aws:s3:::{bucket} to the identity running preflight",
        )
    except ClientError as exc:
        if error_code(exc) != "NoSuchBucket":
            raise
        return Finding(
            region.name,
            "model files",
            subject,
            "warn",
            f"bucket {bucket} does not exist yet",
            f"`pulumi up` creates it; upload the weights to {where} before the model's pods start",
        )
    return model_finding(region.name, subject, where, index, model, [(o["Key"], o["Size"]) for o in listed])


def model_finding(
    region_name: str, subject: str, where: str, index: int, model: ModelSpec, objects: list[tuple[str, int]]
) -> Finding:
    verdict = check_layout(objects, model)
    # The total feeds the load-time estimate (weights / load bandwidth) of the serving sizing.
    data = {
        "uri": where,
        "objects": verdict.objects,
        "bytes": verdict.total_bytes,
        "weightBytes": verdict.weight_bytes,
    }
    size = f"{verdict.objects} object{'' if verdict.objects == 1 else 's'}, {verdict.total_bytes / _GIB:.1f} GiB"
    upload = f"upload the checkpoint to {where}, or set models[{index}].storagePath to where it is"
    if not verdict.objects:
        return Finding(region_name, "model files", subject, "fail", f"{where} is empty", upload, data)
    if verdict.missing:
        return Finding(
            region_name,
            "model files",
            subject,
            "fail",
            f"missing {', '.join(verdict.missing)} ({size})",
            upload,
            data,
        )
    if verdict.warnings:
        return Finding(
            region_name,
            "model files",
            subject,
            "warn",
            f"{size}; {'; '.join(verdict.warnings)}",
            f"add tokenizer_config.json to {where}",
            data,
        )
    return Finding(region_name, "model files", subject, "pass", f"{size} at {where}", data=data)
