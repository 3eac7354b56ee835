"""The bench's pure parts: synthetic environments, the SDK floors, figures. No timings asserted."""

from __future__ import annotations

import json
import sys
from ipaddress import IPv4Network

import pulumi
import pulumi_kubernetes as k8s
import pytest

from components.config.stackfile import stack_config_from_mapping
from tests import plan_store
from tests.harness import ENVIRONMENTS_DIR, environment_config, evaluate_program, plan_for
from tools.bench.__main__ import growth, policy_figures
from tools.bench.baseline import baseline_program, program_runs, sdk_class
from tools.bench.child import main as child_main
from tools.bench.measure import run_process, stats
from tools.bench.synthetic import synthetic_config, validated
from tools.plan.artifacts import plan_document
from tools.plan.engine import evaluate

NS = "inference-platform:"
TEMPLATE = environment_config("prod")  # the fixture prod, not the shipped one `make bench` copies


@pytest.mark.parametrize("regions", [1, 2, 8])
def test_synthetic_config_is_a_valid_environment_of_n_identical_regions(regions):
    env = validated(synthetic_config(regions, TEMPLATE))
    template = next(r for r in TEMPLATE[NS + "regions"] if r["cloud"] == "aws")

    assert [r.name for r in env.regions] == [f"r{n}" for n in range(1, regions + 1)]  # r1, r2, ...
    for region in env.regions:
        shape = region.model_dump(by_alias=True, mode="json", exclude={"name", "network"})
        alone = {NS + "regions": [template], NS + "modelStore": TEMPLATE[NS + "modelStore"]}
        assert shape == validated(alone).regions[0].model_dump(by_alias=True, mode="json", exclude={"name", "network"})
    cidrs = [r.network.cidr for r in env.regions]
    assert len(set(cidrs)) == regions
    assert all(c.prefixlen == IPv4Network(template["network"]["cidr"]).prefixlen for c in cidrs)
    assert not any(a.overlaps(b) for i, a in enumerate(cidrs) for b in cidrs[i + 1 :])
    for model in env.models:
        assert sorted({p.region for p in model.placements}) == sorted(r.name for r in env.regions)
    assert env.federation.enabled == (regions > 1)


def test_synthetic_config_keeps_only_models_and_tenants_of_the_template_region():
    config = synthetic_config(2, TEMPLATE)
    assert [m["name"] for m in config[NS + "models"]] == ["llama-3-1-70b", "llama-3-1-8b", "llama-3-1-70b-rag"]
    assert {t["name"]: t["models"] for t in config[NS + "tenants"]} == {
        "search": ["llama-3-1-70b", "llama-3-1-70b-rag", "llama-3-1-8b"],
        "support-bot": ["llama-3-1-8b"],
        "evals": ["llama-3-1-70b"],
        "legal": ["llama-3-1-8b"],
        "rollout-probe": ["llama-3-1-8b"],  # the SLO gate's tenant (rollout.slo)
    }
    # quotas of the template region are repeated on every copy, and nothing else
    assert [q["region"] for q in config[NS + "tenants"][0]["gpuQuotas"]] == ["r1", "r2"]
    assert config[NS + "federation"]["host"] == "r1"


def test_synthetic_config_needs_a_region():
    with pytest.raises(ValueError, match="at least one region"):
        synthetic_config(0, TEMPLATE)


def _registered(document: dict) -> tuple[list, dict]:
    """What was registered; property dependencies and secret digests left out: the floor registers literal values,
    not Outputs."""
    resources = [
        {k: v for k, v in r.items() if k not in ("propertyDependencies", "secretDigests")}
        for r in document["resources"]
    ]
    return sorted((r["urn"], json.dumps(r, sort_keys=True)) for r in resources), document["outputs"]


# Both floors of dev; prod's typed one, and its plain one on the GCP stack (the types dev has not): what tells the
# floors apart is one line, the plain floor's type-agnostic `pulumi.CustomResource(type, name, props, opts)`, while
# every other path (options, providers, components, secrets, each of prod's types and stacks) is the typed floor's
# too. (prod's whole plain floor took 1-2 s of CPU.) A floor runs once per run of the plan's program: each stack, and
# after a region stack its network-first bootstrap (prod's GKE one among them).
@pytest.mark.plan
@pytest.mark.parametrize(
    ("env", "typed", "runs"),
    [
        ("dev", False, ["dev"]),
        ("dev", True, ["dev"]),
        ("prod", True, ["prod.use1", "prod.use1", "prod.usw2", "prod.usw2", "prod.usc1", "prod.usc1", "prod.global"]),
        ("prod.usc1", False, ["prod.usc1", "prod.usc1"]),
    ],
    ids=["dev-plain", "dev-typed", "prod-typed", "prod-gcp-plain"],
)
def test_sdk_floor_registers_exactly_what_the_plans_runs_register(env, typed, runs):
    plan = plan_for(env.split(".")[0])
    documents = [d for d in program_runs(plan) if "." not in env or d["environment"] == env]
    assert [d["environment"] for d in documents] == runs
    stacks = [plan.stacks[env]] if "." in env else list(plan.stacks.values()) or [plan]
    pieces = [piece for stack in stacks for piece in (stack, stack.bootstrap) if piece is not None]
    assert [_registered(d) for d in documents] == [
        _registered(json.loads(json.dumps(plan_document(p)))) for p in pieces
    ]
    assert any(r["type"].startswith("gcp:") for d in documents for r in d["resources"]) == (env != "dev")
    for document in documents:
        floor = evaluate(
            baseline_program(document, typed), project=document["project"], stack=document["environment"], config={}
        )
        assert _registered(json.loads(json.dumps(plan_document(_wrap(floor, plan))))) == _registered(document)


def _wrap(evaluation, like):
    from tools.plan.model import Plan

    return Plan(environment=like.environment, project=like.project, evaluation=evaluation)


def test_typed_floor_reproduces_kubernetes_objects_custom_resources_and_helm_releases():
    def program():
        provider = k8s.Provider("cluster", kubeconfig="{}")
        opts = pulumi.ResourceOptions(provider=provider)
        ns = k8s.core.v1.Namespace("ns", metadata={"name": "serving", "labels": {"a": "b"}}, opts=opts)
        k8s.apiextensions.CustomResource(
            "queue",
            api_version="scheduling.volcano.sh/v1beta1",
            kind="Queue",
            metadata={"name": "q"},
            spec={"weight": 1, "reclaimable": True},
            opts=pulumi.ResourceOptions(provider=provider, depends_on=[ns]),
        )
        k8s.helm.v3.Release(
            "release",
            chart="volcano",
            version="1.12.1",
            namespace="serving",
            repository_opts={"repo": "https://volcano-sh.github.io/helm-charts"},
            values={"custom": {"scheduler_name": "volcano"}},
            opts=opts,
        )

    plan = evaluate_program(program)
    document = json.loads(json.dumps(plan_document(plan)))
    floor = evaluate(baseline_program(document, typed=True), project=plan.project, stack=plan.environment, config={})
    assert _registered(json.loads(json.dumps(plan_document(_wrap(floor, plan))))) == _registered(document)
    assert sdk_class("kubernetes:scheduling.volcano.sh/v1beta1:Queue") is k8s.apiextensions.CustomResource


@pytest.mark.slow
def test_sdk_class_resolves_provider_classes_and_skips_our_components():
    import pulumi_aws as aws

    assert sdk_class("aws:ec2/vpc:Vpc") is aws.ec2.Vpc
    assert sdk_class("pulumi:providers:aws") is aws.Provider
    assert sdk_class("inference-platform:aws:Network") is None


@pytest.mark.plan
@pytest.mark.parametrize("env", ["dev", "prod.usc1"])  # one run; a stack and its network-first bootstrap
def test_floor_child_reports_phase_times_and_what_it_registered(env, tmp_path, capsys):
    plan = plan_for(env.split(".")[0])
    stack = plan.stacks[env] if "." in env else plan
    runs = [stack] if stack.bootstrap is None else [stack, stack.bootstrap]
    assert len(runs) == (2 if "." in env else 1)
    path = tmp_path / "runs.json"
    path.write_text(json.dumps([d for d in program_runs(plan) if d["environment"] == env]))
    assert child_main(["floor", "--runs-json", str(path), "--typed"]) == 0
    (times,) = json.loads(capsys.readouterr().out)["runs"]
    assert (times["registered"], times["program_runs"]) == (sum(len(r.resources) for r in runs), len(runs))
    assert set(times["wall"]) == {"evaluate", "sdk_imports"}


def test_profiled_time_is_charged_to_whose_code_it_is():
    from tools.bench.child import _origin
    from tools.plan.runner import PROJECT_DIR

    site = "/usr/lib/python3.11/site-packages"
    assert _origin(str(PROJECT_DIR / "components/k8s/helm.py")) == "program"
    assert _origin(str(PROJECT_DIR / "stacks/region.py")) == "program"
    assert _origin(str(PROJECT_DIR / "tools/plan/engine.py")) == "engine"
    assert _origin(f"{site}/pulumi/runtime/rpc.py") == "pulumi"
    assert _origin(f"{site}/pulumi_kubernetes/core/v1/ConfigMap.py") == "providers"
    assert _origin(str(PROJECT_DIR / ".venv/lib/python3.11/site-packages/pulumi/output.py")) == "pulumi"
    assert _origin("/usr/lib/python3.11/asyncio/base_events.py") == "other"
    assert _origin("~") == "other"  # a built-in


@pytest.mark.plan
def test_profile_child_shares_a_warm_plans_time_by_origin(monkeypatch, capsys):
    from tools.bench import child

    config = environment_config("dev")
    monkeypatch.setattr(
        child,
        "_stack_config",
        lambda args: stack_config_from_mapping(
            "inference-platform", "dev", config, ENVIRONMENTS_DIR / "Pulumi.dev.yaml"
        ),
    )
    plan_store.asked("planned dev twice under the profiler")
    assert child_main(["profile", "--env", "dev"]) == 0
    shares = json.loads(capsys.readouterr().out)["shares"]
    assert set(shares) == {"program", "engine", "pulumi", "providers", "other"}
    assert sum(shares.values()) == pytest.approx(1.0)
    assert 0 < shares["program"] < shares["pulumi"]


@pytest.mark.slow
def test_run_process_reports_the_childs_own_peak_memory():
    small = run_process([sys.executable, "-c", "pass"])
    big = run_process([sys.executable, "-c", "b = bytearray(100 * 2**20); b[::4096] = b'x' * len(b[::4096])"])
    assert big.peak_rss_mib > small.peak_rss_mib + 90
    assert run_process([sys.executable, "-c", "raise SystemExit(3)"], check=False).exit_code == 3


def test_stats_and_growth():
    assert stats([3.0, 1.0, 2.0]) == {"min": 1.0, "median": 2.0, "runs": [3.0, 1.0, 2.0]}
    rows = [
        {"ms": {"wall": stats([2.0, 4.0]), "cpu": stats([1.0, 1.0])}},
        {"ms": {"wall": stats([3.0, 5.0]), "cpu": stats([1.5, 1.5])}},
    ]
    assert growth(rows, "ms") == {"wall": {"min": 1.5, "median": 4.0 / 3.0}, "cpu": {"min": 1.5, "median": 1.5}}


def test_policy_is_reported_unavailable_until_plan_times_a_policy_phase():
    times = [
        {"wall": {"config": 0.1, "evaluate": 0.8, "write": 0.1}, "cpu": {"config": 0.1, "evaluate": 0.8, "write": 0.1}}
    ]
    plans = {"dev": {"policy_available": False, "registrations": 10, "_times": times}}
    assert policy_figures(plans)["available"] is False

    with_policy = [{clock: {**t, "policy": 0.1} for clock, t in times[0].items()}]
    plans = {"dev": {"policy_available": True, "registrations": 10, "_times": with_policy}}
    figures = policy_figures(plans)
    assert figures["available"] is True
    assert figures["dev"]["ms_per_resource"]["cpu"]["median"] == pytest.approx(10.0)
    assert figures["dev"]["share_of_plan"]["cpu"]["median"] == pytest.approx(0.1 / 1.1)
