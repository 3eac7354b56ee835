"""Karmada federation: what the control plane propagates reaches every member as intended."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from policies.framework import Context, Violation, rule
from policies.model import Resource, Stack, as_list, get, number, peek
from policies.rules.iam import RBAC_GROUP
from policies.upstream import (
    BUILTIN_CLUSTER_ROLES,
    BUILTIN_ROLES,
    KARMADA_AGENT_GRANTS,
    KARMADA_AGENT_GROUP,
    KARMADA_AGENT_USER_PREFIX,
    KARMADA_AGENT_USES,
    KARMADA_AGENT_VALIDITY_HOURS,
    KARMADA_AGENT_WORK_RESOURCES,
    KARMADA_EXECUTION_NAMESPACE_PREFIX,
    KARMADA_RSA_BITS,
    PUBLIC_DISCOVERY_ROLES,
)

CERT_REQUEST = "tls:index/certRequest:CertRequest"
SIGNED_CERT = "tls:index/locallySignedCert:LocallySignedCert"
SELF_SIGNED_CERT = "tls:index/selfSignedCert:SelfSignedCert"
PRIVATE_KEY = "tls:index/privateKey:PrivateKey"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
AGENT_KUBECONFIG_SECRET = "karmada-kubeconfig"  # register.go KarmadaKubeconfigName: the agent's credentials
STRONG_CURVES = ("P256", "P384", "P521")


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


def _named_as_agent(r: Resource) -> bool:
    subject = _subject(r)
    organizations = [str(o) for o in as_list(subject.get("organization"))]
    return (
        str(subject.get("commonName", "")).startswith(KARMADA_AGENT_USER_PREFIX) or KARMADA_AGENT_GROUP in organizations
    )


def _karmada_releases(stack: Stack) -> tuple[list[Resource], list[Resource]]:
    """(control planes, agents): releases of the karmada chart by its installMode (chart default: host)."""
    hosts: list[Resource] = []
    agents: list[Resource] = []
    for release in stack.of_type(HELM_RELEASE):
        chart = str(peek(release.props, "chart") or "")
        if chart != "karmada" and not chart.endswith("/karmada"):
            continue
        mode = peek(release.props, "values", "installMode")
        (agents if mode == "agent" else hosts).append(release)
    return hosts, agents


def _feeds(resource: Resource, stack: Stack) -> list[Resource]:
    return [s for prop in resource.deps for s in stack.sources(resource, prop)]


def agent_requests(stack: Stack) -> set[str]:
    """URNs of the certificate requests whose certificate (or key) is a karmada-agent's, by where it goes rather than
    what it says: a certificate or key a karmada-agent release (or the karmada-kubeconfig Secret the agent reads,
    register.go L96-97) is given; and every certificate the control plane's CA signs that the control plane itself
    does not use, which can only leave for a member's agent."""
    hosts, agents = _karmada_releases(stack)
    consumers = agents + [
        s for s in stack.resources if s.is_kubernetes and s.kind == "Secret" and s.k8s_name == AGENT_KUBECONFIG_SECRET
    ]
    certs: set[str] = set()
    keys: set[str] = set()
    for consumer in consumers:
        for source in _feeds(consumer, stack):
            (certs if source.type == SIGNED_CERT else keys if source.type == PRIVATE_KEY else set()).add(source.urn)
    for host in hosts:
        own = {s.urn for s in _feeds(host, stack)}
        authorities = {
            u
            for s in _feeds(host, stack)
            if s.type == SELF_SIGNED_CERT
            for u in (s.urn, *s.deps.get("privateKeyPem", []))
        }
        for cert in stack.of_type(SIGNED_CERT):
            signer = set(cert.deps.get("caCertPem", [])) | set(cert.deps.get("caPrivateKeyPem", []))
            if signer & authorities and cert.urn not in own:
                certs.add(cert.urn)
    found = {u for c in stack.of_type(SIGNED_CERT) if c.urn in certs for u in c.deps.get("certRequestPem", [])}
    found |= {r.urn for r in stack.of_type(CERT_REQUEST) if set(r.deps.get("privateKeyPem", [])) & keys}
    return found


def federated_members(resources: Iterable[Resource]) -> set[str]:
    """Members these resources declare: Karmada Cluster objects and the agent users their RBAC binds."""
    names = set()
    for binding in resources:
        if binding.is_kubernetes and binding.kind == "Cluster" and binding.api_group == "cluster.karmada.io":
            names.add(binding.k8s_name)
        if binding.is_kubernetes and binding.api_group == RBAC_GROUP and binding.kind.endswith("Binding"):
            for s in as_list(peek(binding.props, "subjects")):
                name = str(s.get("name", "")) if isinstance(s, dict) else ""
                if isinstance(s, dict) and s.get("kind") == "User" and name.startswith(KARMADA_AGENT_USER_PREFIX):
                    names.add(name.removeprefix(KARMADA_AGENT_USER_PREFIX))
    return names


def _key_problem(key: Resource) -> str | None:
    """Why a key is weaker than the RSA 3072 register generates (128-bit security: ECDSA P-256 and up, Ed25519 match
    it; NIST SP 800-57 Part 1 Rev. 5 Table 2), or None."""
    algorithm = str(get(key.props, "algorithm") or "RSA").upper()
    if algorithm == "RSA":
        bits = number(get(key.props, "rsaBits")) or 2048  # the tls provider's default
        return None if bits >= KARMADA_RSA_BITS else f"RSA {bits:g}, under {KARMADA_RSA_BITS} bits"
    if algorithm == "ECDSA":
        curve = str(get(key.props, "ecdsaCurve") or "P224").upper()  # the tls provider's default
        return None if curve in STRONG_CURVES else f"ECDSA {curve}, weaker than RSA {KARMADA_RSA_BITS}"
    return None if algorithm == "ED25519" else f"{algorithm}, not a key type the pack knows the strength of"


@rule(
    name="karmada-agent-identity",
    description="Each pull member's karmada-agent certificate is what `karmadactl register` issues it (v1.18.2): "
    "CN system:karmada:agent:<member> for a member the environment federates (its stacks or the pack config "
    "federationMembers), O exactly system:karmada:agents, one certificate per member, a client certificate "
    "(digital signature, key encipherment, client auth; not a CA), a key "
    "at least as strong as RSA 3072, valid at most the year register asks for (8760 hours). A certificate is an "
    "agent's by its subject or by where it goes (an agent's release or kubeconfig, or signed by the control plane's "
    "CA for anything but the control plane), whatever it says.",
    severity="critical",
    remediation="issue the agent certificate with components/federation/certificates.signed_certificate(common_name="
    "'system:karmada:agent:<member>', organization='system:karmada:agents') and its client uses, valid 8760 hours",
    applies_to=(CERT_REQUEST,),
    subject=lambda r: r.type == CERT_REQUEST,
    scope="stack",
    config=("federationMembers",),
)
def karmada_agent_identity(r: Resource, ctx: Context) -> Iterator[Violation]:
    stack = ctx.require_stack()
    if not _named_as_agent(r) and r.urn not in _cached_agent_requests(stack):
        return
    subject = _subject(r)
    common_name = str(subject.get("commonName", ""))
    member = common_name.removeprefix(KARMADA_AGENT_USER_PREFIX)
    organizations = [str(o) for o in as_list(subject.get("organization"))]
    where = f"agent certificate request {r.name}"
    if not common_name.startswith(KARMADA_AGENT_USER_PREFIX) or not member or ":" in member:
        yield Violation(f"{where}: CN {common_name!r} is not system:karmada:agent:<member>")
    if organizations != [KARMADA_AGENT_GROUP]:
        yield Violation(f"{where}: organization {organizations} is not exactly [{KARMADA_AGENT_GROUP}]")
    if "federated_members" not in stack.memo:
        stack.memo["federated_members"] = federated_members(stack.resources)
    members = stack.memo["federated_members"] | set(ctx.federation_members)
    if members and member not in members and common_name.startswith(KARMADA_AGENT_USER_PREFIX):
        yield Violation(f"{where}: {member!r} is not a member the environment federates ({sorted(members)})")
    twins = [
        o.name for o in stack.of_type(CERT_REQUEST) if o is not r and get(_subject(o), "commonName") == common_name
    ]
    if twins:
        yield Violation(f"{where}: {common_name} is also issued by {twins}: two agents would share one identity")
    for key in stack.sources(r, "privateKeyPem"):
        problem = _key_problem(key) if key.type == PRIVATE_KEY else None
        if problem:
            yield Violation(f"{where}: key {key.name} is {problem}")
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
        if hours is None or hours > KARMADA_AGENT_VALIDITY_HOURS:
            yield Violation(
                f"{where}: certificate {cert.name} is valid {hours} hours, over the {KARMADA_AGENT_VALIDITY_HOURS} "
                "register asks for"
            )


def _cached_agent_requests(stack: Stack) -> set[str]:
    if "agent_requests" not in stack.memo:
        stack.memo["agent_requests"] = agent_requests(stack)
    return stack.memo["agent_requests"]


def _agent_subjects(binding: Resource) -> list[tuple[str, str]]:
    found = []
    for s in as_list(peek(binding.props, "subjects")):
        if not isinstance(s, dict):
            continue
        name = str(s.get("name", ""))
        if (s.get("kind") == "User" and name.startswith(KARMADA_AGENT_USER_PREFIX)) or name == KARMADA_AGENT_GROUP:
            found.append((str(s.get("kind")), name))
    return found


def is_rbac_binding(r: Resource) -> bool:
    """A Kubernetes RoleBinding or ClusterRoleBinding: the subject of the rules that check who a role reaches."""
    return r.is_kubernetes and r.api_group == RBAC_GROUP and r.kind.endswith("RoleBinding")


def bound_rules(binding: Resource, ctx: Context) -> tuple[str, list[dict] | None]:
    """(what the binding grants, its rules): a role of the stack, or one the API server defines itself; None when
    the role is neither (what it grants cannot be known)."""
    ref = peek(binding.props, "roleRef")
    ref = ref if isinstance(ref, dict) else {}
    kind = ref.get("kind")
    for r in ctx.require_stack().kubernetes(kind, RBAC_GROUP) if isinstance(kind, str) else ():
        scoped = r.kind == "ClusterRole" or r.namespace == binding.namespace
        if r.cluster == binding.cluster and r.k8s_name == ref.get("name") and scoped:
            return r.label, [x for x in as_list(peek(r.props, "rules")) if isinstance(x, dict)]
    name = str(ref.get("name", ""))
    if ref.get("kind") == "ClusterRole" and name in PUBLIC_DISCOVERY_ROLES:
        return f"the built-in ClusterRole {name}", []  # every authenticated user holds it already
    if ref.get("kind") == "ClusterRole" and name in BUILTIN_CLUSTER_ROLES:
        return f"the built-in ClusterRole {name}", BUILTIN_CLUSTER_ROLES[name]
    if ref.get("kind") == "Role" and (str(binding.namespace), name) in BUILTIN_ROLES:
        return f"the built-in Role {binding.namespace}/{name}", BUILTIN_ROLES[str(binding.namespace), name]
    return f"{ref.get('kind')} {name}", None


def _beyond(rule_: dict, member: str, namespace: str) -> list[str]:
    """What a rule grants a member's agent beyond what register gives it: `verb group/resource` strings."""
    groups = [str(g) for g in as_list(rule_.get("apiGroups"))] or [""]
    resources = [str(v).lower() for v in as_list(rule_.get("resources"))]
    verbs = {str(v).strip().lower() for v in as_list(rule_.get("verbs"))}
    names = {str(n) for n in as_list(rule_.get("resourceNames"))}
    own = {member, f"{member}-impersonator"}
    found = []
    for group in groups:
        for resource in resources:
            named, unnamed = KARMADA_AGENT_GRANTS.get((group, resource), (frozenset(), frozenset()))
            allowed = named | unnamed if names and names <= own else unnamed
            if (
                group,
                resource,
            ) in KARMADA_AGENT_WORK_RESOURCES and namespace != KARMADA_EXECUTION_NAMESPACE_PREFIX + member:
                allowed = frozenset()
            found += [f"{verb} {group or 'core'}/{resource}" for verb in sorted(verbs - allowed)]
    return found


@rule(
    name="karmada-agent-rbac-scoped",
    description="A member's karmada-agent may do in Karmada only what `karmadactl register` grants it (v1.18.2), on "
    "its own objects: bound to its own user, never to the system:karmada:agents group; its Cluster, cluster status "
    "and Secrets only by resourceNames of that member; Works only in karmada-es-<member>; nothing else (no "
    "clusters/proxy, no propagation or override policies, no CSR approval, signing, escalate, bind or impersonate); "
    "a role the stack does not define and the API server does not build in cannot be checked, so is refused.",
    severity="critical",
    remediation="bind each member's roles to User system:karmada:agent:<member> only: the rules of "
    "components/federation/member.py agent_rules, with resourceNames [<member>] (and <member>-impersonator for "
    "Secrets), and Works through a RoleBinding in karmada-es-<member>",
    applies_to=("RoleBinding", "ClusterRoleBinding"),
    subject=is_rbac_binding,
    scope="stack",
)
def karmada_agent_rbac_scoped(r: Resource, ctx: Context) -> Iterator[Violation]:
    subjects = _agent_subjects(r)
    if not subjects:
        return
    role, rules = bound_rules(r, ctx)
    for kind, name in subjects:
        if kind != "User":
            yield Violation(f"{r.label} binds the {kind} {name}: every member's agent gets what one needs")
            continue
        member = name.removeprefix(KARMADA_AGENT_USER_PREFIX)
        if rules is None:
            yield Violation(f"{r.label} gives {member}'s agent {role}, which this stack does not define: its rules "
                            "cannot be checked")  # fmt: skip
            continue
        namespace = r.namespace if r.kind == "RoleBinding" else ""
        for i, x in enumerate(rules):
            beyond = _beyond(x, member, namespace)
            if beyond:
                yield Violation(f"{r.label}: {role} rules[{i}] lets {member}'s agent {', '.join(beyond[:6])}, beyond "
                                "what register grants it on its own objects")  # fmt: skip


RULES = [karmada_overrides_apply, karmada_agent_identity, karmada_agent_rbac_scoped]
