"""Key material of one rehearsal run: each local cluster's CAs, serving and client certificates, and the
`tls` provider's resources of the plan computed for real (the program's own Karmada CA, server and agent
certificates), so the control planes run with the certificates the program renders."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


def new_key(algorithm: str = "ECDSA", *, rsa_bits: int = 2048, curve: str = "P256") -> PrivateKey:
    if algorithm == "RSA":
        return rsa.generate_private_key(public_exponent=65537, key_size=rsa_bits)
    curves = {"P224": ec.SECP224R1(), "P256": ec.SECP256R1(), "P384": ec.SECP384R1(), "P521": ec.SECP521R1()}
    return ec.generate_private_key(curves[curve])


def key_pem(key: PrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def public_key_pem(key: PrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def cert_pem(cert: x509.Certificate) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def _name(common_name: str | None, organizations: list[str] | tuple[str, ...] = ()) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    if common_name:
        attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attributes)


def _sans(dns_names: list[str], ip_addresses: list[str]) -> x509.SubjectAlternativeName | None:
    names: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ip_addresses]
    return x509.SubjectAlternativeName(names) if names else None


# hashicorp/terraform-provider-tls's allowed_uses values -> X.509 key usages / extended key usages.
_KEY_USAGES = {
    "digital_signature",
    "content_commitment",
    "key_encipherment",
    "data_encipherment",
    "key_agreement",
    "cert_signing",
    "crl_signing",
    "encipher_only",
    "decipher_only",
}
_EXTENDED = {
    "server_auth": ExtendedKeyUsageOID.SERVER_AUTH,
    "client_auth": ExtendedKeyUsageOID.CLIENT_AUTH,
    "code_signing": ExtendedKeyUsageOID.CODE_SIGNING,
    "email_protection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
    "timestamping": ExtendedKeyUsageOID.TIME_STAMPING,
    "ocsp_signing": ExtendedKeyUsageOID.OCSP_SIGNING,
}


def _sign(
    *,
    subject: x509.Name,
    public_key: Any,
    issuer: x509.Name,
    issuer_key: PrivateKey,
    hours: int,
    uses: list[str],
    is_ca: bool,
    sans: x509.SubjectAlternativeName | None,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    usage = {u: u in uses for u in _KEY_USAGES}
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=hours))
        .add_extension(x509.BasicConstraints(ca=is_ca, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )
    if any(usage.values()):
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=usage["digital_signature"],
                content_commitment=usage["content_commitment"],
                key_encipherment=usage["key_encipherment"],
                data_encipherment=usage["data_encipherment"],
                key_agreement=usage["key_agreement"],
                key_cert_sign=usage["cert_signing"],
                crl_sign=usage["crl_signing"],
                encipher_only=usage["encipher_only"],
                decipher_only=usage["decipher_only"],
            ),
            critical=True,
        )
    extended = [_EXTENDED[u] for u in uses if u in _EXTENDED]
    if extended:
        builder = builder.add_extension(x509.ExtendedKeyUsage(extended), critical=False)
    if sans is not None:
        builder = builder.add_extension(sans, critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


@dataclass
class KeyPair:
    cert: x509.Certificate
    key: PrivateKey

    @property
    def cert_pem(self) -> str:
        return cert_pem(self.cert)

    @property
    def key_pem(self) -> str:
        return key_pem(self.key)

    def write(self, directory: Path, name: str) -> tuple[Path, Path]:
        directory.mkdir(parents=True, exist_ok=True)
        crt, key = directory / f"{name}.crt", directory / f"{name}.key"
        crt.write_text(self.cert_pem)
        key.write_text(self.key_pem)
        key.chmod(0o600)
        return crt, key


def new_ca(common_name: str) -> KeyPair:
    key = new_key()
    name = _name(common_name)
    cert = _sign(
        subject=name,
        public_key=key.public_key(),
        issuer=name,
        issuer_key=key,
        hours=24,
        uses=["cert_signing", "crl_signing", "digital_signature", "key_encipherment"],
        is_ca=True,
        sans=None,
    )
    return KeyPair(cert, key)


def self_signed(common_name: str, *, dns_names: tuple[str, ...] = (), is_ca: bool = False) -> KeyPair:
    """A certificate signed with its own key (cert-manager's selfSigned issuer)."""
    key = new_key()
    name = _name(common_name)
    uses = ["digital_signature", "key_encipherment", "server_auth", "client_auth"]
    uses += ["cert_signing", "crl_signing"] if is_ca else []
    cert = _sign(
        subject=name,
        public_key=key.public_key(),
        issuer=name,
        issuer_key=key,
        hours=24,
        uses=uses,
        is_ca=is_ca,
        sans=_sans(list(dns_names), []),
    )
    return KeyPair(cert, key)


def issue(
    ca: KeyPair,
    common_name: str,
    *,
    organizations: tuple[str, ...] = (),
    dns_names: tuple[str, ...] = (),
    ip_addresses: tuple[str, ...] = (),
    server: bool = False,
    client: bool = False,
) -> KeyPair:
    """A leaf certificate of this run's CA (valid a day: a rehearsal lasts minutes)."""
    key = new_key()
    uses = ["digital_signature", "key_encipherment"]
    uses += ["server_auth"] if server else []
    uses += ["client_auth"] if client else []
    cert = _sign(
        subject=_name(common_name, organizations),
        public_key=key.public_key(),
        issuer=ca.cert.subject,
        issuer_key=ca.key,
        hours=24,
        uses=uses,
        is_ca=False,
        sans=_sans(list(dns_names), list(ip_addresses)),
    )
    return KeyPair(cert, key)


class TlsResources:
    """The pulumi-tls (v5.6.2) resources of a plan, computed as the provider computes them: the plan's mock
    returns placeholders, the rehearsal needs working keys and certificates with the subjects, SANs, usages
    and CA flags the program asks for (hashicorp/terraform-provider-tls resource semantics)."""

    def outputs(self, typ: str, inputs: dict[str, Any], _provider: str = "") -> dict[str, Any]:
        match typ:
            case "tls:index/privateKey:PrivateKey":
                key = new_key(
                    inputs.get("algorithm", "RSA"),
                    rsa_bits=int(inputs.get("rsaBits", 2048)),
                    curve=inputs.get("ecdsaCurve", "P224"),
                )
                return {"privateKeyPem": key_pem(key), "publicKeyPem": public_key_pem(key)}
            case "tls:index/selfSignedCert:SelfSignedCert":
                key = _load_key(inputs["privateKeyPem"])
                subject = _subject(inputs.get("subject") or {})
                cert = _sign(
                    subject=subject,
                    public_key=key.public_key(),
                    issuer=subject,
                    issuer_key=key,
                    hours=int(inputs.get("validityPeriodHours", 24)),
                    uses=list(inputs.get("allowedUses") or []),
                    is_ca=bool(inputs.get("isCaCertificate")),
                    sans=_sans(list(inputs.get("dnsNames") or []), list(inputs.get("ipAddresses") or [])),
                )
                return {"certPem": cert_pem(cert)}
            case "tls:index/certRequest:CertRequest":
                key = _load_key(inputs["privateKeyPem"])
                builder = x509.CertificateSigningRequestBuilder().subject_name(_subject(inputs.get("subject") or {}))
                sans = _sans(list(inputs.get("dnsNames") or []), list(inputs.get("ipAddresses") or []))
                if sans is not None:
                    builder = builder.add_extension(sans, critical=False)
                request = builder.sign(key, hashes.SHA256())
                return {"certRequestPem": request.public_bytes(serialization.Encoding.PEM).decode()}
            case "tls:index/locallySignedCert:LocallySignedCert":
                request = x509.load_pem_x509_csr(inputs["certRequestPem"].encode())
                ca_cert = x509.load_pem_x509_certificate(inputs["caCertPem"].encode())
                try:
                    sans = request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
                except x509.ExtensionNotFound:
                    sans = None
                cert = _sign(
                    subject=request.subject,
                    public_key=request.public_key(),
                    issuer=ca_cert.subject,
                    issuer_key=_load_key(inputs["caPrivateKeyPem"]),
                    hours=int(inputs.get("validityPeriodHours", 24)),
                    uses=list(inputs.get("allowedUses") or []),
                    is_ca=bool(inputs.get("isCaCertificate")),
                    sans=sans,
                )
                return {"certPem": cert_pem(cert)}
        raise ValueError(f"the rehearsal does not compute {typ}")


def _load_key(pem: str) -> PrivateKey:
    key = serialization.load_pem_private_key(pem.encode(), password=None)
    assert isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey)
    return key


# terraform-provider-tls subject block -> X.509 attribute.
_SUBJECT = {
    "commonName": NameOID.COMMON_NAME,
    "organization": NameOID.ORGANIZATION_NAME,
    "organizationalUnit": NameOID.ORGANIZATIONAL_UNIT_NAME,
    "country": NameOID.COUNTRY_NAME,
    "province": NameOID.STATE_OR_PROVINCE_NAME,
    "locality": NameOID.LOCALITY_NAME,
    "streetAddresses": NameOID.STREET_ADDRESS,
    "postalCode": NameOID.POSTAL_CODE,
    "serialNumber": NameOID.SERIAL_NUMBER,
}


def _subject(subject: dict[str, Any]) -> x509.Name:
    attributes = []
    for key, oid in _SUBJECT.items():
        value = subject.get(key)
        for item in value if isinstance(value, list) else [value] if value else []:
            attributes.append(x509.NameAttribute(oid, str(item)))
    return x509.Name(attributes)
