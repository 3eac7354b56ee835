"""`gateway.tls` and `gateway.dns`: who issues each gateway's certificate, and who publishes its name.

Every gateway's HTTPS listener serves the Secret `regions[].gateway.tlsSecret` (Envoy Gateway programs no listener
without it) for `https://<region>.<gateway.domain>`, and clients (the rollout's gateway gate among them) resolve
that name. By default both come with the region's stack, so a wave completes on an empty account:
- tls `privateCa`: cert-manager issues the certificate from the environment's own CA (created by the anchor stack;
  clients trust `pulumi stack output gatewayCa`); `external`: you create each region's Secret.
- dns `externalDns`: ExternalDNS on the cluster publishes the gateway's routes' hostnames: a public gateway's into
  the public zone that serves `gateway.domain` (which must exist: Route 53 `route53ZoneId`, Cloud DNS
  `cloudDnsZone`; `make preflight` checks the Route 53 one), an internal gateway's into a private zone the stack
  creates for its network; `external`: you publish each name.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from components.config.base import Spec

_ROUTE53_ZONE = re.compile(r"[A-Z0-9]{1,32}")  # Route 53 HostedZone.Id, without its "/hostedzone/" prefix
_CLOUD_DNS_ZONE = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")


class GatewayTlsSpec(Spec):
    """Who issues each gateway's certificate."""

    issuer: Literal["privateCa", "external"] = Field(
        "privateCa",
        description="privateCa: cert-manager issues each gateway's certificate from the environment's CA (clients "
        "trust `pulumi stack output gatewayCa`); external: you create each region's tlsSecret.",
    )


class GatewayDnsSpec(Spec):
    """Who publishes `<region>.<gateway.domain>`."""

    publisher: Literal["externalDns", "external"] = Field(
        "externalDns",
        description="externalDns: ExternalDNS on each gateway's cluster publishes its hostname (public gateways "
        "into the zone below, internal ones into a private zone for the region's network); external: you do.",
    )
    route53_zone_id: str | None = Field(
        None, description="Route 53 public hosted zone serving gateway.domain (public gateways on AWS)."
    )
    cloud_dns_zone: str | None = Field(
        None,
        description="Cloud DNS public managed zone serving gateway.domain, in each GCP region's project (public "
        "gateways on GCP).",
    )

    @field_validator("route53_zone_id")
    @classmethod
    def _route53(cls, value: str | None) -> str | None:
        if value is not None and not _ROUTE53_ZONE.fullmatch(value):
            raise ValueError(f"{value!r} is not a Route 53 hosted zone id (capitals and digits, e.g. Z0412345ACMELLM)")
        return value

    @field_validator("cloud_dns_zone")
    @classmethod
    def _cloud_dns(cls, value: str | None) -> str | None:
        if value is not None and not _CLOUD_DNS_ZONE.fullmatch(value):
            raise ValueError(f"{value!r} is not a Cloud DNS managed zone name (lower-case letters, digits, dashes)")
        return value
