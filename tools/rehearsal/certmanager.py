"""A stand-in for cert-manager (v1.21.1) where a cluster installs it: its controller, webhook and cainjector are
nested Go modules (cmd/controller, cmd/webhook, cmd/cainjector) with no version the module proxy serves at the
pin, so the rehearsal does what they would do for the objects our releases render: issue each Certificate from
its Issuer (selfSigned, or ca) into the Certificate's Secret, mark it Ready, and inject the CA into every
webhook configuration, CRD and APIService that asks for it (`cert-manager.io/inject-ca-from`). It is reported as
a stand-in; whatever depends on it (KServe's webhook) runs with certificates it made."""

from __future__ import annotations

import base64
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from tools.rehearsal.kube import KindNotServed, Kube
from tools.rehearsal.pki import KeyPair, issue, key_pem, self_signed
from tools.rehearsal.processes import ReconcileLoop

CERTIFICATES = ("cert-manager.io/v1", "Certificate")
INJECT = "cert-manager.io/inject-ca-from"
# Listed each second (metadata only): the runner's client keeps their metadata in a cache a watch keeps current, since
# even the metadata of CRDs runs to megabytes (server-side apply's managedFields map every field of a schema).
INJECTABLE = (
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("apiregistration.k8s.io/v1", "APIService"),
)
MANAGER = "rehearsal-cert-manager-stand-in"


class CertManagerStandIn(ReconcileLoop):
    def __init__(self, kube: Kube, cluster: str, cluster_resource_namespace: str):
        """`cluster_resource_namespace`: where a ClusterIssuer's secrets are read (the chart's
        `clusterResourceNamespace`, else the release's namespace: cert-manager@v1.21.1:deploy/charts/cert-manager/
        templates/deployment.yaml L100-L104; pkg/controller/helper.go L26-L29 ResourceNamespace)."""
        self.kube, self.cluster = kube, cluster
        super().__init__("cert-manager", cluster)
        self.cluster_resource_namespace = cluster_resource_namespace
        self.issued: set[str] = set()
        # (kind, name) -> (resourceVersion, bundle) of each object injected or found injected
        self._injected: dict[tuple[str, str], tuple[str, str]] = {}

    def reconcile(self) -> None:
        try:
            certificates = self.kube.list(*CERTIFICATES)
        except KindNotServed:
            return
        for cert in certificates:
            self._issue(cert)
        bundles: dict[str, str | None] = {}  # this round's: many objects name the same Certificate
        for api_version, kind in INJECTABLE:
            for meta in self.kube.list_metadata(api_version, kind):
                source = (meta["metadata"].get("annotations") or {}).get(INJECT)
                if source and source not in bundles:
                    bundles[source] = self._bundle(source)
                bundle = bundles[source] if source else None
                key = (kind, meta["metadata"]["name"])
                if bundle is None or self._injected.get(key) == (meta["metadata"].get("resourceVersion"), bundle):
                    continue  # nothing to inject yet, or injected into this very version (CRDs run to megabytes)
                obj = self.kube.get(api_version, kind, meta["metadata"]["name"])
                if obj is not None:
                    self._injected[key] = (self._inject(api_version, kind, obj, bundle), bundle)

    def _issue(self, cert: dict[str, Any]) -> None:
        meta, spec = cert["metadata"], cert.get("spec") or {}
        namespace, secret_name = meta["namespace"], spec.get("secretName")
        if not secret_name or self.kube.get("v1", "Secret", secret_name, namespace) is not None:
            return
        issuer = self._issuer(namespace, spec.get("issuerRef") or {})
        if issuer is None:
            return  # cert-manager waits for its issuer too
        dns = tuple(spec.get("dnsNames") or [])
        common = spec.get("commonName") or (dns[0] if dns else meta["name"])
        if "selfSigned" in (issuer.get("spec") or {}):
            # signed with its own key: ca.crt is the certificate itself
            pair = self_signed(common, dns_names=dns, is_ca=bool(spec.get("isCA")))
            ca_pem = pair.cert_pem
        elif "ca" in (issuer.get("spec") or {}):
            issuer_namespace = (
                self.cluster_resource_namespace
                if issuer["kind"] == "ClusterIssuer"
                else issuer["metadata"]["namespace"]
            )
            ca_secret = self.kube.get("v1", "Secret", issuer["spec"]["ca"]["secretName"], issuer_namespace)
            if ca_secret is None:
                return
            data = ca_secret.get("data") or {}
            ca = KeyPair(
                x509.load_pem_x509_certificate(base64.b64decode(data["tls.crt"])),
                serialization.load_pem_private_key(base64.b64decode(data["tls.key"]), password=None),  # type: ignore[arg-type]
            )
            pair, ca_pem = issue(ca, common, dns_names=dns, server=True, client=True), ca.cert_pem
        else:
            return
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/tls",
            "metadata": {
                "name": secret_name,
                "namespace": namespace,
                "annotations": {"cert-manager.io/certificate-name": meta["name"]},
            },
            "stringData": {"tls.crt": pair.cert_pem, "tls.key": key_pem(pair.key), "ca.crt": ca_pem},
        }
        self.kube.create(secret, field_manager=MANAGER)
        self.kube.patch_status(
            *CERTIFICATES,
            namespace,
            meta["name"],
            {
                "status": {
                    "conditions": [
                        {
                            "type": "Ready",
                            "status": "True",
                            "reason": "Ready",
                            "message": "issued by the rehearsal's cert-manager stand-in",
                        }
                    ]
                }
            },
        )
        self.issued.add(f"{namespace}/{meta['name']}")

    def _issuer(self, namespace: str, ref: dict[str, Any]) -> dict[str, Any] | None:
        if ref.get("kind") == "ClusterIssuer":
            return self.kube.get("cert-manager.io/v1", "ClusterIssuer", ref.get("name", ""))
        return self.kube.get("cert-manager.io/v1", "Issuer", ref.get("name", ""), namespace)

    def _bundle(self, source: str) -> str | None:
        """The CA bundle of the Certificate `<namespace>/<name>` names, once its Secret is issued."""
        namespace, _, name = source.partition("/")
        cert = self.kube.get(*CERTIFICATES, name, namespace)
        secret_name = ((cert or {}).get("spec") or {}).get("secretName")
        secret = self.kube.get("v1", "Secret", secret_name, namespace) if secret_name else None
        return (secret.get("data") or {}).get("ca.crt") if secret is not None else None

    def _inject(self, api_version: str, kind: str, obj: dict[str, Any], bundle: str) -> str:
        """`bundle` in `obj` where cainjector puts it; the object's resourceVersion afterwards."""
        patch: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": obj["metadata"]["name"]}}
        version = obj["metadata"].get("resourceVersion", "")
        if kind.endswith("WebhookConfiguration"):
            webhooks = obj.get("webhooks") or []
            if all((w.get("clientConfig") or {}).get("caBundle") == bundle for w in webhooks):
                return version
            patch["webhooks"] = [{"name": w["name"], "clientConfig": {"caBundle": bundle}} for w in webhooks]
        elif kind == "CustomResourceDefinition":
            conversion = (obj.get("spec") or {}).get("conversion") or {}
            client = ((conversion.get("webhook") or {}).get("clientConfig")) or {}
            if conversion.get("strategy") != "Webhook" or client.get("caBundle") == bundle:
                return version
            patch["spec"] = {"conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"caBundle": bundle}}}}
        else:
            if (obj.get("spec") or {}).get("caBundle") == bundle:
                return version
            patch["spec"] = {"caBundle": bundle}
        applied = self.kube.apply(patch, field_manager=MANAGER, force=True)
        return applied["metadata"].get("resourceVersion", "")
