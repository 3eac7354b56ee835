"""The gateways' DNS prerequisite on AWS: the public hosted zone ExternalDNS writes the public gateways' names into.

`gateway.dns.route53ZoneId` names it (components/config/gateway_tls.py); the stacks do not create it (the domain's
registrar delegates to it). Read-only: route53:GetHostedZone.
"""

from __future__ import annotations

from botocore.exceptions import ClientError

from components.config.environment import EnvironmentSpec
from components.domain.gateways import gateway_hostname, has_gateway
from tools.preflight.aws_api import AccessDenied, ClientFactory, call, error_code
from tools.preflight.findings import Finding

CHECK = "gateway dns zone"


def check_gateway_zone(env: EnvironmentSpec, client_for: ClientFactory) -> list[Finding]:
    """One finding, on the first public AWS gateway's region, when ExternalDNS publishes into a Route 53 zone."""
    zone_id = env.gateway.dns.route53_zone_id
    public = [r for r in env.regions if r.cloud == "aws" and has_gateway(env, r) and r.gateway.exposure == "public"]
    if env.gateway.dns.publisher != "externalDns" or zone_id is None or not public:
        return []
    region, names = public[0], [gateway_hostname(env, r) for r in public]
    subject = f"Route 53 zone {zone_id}"
    try:
        zone = call(client_for("route53", region.region), "get_hosted_zone", "route53:GetHostedZone", Id=zone_id)
    except AccessDenied as denied:
        return [Finding(region.name, CHECK, subject, "warn", "not checked: access denied", f"grant {denied.action}")]
    except ClientError as exc:
        if error_code(exc) != "NoSuchHostedZone":
            raise
        return [
            Finding(
                region.name,
                CHECK,
                subject,
                "fail",
                "no such hosted zone: ExternalDNS could publish no gateway name",
                "create the public hosted zone of gateway.domain (and delegate the domain to it), or fix "
                "gateway.dns.route53ZoneId",
            )
        ]
    hosted = zone["HostedZone"]
    domain = hosted["Name"].rstrip(".")
    private = hosted.get("Config", {}).get("PrivateZone", False)
    outside = [n for n in names if n != domain and not n.endswith("." + domain)]
    if private or outside:
        problem = "a private zone" if private else f"{domain} does not serve {', '.join(outside)}"
        return [
            Finding(
                region.name,
                CHECK,
                subject,
                "fail",
                f"{problem}: the public gateways' names would not resolve",
                "name the public hosted zone that serves gateway.domain in gateway.dns.route53ZoneId",
            )
        ]
    return [Finding(region.name, CHECK, subject, "pass", f"public zone {domain} serves {', '.join(names)}")]
