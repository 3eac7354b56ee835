"""Run every check of an environment: who we are on AWS, then each region entry in config order."""

from __future__ import annotations

from components.config.environment import EnvironmentSpec
from tools.preflight.aws_api import ClientFactory, call
from tools.preflight.aws_dns import check_gateway_zone
from tools.preflight.aws_models import check_aws_models
from tools.preflight.aws_pools import check_aws_pools
from tools.preflight.findings import Finding, RegionTarget, Report
from tools.preflight.gcp import gcp_gateway_zone_not_checked, gcp_not_checked


def run_preflight(
    env: EnvironmentSpec, stack: str, client_for: ClientFactory, bucket_prefix: str | None = None
) -> Report:
    """Raises AwsUnavailable (one line) when AWS cannot be asked at all.

    Model buckets are named from `modelStore.bucketPrefix` unless `bucket_prefix` overrides it.
    """
    bucket_prefix = bucket_prefix or env.model_store.bucket_prefix
    aws_regions = [r for r in env.regions if r.cloud == "aws"]
    account = None
    if aws_regions:
        # One cheap call up front: a missing or expired credential is one line, not a row per check.
        identity = call(client_for("sts", aws_regions[0].region), "get_caller_identity", "sts:GetCallerIdentity")
        account = identity["Account"]

    findings: list[Finding] = check_gateway_zone(env, client_for) if aws_regions else []
    findings += gcp_gateway_zone_not_checked(env)
    for index, region in enumerate(env.regions):
        if region.cloud == "aws":
            findings.extend(check_aws_pools(index, region, client_for))
            findings.extend(check_aws_models(env, stack, region, bucket_prefix, client_for))
        else:
            findings.append(gcp_not_checked(env, region))
    targets = [RegionTarget(r.name, r.cloud, r.region) for r in env.regions]
    return Report(environment=stack, account=account, regions=targets, findings=findings)
