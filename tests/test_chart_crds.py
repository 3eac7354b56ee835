"""The catalog's chart -> CRDs table is what the vendored chart files at each pin say, gates and defaults included."""

from __future__ import annotations

import json

import pytest
import yaml

from components.catalog.chart_crds import CHART_CRDS, CRD_UPGRADERS, FILE_CRDS, installed_kinds
from components.catalog.charts import CHARTS
from tools.upstream_origins import CHART_CRDS as DERIVED
from tools.vendor_upstream import VENDORED_DIR


def _vendored(chart: str) -> dict:
    return json.loads((VENDORED_DIR / DERIVED[chart].path).read_text())


@pytest.mark.parametrize("chart", sorted(CHART_CRDS))
def test_table_matches_the_chart_files(chart):
    doc = _vendored(chart)
    vendored = {
        (c["group"], c["kind"], tuple((w["path"], w["equals"]) for w in c["when"]))
        for c in [*doc["crds"], *doc["served"]]
    }
    stated = {
        (entry.group, kind, tuple((g.path, g.equals) for g in entry.when))
        for entry in CHART_CRDS[chart].installed
        for kind in entry.kinds
    }
    assert stated == vendored
    assert CHART_CRDS[chart].target == doc["target"]
    assert CHART_CRDS[chart].source.endswith(":" + doc["directory"])


def test_every_chart_read_is_pinned_and_every_pinned_chart_with_kinds_we_render_is_read():
    assert set(CHART_CRDS) == set(DERIVED)
    assert set(CHART_CRDS) <= set(CHARTS)
    for chart in ("kserve-crd", "kserve-llmisvc-crd", "kserve-llmisvc-resources", "gateway-helm", "volcano"):
        assert chart in CHART_CRDS


# The charts whose CRDs a value gates, named by hand so that an empty table cannot pass.
GATED_CHARTS = ["cert-manager", "gateway-helm", "karmada", "keda", "kserve-llmisvc-resources", "kube-prometheus-stack"]


def test_the_gated_charts_are_these():
    assert sorted(c for c in CHART_CRDS if any(entry.when for entry in CHART_CRDS[c].installed)) == GATED_CHARTS


@pytest.mark.parametrize("chart", GATED_CHARTS)
def test_gate_defaults_are_the_charts_own(chart):
    values = yaml.safe_load((VENDORED_DIR / CHARTS[chart].upstream_values).read_text())
    gates = {(gate.path, gate.default) for entry in CHART_CRDS[chart].installed for gate in entry.when}
    assert gates
    for path, default in gates:
        current = values
        for key in path.split("."):
            current = current[key]
        assert current == default, (chart, path)


def test_gates_follow_our_values():
    # Written by hand from the charts: the LLMInferenceService release ships the InferencePool CRD unless told not
    # to; cert-manager installs its CRDs only when asked; Karmada's agent mode installs none.
    assert ("inference.networking.k8s.io", "InferencePool") in installed_kinds("kserve-llmisvc-resources", {})
    assert not installed_kinds("kserve-llmisvc-resources", {"kserve": {"llmisvc": {"createGIECRDs": False}}})
    assert not installed_kinds("cert-manager", {})
    assert ("cert-manager.io", "Certificate") in installed_kinds("cert-manager", {"crds": {"enabled": True}})
    assert ("cert-manager.io", "Issuer") in installed_kinds("cert-manager", {"installCRDs": True})
    assert ("cluster.karmada.io", "Cluster") in installed_kinds("karmada", {})
    assert not installed_kinds("karmada", {"installMode": "agent"})
    assert installed_kinds("kserve-resources", {}) == frozenset()
    with pytest.raises(KeyError):
        installed_kinds("dcgm-exporter", {})


def test_each_crd_file_defines_the_kind_the_catalog_says():
    """FILE_CRDS against the vendored copy of each file (the URL names the repository, the tag and the path)."""
    entries = json.loads((VENDORED_DIR / "MANIFEST.json").read_text())["files"]
    assert len(FILE_CRDS) == 2  # Clusterpedia's two (the picker's InferenceObjective comes with KServe's chart)
    for url, (group, kind) in FILE_CRDS.items():
        owner, name, tag, path = url.removeprefix("https://raw.githubusercontent.com/").split("/", 3)
        (entry,) = [e for e in entries if (e["repo"], e["ref"], e["source"]) == (f"{owner}/{name}", tag, path)]
        (crd,) = yaml.safe_load_all((VENDORED_DIR / entry["path"]).read_text())
        assert (crd["spec"]["group"], crd["spec"]["names"]["kind"]) == (group, kind), url


# --- upgrades: Helm never applies a chart's crds/ again (upstream.HELM_NEVER_UPGRADES_A_CHARTS_CRDS_FOLDER) ----------


def test_every_chart_with_a_crds_folder_names_its_upgrader():
    """The charts whose CRDs Helm installs from crds/ (rendered_by Chart.yaml in the files derived from them), named
    by hand so that an empty table cannot pass, are those CRD_UPGRADERS classifies."""
    from_crds_folder = sorted(
        c for c in CHART_CRDS if any(d["rendered_by"] == "Chart.yaml" for d in _vendored(c)["crds"])
    )
    assert from_crds_folder == ["fluid", "gateway-helm", "kube-prometheus-stack"]
    # gpu-operator's crds/ (NVIDIA/gpu-operator@v26.7.0:deployments/gpu-operator/crds), outside CHART_CRDS
    assert sorted(CRD_UPGRADERS) == sorted([*from_crds_folder, "gpu-operator"])


@pytest.mark.parametrize("chart", sorted(c for c, u in CRD_UPGRADERS.items() if u.gate is not None))
def test_an_upgrader_gate_default_is_the_charts_own(chart):
    values = yaml.safe_load((VENDORED_DIR / CHARTS[chart].upstream_values).read_text())
    gate = CRD_UPGRADERS[chart].gate
    current = values
    for key in gate.path.split("."):
        current = current[key]
    assert current == gate.default
