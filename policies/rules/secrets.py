"""Secret material: none in plain inputs, and what is secret stays secret end to end.

Every string input of every resource (env values, ConfigMaps, Helm values, CR specs such
as Fluid Dataset options, tags and annotations) goes through detect-secrets' detectors,
each read as `key: "value"` so keyword detection sees what the value is called. A
Kubernetes Secret's data is the one place a secret belongs, and there it must be a secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from policies.analyzers import secret_types
from policies.framework import Context, Violation, rule
from policies.model import UNKNOWN, Resource

# Where a secret is expected: Kubernetes Secrets' payload (checked by secrets-stay-secret).
_SECRET_PAYLOAD = ("data", "stringData")
# Resources whose outputs are secret material: anything computed from them must stay secret.
SECRET_SOURCES = (
    "random:index/randomPassword:RandomPassword",
    "tls:index/privateKey:PrivateKey",
    "aws:iam/accessKey:AccessKey",
    "gcp:serviceaccount/key:Key",
)
# Inputs of those resources and of certificates that carry key material by design (always secret-wrapped).
_KEY_INPUTS = ("privateKeyPem", "caPrivateKeyPem")
# `existingSecret: grafana-admin`, `secretName: tls`: the name of a Kubernetes Secret is a reference, not material.
_REFERENCE_KEYS = ("secret", "secretname", "secretref", "existingsecret")
_OBJECT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def _is_secret(r: Resource) -> bool:
    return r.is_kubernetes and r.kind == "Secret" and r.api_group == ""


def _strings(value: object, key: str, path: str) -> Iterator[tuple[str, str, str]]:
    """(path, key, text) of every string leaf; env-style {name, value} pairs are keyed by their name."""
    if isinstance(value, dict):
        named = value.get("name") if isinstance(value.get("name"), str) else None
        for k, v in value.items():
            leaf_key = named if (named and k == "value") else str(k)
            yield from _strings(v, leaf_key, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, key, f"{path}[{i}]")
    elif isinstance(value, str):
        yield path, key, value


@rule(
    name="no-plaintext-secrets",
    description="No plain input of any resource (env values, ConfigMaps, Helm values, CR specs, tags, "
    "annotations) holds secret material as detect-secrets recognises it (keys, tokens, passwords, "
    "credentials in URLs).",
    severity="critical",
    remediation="put the value in a Kubernetes Secret (or the cloud's secret manager) fed from a Pulumi secret "
    "and reference it (secretKeyRef, existingSecret, valueFrom)",
    applies_to=("*",),
    subject=lambda r: not r.type.startswith("pulumi:providers:"),
)
def no_plaintext_secrets(r: Resource, ctx: Context) -> Iterator[Violation]:
    props = {k: v for k, v in r.props.items() if not (_is_secret(r) and k in _SECRET_PAYLOAD)}
    for path, key, text in _strings(props, "", ""):
        if key in _KEY_INPUTS or (key.lower().endswith(_REFERENCE_KEYS) and _OBJECT_NAME.match(text)):
            continue
        found = secret_types(key, text)
        if found:
            yield Violation(f"{r.label}: {path} holds {', '.join(found)} in plain text")


@rule(
    name="secrets-stay-secret",
    description="Values computed from secret material (generated passwords, private keys, access keys) and the "
    "payload of Kubernetes Secrets are Pulumi secrets in the plan, never plain text in state.",
    severity="critical",
    remediation="keep the value an Output marked secret (pulumi.Output.secret / additional_secret_outputs); never "
    "unwrap it with Output.unsecret or pass it through a plain string",
    applies_to=("*",),
    subject=lambda r: not r.type.startswith("pulumi:providers:"),
    scope="stack",
)
def secrets_stay_secret(r: Resource, ctx: Context) -> Iterator[Violation]:
    stack = ctx.require_stack()
    for prop, value in r.props.items():
        if value is UNKNOWN:
            continue
        sources = [s for s in stack.sources(r, prop) if s.type in SECRET_SOURCES]
        if sources:
            yield Violation(f"{r.label}: {prop} is computed from {sources[0].label} but is not a secret")
        elif _is_secret(r) and prop in _SECRET_PAYLOAD and _plain_payload(value):
            yield Violation(f"{r.label}: {prop} holds plain-text values instead of a Pulumi secret")


def _plain_payload(value: object) -> bool:
    return isinstance(value, dict) and any(isinstance(v, str) and v for v in value.values())


RULES = [no_plaintext_secrets, secrets_stay_secret]
