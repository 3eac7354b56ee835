"""Multi-cluster search (Clusterpedia): a read-only index whose credentials and database stay secret, run with no
more than it calls and reached only over verified TLS."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from platform_catalog.names import SEARCH_NAMESPACE, SEARCH_READER, SEARCH_STORE
from policies.framework import CannotCheck, Context, Violation, rule
from policies.model import Resource, as_list, get, peek
from policies.pods import workloads
from policies.rules.federation import bound_rules, is_rbac_binding
from policies.upstream import (
    CLUSTERPEDIA_CLUSTER_GRANTS,
    CLUSTERPEDIA_NAMESPACE_GRANTS,
    DELEGATED_AUTHENTICATION_CONFIGMAP,
)

PEDIA_CLUSTER = "PediaCluster"
APISERVICE_GROUP = "apiregistration.k8s.io"
PASSWORD_ENV = "DB_PASSWORD"  # what the chart gives Clusterpedia's containers (templates/*-deployment.yaml)
READ_VERBS = frozenset({"get", "list", "watch"})
# What an index of many clusters must never hold: credentials and configuration of every member.
NEVER_INDEXED = frozenset({"secrets", "configmaps", "serviceaccounts", "serviceaccounts/token"})
INLINE_CREDENTIALS = ("kubeconfig", "tokenData", "certData", "keyData")


def _reader_subjects(binding: Resource) -> list[str]:
    return [
        f"{s.get('namespace', binding.namespace)}/{s.get('name')}"
        for s in as_list(peek(binding.props, "subjects"))
        if isinstance(s, dict) and s.get("kind") == "ServiceAccount" and s.get("name") == SEARCH_READER
    ]


@rule(
    name="search-reader-read-only",
    description="Clusterpedia's identity on a member (the clusterpedia-reader service account) only reads: "
    "get/list/watch on listed resources, never Secrets, ConfigMaps or service-account tokens, no wildcards, no "
    "non-resource URLs.",
    severity="critical",
    remediation="bind clusterpedia-reader to a ClusterRole of list/watch rules on the indexed resources "
    "(components/federation/search.py reader_rules)",
    applies_to=("RoleBinding", "ClusterRoleBinding"),
    subject=is_rbac_binding,
    scope="stack",
)
def search_reader_read_only(r: Resource, ctx: Context) -> Iterator[Violation]:
    subjects = _reader_subjects(r)
    if not subjects:
        return
    role, rules = bound_rules(r, ctx)
    if rules is None:
        yield Violation(f"{r.label} binds {', '.join(subjects)} to {role}, which this stack does not define")
        return
    for i, x in enumerate(rules):
        where = f"{r.label}: {role} rules[{i}]"
        verbs = {str(v).lower() for v in as_list(x.get("verbs"))}
        resources = {str(v) for v in as_list(x.get("resources"))}
        groups = {str(g) for g in as_list(x.get("apiGroups"))}
        if verbs - READ_VERBS:
            yield Violation(f"{where} lets {', '.join(subjects)} {sorted(verbs - READ_VERBS)}")
        if "*" in resources | groups:
            yield Violation(f"{where} grants a wildcard ({sorted(groups)} {sorted(resources)})")
        if resources & NEVER_INDEXED:
            yield Violation(f"{where} reads {sorted(resources & NEVER_INDEXED)} of the member")
        if x.get("nonResourceURLs"):
            yield Violation(f"{where} grants non-resource URLs {x.get('nonResourceURLs')}")


@rule(
    name="search-credentials-in-secrets",
    description="A PediaCluster names its credentials (spec.authenticationFrom: a Secret beside Clusterpedia) "
    "instead of carrying a kubeconfig, token or key in its spec, and never indexes Secrets or ConfigMaps.",
    severity="critical",
    remediation="give the PediaCluster authenticationFrom {token, ca} naming a Secret in "
    f"{SEARCH_NAMESPACE} (ClusterAuthenticationFromSecret) and sync only the resources the index needs",
    applies_to=(PEDIA_CLUSTER,),
    subject=lambda r: r.is_kubernetes and r.kind == PEDIA_CLUSTER,
)
def search_credentials_in_secrets(r: Resource, ctx: Context) -> Iterator[Violation]:
    spec = get(r.props, "spec") or {}
    inline = [key for key in INLINE_CREDENTIALS if spec.get(key)]
    if inline:
        yield Violation(f"{r.label} carries {', '.join(inline)} in its spec: anyone who reads it gets the member")
    if not get(spec, "authenticationFrom", "token") and not get(spec, "authenticationFrom", "kubeconfig"):
        yield Violation(f"{r.label} names no credentials Secret (spec.authenticationFrom)")
    if spec.get("syncAllCustomResources"):
        yield Violation(f"{r.label} indexes every custom resource of the member")
    for i, group in enumerate(as_list(spec.get("syncResources"))):
        resources = {str(v) for v in as_list(get(group, "resources"))}
        if "*" in resources or resources & NEVER_INDEXED:
            yield Violation(f"{r.label}: syncResources[{i}] indexes {sorted(resources)}")


def _index_subjects(binding: Resource) -> list[str]:
    """The service accounts of Clusterpedia's namespace a binding grants to, but the members' reader."""
    return [
        str(s.get("name"))
        for s in as_list(peek(binding.props, "subjects"))
        if isinstance(s, dict)
        and s.get("kind") == "ServiceAccount"
        and s.get("namespace", binding.namespace) == SEARCH_NAMESPACE
        and s.get("name") != SEARCH_READER
    ]


def _grants(x: dict) -> list[tuple[str, str, str]]:
    groups = [str(g) for g in as_list(x.get("apiGroups"))] or [""]
    return [
        (group, str(resource).lower(), str(verb).lower())
        for group in groups
        for resource in as_list(x.get("resources"))
        for verb in as_list(x.get("verbs"))
    ]


def _beyond_host_calls(x: dict, scope: str) -> list[str]:
    """What a rule grants beyond CLUSTERPEDIA_HOST_CALLS where the binding applies (`scope`: cluster-wide, its
    namespace, or another namespace): `verb group/resource` strings."""
    if scope == "cluster":
        allowed = CLUSTERPEDIA_CLUSTER_GRANTS
    elif scope == SEARCH_NAMESPACE:
        allowed = CLUSTERPEDIA_NAMESPACE_GRANTS
    else:
        namespace, configmap = DELEGATED_AUTHENTICATION_CONFIGMAP
        named = [str(n) for n in as_list(x.get("resourceNames"))] == [configmap]
        read = frozenset({"get", "list", "watch"})
        allowed = {("", "configmaps"): read} if scope == namespace and named else {}
    return [
        f"{verb} {group or 'core'}/{resource}"
        for group, resource, verb in _grants(x)
        if verb not in allowed.get((group, resource), frozenset())
    ]


@rule(
    name="search-index-least-privilege",
    description="Clusterpedia's own identities on the federation host (its service accounts but the members' "
    "reader) hold only what its API server and synchro manager call there: no wildcard or non-resource URL; "
    "cluster-wide only Clusterpedia's kinds and the delegated token and access reviews; in its namespace only "
    "Secrets (read), its Lease and events; elsewhere only the API server's authentication ConfigMap in "
    "kube-system, by name. Every account bound is one the stack creates (a bound name nobody created is granted "
    "to whoever creates it).",
    severity="critical",
    remediation="bind the roles of components/federation/search_index.py (APISERVER_RULES, SYNCHRO_CLUSTER_RULES, "
    "SYNCHRO_NAMESPACE_RULES, system:auth-delegator, extension-apiserver-authentication-reader) to the accounts it "
    "creates, and nothing else",
    applies_to=("RoleBinding", "ClusterRoleBinding"),
    subject=is_rbac_binding,
    scope="stack",
)
def search_index_least_privilege(r: Resource, ctx: Context) -> Iterator[Violation]:
    names = _index_subjects(r)
    if not names:
        return
    accounts = {
        a.k8s_name
        for a in ctx.require_stack().kubernetes("ServiceAccount", "", r.cluster)
        if a.namespace == SEARCH_NAMESPACE
    }
    for name in names:
        if name not in accounts:
            yield Violation(
                f"{r.label} binds {SEARCH_NAMESPACE}/{name}, an account this stack does not create: whoever creates "
                "it gets the role"
            )
    role, rules = bound_rules(r, ctx)
    if rules is None:
        yield Violation(
            f"{r.label} binds {SEARCH_NAMESPACE}/{', '.join(names)} to {role}, which this stack does not define"
        )
        return
    scope = "cluster" if r.kind == "ClusterRoleBinding" else str(r.namespace)
    for i, x in enumerate(rules):
        where = f"{r.label}: {role} rules[{i}]"
        fields = ("apiGroups", "resources", "verbs", "resourceNames")
        if any("*" in {str(v) for v in as_list(x.get(k))} for k in fields):
            yield Violation(f"{where} grants a wildcard ({ {k: x.get(k) for k in fields if x.get(k)} })")
        elif x.get("nonResourceURLs"):
            yield Violation(f"{where} grants non-resource URLs {x.get('nonResourceURLs')}")
        else:
            beyond = _beyond_host_calls(x, scope)
            if beyond:
                at = "cluster-wide" if scope == "cluster" else f"in namespace {scope}"
                yield Violation(f"{where} grants {', '.join(beyond)} {at}, beyond what Clusterpedia calls")


@rule(
    name="search-api-verified",
    description="The host's API server reaches Clusterpedia's aggregated API (an APIService whose Service is in "
    "its namespace) over TLS it verifies: a caBundle, and no insecureSkipTLSVerify, since every request carries "
    "the caller's identity to whatever answers.",
    severity="critical",
    remediation="give the APIService the caBundle of the CA that signs the API server's serving certificate "
    "(components/federation/search_index.py) and drop insecureSkipTLSVerify",
    applies_to=("APIService",),
    subject=lambda r: r.is_kubernetes and r.api_group == APISERVICE_GROUP and r.kind == "APIService",
)
def search_api_verified(r: Resource, ctx: Context) -> Iterator[Violation]:
    spec = get(r.props, "spec") or {}
    if get(spec, "service", "namespace") != SEARCH_NAMESPACE:
        return
    if spec.get("insecureSkipTLSVerify") is True:
        yield Violation(f"{r.label} skips TLS verification of {get(spec, 'service', 'name')}")
    if not spec.get("caBundle"):
        yield Violation(f"{r.label} has no caBundle: the API server cannot verify {get(spec, 'service', 'name')}")


def _storage_volume(pod: dict, container: dict) -> dict | None:
    """The volume holding a Clusterpedia container's --storage-config file, or None when it has no such flag."""
    path = next(
        (
            str(a).split("=", 1)[1]
            for a in as_list(container.get("command")) + as_list(container.get("args"))
            if str(a).startswith("--storage-config=")
        ),
        None,
    )
    if path is None:
        return None
    mounts = [m for m in as_list(container.get("volumeMounts")) if isinstance(m, dict)]
    mount = next((m for m in mounts if posixpath.dirname(path) == str(m.get("mountPath")).rstrip("/")), None)
    volumes = {v.get("name"): v for v in as_list(pod.get("volumes")) if isinstance(v, dict)}
    return volumes.get(mount.get("name")) if mount else {}


@rule(
    name="search-store-secret",
    description="Clusterpedia's database password reaches its containers only in their storage configuration "
    "file, mounted from a Secret: no DB_PASSWORD variable, no ConfigMap; and the database volume is protected in "
    "production (the index of every member lives there).",
    severity="critical",
    remediation="mount the storage configuration from a Secret (search_store.storage_config), drop DB_PASSWORD, and "
    "create the clusterpedia-postgres volume with protect and retain_on_delete in production",
    applies_to=("Deployment", "PersistentVolumeClaim"),
    subject=lambda r: (
        r.is_kubernetes
        and r.namespace == SEARCH_NAMESPACE
        and (r.kind == "Deployment" or (r.kind == "PersistentVolumeClaim" and r.k8s_name == SEARCH_STORE))
    ),
    scope="stack",
    config=("production",),
)
def search_store_secret(r: Resource, ctx: Context) -> Iterator[Violation]:
    if r.kind == "Deployment":
        for w in workloads(r, ctx.require_stack()):
            for c in w.containers:
                if any(isinstance(e, dict) and e.get("name") == PASSWORD_ENV for e in as_list(c.get("env"))):
                    yield Violation(f"{w.label} container {c.get('name')}: the database password is in {PASSWORD_ENV}")
                volume = _storage_volume(w.pod, c)
                if volume is not None and "secret" not in volume:
                    yield Violation(
                        f"{w.label} container {c.get('name')}: its storage configuration is not mounted from a Secret"
                    )
        return
    if ctx.production is False:
        return
    missing = [o for o, on in (("protect", r.protect), ("retainOnDelete", r.retain_on_delete)) if on is False]
    if missing and ctx.production is None:
        yield CannotCheck(
            f"{r.label} is not {' / '.join(missing)}, and the pack does not know whether this stack is production",
            fix='set {"production": true|false} in the policy pack config',
        )
    elif missing:
        yield Violation(f"{r.label} holds the search index but is not {' / '.join(missing)} in production")


RULES = [
    search_reader_read_only,
    search_credentials_in_secrets,
    search_index_least_privilege,
    search_api_verified,
    search_store_secret,
]
