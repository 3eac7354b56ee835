"""Objects of Kubernetes' built-in API groups, and the core pod fragments inside CRs, checked strictly
against the OpenAPI of a cluster's Kubernetes version (kubernetes-validate's strict schemas: an unknown
field anywhere is an error, where the API server would prune it or reject the object).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

import jsonschema
import referencing
from kubernetes_validate import utils as kv
from packaging.version import Version
from pulumi.runtime.rpc import UNKNOWN

from tools.conformance import apiserver_validator
from tools.plan.engine import SECRET

CORE = "io.k8s.api.core.v1."
# Values the offline plan cannot know: a redacted secret, a preview's unknown output.
_OPAQUE = {SECRET, UNKNOWN}

# Where CRs embed core types. `mixed`: the CRD inlines the core type's fields next to its own (KServe's
# predictor is a PodSpec plus its extension fields); keys no shipped Kubernetes version has in that
# definition are the CRD's own and are checked by its schema, not here.
# Sources: KServe v1beta1 PredictorSpec / ServingRuntimeSpec, Fluid AlluxioRuntime component specs,
# Envoy Gateway KubernetesDeploymentSpec / KubernetesPodSpec / KubernetesContainerSpec.
_FLUID_COMPONENTS = ("master", "worker", "fuse", "jobMaster", "jobWorker")
_ENVOY = ("spec", "provider", "kubernetes", "envoyDeployment")
FRAGMENTS: dict[tuple[str, str], tuple[tuple[tuple[str, ...], str, bool], ...]] = {
    ("serving.kserve.io", "InferenceService"): (
        (("spec", "predictor"), "PodSpec", True),
        (("spec", "predictor", "model"), "Container", True),
        (("spec", "predictor", "workerSpec"), "PodSpec", True),
    ),
    ("serving.kserve.io", "ClusterServingRuntime"): (
        (("spec",), "PodSpec", True),
        (("spec", "workerSpec"), "PodSpec", True),
    ),
    ("serving.kserve.io", "ServingRuntime"): (
        (("spec",), "PodSpec", True),
        (("spec", "workerSpec"), "PodSpec", True),
    ),
    ("data.fluid.io", "AlluxioRuntime"): (
        (("spec", "volumes", "*"), "Volume", False),
        *(
            fragment
            for component in _FLUID_COMPONENTS
            for fragment in (
                (("spec", component, "resources"), "ResourceRequirements", False),
                (("spec", component, "env", "*"), "EnvVar", False),
                (("spec", component, "volumeMounts", "*"), "VolumeMount", False),
            )
        ),
    ),
    ("gateway.envoyproxy.io", "EnvoyProxy"): (
        ((*_ENVOY, "container"), "Container", True),
        ((*_ENVOY, "initContainers", "*"), "Container", False),
        ((*_ENVOY, "pod"), "PodSpec", True),
    ),
}


@dataclass(frozen=True)
class SchemaVersion:
    requested: str
    used: str

    @property
    def note(self) -> str | None:
        """Said out loud when the installed library ships no schema of the cluster's version."""
        if self.used == self.requested:
            return None
        shipped = shipped_versions()
        return (
            f"Kubernetes {self.requested}: kubernetes-validate ships schemas of {shipped[0]} to {shipped[-1]}; "
            f"validated against {self.used}"
        )


def shipped_versions() -> list[str]:
    """Minor versions kubernetes-validate ships schemas for, oldest first."""
    return sorted({kv.major_minor(v) for v in kv.all_versions()}, key=Version)


def schema_version(requested: str) -> SchemaVersion:
    """The newest shipped minor not newer than the cluster's (so the newest for a newer cluster), or the
    oldest shipped for an older one."""
    requested = kv.major_minor(requested.removeprefix("v"))
    shipped = shipped_versions()
    older = [v for v in shipped if Version(v) <= Version(requested)]
    return SchemaVersion(requested=requested, used=older[-1] if older else shipped[0])


def _full_version(minor: str) -> str:
    return next(v for v in kv.all_versions() if kv.major_minor(v) == minor)


def _ignore_required(validator, required, instance, schema):
    return iter(())


_Validator = apiserver_validator(jsonschema.Draft202012Validator)
# A patch (server-side apply) states only the fields it owns: nothing is required.
_PatchValidator = jsonschema.validators.extend(_Validator, {"required": _ignore_required})


class BuiltinSchemas:
    """Strict validators of one Kubernetes version, built once per kind or definition."""

    def __init__(self, *, version: str):
        self.version = schema_version(version)
        self._dir = f"kubernetes-json-schema/v{_full_version(self.version.used)}-local-strict"

    @cached_property
    def _registry(self) -> referencing.Registry:
        definitions = kv.schema_contents(f"{self._dir}/_definitions.json", self.version.used)
        return referencing.Resource.from_contents(definitions) @ referencing.Registry()

    @cached_property
    def definitions(self) -> dict[str, Any]:
        return self._registry.contents("https://kubernetes.io/api/_definitions.json")["$defs"]

    @cache  # noqa: B019 - a handful of instances per session
    def _kind_validator(self, api_version: str, kind: str, patch: bool) -> jsonschema.Validator | None:
        # The library's file naming: rbac.authorization.k8s.io/v1 -> rbac-v1.
        group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
        try:
            schema = kv.schema_contents(f"{self._dir}/{kind.lower()}-{group_version}.json", self.version.used)
        except FileNotFoundError:
            return None
        cls = _PatchValidator if patch else _Validator
        return cls(schema, registry=self._registry)

    @cache  # noqa: B019
    def _definition_validator(self, name: str) -> jsonschema.Validator:
        schema = {"$ref": f"https://kubernetes.io/api/_definitions.json#/$defs/{name}"}
        return _Validator(schema, registry=self._registry)

    def validate(self, obj: dict, *, patch: bool = False) -> list[str]:
        """Problems of one object; raises KeyError when this version serves no such kind."""
        validator = self._kind_validator(obj.get("apiVersion", ""), obj.get("kind", ""), patch)
        if validator is None:
            raise KeyError((obj.get("apiVersion"), obj.get("kind"), self.version.used))
        return _problems(validator, obj)

    def validate_fragment(self, value: Any, definition: str, *, mixed: bool, newest: BuiltinSchemas) -> list[str]:
        """Problems of a core `definition` (e.g. PodSpec) embedded in a CR. A mixed fragment is checked
        without the keys `newest` does not know in that definition (the CRD's own) and without its own
        required fields (the CRD may supply them another way, as KServe's `model` does a container);
        what it nests is checked in full."""
        name = CORE + definition
        if mixed and isinstance(value, dict):
            known = newest.definitions[name].get("properties", {})
            value = {k: v for k, v in value.items() if k in known}
        return _problems(self._definition_validator(name), value, root_required=not mixed)


def _problems(validator: jsonschema.Validator, instance: Any, *, root_required: bool = True) -> list[str]:
    return [
        f"{'.'.join(str(p) for p in err.absolute_path) or '<root>'}: {err.message}"
        for err in sorted(validator.iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path])
        if not (isinstance(err.instance, str) and err.instance in _OPAQUE)
        and (root_required or err.validator != "required" or err.absolute_path)
    ]


def pod_fragments(obj: dict) -> Iterator[tuple[str, Any, str, bool]]:
    """(path, value, core definition, mixed) of every core fragment a CR embeds, per FRAGMENTS."""
    group = obj.get("apiVersion", "").split("/")[0]
    for path, definition, mixed in FRAGMENTS.get((group, obj.get("kind", "")), ()):
        yield from _at(obj, path, (), definition, mixed)


def _at(value: Any, path: tuple[str, ...], seen: tuple[str, ...], definition: str, mixed: bool):
    if not path:
        yield ".".join(seen), value, definition, mixed
        return
    head, *rest = path
    if head == "*":
        for i, item in enumerate(value if isinstance(value, list) else ()):
            yield from _at(item, tuple(rest), (*seen, str(i)), definition, mixed)
    elif isinstance(value, dict) and head in value:
        yield from _at(value[head], tuple(rest), (*seen, head), definition, mixed)
