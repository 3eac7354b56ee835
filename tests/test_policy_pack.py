"""The pack end to end: on the real dev/prod plans, on a broken environment, in `plan`, under the engine's
analyzer protocol (the real PolicyPack process over gRPC), and in the README."""

from __future__ import annotations

import base64
import copy
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace

import grpc
import pytest
from google.protobuf import struct_pb2
from pulumi.runtime.proto import analyzer_pb2 as proto
from pulumi.runtime.proto import analyzer_pb2_grpc

import policies.check
import policies.offline
from policies import docs
from policies.check import check_saved_plan
from policies.check import main as policy_check_main
from policies.framework import Evaluation, PackSettings, evaluate_stack
from policies.model import UNKNOWN, Resource
from policies.offline import evaluate_plan, plan_resources, plan_settings
from policies.rules import ALL_RULES
from tests.harness import PackBaseline, plan_for
from tests.policy_fixtures import compliant, find
from tests.test_policy_rules import CASES, SETTINGS, run
from tools.conformance import is_custom_resource
from tools.plan.__main__ import main as plan_main
from tools.plan.artifacts import plan_document
from tools.plan.model import Plan
from tools.plan.runner import check_policy
from tools.policy_pack import assemble

UNKNOWN_STRING = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


# --- the real environments -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def judged() -> Callable[[Plan], tuple[PackBaseline, Evaluation]]:
    """A plan's whole-pack evaluation (`evaluate_plan`) and its pack baseline, to judge mutated copies of it by
    re-judging only what changed (tests/harness.py PackBaseline, checked against the whole pack in
    tests/test_policy_mutations.py), once per plan."""
    found: dict[int, tuple[Plan, PackBaseline, Evaluation]] = {}

    def of(plan: Plan) -> tuple[PackBaseline, Evaluation]:
        if id(plan) not in found:
            found[id(plan)] = (
                plan,
                PackBaseline.of(plan_resources(plan), plan_settings(plan)),
                evaluate_plan(plan),
            )
        _, pack, whole = found[id(plan)]
        return pack, whole

    return of


def test_dev_and_prod_plans_have_no_mandatory_violations(env_plan, judged):
    _, evaluation = judged(env_plan)
    assert not evaluation.mandatory, [f"{f.policy}: {f.message}" for f in evaluation.mandatory]
    assert not [f for f in evaluation.findings if f.kind == "error"]


def _plan_with(env_plan, change) -> list[Resource]:
    resources = plan_resources(env_plan)
    change(resources)
    return resources


def _named(resources, type_, name):
    return next(r for r in resources if r.type == type_ and r.name == name)


@pytest.mark.plan
@pytest.mark.parametrize(
    ("env", "rule", "change"),
    [
        (
            "dev",
            "eks-endpoint-not-public",
            lambda rs: (
                _named(rs, "aws:eks/cluster:Cluster", "use1-cluster")
                .props["vpcConfig"]
                .update(publicAccessCidrs=["0.0.0.0/0"])
            ),
        ),
        (
            "dev",
            "irsa-trust-pinned",
            lambda rs: _named(rs, "aws:iam/role:Role", "use1-vpc-cni").props.update(
                assumeRolePolicy=_named(rs, "aws:iam/role:Role", "use1-vpc-cni")
                .props["assumeRolePolicy"]
                .replace("StringEquals", "StringLike")
            ),
        ),
        (
            "dev",
            "ec2-imdsv2-hop-limit",
            lambda rs: (
                _named(rs, "aws:ec2/launchTemplate:LaunchTemplate", "use1-system")
                .props["metadataOptions"]
                .update(httpPutResponseHopLimit=2.0)
            ),
        ),
        (
            "prod",
            "stateful-resources-protected",
            lambda rs: setattr(_named(rs, "aws:kms/key:Key", "use1-secrets"), "protect", False),
        ),
        (
            "prod",
            "search-reader-read-only",
            lambda rs: (
                _named(rs, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "prod-use1-clusterpedia-reader")
                .props["rules"][0]["verbs"]
                .append("delete")
            ),
        ),
        (
            "prod",
            "search-credentials-in-secrets",
            lambda rs: (
                _named(
                    rs, "kubernetes:cluster.clusterpedia.io/v1alpha2:PediaCluster", "prod-use1-pediacluster-prod-use1"
                )
                .props["spec"]["syncResources"][0]["resources"]
                .append("secrets")
            ),
        ),
        (
            "prod",
            "search-store-secret",
            lambda rs: setattr(
                _named(rs, "kubernetes:core/v1:PersistentVolumeClaim", "prod-use1-clusterpedia-postgres"),
                "retain_on_delete",
                False,
            ),
        ),
        (
            "prod",
            "search-index-least-privilege",
            lambda rs: (
                _named(
                    rs,
                    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
                    "prod-use1-clusterpedia-clustersynchro-manager",
                )
                .props["subjects"]
                .append(
                    {
                        "kind": "ServiceAccount",
                        "name": "clusterpedia-controller-manager",
                        "namespace": "clusterpedia-system",
                    }
                )
            ),
        ),
        (
            "prod",
            "search-api-verified",
            lambda rs: (
                _named(rs, "kubernetes:apiregistration.k8s.io/v1:APIService", "prod-use1-v1beta1.clusterpedia.io")
                .props["spec"]
                .update(insecureSkipTLSVerify=True)
            ),
        ),
        (
            "prod",
            "eks-node-image-pinned",
            lambda rs: _named(rs, "aws:eks/nodeGroup:NodeGroup", "usw2-l40s").props.pop("releaseVersion"),
        ),
        (
            "prod",
            "eks-nodeadm-config",
            lambda rs: _named(rs, "aws:ec2/launchTemplate:LaunchTemplate", "use1-h100").props.update(
                userData=base64.b64encode(
                    base64.b64decode(
                        _named(rs, "aws:ec2/launchTemplate:LaunchTemplate", "use1-h100").props["userData"]
                    ).replace(b"strategy: RAID0", b"strategy: RAID0\n      disabledMounts: [SOCI]")
                ).decode()
            ),
        ),
    ],
)
def test_rules_read_the_shapes_the_components_emit(request, judged, env, rule, change):
    """Mutating a real plan (not a fixture) trips the rule: the rules read what components really emit."""
    plan = request.getfixturevalue(f"{env}_plan")
    pack, whole = judged(plan)
    baseline = {(f.policy, f.enforcement_level) for f in whole.findings}
    assert baseline == PLAN_ADVISORIES[env]
    evaluation = pack.judge(_plan_with(plan, change))
    assert {f.policy for f in evaluation.findings} - {p for p, _ in baseline} == {rule}


# What the checked-in plans are told, all advisory: prod's disaggregated 70B hands its KV cache over TCP, since no
# image of the pinned vLLM has NIXL's LIBFABRIC backend for EFA (components/catalog/upstream.py PD_ENGINE_IMAGE).
PLAN_ADVISORIES = {"dev": set(), "prod": {("llm-pd-kv-fabric", "advisory")}}


def test_gke_rules_read_the_real_gke_cluster(prod_plan):
    def default_account(rs):
        pool = _named(rs, "gcp:container/nodePool:NodePool", "usc1-system")
        pool.props["nodeConfig"]["serviceAccount"] = "1-compute@developer.gserviceaccount.com"
        pool.props["management"]["autoRepair"] = False

    evaluation = evaluate_stack(ALL_RULES, _plan_with(prod_plan, default_account), plan_settings(prod_plan))
    assert sorted(f.policy for f in evaluation.findings) == [
        "gke-node-service-account",
        "llm-pd-kv-fabric",
        "node-auto-repair",
    ]


# --- a deliberately broken environment -------------------------------------------------------------------

BROKEN = {
    ("s3-no-public-grants", "Principal * policy"),
    ("s3-public-access-blocked", "no block"),
    ("gateway-route-authenticated", "no SecurityPolicy"),
    ("llm-model-fits-gpu", "does not fit"),
    ("gpu-mig-config-valid", "config of another GPU"),
}
# Without its SecurityPolicy nothing writes the route's tenant header: a client could send it.
FOLLOWS = {"gateway-tenant-routes"}


def test_broken_environment_is_rejected_with_the_rules_named():
    """A public bucket, an unauthenticated route, a model too large for its GPU and an invalid MIG profile."""
    resources = compliant()
    for case in CASES:
        if (case.rule, case.path) in BROKEN:
            case.mutate(resources)
    evaluation = run(resources)
    assert {f.policy for f in evaluation.mandatory} == {rule for rule, _ in BROKEN} | FOLLOWS
    by_rule = {f.policy: f for f in evaluation.mandatory}
    assert "does not fit" in by_rule["llm-model-fits-gpu"].message
    assert "'all-3g.71gb' is neither a H100-80GB config" in by_rule["gpu-mig-config-valid"].message
    assert "no SecurityPolicy, anyone can call it" in by_rule["gateway-route-authenticated"].message
    assert "Principal '*' without a condition" in by_rule["s3-no-public-grants"].message


@pytest.mark.slow
def test_fixture_custom_resources_match_upstream_crds(upstream):
    checked = 0
    for r in compliant():
        if r.is_kubernetes and is_custom_resource(r.props):
            assert upstream.validate_custom_resource(r.props) == [], r.urn
            checked += 1
    # Karmada PropagationPolicy and OverridePolicy, the LLMInferenceService, an AlluxioRuntime, ..., a PediaCluster,
    # the request classes' ClientTrafficPolicy, InferenceObjective and EnvoyExtensionPolicy
    assert checked == 15


# --- plan: policy.json, plan.md, exit code -----------------------------------------------------------------


@pytest.fixture(autouse=True)
def _session_plans(monkeypatch):
    """`plan` on the session's cached plans (a shallow copy each time): the CLI is under test, not the program."""
    import tools.plan.__main__ as cli

    monkeypatch.setattr(
        cli, "build_plan", lambda stack_config, *args, **kwargs: copy.copy(plan_for(stack_config.stack))
    )


@pytest.mark.plan
def test_plan_writes_policy_artifacts(plan_command_output):
    out = plan_command_output("prod")
    findings = json.loads((out / "policy.json").read_text())
    assert {(f["policy"], f["enforcementLevel"]) for f in findings} == PLAN_ADVISORIES["prod"]
    config = json.loads((out / "policy-config.json").read_text())
    assert config["no-scale-to-zero-in-production"] == {"production": True}
    assert config["gpu-pool-taint-and-labels"] == {"labelDomain": "inference-platform.io"}
    md = (out / "plan.md").read_text()
    assert f"Policy passed: {len(ALL_RULES)} rules, 0 mandatory and 1 advisory finding(s)." in md
    assert "| eks-endpoint-not-public | high | mandatory | 2 | 0 | 0 | pass |" in md


@pytest.mark.plan
def test_plan_exits_1_on_a_mandatory_violation(tmp_path, monkeypatch, capsys, fixture_project):
    """A violation the real components cannot produce (yet): force one into the plan's resources."""
    import policies.offline as offline

    real = offline.plan_resources

    def with_public_bucket(plan):
        resources = real(plan)
        resources.append(copy.deepcopy(find(compliant(), ":Bucket", "models")))
        return resources

    monkeypatch.setattr(offline, "plan_resources", with_public_bucket)
    assert plan_main(["dev", "--project-dir", str(fixture_project), "--out", str(tmp_path), "--quiet"]) == 1
    violations = json.loads((tmp_path / "policy.json").read_text())
    assert {v["policy"] for v in violations} == {
        "s3-public-access-blocked",
        "s3-encrypted-with-kms",
        "s3-tls-only",
        "s3-versioning",
        "s3-acls-disabled",
    }
    assert all(set(v) == {"policy", "enforcementLevel", "urn", "message"} for v in violations)
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 5 and all(line.startswith("error: policy s3-") for line in errors)
    assert "Policy **rejected**" in (tmp_path / "plan.md").read_text()


@pytest.mark.plan
def test_plan_policy_config_overrides_enforcement(tmp_path, monkeypatch, fixture_project):
    import policies.offline as offline

    real = offline.plan_resources
    monkeypatch.setattr(
        offline, "plan_resources", lambda plan: [*real(plan), copy.deepcopy(find(compliant(), ":Bucket", "models"))]
    )
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"all": "advisory"}))
    project = ["--project-dir", str(fixture_project)]
    assert plan_main(["dev", *project, "--out", str(tmp_path / "out"), "--quiet", "--policy-config", str(config)]) == 0
    written = json.loads((tmp_path / "out" / "policy-config.json").read_text())
    assert written["all"] == "advisory" and written["stateful-resources-protected"] == {"production": False}


def test_plan_rejects_an_invalid_policy_config(tmp_path, capsys):
    config = tmp_path / "bad.json"
    config.write_text(json.dumps({"s3-versionning": "advisory"}))
    assert plan_main(["dev", "--out", str(tmp_path / "out"), "--quiet", "--policy-config", str(config)]) == 2
    assert "unknown policies s3-versionning" in capsys.readouterr().err


# --- README ------------------------------------------------------------------------------------------------


def test_readme_documents_every_rule():
    """Freshness of the generated block is tests/test_readme.py's job."""
    from tools.readme import documentation

    readme = documentation()
    assert docs.render() in readme
    for r in ALL_RULES:
        assert f"| `{r.name}` | {r.severity} | {r.enforcement} |" in readme


# --- CrossGuard: the real pack process, spoken to like the engine does -------------------------------------


def _wire(value):
    if value is UNKNOWN:
        return UNKNOWN_STRING
    if isinstance(value, dict):
        return {k: _wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wire(v) for v in value]
    return value


def _struct(value: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(_wire(value))
    return s


def _provider(r: Resource) -> dict:
    if not r.provider:
        return {}
    return {
        "provider": proto.AnalyzerProviderResource(type="pulumi:providers:kubernetes", urn=r.provider, name=r.cluster)
    }


def _analyzer_resource(r: Resource) -> proto.AnalyzerResource:
    return proto.AnalyzerResource(
        type=r.type,
        properties=_struct(r.props),
        urn=r.urn,
        name=r.name,
        options=proto.AnalyzerResourceOptions(protect=r.protect),
        propertyDependencies={k: proto.AnalyzerPropertyDependencies(urns=v) for k, v in r.deps.items()},
        **_provider(r),
    )


@pytest.fixture(scope="module")
def analyzer(tmp_path_factory):
    """The pack folder `make policy-pack` assembles, started as the Pulumi CLI starts it (`python -u -m pulumi.policy
    <engine> <folder>` in the folder, PULUMI_POLICY_PACK_RUNS_FROM_ITS_FOLDER), isolated (-I: no PYTHONPATH, no user
    site, not the working directory): it sees the folder and the virtualenv's packages, nothing of the checkout."""
    folder = tmp_path_factory.mktemp("analyzer") / "inference-platform-pack"
    assemble(folder)
    process = subprocess.Popen(
        [sys.executable, "-I", "-u", "-m", "pulumi.policy", "127.0.0.1:0", str(folder)],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline().strip()
        assert line.isdigit(), (
            f"pack did not start: {line!r} {process.stderr.read() if process.poll() is not None else ''}"
        )
        channel = grpc.insecure_channel(f"127.0.0.1:{line}")
        stub = analyzer_pb2_grpc.AnalyzerStub(channel)
        levels = {r.name: proto.MANDATORY if r.enforcement == "mandatory" else proto.ADVISORY for r in ALL_RULES}
        policy_config = {
            name: proto.PolicyConfig(
                enforcementLevel=levels[name], properties=_struct(values if isinstance(values, dict) else {})
            )
            for name, values in SETTINGS.raw.items()
        }
        stub.Configure(proto.ConfigureAnalyzerRequest(policyConfig=policy_config))
        yield stub
        channel.close()
    finally:
        process.kill()
        process.wait()


def _diagnostics(response) -> list[tuple[str, int, str, str]]:
    return [(d.policyName, d.enforcementLevel, d.urn, d.message) for d in response.diagnostics]


@pytest.mark.slow
def test_pack_describes_every_rule(analyzer):
    from google.protobuf import empty_pb2

    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty())
    assert info.name == "inference-platform"
    assert sorted(p.name for p in info.policies) == sorted(r.name for r in ALL_RULES)
    described = {p.name: p for p in info.policies}
    for r in ALL_RULES:
        assert described[r.name].remediation_steps == r.remediation
        assert described[r.name].severity != proto.POLICY_SEVERITY_UNSPECIFIED
        assert set(described[r.name].configSchema.properties) == set(r.config)


def test_pack_reports_a_resource_violation(analyzer):
    policy = find(compliant(), ":BucketPolicy", "models")
    document = json.loads(policy.props["policy"])
    document["Statement"].append({"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "*"})
    policy.props["policy"] = json.dumps(document)
    r = _analyzer_resource(policy)
    response = analyzer.Analyze(
        proto.AnalyzeRequest(type=r.type, properties=r.properties, urn=r.urn, name=r.name, options=r.options)
    )
    [(name, level, urn, message)] = _diagnostics(response)
    assert (name, level, urn) == ("s3-no-public-grants", proto.MANDATORY, policy.urn)
    assert "Principal '*' without a condition" in message and "Fix: " in message


def test_pack_turns_unknowns_into_advisory_cannot_check(analyzer):
    cluster = find(compliant(), "eks/cluster:Cluster", "eks")
    cluster.props["vpcConfig"]["endpointPublicAccess"] = UNKNOWN
    r = _analyzer_resource(cluster)
    response = analyzer.Analyze(
        proto.AnalyzeRequest(type=r.type, properties=r.properties, urn=r.urn, name=r.name, options=r.options)
    )
    [(name, level, _, message)] = _diagnostics(response)
    assert (name, level) == ("eks-endpoint-not-public", proto.ADVISORY)
    assert "cannot check" in message and "vpcConfig.endpointPublicAccess" in message


@pytest.mark.slow
def test_pack_runs_stack_rules_at_preview(analyzer):
    """The compliant stack with every bucket id unknown (preview) passes; the broken environment does not."""
    preview = compliant()
    for resource in preview:
        if "bucket" in resource.deps:
            resource.props["bucket"] = UNKNOWN
    response = analyzer.AnalyzeStack(proto.AnalyzeStackRequest(resources=[_analyzer_resource(r) for r in preview]))
    assert _diagnostics(response) == []

    broken = compliant()
    for case in CASES:
        if (case.rule, case.path) in BROKEN:
            case.mutate(broken)
    response = analyzer.AnalyzeStack(proto.AnalyzeStackRequest(resources=[_analyzer_resource(r) for r in broken]))
    stack_rules = {rule for rule, _ in BROKEN} - {"s3-no-public-grants"} | FOLLOWS  # s3-no-public-grants: resource rule
    assert {d[0] for d in _diagnostics(response) if d[1] == proto.MANDATORY} == stack_rules


def test_pack_settings_reach_the_rules(analyzer):
    """Without `production` in the config the pack says it cannot check, rather than passing."""
    bucket = find(compliant(), ":Bucket", "models")
    bucket.protect = False
    r = _analyzer_resource(bucket)
    request = proto.AnalyzeRequest(type=r.type, properties=r.properties, urn=r.urn, name=r.name, options=r.options)
    assert [d[0:2] for d in _diagnostics(analyzer.Analyze(request))] == [
        ("stateful-resources-protected", proto.MANDATORY)
    ]
    analyzer.Configure(
        proto.ConfigureAnalyzerRequest(
            policyConfig={"stateful-resources-protected": proto.PolicyConfig(enforcementLevel=proto.MANDATORY)}
        )
    )
    try:
        [(name, level, _, message)] = _diagnostics(analyzer.Analyze(request))
        assert (name, level) == ("stateful-resources-protected", proto.ADVISORY) and "production" in message
    finally:
        restore = {
            k: proto.PolicyConfig(enforcementLevel=proto.MANDATORY, properties=_struct(v))
            for k, v in PackSettings(SETTINGS.raw).raw.items()
        }
        analyzer.Configure(proto.ConfigureAnalyzerRequest(policyConfig=restore))


def _policy_config(raw) -> dict[str, proto.PolicyConfig]:
    levels = {r.name: proto.MANDATORY if r.enforcement == "mandatory" else proto.ADVISORY for r in ALL_RULES}
    return {
        name: proto.PolicyConfig(
            enforcementLevel=levels[name], properties=_struct(values if isinstance(values, dict) else {})
        )
        for name, values in raw.items()
    }


def _previewed(analyzer, raw, resources: list[Resource]) -> list[tuple[str, int, str, str]]:
    """A stack previewed alone as `make rollout` runs it: the analyzer configured with `raw` (policy-config.json) and
    asked about that stack's resources only; configured back as the module's other tests expect it afterwards."""
    analyzer.Configure(proto.ConfigureAnalyzerRequest(policyConfig=_policy_config(raw)))
    try:
        request = proto.AnalyzeStackRequest(resources=[_analyzer_resource(r) for r in resources])
        return _diagnostics(analyzer.AnalyzeStack(request))
    finally:
        analyzer.Configure(proto.ConfigureAnalyzerRequest(policyConfig=_policy_config(SETTINGS.raw)))


@pytest.mark.plan
def test_each_stack_of_prod_alone_passes_the_pack_with_the_policy_config_the_plan_wrote(prod_plan):
    """`make rollout` previews each stack with the pack and build/prod/policy-config.json: its stack rules see that
    stack alone (the analyzer test below shows the pulumi-policy analyzer judges so)."""
    settings = PackSettings(json.loads(json.dumps(plan_settings(prod_plan).raw)))
    found = {
        name: [
            (f.policy, f.urn)
            for f in evaluate_stack(ALL_RULES, plan_resources(part), settings, previewed_alone=True).mandatory
        ]
        for name, part in prod_plan.stacks.items()
    }
    assert found == {name: [] for name in ("prod.use1", "prod.usw2", "prod.usc1", "prod.global")}


@pytest.mark.plan
@pytest.mark.slow
def test_the_analyzer_judges_a_stack_alone_with_the_members_the_config_names(analyzer, prod_plan):
    """Through the pulumi-policy analyzer, as a preview runs it: use1 (Karmada's host) issues every member's agent
    certificate while the global stack declares the members; the global stack's 70B copies run beside the region
    stacks' NetworkPolicies and ServiceAccounts. Of use1, the agents' certificate material and RBAC, judged by
    karmada-agent-identity (the analyzer rebuilds a stack's resources for each stack rule: all 392 take seconds; the
    test above judges the whole stacks in-process)."""
    config = json.loads(json.dumps(plan_settings(prod_plan).raw))
    assert config["karmada-agent-identity"]["federationMembers"] == ["prod-usc1", "prod-use1", "prod-usw2"]
    rbac = "rbac.authorization.k8s.io"
    agents = [
        r for r in plan_resources(prod_plan.stacks["prod.use1"]) if r.type.startswith("tls:") or r.api_group == rbac
    ]
    assert len([r for r in agents if r.name.endswith("karmada-agent-csr")]) == 3

    def refused(found):
        return sorted(
            d[2].rsplit("::", 1)[-1] for d in found if d[0] == "karmada-agent-identity" and d[1] == proto.MANDATORY
        )

    assert refused(_previewed(analyzer, config, agents)) == []
    global_stack = _previewed(analyzer, config, plan_resources(prod_plan.stacks["prod.global"]))
    assert [d for d in global_stack if d[1] == proto.MANDATORY] == []
    # What the global stack cannot see comes back as the engine's advisory "cannot check" (no URN: one per policy).
    unseen = {d[0] for d in global_stack if "llama-3-1-70b" in d[3] and "declared in another stack" in d[3]}
    assert unseen == {"k8s-pods-ingress-isolated", "k8s-model-servers-no-token"}
    # Without the environment's members (the config `make plan` wrote before), use1's preview failed on two agents.
    del config["karmada-agent-identity"]["federationMembers"]
    assert refused(_previewed(analyzer, config, agents)) == [
        "prod-usc1-karmada-agent-csr",
        "prod-usw2-karmada-agent-csr",
    ]


AGENTS_OF_OTHER_STACKS = [
    ("karmada-agent-identity", "prod-usc1-karmada-agent-csr"),
    ("karmada-agent-identity", "prod-usw2-karmada-agent-csr"),
]


def _refused(findings) -> list[tuple[str, str]]:
    assert all(f.urn.startswith("urn:pulumi:prod.use1::") for f in findings)
    return sorted((f.policy, f.urn.rsplit("::", 1)[-1]) for f in findings)


@pytest.mark.plan
def test_make_plan_and_policy_check_fail_what_one_stacks_preview_would_fail(prod_plan, monkeypatch, tmp_path):
    """`make plan` and `make policy-check` judge each stack as its preview will, not only the environment as one:
    without the members' names (what no stack alone tells), use1 alone refuses its members' agents while the whole
    environment, the global stack's Clusters in view, does not."""
    # With what the whole plan tells, the stacks alone add nothing: what the global stack alone cannot check (the
    # 70B's copies), the whole judged with the region stacks in view.
    assert (
        evaluate_plan(prod_plan).findings
        == evaluate_stack(ALL_RULES, plan_resources(prod_plan), plan_settings(prod_plan)).findings
    )
    saved = tmp_path / "plan.json"
    saved.write_text(json.dumps(plan_document(prod_plan)))
    old_config = {k: v for k, v in plan_settings(prod_plan).raw.items() if k != "karmada-agent-identity"}
    (tmp_path / "policy-config.json").write_text(json.dumps(old_config))
    assert policy_check_main([str(saved)]) == 0  # a config written before federationMembers: taken from the plan

    for module in (policies.offline, policies.check):
        monkeypatch.setattr(module, "environment_settings", lambda resources: {})
    assert not evaluate_stack(ALL_RULES, plan_resources(prod_plan), plan_settings(prod_plan)).mandatory
    assert _refused(evaluate_plan(prod_plan).mandatory) == AGENTS_OF_OTHER_STACKS
    own = replace(prod_plan, stacks={name: replace(part) for name, part in prod_plan.stacks.items()})
    assert _refused(check_policy(own).mandatory) == AGENTS_OF_OTHER_STACKS
    assert _refused(check_saved_plan(saved).mandatory) == AGENTS_OF_OTHER_STACKS
    assert policy_check_main([str(saved)]) == 1


@pytest.mark.plan
def test_a_member_copy_is_judged_strictly_wherever_its_namespace_is_in_view(prod_plan):
    """Alone, the global stack cannot see the 70B's member namespaces: its copies' NetworkPolicies cannot be checked
    there. Judged with the whole environment, or alone once the stack declares something in that namespace, the
    missing policy is a violation again."""
    global_stack = plan_resources(prod_plan.stacks["prod.global"])
    settings = plan_settings(prod_plan)
    rule = [r for r in ALL_RULES if r.name == "k8s-pods-ingress-isolated"]

    def kinds(resources, **alone):
        return sorted({f.kind for f in evaluate_stack(rule, resources, settings, **alone).findings})

    assert kinds(global_stack, previewed_alone=True) == ["cannot-check"]
    assert kinds(global_stack) == ["violation"]  # the whole environment, as `make plan` judges it
    template = next(r for r in global_stack if r.kind == "InferenceService")
    neighbour = Resource(
        urn="urn:pulumi:prod.global::inference-platform::kubernetes:core/v1:ConfigMap::beside",
        type="kubernetes:core/v1:ConfigMap",
        name="beside",
        props={
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "beside", "namespace": template.namespace},
        },
        provider="urn:pulumi:prod.global::inference-platform::pulumi:providers:kubernetes::prod-use1",
    )
    assert "violation" in kinds([*global_stack, neighbour], previewed_alone=True)
