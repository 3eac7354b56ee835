"""Every custom resource validates against its upstream CRD; every Helm value exists in the pinned chart."""

from __future__ import annotations

import copy

import jsonschema
import pytest

from components.catalog.charts import CHARTS, ChartRef
from tests.harness import HELM_RELEASES
from tools.conformance import Upstream, apiserver_validator, is_custom_resource, merge_values, unknown_values

# Kinds we render that have no CRD in conformance/upstream, each with the reason.
_KARMADA_OPENAPI = (
    "validated against the definition in karmada/v1.18.2/openapi-swagger.json by tests/test_federation.py"
)
NO_UPSTREAM_SCHEMA: dict[tuple[str, str], str] = {
    ("cluster.karmada.io/v1alpha1", "Cluster"): "served by karmada-aggregated-apiserver, no CRD; " + _KARMADA_OPENAPI,
    ("config.karmada.io/v1alpha1", "ResourceInterpreterCustomization"): "CRD not among the upstream files; "
    + _KARMADA_OPENAPI,
    ("policy.karmada.io/v1alpha1", "ClusterTaintPolicy"): "CRD not among the upstream files; " + _KARMADA_OPENAPI,
}


def _chart_of(release_inputs: dict) -> ChartRef:
    name = release_inputs["chart"].rsplit("/", 1)[-1]
    assert name in CHARTS, f"chart {name} is not in components/catalog/charts.py"
    return CHARTS[name]


def test_custom_resources_match_upstream_crds(env_plan, upstream):
    checked = 0
    for r in env_plan.kubernetes_objects():
        obj = r.inputs
        if not is_custom_resource(obj):
            continue
        key = (obj["apiVersion"], obj["kind"])
        if not upstream.has_crd(*key):
            assert key in NO_UPSTREAM_SCHEMA, f"{key} has no upstream CRD schema; add it or list it with a reason"
            continue
        problems = upstream.validate_custom_resource(obj)
        assert not problems, f"{r.urn}:\n" + "\n".join(problems)
        checked += 1
    assert checked == sum(
        1
        for r in env_plan.kubernetes_objects()
        if is_custom_resource(r.inputs) and (r.inputs["apiVersion"], r.inputs["kind"]) not in NO_UPSTREAM_SCHEMA
    )


def test_helm_values_exist_in_pinned_charts(env_plan, upstream):
    assert len(env_plan.helm_releases()) == HELM_RELEASES[env_plan.environment], "releases counted by hand"
    for release in env_plan.helm_releases():
        chart = _chart_of(release.inputs)
        assert release.inputs["version"] == chart.version
        values = dict(release.inputs.get("values") or {})
        for key, values_file in chart.subcharts.items():
            sub = values.pop(key, None)
            bad = unknown_values(sub, upstream.chart_values(values_file), chart.free_form)
            assert not bad, f"{release.name}: {key}.* values not in the subchart: {bad}"
        defaults = merge_values(*(upstream.chart_values(f) for f in (chart.upstream_values, *chart.documented_values)))
        bad = unknown_values(values, defaults, chart.free_form)
        assert not bad, f"{release.name}: values not in chart {chart.name} {chart.version}: {bad}"


@pytest.mark.parametrize("chart", sorted(CHARTS.values(), key=lambda c: c.name), ids=lambda c: c.name)
def test_chart_pins_match_upstream_chart_yaml(chart, upstream):
    pinned = chart.files_tag or chart.version
    assert pinned.lstrip("v") == upstream.released_chart_version(chart.upstream_chart).lstrip("v")
    assert "latest" not in chart.version


def test_no_unlisted_allowances():
    for key, reason in NO_UPSTREAM_SCHEMA.items():
        assert reason.strip(), f"{key} needs a reason"


# --- the checkers themselves must catch what they claim to catch --------------------------------------

_QUEUE = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"}}


def test_crd_validation_accepts_a_valid_object(upstream):
    assert upstream.validate_custom_resource({**_QUEUE, "spec": {"weight": 1, "reclaimable": True}}) == []


def test_crd_validation_rejects_unknown_fields_and_wrong_types(upstream):
    problems = upstream.validate_custom_resource({**_QUEUE, "spec": {"weight": "heavy", "reclaimabel": True}})
    assert any("spec.weight" in p for p in problems)
    assert any("reclaimabel" in p for p in problems)


def test_crd_validation_handles_int_or_string(upstream):
    # Queue capability is a map of quantities (x-kubernetes-int-or-string).
    ok = {**_QUEUE, "spec": {"weight": 1, "capability": {"nvidia.com/gpu": 8, "memory": "64Gi"}}}
    assert upstream.validate_custom_resource(ok) == []
    bad = {**_QUEUE, "spec": {"weight": 1, "capability": {"nvidia.com/gpu": [8]}}}
    assert upstream.validate_custom_resource(bad)


def test_unknown_crd_kind_is_a_key_error(upstream):
    with pytest.raises(KeyError):
        upstream.validate_custom_resource({"apiVersion": "example.com/v1", "kind": "Nope", "spec": {}})


def test_unknown_values_flags_typos_but_not_free_form_maps():
    defaults = {"driver": {"enabled": True, "version": "1"}, "nodeSelector": {}, "tolerations": []}
    ours = {"driver": {"enabeld": False}, "nodeSelector": {"pool": "gpu"}, "tolerations": [{"key": "x"}]}
    assert unknown_values(ours, defaults) == ["driver.enabeld", "nodeSelector.pool"]
    assert unknown_values(ours, defaults, free_form=("nodeSelector",)) == ["driver.enabeld"]


def test_merge_values_layers_maps_key_by_key():
    base = {"config": {"envoyGateway": {"extensionApis": {}, "logging": {"level": "info"}}}, "replicas": 1}
    addon = {"config": {"envoyGateway": {"extensionApis": {"enableBackend": True}}}}
    merged = merge_values(base, addon)
    assert merged["config"]["envoyGateway"] == {"extensionApis": {"enableBackend": True}, "logging": {"level": "info"}}
    assert unknown_values({"config": {"envoyGateway": {"extensionApis": {"enableBackend": True}}}}, merged) == []
    assert unknown_values({"config": {"envoyGateway": {"extensionApis": {"enableBackedn": True}}}}, merged)


def test_released_chart_version_maps_placeholders_to_the_tag(tmp_path):
    for tag, in_tree, released in [
        ("v26.7.0", "v1.0.0-devel", "v26.7.0"),
        ("v1.9.0", "v0.0.0-latest", "v1.9.0"),
        ("v1.18.2", "0.0.0", "v1.18.2"),
        ("v0.20.0", "v0.20.0", "v0.20.0"),
        ("v1.14.1", "1.13.0", "1.13.0"),  # a real, stale version stays and fails the pin check
    ]:
        (tmp_path / tag).mkdir(exist_ok=True)
        (tmp_path / tag / "Chart.yaml").write_text(f"version: {in_tree}\n")
        assert Upstream(tmp_path).released_chart_version(f"{tag}/Chart.yaml") == released


def test_a_cr_checks_what_the_api_server_adds_to_json_schema(dev_plan, upstream):
    """Duplicate keys of a list map, and an integral float for an integer, are rejected like the server does."""
    (gateway,) = [r.inputs for r in dev_plan.kubernetes_objects() if r.inputs["kind"] == "Gateway"]
    assert upstream.validate_custom_resource(gateway) == []
    twice = copy.deepcopy(gateway)
    twice["spec"]["listeners"].append({**twice["spec"]["listeners"][0], "port": 8443})
    assert upstream.validate_custom_resource(twice) == ['spec.listeners: duplicate entries for key {"name": "https"}']
    floated = copy.deepcopy(gateway)
    floated["spec"]["listeners"][0]["port"] = 443.0
    assert upstream.validate_custom_resource(floated) == ["spec.listeners.0.port: 443.0 is not of type 'integer'"]


def test_a_missing_list_map_key_counts_as_its_default():
    validator = apiserver_validator(jsonschema.Draft7Validator)(
        {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["port", "protocol"],
            "items": {"type": "object", "properties": {"port": {"type": "integer"}, "protocol": {"default": "TCP"}}},
        }
    )
    ports = [{"port": 80}, {"port": 80, "protocol": "UDP"}]
    assert [e.message for e in validator.iter_errors(ports)] == []
    ports.append({"port": 80, "protocol": "TCP"})
    assert [e.message for e in validator.iter_errors(ports)] == [
        'duplicate entries for key {"port": 80, "protocol": "TCP"}'
    ]
