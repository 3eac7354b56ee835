"""The bring-up check (tools/rollout/bringup.py) finds, by itself, each defect of prod's first rollout.

prod's offline plans pass it; each test reintroduces one defect in them (the plans are data: a copy is edited as the
old code rendered it) and expects the violation that names the stack, the waiter, what it needs and where that is
created. Expected texts are written by hand from the stacks of Pulumi.prod.yaml (canary prod.use1, aws prod.usw2,
gcp prod.usc1, global prod.global).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable

import pytest

from components.catalog.bringup import FACTS, BringUpFact
from components.config.stackfile import stack_config_from_mapping
from tests.harness import PROJECT
from tools.plan.engine import PlannedResource
from tools.plan.model import Plan
from tools.plan.runner import PROJECT_DIR
from tools.plan.stackfile import load_stack_config
from tools.rollout import bringup
from tools.rollout.__main__ import offline_plans
from tools.rollout.bringup import Report, check_bring_up, stack_own_configs
from tools.rollout.gates import offline_gates
from tools.rollout.health import Check, Target

ENV = "prod"


@pytest.fixture(scope="module")
def prod():
    env, plans = offline_plans(PROJECT_DIR, ENV, out_dir=None)
    return env, plans


def check(prod, edit: Callable[[dict[str, list[PlannedResource]]], None] | None = None, **kwargs) -> Report:
    """The check of prod's plans, after `edit` (stack -> its resources, editable copies)."""
    env, plans = prod
    resources = {name: copy.deepcopy(plan.resources) for name, plan in plans.items()}
    if edit is not None:
        edit(resources)
    edited = {
        name: Plan(
            environment=name,
            project=PROJECT,
            evaluation=dataclasses.replace(plan.evaluation, resources=resources[name]),
            spec=env,
        )
        for name, plan in plans.items()
    }
    kwargs.setdefault("own_configs", stack_own_configs(PROJECT_DIR, env, ENV))
    kwargs.setdefault("environment_config", load_stack_config(PROJECT_DIR, ENV).config)
    gates = kwargs.pop("gates", None) or offline_gates(env, ENV, edited)
    return check_bring_up(env, ENV, edited, gates, **kwargs)


def one(resources: list[PlannedResource], name: str, type_: str | None = None) -> PlannedResource:
    (found,) = [r for r in resources if r.name == name and (type_ is None or r.type == type_)]
    return found


def move(resources: dict[str, list[PlannedResource]], source: str, target: str, pick: Callable) -> None:
    """Resources of `source` that `pick` selects, as `target` creates them instead (the old code's placement)."""
    moved = [r for r in resources[source] if pick(r)]
    assert moved
    for r in moved:
        resources[source].remove(r)
        r.urn = r.urn.replace(f"urn:pulumi:{source}::", f"urn:pulumi:{target}::")
        r.parent = r.provider = None
        r.provider = next(
            p.urn for p in resources[target] if p.type == "pulumi:providers:kubernetes" and p.name.endswith("-karmada")
        )
        r.options["dependsOn"], r.property_dependencies = [], {}
        resources[target].append(r)


def lines(report: Report, fact: BringUpFact) -> list[str]:
    return [v.line() for v in report.violations if v.fact is fact]


def test_prod_comes_up_wave_by_wave_on_empty_accounts(prod):
    report = check(prod)
    assert report.violations == []
    # Every stack waits on something, and every wait was checked.
    assert set(report.checked) == {"prod.use1", "prod.usw2", "prod.usc1", "prod.global"}
    assert all(n > 20 for n in report.checked.values()), report.checked
    assert sorted(report.bootstraps) == ["prod.usc1", "prod.use1", "prod.usw2"]
    # The global stack's runner (use1's) cannot reach usc1's internal gateway: the gate does not wait for it.
    assert report.notes == {
        "prod.global": [
            "usc1's gateway (internal, reachable only from inside usc1's network) from a runner inside use1's network"
        ]
    }


def test_every_fact_has_a_statement_and_a_source():
    assert len(FACTS) == 19  # counted by hand in components/catalog/bringup.py
    for fact in FACTS.values():
        assert fact.statement.strip() and fact.source.strip() and fact.component.strip(), fact.name


# --- 1. the host's agent cannot become Ready in wave 1 ------------------------------------------------------------


def _old_agents(resources):
    """The old code: every agent release waits (atomic), and the host's RBAC and Cluster come from the global stack."""
    for stack in ("prod.use1", "prod.usw2", "prod.usc1"):
        release = one(resources[stack], f"prod-{stack.split('.')[1]}-karmada-agent", "kubernetes:helm.sh/v3:Release")
        del release.inputs["skipAwait"]
        release.inputs["atomic"] = True
    karmada_side = ("KarmadaMembership", "kubernetes:rbac", "karmada-es-prod-use1")
    move(
        resources,
        "prod.use1",
        "prod.global",
        lambda r: "prod-karmada" in r.name and any(k in r.urn for k in karmada_side),
    )


def test_defect_1_an_agent_release_that_waits_on_a_later_wave_is_reported(prod):
    found = lines(check(prod, _old_agents), bringup.facts.KARMADA_AGENT_STARTS)
    assert (
        "prod.use1: Helm release prod-use1-karmada-agent (waits for karmada-agent) needs RBAC for "
        "system:karmada:agent:prod-use1 in the Karmada API; it is created by prod.global (wave 4: global), after "
        "prod.use1's wait [karmada-agent-needs-karmada-at-start]"
    ) in found
    usw2 = [line for line in found if line.startswith("prod.usw2: ")]
    assert any(
        "needs RBAC for system:karmada:agent:prod-usw2" in line and "prod.global (wave 4: global)" in line
        for line in usw2
    )
    # Its NAT address reaches the allowlist only with the global stack's patch.
    assert any(
        "needs the Karmada API's load balancer to admit prod-usw2's NAT egress" in line
        and "the allowlist with it is applied by prod.global (wave 4: global)" in line
        for line in usw2
    )


def test_defect_1_an_agent_patch_that_waits_for_its_rollout_is_a_wait_too(prod):
    def awaiting(resources):
        patch = one(resources["prod.usw2"], "prod-usw2-karmada-agent-flags")
        del patch.inputs["metadata"]["annotations"]["pulumi.com/skipAwait"]

    found = lines(check(prod, awaiting), bringup.facts.KARMADA_AGENT_STARTS)
    assert found and all(
        line.startswith("prod.usw2: prod-usw2-karmada-agent-flags (awaits the agent's rollout)") for line in found
    )


# --- 2. the chart's scripts need a shell ---------------------------------------------------------------------------


def test_defect_2_hook_scripts_in_an_image_without_a_shell_are_reported(prod):
    def distroless(resources):
        release = one(resources["prod.use1"], "prod-use1-karmada", "kubernetes:helm.sh/v3:Release")
        release.inputs["values"]["kubectl"]["image"] = {
            "registry": "registry.k8s.io",
            "repository": "kubectl",
            "tag": "v1.35.2",
        }

    assert lines(check(prod, distroless), bringup.facts.KUBECTL_IMAGE_HAS_NO_SHELL) == [
        "prod.use1: Helm release prod-use1-karmada (waits for its static-resource Job and `wait` init containers) "
        "needs /bin/sh, bash and sleep in kubectl.image registry.k8s.io/kubectl:v1.35.2; registry.k8s.io/kubectl has "
        "no shell [registry-k8s-io-kubectl-has-no-shell]"
    ]


# --- 3. gates wait only for what exists by then, of its kind ---------------------------------------------------------


def test_defect_3_a_gate_on_a_model_a_later_wave_creates_or_of_another_kind_is_reported(prod):
    env, plans = prod
    current = offline_gates(env, ENV, plans)

    def old_gates(stack, outputs):
        found = list(current(stack, outputs))
        if stack == "prod.usw2":  # the old region gate: every model placed in usw2, as an InferenceService
            found.append(
                Check(
                    "usw2 models",
                    "",
                    lambda: (True, ""),
                    Target("serving", "usw2", "InferenceService", ("llama-3-1-70b",)),
                )
            )
        if stack == "prod.use1":
            found.append(
                Check(
                    "use1 models",
                    "",
                    lambda: (True, ""),
                    Target("serving", "use1", "InferenceService", ("llama-3-1-70b-rag",)),
                )
            )
        return found

    found = lines(check(prod, gates=old_gates), bringup.facts.KSERVE_READY_ON_THE_SERVING_OBJECT)
    assert found == [
        "prod.use1: gate health: use1 models needs InferenceService llama-3-1-70b-rag in prod-use1; no stack creates "
        "it [kserve-model-ready-on-its-serving-object]",
        "prod.usw2: gate health: usw2 models needs InferenceService llama-3-1-70b in prod-usw2; no stack creates it "
        "[kserve-model-ready-on-its-serving-object]",
    ]


# --- 4. the deployer reaches a private EKS API -----------------------------------------------------------------------


def test_defect_4_a_runner_the_cluster_security_group_refuses_is_reported(prod):
    def no_rule(resources):
        for stack in ("prod.use1", "prod.usw2"):
            resources[stack] = [r for r in resources[stack] if "api-deployer" not in r.name]

    found = lines(check(prod, no_rule), bringup.facts.EKS_PRIVATE_ENDPOINT_ADMITS_ITS_SECURITY_GROUP)
    assert (
        "prod.use1: the Kubernetes provider of prod-use1 needs a rule of the EKS cluster security group admitting "
        "10.20.0.0/16 on 443; no stack creates it [eks-cluster-security-group-admits-only-itself]"
    ) in found
    # prod.usw2's own cluster, and prod.global's use of the host's API (from use1's runner, like the host's stack).
    assert sorted(line.split(":")[0] for line in found) == ["prod.global", "prod.use1", "prod.usw2"]


def test_defect_4_a_runner_whose_network_cannot_be_created_first_is_reported(prod):
    def network_after_cluster(resources):
        vpc = one(resources["prod.use1"], "use1-vpc", "aws:ec2/vpc:Vpc")
        cluster = one(resources["prod.use1"], "use1-cluster", "aws:eks/cluster:Cluster")
        vpc.options["dependsOn"] = [cluster.urn]

    found = lines(check(prod, network_after_cluster), bringup.facts.EKS_PRIVATE_ENDPOINT_ADMITS_ITS_SECURITY_GROUP)
    assert len(found) == 1 and found[0].startswith(
        "prod.use1: the Kubernetes provider of prod-use1 needs a runner inside use1's network, which this stack "
        "creates; no network-first step can create it alone (it depends on urn:pulumi:prod.use1::"
    )


# --- 5. a stack's secret keeps its environment's object --------------------------------------------------------------


def test_defect_5_a_stack_key_that_replaces_its_environments_object_is_reported(prod, monkeypatch):
    env, _ = prod
    own = stack_own_configs(PROJECT_DIR, env, ENV)
    secret = {f"{PROJECT}:gateway": {"endpointPicker": {"replicas": 3}}}  # one leaf, as `config set --path` writes
    own["prod.usw2"] = {
        **own["prod.usw2"],
        **stack_config_from_mapping(PROJECT, "prod.usw2", secret, PROJECT_DIR).config,
    }
    assert check(prod, own_configs=own).violations == []  # set by path: domain, timeouts and the dns zone kept
    # The old program: the stack's top-level key replaced the environment's.
    monkeypatch.setattr(bringup, "overlay_config", lambda environment, stack: {**environment, **stack})
    found = lines(check(prod, own_configs=own), bringup.facts.STACK_KEYS_SET_BY_PATH)
    assert len(found) == 1 and found[0].startswith(
        "prod.usw2: the program of prod.usw2 needs Pulumi.prod.yaml with Pulumi.prod.usw2.yaml's keys set into it; "
        "it refuses the result: "
    )
    assert "gateway.dns.route53ZoneId" in found[0]  # the domain's zone (and the domain itself) dropped


# --- 6. destroying the global stack leaves the API closed ----------------------------------------------------------


def test_defect_6_an_allowlist_patch_deleted_with_its_stack_is_reported(prod):
    def not_retained(resources):
        one(resources["prod.global"], "prod-use1-karmada-apiserver-allowlist").options["retainOnDelete"] = False

    assert lines(check(prod, not_retained), bringup.facts.PULUMI_PATCH_DELETE_RELINQUISHES) == [
        "prod.global: `pulumi destroy` of prod.global (or a replace of prod-use1-karmada-apiserver-allowlist) needs "
        "karmada-apiserver-external's loadBalancerSourceRanges left in place; deleting the patch removes the field "
        "it took over, and the load balancer then admits 0.0.0.0/0 [pulumi-patch-delete-removes-its-fields]"
    ]


# --- 7. the gateway's certificate and name ------------------------------------------------------------------------


def test_defect_7_a_gateway_without_certificate_or_name_is_reported(prod):
    def out_of_band(resources):
        for stack in ("prod.use1", "prod.usw2", "prod.usc1"):
            resources[stack] = [
                r
                for r in resources[stack]
                if "Certificate" not in r.type and "ExternalDns" not in r.urn and "GatewayDns" not in r.urn
            ]

    report = check(prod, out_of_band)
    assert lines(report, bringup.facts.ENVOY_GATEWAY_LISTENER_NEEDS_ITS_SECRET)[:1] == [
        "prod.use1: gate health: use1 gateway needs Secret envoy-gateway-system/inference-gateway-tls, the HTTPS "
        "listener's certificate; no stack creates it [envoy-gateway-https-listener-needs-its-secret]"
    ]
    names = lines(report, bringup.facts.DNS_NAME_PUBLISHED)
    assert (
        "prod.usc1: gate health: usc1 gateway needs a DNS record for usc1.llm.acme.example; no stack creates it [gateway-hostname-needs-a-record]"
        in names
    )
    # The global wave's gateway gates (use1, usw2) wait for the same two: five gates, two preconditions each.
    assert len(names) == len(lines(report, bringup.facts.ENVOY_GATEWAY_LISTENER_NEEDS_ITS_SECRET)) == 5


def test_defect_7_an_internal_gateway_without_its_private_zone_is_reported(prod):
    def no_zone(resources):
        resources["prod.usc1"] = [r for r in resources["prod.usc1"] if r.type != "gcp:dns/managedZone:ManagedZone"]

    assert lines(check(prod, no_zone), bringup.facts.DNS_NAME_PUBLISHED) == [
        "prod.usc1: gate health: usc1 gateway needs a private zone serving usc1.llm.acme.example in usc1's network; "
        "no stack creates it [gateway-hostname-needs-a-record]"
    ]


# --- 8. the rest --------------------------------------------------------------------------------------------------


def test_defect_8_an_agent_that_may_create_its_cluster_first_is_reported(prod):
    def old_rbac(resources):
        """The old RBAC: the agent may create Clusters, granted before its Cluster is created."""
        role = one(resources["prod.use1"], "prod-karmada-system-karmada-prod-use1-agent-role")
        role.inputs["rules"][1]["verbs"] = ["create", "list", "watch"]
        cluster = one(resources["prod.use1"], "prod-karmada-cluster-prod-use1")
        binding = one(resources["prod.use1"], "prod-karmada-system-karmada-prod-use1-agent-binding")
        for rbac in (role, binding):
            rbac.options["dependsOn"] = [d for d in rbac.options["dependsOn"] if d != cluster.urn]
        cluster.options["dependsOn"] = [*cluster.options["dependsOn"], binding.urn]

    assert lines(check(prod, old_rbac), bringup.facts.PULUMI_CREATE_IS_CLIENT_SIDE) == [
        "prod.use1: the create of Cluster prod-use1 in Karmada needs no agent of prod-use1 able to create it first; "
        "its agent may create it first: RBAC with `create` on clusters by prod.use1 (wave 1: canary) "
        "[pulumi-kubernetes-creates-client-side]"
    ]


def test_defect_8_a_region_stack_without_its_own_engine_settings_is_reported(prod):
    env, _ = prod
    own = stack_own_configs(PROJECT_DIR, env, ENV)
    own["prod.usw2"] = None
    assert lines(check(prod, own_configs=own), bringup.facts.PULUMI_ENGINE_READS_ITS_STACKS_CONFIG) == [
        "prod.usw2: `pulumi up` of prod.usw2 needs `pulumi:disable-default-providers` in its own stack settings; "
        "Pulumi.prod.usw2.yaml does not exist [pulumi-engine-reads-the-stacks-own-config]"
    ]


def test_the_checked_in_stack_files_disable_default_providers():
    for stack in ("use1", "usw2", "usc1", "global"):
        path = PROJECT_DIR / f"Pulumi.prod.{stack}.yaml"
        import yaml

        config = yaml.safe_load(path.read_text())["config"]
        assert config == {"pulumi:disable-default-providers": ["*"]}, path.name
        assert json.loads(
            stack_config_from_mapping(PROJECT, f"prod.{stack}", config, path).config["pulumi:disable-default-providers"]
        ) == ["*"]


def test_every_fact_is_one_the_check_cites():
    """A fact the check never cites asserts nothing: each constant appears in the check (or its image table)."""
    import inspect

    source = inspect.getsource(bringup)
    constants = {name: value for name, value in vars(bringup.facts).items() if isinstance(value, BringUpFact)}
    cited = {value.name for name, value in constants.items() if f"facts.{name}" in source}
    cited |= {fact.name for _, fact in bringup.facts.SCRIPT_IMAGES.values()}
    assert set(FACTS) == {value.name for value in constants.values()}
    assert set(FACTS) - cited == set()


def test_make_plan_fails_on_a_wait_that_cannot_complete(tmp_path, capsys):
    """`make plan`: a missing precondition is an error line naming stack, waiter, need and where; exit 1."""
    import shutil

    import yaml

    from tools.plan.__main__ import main as plan_main

    for name in (
        "Pulumi.yaml",
        "__main__.py",
        "Pulumi.prod.use1.yaml",
        "Pulumi.prod.usw2.yaml",
        "Pulumi.prod.usc1.yaml",
    ):
        shutil.copy(PROJECT_DIR / name, tmp_path / name)
    document = yaml.safe_load((PROJECT_DIR / "Pulumi.prod.yaml").read_text())
    document["config"][f"{PROJECT}:gateway"]["dns"] = {"publisher": "external"}  # nobody publishes the names
    (tmp_path / "Pulumi.prod.yaml").write_text(yaml.safe_dump(document))
    assert plan_main(["prod", "--project-dir", str(tmp_path), "--quiet"]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: bring-up: ")]
    assert (
        "error: bring-up: prod.global: `pulumi up` of prod.global needs `pulumi:disable-default-providers` in its own stack settings; Pulumi.prod.global.yaml does not exist [pulumi-engine-reads-the-stacks-own-config]"
        in errors
    )
    assert (
        "error: bring-up: prod.use1: gate health: use1 gateway needs a DNS record for use1.llm.acme.example; no stack "
        "creates it [gateway-hostname-needs-a-record]"
    ) in errors
    assert len(errors) == 1 + 5  # the global stack's file, and each of the five gateway gates' DNS record
    plan_md = (tmp_path / "build" / "prod" / "plan.md").read_text()
    assert "wave by wave: **6 missing**:" in plan_md
