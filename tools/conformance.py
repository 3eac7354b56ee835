"""Check rendered objects against upstream facts: CRD schemas and chart default values.

The upstream data is the project's vendored subset, `conformance/upstream/` (see tools/vendor_upstream.py).
"""

from __future__ import annotations

import copy
import fnmatch
import json
import re
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from tools.vendor_upstream import VENDORED_DIR, load_manifest

# API groups served by Kubernetes itself: their objects are typed by pulumi_kubernetes, not CRDs.
BUILTIN_GROUPS = {
    "",
    "apps",
    "batch",
    "policy",
    "autoscaling",
    "rbac.authorization.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "networking.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "node.k8s.io",
    "certificates.k8s.io",
    "apiregistration.k8s.io",
}


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: the CRDs are megabytes
_PLACEHOLDER_VERSION = re.compile(r"^v?0\.0\.0($|-)|-(devel|latest)$")


def api_group(api_version: str) -> str:
    return api_version.split("/")[0] if "/" in api_version else ""


def is_custom_resource(obj: dict) -> bool:
    return api_group(obj.get("apiVersion", "")) not in BUILTIN_GROUPS


def _strict(schema: Any) -> Any:
    """OpenAPI v3 (Kubernetes flavour) -> JSON Schema that rejects unknown fields.

    Kubernetes would silently prune an unknown field; for us it is a typo to catch.
    """
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict(v) for k, v in schema.items() if k != "x-kubernetes-validations"}
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if schema.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    if (
        out.get("type") == "object"
        and "properties" in out
        and "additionalProperties" not in out
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def _list_type(validator, list_type, instance, schema):
    """`x-kubernetes-list-type`: the API server (and server-side apply, how Pulumi applies) rejects a
    list `map` with two entries of the same keys, and a `set` with a repeated item. A missing key
    counts as its schema default, as the server defaults before it compares."""
    if not validator.is_type(instance, "array"):
        return
    keys = schema.get("x-kubernetes-list-map-keys") or ()
    item_properties = (schema.get("items") or {}).get("properties") or {}
    seen: set[str] = set()
    for item in instance:
        if list_type == "map" and isinstance(item, dict):
            identity = {key: item.get(key, item_properties.get(key, {}).get("default")) for key in keys}
        elif list_type == "set":
            identity = item
        else:
            continue
        text = json.dumps(identity, sort_keys=True)
        if text in seen:
            yield jsonschema.ValidationError(f"duplicate entries for {'key ' if keys else ''}{text}")
        seen.add(text)


def apiserver_validator(base: type[jsonschema.Validator]) -> type[jsonschema.Validator]:
    """`base` checking what the API server checks beyond JSON Schema: list types, and integers that are
    integers (it decodes an int field from JSON `8080`, not `8080.0`; jsonschema accepts both)."""
    return jsonschema.validators.extend(
        base,
        {"x-kubernetes-list-type": _list_type},
        type_checker=base.TYPE_CHECKER.redefine(
            "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool)
        ),
    )


_CRDValidator = apiserver_validator(jsonschema.Draft7Validator)


class Upstream:
    """Index of the vendored upstream CRDs, chart values and API documents (MANIFEST.json lists them)."""

    def __init__(self, root: Path = VENDORED_DIR):
        self.root = root
        self.manifest = load_manifest(root)

    @cached_property
    def _crd_files(self) -> dict[tuple[str, str], Path]:
        """(group, kind) -> the vendored file holding its CRD; parsed only when asked for."""
        index: dict[tuple[str, str], Path] = {}
        for path, entry in self.manifest.items():
            for selected in entry.get("select", []):
                if selected.count("/") < 2:
                    continue  # a Helm index keeps chart names
                group, _version, kind = selected.rsplit("/", 2)
                index[(group, kind)] = self.root / path
        return index

    @cache  # noqa: B019 - one Upstream per session
    def crd(self, api_version: str, kind: str) -> dict | None:
        """The CRD serving `kind` in the group of `api_version`, as vendored, or None."""
        path = self._crd_files.get((api_group(api_version), kind))
        return None if path is None else self._crds_in(path).get((api_group(api_version), kind))

    @cache  # noqa: B019 - one Upstream per session
    def crd_documents(self, path: Path) -> tuple[dict, ...]:
        """The documents of a vendored CRD file, in its order: parsed once, however many of its kinds are asked for (a
        file holds up to a project's whole API). Do not mutate."""
        return tuple(doc for doc in yaml.load_all(path.read_text(), Loader=_Loader) if doc)

    @cache  # noqa: B019 - one Upstream per session
    def _crds_in(self, path: Path) -> dict[tuple[str, str], dict]:
        """(group, kind) -> its CRD, for every CRD of a vendored file."""
        crds: dict[tuple[str, str], dict] = {}
        for doc in self.crd_documents(path):
            crds.setdefault((doc["spec"]["group"], doc["spec"]["names"]["kind"]), doc)
        return crds

    @cache  # noqa: B019 - one Upstream per session
    def crd_served_schema(self, api_version: str, kind: str) -> dict | None:
        """The openAPIV3Schema of one served version of a CRD as vendored (its `x-kubernetes-validations`
        rules, defaults and extensions kept), or None. Do not mutate."""
        crd = self.crd(api_version, kind)
        if crd is None:
            return None
        for version in crd["spec"].get("versions", []):
            if f"{crd['spec']['group']}/{version['name']}" == api_version:
                return (version.get("schema") or {}).get("openAPIV3Schema") or None
        return None

    @cache  # noqa: B019 - one Upstream per session
    def crd_schema(self, api_version: str, kind: str) -> dict | None:
        """Strict JSON schema of one served version of a CRD, or None when upstream has no such CRD."""
        schema = self.crd_served_schema(api_version, kind)
        return _strict(schema) if schema else None

    def has_crd(self, api_version: str, kind: str) -> bool:
        return self.crd_schema(api_version, kind) is not None

    def validate_custom_resource(self, obj: dict) -> list[str]:
        """Problems of one CR against its CRD; raises KeyError when no CRD is known."""
        schema = self.crd_schema(obj.get("apiVersion", ""), obj.get("kind", ""))
        if schema is None:
            raise KeyError((obj.get("apiVersion"), obj.get("kind")))
        body = copy.deepcopy(obj)
        # metadata is validated by the API server, not the CRD schema.
        body["metadata"] = {}
        validator = _CRDValidator(schema)
        return [
            f"{'.'.join(str(p) for p in err.absolute_path) or '<root>'}: {err.message}"
            for err in sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
        ]

    @cached_property
    def _openapi_kinds(self) -> dict[tuple[str, str], tuple[Path, str]]:
        """(apiVersion, kind) -> (OpenAPI v2 document, definition name), for kinds an API server serves without a CRD."""
        index: dict[tuple[str, str], tuple[Path, str]] = {}
        for path in sorted(self.root / p for p in self.manifest if "swagger" in Path(p).name):
            for name, definition in json.loads(path.read_text()).get("definitions", {}).items():
                for gvk in definition.get("x-kubernetes-group-version-kind", []):
                    version = f"{gvk['group']}/{gvk['version']}" if gvk.get("group") else gvk["version"]
                    index.setdefault((version, gvk["kind"]), (path, name))
        return index

    @cache  # noqa: B019 - one Upstream per session
    def openapi_schema(self, api_version: str, kind: str) -> dict | None:
        """Strict JSON schema of a kind from an upstream OpenAPI (swagger) document, or None."""
        found = self._openapi_kinds.get((api_version, kind))
        if found is None:
            return None
        path, name = found
        return {"$ref": f"#/definitions/{name}", "definitions": self._strict_definitions(path)}

    @cache  # noqa: B019 - one Upstream per session
    def _strict_definitions(self, path: Path) -> dict:
        """An OpenAPI document's definitions made strict, once for all the kinds it serves."""
        return _strict(json.loads(path.read_text())["definitions"])

    def validate_served_resource(self, obj: dict) -> list[str]:
        """Problems of an object of a kind served without a CRD (e.g. an aggregated API server's) against its
        upstream OpenAPI definition; raises KeyError when the kind is in no upstream document."""
        schema = self.openapi_schema(obj.get("apiVersion", ""), obj.get("kind", ""))
        if schema is None:
            raise KeyError((obj.get("apiVersion"), obj.get("kind")))
        body = {**copy.deepcopy(obj), "metadata": {}}
        validator = _CRDValidator(schema)
        return [
            f"{'.'.join(str(p) for p in err.absolute_path) or '<root>'}: {err.message}"
            for err in sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
        ]

    def helm_index(self, repository: str) -> dict | None:
        """A Helm repository's index.yaml as copied under helm-index/<host>/<path>/, or None when none was."""
        if not repository.startswith("https://"):
            return None
        path = self.root / "helm-index" / repository.removeprefix("https://").strip("/") / "index.yaml"
        return yaml.load(path.read_text(), Loader=_Loader) if path.is_file() else None

    def values_schema_problems(self, relative_schema: str, values: dict) -> list[str]:
        """Problems of chart values against the chart's values.schema.json (what `helm install` enforces)."""
        schema = json.loads((self.root / relative_schema).read_text())
        validator = jsonschema.Draft7Validator(schema)
        return [
            f"{'.'.join(str(p) for p in err.absolute_path) or '<root>'}: {err.message}"
            for err in sorted(validator.iter_errors(values), key=lambda e: list(e.absolute_path))
        ]

    @cache  # noqa: B019 - one Upstream per session
    def document(self, relative: str) -> Any:
        """A JSON file of the upstream data (flag and metric lists generated at a pinned tag)."""
        return json.loads((self.root / relative).read_text())

    def chart_values(self, relative: str) -> dict:
        return yaml.load((self.root / relative).read_text(), Loader=_Loader) or {}

    def chart_version(self, relative_chart_yaml: str) -> str:
        return str(yaml.safe_load((self.root / relative_chart_yaml).read_text())["version"])

    def released_chart_version(self, relative_chart_yaml: str) -> str:
        """The version the chart is published under.

        Some projects keep a placeholder in the in-tree Chart.yaml (v1.0.0-devel, v0.0.0-latest,
        0.0.0) and stamp the git tag at release time; their files here sit in a directory named
        after that tag.
        """
        version = self.chart_version(relative_chart_yaml)
        if _PLACEHOLDER_VERSION.search(version):
            return Path(relative_chart_yaml).parent.name
        return version


def merge_values(*layers: Any) -> dict:
    """Values files layered like `helm -f a -f b`: later maps merged into earlier ones, key by key."""
    merged: dict = {}
    for layer in layers:
        for key, value in (layer or {}).items():
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = merge_values(merged[key], value)
            else:
                merged[key] = value
    return merged


def unknown_values(ours: Any, defaults: Any, free_form: tuple[str, ...] = (), path: str = "") -> list[str]:
    """Dotted paths we set that the chart's default values do not have.

    Below a path matching a `free_form` glob (maps the chart passes through, like
    nodeSelector or podAnnotations) any key is accepted.
    """
    if not isinstance(ours, dict):
        return []
    problems = []
    for key, value in ours.items():
        sub = f"{path}.{key}" if path else str(key)
        if any(fnmatch.fnmatchcase(sub, pattern) for pattern in free_form):
            continue
        if not isinstance(defaults, dict) or key not in defaults:
            problems.append(sub)
            continue
        if isinstance(defaults[key], dict):
            problems.extend(unknown_values(value, defaults[key], free_form, sub))
    return problems
