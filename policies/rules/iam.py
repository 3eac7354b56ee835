"""Identity and access, analysed: AWS policy documents (parliament, cloudsplaining), trust and key
policies, GCP IAM bindings of every resource type, and Kubernetes RBAC.

Matching is case-insensitive where the cloud's is (IAM actions, condition keys, GCP member
kinds), wildcards are expanded by the libraries, and a statement counts as public unless a
condition pins the caller to an account, organization or source.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from policies.analyzers import allowed_actions, policy_risks, policy_validity
from policies.framework import CannotCheck, Context, Violation, rule
from policies.model import Resource, Stack, as_list, get, json_document, peek
from policies.rules.aws import is_irsa_statement
from policies.upstream import KARMADA_CA_VALIDITY_HOURS, KARMADA_LEAF_VALIDITY_HOURS, PUBLIC_DISCOVERY_ROLES

IAM_POLICY = "aws:iam/policy:Policy"
IAM_ROLE = "aws:iam/role:Role"
IAM_ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
IAM_USER_POLICY = "aws:iam/userPolicy:UserPolicy"
IAM_GROUP_POLICY = "aws:iam/groupPolicy:GroupPolicy"
IDENTITY_POLICIES = (IAM_POLICY, IAM_ROLE_POLICY, IAM_USER_POLICY, IAM_GROUP_POLICY)
ATTACHMENTS = (
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    "aws:iam/userPolicyAttachment:UserPolicyAttachment",
    "aws:iam/groupPolicyAttachment:GroupPolicyAttachment",
    "aws:iam/policyAttachment:PolicyAttachment",
)
KMS_KEY = "aws:kms/key:Key"
KMS_KEY_POLICY = "aws:kms/keyPolicy:KeyPolicy"

# AWS managed policies that are administrator-equivalent: each allows changing IAM itself or every
# service (matched by name, any partition, any path, any case).
ADMIN_EQUIVALENT = frozenset(
    name.lower()
    for name in (
        "AdministratorAccess",
        "PowerUserAccess",
        "IAMFullAccess",
        "AdministratorAccess-Amplify",
        "AdministratorAccess-AWSElasticBeanstalk",
        "AWSOrganizationsFullAccess",
        "AWSCloudFormationFullAccess",
    )
)
_AWS_MANAGED = re.compile(r"^arn:aws[a-z-]*:iam::aws:policy/(?:.*/)?(?P<name>[^/]+)$", re.IGNORECASE)

# Condition keys that pin a public principal to callers we own (AWS's "not public" test for policies).
PINNING_KEYS = frozenset(
    k.lower()
    for k in (
        "aws:PrincipalAccount",
        "aws:PrincipalOrgID",
        "aws:PrincipalOrgPaths",
        "aws:PrincipalArn",
        "aws:SourceAccount",
        "aws:SourceArn",
        "aws:SourceOwner",
        "aws:SourceOrgID",
        "aws:SourceVpc",
        "aws:SourceVpce",
        "aws:SourceIp",
        "kms:CallerAccount",
    )
)
GOOGLE_PROVIDER = "accounts.google.com"


def _statements(document: dict) -> list[dict]:
    return [s for s in as_list(document.get("Statement")) if isinstance(s, dict)]


def _allows(statement: dict) -> bool:
    return str(statement.get("Effect", "")).lower() == "allow"


def _documents(r: Resource) -> Iterator[tuple[str, dict]]:
    """(where, document) of every identity policy a resource carries."""
    if r.type == IAM_ROLE:
        for i, inline in enumerate(as_list(get(r.props, "inlinePolicies"))):
            if get(inline, "policy"):
                where = f"role {r.name} inline policy {get(inline, 'name') or i}"
                yield where, json_document(get(inline, "policy"), f"inlinePolicies[{i}].policy")
        return
    yield f"policy {r.name}", json_document(get(r.props, "policy"), "policy")


def _all_documents(r: Resource) -> Iterator[tuple[str, dict]]:
    """Identity and key policies of a resource (parliament is no judge of trust policies: it wants a Resource
    there and knows no EKS OIDC provider; iam-trust-restricted checks those)."""
    if r.type in (KMS_KEY, KMS_KEY_POLICY):
        if get(r.props, "policy"):
            yield f"KMS key {r.name} key policy", json_document(get(r.props, "policy"), "policy")
    else:
        yield from _documents(r)


def _principals(statement: dict, kind: str) -> list[str]:
    principal = statement.get("Principal")
    if principal == "*":
        return ["*"]
    if not isinstance(principal, dict):
        return []
    return [str(v) for k, v in principal.items() if k.lower() == kind.lower() for v in as_list(v)]


def _is_public_principal(statement: dict) -> bool:
    """Principal "*" (in any of its spellings), or an AWS principal that is every account."""
    if "NotPrincipal" in statement:
        return True
    aws = _principals(statement, "AWS")
    return any(p == "*" or re.fullmatch(r"arn:aws[a-z-]*:iam::\*:root", p, re.IGNORECASE) for p in aws)


def _condition_keys(statement: dict) -> set[str]:
    conditions = statement.get("Condition")
    if not isinstance(conditions, dict):
        return set()
    return {k.lower() for block in conditions.values() if isinstance(block, dict) for k in block}


def _condition_values(statement: dict, suffix: str, operators: tuple[str, ...]) -> list[str]:
    conditions = statement.get("Condition")
    if not isinstance(conditions, dict):
        return []
    found = []
    for operator, block in conditions.items():
        base = operator.split(":")[-1].removesuffix("IfExists").lower()
        if base in operators and isinstance(block, dict):
            found += [str(v) for k, vs in block.items() if k.lower().endswith(suffix) for v in as_list(vs)]
    return found


def public_unpinned(statement: dict) -> bool:
    """An Allow to a public principal that no condition pins to our accounts or sources."""
    return _allows(statement) and _is_public_principal(statement) and not (_condition_keys(statement) & PINNING_KEYS)


@rule(
    name="iam-policy-valid",
    description="Every AWS identity and key policy document is valid IAM as parliament checks it: known "
    "actions, prefixes and condition operators, matching resource types, well-formed ARNs and statements.",
    severity="medium",
    remediation="correct the action/resource/condition parliament names (a typo silently grants or denies "
    "something else); see parliament's issue reference for the finding",
    applies_to=(*IDENTITY_POLICIES, IAM_ROLE, KMS_KEY, KMS_KEY_POLICY),
)
def iam_policy_valid(r: Resource, ctx: Context) -> Iterator[Violation]:
    for where, document in _all_documents(r):
        for finding in policy_validity(document):
            yield Violation(f"{where}: {finding.issue} ({finding.detail})")


@rule(
    name="iam-no-risky-permissions",
    description="No identity policy allows privilege escalation, data exfiltration, resource exposure or "
    "infrastructure modification on unconstrained resources (cloudsplaining's risk categories).",
    severity="high",
    remediation="scope the actions cloudsplaining lists to the exact resource ARNs the workload needs "
    "(e.g. the models bucket and its prefix), or remove them",
    applies_to=(*IDENTITY_POLICIES, IAM_ROLE),
)
def iam_no_risky_permissions(r: Resource, ctx: Context) -> Iterator[Violation]:
    for where, document in _documents(r):
        for risk, actions in policy_risks(document).items():
            if actions:
                shown = ", ".join(actions[:4]) + (f" and {len(actions) - 4} more" if len(actions) > 4 else "")
                yield Violation(f"{where} allows {risk} on any resource: {shown}")


@rule(
    name="iam-trust-restricted",
    description="Role trust policies admit no public principal, and a federated principal only with pinned "
    "subject and audience conditions.",
    severity="critical",
    remediation='name the exact principal; for web identity add StringEquals {"<issuer>:sub": '
    '"system:serviceaccount:<ns>:<sa>", "<issuer>:aud": "sts.amazonaws.com"} (components/aws/policy_docs)',
    applies_to=(IAM_ROLE,),
)
def iam_trust_restricted(r: Resource, ctx: Context) -> Iterator[Violation]:
    document = json_document(get(r.props, "assumeRolePolicy"), "assumeRolePolicy")
    for i, statement in enumerate(_statements(document)):
        where = f"role {r.name} trust Statement[{i}]"
        if not _allows(statement):
            continue
        if public_unpinned(statement):
            yield Violation(f"{where} lets any AWS principal assume the role")
        if not _principals(statement, "Federated") or is_irsa_statement(statement):
            continue  # EKS OIDC (IRSA) trust is irsa-trust-pinned's, with its stricter subject shape
        subjects = _condition_values(statement, ":sub", ("stringequals",))
        audiences = _condition_values(statement, ":aud", ("stringequals",))
        wild = [s for s in _condition_values(statement, ":sub", ("stringlike",)) if "*" in s or "?" in s]
        if not subjects or any("*" in s or "?" in s for s in subjects) or wild:
            yield Violation(f"{where} trusts a federated principal without one exact StringEquals :sub subject")
        if not audiences and not _google_account(statement, subjects):
            yield Violation(f"{where} trusts a federated principal without a StringEquals :aud audience")


def _google_account(statement: dict, subjects: list[str]) -> bool:
    """Google as the identity provider, pinned to one account's unique numeric ID: that subject names one
    principal whatever audience Google's service requests (Google's documented trust for Storage Transfer)."""
    federated = [p.lower() for p in _principals(statement, "Federated")]
    return federated == [GOOGLE_PROVIDER] and len(subjects) == 1 and subjects[0].isdigit()


def _wildcard_arn(resource: str) -> bool:
    return "*" in resource or "?" in resource


def _passrole(statement: dict) -> bool:
    return any(a.lower() == "iam:passrole" for a in allowed_actions(statement))


@rule(
    name="iam-passrole-scoped",
    description="iam:PassRole (however it is spelled or wildcarded) is granted only on exact role ARNs.",
    severity="high",
    remediation="list the exact role ARNs the workload may pass (and add an iam:PassedToService condition); never "
    "'*' or role/* patterns",
    applies_to=(*IDENTITY_POLICIES, IAM_ROLE),
)
def iam_passrole_scoped(r: Resource, ctx: Context) -> Iterator[Violation]:
    for where, document in _documents(r):
        for i, statement in enumerate(_statements(document)):
            if not _allows(statement) or not _passrole(statement):
                continue
            if "NotResource" in statement:
                yield Violation(f"{where} Statement[{i}] allows iam:PassRole on NotResource (every other role)")
                continue
            wild = [str(x) for x in as_list(statement.get("Resource")) if _wildcard_arn(str(x))]
            if wild:
                yield Violation(f"{where} Statement[{i}] allows iam:PassRole on wildcard resources {wild}")


def _admin_managed(arn: object) -> bool:
    match = _AWS_MANAGED.match(arn) if isinstance(arn, str) else None
    return match is not None and match.group("name").lower() in ADMIN_EQUIVALENT


@rule(
    name="iam-no-admin-managed-policies",
    description="No role, user or group gets an administrator-equivalent AWS managed policy (AdministratorAccess, "
    "PowerUserAccess, IAMFullAccess, ...), in any partition or spelling.",
    severity="critical",
    remediation="attach a policy that lists the exact actions and resources the principal needs",
    applies_to=(*ATTACHMENTS, IAM_ROLE),
)
def iam_no_admin_managed_policies(r: Resource, ctx: Context) -> Iterator[Violation]:
    arns = as_list(get(r.props, "managedPolicyArns")) if r.type == IAM_ROLE else [get(r.props, "policyArn")]
    for arn in arns:
        if _admin_managed(arn):
            yield Violation(f"{r.name} attaches the administrator-equivalent managed policy {arn}")


@rule(
    name="kms-key-policy-not-public",
    description="No KMS key policy allows a public principal ('*', every account's root, "
    "NotPrincipal) unless a condition pins the caller's account, organization or source.",
    severity="critical",
    remediation="grant the key to the account root or named roles, or add a kms:CallerAccount / "
    "aws:PrincipalAccount / aws:PrincipalOrgID condition",
    applies_to=(KMS_KEY, KMS_KEY_POLICY),
)
def kms_key_policy_not_public(r: Resource, ctx: Context) -> Iterator[Violation]:
    if not get(r.props, "policy"):
        return
    document = json_document(get(r.props, "policy"), "policy")
    for i, statement in enumerate(_statements(document)):
        if public_unpinned(statement):
            yield Violation(
                f"{r.name}: key policy Statement[{i}] allows a public principal without a pinning condition"
            )


# --- GCP ----------------------------------------------------------------------------------------------

_GCP_IAM = re.compile(r"^gcp:[A-Za-z0-9]+/[A-Za-z0-9]*iam(member|binding|policy):", re.IGNORECASE)
PRIMITIVE_ROLES = ("roles/owner", "roles/editor", "roles/viewer")
PUBLIC_MEMBERS = ("allusers", "allauthenticatedusers")
WORKLOAD_IDENTITY_USER = "roles/iam.workloadidentityuser"
# serviceAccount:<project>.svc.id.goog[<namespace>/<ksa>]: exactly one Kubernetes service account.
_ONE_KSA = re.compile(r"^serviceaccount:[a-z0-9.:-]+\.svc\.id\.goog\[[a-z0-9-]+/[a-z0-9-]+\]$", re.IGNORECASE)


def is_gcp_iam(r: Resource) -> bool:
    return bool(_GCP_IAM.match(r.type))


def _bindings(r: Resource) -> list[tuple[str, list[str]]]:
    """(role, members) of a GCP IAM member, binding or whole policy of any resource type."""
    if r.type.lower().endswith("iampolicy"):
        data = json_document(get(r.props, "policyData"), "policyData")
        return [
            (str(b.get("role", "")), [str(m) for m in as_list(b.get("members"))])
            for b in as_list(data.get("bindings"))
            if isinstance(b, dict)
        ]
    members = as_list(get(r.props, "member")) + as_list(get(r.props, "members"))
    return [(str(get(r.props, "role") or ""), [str(m) for m in members])]


def _member_kind(member: str) -> str:
    return member.split(":", 1)[0].strip().lower()


@rule(
    name="gcp-no-primitive-roles",
    description="No GCP IAM binding of any resource grants a primitive role (owner, editor, viewer).",
    severity="high",
    remediation="grant the predefined role for the task (e.g. roles/storage.objectViewer, roles/logging.logWriter)",
    applies_to=("gcp:*/*IAMMember", "gcp:*/*IAMBinding", "gcp:*/*IAMPolicy"),
    subject=is_gcp_iam,
)
def gcp_no_primitive_roles(r: Resource, ctx: Context) -> Iterator[Violation]:
    for role, members in _bindings(r):
        if role.strip().lower() in PRIMITIVE_ROLES:
            yield Violation(f"{r.name} grants the primitive role {role} to {', '.join(members) or 'members'}")


@rule(
    name="gcp-iam-not-public",
    description="No GCP IAM binding of any resource type (bucket, key, service account, project) names allUsers "
    "or allAuthenticatedUsers.",
    severity="critical",
    remediation="grant the role to the exact service account (Workload Identity) instead of the public member",
    applies_to=("gcp:*/*IAMMember", "gcp:*/*IAMBinding", "gcp:*/*IAMPolicy"),
    subject=is_gcp_iam,
)
def gcp_iam_not_public(r: Resource, ctx: Context) -> Iterator[Violation]:
    for role, members in _bindings(r):
        for member in members:
            if _member_kind(member) in PUBLIC_MEMBERS or member.lower().startswith("principalset://goog/public"):
                yield Violation(f"{r.name} grants {role or 'a role'} to the public member {member}")


@rule(
    name="gcp-workload-identity-one-ksa",
    description="A Workload Identity binding (roles/iam.workloadIdentityUser) admits exactly one Kubernetes "
    "service account, never a namespace, a pool or a pattern.",
    severity="high",
    remediation="bind serviceAccount:<project>.svc.id.goog[<namespace>/<ksa>] for each KSA that needs the account",
    applies_to=("gcp:serviceaccount/iAMMember:IAMMember", "gcp:serviceaccount/iAMBinding:IAMBinding"),
    subject=is_gcp_iam,
)
def gcp_workload_identity_one_ksa(r: Resource, ctx: Context) -> Iterator[Violation]:
    for role, members in _bindings(r):
        if role.strip().lower() != WORKLOAD_IDENTITY_USER:
            continue
        for member in members:
            if not _ONE_KSA.match(member.strip()):
                yield Violation(f"{r.name}: Workload Identity member {member} is not exactly one KSA")


# --- Kubernetes RBAC ----------------------------------------------------------------------------------

RBAC_GROUP = "rbac.authorization.k8s.io"
ROLE_KINDS = ("Role", "ClusterRole")
BINDING_KINDS = ("RoleBinding", "ClusterRoleBinding")
# Built-in roles that grant (nearly) everything, Secrets included.
ADMIN_ROLES = ("cluster-admin", "admin", "edit")
READ_VERBS = ("get", "list", "watch", "*")
_WORKLOAD_GROUPS = ("system:serviceaccount", "system:authenticated", "system:unauthenticated")


def _is_rbac(kinds: tuple[str, ...]):
    return lambda r: r.is_kubernetes and r.api_group == RBAC_GROUP and r.kind in kinds


def _rules(role: Resource) -> list[dict]:
    return [x for x in as_list(peek(role.props, "rules")) if isinstance(x, dict)]


def _lower(values: object) -> list[str]:
    return [str(v).lower() for v in as_list(values)]


def _wildcard_rule(rule_: dict) -> bool:
    return "*" in _lower(rule_.get("verbs")) or "*" in _lower(rule_.get("resources"))


def _reads_secrets(rule_: dict) -> bool:
    groups, resources, verbs = (
        _lower(rule_.get("apiGroups")),
        _lower(rule_.get("resources")),
        _lower(rule_.get("verbs")),
    )
    core = not groups or "" in groups or "*" in groups
    named = bool(as_list(rule_.get("resourceNames")))
    return core and not named and bool({"secrets", "*"} & set(resources)) and bool(set(READ_VERBS) & set(verbs))


def _role_of(binding: Resource, stack: Stack) -> Resource | None:
    ref = peek(binding.props, "roleRef")
    if not isinstance(ref, dict):
        return None
    kind = ref.get("kind")
    if not isinstance(kind, str):
        return None
    for r in stack.kubernetes(kind, RBAC_GROUP):
        same = r.cluster == binding.cluster and r.k8s_name == ref.get("name")
        scoped = r.kind == "ClusterRole" or r.namespace == binding.namespace
        if same and r.kind in ROLE_KINDS and scoped:
            return r
    return None


def _workload_subjects(binding: Resource, ctx: Context) -> list[str]:
    """Service accounts and service-account groups a binding grants to, less the cluster managers the spec names."""
    found = []
    for s in as_list(peek(binding.props, "subjects")):
        if not isinstance(s, dict):
            continue
        kind, name = str(s.get("kind", "")), str(s.get("name", ""))
        account = f"{s.get('namespace', binding.namespace)}/{name}"
        if kind == "ServiceAccount" and account not in ctx.cluster_admin_service_accounts:
            found.append(f"ServiceAccount {account}")
        elif kind in ("Group", "User") and name.lower().startswith(_WORKLOAD_GROUPS):
            found.append(f"{kind} {name}")
    return found


def _bindings_of(role: Resource, stack: Stack) -> list[Resource]:
    return [b for b in stack.resources if _is_rbac(BINDING_KINDS)(b) and _role_of(b, stack) is role]


def _admin_by_design(role: Resource, ctx: Context) -> bool:
    """A role bound only to the cluster managers the spec names (e.g. Karmada's push controller)."""
    bindings = _bindings_of(role, ctx.require_stack())
    return bool(bindings) and all(not _workload_subjects(b, ctx) and _only_managers(b, ctx) for b in bindings)


def _only_managers(binding: Resource, ctx: Context) -> bool:
    subjects = [s for s in as_list(peek(binding.props, "subjects")) if isinstance(s, dict)]
    accounts = {f"{s.get('namespace', binding.namespace)}/{s.get('name')}" for s in subjects}
    kinds = {s.get("kind") for s in subjects}
    return kinds == {"ServiceAccount"} and accounts <= set(ctx.cluster_admin_service_accounts)


@rule(
    name="rbac-no-admin-for-workloads",
    description="No RoleBinding or ClusterRoleBinding gives a service account (or the service-account and "
    "authenticated groups) cluster-admin, admin, edit or a role with wildcard verbs or resources.",
    severity="critical",
    remediation="bind a Role that lists the exact resources and verbs the workload uses",
    applies_to=BINDING_KINDS,
    subject=_is_rbac(BINDING_KINDS),
    scope="stack",
    config=("clusterAdminServiceAccounts",),
)
def rbac_no_admin_for_workloads(r: Resource, ctx: Context) -> Iterator[Violation]:
    subjects = _workload_subjects(r, ctx)
    if not subjects:
        return
    ref = str(get(r.props, "roleRef", "name") or "")
    role = _role_of(r, ctx.require_stack())
    if ref.lower() in ADMIN_ROLES and role is None:
        yield Violation(f"{r.label} gives {', '.join(subjects)} the built-in role {ref}")
    elif role is not None and any(_wildcard_rule(x) for x in _rules(role)):
        yield Violation(f"{r.label} gives {', '.join(subjects)} {role.label}, which has wildcard verbs or resources")


@rule(
    name="rbac-no-wildcards",
    description="Roles and ClusterRoles list their verbs and resources: no '*' (except roles bound only to the "
    "cluster managers the spec names, clusterAdminServiceAccounts).",
    severity="high",
    remediation="replace '*' with the verbs (get, list, watch, ...) and resources the controller uses",
    applies_to=ROLE_KINDS,
    subject=_is_rbac(ROLE_KINDS),
    scope="stack",
    config=("clusterAdminServiceAccounts",),
)
def rbac_no_wildcards(r: Resource, ctx: Context) -> Iterator[Violation]:
    wild = [(i, x) for i, x in enumerate(_rules(r)) if _wildcard_rule(x)]
    if not wild or _admin_by_design(r, ctx):
        return
    for i, x in wild:
        yield Violation(f"{r.label} rules[{i}] grants verbs {x.get('verbs')} on resources {x.get('resources')}")


@rule(
    name="rbac-no-cluster-secret-read",
    description="No ClusterRoleBinding grants get/list/watch on every Secret of the cluster (a ClusterRole "
    "without resourceNames, or cluster-admin/admin/edit).",
    severity="critical",
    remediation="bind a namespaced Role with resourceNames listing the Secrets the workload reads",
    applies_to=("ClusterRoleBinding",),
    subject=_is_rbac(("ClusterRoleBinding",)),
    scope="stack",
    config=("clusterAdminServiceAccounts",),
)
def rbac_no_cluster_secret_read(r: Resource, ctx: Context) -> Iterator[Violation]:
    if _only_managers(r, ctx):
        return
    ref = str(get(r.props, "roleRef", "name") or "")
    role = _role_of(r, ctx.require_stack())
    if role is None and ref.lower() in ADMIN_ROLES:
        yield Violation(f"{r.label} binds {ref}, which reads every Secret of the cluster")
    elif role is not None and any(_reads_secrets(x) for x in _rules(role)):
        yield Violation(f"{r.label} binds {role.label}, which reads every Secret of the cluster")


# Subresources whose `create` runs a command in (or attaches to) a pod: whoever may, reads the Secrets it mounts.
_INTO_PODS = ("pods/exec", "pods/attach")


def _into_pods(rule_: dict) -> bool:
    groups, resources, verbs = (_lower(rule_.get(k)) for k in ("apiGroups", "resources", "verbs"))
    core = not groups or "" in groups or "*" in groups
    return core and bool(set(_INTO_PODS) & set(resources)) and bool({"create", "*"} & set(verbs))


def _reaches_secrets(rule_: dict) -> bool:
    return bool(_reads_secrets(rule_)) or _into_pods(rule_)


def _own_secret_readers(binding: Resource, ctx: Context) -> bool:
    """A RoleBinding whose subjects are only service accounts of its own namespace the spec names as reading its
    Secrets by design (namespaceSecretReaders)."""
    subjects = [s for s in as_list(peek(binding.props, "subjects")) if isinstance(s, dict)]
    readers = set(ctx.namespace_secret_readers)
    return bool(subjects) and all(
        s.get("kind") == "ServiceAccount"
        and s.get("namespace", binding.namespace) == binding.namespace
        and f"{binding.namespace}/{s.get('name')}" in readers
        for s in subjects
    )


@rule(
    name="rbac-no-namespace-secret-read",
    description="No RoleBinding grants get/list/watch on every Secret of its namespace (a Role or ClusterRole rule "
    "on secrets without resourceNames, or admin/edit/cluster-admin), nor exec or attach into its pods (which read the "
    "Secrets they mount); the readers of their own namespace's Secrets the spec names (namespaceSecretReaders) may "
    "read them, never exec or attach.",
    severity="high",
    remediation="list the Secrets the workload reads in the rule's resourceNames, and drop pods/exec and pods/attach",
    applies_to=("RoleBinding",),
    subject=_is_rbac(("RoleBinding",)),
    scope="stack",
    config=("clusterAdminServiceAccounts", "namespaceSecretReaders"),
)
def rbac_no_namespace_secret_read(r: Resource, ctx: Context) -> Iterator[Violation]:
    if _only_managers(r, ctx):
        return
    readers = _own_secret_readers(r, ctx)
    ref = str(get(r.props, "roleRef", "name") or "")
    role = _role_of(r, ctx.require_stack())
    if role is None and ref.lower() in ADMIN_ROLES:
        yield Violation(f"{r.label} binds {ref}, which reads every Secret of namespace {r.namespace}")
    elif role is not None:
        for i, x in enumerate(_rules(role)):
            if _into_pods(x) if readers else _reaches_secrets(x):
                yield Violation(
                    f"{r.label} binds {role.label}, whose rules[{i}] ({x.get('verbs')} on {x.get('resources')}) reads "
                    f"every Secret of namespace {r.namespace}"
                )


# Subjects that are everyone: every caller, every anonymous caller, every service account of the cluster.
PUBLIC_SUBJECTS = {
    ("group", "system:authenticated"),
    ("group", "system:unauthenticated"),
    ("group", "system:serviceaccounts"),
    ("user", "system:anonymous"),
}


@rule(
    name="rbac-no-public-subjects",
    description="No RoleBinding or ClusterRoleBinding grants anything to everyone (system:authenticated, "
    "system:unauthenticated, system:anonymous, all service accounts), except Kubernetes' own discovery roles.",
    severity="critical",
    remediation="bind the role to the exact user, group or service account that needs it",
    applies_to=BINDING_KINDS,
    subject=_is_rbac(BINDING_KINDS),
)
def rbac_no_public_subjects(r: Resource, ctx: Context) -> Iterator[Violation]:
    ref = str(get(r.props, "roleRef", "name") or "")
    if ref in PUBLIC_DISCOVERY_ROLES:
        return
    for s in as_list(get(r.props, "subjects")):
        if isinstance(s, dict) and (str(s.get("kind", "")).lower(), str(s.get("name", "")).lower()) in PUBLIC_SUBJECTS:
            yield Violation(f"{r.label} grants {ref} to {s.get('kind')} {s.get('name')}: everyone")


TLS_KEY = "tls:index/privateKey:PrivateKey"
TLS_SELF_SIGNED = "tls:index/selfSignedCert:SelfSignedCert"
TLS_SIGNED = "tls:index/locallySignedCert:LocallySignedCert"
MIN_RSA_BITS = 3072  # what Karmada's chart and register generate (policies/upstream.py)
STRONG_CURVES = ("P256", "P384", "P521")
LEAF_USES = {"server_auth", "client_auth"}


@rule(
    name="tls-material-bounded",
    description="Keys and certificates the stack generates are bounded: RSA keys of at least 3072 bits (or ECDSA "
    "P-256+, Ed25519), CAs valid at most 10 years and leaves at most 43800 hours (Karmada's chart), and no leaf "
    "certificate that is itself a CA or may sign certificates (an intermediate CA signs with no server or client "
    "use and path length 0).",
    severity="high",
    remediation="generate keys with rsa_bits=3072 (components/federation/certificates.py), keep validity within the "
    "bounds and renew early (early_renewal_hours), and sign leaves with client/server uses only",
    applies_to=(TLS_KEY, TLS_SELF_SIGNED, TLS_SIGNED),
)
def tls_material_bounded(r: Resource, ctx: Context) -> Iterator[Violation]:
    if r.type == TLS_KEY:
        algorithm = str(get(r.props, "algorithm") or "RSA").upper()
        bits = get(r.props, "rsaBits")
        if algorithm == "RSA" and (bits if isinstance(bits, int | float) else 2048) < MIN_RSA_BITS:
            yield Violation(f"key {r.name} is RSA {bits or 2048}, under {MIN_RSA_BITS} bits")
        elif algorithm == "ECDSA" and str(get(r.props, "ecdsaCurve") or "P224").upper() not in STRONG_CURVES:
            yield Violation(f"key {r.name} uses curve {get(r.props, 'ecdsaCurve') or 'P224'}")
        return
    hours = get(r.props, "validityPeriodHours")
    ca = get(r.props, "isCaCertificate") is True
    uses = {str(u) for u in as_list(get(r.props, "allowedUses"))}
    # An intermediate CA: signed, a CA that signs, never a server or client itself, and no CA below it.
    intermediate = (
        r.type == TLS_SIGNED
        and ca
        and "cert_signing" in uses
        and not uses & LEAF_USES
        and get(r.props, "maxPathLength") == 0
    )
    bound = (
        KARMADA_CA_VALIDITY_HOURS if (ca and r.type == TLS_SELF_SIGNED) or intermediate else KARMADA_LEAF_VALIDITY_HOURS
    )
    if not isinstance(hours, int | float) or hours > bound:
        yield Violation(f"certificate {r.name} is valid {hours} hours, over {bound}")
    if r.type == TLS_SIGNED and not intermediate and (ca or "cert_signing" in uses):
        yield Violation(f"certificate {r.name} is a leaf that may sign certificates (isCaCertificate / cert_signing)")


_READ_ACTION = re.compile(r"^[a-z0-9-]+:(describe|list|get|batchget|head)", re.IGNORECASE)


def _wildcard_name(arn: str) -> bool:
    """An ARN whose resource name (after the last '/' or ':') is or holds a wildcard; for S3, the bucket's name (the
    object key after it may be wildcarded: `<bucket>/*` is that bucket's objects, `*/*` every bucket's)."""
    parts = arn.split(":", 5)
    if len(parts) < 6:
        return False
    name = parts[5].split("/", 1)[0] if parts[2] == "s3" else re.split(r"[/:]", parts[5])[-1]
    return "*" in name or "?" in name


@rule(
    name="iam-no-wildcard-resource-names",
    description="No Allow of a write action names resources by a wildcarded name (autoScalingGroupName/*, "
    "nodegroup/<cluster>/*, role/eks-*): it covers every such resource of the account, present and future, "
    "unless a resource-tag condition scopes it.",
    severity="high",
    remediation="list the exact ARNs (the node groups' Auto Scaling groups, by name) or add a condition on "
    "aws:ResourceTag/<key> (autoscaling:ResourceTag/<key>) that only our resources carry",
    applies_to=(*IDENTITY_POLICIES, IAM_ROLE),
)
def iam_no_wildcard_resource_names(r: Resource, ctx: Context) -> Iterator[Violation]:
    for where, document in _documents(r):
        for i, statement in enumerate(_statements(document)):
            if not _allows(statement) or any("resourcetag/" in k for k in _condition_keys(statement)):
                continue
            writes = [str(a) for a in as_list(statement.get("Action")) if not _READ_ACTION.match(str(a))]
            wild = [str(x) for x in as_list(statement.get("Resource")) if x != "*" and _wildcard_name(str(x))]
            if writes and wild:
                yield Violation(f"{where} Statement[{i}] allows {writes[:3]} on every resource named {wild[:2]}")


IRSA_ANNOTATION = "eks.amazonaws.com/role-arn"  # EKS pod identity webhook (aws/amazon-eks-pod-identity-webhook)
WI_ANNOTATION = "iam.gke.io/gcp-service-account"  # GKE Workload Identity
GCP_ACCOUNT = "gcp:serviceaccount/account:Account"
WI_MEMBER_TYPES = ("gcp:serviceaccount/iAMMember:IAMMember", "gcp:serviceaccount/iAMBinding:IAMBinding")


def _annotated_accounts(r: Resource) -> Iterator[tuple[str, str, str, str, object]]:
    """(prop, key, namespace, name, identity) of each Kubernetes ServiceAccount a resource annotates with a cloud
    identity: a ServiceAccount (or its patch) by its metadata; a Helm release by a values mapping with `annotations`
    and the account's `name` beside them (the charts' serviceAccount blocks)."""
    if r.is_kubernetes and r.kind == "ServiceAccount":
        for key in (IRSA_ANNOTATION, WI_ANNOTATION):
            if key in r.annotations:
                yield "metadata", key, r.namespace, r.k8s_name, r.annotations[key]
        return
    if r.type != "kubernetes:helm.sh/v3:Release":
        return
    namespace = str(peek(r.props, "namespace") or "default")
    stack: list[object] = [peek(r.props, "values")]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            annotations = value.get("annotations")
            if isinstance(annotations, dict) and isinstance(value.get("name"), str):
                for key in (IRSA_ANNOTATION, WI_ANNOTATION):
                    if key in annotations:
                        yield "values", key, namespace, value["name"], annotations[key]
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


_AUTONAME_SUFFIX = re.compile(r"^-[0-9a-f]{7}$")  # what Pulumi appends to a resource's name when it names it


def _roles_named(arn: str, stack: Stack) -> list[Resource]:
    """The stack's IAM roles an `arn:...:role/<path><name>` names: by their `name` input, or the name Pulumi gives
    one without it (its resource name and a 7-hex suffix); the longest resource name wins."""
    name = arn.rsplit("/", 1)[-1]
    exact = [role for role in stack.of_type(IAM_ROLE) if peek(role.props, "name") == name]
    if exact:
        return exact
    auto = [
        role
        for role in stack.of_type(IAM_ROLE)
        if peek(role.props, "name") is None
        and _AUTONAME_SUFFIX.match(name.removeprefix(role.name))
        and name != role.name
    ]
    longest = max((len(role.name) for role in auto), default=0)
    return [role for role in auto if len(role.name) == longest]


def _assumed_roles(r: Resource, prop: str, identity: object, stack: Stack, accounts: int) -> list[Resource] | None:
    """The roles an IRSA annotation makes its account assume: the stack's role its ARN names; when the ARN is not
    known yet, the roles the property was computed from (when the property holds this one account only). None: a
    role outside the stack, or one the pack cannot tell."""
    if isinstance(identity, str) and ":role/" in identity:
        return _roles_named(identity, stack) or None
    sources = [s for s in stack.sources(r, prop) if s.type == IAM_ROLE]
    return sources if accounts == 1 else None


def _trusted_subjects(role: Resource) -> set[str]:
    document = json_document(get(role.props, "assumeRolePolicy"), "assumeRolePolicy")
    return {
        str(v)
        for statement in _statements(document)
        if is_irsa_statement(statement)
        for v in _condition_values(statement, ":sub", ("stringequals", "stringlike"))
    }


def _wi_members(account: Resource, stack: Stack) -> set[str]:
    members = set()
    for binding in stack.of_type(*WI_MEMBER_TYPES):
        if account.urn in binding.deps.get("serviceAccountId", []):
            for role, found in _bindings(binding):
                if role.strip().lower() == WORKLOAD_IDENTITY_USER:
                    members.update(found)
    return members


@rule(
    name="workload-identity-pinned-to-its-user",
    description="The cloud identity a Kubernetes ServiceAccount is annotated with (IRSA role, GKE Workload "
    "Identity account) trusts exactly that ServiceAccount: the role's sub condition is "
    "system:serviceaccount:<its namespace>:<its name>, the account's workloadIdentityUser member is "
    "<project>.svc.id.goog[<its namespace>/<its name>], not another (or merely one) account.",
    severity="high",
    remediation="build the trust from the same namespace and name the ServiceAccount (or the chart's "
    "serviceAccount.name) uses: components/aws/irsa.py irsa_role(namespace=..., service_account=...)",
    applies_to=("ServiceAccount", "ServiceAccountPatch", "kubernetes:helm.sh/v3:Release"),
    subject=lambda r: (r.is_kubernetes and r.kind == "ServiceAccount") or r.type == "kubernetes:helm.sh/v3:Release",
    scope="stack",
)
def workload_identity_pinned(r: Resource, ctx: Context) -> Iterator[Violation]:
    stack = ctx.require_stack()
    annotated = list(_annotated_accounts(r))
    irsa = sum(1 for _, key, _, _, _ in annotated if key == IRSA_ANNOTATION)
    for prop, key, namespace, name, identity in annotated:
        sources = stack.sources(r, prop)
        where = f"{r.label} ServiceAccount {namespace}/{name}"
        if key == IRSA_ANNOTATION:
            wanted = f"system:serviceaccount:{namespace}:{name}"
            roles = _assumed_roles(r, prop, identity, stack, irsa)
            if roles is None:
                yield CannotCheck(f"{where} assumes {identity}, a role this stack does not define (or not yet known)")
                continue
            for role in roles:
                subjects = _trusted_subjects(role)
                if subjects != {wanted}:
                    yield Violation(f"{where} assumes role {role.name}, which trusts {sorted(subjects)}, not {wanted}")
        else:
            wanted = f"[{namespace}/{name}]"
            for account in (s for s in sources if s.type == GCP_ACCOUNT):
                members = _wi_members(account, stack)
                if not members or any(not m.endswith(wanted) for m in members):
                    shown = sorted(members) or "no one"
                    yield Violation(
                        f"{where} uses {account.name}, whose Workload Identity admits {shown}, not {wanted}"
                    )


RULES = [
    workload_identity_pinned,
    rbac_no_public_subjects,
    tls_material_bounded,
    iam_no_wildcard_resource_names,
    iam_policy_valid,
    iam_no_risky_permissions,
    iam_trust_restricted,
    iam_passrole_scoped,
    iam_no_admin_managed_policies,
    kms_key_policy_not_public,
    gcp_no_primitive_roles,
    gcp_iam_not_public,
    gcp_workload_identity_one_ksa,
    rbac_no_admin_for_workloads,
    rbac_no_wildcards,
    rbac_no_cluster_secret_read,
    rbac_no_namespace_secret_read,
]
