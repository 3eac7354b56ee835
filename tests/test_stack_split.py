"""An environment as a set of stacks: one per region and a global one, or the single stack of a small one."""

from __future__ import annotations

import runpy
from collections import Counter

import pytest

from components.checks.loader import load_environment
from components.config.base import ConfigError
from components.domain.stack_split import environment_stacks, resolve_stack
from stacks.config import environment_file_config
from tests.harness import ENVIRONMENTS_DIR, plan_config, raw_environment
from tools.plan.engine import evaluate
from tools.plan.runner import PROJECT_DIR

PROD_STACKS = ["prod.use1", "prod.usw2", "prod.usc1", "prod.global"]
CLUSTER = "kubernetes:cluster.karmada.io/v1alpha1:Cluster"


def _stack_of(urn: str) -> str:
    return urn.split("::", 1)[0].removeprefix("urn:pulumi:")


def test_prod_is_a_stack_per_region_and_a_global_one_dev_is_one(prod_plan):
    assert list(prod_plan.stacks) == PROD_STACKS
    dev = load_environment(raw_environment("dev"))
    assert [s.name for s in environment_stacks(dev, "dev")] == ["dev"]


def test_every_resource_lives_in_exactly_one_stack(prod_plan):
    urns = [r.urn for r in prod_plan.resources]
    assert len(urns) == len(set(urns)) > 600
    per_stack = {name: {r.urn for r in part.resources} for name, part in prod_plan.stacks.items()}
    assert sum(len(u) for u in per_stack.values()) == len(urns)
    for name, owned in per_stack.items():
        assert owned and {_stack_of(u) for u in owned} == {name}


def test_each_stack_reads_only_stacks_deployed_before_it(prod_plan):
    order = {s.name: i for i, s in enumerate(environment_stacks(prod_plan.spec, "prod"))}
    reads = {name: part.evaluation.reads_stacks for name, part in prod_plan.stacks.items()}
    # The anchor (use1: tenant keys, Karmada) reads nothing; the others read it; global reads every region.
    assert reads == {
        "prod.use1": (),
        "prod.usw2": ("prod.use1",),
        "prod.usc1": ("prod.use1",),
        "prod.global": ("prod.usc1", "prod.use1", "prod.usw2"),
    }
    for name, read in reads.items():
        assert all(order[r] < order[name] for r in read), name


def test_what_lives_where(prod_plan):
    """The host keeps the control plane and the tenant keys; members their agents; global Karmada's objects."""

    def stacks_of(type_: str) -> set[str]:
        return {_stack_of(r.urn) for r in prod_plan.of_type(type_)}

    assert stacks_of("inference-platform:serving:TenantApiKeys") == {"prod.use1"}
    assert stacks_of("inference-platform:federation:KarmadaControlPlane") == {"prod.use1"}
    assert stacks_of("inference-platform:federation:KarmadaAgent") == {"prod.use1", "prod.usw2", "prod.usc1"}
    # The host registers itself in its own stack (it joins in its own wave); the global stack the others.
    assert stacks_of(CLUSTER) == {"prod.use1", "prod.global"}
    assert stacks_of("aws:s3/bucketReplicationConfig:BucketReplicationConfig") == {"prod.global"}
    assert stacks_of("gcp:storage/transferJob:TransferJob") == {"prod.global"}
    assert stacks_of("aws:eks/cluster:Cluster") == {"prod.use1", "prod.usw2"}


def _single_stack_prod() -> dict:
    """prod as one stack: only possible when one runner reaches every API (public endpoints open to it)."""
    raw = raw_environment("prod")
    raw["stacks"] = {**raw["stacks"], "layout": "single"}
    for region in raw["regions"]:
        region["apiAccess"] = {"publicCidrs": ["203.0.113.0/24"]}
    return raw


def test_the_split_adds_only_what_crosses_stacks(prod_plan):
    """Same resources by type and name as one stack, plus each stack's own providers and the allowlist patch."""
    single = plan_config(_single_stack_prod(), stack="prod")
    split = Counter((r.type, r.name) for r in prod_plan.resources)
    whole = Counter((r.type, r.name) for r in single.resources)
    assert whole - split == Counter()
    assert split - whole == Counter(
        {
            # the global stack's providers: the source bucket's and the GCS sink's clouds, Karmada's API
            # and the host cluster (for the allowlist)
            ("pulumi:providers:aws", "use1-aws"): 1,
            ("pulumi:providers:gcp", "usc1-gcp"): 1,
            ("pulumi:providers:kubernetes", "prod-karmada"): 1,
            ("pulumi:providers:kubernetes", "prod-use1"): 1,
            ("kubernetes:core/v1:ServicePatch", "prod-use1-karmada-apiserver-allowlist"): 1,
            # split, the EKS regions are deployed from runners inside their VPCs (one stack reached them over
            # public endpoints): each cluster security group admits its VPC on 443
            ("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "use1-api-deployer-0"): 1,
            ("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "usw2-api-deployer-0"): 1,
        }
    )


@pytest.mark.plan
def test_in_one_stack_each_agents_access_follows_its_cluster_and_flags_and_replication_versioning():
    plan = plan_config(_single_stack_prod(), stack="prod")
    assert plan.stacks == {} and {_stack_of(r.urn) for r in plan.resources} == {"prod"}
    for member in ("prod-use1", "prod-usw2", "prod-usc1"):
        agent = plan.named(f"{member}-karmada-agent", "kubernetes:helm.sh/v3:Release")
        flags = plan.named(f"{member}-karmada-agent-flags", "kubernetes:apps/v1:DeploymentPatch")
        cluster = plan.named(f"prod-karmada-cluster-{member}", CLUSTER)
        binding = plan.named(f"prod-karmada-system-karmada-{member}-agent-binding")
        assert agent.inputs["skipAwait"] is True and agent.urn in flags.options["dependsOn"], member
        assert {cluster.urn, agent.urn, flags.urn} <= set(binding.options["dependsOn"]), member
    config = plan.named("use1-models-replication-config")
    versioning = {r.urn for r in plan.of_type("aws:s3/bucketVersioning:BucketVersioning")}
    assert len(versioning) == 2 and versioning <= set(config.options["dependsOn"])
    # One stack: the Service carries the whole allowlist itself (3 + 3 NAT gateways, usc1's one, the runner's).
    (service,) = [r for r in plan.of_type("kubernetes:core/v1:Service") if r.name.endswith("apiserver-external")]
    assert len(service.inputs["spec"]["loadBalancerSourceRanges"]) == 8
    assert [p for p in plan.of_type("kubernetes:core/v1:ServicePatch") if p.name.endswith("-allowlist")] == []


@pytest.mark.parametrize(
    ("stack", "fragment"),
    [
        ("prod", "not one of this environment's stacks (prod.use1, prod.usw2, prod.usc1, prod.global)"),
        ("prod.euw1", "`pulumi stack select prod.use1`"),
    ],
)
def test_a_stack_that_is_not_one_of_the_environment_is_refused(stack, fragment):
    with pytest.raises(ConfigError) as refused:
        resolve_stack(load_environment(raw_environment("prod")), stack)
    (issue,) = refused.value.issues
    assert issue.path == "stacks.layout" and fragment in issue.message


def test_a_region_stack_of_a_single_stack_environment_is_refused():
    with pytest.raises(ConfigError) as refused:
        resolve_stack(load_environment(raw_environment("dev")), "dev.use1")
    assert "deploy it as stack 'dev'" in str(refused.value.issues[0])


def test_a_region_stack_reads_its_environment_file(prod_plan, monkeypatch):
    """`pulumi up -s prod.usw2`: the engine passes no environment; the program reads Pulumi.prod.yaml in the
    directory it runs in (the CLI's: the stack files')."""
    part = prod_plan.stacks["prod.usw2"]
    monkeypatch.chdir(ENVIRONMENTS_DIR)
    evaluation = evaluate(
        lambda: runpy.run_path(str(PROJECT_DIR / "__main__.py"), run_name="__main__"),
        project="inference-platform",
        stack="prod.usw2",
        config={},
        stack_outputs={"prod.use1": prod_plan.stacks["prod.use1"].evaluation.referenced},
    )
    assert [(r.type, r.name, r.inputs) for r in evaluation.resources] == [
        (r.type, r.name, r.inputs) for r in part.resources
    ]


def test_an_environment_file_secret_is_refused_for_a_region_stack(tmp_path):
    (tmp_path / "Pulumi.acme.yaml").write_text(
        "config:\n  inference-platform:gateway:\n    externalProviders:\n      - apiKey: {secure: AAEA}\n"
    )
    with pytest.raises(ConfigError) as refused:
        environment_file_config("acme.use1", tmp_path)
    (issue,) = refused.value.issues
    assert issue.path == "inference-platform:gateway"
    assert "pulumi config set --secret --path -s acme.use1 'inference-platform:gateway'" in issue.message


def test_an_environment_file_is_read_as_the_engine_passes_config(tmp_path):
    (tmp_path / "Pulumi.acme.yaml").write_text("config:\n  inference-platform:production: true\n  labelDomain: x.io\n")
    assert environment_file_config("acme.global", tmp_path) == {
        "inference-platform:production": "true",
        "inference-platform:labelDomain": "x.io",
    }
    assert environment_file_config("acme", tmp_path) == {}  # a stack of its own: the engine passes its config


def test_plan_md_lists_every_stack_in_its_wave(prod_plan):
    from tools.plan.report import render_markdown

    md = render_markdown(prod_plan)
    assert "## Stacks and rollout" in md
    rows = [line for line in md.splitlines() if line.startswith("| ") and "`prod." in line.split("|")[2]]
    assert [row.split("|")[1].strip() for row in rows] == ["canary", "aws", "gcp", "global"]
    assert "| `prod.usw2` |" in rows[1] and "| `prod.use1` |" in rows[1]  # what it reads
    assert "## Stacks and rollout" not in render_markdown(plan_config(raw_environment("dev"), stack="dev"))


@pytest.mark.plan
def test_a_private_link_deployer_is_admitted_on_the_private_endpoint():
    """The link is the user's (VPN, peering, Interconnect); the cluster must accept its sources on port 443."""
    from policies.offline import evaluate_plan

    raw = raw_environment("prod")
    raw["regions"][1]["deployer"] = {"kind": "privateLink", "cidrs": ["10.200.0.0/24"]}
    raw["regions"][2]["deployer"] = {"kind": "privateLink", "cidrs": ["10.201.0.0/24", "10.202.0.0/24"]}
    plan = plan_config(raw, stack="prod")
    (rule,) = [
        r
        for r in plan.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
        if r.name.startswith("usw2-api-deployer")
    ]
    assert _stack_of(rule.urn) == "prod.usw2" and "private link" in rule.inputs["description"]
    # The cluster's provider is first used once the rule admits the runner.
    (provider,) = [r for r in plan.of_type("pulumi:providers:kubernetes") if r.name == "prod-usw2"]
    assert rule.urn in provider.options["dependsOn"]
    assert (rule.inputs["cidrIpv4"], rule.inputs["fromPort"], rule.inputs["toPort"]) == ("10.200.0.0/24", 443, 443)
    assert rule.inputs["securityGroupId"].startswith("sg-")
    (gke,) = plan.of_type("gcp:container/cluster:Cluster")
    authorized = [b["cidrBlock"] for b in gke.inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"]]
    assert authorized[-2:] == ["10.201.0.0/24", "10.202.0.0/24"]
    assert gke.inputs["privateClusterConfig"]["enablePrivateEndpoint"] is True
    assert evaluate_plan(plan).mandatory == []


@pytest.mark.plan
def test_the_prod_dry_run_shows_every_wave_from_the_offline_plans(capsys, fixture_project):
    """`make rollout ENV=prod DRY_RUN=1`: no credentials, no Pulumi CLI."""
    from tools.rollout.__main__ import main

    assert main(["prod", "--project-dir", str(fixture_project), "--dry-run"]) == 0
    out = capsys.readouterr().out
    waves = [line.split("wave ", 1)[1].strip(" ─") for line in out.splitlines() if "── wave " in line]
    assert waves == ["1: canary", "2: aws", "3: gcp", "4: global"]
    assert "prod.usw2 (region, reads prod.use1)" in out
    assert "prod.global (global, reads prod.use1, prod.usw2, prod.usc1)" in out
