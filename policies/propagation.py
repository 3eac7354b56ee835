"""What a Karmada control plane makes run: each propagated template as each member cluster gets it.

A template in the control plane runs nowhere itself. Its PropagationPolicy places it on member
clusters, and the OverridePolicies selecting it patch each member's copy (plaintext overriders are
RFC 6902 operations, applied here with `jsonpatch`); stack rules judge those copies. A patch that
does not apply leaves the member without the object: the copy carries the error for
karmada-overrides-apply.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import replace

import jsonpatch

from policies.model import Resource, as_list, peek

KARMADA_POLICY_GROUP = "policy.karmada.io"


def _is(r: Resource, kind: str) -> bool:
    return r.is_kubernetes and r.kind == kind and r.api_group == KARMADA_POLICY_GROUP


def _selects(selector: object, r: Resource) -> bool:
    if not isinstance(selector, dict):
        return False
    api = selector.get("apiVersion")
    return (
        selector.get("kind") == r.kind
        and (api is None or api == r.props.get("apiVersion"))
        and selector.get("name") in (None, r.k8s_name)
        and selector.get("namespace") in (None, r.namespace)
    )


def _targets(rule: dict, member: str) -> bool:
    names = peek(rule, "targetCluster", "clusterNames")
    return rule.get("targetCluster") is None or member in as_list(names)


def _overridden(template: Resource, member: str, overrides: list[Resource]) -> tuple[dict, str]:
    """The member's copy of the template's inputs, and why an override did not apply ('' when all did)."""
    props = copy.deepcopy(template.props)
    for policy in overrides:
        if not any(_selects(s, template) for s in as_list(peek(policy.props, "spec", "resourceSelectors"))):
            continue
        for rule in as_list(peek(policy.props, "spec", "overrideRules")):
            if not isinstance(rule, dict) or not _targets(rule, member):
                continue
            ops = [
                {"op": op.get("operator"), "path": op.get("path"), **({"value": op["value"]} if "value" in op else {})}
                for op in as_list(peek(rule, "overriders", "plaintext"))
                if isinstance(op, dict)
            ]
            try:
                props = jsonpatch.apply_patch(props, ops)
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
                return props, f"OverridePolicy {policy.namespace}/{policy.k8s_name}: {exc}"
    return props, ""


def member_copies(resources: Iterable[Resource]) -> list[Resource]:
    """The resources as they run: each propagated template replaced by its members' overridden copies
    (with the PodDisruptionBudget of the same name when the policy propagates dependencies)."""
    resources = list(resources)
    placements = [r for r in resources if _is(r, "PropagationPolicy")]
    if not placements:
        return resources
    overrides = [r for r in resources if _is(r, "OverridePolicy")]
    replaced: dict[int, list[Resource]] = {}
    for placement in placements:
        members = [m for m in as_list(peek(placement.props, "spec", "placement", "clusterAffinity", "clusterNames"))]
        selectors = as_list(peek(placement.props, "spec", "resourceSelectors"))
        templates = [
            r
            for r in resources
            if r.cluster == placement.cluster
            and r.namespace == placement.namespace
            and any(_selects(s, r) for s in selectors)
        ]
        if peek(placement.props, "spec", "propagateDeps") is True:
            names = {t.k8s_name for t in templates}
            templates += [
                r
                for r in resources
                if r.cluster == placement.cluster
                and r.namespace == placement.namespace
                and r.kind == "PodDisruptionBudget"
                and r.k8s_name in names
            ]
        for template in templates:
            mine = [o for o in overrides if o.cluster == template.cluster and o.namespace == template.namespace]
            copies = []
            for member in members:
                if not isinstance(member, str) or template.provider is None:
                    continue
                props, error = _overridden(template, member, mine)
                provider = f"{template.provider.rsplit('::', 1)[0]}::{member}"
                copies.append(
                    replace(template, props=props, provider=provider, propagated=member, override_error=error)
                )
            replaced[id(template)] = copies
    out: list[Resource] = []
    for r in resources:
        out.extend(replaced.get(id(r), [r]))
    return out
