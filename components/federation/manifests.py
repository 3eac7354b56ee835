"""Karmada objects of a federation as plain manifests: pure functions, one place for their shape.

- `propagation_policy`: which members run a federated model (each its own copy, in its placement's replica
  range), scheduled only once every one of them serves the kind, with cluster and application failover;
- `override_policy`: what one member changes in the model's template (storage URI, pool selector,
  whatever else its own rendering differs in, image registry mirror);
- `member_taint_policies`: NoExecute taints on members that are not ready or unreachable, which the
  propagation policies tolerate for a while before Karmada evicts replicas to the other members.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from components.config.karmada import FailoverSpec
from components.federation.placement import MemberShare

POLICY_API = "policy.karmada.io/v1alpha1"
CLUSTER_API = "cluster.karmada.io/v1alpha1"
ISVC_API = "serving.kserve.io/v1beta1"
ISVC_KIND = "InferenceService"

# Taints Karmada's cluster controller sets with effect NoSchedule when a member's Ready condition is
# False / Unknown; `member_taint_policies` adds the NoExecute twins that trigger eviction.
NOT_READY_TAINT = "cluster.karmada.io/not-ready"
UNREACHABLE_TAINT = "cluster.karmada.io/unreachable"

# What binds an InferenceService to a region (KServe v1beta1 API): where it reads weights, which pool
# it runs on, and the replica range its placement (and the member's KEDA ScaledObject) gives it.
STORAGE_URI_PATH = "/spec/predictor/model/storageUri"
NODE_SELECTOR_PATH = "/spec/predictor/nodeSelector"
REPLICA_PATHS = ("/spec/predictor/minReplicas", "/spec/predictor/maxReplicas")
BOUND_PATHS = (STORAGE_URI_PATH, NODE_SELECTOR_PATH, *REPLICA_PATHS)


def federated_template(rendered: dict[str, Any], min_replicas: int, max_replicas: int) -> dict[str, Any]:
    """The InferenceService created in Karmada: a member's rendering with the federation's replica range."""
    template = copy.deepcopy(rendered)
    template["spec"]["predictor"].update(minReplicas=min_replicas, maxReplicas=max_replicas)
    return template


def propagation_policy(
    name: str, namespace: str, shares: list[MemberShare], failover: FailoverSpec, overrides: list[str]
) -> dict[str, Any]:
    """Every member runs its own copy of the model (Duplicated: its OverridePolicy sets its placement's replica
    range), and the binding is scheduled only with all of them (a cluster spread of exactly the members).

    Karmada v1.18.2's scheduler leaves out a member whose Cluster status does not list the kind yet (APIEnablement,
    right after the member joins) and never reschedules a Divided binding for it later, and it ignores spread
    constraints under static weights (KARMADA_SCHEDULES_ONLY_MEMBERS_SERVING_THE_KIND); a Duplicated binding with
    minGroups = its members fails to schedule until each member serves the kind, and is retried.
    The PodDisruptionBudget of the model follows as a dependency (propagateDeps and the interpreter's
    GetDependencies), and the policy waits for the members' OverridePolicies named in `overrides`
    (dependentOverrides) so that no member ever receives the un-overridden template.
    """
    clusters = [s.cluster for s in shares]
    tolerations = [
        {
            "key": key,
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": failover.cluster_toleration_seconds,
        }
        for key in (NOT_READY_TAINT, UNREACHABLE_TAINT)
    ]
    return {
        "apiVersion": POLICY_API,
        "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "resourceSelectors": [{"apiVersion": ISVC_API, "kind": ISVC_KIND, "name": name}],
            "propagateDeps": True,
            "conflictResolution": "Abort",  # never take over an InferenceService a member already has
            "dependentOverrides": overrides,
            "placement": {
                "clusterAffinity": {"clusterNames": clusters},
                "clusterTolerations": tolerations,
                "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
                "spreadConstraints": [
                    {"spreadByField": "cluster", "minGroups": len(clusters), "maxGroups": len(clusters)}
                ],
            },
            "failover": {
                "cluster": {"purgeMode": "Gracefully"},
                "application": {
                    "decisionConditions": {"tolerationSeconds": failover.application_toleration_seconds},
                    "purgeMode": "Gracefully",
                    "gracePeriodSeconds": failover.grace_period_seconds,
                },
            },
        },
    }


def override_policy_name(model: str, share: MemberShare) -> str:
    return f"{model}-{share.region.name}"


def override_policy(
    template: dict[str, Any], member_render: dict[str, Any], share: MemberShare, registry_mirror: str | None = None
) -> dict[str, Any] | None:
    """The member's differences from the template, or None when it has none.

    What binds the model to the region (storage URI, pool selector, replica range) is stated for every
    member; anything else the member's own rendering differs in (GPU resources, engine flags, sizing) is
    patched field by field: each member runs within its placement's range. With a registry mirror, the member's
    images are rewritten by an imageOverrider, which Karmada applies before the plaintext patches: a plaintext patch
    of the same image would undo it, so the images must then be the template's.
    """
    plaintext = []
    for path in BOUND_PATHS:
        value, in_template = _resolve(member_render, path), _resolve(template, path) is not None
        if value is not None:
            plaintext.append({"operator": "replace" if in_template else "add", "path": path, "value": value})
        elif in_template:  # e.g. a member without the cache streams from its bucket: no storageUri
            plaintext.append({"operator": "remove", "path": path})
    images = list(image_paths(member_render)) if registry_mirror else []
    for path in images:
        if _resolve(template, path) != _resolve(member_render, path):
            raise ValueError(
                f"{share.cluster}: image at {path} differs from the template's; with a registry mirror the "
                "rendered images must not depend on the region"
            )
    skip = frozenset((*BOUND_PATHS, *images))
    plaintext += json_patch(template, member_render, skip=skip)
    overriders: dict[str, Any] = {}
    if images:
        overriders["imageOverrider"] = [
            {"component": "Registry", "operator": "replace", "value": registry_mirror, "predicate": {"path": path}}
            for path in images
        ]
    if plaintext:
        overriders["plaintext"] = plaintext
    if not overriders:
        return None
    name = template["metadata"]["name"]
    return {
        "apiVersion": POLICY_API,
        "kind": "OverridePolicy",
        "metadata": {"name": override_policy_name(name, share), "namespace": template["metadata"]["namespace"]},
        "spec": {
            "resourceSelectors": [{"apiVersion": template["apiVersion"], "kind": template["kind"], "name": name}],
            "overrideRules": [{"targetCluster": {"clusterNames": [share.cluster]}, "overriders": overriders}],
        },
    }


def member_taint_policies(clusters: list[str]) -> list[dict[str, Any]]:
    """NoExecute taints while a member's Ready condition is False (not ready) or Unknown (unreachable)."""

    def policy(name: str, key: str, status: str) -> dict[str, Any]:
        ready = {"conditionType": "Ready", "statusValues": [status]}
        return {
            "apiVersion": POLICY_API,
            "kind": "ClusterTaintPolicy",
            "metadata": {"name": name},
            "spec": {
                "targetClusters": {"clusterNames": clusters},
                "addOnConditions": [{**ready, "operator": "In"}],
                "removeOnConditions": [{**ready, "operator": "NotIn"}],
                "taints": [{"key": key, "effect": "NoExecute"}],
            },
        }

    return [
        policy("member-not-ready", NOT_READY_TAINT, "False"),
        policy("member-unreachable", UNREACHABLE_TAINT, "Unknown"),
    ]


def json_patch(
    base: Any, target: Any, path: tuple[str | int, ...] = (), skip: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """Karmada plaintext overriders (JSON patch operations) turning `base` into `target`.

    Objects are compared key by key; lists and scalars that differ are replaced whole. Paths in
    `skip` (JSON pointers) are left as they are.
    """
    pointer = _pointer(path)
    if pointer in skip:
        return []
    if isinstance(base, dict) and isinstance(target, dict):
        ops = [
            {"operator": "remove", "path": _pointer((*path, k))}
            for k in base
            if k not in target and _pointer((*path, k)) not in skip
        ]
        for key, value in target.items():
            sub = (*path, key)
            if key not in base:
                if _pointer(sub) not in skip:
                    ops.append({"operator": "add", "path": _pointer(sub), "value": value})
            else:
                ops += json_patch(base[key], value, sub, skip)
        return ops
    return [] if base == target else [{"operator": "replace", "path": pointer, "value": target}]


def image_paths(obj: Any, path: tuple[str | int, ...] = ()) -> Iterator[str]:
    """JSON pointers of every container `image` in an object."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key == "image" and isinstance(value, str):
                yield _pointer((*path, key))
            else:
                yield from image_paths(value, (*path, key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from image_paths(value, (*path, i))


def _pointer(parts: tuple[str | int, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _resolve(obj: Any, pointer: str) -> Any:
    for token in pointer.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(obj, dict):
            obj = obj.get(key)
        elif isinstance(obj, list) and key.isdigit() and int(key) < len(obj):
            obj = obj[int(key)]
        else:
            return None
    return obj
