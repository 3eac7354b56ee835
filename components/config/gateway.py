"""The inference gateway: one OpenAI-compatible HTTPS entry per region, tenant budgets, external providers.

Credentials of external providers are Pulumi secrets: set them with `pulumi config set --secret` (a
`secure:` value in the stack file); they are held as SecretStr and reach resources only wrapped in
`pulumi.Output.secret`.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Network
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, SecretStr

from components.config.base import Name, Spec
from components.config.gateway_tls import GatewayDnsSpec, GatewayTlsSpec

_DNS_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$")


def _check_dns_name(value: str) -> str:
    if not _DNS_NAME.match(value):
        raise ValueError(f"{value!r} is not a DNS name; use lowercase labels separated by dots, e.g. llm.example.com")
    return value


DnsName = Annotated[str, AfterValidator(_check_dns_name)]


class RateSpec(Spec):
    """A limit per window: tokens (or requests) a tenant may use per minute or per hour."""

    limit: int = Field(description="How many tokens (or requests) per window; must be positive.")
    per: Literal["minute", "hour"] = Field("minute", description="Window the limit counts over.")


class TenantBudgetSpec(Spec):
    """What one region's gateway lets one tenant use, across all its models (each region counts in its own Redis).

    Token budgets are charged after the response from the token counts the AI Gateway reads from it;
    a request is refused (429) once the budget of its window is spent. Omitted keys are unlimited.
    """

    input_tokens: RateSpec | None = Field(None, description="Prompt tokens per window.")
    output_tokens: RateSpec | None = Field(None, description="Completion tokens per window.")
    total_tokens: RateSpec | None = Field(None, description="Prompt plus completion tokens per window.")
    requests: RateSpec | None = Field(None, description="Requests per window, whatever their size.")

    def tokens(self) -> dict[str, RateSpec]:
        """Token type (input|output|total) -> its budget, for the types that have one."""
        budgets = {"input": self.input_tokens, "output": self.output_tokens, "total": self.total_tokens}
        return {kind: rate for kind, rate in budgets.items() if rate is not None}


class CircuitBreakerSpec(Spec):
    """Envoy circuit-breaker thresholds per backend (per Envoy replica): past them Envoy answers 503 at once."""

    max_connections: int = Field(1024, ge=1, description="Open connections to one backend.")
    max_pending_requests: int = Field(
        256, ge=1, description="Requests queued in Envoy waiting for a connection; beyond that, fail fast."
    )
    max_parallel_requests: int = Field(1024, ge=1, description="Requests in flight to one backend.")
    max_parallel_retries: int = Field(
        16, ge=1, description="Retries in flight to one backend: small, so a struggling backend gets no retry storm."
    )


class EndpointPickerSpec(Spec):
    """The InferencePool's endpoint picker (EPP): picks the replica by queue, KV-cache use and prefix-cache hits."""

    failure_mode: Literal["FailClose", "FailOpen"] = Field(
        "FailClose",
        description="When the picker does not answer: FailClose rejects the request (503 with Retry-After). "
        "FailOpen is refused: the AI Gateway v1.1.0 builds the picker's filter fail-closed and would ignore it.",
    )
    replicas: int | None = Field(
        None,
        ge=1,
        le=5,
        description="Picker replicas, each serving (active-active: a change rolls without losing the serving one); "
        "default 2 in production, else 1.",
    )


class RedisSpec(Spec):
    """Where the global rate limiter keeps its counters."""

    url: str | None = Field(
        None,
        description="host:port of an existing Redis (e.g. ElastiCache, Memorystore); default: a small "
        "in-cluster Redis per cluster, password-protected, its counters persisted on a volume.",
    )


class ExternalProviderSpec(Spec):
    """A hosted LLM API the gateway routes some model names to, with credentials from Pulumi secrets."""

    name: Name = Field(description="Provider name; names its backend objects.")
    type: Literal["openai", "bedrock"] = Field(description="openai: any OpenAI-compatible API; bedrock: AWS Bedrock.")
    models: list[str] = Field(min_length=1, description="Model names clients send that go to this provider.")
    hostname: DnsName | None = Field(
        None, description="openai: API host (HTTPS, port 443); default api.openai.com. bedrock: derived from awsRegion."
    )
    aws_region: str | None = Field(None, description="bedrock: AWS region of the Bedrock runtime, e.g. us-east-1.")
    regions: list[str] | None = Field(None, description="Region entries whose gateway offers it; default all.")
    api_key: SecretStr | None = Field(None, description="openai: API key; a `secure:` value (pulumi config --secret).")
    access_key_id: SecretStr | None = Field(None, description="bedrock: AWS access key id; a `secure:` value.")
    secret_access_key: SecretStr | None = Field(None, description="bedrock: AWS secret access key; a `secure:` value.")

    @property
    def endpoint(self) -> str:
        if self.type == "bedrock":
            return f"bedrock-runtime.{self.aws_region}.amazonaws.com"
        return self.hostname or "api.openai.com"

    def offered_in(self, region: str) -> bool:
        return self.regions is None or region in self.regions


class GatewaySpec(Spec):
    """Environment-wide settings of the per-region inference gateways (Envoy Gateway + Envoy AI Gateway)."""

    enabled: bool = Field(True, description="Deploy a gateway on every cluster that serves models.")
    domain: DnsName | None = Field(
        None, description="DNS domain; a region's gateway is `<region>.<domain>` unless it sets gateway.hostname."
    )
    auth: Literal["apiKey", "none"] = Field(
        "apiKey",
        description="apiKey: each tenant calls with its generated key (Authorization: Bearer <key>); none: no "
        "authentication, internal listeners only.",
    )
    request_timeout_seconds: int = Field(
        600, ge=1, le=86400, description="Longest a request may take end to end, streamed tokens included."
    )
    idle_timeout_seconds: int = Field(
        120,
        ge=1,
        description="Longest wait for the next byte from a model server (first token included: queueing and "
        "prefill of long prompts count). A non-streamed answer (`stream: false`) sends its first byte when it is "
        "complete, so its whole generation must fit: clients asking for long outputs stream them.",
    )
    retries: int = Field(2, ge=0, le=5, description="Retries of a request that failed to connect or got a 503.")
    circuit_breaker: CircuitBreakerSpec = Field(
        default_factory=CircuitBreakerSpec, description="Envoy's limits per backend before it fails fast."
    )
    endpoint_picker: EndpointPickerSpec = Field(
        default_factory=EndpointPickerSpec, description="The cache-aware endpoint picker of every InferencePool."
    )
    redis: RedisSpec = Field(default_factory=RedisSpec, description="Counters of the global rate limiter.")
    tls: GatewayTlsSpec = Field(default_factory=GatewayTlsSpec, description="Who issues each gateway's certificate.")
    dns: GatewayDnsSpec = Field(default_factory=GatewayDnsSpec, description="Who publishes each gateway's name.")
    external_providers: list[ExternalProviderSpec] = Field(
        default_factory=list, description="Hosted LLM APIs offered next to the self-hosted models."
    )

    def external_models(self) -> dict[str, ExternalProviderSpec]:
        return {model: provider for provider in self.external_providers for model in provider.models}


class RegionGatewaySpec(Spec):
    """The gateway of one region entry's cluster."""

    enabled: bool = Field(True, description="Deploy the gateway here when the region serves models.")
    hostname: DnsName | None = Field(None, description="Host clients call; default `<region>.<gateway.domain>`.")
    exposure: Literal["public", "internal"] = Field(
        "internal", description="public: internet-facing load balancer; internal: reachable from the VPC only."
    )
    tls_secret: str = Field(
        "inference-gateway-tls",
        description="kubernetes.io/tls Secret in envoy-gateway-system holding the hostname's certificate: issued by "
        "cert-manager (gateway.tls.issuer privateCa), or yours (external).",
    )
    allowed_cidrs: list[IPv4Network] = Field(
        default_factory=list, description="Client CIDRs the load balancer admits; empty admits all."
    )
    replicas: int | None = Field(None, ge=1, description="Envoy proxy replicas; default 2 in production, else 1.")
