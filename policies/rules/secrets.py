"""Secret material: none in plain inputs, and what is secret stays secret end to end.

Every string input of every resource (env values, ConfigMaps, Helm values, CR specs such
as Fluid Dataset options, tags and annotations) goes through detect-secrets' detectors,
each read as `key: "value"` so keyword detection sees what the value is called. A
Kubernetes Secret's data is the one place a secret belongs, and there it must be a secret.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Iterator
from urllib.parse import urlsplit

from policies.analyzers import secret_types
from policies.framework import Context, Violation, rule
from policies.model import UNKNOWN, Resource, get, number
from policies.pods import WORKLOAD_KINDS, command_line, is_workload, workloads
from policies.upstream import RANDOM_DEFAULT_SPECIAL

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


# Tokens detect-secrets has no detector for: Hugging Face user and organisation tokens (huggingface_hub's
# `hf_` / `api_org_` prefixes, 34+ characters), which fetch gated model weights.
_PACK_TOKENS = {
    "Hugging Face Token": re.compile(r"\b(?:hf_|api_org_)[A-Za-z0-9]{30,}\b"),
}
# Command-line flags whose value is a credential (redis-server --requirepass/--masterauth, redis-cli -a, and the
# usual spellings of the rest); `$(VAR)` / `${VAR}` / `$VAR` values are references the kubelet or a shell expands.
_SECRET_FLAGS = re.compile(
    r"^--?(requirepass|masterauth|masteruser-password|pass|password|passwd|token|api-key|apikey|hf-token|secret|"
    r"auth|auth-token|access-key|secret-key)$",
    re.IGNORECASE,
)
_REFERENCE = re.compile(r"^\$(\(|\{)?[A-Za-z_][A-Za-z0-9_]*(\)|\})?$")


def _flag_secrets(tokens: list[str]) -> Iterator[str]:
    """Flags given a literal credential: `--requirepass s3cret` or `--requirepass=s3cret` (`-a` only for redis-cli)."""
    redis_cli = any(t.rsplit("/", 1)[-1] == "redis-cli" for t in tokens)
    for i, token in enumerate(tokens):
        name, eq, value = token.partition("=")
        if not eq:
            value = tokens[i + 1] if i + 1 < len(tokens) else ""
        secret_flag = _SECRET_FLAGS.match(name) or (redis_cli and name == "-a")
        if secret_flag and value and not value.startswith("-") and not _REFERENCE.match(value):
            yield name


def _string_lists(value: object, path: str) -> Iterator[tuple[str, list[str]]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _string_lists(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):
            tokens: list[str] = []
            for item in value:
                try:
                    tokens += shlex.split(item)
                except ValueError:
                    tokens += item.split()
            yield path, tokens
        for i, v in enumerate(value):
            yield from _string_lists(v, f"{path}[{i}]")
    elif isinstance(value, str) and " -" in value and len(value) < 4096:  # a shell line: "redis-server --x y"
        try:
            yield path, shlex.split(value)
        except ValueError:
            return


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
    "credentials in URLs), a Hugging Face token, or a literal credential given to a command-line flag "
    "(--requirepass, --password, --token, redis-cli -a, ...).",
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
        found = secret_types(key, text) + [name for name, pattern in _PACK_TOKENS.items() if pattern.search(text)]
        if found:
            yield Violation(f"{r.label}: {path} holds {', '.join(found)} in plain text")
    for path, tokens in _string_lists(props, ""):
        for flag in sorted(set(_flag_secrets(tokens))):
            yield Violation(f"{r.label}: {path} gives {flag} a literal credential on the command line")


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


REDIS_SERVERS = ("redis-server", "valkey-server")


def _redis_server(c: dict) -> bool:
    tokens = command_line(c)
    image = str(c.get("image") or "").split("@", 1)[0].rsplit(":", 1)[0].rsplit("/", 1)[-1]
    runs_server = any(t.rsplit("/", 1)[-1] in REDIS_SERVERS for t in tokens[:2])
    return runs_server or (image in ("redis", "valkey", "redis-stack-server") and tokens[:1] != ["redis-cli"])


def _flag_value(tokens: list[str], name: str) -> str | None:
    value = None
    for i, token in enumerate(tokens):
        if token.lower() == name and i + 1 < len(tokens):
            value = tokens[i + 1]
        elif token.lower().startswith(name + "="):
            value = token.split("=", 1)[1]
    return value


def _secret_env(c: dict, reference: str) -> bool:
    """`$(VAR)` naming an env var of the container that comes from a Secret."""
    name = reference.strip("$(){}")
    return any(
        isinstance(e, dict) and e.get("name") == name and get(e, "valueFrom", "secretKeyRef") is not None
        for e in c.get("env") or []
    )


@rule(
    name="redis-requires-auth",
    description="Every Redis (or Valkey) server the stack runs requires a password (--requirepass from a Secret, "
    "or an --aclfile), and none turns protected mode off without one: its counters are the tenants' budgets.",
    severity="high",
    remediation="run redis-server with --requirepass $(REDIS_PASSWORD), REDIS_PASSWORD from a secretKeyRef fed by a "
    "generated Pulumi secret, and give its clients the same Secret",
    applies_to=WORKLOAD_KINDS,
    subject=is_workload,
    scope="stack",
)
def redis_requires_auth(r: Resource, ctx: Context) -> Iterator[Violation]:
    for w in workloads(r, ctx.require_stack()):
        for c in w.containers:
            if w.partial or not _redis_server(c):
                continue
            tokens = command_line(c)
            password, acl = _flag_value(tokens, "--requirepass"), _flag_value(tokens, "--aclfile")
            where = f"{w.label} container {c.get('name')}"
            if acl:
                continue
            if not password:
                yield Violation(
                    f"{where} runs Redis without --requirepass: any pod that reaches it reads and resets budgets"
                )
            elif not (_REFERENCE.match(password) and _secret_env(c, password)):
                yield Violation(f"{where}: --requirepass {password!r} is not an env var fed from a Secret")


RANDOM_SECRETS = ("random:index/randomPassword:RandomPassword", "random:index/randomString:RandomString")
MIN_SECRET_BITS = 128  # NIST SP 800-63B / OWASP: a generated key of at least 128 bits of entropy


def entropy_bits(props: dict) -> float | None:
    """Bits of a random string as the random provider generates it (its character classes and length)."""
    length = number(props.get("length"))
    if length is None:
        return None
    classes = 0
    classes += 26 if props.get("lower", True) is not False else 0
    classes += 26 if props.get("upper", True) is not False else 0
    classes += 10 if props.get("numeric", props.get("number", True)) is not False else 0
    if props.get("special", True) is not False:
        classes += len(set(str(props.get("overrideSpecial") or RANDOM_DEFAULT_SPECIAL)))
    return length * math.log2(classes) if classes > 1 else 0.0


@rule(
    name="random-secrets-entropy",
    description="Generated passwords and keys (random.RandomPassword / RandomString: tenant API keys, Redis and "
    "Grafana passwords) carry at least 128 bits of entropy: length x log2(characters it draws from).",
    severity="high",
    remediation="raise length (48 alphanumerics give 285 bits) or draw from more character classes",
    applies_to=RANDOM_SECRETS,
)
def random_secrets_entropy(r: Resource, ctx: Context) -> Iterator[Violation]:
    bits = entropy_bits({k: get(r.props, k) for k in r.props})
    if bits is not None and bits < MIN_SECRET_BITS:
        yield Violation(
            f"{r.name}: a {get(r.props, 'length')}-character secret holds {bits:.0f} bits, fewer than {MIN_SECRET_BITS}"
        )


_ENDPOINT_KEYS = ("url", "uri", "address", "endpoint", "server", "host", "repo", "repository")


def cluster_local(host: str) -> bool:
    """A host that never leaves the cluster: a Service name, its .svc names, or the loopback."""
    host = host.lower().rstrip(".")
    return (
        "." not in host
        or host.endswith((".svc", ".svc.cluster.local", ".cluster.local"))
        or host in ("localhost", "127.0.0.1", "::1")
    )


def _plain_http(value: object) -> str | None:
    if not isinstance(value, str) or not value.lower().startswith("http://"):
        return None
    host = urlsplit(value).hostname or ""
    return None if cluster_local(host) else host


def _endpoint_strings(value: object, key: str, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _endpoint_strings(v, str(k), f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _endpoint_strings(v, key, f"{path}[{i}]")
    elif isinstance(value, str) and key.lower().endswith(_ENDPOINT_KEYS):
        yield path, value


@rule(
    name="no-plain-http-endpoints",
    description="Nothing the stack configures talks plain HTTP beyond the cluster: chart repositories, autoscaler "
    "metric sources (KEDA triggers), Prometheus remote-write and any other URL setting are https (or oci://) "
    "unless the host is a cluster-local Service.",
    severity="high",
    remediation="use the https:// (or oci://) address of the repository or endpoint; plain http:// only to a "
    "Service inside the cluster (<name>.<namespace>.svc)",
    applies_to=("*",),
    subject=lambda r: r.is_kubernetes or r.type == "kubernetes:helm.sh/v3:Release",
)
def no_plain_http_endpoints(r: Resource, ctx: Context) -> Iterator[Violation]:
    for path, value in _endpoint_strings({k: v for k, v in r.props.items() if k != "metadata"}, "", ""):
        host = _plain_http(value)
        if host:
            yield Violation(f"{r.label}: {path} is plain HTTP to {host}, outside the cluster")


RULES = [
    no_plaintext_secrets,
    secrets_stay_secret,
    redis_requires_auth,
    random_secrets_entropy,
    no_plain_http_endpoints,
]
