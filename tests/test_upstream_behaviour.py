"""Upstream behaviour the program relies on (components/catalog/upstream.py), asserted on the rendered plans.

Schema-valid is not enough: each test here checks that what the plan renders is consistent with one stated
fact about the pinned upstream versions (who creates an object, what is admitted, what a repository serves).
"""

from __future__ import annotations

import pytest

from components.catalog.charts import CHARTS
from components.catalog.upstream import FACTS, KARMADA_AGENT_REGISTERS, REPOSITORIES_SERVE_PINS
from tests.harness import environment_config, ns, plan_config
from tools.plan.report import render_markdown

CLUSTER_TYPE = "kubernetes:cluster.karmada.io/v1alpha1:Cluster"


def test_every_fact_states_its_source():
    assert len(FACTS) >= 2
    for fact in FACTS.values():
        assert fact.statement.strip() and fact.source.strip(), fact.name


# --- karmada-agent registers its own Cluster -----------------------------------------------------------


@pytest.fixture(scope="module")
def push_plan():
    config = environment_config("prod")
    config[ns("federation")] |= {"memberMode": "push"}
    for region in config[ns("regions")]:
        region["apiAccess"]["publicCidrs"] = ["198.51.100.0/24"]
    return plan_config(config, stack="pushfacts")


def test_pull_mode_creates_no_cluster_the_agent_owns(prod_plan):
    assert KARMADA_AGENT_REGISTERS.name in FACTS
    agents = {prod_plan.cluster_of(r) for r in prod_plan.helm_releases() if r.inputs["name"] == "karmada-agent"}
    assert agents == {"prod-use1", "prod-usw2", "prod-usc1"}
    # The agent's Cluster would be rejected by itself if it existed before it: nothing may create one.
    assert prod_plan.of_type(CLUSTER_TYPE) == []
    patched = {r.inputs["metadata"]["name"]: r.inputs for r in prod_plan.of_type(CLUSTER_TYPE + "Patch")}
    assert set(patched) == agents
    for cluster, patch in patched.items():
        # Only what the agent never writes: no spec (spec.id, syncMode, apiEndpoint, secretRef are the agent's).
        assert "spec" not in patch and set(patch["metadata"]) == {"name", "labels"}, cluster


def test_pull_patches_wait_for_their_agent(prod_plan):
    for patch in prod_plan.of_type(CLUSTER_TYPE + "Patch"):
        member = patch.inputs["metadata"]["name"]
        agent = prod_plan.named(f"{member}-karmada-agent", "kubernetes:helm.sh/v3:Release")
        assert agent.urn in patch.options["dependsOn"], member


def test_push_mode_declares_its_clusters(push_plan):
    clusters = {r.inputs["metadata"]["name"]: r.inputs for r in push_plan.of_type(CLUSTER_TYPE)}
    assert sorted(clusters) == ["pushfacts-usc1", "pushfacts-use1", "pushfacts-usw2"]
    assert {c["spec"]["syncMode"] for c in clusters.values()} == {"Push"}
    assert push_plan.of_type(CLUSTER_TYPE + "Patch") == []


def test_member_selectors_match_the_labels_members_get(prod_plan):
    """Whatever selects members (ClusterTaintPolicy, PropagationPolicy) names clusters the agents register."""
    registered = {r.inputs["metadata"]["name"] for r in prod_plan.of_type(CLUSTER_TYPE + "Patch")}
    labels = {
        r.inputs["metadata"]["name"]: r.inputs["metadata"]["labels"] for r in prod_plan.of_type(CLUSTER_TYPE + "Patch")
    }
    selected = 0
    for r in prod_plan.kubernetes_objects():
        spec = r.inputs.get("spec") or {}
        targets = (
            [spec.get("targetClusters")]
            + [(spec.get("placement") or {}).get("clusterAffinity")]
            + [rule.get("targetCluster") for rule in spec.get("overrideRules", [])]
        )
        for target in filter(None, targets):
            assert set(target.get("clusterNames", [])) <= registered, r.urn
            for key, value in ((target.get("labelSelector") or {}).get("matchLabels") or {}).items():
                assert any(member.get(key) == value for member in labels.values()), (r.urn, key)
            selected += 1
    assert selected >= 3  # taint policies and the 70B model's placement


def test_plan_md_says_how_each_member_joins(prod_plan, push_plan):
    for member in ("prod-use1", "prod-usw2", "prod-usc1"):
        assert f"| {member} |" in render_markdown(prod_plan)
    assert render_markdown(prod_plan).count("agent-registered (pull)") == 3
    assert render_markdown(push_plan).count("declared by the program (push)") == 3


# --- repositories serve the pinned chart versions ------------------------------------------------------


@pytest.mark.parametrize("chart", sorted(CHARTS.values(), key=lambda c: c.name), ids=lambda c: c.name)
def test_repository_serves_the_pinned_chart_version(chart, upstream):
    assert REPOSITORIES_SERVE_PINS.name in FACTS
    if chart.is_oci:
        pytest.skip(f"not determinable: {chart.repository} is an OCI registry, which has no index to read offline")
    index = upstream.helm_index(chart.repository)
    if index is None:
        pytest.skip(f"not determinable: no index snapshot of {chart.repository} under helm-index/")
    served = [str(entry["version"]) for entry in index["entries"].get(chart.name, [])]
    assert chart.version in served, f"{chart.repository} serves {chart.name} {served[:5]}..., not {chart.version}"


def test_index_check_rejects_versions_a_repository_does_not_serve(upstream):
    """The snapshots really tell served from unserved: the former pins are not in their repositories."""
    karmada = upstream.helm_index("https://raw.githubusercontent.com/karmada-io/karmada/master/charts")
    volcano = upstream.helm_index("https://volcano-sh.github.io/helm-charts")
    assert "v1.18.2" not in {str(e["version"]) for e in karmada["entries"]["karmada"]}
    assert "v1.18.1" in {str(e["version"]) for e in karmada["entries"]["karmada"]}
    assert "1.15.1" not in {str(e["version"]) for e in volcano["entries"]["volcano"]}


def test_installed_releases_use_the_catalog_repository(env_plan):
    for release in env_plan.helm_releases():
        chart = CHARTS[release.inputs["chart"].rsplit("/", 1)[-1]]
        if chart.is_oci:
            assert release.inputs["chart"] == f"{chart.repository}/{chart.name}"
        else:
            assert release.inputs["repositoryOpts"]["repo"] == chart.repository
        assert release.inputs["version"] == chart.version
