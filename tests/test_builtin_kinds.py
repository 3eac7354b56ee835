"""Every object of a built-in API group, and every core pod fragment inside a CR, validated strictly
against the OpenAPI of the Kubernetes version its cluster runs (kubernetes-validate's strict schemas).

The mocks accept any dict; an API server prunes or rejects an unknown field, a missing required one
or `port: 8080.0` where the schema says int32.
"""

from __future__ import annotations

import copy
import warnings

import pytest

from components.catalog.charts import CHARTS
from components.k8s.names import cluster_name
from tools.builtin_kinds import BuiltinSchemas, pod_fragments, schema_version, shipped_versions
from tools.conformance import is_custom_resource, merge_values


class SchemaVersionFallback(UserWarning):
    """A cluster newer than the schemas kubernetes-validate ships: validated against the newest."""


def cluster_versions(plan, upstream) -> dict[str, str]:
    """Cluster (provider) name -> the Kubernetes version its API server serves.

    Region clusters run their `kubernetesVersion`; the Karmada control plane is a kube-apiserver of
    the karmada chart's `apiServer.image.tag` (chart default unless our values set one).
    """
    versions = {cluster_name(plan.environment, r): r.kubernetes_version for r in plan.spec.regions}
    chart = CHARTS["karmada"]
    for release in plan.helm_releases():
        values = release.inputs.get("values") or {}
        # An OCI chart is named by its reference (oci://docker.io/karmada/karmada).
        if release.inputs.get("chart", "").rsplit("/", 1)[-1] == chart.name and values.get("installMode") == "host":
            merged = merge_values(upstream.chart_values(chart.upstream_values), values)
            versions[f"{plan.environment}-karmada"] = merged["apiServer"]["image"]["tag"]
    return versions


@pytest.fixture(scope="module")
def schemas():
    """One set of validators per Kubernetes version, shared by the module's tests."""
    by_version: dict[str, BuiltinSchemas] = {}

    def get(version: str) -> BuiltinSchemas:
        if version not in by_version:
            by_version[version] = BuiltinSchemas(version=version)
            if by_version[version].version.note:
                warnings.warn(by_version[version].version.note, SchemaVersionFallback, stacklevel=2)
        return by_version[version]

    return get


@pytest.fixture(scope="module")
def newest(schemas):
    return schemas(shipped_versions()[-1])


def _schemas_by_cluster(plan, upstream, schemas) -> dict[str | None, BuiltinSchemas]:
    return {cluster: schemas(version) for cluster, version in cluster_versions(plan, upstream).items()}


def test_every_cluster_has_a_version(checked_plan, upstream):
    clusters = {checked_plan.cluster_of(r) for r in checked_plan.kubernetes_objects()}
    assert clusters and clusters <= set(cluster_versions(checked_plan, upstream))


def test_every_builtin_object_is_valid_for_its_cluster_version(checked_plan, upstream, schemas):
    builtin = [r for r in checked_plan.kubernetes_objects() if not is_custom_resource(r.inputs)]
    assert builtin
    by_cluster = _schemas_by_cluster(checked_plan, upstream, schemas)
    problems = []
    for resource in builtin:
        obj = resource.inputs
        where = f"{checked_plan.cluster_of(resource)}: {obj['kind']} {obj['metadata'].get('name')}"
        try:
            found = by_cluster[checked_plan.cluster_of(resource)].validate(obj, patch=resource.type.endswith("Patch"))
        except KeyError as missing:
            found = [f"no such kind served: {missing}"]
        problems.extend(f"{where}: {p}" for p in found)
    print(f"{checked_plan.environment}: {len(builtin)} built-in objects validated")
    assert problems == []


def test_every_core_fragment_in_a_cr_is_valid(checked_plan, upstream, schemas, newest):
    fragments = [
        (resource, fragment)
        for resource in checked_plan.kubernetes_objects()
        if is_custom_resource(resource.inputs)
        for fragment in pod_fragments(resource.inputs)
    ]
    kinds = {resource.inputs["kind"] for resource, _ in fragments}
    assert {"InferenceService", "ClusterServingRuntime", "AlluxioRuntime", "EnvoyProxy"} <= kinds
    by_cluster = _schemas_by_cluster(checked_plan, upstream, schemas)
    problems = []
    for resource, (path, value, definition, mixed) in fragments:
        schemas_of = by_cluster[checked_plan.cluster_of(resource)]
        found = schemas_of.validate_fragment(value, definition, mixed=mixed, newest=newest)
        where = f"{checked_plan.cluster_of(resource)}: {resource.inputs['kind']} {resource.inputs['metadata']['name']}"
        problems.extend(f"{where}: {path} ({definition}): {p}" for p in found)
    print(f"{checked_plan.environment}: {len(fragments)} core fragments in CRs validated")
    assert problems == []


DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 8080}]}]},
        },
    },
}


def test_a_valid_deployment_passes():
    assert BuiltinSchemas(version="1.33").validate(DEPLOYMENT) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda d: d["spec"]["template"]["spec"]["containers"][0]["ports"][0].update(protocl="TCP"),
            "spec.template.spec.containers.0.ports.0: Additional properties are not allowed ('protocl' was unexpected)",
        ),
        (
            lambda d: d["spec"]["template"]["spec"]["containers"][0]["ports"][0].update(containerPort=8080.0),
            "spec.template.spec.containers.0.ports.0.containerPort: 8080.0 is not of type 'integer'",
        ),
        (lambda d: d["spec"].pop("selector"), "spec: 'selector' is a required property"),
        # listType map: server-side apply rejects two entries with the same key.
        (
            lambda d: d["spec"]["template"]["spec"]["containers"][0].update(
                env=[{"name": "PORT", "value": "80"}, {"name": "PORT", "value": "8080"}]
            ),
            'spec.template.spec.containers.0.env: duplicate entries for key {"name": "PORT"}',
        ),
        # PodSpec.hostnameOverride is new in 1.34: a 1.33 API server does not know it.
        (
            lambda d: d["spec"]["template"]["spec"].update(hostnameOverride="web-0"),
            "spec.template.spec: Additional properties are not allowed ('hostnameOverride' was unexpected)",
        ),
    ],
)
def test_a_defective_deployment_fails(change, problem):
    bad = copy.deepcopy(DEPLOYMENT)
    change(bad)
    assert BuiltinSchemas(version="1.33").validate(bad) == [problem]


def test_a_patch_needs_no_required_field_but_no_unknown_one():
    patch = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 2}}
    schemas = BuiltinSchemas(version="1.33")
    assert schemas.validate(patch, patch=True) == []
    assert schemas.validate(patch) == [
        "spec: 'selector' is a required property",
        "spec: 'template' is a required property",
    ]
    patch["spec"]["replicaz"] = 2
    assert schemas.validate(patch, patch=True) == [
        "spec: Additional properties are not allowed ('replicaz' was unexpected)"
    ]


def test_a_removed_api_version_is_not_served():
    with pytest.raises(KeyError):
        BuiltinSchemas(version="1.33").validate({**DEPLOYMENT, "apiVersion": "extensions/v1beta1"})


def test_a_kserve_predictor_with_a_misspelled_container_field_fails():
    newest = BuiltinSchemas(version=shipped_versions()[-1])
    schemas = BuiltinSchemas(version="1.33")
    isvc = {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "m"},
        "spec": {
            "predictor": {
                "minReplicas": 1,  # KServe's own field, next to the PodSpec's
                "model": {"modelFormat": {"name": "vLLM"}, "args": ["--x"], "resources": {"limits": {"cpu": "1"}}},
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
            }
        },
    }
    checked = {path: schemas.validate_fragment(v, d, mixed=m, newest=newest) for path, v, d, m in pod_fragments(isvc)}
    assert checked == {"spec.predictor": [], "spec.predictor.model": []}
    isvc["spec"]["predictor"]["model"]["resource"] = isvc["spec"]["predictor"]["model"].pop("resources")
    isvc["spec"]["predictor"]["tolerations"][0]["efect"] = "NoSchedule"
    isvc["spec"]["predictor"]["containers"] = [{"image": "sidecar"}]  # nested: a container needs its name
    checked = {path: schemas.validate_fragment(v, d, mixed=m, newest=newest) for path, v, d, m in pod_fragments(isvc)}
    assert checked == {
        "spec.predictor": [
            "containers.0: 'name' is a required property",
            "tolerations.0: Additional properties are not allowed ('efect' was unexpected)",
        ],
        # `resource` is in no Kubernetes version's Container: taken for KServe's own, left to its CRD schema.
        "spec.predictor.model": [],
    }


def test_a_cluster_newer_than_the_shipped_schemas_uses_the_newest_and_says_so():
    shipped = shipped_versions()
    major, minor = shipped[-1].split(".")
    future = f"{major}.{int(minor) + 1}"
    assert schema_version(future).used == shipped[-1]
    assert schema_version(future).note == (
        f"Kubernetes {future}: kubernetes-validate ships schemas of {shipped[0]} to {shipped[-1]}; "
        f"validated against {shipped[-1]}"
    )
    assert schema_version("1.2").used == shipped[0] and schema_version("1.2").note.endswith(f"against {shipped[0]}")
    assert schema_version("v1.33.4").used == "1.33" and schema_version("1.33").note is None


def test_a_fallback_is_a_warning_in_the_test_output(schemas):
    major, minor = shipped_versions()[-1].split(".")
    with pytest.warns(SchemaVersionFallback, match="validated against"):
        schemas(f"{major}.{int(minor) + 1}")
