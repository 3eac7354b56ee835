"""A stand-in while a model wakes (`placements[].standIn`, components/serving/stand_in.py): what the plan renders
where several models share one stand-in, what plan.md and the stack outputs say, and prod's 70B with the 8B."""

from __future__ import annotations

import copy

import pytest

from components.serving import stand_in
from tests.harness import apply_ops, cluster_objects, environment_config, ns, plan_config
from tools.plan.report import render_markdown

pytestmark = pytest.mark.plan


def stand_in_dev() -> dict:
    """dev's qwen2-5-7b and a second MIG model, qwen-coder, both at zero with llama-3-1-8b (kept up) standing in."""
    config = environment_config("dev")
    models = config[ns("models")]
    coder = copy.deepcopy(models[1]) | {"name": "qwen-coder", "storagePath": "models/qwen2-5-7b/"}
    models.append(coder)
    apply_ops(
        {"models": models, "tenants": config[ns("tenants")]},
        (
            ("set", "models[0].placements[0].minReplicas", 1),
            ("set", "models[1].maxModelLen", 4096),
            ("set", "models[1].placements[0].standIn", "llama-3-1-8b"),
            ("set", "models[2].maxModelLen", 4096),
            ("set", "models[2].placements[0].standIn", "llama-3-1-8b"),
            ("append", "tenants[0].models", "qwen-coder"),
        ),
    )
    return config


def stand_in_prod() -> dict:
    """prod's llama-3-1-70b with llama-3-1-8b standing in where both run (use1, usw2); evals, which may call the
    70B, is granted the 8B, and every caller of the two is of one request class, as the checks require (the
    stand-in's answers pass no endpoint picker to order classes)."""
    config = environment_config("prod")
    tenants = config[ns("tenants")]
    evals = next(i for i, t in enumerate(tenants) if t["name"] == "evals")
    callers = [i for i, t in enumerate(tenants) if {"llama-3-1-70b", "llama-3-1-8b"} & set(t["models"])]
    apply_ops(
        {"models": config[ns("models")], "tenants": tenants},
        (
            ("set", "models[0].placements[0].standIn", "llama-3-1-8b"),
            ("set", "models[0].placements[1].standIn", "llama-3-1-8b"),
            ("append", f"tenants[{evals}].models", "llama-3-1-8b"),
            *(("set", f"tenants[{i}].priority", "interactive") for i in callers),
        ),
    )
    return config


def test_models_sharing_a_stand_in_get_a_rule_and_a_patch_each():
    plan = plan_config(stand_in_dev(), stack="dev")
    ((_, route),) = [(k, r) for k, r in cluster_objects(plan, "AIGatewayRoute").items() if k[1].startswith("stand")]
    rules = route["spec"]["rules"]
    assert [r["name"] for r in rules] == ["qwen-coder", "qwen2-5-7b"]
    assert {r["backendRefs"][1]["name"] for r in rules} == {"llama-3-1-8b-direct"}
    ((_, patch),) = cluster_objects(plan, "EnvoyPatchPolicy").items()
    names = [op["name"] for op in patch["spec"]["jsonPatches"]]
    assert names == [stand_in.cluster_name(route["metadata"]["name"], i) for i in range(len(rules))]
    backends = {name: o["spec"] for (_, name), o in cluster_objects(plan, "Backend").items()}
    assert {n: b.get("fallback", False) for n, b in backends.items()} == {
        "llama-3-1-8b-direct": True,
        "qwen-coder-direct": False,
        "qwen2-5-7b-direct": False,
    }
    assert {name for _, name in cluster_objects(plan, "InferencePool")} == {"llama-3-1-8b"}


def test_plan_md_and_the_outputs_name_the_stand_in():
    plan = plan_config(stand_in_dev(), stack="dev")
    markdown = render_markdown(plan)
    assert (
        "| stand-ins-1 | `qwen2-5-7b` | its Service; with no Ready replica, stand-in `llama-3-1-8b` | research |"
        in (markdown)
    )
    assert "/ stand-in llama-3-1-8b |" in markdown  # what a request at zero gets, in Model deployments
    # The gateway still lists every model it routes, the ones with a stand-in included.
    assert plan.outputs["gateways"]["use1"]["models"] == ["llama-3-1-8b", "qwen-coder", "qwen2-5-7b"]


def test_prods_70b_with_the_8b_standing_in_where_both_run():
    plan = plan_config(stand_in_prod(), stack="prod")
    rules = {
        cluster: rule_
        for (cluster, name), route in cluster_objects(plan, "AIGatewayRoute").items()
        if name.startswith(stand_in.ROUTE_PREFIX)
        for rule_ in route["spec"]["rules"]
    }
    assert sorted(rules) == ["prod-use1", "prod-usw2"]  # not usc1, where the 8B is not placed
    for rule_ in rules.values():
        tenants = {h["value"] for m in rule_["matches"] for h in m["headers"] if h["name"] == "x-tenant-id"}
        assert tenants == {"evals", "search"}
        assert rule_["backendRefs"][1]["modelNameOverride"] == "llama-3-1-8b"
    # The 70B keeps its picker where it has no stand-in.
    pools = {(cluster, name) for cluster, name in cluster_objects(plan, "InferencePool")}
    assert ("prod-usc1", "llama-3-1-70b") in pools and ("prod-use1", "llama-3-1-70b") not in pools


def test_a_model_no_tenant_may_call_gets_no_stand_in_rule():
    """A rule without matches would take every request of the gateway."""
    config = stand_in_dev()
    config[ns("tenants")][0]["models"].remove("qwen-coder")
    plan = plan_config(config, stack="dev")
    routes = cluster_objects(plan, "AIGatewayRoute")
    assert all(r["matches"] for route in routes.values() for r in route["spec"]["rules"])
    ((_, route),) = [(k, r) for k, r in routes.items() if k[1].startswith(stand_in.ROUTE_PREFIX)]
    assert [r["name"] for r in route["spec"]["rules"]] == ["qwen2-5-7b"]
    assert "qwen-coder-direct" not in {name for _, name in cluster_objects(plan, "Backend")}
