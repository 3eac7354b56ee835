"""cert-manager: installed before KServe on every cluster that runs it, unless the region says it already runs."""

from __future__ import annotations

import pytest

from components.addons.cert_manager import chart_values
from components.catalog.charts import CHARTS
from tests.harness import environment_config, ns, plan_stacks

SCHEMA = "cert-manager/v1.21.1/chart-cert-manager.values.schema.json"


def _releases(plan, name: str) -> dict:
    return {plan.cluster_of(r): r for r in plan.helm_releases() if r.inputs["name"] == name}


def test_every_kserve_cluster_installs_cert_manager_first(env_plan):
    kserve = _releases(env_plan, "kserve")
    cert_manager = _releases(env_plan, "cert-manager")
    assert kserve and set(cert_manager) == set(kserve)
    for cluster, release in kserve.items():
        assert cert_manager[cluster].urn in release.options["dependsOn"], cluster
        inputs = cert_manager[cluster].inputs
        assert (inputs["chart"], inputs["version"], inputs["namespace"]) == (
            "oci://quay.io/jetstack/charts/cert-manager",
            "v1.21.1",
            "cert-manager",
        )
        assert inputs["values"]["crds"] == {"enabled": True, "keep": True}


def test_values_pass_the_charts_own_schema(upstream):
    for production in (False, True):
        values = chart_values("inference-platform.io", production)
        assert upstream.values_schema_problems(SCHEMA, values) == []
    assert upstream.values_schema_problems(SCHEMA, {"crds": {"enabled": "yes"}}) != []


def test_production_runs_two_of_each_with_a_budget(prod_plan):
    values = _releases(prod_plan, "cert-manager")["prod-usc1"].inputs["values"]
    for component in (values, values["webhook"], values["cainjector"]):
        assert component["replicaCount"] == 2 and component["podDisruptionBudget"] == {"enabled": True}


@pytest.mark.plan
def test_existing_cert_manager_is_not_installed_again():
    config = environment_config("prod")
    config[ns("regions")][2]["certManager"] = {"existing": True}
    # usc1's stack and the anchor's it reads: the option changes no other stack.
    plan = plan_stacks(config, "certs", ["usc1"])
    assert sorted(_releases(plan, "cert-manager")) == ["certs-use1"]  # the anchor still installs its own
    kserve = _releases(plan, "kserve")["certs-usc1"]
    assert not any("cert-manager" in urn for urn in kserve.options["dependsOn"])
    assert CHARTS["cert-manager"].version == "v1.21.1"


def test_plan_md_shows_cert_manager_and_quotas_per_cluster(prod_plan):
    from tools.plan.report import render_markdown

    md = render_markdown(prod_plan)
    assert "| prod-use1 | aws | v1.21.1 (installed before KServe) | n/a (EKS) |" in md
    assert (
        "| prod-usc1 | gcp | v1.21.1 (installed before KServe) | dcgm-exporter, gpu-operator, karmada-system, "
        "model-cache, volcano-system |" in md
    )
