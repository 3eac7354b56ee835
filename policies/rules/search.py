"""Multi-cluster search (Clusterpedia): a read-only index whose credentials and database stay secret."""

from __future__ import annotations

from collections.abc import Iterator

from platform_catalog.names import SEARCH_NAMESPACE, SEARCH_READER, SEARCH_STORE
from policies.framework import CannotCheck, Context, Violation, rule
from policies.model import Resource, as_list, get, peek
from policies.rules.federation import RBAC_GROUP, bound_rules

PEDIA_CLUSTER = "PediaCluster"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
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
    subject=lambda r: r.is_kubernetes and r.api_group == RBAC_GROUP and r.kind.endswith("RoleBinding"),
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


@rule(
    name="search-store-secret",
    description="Clusterpedia's database password reaches its chart only through the release's secret values "
    "file, and the database volume is protected in production (the index of every member lives there).",
    severity="critical",
    remediation="pass externalStorage.password in helm_release(secret_values=...), and create the "
    "clusterpedia-postgres volume with protect and retain_on_delete in production",
    applies_to=(HELM_RELEASE, "PersistentVolumeClaim"),
    subject=lambda r: (
        (r.type == HELM_RELEASE and r.props.get("chart") == "clusterpedia")
        or (r.kind == "PersistentVolumeClaim" and r.k8s_name == SEARCH_STORE)
    ),
    config=("production",),
)
def search_store_secret(r: Resource, ctx: Context) -> Iterator[Violation]:
    if r.type == HELM_RELEASE:
        if get(r.props, "values", "externalStorage", "password"):
            yield Violation(f"{r.label}: the database password is in the release's plain values")
        if "valueYamlFiles" not in r.props:  # present, its content a secret (unknown until `up`)
            yield Violation(f"{r.label}: no secret values file carries the database password")
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


RULES = [search_reader_read_only, search_credentials_in_secrets, search_store_secret]
