"""boto3 clients for the checks, and the AWS errors that stop them or only blind one check."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    CredentialRetrievalError,
    EndpointConnectionError,
    NoCredentialsError,
    PartialCredentialsError,
    ProfileNotFound,
    ReadTimeoutError,
    SSOError,
    TokenRetrievalError,
)

# (service, region) -> client. Tests pass their own: moto, or Stubber where moto lacks an API.
ClientFactory = Callable[[str, str], Any]

# Read-only calls, a few per region: fail fast rather than hang a CI job.
_CLIENT_CONFIG = Config(connect_timeout=5, read_timeout=20, retries={"mode": "standard", "max_attempts": 4})

# Error codes meaning "these credentials are not usable", whichever API returns them.
_CREDENTIAL_CODES = {
    "ExpiredToken": "have expired",
    "ExpiredTokenException": "have expired",
    "RequestExpired": "were used with a skewed clock or have expired",
    "InvalidClientTokenId": "are not valid (unknown access key id)",
    "InvalidAccessKeyId": "are not valid (unknown access key id)",
    "UnrecognizedClientException": "are not valid (unknown access key id)",
    "SignatureDoesNotMatch": "are not valid (wrong secret access key)",
    "AuthFailure": "were rejected",
}
# Error codes meaning "this identity may not call that API": only that check is blind.
_DENIED_CODES = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "Forbidden", "403"}

_REFRESH = "refresh them (`aws sso login --profile <profile>`, or re-assume the role) and run preflight again"


class AwsUnavailable(Exception):
    """Credentials missing or unusable, or AWS unreachable: nothing can be checked. One line."""


class AccessDenied(Exception):
    """The identity lacks the IAM action one check needs."""

    def __init__(self, action: str):
        self.action = action
        super().__init__(action)


def session_client_factory(profile: str | None = None) -> ClientFactory:
    """Clients from the standard credential chain (env, profile/SSO, container or instance role)."""
    try:
        session = boto3.Session(profile_name=profile)
    except ProfileNotFound as exc:
        raise AwsUnavailable(f"AWS profile not found: {exc.kwargs.get('profile')}; check AWS_PROFILE") from None

    @cache
    def client(service: str, region: str) -> Any:
        return session.client(service, region_name=region, config=_CLIENT_CONFIG)

    return client


def call(client: Any, operation: str, action: str, **params: Any) -> dict[str, Any]:
    """`client.<operation>(**params)`; `action` is the IAM action it needs, e.g. ec2:DescribeInstanceTypes."""
    return _guarded(action, lambda: getattr(client, operation)(**params))


def collect(client: Any, operation: str, action: str, key: str, **params: Any) -> list[dict[str, Any]]:
    """Every item under `key` across the pages of a paginated operation."""
    return _guarded(
        action,
        lambda: [item for page in client.get_paginator(operation).paginate(**params) for item in page.get(key, [])],
    )


def _guarded(action: str, request: Callable[[], Any]) -> Any:
    """Credential and network problems become AwsUnavailable; a denied action becomes AccessDenied."""
    try:
        return request()
    except ClientError as exc:
        code = error_code(exc)
        if code in _CREDENTIAL_CODES:
            raise AwsUnavailable(f"AWS credentials {_CREDENTIAL_CODES[code]} ({code}); {_REFRESH}") from None
        if code in _DENIED_CODES:
            raise AccessDenied(action) from None
        raise
    except NoCredentialsError:
        raise AwsUnavailable(
            "AWS credentials not found; set AWS_PROFILE (and run `aws sso login` for SSO profiles) or "
            "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or run where a role is attached"
        ) from None
    except (PartialCredentialsError, CredentialRetrievalError, TokenRetrievalError, SSOError) as exc:
        raise AwsUnavailable(f"AWS credentials could not be loaded ({exc}); {_REFRESH}") from None
    except (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError) as exc:
        raise AwsUnavailable(f"AWS API unreachable ({exc}); check the network, proxy or VPC endpoints") from None
    except BotoCoreError as exc:
        raise AwsUnavailable(f"AWS call {action} failed: {exc}") from None


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))
