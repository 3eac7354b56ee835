"""What keeps a pod's containers from starting on a real node: a Secret or ConfigMap it needs that does not exist
(catalog fact `kubelet-waits-for-referenced-objects`, components/catalog/upstream.py).

The kubelet (k8s.io/kubernetes v1.33.13) mounts a pod's volumes before it creates its sandbox, and waits while a
`secret`, `configMap` or `projected` volume names an object that does not exist, or an item key that object does not
have (`optional: true` exempts both): the pod stays Pending, its containers waiting in ContainerCreating, with a
FailedMount event. Once the volumes are there, it builds each container's environment as it starts it: an
`envFrom` or `env[].valueFrom` reference to a missing object or key (`optional` exempts it) fails the container
with CreateContainerConfigError. Either way the pod is not Ready. `blocking_reference` finds the first such reference
of a pod, in the order the kubelet meets them: volumes, then init containers, then containers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CONTAINER_CREATING = "ContainerCreating"  # pkg/kubelet/kubelet_pods.go L82: the default waiting reason
CREATE_CONTAINER_CONFIG_ERROR = "CreateContainerConfigError"  # pkg/kubelet/kuberuntime/kuberuntime_container.go L68

# (kind, namespace, name) -> the object's keys (data, and for a ConfigMap binaryData), or None when it does not exist.
Lookup = Callable[[str, str, str], set[str] | None]


@dataclass(frozen=True)
class Blocked:
    """The first reference that keeps a pod from running: which container (None: a volume, so all of them), the
    waiting reason the kubelet reports, what it says, and the missing object."""

    container: str | None
    init: bool
    reason: str
    message: str
    missing: str  # "Secret namespace/name" or "ConfigMap namespace/name"


def _not_found(kind: str, name: str) -> str:
    """The API's NotFound text as the kubelet's secret and configmap managers give it
    (pkg/kubelet/secret/secret_manager.go L155, pkg/kubelet/configmap/configmap_manager.go L154,
    pkg/kubelet/util/manager/watch_based_manager.go L330)."""
    return f'{kind.lower()} "{name}" not found'


def _volume_problem(volume: dict[str, Any], namespace: str, lookup: Lookup) -> tuple[str, str] | None:
    """(the kubelet's error, the missing object) for a volume it cannot set up, else None
    (pkg/volume/secret/secret.go L176-L207, L259-L285; pkg/volume/configmap/configmap.go L180-L211, L263-L292;
    pkg/volume/projected/projected.go L245-L300)."""
    sources: list[tuple[str, dict[str, Any]]] = []
    if "secret" in volume:
        sources.append(("Secret", {**volume["secret"], "name": volume["secret"].get("secretName", "")}))
    elif "configMap" in volume:
        sources.append(("ConfigMap", volume["configMap"]))
    elif "projected" in volume:
        for part in volume["projected"].get("sources") or []:
            if "secret" in part:
                sources.append(("Secret", part["secret"]))
            elif "configMap" in part:
                sources.append(("ConfigMap", part["configMap"]))
    for kind, source in sources:
        name, optional = str(source.get("name", "")), bool(source.get("optional"))
        keys = lookup(kind, namespace, name)
        if keys is None:
            if optional:
                continue
            return _not_found(kind, name), f"{kind} {namespace}/{name}"
        for item in source.get("items") or []:
            if item.get("key") not in keys and not optional:
                what = "secret key" if kind == "Secret" else "config key"
                prefix = "" if kind == "Secret" else "configmap "
                return f"{prefix}references non-existent {what}: {item.get('key')}", f"{kind} {namespace}/{name}"
    return None


def _env_problem(container: dict[str, Any], namespace: str, lookup: Lookup) -> tuple[str, str] | None:
    """(the kubelet's error, the missing object) for a container whose environment it cannot build, else None
    (pkg/kubelet/kubelet_pods.go L750-L800 envFrom, L840-L897 configMapKeyRef and secretKeyRef)."""
    for source in container.get("envFrom") or []:
        for field, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
            ref = source.get(field)
            if ref is None:
                continue
            name = str(ref.get("name", ""))
            if lookup(kind, namespace, name) is None and not ref.get("optional"):
                return _not_found(kind, name), f"{kind} {namespace}/{name}"
    for item in container.get("env") or []:
        value_from = item.get("valueFrom") or {}
        for field, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
            ref = value_from.get(field)
            if ref is None:
                continue
            name, key, optional = str(ref.get("name", "")), ref.get("key"), bool(ref.get("optional"))
            keys = lookup(kind, namespace, name)
            if optional and (keys is None or key not in keys):
                continue
            if keys is None:
                return _not_found(kind, name), f"{kind} {namespace}/{name}"
            if key not in keys:
                return f"couldn't find key {key} in {kind} {namespace}/{name}", f"{kind} {namespace}/{name}"
    return None


def blocking_reference(pod: dict[str, Any], lookup: Lookup) -> Blocked | None:
    """The first missing object or key that keeps `pod` from running, as the kubelet meets it; None when none."""
    namespace, spec = pod["metadata"]["namespace"], pod.get("spec") or {}
    for volume in spec.get("volumes") or []:
        problem = _volume_problem(volume, namespace, lookup)
        if problem is not None:
            # The FailedMount event (pkg/volume/util/operationexecutor/operation_generator.go L482,
            # operation_executor.go L307-L324).
            message = f'MountVolume.SetUp failed for volume "{volume.get("name")}" : {problem[0]}'
            return Blocked(None, False, CONTAINER_CREATING, message, problem[1])
    for init, containers in ((True, spec.get("initContainers") or []), (False, spec.get("containers") or [])):
        for container in containers:
            problem = _env_problem(container, namespace, lookup)
            if problem is not None:
                return Blocked(container.get("name"), init, CREATE_CONTAINER_CONFIG_ERROR, problem[0], problem[1])
    return None
