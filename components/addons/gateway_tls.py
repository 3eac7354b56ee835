"""The gateway's certificate, issued by cert-manager from the environment's own CA (`gateway.tls.issuer: privateCa`).

Envoy Gateway programs an HTTPS listener only once the Secret it names exists (ENVOY_GATEWAY_LISTENER_NEEDS_ITS_SECRET,
components/catalog/bringup.py), so the region's stack issues it: the region's intermediate of the environment's CA
(signed once, by the anchor stack, and read by the others) is a `kubernetes.io/tls` Secret in cert-manager's
namespace, a CA ClusterIssuer signs with it, and a Certificate for the gateway's hostname makes cert-manager write
`regions[].gateway.tlsSecret` in envoy-gateway-system (leaf, then the intermediate) and renew it
(CERT_MANAGER_ISSUES_INTO_A_SECRET). Clients trust the root's certificate, the `gatewayCa` stack output; the root's
key is on no cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s
import pulumi_tls as tls

from components.addons.cert_manager import NAMESPACE as CERT_MANAGER_NAMESPACE
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import custom_resource
from components.k8s.names import ENVOY_GATEWAY_NAMESPACE

CERT_MANAGER_API = "cert-manager.io/v1"
ISSUER = "inference-gateway-ca"  # the ClusterIssuer, and the Secret holding its key pair
CERTIFICATE = "inference-gateway"
CA_VALIDITY_HOURS = 10 * 365 * 24
# An intermediate is renewed by the anchor's `up` within its last year (its gateways' leaves last 90 days).
INTERMEDIATE_VALIDITY_HOURS, INTERMEDIATE_RENEW_HOURS = 43800, 8760
# cert-manager's defaults, stated: 90 days, renewed 30 days before expiry.
CERTIFICATE_DURATION, RENEW_BEFORE = "2160h", "720h"


@dataclass(frozen=True)
class IssuingCa:
    """What one cluster's cert-manager signs with: its intermediate CA (certificate, then the root) and its key."""

    chain_pem: pulumi.Output[str]
    key_pem: pulumi.Output[str]  # secret


class GatewayCa(pulumi.ComponentResource):
    """The environment's CA for its gateways: a self-signed ECDSA P-256 root whose key never leaves this component (the
    anchor stack's state), and per region an intermediate CA it signs, the only key that region's cluster holds. An
    intermediate may sign no CA below it (path length 0). Neither can carry name constraints: the pinned tls provider
    has no input for them (TLS_PROVIDER_HAS_NO_NAME_CONSTRAINTS, components/catalog/upstream.py)."""

    cert_pem: pulumi.Output[str]
    intermediates: dict[str, IssuingCa]  # region entry -> its issuing CA

    def __init__(self, name: str, common_name: str, regions: Sequence[str], opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:GatewayCa", name, None, opts)
        provider = tls.Provider(f"{name}-tls", opts=pulumi.ResourceOptions(parent=self))
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        key = tls.PrivateKey(f"{name}-key", algorithm="ECDSA", ecdsa_curve="P256", opts=child)
        cert = tls.SelfSignedCert(
            f"{name}-cert",
            private_key_pem=key.private_key_pem,
            is_ca_certificate=True,
            validity_period_hours=CA_VALIDITY_HOURS,
            allowed_uses=["cert_signing", "crl_signing", "digital_signature"],
            subject={"common_name": common_name},
            opts=child,
        )
        self.cert_pem = cert.cert_pem
        self.intermediates = {}
        for region in regions:
            region_key = tls.PrivateKey(f"{name}-{region}-key", algorithm="ECDSA", ecdsa_curve="P256", opts=child)
            request = tls.CertRequest(
                f"{name}-{region}-csr",
                private_key_pem=region_key.private_key_pem,
                subject={"common_name": f"{common_name} {region}"},
                opts=child,
            )
            intermediate = tls.LocallySignedCert(
                f"{name}-{region}-cert",
                cert_request_pem=request.cert_request_pem,
                ca_private_key_pem=key.private_key_pem,
                ca_cert_pem=cert.cert_pem,
                is_ca_certificate=True,
                max_path_length=0,
                set_subject_key_id=True,
                validity_period_hours=INTERMEDIATE_VALIDITY_HOURS,
                early_renewal_hours=INTERMEDIATE_RENEW_HOURS,
                allowed_uses=["cert_signing", "crl_signing", "digital_signature"],
                opts=child,
            )
            self.intermediates[region] = IssuingCa(
                chain_pem=pulumi.Output.concat(intermediate.cert_pem, cert.cert_pem),
                key_pem=pulumi.Output.secret(region_key.private_key_pem),
            )
        self.register_outputs({"certificate": self.cert_pem})


@dataclass(frozen=True, kw_only=True)
class GatewayCertificateArgs:
    cluster: ClusterHandle
    hostname: str
    secret_name: str  # regions[].gateway.tlsSecret: what the listener serves
    ca_cert_pem: pulumi.Input[str]
    ca_key_pem: pulumi.Input[str]
    cert_manager: Sequence[pulumi.Resource]  # its release: CRDs and webhook (empty where it already runs)
    gateway: pulumi.Resource  # the gateway, whose namespace the certificate lands in


class GatewayCertificate(pulumi.ComponentResource):
    certificate: k8s.apiextensions.CustomResource

    def __init__(self, name: str, args: GatewayCertificateArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:GatewayCertificate", name, None, opts)
        cluster = args.cluster
        ca_pair: pulumi.Output[dict[str, str]] = pulumi.Output.secret(
            pulumi.Output.all(args.ca_cert_pem, args.ca_key_pem).apply(
                lambda pair: {"tls.crt": pair[0], "tls.key": pair[1]}
            )
        )
        key_pair = k8s.core.v1.Secret(
            f"{cluster.name}-{ISSUER}",
            metadata={"name": ISSUER, "namespace": CERT_MANAGER_NAMESPACE},
            type="kubernetes.io/tls",
            string_data=ca_pair,
            opts=pulumi.ResourceOptions(
                parent=self, provider=cluster.provider, depends_on=[*cluster.ready, *args.cert_manager]
            ),
        )
        issuer = custom_resource(
            f"{cluster.name}-clusterissuer-{ISSUER}",
            {
                "apiVersion": CERT_MANAGER_API,
                "kind": "ClusterIssuer",
                "metadata": {"name": ISSUER},
                "spec": {"ca": {"secretName": ISSUER}},
            },
            cluster=cluster,
            parent=self,
            crd_from=list(args.cert_manager),
            depends_on=[key_pair],
        )
        self.certificate = custom_resource(
            f"{cluster.name}-certificate-{CERTIFICATE}",
            {
                "apiVersion": CERT_MANAGER_API,
                "kind": "Certificate",
                "metadata": {"name": CERTIFICATE, "namespace": ENVOY_GATEWAY_NAMESPACE},
                "spec": {
                    "secretName": args.secret_name,
                    "dnsNames": [args.hostname],
                    "issuerRef": {"group": "cert-manager.io", "kind": "ClusterIssuer", "name": ISSUER},
                    "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
                    "usages": ["server auth", "digital signature"],
                    "duration": CERTIFICATE_DURATION,
                    "renewBefore": RENEW_BEFORE,
                },
            },
            cluster=cluster,
            parent=self,
            crd_from=list(args.cert_manager),
            depends_on=[issuer, args.gateway],
        )
        self.register_outputs({"secret": args.secret_name, "hostname": args.hostname})
