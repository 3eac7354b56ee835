"""The offline plan writes exactly the DESIGN.md §3 contract."""

from __future__ import annotations

import json
import shutil

import pytest

from tests import plan_store
from tests.harness import kubernetes_object_keys
from tools.plan.__main__ import main as plan_main
from tools.plan.artifacts import OWNED_FILES, safe_file_name

OPTION_KEYS = {
    "protect",
    "retainOnDelete",
    "dependsOn",
    "ignoreChanges",
    "deleteBeforeReplace",
    "replaceOnChanges",
    "customTimeouts",
}


@pytest.fixture(scope="module", params=["dev", "prod"])
def written(request, plan_command_output):
    return request.param, plan_command_output(request.param)


@pytest.mark.plan
def test_plan_json_follows_the_contract(written):
    env, out = written
    doc = json.loads((out / "plan.json").read_text())
    stacks = doc.get("stacks", [])
    assert set(doc) == {"environment", "project", "resources", "outputs", "cost"} | ({"stacks"} if stacks else set())
    assert stacks == ([] if env == "dev" else ["prod.use1", "prod.usw2", "prod.usc1", "prod.global"])
    assert doc["environment"] == env
    assert doc["project"] == "inference-platform"
    urns = {r["urn"] for r in doc["resources"]}
    for r in doc["resources"]:
        assert set(r) == {
            "urn",
            "type",
            "name",
            "parent",
            "provider",
            "custom",
            "inputs",
            "options",
            "propertyDependencies",
            "secretDigests",
        }
        assert set(r["secretDigests"]) <= {p for p, _ in _redacted(r["inputs"])}, "a digest only where a secret is"
        assert all(dep in urns for deps in r["propertyDependencies"].values() for dep in deps)
        assert set(r["options"]) == OPTION_KEYS
        assert r["urn"].startswith(tuple(f"urn:pulumi:{s}::inference-platform::" for s in stacks or [env]))
        assert r["urn"].endswith("::" + r["name"])
        stack_roots = tuple("Stack::inference-platform-" + s for s in stacks or [env])
        assert r["parent"] is None or r["parent"] in urns or r["parent"].endswith(stack_roots)
        assert r["provider"] is None or r["provider"] in urns
        assert all(dep in urns for dep in r["options"]["dependsOn"])
    assert set(doc["outputs"]) >= {"clusters", "kubeconfigs"}


@pytest.mark.plan
def test_every_other_artifact_is_written(written):
    env, out = written
    assert (out / "manifests").is_dir()
    assert (out / "helm").is_dir()
    doc = json.loads((out / "plan.json").read_text())
    # Several stacks: each stack's own plan under stacks/<stack>/.
    stacks = sorted(p.parent.name for p in (out / "stacks").glob("*/plan.json"))
    assert stacks == sorted(doc.get("stacks", []))
    assert len(stacks) == (0 if env == "dev" else 4)
    assert isinstance(json.loads((out / "policy.json").read_text()), list)
    md = (out / "plan.md").read_text()
    assert md.startswith(f"# Plan: `{env}`")
    assert "```mermaid\nflowchart LR" in md
    assert "## Resources per region and component" in md


def test_resource_types_are_engine_tokens(env_plan):
    assert {r.custom for r in env_plan.resources} == {True, False}, "the plan has custom and component resources"
    for r in env_plan.resources:
        assert r.type.count(":") >= 2, r.type


def test_every_cloud_resource_names_an_explicit_provider(env_plan):
    """Default providers are disabled in the stack files; nothing may rely on them."""
    checked = set()
    for r in env_plan.resources:
        if r.custom and not r.type.startswith("pulumi:providers:"):
            assert r.provider, f"{r.urn} has no explicit provider"
            checked.add(r.type)
    # both environments have an EKS cluster (use1), Helm releases and Kubernetes objects
    assert {"aws:eks/cluster:Cluster", "kubernetes:helm.sh/v3:Release", "kubernetes:core/v1:Namespace"} <= checked


def test_each_cluster_has_its_own_kubernetes_provider(env_plan):
    """One per region's cluster, and one for the Karmada API server when the environment is federated."""
    karmada = [f"{env_plan.environment}-karmada"] if env_plan.spec.federation.enabled else []
    for part in env_plan.stacks.values() or [env_plan]:  # a provider per cluster within each stack
        names = [p.name for p in part.of_type("pulumi:providers:kubernetes")]
        assert len(names) == len(set(names)), part.environment
    providers = env_plan.of_type("pulumi:providers:kubernetes")
    assert sorted({p.name for p in providers}) == sorted(
        [f"{env_plan.environment}-{r.name}" for r in env_plan.spec.regions] + karmada
    )


def test_kubeconfigs_are_exported_as_secrets(env_plan):
    assert env_plan.outputs["kubeconfigs"] == "[secret]"
    assert set(env_plan.outputs["clusters"]) == {r.name for r in env_plan.spec.regions}


def test_secret_values_never_appear_in_plan_or_manifests(env_plan):
    from tools.plan.artifacts import helm_files, manifest_files, plan_document

    text = json.dumps([plan_document(env_plan), manifest_files(env_plan), helm_files(env_plan)])
    assert env_plan.evaluation.secret_values, "expected at least one secret (the kubeconfigs)"
    for secret in env_plan.evaluation.secret_values:
        assert secret not in text


def test_resource_counts_per_region_in_plan_md(prod_plan):
    from tools.plan.report import component_counts

    counts = component_counts(prod_plan)
    # None: environment level (tenants' API keys, the Karmada federation)
    assert set(counts) == {"use1", "usw2", "usc1", None}
    total = sum(sum(c.values()) for c in counts.values())
    assert total == sum(r.custom for r in prod_plan.resources)


def test_diagram_shows_regions_pools_models_gateways_and_federation(prod_plan):
    from tools.plan.report import render_markdown

    md = render_markdown(prod_plan)
    diagram = md[md.index("```mermaid") : md.index("```", md.index("```mermaid") + 3)]
    for region in prod_plan.spec.regions:
        assert f'subgraph r_{region.name}["{region.name}: {region.cloud} {region.region}"]' in diagram
        for pool in region.gpu_pools:
            assert f"GPU pool {pool.name}<br/>{pool.machine_type}" in diagram
        assert f'g_{region.name}[/"gateway {region.name}.' in diagram
    for model in prod_plan.spec.models:
        assert f"model {model.name}<br/>{model.runtime}" in diagram
    # One node per placement, inside its region, one edge to its pool; a federated one its member's range.
    assert 'm_usc1_mistral_7b_trt_l4(["model mistral-7b-trt<br/>triton · 1-4 replicas"])' in diagram
    assert "m_usc1_mistral_7b_trt_l4 --> p_usc1_l4" in diagram
    assert 'm_usw2_llama_3_1_70b_h100(["model llama-3-1-70b<br/>vllm · 1-4 replicas"])' in diagram
    assert 'g_usc1[/"gateway usc1.llm.acme.example<br/>internal · 2 models"/]' in diagram
    # The host is one edge (host and member), the other members one each; no route or tenant edges tangle it.
    assert 'fed ===|"host · member · H100-80GB, L40S"| c_use1' in diagram
    assert 'fed -.-|"member · H200-141GB, L4, A100-80GB"| c_usc1' in diagram
    assert diagram.count("  fed ") == 3  # use1 (host), usw2, usc1
    assert "route" not in diagram and "tenant" not in diagram
    edges = [
        line.strip() for line in diagram.splitlines() if any(e in line for e in (" --- ", " --> ", " -.-", " ==="))
    ]
    # 7 pools, 7 placements (llama-3-1-70b in 3 regions, -8b in 2, -70b-rag, mistral-7b-trt), 3 gateways, 3 members
    assert len(edges) == len(set(edges)) == 20


# --- reproducible artifacts -------------------------------------------------------------------------------------


@pytest.mark.plan
def test_two_plans_of_the_same_commit_are_byte_identical(tmp_path, fixture_project, plan_command_output):
    """Resources register in an order asyncio picks; every artifact must not depend on it. The first plan is the
    session's (the same command on the same project, its own program runs: another worker's, or earlier in this
    process), the second this test's own."""
    first, second = plan_command_output("prod"), tmp_path / "second"
    runs = len(plan_store.evaluations)
    assert plan_main(["prod", "--project-dir", str(fixture_project), "--out", str(second), "--quiet"]) == 0
    assert len(plan_store.evaluations) - runs == 7, "prod's 4 stacks and 3 network-first programs, evaluated anew"
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert len(files) > 200
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    differing = [f for f in files if (first / f).read_bytes() != (second / f).read_bytes()]
    assert differing == []


@pytest.mark.plan
def test_artifact_names_are_ones_ci_artifact_stores_accept(written):
    """actions/upload-artifact refuses `"  :  <  >  |  *  ?` and CR/LF in paths; RBAC object names have `:`."""
    _env, out = written
    paths = [p.relative_to(out).as_posix() for p in out.rglob("*")]
    assert len(paths) > 50
    assert [p for p in paths if any(c in p for c in '":<>|*?\r\n')] == []


def test_safe_file_names_replace_only_what_stores_refuse():
    assert safe_file_name("ClusterRole-system:karmada:agent") == "ClusterRole-system_karmada_agent"
    assert safe_file_name("Deployment-vllm-8b.v1") == "Deployment-vllm-8b.v1"


@pytest.mark.plan
def test_a_plan_replaces_its_own_files_and_nothing_else(tmp_path, fixture_project, plan_command_output):
    out = tmp_path / "out"
    project = ["--project-dir", str(fixture_project)]
    shutil.copytree(plan_command_output("dev"), out)  # what the same command wrote before: the session's plan of dev
    stale = out / "manifests" / "gone" / "_cluster" / "Namespace-removed.yaml"
    stale.parent.mkdir(parents=True)
    stale.write_text("kind: Namespace\n")
    (out / OWNED_FILES).write_text((out / OWNED_FILES).read_text() + "manifests/gone/_cluster/Namespace-removed.yaml\n")
    notes = out / "my-notes.txt"
    notes.write_text("not the plan's")
    assert plan_main(["dev", *project, "--out", str(out), "--quiet"]) == 0
    assert not stale.exists() and not stale.parent.parent.exists()
    assert notes.read_text() == "not the plan's"
    assert (out / "plan.json").is_file()


def test_a_directory_no_plan_wrote_is_refused_untouched(tmp_path, capsys):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print('hi')\n")
    assert plan_main(["dev", "--out", str(tmp_path), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: --out {tmp_path}: the directory has files no plan wrote; choose an empty or new directory"
    )
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["main.py", "src"]


def test_no_kubernetes_object_is_declared_twice(env_plan):
    """Two resources creating one object: the API server answers the second create with AlreadyExists."""
    keys = kubernetes_object_keys(env_plan)
    assert len(keys) > 50
    assert sorted(k for k in set(keys) if keys.count(k) > 1) == []


def _redacted(value, path=""):
    """(path, value) of every input the plan shows as the secret marker."""
    if value == "[secret]":
        return [(path, value)]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _redacted(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _redacted(v, f"{path}[{i}]")]
    return []
