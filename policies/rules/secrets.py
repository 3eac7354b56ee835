"""Secret material: none in plain inputs, and what is secret stays secret end to end.

Every string input of every resource (env values, ConfigMaps, Helm values, CR specs such
as Fluid Dataset options, tags and annotations) goes through detect-secrets' detectors,
each read as `key: "value"` so keyword detection sees what the value is called. A
Kubernetes Secret's data is the one place a secret belongs, and there it must be a secret.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from urllib.parse import urlsplit

from platform_catalog.address_space import cluster_local
from policies.analyzers import secret_types
from policies.framework import CannotCheck, Context, Violation, rule
from policies.model import UNKNOWN, Resource, get, number, peek, shell_words
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
                words = shell_words(item)
                tokens += item.split() if words is None else words
            yield path, tokens
        for i, v in enumerate(value):
            yield from _string_lists(v, f"{path}[{i}]")
    elif isinstance(value, str) and " -" in value and len(value) < 4096:  # a shell line: "redis-server --x y"
        words = shell_words(value)
        if words is not None:
            yield path, list(words)


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
    secret = _is_secret(r)
    for prop, value in r.props.items():
        if value is UNKNOWN:
            continue
        sources = [s for s in stack.sources(r, prop) if s.type in SECRET_SOURCES]
        if sources:
            yield Violation(f"{r.label}: {prop} is computed from {sources[0].label} but is not a secret")
        elif secret and prop in _SECRET_PAYLOAD and _plain_payload(value):
            yield Violation(f"{r.label}: {prop} holds plain-text values instead of a Pulumi secret")


def _plain_payload(value: object) -> bool:
    return isinstance(value, dict) and any(isinstance(v, str) and v for v in value.values())


HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
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


def _acl_file(w, c: dict, path: str, stack) -> str | None:
    """The text of the ACL file a Redis container reads: from the ConfigMap (or known Secret) volume mounted over
    its path; None when the pack cannot see it. /dev/null is empty."""
    if path == "/dev/null":
        return ""
    for mount in c.get("volumeMounts") or []:
        if not isinstance(mount, dict) or not str(mount.get("mountPath") or ""):
            continue
        base = str(mount["mountPath"]).rstrip("/") + "/"
        if not path.startswith(base) and path != str(mount["mountPath"]):
            continue
        file = mount.get("subPath") or path[len(base) :]
        volume = next((v for v in w.pod.get("volumes") or [] if isinstance(v, dict) and v.get("name") == mount.get("name")), {})  # fmt: skip
        for kind, source, name_key in (("ConfigMap", "configMap", "name"), ("Secret", "secret", "secretName")):
            ref = volume.get(source)
            if not isinstance(ref, dict):
                continue
            items = {i.get("path"): i.get("key") for i in ref.get("items") or [] if isinstance(i, dict)}
            key = items.get(file, file) if items else file
            if not isinstance(key, str):
                continue
            for obj in stack.kubernetes(kind, "", w.resource.cluster):
                if obj.namespace == w.namespace and obj.k8s_name == ref.get(name_key):
                    text = peek(obj.props, "data", key)
                    text = peek(obj.props, "stringData", key) if text is None else text
                    return text if isinstance(text, str) else None
    return None


def _default_user_protected(acl: str) -> bool:
    """Whether an ACL file leaves Redis's default user needing a password: a file without a `user default` line
    gets the built-in default user, `on nopass ~* &* +@all` (redis/redis src/acl.c ACLLoadFromFile,
    ACLCreateDefaultUser); with one, its last on/off and nopass/password rules decide."""
    for line in acl.splitlines():
        words = line.split()
        if words[:2] != ["user", "default"]:
            continue
        enabled, passwordless = True, True
        for word in words[2:]:
            enabled = {"on": True, "off": False}.get(word, enabled)
            if word in ("nopass", "resetpass"):
                passwordless = word == "nopass"
            elif word.startswith((">", "#")):
                passwordless = False
        return not enabled or not passwordless
    return False


@rule(
    name="redis-requires-auth",
    description="Every Redis (or Valkey) server the stack runs requires a password: --requirepass from a Secret, or "
    "an --aclfile the pack can read whose default user is off or has a password (a file that does not define it "
    "leaves Redis's passwordless default user, and --aclfile makes Redis ignore --requirepass); none turns protected "
    "mode off without one: its counters are the tenants' budgets.",
    severity="high",
    remediation="run redis-server with --requirepass $(REDIS_PASSWORD), REDIS_PASSWORD from a secretKeyRef fed by a "
    "generated Pulumi secret, and give its clients the same Secret",
    applies_to=WORKLOAD_KINDS,
    subject=is_workload,
    scope="stack",
)
def redis_requires_auth(r: Resource, ctx: Context) -> Iterator[Violation]:
    stack = ctx.require_stack()
    for w in workloads(r, stack):
        for c in w.containers:
            if w.partial or not _redis_server(c):
                continue
            tokens = command_line(c)
            password, acl = _flag_value(tokens, "--requirepass"), _flag_value(tokens, "--aclfile")
            where = f"{w.label} container {c.get('name')}"
            if acl:
                text = _acl_file(w, c, acl, stack)
                if text is None:
                    yield CannotCheck(f"{where} reads its users from {acl}, which the pack cannot see")
                elif not _default_user_protected(text):
                    yield Violation(f"{where}: the ACL file {acl} leaves the default user on without a password")
            elif not password:
                yield Violation(
                    f"{where} runs Redis without --requirepass: any pod that reaches it reads and resets budgets"
                )
            elif not (_REFERENCE.match(password) and _secret_env(c, password)):
                yield Violation(f"{where}: --requirepass {password!r} is not an env var fed from a Secret")


RANDOM_SECRETS = ("random:index/randomPassword:RandomPassword", "random:index/randomString:RandomString")
# Random values judged when they end up in a secret (a Secret's payload, a release's secret values file): their bits
# by how the random provider (pulumi-random v4.21.4) makes them.
RANDOM_VALUES = {
    "random:index/randomId:RandomId": lambda p: (number(p.get("byteLength")) or 0) * 8,  # byteLength random bytes
    "random:index/randomBytes:RandomBytes": lambda p: (number(p.get("length")) or 0) * 8,  # length random bytes
    "random:index/randomInteger:RandomInteger": lambda p: math.log2(
        max((number(p.get("max")) or 0) - (number(p.get("min")) or 0) + 1, 1)
    ),
    "random:index/randomUuid:RandomUuid": lambda p: 122,  # a version 4 UUID: 122 random bits (RFC 9562 section 5.4)
}
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


_SECRET_SINKS = (("kubernetes:core/v1:Secret", ("data", "stringData")), (HELM_RELEASE, ("valueYamlFiles",)))


def _kept_secret(r: Resource, stack) -> bool:
    return any(
        r.urn in consumer.deps.get(prop, [])
        for kind, props in _SECRET_SINKS
        for consumer in stack.of_type(kind)
        for prop in props
    )


@rule(
    name="random-secrets-entropy",
    description="Generated secrets carry at least 128 bits of entropy: passwords and strings (random.RandomPassword / "
    "RandomString: tenant API keys, Redis and Grafana passwords) as length x log2(characters they draw from), and "
    "any other random value that ends up in a Secret or a release's secret values (RandomId and RandomBytes: 8 bits a "
    "byte; RandomInteger: log2 of its range; RandomUuid: 122).",
    severity="high",
    remediation="raise length (48 alphanumerics give 285 bits; a RandomId of 16 bytes gives 128) or draw from more "
    "character classes",
    applies_to=(*RANDOM_SECRETS, *RANDOM_VALUES),
    scope="stack",
)
def random_secrets_entropy(r: Resource, ctx: Context) -> Iterator[Violation]:
    props = {k: get(r.props, k) for k in r.props}
    if r.type in RANDOM_VALUES:
        if not _kept_secret(r, ctx.require_stack()):
            return
        bits = RANDOM_VALUES[r.type](props)
        if bits < MIN_SECRET_BITS:
            yield Violation(f"{r.name}: a secret of {bits:.0f} random bits, fewer than {MIN_SECRET_BITS}")
        return
    entropy = entropy_bits(props)
    if entropy is not None and entropy < MIN_SECRET_BITS:
        yield Violation(
            f"{r.name}: a {get(r.props, 'length')}-character secret holds {entropy:.0f} bits, fewer than {MIN_SECRET_BITS}"
        )


# A setting is an endpoint by its key (a values key, or an env var's name: OTEL_EXPORTER_OTLP_ENDPOINT) or by its
# place (a command-line token, or a flag's `=` value: --otlp-traces-endpoint=http://...), never by its text alone
# (dashboards and schemas hold http:// links nobody calls).
_ENDPOINT_KEYS = ("url", "uri", "address", "addr", "endpoint", "server", "host", "repo", "repository", "chart")


def _plain_http(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip().lower().startswith("http://"):
        return None
    try:
        host = urlsplit(value.strip()).hostname or ""
    except ValueError:
        return None
    return None if cluster_local(host) else host


def _endpoint_strings(value: object, key: str, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        named = value.get("name") if isinstance(value.get("name"), str) else None  # env-style {name, value}
        for k, v in value.items():
            yield from _endpoint_strings(
                v, named if (named and k == "value") else str(k), f"{path}.{k}" if path else str(k)
            )
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _endpoint_strings(v, key, f"{path}[{i}]")
    elif isinstance(value, str) and key.lower().endswith(_ENDPOINT_KEYS):
        yield path, value


# Keys whose string value is a command line (a container's `command`/`args` given as one shell string, a chart's
# extraArgs); other long strings (a dashboard's JSON, a script's comments) are not read token by token.
_COMMAND_KEYS = ("command", "args", "arguments", "cmd")


def _command_line_endpoints(value: object, key: str = "", path: str = "") -> Iterator[tuple[str, str]]:
    """(path, URL) of each plain URL a command line passes: a token of a list of strings, or of a shell line under a
    command key, given alone or as a flag's `=` value."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _command_line_endpoints(v, str(k), f"{path}.{k}" if path else str(k))
        return
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        lines = value
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _command_line_endpoints(v, key, f"{path}[{i}]")
        return
    elif isinstance(value, str) and key.lower().endswith(_COMMAND_KEYS):
        lines = [value]
    else:
        return
    for line in lines:
        words = shell_words(line)
        for token in line.split() if words is None else words:
            for candidate in (token, token.partition("=")[2]):
                if _plain_http(candidate):
                    yield path, candidate


@rule(
    name="no-plain-http-endpoints",
    description="Nothing the stack configures talks plain HTTP beyond the cluster: chart repositories and chart URLs, "
    "autoscaler metric sources (KEDA triggers), Prometheus remote-write, any URL setting or env var (OTLP "
    "exporters) and any command-line URL (--otlp-traces-endpoint=...) are https (or oci://) unless the host is in "
    "the cluster (a Service, <svc>.<namespace>, its .svc names).",
    severity="high",
    remediation="use the https:// (or oci://) address of the repository or endpoint; plain http:// only to a "
    "Service inside the cluster (<name>.<namespace>.svc)",
    applies_to=("*",),
    subject=lambda r: r.is_kubernetes or r.type == HELM_RELEASE,
)
def no_plain_http_endpoints(r: Resource, ctx: Context) -> Iterator[Violation]:
    props = {k: v for k, v in r.props.items() if k != "metadata"}
    found = {(path, value) for path, value in _endpoint_strings(props, "", "")}
    found |= set(_command_line_endpoints(props))
    for path, value in sorted(found):
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
