"""Karmada's checks: `member-joined`, each pull member registered by its own karmada-agent (the chart's agent,
with the certificate and kubeconfig the program renders) in the wave where it can and the rollout waits for it
(the host in its own wave, every other member in the global one), each push member reported Ready by Karmada's
own controllers once the global stack names it (karmada_push.py gives them its live credentials); `propagated`, each
federated object on each member it is placed on, with that member's OverridePolicy applied."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from components.config.stacks import region_stack_name
from components.federation.placement import member_regions
from components.k8s.names import cluster_name
from tools.rehearsal.kube import ApiError, is_ready
from tools.rehearsal.report import Check

if TYPE_CHECKING:
    from components.domain.waves import Wave
    from tools.rehearsal.runner import Rehearsal, Target

JOIN_SECONDS = 60.0
PROPAGATE_SECONDS = 60.0
CLUSTERS = ("cluster.karmada.io/v1alpha1", "Cluster")
AGENT_NAMESPACE = "karmada-system"


def _karmada(rehearsal: Rehearsal) -> tuple[str | None, Target | None]:
    provider = next(
        (
            r.name
            for r in rehearsal.plan.resources
            if r.type == "pulumi:providers:kubernetes" and r.name.endswith("-karmada")
        ),
        None,
    )
    if provider is None:
        return None, None
    return provider, rehearsal.targets.get(provider) or rehearsal.provider_target(provider)


def _agent_state(rehearsal: Rehearsal, member: str) -> str:
    """What the member's agent pods show: restarts and their last line (a 403 names the RBAC it lacks)."""
    target = rehearsal.targets.get(member)
    if target is None:
        return "the member cluster is not up"
    try:
        pods = [p for p in target.kube.list("v1", "Pod", AGENT_NAMESPACE) if "agent" in p["metadata"]["name"]]
    except ApiError as exc:
        return str(exc)
    if not pods:
        return "no karmada-agent pod in karmada-system"
    states = []
    for pod in pods[:2]:
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            waiting = (status.get("state") or {}).get("waiting") or {}
            states.append(
                f"pod {pod['metadata']['name']}: {waiting.get('reason') or next(iter(status.get('state') or {}), '?')}, "
                f"{status.get('restartCount', 0)} restarts{': ' + waiting['message'] if waiting.get('message') else ''}"
            )
    return "; ".join(states) or "agent pods not started"


def joining(rehearsal: Rehearsal, wave: Wave) -> list[tuple[Any, str]]:
    """(region, stack) of the members that join Karmada in this wave. A pull member's agent can register once
    its RBAC is in Karmada and the API lets it in (KARMADA_AGENT_STARTS): the host's stack grants that to the
    host in the host's wave, the global stack to every other member in the last wave
    (components/federation/member.py). A push member joins when the global stack creates its Cluster and Secret,
    which Karmada's controllers dial it with (KARMADA_PUSH_MEMBER_READY). The rollout's gates wait for each there
    (tools/rollout/gates.py)."""
    env, env_name = rehearsal.env, rehearsal.env_name
    stacks = {rehearsal.slices[name].kind: name for name in wave.stacks}
    if "environment" in stacks:  # one stack: every member in its one wave
        return [(region, stacks["environment"]) for region in member_regions(env)]
    if env.federation.member_mode == "push":  # the control plane dials every member once the global stack names it
        return [(region, stacks["global"]) for region in member_regions(env)] if "global" in stacks else []
    found = []
    for region in member_regions(env):
        own = region_stack_name(env_name, region.name)
        if region.name == env.federation.host and own in wave.stacks:
            found.append((region, own))
        elif region.name != env.federation.host and "global" in stacks:
            found.append((region, stacks["global"]))
    return found


def check_members(rehearsal: Rehearsal, wave: Wave) -> None:
    """Every member that joins in this wave (`joining`): its Cluster Ready in Karmada within JOIN_SECONDS, in the
    federation's mode (a pull member registered by its agent, a push member reported by the control plane)."""
    env, env_name = rehearsal.env, rehearsal.env_name
    if not env.federation.enabled:
        return
    mode = "Push" if env.federation.member_mode == "push" else "Pull"
    for region, stack in joining(rehearsal, wave):
        member = cluster_name(env_name, region)
        name = f"member {member}"
        dialler = "karmada-agent" if mode == "Pull" else "karmada-controller-manager"  # what makes it Ready
        if not rehearsal.has_binary(dialler):
            rehearsal.check(
                Check(
                    name,
                    "member-joined",
                    False,
                    f"{dialler} is not built: run `make rehearsal-tools`",
                    wave.name,
                    stack,
                    cluster=member,
                )
            )
            continue
        provider, karmada = _karmada(rehearsal)
        if karmada is None:
            rehearsal.check(
                Check(
                    name,
                    "member-joined",
                    False,
                    f"the Karmada API ({provider}) does not answer",
                    wave.name,
                    stack,
                    cluster=member,
                )
            )
            continue
        deadline = time.monotonic() + JOIN_SECONDS
        cluster = None
        while time.monotonic() < deadline:
            try:
                cluster = karmada.kube.get(*CLUSTERS, member)
            except ApiError:
                cluster = None
            if is_ready(cluster):
                break
            time.sleep(2)
        if is_ready(cluster):
            synced = ((cluster or {}).get("spec") or {}).get("syncMode")
            how = "registered by its agent" if mode == "Pull" else "reported by Karmada's cluster-status controller"
            rehearsal.check(
                Check(
                    name,
                    "member-joined",
                    synced == mode,
                    f"Cluster {member} Ready in Karmada (syncMode {synced}), {how}",
                    wave.name,
                    stack,
                    cluster=member,
                    object=f"Cluster {member}",
                )
            )
            continue
        seen = "no Cluster object" if cluster is None else f"Cluster not Ready ({_conditions(cluster)})"
        why = (
            f"its agent: {_agent_state(rehearsal, member)}"
            if mode == "Pull"
            else f"Karmada's controllers dial {((cluster or {}).get('spec') or {}).get('apiEndpoint')}"
        )
        rehearsal.check(
            Check(
                name,
                "member-joined",
                False,
                f"{seen} after {JOIN_SECONDS:.0f} s; {why}",
                wave.name,
                stack,
                cluster=member,
                object=f"Cluster {member}",
            )
        )


def _conditions(obj: dict[str, Any]) -> str:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return (
        ", ".join(f"{c.get('type')}={c.get('status')} {c.get('reason', '')}".strip() for c in conditions)
        or "no conditions"
    )


def _same(live: Any, wanted: Any) -> bool:
    """Equal, or the same Kubernetes quantity: an override's 2 is served back as "2" once a webhook or the API
    server has normalised the field (resources are int-or-string quantities)."""
    if live == wanted:
        return True
    if isinstance(live, (int, float, str)) and isinstance(wanted, (int, float, str)):
        from kubernetes.utils import parse_quantity  # here: importing the client takes ~0.15 s, wanted only here

        try:
            return parse_quantity(live) == parse_quantity(wanted)
        except ValueError:
            return False
    return False


def _pointer_get(obj: Any, path: str) -> tuple[bool, Any]:
    for raw in path.lstrip("/").split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(obj, list) and key.isdigit() and int(key) < len(obj):
            obj = obj[int(key)]
        elif isinstance(obj, dict) and key in obj:
            obj = obj[key]
        else:
            return False, None
    return True, obj


def check_propagation(rehearsal: Rehearsal, wave: Wave) -> None:
    """Each object a PropagationPolicy of the plan selects, on each member it names, with that member's
    OverridePolicy plaintext operations in effect."""
    provider, karmada = _karmada(rehearsal)
    policies = [
        r
        for r in rehearsal.plan.resources
        if r.type.endswith("policy.karmada.io/v1alpha1:PropagationPolicy")
        and r.urn.split("::", 1)[0].endswith(tuple(wave.stacks))
    ]
    overrides = [
        r.inputs for r in rehearsal.plan.resources if r.type.endswith("policy.karmada.io/v1alpha1:OverridePolicy")
    ]
    for policy in policies:
        spec = policy.inputs.get("spec") or {}
        members = ((spec.get("placement") or {}).get("clusterAffinity") or {}).get("clusterNames") or []
        namespace = policy.inputs["metadata"].get("namespace")
        stack = policy.urn.split("::", 1)[0].removeprefix("urn:pulumi:")
        for selector in spec.get("resourceSelectors") or []:
            kind, api_version, name = selector["kind"], selector["apiVersion"], selector.get("name")
            for member in members:
                check_name = f"{kind} {namespace}/{name} on {member}"
                target = rehearsal.targets.get(member)
                if karmada is None or target is None:
                    why = f"the Karmada API ({provider}) does not answer" if karmada is None else f"{member} is not up"
                    rehearsal.check(Check(check_name, "propagated", False, why, wave.name, stack, cluster=member))
                    continue
                expected = [
                    op
                    for o in overrides
                    if o["metadata"].get("namespace") == namespace
                    for rule in (o.get("spec") or {}).get("overrideRules") or []
                    if member in (((rule.get("targetCluster") or {}).get("clusterNames")) or [member])
                    and any(
                        s.get("name") == name and s.get("kind") == kind
                        for s in (o.get("spec") or {}).get("resourceSelectors") or [{"name": name, "kind": kind}]
                    )
                    for op in ((rule.get("overriders") or {}).get("plaintext") or [])
                ]
                deadline = time.monotonic() + PROPAGATE_SECONDS
                live, wrong = None, ["not there"]
                while time.monotonic() < deadline:
                    try:
                        live = target.kube.get(api_version, kind, name, namespace)
                    except ApiError:
                        live = None
                    if live is not None:
                        wrong = []
                        for op in expected:
                            found, value = _pointer_get(live, op["path"])
                            if op["operator"] == "remove" and found:
                                wrong.append(f"{op['path']} still set")
                            elif op["operator"] != "remove" and (not found or not _same(value, op.get("value"))):
                                wrong.append(f"{op['path']} is {value!r}, the override sets {op.get('value')!r}")
                        if not wrong:
                            break
                    time.sleep(2)
                detail = (
                    f"on {member} with {len(expected)} override operation(s) in effect"
                    if not wrong
                    else f"after {PROPAGATE_SECONDS:.0f} s: {'; '.join(wrong[:3])}{_binding_state(karmada, namespace, name, kind)}"
                )
                rehearsal.check(
                    Check(
                        check_name,
                        "propagated",
                        not wrong,
                        detail,
                        wave.name,
                        stack,
                        cluster=member,
                        object=f"{kind} {namespace}/{name}",
                    )
                )


def _binding_state(karmada: Target, namespace: str, name: str, kind: str) -> str:
    """Where Karmada stands: the ResourceBinding's scheduling and its Works' conditions."""
    try:
        bindings = karmada.kube.list("work.karmada.io/v1alpha2", "ResourceBinding", namespace)
    except ApiError as exc:
        return f" (Karmada: {exc})"
    binding = next(
        (
            b
            for b in bindings
            if (b.get("spec") or {}).get("resource", {}).get("name") == name
            and b["spec"]["resource"].get("kind") == kind
        ),
        None,
    )
    if binding is None:
        return " (Karmada: no ResourceBinding: the policy did not select it)"
    clusters = [c.get("name") for c in (binding.get("spec") or {}).get("clusters") or []]
    return f" (Karmada: ResourceBinding scheduled to {clusters or 'no cluster'}; {_conditions(binding)})"
