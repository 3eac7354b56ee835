"""Karmada federation: what the control plane propagates reaches every member as intended."""

from __future__ import annotations

from collections.abc import Iterator

from policies.framework import Context, Violation, rule
from policies.model import Resource, as_list, get, number, peek
from policies.upstream import (
    KARMADA_AGENT_GROUP,
    KARMADA_AGENT_USER_PREFIX,
    KARMADA_AGENT_USES,
    KARMADA_EXECUTION_NAMESPACE_PREFIX,
    KARMADA_LEAF_VALIDITY_HOURS,
    KARMADA_RSA_BITS,
)

CERT_REQUEST = "tls:index/certRequest:CertRequest"
SIGNED_CERT = "tls:index/locallySignedCert:LocallySignedCert"
PRIVATE_KEY = "tls:index/privateKey:PrivateKey"
RBAC_GROUP = "rbac.authorization.k8s.io"
# Resources an agent may touch only by name (its own Cluster, status and Secrets), and the verbs upstream grants
# on them without names (register.go L657-661, L743-745).
_NAMED_ONLY = {("cluster.karmada.io", "clusters"), ("cluster.karmada.io", "clusters/status"), ("", "secrets")}
_UNNAMED_VERBS = frozenset({"create", "list", "watch"})


@rule(
    name="karmada-overrides-apply",
    description="Every OverridePolicy patch applies to each member's copy of the template it selects (Karmada "
    "refuses the whole override, and the member gets no object, when one operation does not apply).",
    severity="high",
    remediation="make each plaintext path exist in the template (use operator add for new keys, escape '/' in "
    "keys as ~1), or remove the operation",
    applies_to=("propagated Kubernetes objects",),
    subject=lambda r: r.propagated is not None,
    scope="stack",
)
def karmada_overrides_apply(r: Resource, ctx: Context) -> Iterator[Violation]:
    if r.override_error:
        yield Violation(f"{r.label}: {r.override_error}")


def _subject(r: Resource) -> dict:
    subject = peek(r.props, "subject")
    return subject if isinstance(subject, dict) else {}


def _is_agent_request(r: Resource) -> bool:
    if r.type != CERT_REQUEST:
        return False
    subject = _subject(r)
    organizations = [str(o) for o in as_list(subject.get("organization"))]
    return (
        str(subject.get("commonName", "")).startswith(KARMADA_AGENT_USER_PREFIX) or KARMADA_AGENT_GROUP in organizations
    )


def _member_names(ctx: Context) -> set[str]:
    """Members the stack knows: Karmada Cluster objects and the agent users its RBAC binds."""
    stack = ctx.require_stack()
    names = {c.k8s_name for c in stack.kubernetes("Cluster", "cluster.karmada.io")}
    for binding in stack.resources:
        if binding.is_kubernetes and binding.api_group == RBAC_GROUP and binding.kind.endswith("Binding"):
            for s in as_list(peek(binding.props, "subjects")):
                name = str(s.get("name", "")) if isinstance(s, dict) else ""
                if isinstance(s, dict) and s.get("kind") == "User" and name.startswith(KARMADA_AGENT_USER_PREFIX):
                    names.add(name.removeprefix(KARMADA_AGENT_USER_PREFIX))
    return names


@rule(
    name="karmada-agent-identity",
    description="Each pull member's karmada-agent certificate is what `karmadactl register` issues it (v1.18.2): "
    "CN system:karmada:agent:<member> for a member the stack federates, O exactly system:karmada:agents, one "
    "certificate per member, a client certificate (digital signature, key encipherment, client auth; not a CA), an "
    "RSA key of at least 3072 bits, valid at most the chart's 43800 hours.",
    severity="critical",
    remediation="issue the agent certificate with components/federation/certificates.signed_certificate(common_name="
    "'system:karmada:agent:<member>', organization='system:karmada:agents') and its client uses",
    applies_to=(CERT_REQUEST,),
    subject=_is_agent_request,
    scope="stack",
)
def karmada_agent_identity(r: Resource, ctx: Context) -> Iterator[Violation]:
    stack = ctx.require_stack()
    subject = _subject(r)
    common_name = str(subject.get("commonName", ""))
    member = common_name.removeprefix(KARMADA_AGENT_USER_PREFIX)
    organizations = [str(o) for o in as_list(subject.get("organization"))]
    where = f"agent certificate request {r.name}"
    if not common_name.startswith(KARMADA_AGENT_USER_PREFIX) or not member or ":" in member:
        yield Violation(f"{where}: CN {common_name!r} is not system:karmada:agent:<member>")
    if organizations != [KARMADA_AGENT_GROUP]:
        yield Violation(f"{where}: organization {organizations} is not exactly [{KARMADA_AGENT_GROUP}]")
    members = _member_names(ctx)
    if members and member not in members:
        yield Violation(f"{where}: {member!r} is not a member this stack federates ({sorted(members)})")
    twins = [
        o.name for o in stack.of_type(CERT_REQUEST) if o is not r and get(_subject(o), "commonName") == common_name
    ]
    if twins:
        yield Violation(f"{where}: {common_name} is also issued by {twins}: two agents would share one identity")
    for key in stack.sources(r, "privateKeyPem"):
        if key.type == PRIVATE_KEY and (number(get(key.props, "rsaBits")) or 2048) < KARMADA_RSA_BITS:
            yield Violation(
                f"{where}: key {key.name} is RSA {get(key.props, 'rsaBits') or 2048}, under {KARMADA_RSA_BITS}"
            )
    for cert in stack.of_type(SIGNED_CERT):
        if r.urn not in cert.deps.get("certRequestPem", []):
            continue
        uses = {str(u) for u in as_list(get(cert.props, "allowedUses"))}
        if get(cert.props, "isCaCertificate") is True or "cert_signing" in uses:
            yield Violation(f"{where}: certificate {cert.name} is a CA (it could sign any identity)")
        if not uses <= KARMADA_AGENT_USES or "client_auth" not in uses:
            yield Violation(
                f"{where}: certificate {cert.name} has uses {sorted(uses)}, not {sorted(KARMADA_AGENT_USES)}"
            )
        hours = number(get(cert.props, "validityPeriodHours"))
        if hours is None or hours > KARMADA_LEAF_VALIDITY_HOURS:
            yield Violation(
                f"{where}: certificate {cert.name} is valid {hours} hours, over {KARMADA_LEAF_VALIDITY_HOURS}"
            )


def _agent_subjects(binding: Resource) -> list[tuple[str, str]]:
    found = []
    for s in as_list(peek(binding.props, "subjects")):
        if not isinstance(s, dict):
            continue
        name = str(s.get("name", ""))
        if (s.get("kind") == "User" and name.startswith(KARMADA_AGENT_USER_PREFIX)) or name == KARMADA_AGENT_GROUP:
            found.append((str(s.get("kind")), name))
    return found


def _bound_role(binding: Resource, ctx: Context) -> Resource | None:
    ref = peek(binding.props, "roleRef")
    for r in ctx.require_stack().resources:
        if isinstance(ref, dict) and r.is_kubernetes and r.api_group == RBAC_GROUP and r.kind == ref.get("kind"):
            scoped = r.kind == "ClusterRole" or r.namespace == binding.namespace
            if r.cluster == binding.cluster and r.k8s_name == ref.get("name") and scoped:
                return r
    return None


@rule(
    name="karmada-agent-rbac-scoped",
    description="What a member's karmada-agent may do in Karmada is what `karmadactl register` grants (v1.18.2): bound "
    "to its own user, never to the system:karmada:agents group; its Cluster, cluster status and Secrets only by "
    "resourceNames of that member; Works only in karmada-es-<member>; no CSR approval, signing, escalate, bind or "
    "impersonate.",
    severity="critical",
    remediation="bind each member's roles to User system:karmada:agent:<member> only, with resourceNames [<member>] "
    "(and <member>-impersonator for Secrets) and Works through a RoleBinding in karmada-es-<member>",
    applies_to=("RoleBinding", "ClusterRoleBinding"),
    subject=lambda r: r.is_kubernetes and r.api_group == RBAC_GROUP and r.kind.endswith("RoleBinding"),
    scope="stack",
)
def karmada_agent_rbac_scoped(r: Resource, ctx: Context) -> Iterator[Violation]:
    subjects = _agent_subjects(r)
    if not subjects:
        return
    role = _bound_role(r, ctx)
    rules = [x for x in as_list(peek(role.props, "rules")) if isinstance(x, dict)] if role else []
    for kind, name in subjects:
        if kind != "User":
            yield Violation(f"{r.label} binds the {kind} {name}: every member's agent gets what one needs")
            continue
        member = name.removeprefix(KARMADA_AGENT_USER_PREFIX)
        allowed = {member, f"{member}-impersonator"}
        for i, x in enumerate(rules):
            groups = [str(g) for g in as_list(x.get("apiGroups"))] or [""]
            resources = [str(v) for v in as_list(x.get("resources"))]
            verbs = {str(v).lower() for v in as_list(x.get("verbs"))}
            names = {str(n) for n in as_list(x.get("resourceNames"))}
            where = f"{r.label}: {role.label if role else 'its role'} rules[{i}]"
            named = [(g, v) for g in groups for v in resources if (g, v) in _NAMED_ONLY or "*" in (g, v)]
            if named and (verbs - _UNNAMED_VERBS) and not (names and names <= allowed):
                yield Violation(f"{where} lets {member}'s agent {sorted(verbs)} {resources} of other members")
            if any(g in ("work.karmada.io", "*") for g in groups) and r.namespace != (
                KARMADA_EXECUTION_NAMESPACE_PREFIX + member
            ):
                yield Violation(f"{where} grants Works outside karmada-es-{member}")
            if {
                "approve",
                "sign",
                "escalate",
                "bind",
                "impersonate",
                "*",
            } & verbs or "certificatesigningrequests/approval" in resources:
                yield Violation(f"{where} grants {sorted(verbs)} on {resources}: approval, signing or escalation")


RULES = [karmada_overrides_apply, karmada_agent_identity, karmada_agent_rbac_scoped]
