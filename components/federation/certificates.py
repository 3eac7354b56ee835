"""The federation's own PKI: its CAs, the Karmada API server's certificate, and client certificates.

We generate the certificates (chart `certs.mode: custom`) rather than let the chart's pre-install job do
it, because the chart's job signs for in-cluster names only (members in other clouds reach the API server
on its load balancer), issues a one-year CA, and keeps the CA key where we could not sign the
per-member agent certificates with it.

- the Karmada CA signs the API server's serving certificate, which the chart also uses as the
  components' client certificate (CN system:admin, O system:masters), and each pull member's
  karmada-agent client certificate (CN system:karmada:agent:<cluster>, O system:karmada:agents);
- the front-proxy CA signs the aggregation layer's client certificate (CN front-proxy-client).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_tls as tls
import yaml

RSA_BITS = 3072  # the chart's certs.auto.rsaSize
CA_VALIDITY_HOURS = 10 * 365 * 24
LEAF_VALIDITY_HOURS = 5 * 365 * 24
# A pull member's agent certificate: the year `karmadactl register` asks for (KARMADA_AGENT_IDENTITY). Its key
# lives in another cluster, and Karmada's API server checks no revocation: a stolen one works until it expires.
AGENT_VALIDITY_HOURS = 365 * 24
# `pulumi up` reissues a leaf certificate in the last 90 days of its validity.
EARLY_RENEWAL_HOURS = 90 * 24
SERVER_USES = ("digital_signature", "key_encipherment", "server_auth", "client_auth")
CLIENT_USES = ("digital_signature", "key_encipherment", "client_auth")
# Who a pull member's karmada-agent is to the Karmada API server (karmadactl register's identities).
AGENT_USER_PREFIX = "system:karmada:agent:"
AGENT_GROUP = "system:karmada:agents"


@dataclass(frozen=True, kw_only=True)
class KeyPair:
    """A certificate and its private key, PEM-encoded; the key is a secret."""

    cert_pem: pulumi.Output[str]
    key_pem: pulumi.Output[str]


def certificate_authority(name: str, common_name: str, parent: pulumi.Resource) -> KeyPair:
    key = tls.PrivateKey(f"{name}-key", algorithm="RSA", rsa_bits=RSA_BITS, opts=pulumi.ResourceOptions(parent=parent))
    cert = tls.SelfSignedCert(
        f"{name}-cert",
        private_key_pem=key.private_key_pem,
        subject={"common_name": common_name},
        is_ca_certificate=True,
        validity_period_hours=CA_VALIDITY_HOURS,
        allowed_uses=["cert_signing", "crl_signing", "digital_signature", "key_encipherment"],
        opts=pulumi.ResourceOptions(parent=parent),
    )
    return KeyPair(cert_pem=cert.cert_pem, key_pem=pulumi.Output.secret(key.private_key_pem))


def signed_certificate(
    name: str,
    ca: KeyPair,
    parent: pulumi.Resource,
    common_name: str,
    organization: str | None = None,
    allowed_uses: Sequence[str] = CLIENT_USES,
    dns_names: Sequence[str] = (),
    ip_addresses: pulumi.Input[Sequence[str]] | None = None,
    validity_hours: int = LEAF_VALIDITY_HOURS,
) -> KeyPair:
    """A leaf certificate signed by `ca` (client-only unless `allowed_uses` says otherwise)."""
    opts = pulumi.ResourceOptions(parent=parent)
    key = tls.PrivateKey(f"{name}-key", algorithm="RSA", rsa_bits=RSA_BITS, opts=opts)
    request = tls.CertRequest(
        f"{name}-csr",
        private_key_pem=key.private_key_pem,
        subject={"common_name": common_name, **({"organization": organization} if organization else {})},
        dns_names=list(dns_names) or None,
        ip_addresses=ip_addresses,
        opts=opts,
    )
    cert = tls.LocallySignedCert(
        f"{name}-cert",
        cert_request_pem=request.cert_request_pem,
        ca_private_key_pem=ca.key_pem,
        ca_cert_pem=ca.cert_pem,
        validity_period_hours=validity_hours,
        early_renewal_hours=EARLY_RENEWAL_HOURS,
        allowed_uses=list(allowed_uses),
        opts=opts,
    )
    return KeyPair(cert_pem=cert.cert_pem, key_pem=pulumi.Output.secret(key.private_key_pem))


def client_kubeconfig(name: str, server: str, ca_pem: str, cert_pem: str, key_pem: str) -> str:
    """A kubeconfig authenticating with a client certificate (what the Karmada API server trusts)."""

    def b64(pem: str) -> str:
        return base64.b64encode(pem.encode()).decode()

    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority-data": b64(ca_pem)}}],
            "users": [
                {"name": name, "user": {"client-certificate-data": b64(cert_pem), "client-key-data": b64(key_pem)}}
            ],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "current-context": name,
        },
        sort_keys=False,
    )


@dataclass(frozen=True, kw_only=True)
class KarmadaCertificatesArgs:
    # Names and addresses the API server answers on: in-cluster service names and its load balancer.
    server_dns_names: tuple[str, ...]
    server_ip_addresses: pulumi.Input[Sequence[str]]


class KarmadaCertificates(pulumi.ComponentResource):
    """CAs and certificates the karmada chart takes in `certs.custom`."""

    ca: KeyPair
    front_proxy_ca: KeyPair
    server: KeyPair  # serving certificate of the API server and etcd, and the components' client identity
    front_proxy_client: KeyPair

    def __init__(self, name: str, args: KarmadaCertificatesArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:federation:KarmadaCertificates", name, None, opts)
        self.ca = certificate_authority(f"{name}-ca", "karmada-ca", self)
        self.front_proxy_ca = certificate_authority(f"{name}-front-proxy-ca", "karmada-front-proxy-ca", self)
        self.server = signed_certificate(
            f"{name}-server",
            self.ca,
            self,
            common_name="system:admin",
            organization="system:masters",
            allowed_uses=SERVER_USES,
            dns_names=args.server_dns_names,
            ip_addresses=args.server_ip_addresses,
        )
        self.front_proxy_client = signed_certificate(
            f"{name}-front-proxy-client", self.front_proxy_ca, self, common_name="front-proxy-client"
        )
        self.register_outputs({"caCertPem": self.ca.cert_pem})
