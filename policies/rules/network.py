"""Network exposure judged by address-space coverage (platform_catalog/address_space.py, which config
validation shares), not by prefix length."""

from __future__ import annotations

from collections.abc import Iterator

from platform_catalog.address_space import covers_internet
from policies.framework import CannotCheck, Context, Violation, rule
from policies.model import Resource, Stack, as_list, get, peek, truthy
from policies.pods import WORKLOAD_KINDS, is_workload, workloads
from policies.rules.gateway import internal_load_balancer, is_public

SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
DEFAULT_SECURITY_GROUP = "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"
SG_INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
GCP_FIREWALL = "gcp:compute/firewall:Firewall"
SERVICE = "kubernetes:core/v1:Service"

SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"


def _sg_rule_sources(entry: dict) -> list:
    return [
        *as_list(get(entry, "cidrBlocks")),
        *as_list(get(entry, "ipv6CidrBlocks")),
        get(entry, "cidrIpv4"),
        get(entry, "cidrIpv6"),
    ]


def _attached_rules(group: Resource, stack: Stack) -> list[Resource]:
    rules = stack.attached(group, (SG_INGRESS_RULE,), "securityGroupId", name_keys=("name",))
    rules += [
        r
        for r in stack.attached(group, (SG_RULE,), "securityGroupId", name_keys=("name",))
        if str(get(r.props, "type")).lower() == "ingress"
    ]
    return rules


@rule(
    name="network-no-internet-ingress",
    description="No security group (the VPC default one included), security-group rule or GCP firewall admits "
    "ingress from sources that together cover the internet, on any port.",
    severity="critical",
    remediation="list the VPC/office CIDRs or reference a security group; public traffic enters only through "
    "the inference gateway's load balancer",
    applies_to=(SECURITY_GROUP, DEFAULT_SECURITY_GROUP, SG_INGRESS_RULE, SG_RULE, GCP_FIREWALL),
    scope="stack",
)
def network_no_internet_ingress(r: Resource, ctx: Context) -> Iterator[Violation]:
    if r.type == GCP_FIREWALL:
        direction = str(get(r.props, "direction") or "INGRESS").upper()
        if direction != "INGRESS" or truthy(get(r.props, "disabled")) or not as_list(get(r.props, "allows")):
            return
        if covers_internet(as_list(get(r.props, "sourceRanges"))):
            yield Violation(f"firewall {r.name}: sourceRanges {get(r.props, 'sourceRanges')} cover the internet")
        return
    if r.type in (SG_INGRESS_RULE, SG_RULE):
        if r.type == SG_RULE and str(get(r.props, "type")).lower() != "ingress":
            return
        if covers_internet(_sg_rule_sources(r.props)):
            yield Violation(f"security group rule {r.name} admits the internet")
        return
    inline = [e for e in as_list(get(r.props, "ingress")) if isinstance(e, dict)]
    for i, entry in enumerate(inline):
        if covers_internet(_sg_rule_sources(entry)):
            yield Violation(f"security group {r.name} ingress[{i}] admits the internet")
    attached = _attached_rules(r, ctx.require_stack())
    sources = [s for e in inline for s in _sg_rule_sources(e)] + [
        s for a in attached for s in _sg_rule_sources(a.props)
    ]
    each = [_sg_rule_sources(e) for e in inline] + [_sg_rule_sources(a.props) for a in attached]
    if covers_internet(sources) and not any(covers_internet(s) for s in each):
        yield Violation(f"security group {r.name}: its ingress rules together admit the whole internet")


def _source_ranges(r: Resource) -> list:
    ranges = as_list(get(r.props, "spec", "loadBalancerSourceRanges"))
    annotated = r.annotations.get(SOURCE_RANGES_ANNOTATION)
    return ranges + (str(annotated).split(",") if annotated else [])


def _is_service(r: Resource) -> bool:
    """Services, and ServicePatches judged as the Service they produce (policies/model.py `patched`)."""
    return r.is_kubernetes and r.kind == "Service" and r.api_group == ""


@rule(
    name="k8s-service-not-exposed",
    description="LoadBalancer and NodePort Services (outside the inference gateway, whose Envoy service is the "
    "platform's one public entry) are internal or list loadBalancerSourceRanges that do not cover the internet; no "
    "Service (or patch of one) sets externalIPs.",
    severity="high",
    remediation="use a ClusterIP Service behind the gateway, mark the load balancer internal, or set "
    "loadBalancerSourceRanges to the callers' CIDRs",
    applies_to=("Service", "ServicePatch"),
    subject=_is_service,
    scope="stack",
)
def k8s_service_not_exposed(r: Resource, ctx: Context) -> Iterator[Violation]:
    external = as_list(get(r.props, "spec", "externalIPs"))
    if external:
        yield Violation(
            f"{r.label} sets externalIPs {external}: every node forwards traffic for those addresses to it, "
            "whoever sends it (and whoever may set them intercepts them, CVE-2020-8554)"
        )
    if r.type.endswith("Patch") and r.patch_of is None:  # the Service is in another stack: judge what it sets
        if covers_internet(_source_ranges(r)):
            yield Violation(f"{r.label}: the patch sets loadBalancerSourceRanges {_source_ranges(r)}, the internet")
        if str(get(r.props, "spec", "type") or "").lower() != "loadbalancer":
            return
    kind = str(get(r.props, "spec", "type") or "ClusterIP")
    if kind.lower() == "nodeport":
        yield Violation(f"{r.label} is a NodePort Service: every node opens its ports to whoever reaches the nodes")
    if kind.lower() != "loadbalancer" or internal_load_balancer(r.annotations):
        return
    ranges = _source_ranges(r)
    if not ranges:
        yield Violation(f"{r.label} is an internet-facing LoadBalancer without loadBalancerSourceRanges")
    elif covers_internet(ranges):
        yield Violation(f"{r.label}: loadBalancerSourceRanges {ranges} cover the internet")


@rule(
    name="k8s-no-host-port",
    description="No container binds a hostPort outside the privileged namespaces (it bypasses Services and "
    "NetworkPolicies on the node's address).",
    severity="high",
    remediation="remove hostPort and expose the port through a ClusterIP Service",
    applies_to=WORKLOAD_KINDS,
    subject=is_workload,
    scope="stack",
    config=("privilegedNamespaces",),
)
def k8s_no_host_port(r: Resource, ctx: Context) -> Iterator[Violation]:
    for w in workloads(r, ctx.require_stack()):
        if w.namespace in ctx.privileged_namespaces:
            continue
        for c in w.all_containers():
            for port in as_list(c.get("ports")):
                if isinstance(port, dict) and port.get("hostPort") not in (None, 0):
                    yield Violation(f"{w.label} container {c.get('name')} binds hostPort {port.get('hostPort')}")


def _is_gateway(r: Resource) -> bool:
    return r.is_kubernetes and r.kind == "Gateway" and r.api_group == "gateway.networking.k8s.io"


@rule(
    name="gateway-no-plain-http",
    description="A public Gateway serves only HTTPS/TLS listeners: no plain-HTTP (or TCP/UDP) listener faces the "
    "internet.",
    severity="high",
    remediation="use protocol HTTPS with tls.certificateRefs; redirect port 80 only through an HTTPS-only "
    "HTTPRoute filter on an internal Gateway",
    applies_to=("Gateway",),
    subject=_is_gateway,
    scope="stack",
)
def gateway_no_plain_http(r: Resource, ctx: Context) -> Iterator[Violation]:
    if not is_public(r, ctx.require_stack()):
        return
    for listener in as_list(peek(r.props, "spec", "listeners")):
        if isinstance(listener, dict) and str(listener.get("protocol", "")).upper() not in ("HTTPS", "TLS"):
            yield Violation(
                f"{r.label} listener {listener.get('name')} serves {listener.get('protocol')} on port "
                f"{listener.get('port')} to the internet"
            )


def _is_network_policy(r: Resource) -> bool:
    return r.is_kubernetes and r.kind == "NetworkPolicy" and r.api_group == "networking.k8s.io"


# Labels Envoy Gateway gives a Gateway's proxy pods (envoyproxy/gateway@v1.9.0:
# internal/infrastructure/kubernetes/proxy/resource.go envoyLabels, internal/gatewayapi/resource.go
# OwningGatewayNameLabel): the public entry, the one set of pods any client may reach.
GATEWAY_PROXY_LABEL = "gateway.envoyproxy.io/owning-gateway-name"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # every namespace has it (NamespaceDefaultLabelName)


def _matches_everything(selector: object) -> bool:
    """A label selector any namespace (or pod) can satisfy: {}, or only requirements that hold for everything but a
    few named values: `NotIn`, `DoesNotExist` (whoever creates a namespace picks its labels), `Exists` on a label
    every namespace carries (apimachinery@v0.33.13 pkg/labels/selector.go Requirement.Matches)."""
    if not isinstance(selector, dict):
        return False
    if any(v not in (None, {}) for k, v in selector.items() if k not in ("matchLabels", "matchExpressions")):
        return False
    expressions = [e for e in as_list(selector.get("matchExpressions")) if isinstance(e, dict)]
    universal = all(
        e.get("operator") in ("NotIn", "DoesNotExist")
        or (e.get("operator") == "Exists" and e.get("key") == NAMESPACE_NAME_LABEL)
        for e in expressions
    )
    return not selector.get("matchLabels") and universal


def any_peer(peer: object) -> str | None:
    """Why an ingress peer admits anyone, or None: an ipBlock covering the internet, or a namespaceSelector that
    matches every namespace (whatever its podSelector: pod labels are whatever a pod's author writes)."""
    if not isinstance(peer, dict):
        return None
    cidr = get(peer, "ipBlock", "cidr")
    if cidr is not None and covers_internet([cidr]):
        return f"ipBlock {cidr} (the internet)"
    if "namespaceSelector" in peer and _matches_everything(peer.get("namespaceSelector")):
        pods = "" if _matches_everything(peer.get("podSelector", {})) else " (any pod that carries the labels)"
        return f"namespaceSelector matching every namespace{pods}"
    return None


def _selects_gateway_proxies(r: Resource) -> bool:
    labels = get(r.props, "spec", "podSelector", "matchLabels") or {}
    return bool(labels.get(GATEWAY_PROXY_LABEL))


@rule(
    name="k8s-netpol-not-allow-all",
    description="No NetworkPolicy admits anyone: every ingress rule names its sources, and no source is an ipBlock "
    "covering the internet (alone, with the other blocks of its rule, or with those of the policy's other rules) or a "
    "namespaceSelector any namespace can satisfy ({}, NotIn, DoesNotExist, or Exists on kubernetes.io/metadata.name), "
    "on any port; only a Gateway's proxy pods (the public entry) may take the internet, on listed ports.",
    severity="high",
    remediation="list the podSelector/namespaceSelector of the callers (namespaces by kubernetes.io/metadata.name) "
    "and the ports they use",
    applies_to=("NetworkPolicy",),
    subject=_is_network_policy,
)
def k8s_netpol_not_allow_all(r: Resource, ctx: Context) -> Iterator[Violation]:
    entry_point = _selects_gateway_proxies(r)
    spread: list[tuple[int, str]] = []  # (rule, ipBlock) of the rules that admit no internet alone
    for i, entry in enumerate(as_list(get(r.props, "spec", "ingress"))):
        if not isinstance(entry, dict):
            continue
        sources, ports = as_list(entry.get("from")), as_list(entry.get("ports"))
        if not sources and not ports:
            yield Violation(f"{r.label} ingress[{i}] allows every source on every port")
            continue
        if not sources:
            if not entry_point:
                yield Violation(f"{r.label} ingress[{i}] allows every source on ports {ports}")
            continue
        on = f"ports {ports}" if ports else "every port"
        if entry_point and ports:
            continue
        for j, peer in enumerate(sources):
            why = any_peer(peer)
            if why:
                yield Violation(f"{r.label} ingress[{i}].from[{j}] admits anyone: {why}, on {on}")
        blocks = _blocks(sources)
        if len(blocks) > 1 and covers_internet(blocks) and not any(covers_internet([b]) for b in blocks):
            yield Violation(f"{r.label} ingress[{i}] admits the internet ({blocks}) on {on}")
        else:
            spread += [(i, b) for b in blocks]
    # Rules add up: blocks split over several rules admit their union.
    if covers_internet([b for _, b in spread]) and not any(covers_internet([b]) for _, b in spread):
        rules = sorted({i for i, _ in spread})
        yield Violation(f"{r.label} ingress rules {rules} together admit the internet ({[b for _, b in spread]})")


def _blocks(sources: list) -> list:
    return [get(s, "ipBlock", "cidr") for s in sources if isinstance(s, dict) and get(s, "ipBlock", "cidr")]


def _selects(policy: Resource, labels: dict) -> bool:
    selector = get(policy.props, "spec", "podSelector")
    if _matches_everything(selector if selector is not None else {}):
        return True
    from policies.rules.kubernetes import selector_matches

    return selector_matches(selector, labels)


def _isolates_ingress(policy: Resource) -> bool:
    types = as_list(get(policy.props, "spec", "policyTypes"))
    return not types or "Ingress" in types  # unset: Ingress is implied (networking/v1 NetworkPolicySpec)


@rule(
    name="k8s-pods-ingress-isolated",
    description="Every pod the stack runs outside the privileged namespaces (model servers, pickers, Redis, "
    "controllers) is selected by an Ingress NetworkPolicy: a pod no policy selects takes connections from every "
    "pod of the cluster.",
    severity="high",
    remediation="add a default-deny NetworkPolicy (podSelector {}, policyTypes [Ingress]) to the namespace and "
    "policies that admit each pod's callers",
    applies_to=WORKLOAD_KINDS,
    subject=is_workload,
    scope="stack",
    config=("privilegedNamespaces",),
)
def k8s_pods_ingress_isolated(r: Resource, ctx: Context) -> Iterator[Violation]:
    stack = ctx.require_stack()
    for w in workloads(r, stack):
        if w.partial or w.namespace in ctx.privileged_namespaces:
            continue
        if stack.runs_beside_unseen(r):
            yield CannotCheck(
                f"{w.label}: {r.cluster}'s NetworkPolicies are declared in another stack",
                fix="nothing to change here; `make plan` judges the copy with the environment's other stacks",
            )
            continue
        policies = [
            p for p in stack.kubernetes("NetworkPolicy", "networking.k8s.io", r.cluster) if p.namespace == w.namespace
        ]
        if not any(_isolates_ingress(p) and _selects(p, w.labels) for p in policies):
            yield Violation(f"{w.label}: no Ingress NetworkPolicy selects its pods, so every pod may connect")


RULES = [
    network_no_internet_ingress,
    k8s_service_not_exposed,
    k8s_no_host_port,
    gateway_no_plain_http,
    k8s_netpol_not_allow_all,
    k8s_pods_ingress_isolated,
]
