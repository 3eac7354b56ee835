"""IAM policy documents shared by AWS components."""

from __future__ import annotations

import json

import pulumi


def service_trust(service: str) -> str:
    """Trust policy letting one AWS service assume a role."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}],
        }
    )


def irsa_trust(
    oidc_provider_arn: pulumi.Input[str], issuer_url: pulumi.Input[str], namespace: str, service_account: str
) -> pulumi.Output[str]:
    """Trust policy for IRSA pinned to exactly one service account and the STS audience."""

    def render(args: list[str]) -> str:
        arn, issuer = args
        host = issuer.removeprefix("https://")
        return json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Federated": arn},
                        "Action": "sts:AssumeRoleWithWebIdentity",
                        "Condition": {
                            "StringEquals": {
                                f"{host}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                                f"{host}:aud": "sts.amazonaws.com",
                            }
                        },
                    }
                ],
            }
        )

    return pulumi.Output.all(oidc_provider_arn, issuer_url).apply(render)


def tls_only_bucket_policy(bucket_arn: str) -> str:
    """Bucket policy refusing every request that does not arrive over TLS."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "DenyInsecureTransport",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": [bucket_arn, f"{bucket_arn}/*"],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ],
        }
    )
