"""The bring-up check (tools/rollout/bringup.py) finds, by itself, each defect of prod's first rollout.

prod's offline plans pass it; each test reintroduces one defect in them (the plans are data: a copy is edited as the
old code rendered it) and expects the violation that names the stack, the waiter, what it needs and where that is
created. Expected texts are written by hand from the stacks of the fixture Pulumi.prod.yaml (canary prod.use1, aws prod.usw2,
gcp prod.usc1, global prod.global).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from collections.abc import Callable, Mapping
from typing import ClassVar

import pytest

from components.catalog.bringup import FACTS, BringUpFact
from components.config.environment import EnvironmentSpec
from components.config.stackfile import stack_config_from_mapping
from tests.harness import ENVIRONMENTS_DIR, PROJECT, plan_for
from tools.plan.engine import PlannedResource
from tools.plan.model import Plan
from tools.plan.runner import PROJECT_DIR
from tools.plan.stackfile import load_stack_config
from tools.rollout import bootstrap, bringup
from tools.rollout.bringup import Report, check_bring_up, stack_own_configs
from tools.rollout.gates import offline_gates
from tools.rollout.health import Check, Target

ENV = "prod"


@dataclasses.dataclass(frozen=True)
class Prod:
    """The fixture prod's environment and its stacks' plans (what the rollout's offline_plans returns), from the
    session's one plan of prod; what the check reads of the stack files, read once (each check gets its own copy)."""

    env: EnvironmentSpec
    plans: dict[str, Plan]
    resources: bytes  # each stack's resources, pickled: a check's editable copy loads them (a deepcopy took 3x longer)
    own_configs: dict[str, Mapping[str, str] | None]
    environment_config: dict[str, str]
    name: str = ENV


@pytest.fixture(scope="module")
def prod() -> Prod:
    plan = plan_for(ENV)
    return Prod(
        env=plan.spec,
        plans=plan.stacks,
        resources=pickle.dumps({name: part.resources for name, part in plan.stacks.items()}),
        own_configs=stack_own_configs(ENVIRONMENTS_DIR, plan.spec, ENV),
        environment_config=load_stack_config(PROJECT_DIR, ENV, ENVIRONMENTS_DIR).config,
    )


def check(
    prod: Prod,
    edit: Callable[[dict[str, list[PlannedResource]]], None] | None = None,
    bootstraps: dict[str, Plan] | None = None,
    **kwargs,
) -> Report:
    """The check of prod's plans, after `edit` (stack -> its resources, editable copies); `bootstraps`: a stack's
    network-first program's plan instead of its own."""
    env, plans = prod.env, prod.plans
    bootstraps = bootstraps or {}
    resources = pickle.loads(prod.resources)
    if edit is not None:
        edit(resources)
    edited = {
        name: Plan(
            environment=name,
            project=PROJECT,
            evaluation=dataclasses.replace(plan.evaluation, resources=resources[name]),
            spec=env,
            bootstrap=bootstraps.get(name, plan.bootstrap),
        )
        for name, plan in plans.items()
    }
    kwargs.setdefault("own_configs", copy.deepcopy(prod.own_configs))
    kwargs.setdefault("environment_config", copy.deepcopy(prod.environment_config))
    gates = kwargs.pop("gates", None) or offline_gates(env, prod.name, edited)
    return check_bring_up(env, prod.name, edited, gates, **kwargs)


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


@pytest.fixture(scope="module")
def prod_report(prod) -> Report:
    """The check of prod's plans as they are, which several tests start from."""
    return check(prod)


@pytest.mark.plan
def test_prod_comes_up_wave_by_wave_on_empty_accounts(prod_report):
    report = prod_report
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
    assert len(FACTS) == 28  # counted by hand in components/catalog/bringup.py
    for fact in FACTS.values():
        assert fact.statement.strip() and fact.source.strip() and fact.component.strip(), fact.name


# --- 1. the host's agent cannot become Ready in wave 1 ------------------------------------------------------------


def _variant(config: dict, stack: str) -> Prod:
    """A variant of prod planned as the stack `stack`, with stack files as prod's."""
    from tests.harness import plan_config

    plan = plan_config(config, stack=stack)
    return Prod(
        env=plan.spec,
        plans=plan.stacks,
        resources=pickle.dumps({name: part.resources for name, part in plan.stacks.items()}),
        own_configs={name: {"pulumi:disable-default-providers": '["*"]'} for name in plan.stacks},
        environment_config=stack_config_from_mapping(
            PROJECT, stack, config, ENVIRONMENTS_DIR / f"Pulumi.{stack}.yaml"
        ).config,
        name=stack,
    )


@pytest.fixture(scope="module")
def push() -> Prod:
    """prod federated in push mode, hosted on usc1 (tests/test_federation.py)."""
    from tests.test_federation import _push_config

    return _variant(_push_config(), "push")


@pytest.mark.plan
def test_a_multi_node_model_is_reported_as_one_kserve_v0_20_never_makes_ready():
    """The multi-node option (tests/test_serving_config.py): the federated 70B's gate waits for an InferenceService
    whose workers KServe v0.20.0 deletes on every reconcile (KSERVE_DELETES_MULTI_NODE_WORKERS); prod's
    single-node models are not (test_prod_comes_up_wave_by_wave_on_empty_accounts)."""
    from tests.test_serving_config import _multi_node_prod

    report = check(_variant(_multi_node_prod(), "test"))
    assert lines(report, bringup.facts.KSERVE_DELETES_MULTI_NODE_WORKERS) == [
        "test.global: gate health: federated models needs InferenceService llama-3-1-70b's multi-node workers kept "
        "by KServe; KServe v0.20.0 deletes a workerSpec replica's worker Deployment on every reconcile "
        "(kserve/kserve#6113): size the model to one node per replica (a larger GPU machine, a quantization, a "
        "shorter maxModelLen) until the KServe pin has the fix [kserve-v0-20-deletes-multi-node-workers]"
    ]


@pytest.mark.plan
def test_push_members_come_up_from_the_control_plane_without_agents(push):
    """Karmada's controllers dial push members (KARMADA_PUSH_MEMBER_READY): no agent and no Karmada RBAC is asked
    for, and each other member's public endpoint admits the host's NAT egress, which the program adds to it."""
    report = check(push)
    assert report.violations == []
    assert not [n for n in report.notes.get("push.global", []) if n.startswith("push: ")]


def _push_secret_gone(resources):
    resources["push.global"][:] = [
        r
        for r in resources["push.global"]
        if not (r.inputs.get("kind") == "Secret" and (r.inputs.get("metadata") or {}).get("name") == "push-use1")
    ]


def _endpoint_without_the_host(resources):
    """use1's EKS endpoint as the team's publicCidrs alone, the host's NAT egress not added (the old program)."""
    for r in resources["push.use1"]:
        if r.type == "aws:eks/cluster:Cluster":
            r.inputs["vpcConfig"]["publicAccessCidrs"] = ["198.51.100.0/24"]


def _push_role_narrowed(resources):
    """usw2's push account may only read pods (Karmada must also list nodes and write what it propagates)."""
    for r in resources["push.usw2"]:
        if r.type == "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole" and r.inputs["metadata"]["name"] == (
            "karmada-controller-manager"
        ):
            r.inputs["rules"] = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]


def _push_role_read_only(resources):
    """Every resource, but only read: Karmada could not write what it propagates."""
    for r in resources["push.usw2"]:
        if r.type == "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole" and r.inputs["metadata"]["name"] == (
            "karmada-controller-manager"
        ):
            r.inputs["rules"] = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]


def _push_binding_elsewhere(resources):
    """The binding's subject an account of the same name in another namespace."""
    for r in resources["push.usw2"]:
        if r.type == "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding" and r.inputs["metadata"]["name"] == (
            "karmada-controller-manager"
        ):
            r.inputs["subjects"] = [{**r.inputs["subjects"][0], "namespace": "default"}]


def _push_account_gone(resources):
    resources["push.usw2"][:] = [
        r
        for r in resources["push.usw2"]
        if not (
            r.type == "kubernetes:core/v1:ServiceAccount"
            and r.inputs["metadata"]["name"] == "karmada-controller-manager"
        )
    ]


def _host_by_its_endpoint(resources):
    """The host's own Cluster named by its cloud endpoint (the old program): a public one its pods reach only through
    its NAT, which its authorized networks need not admit."""
    for r in resources["push.global"]:
        if r.inputs.get("kind") == "Cluster" and r.inputs["metadata"]["name"] == "push-usc1":
            r.inputs["spec"]["apiEndpoint"] = "https://34.118.0.9"


def _pulled_cluster(resources):
    for r in resources["push.global"]:
        if r.inputs.get("kind") == "Cluster" and r.inputs["metadata"]["name"] == "push-usw2":
            r.inputs["spec"]["syncMode"] = "Pull"


RBAC_NEEDED = (
    "push.global: gate health: karmada members needs RBAC on push-usw2 for karmada-cluster/karmada-controller-manager: "
    "every verb on every resource (Karmada reads its nodes and pods, and writes what it propagates); no "
    "ClusterRoleBinding of this wave or earlier binds it to such a ClusterRole "
    "[karmada-push-cluster-ready-from-the-control-plane]"
)


@pytest.mark.plan
@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            _push_secret_gone,
            "push.global: gate health: karmada members needs Secret karmada-cluster/push-use1 in Karmada (token, "
            "caBundle); no stack creates it [karmada-push-cluster-ready-from-the-control-plane]",
        ),
        (
            _pulled_cluster,
            "push.global: gate health: karmada members needs Cluster push-usw2 with syncMode Push, an apiEndpoint "
            "and a secretRef; its spec has syncMode Pull [karmada-push-cluster-ready-from-the-control-plane]",
        ),
        (
            _endpoint_without_the_host,
            "push.global: gate health: karmada members needs push-use1's API server reachable from the Karmada "
            "controllers on usc1 (its NAT egress 34.88.108.154/32); its public endpoint admits 198.51.100.0/24 only "
            "[karmada-push-cluster-ready-from-the-control-plane]",
        ),
        (_push_role_narrowed, RBAC_NEEDED),
        (_push_role_read_only, RBAC_NEEDED),
        (_push_binding_elsewhere, RBAC_NEEDED),
        (
            _push_account_gone,
            "push.global: gate health: karmada members needs ServiceAccount karmada-cluster/karmada-controller-manager "
            "on push-usw2, whose token Karmada's Secret carries; no stack creates it "
            "[karmada-push-cluster-ready-from-the-control-plane]",
        ),
        (
            _host_by_its_endpoint,
            "push.global: gate health: karmada members needs Cluster push-usc1 (the host) named by its in-cluster "
            "API, which the control plane's pods reach; its apiEndpoint is https://34.118.0.9, which they may reach "
            "only through the NAT [karmada-push-cluster-ready-from-the-control-plane]",
        ),
    ],
    ids=[
        "no credentials",
        "not a push cluster",
        "endpoint closed to the host",
        "role narrowed",
        "role read-only",
        "binding of another namespace's account",
        "account gone",
        "host by its endpoint",
    ],
)
def test_a_push_member_without_what_the_control_plane_dials_it_with_is_reported(push, edit, expected):
    assert lines(check(push, edit), bringup.facts.KARMADA_PUSH_MEMBER_READY) == [expected]


@pytest.fixture(scope="module")
def indexed() -> Prod:
    """prod with Clusterpedia on use1 indexing every member (tests/test_search.py)."""
    from tests.test_search import search_everywhere

    return _variant(search_everywhere(), "search")


def _eks_endpoint_without_the_host(resources):
    """usw2's EKS endpoint as the team's publicCidrs alone, use1's NAT egress not added (the old program)."""
    for r in resources["search.usw2"]:
        if r.type == "aws:eks/cluster:Cluster":
            r.inputs["vpcConfig"]["publicAccessCidrs"] = ["198.51.100.7/32"]


def _gke_endpoint_with_one_host_address(resources):
    """usc1's GKE authorized networks with only one of use1's three NAT addresses."""
    for r in resources["search.usc1"]:
        if r.type == "gcp:container/cluster:Cluster":
            blocks = r.inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"]
            blocks[:] = [b for b in blocks if b["displayName"] in ("nodes", "public-0", "karmada-host-0")]


@pytest.mark.plan
def test_a_search_member_clusterpedia_reaches_from_the_host_comes_up(indexed):
    """Each other member's endpoint admits use1's NAT egress, which the program adds to it (stacks/environment.py
    dialled_by_the_host): nothing reported, and no note asks the team for it."""
    report = check(indexed)
    assert lines(report, bringup.facts.CLUSTERPEDIA_MEMBER_HEALTHY) == []
    assert report.checked["search.global"] and not [
        n for n in report.notes.get("search.global", []) if n.startswith("search: ")
    ]


@pytest.mark.plan
@pytest.mark.parametrize(
    ("edit", "member"),
    [(_eks_endpoint_without_the_host, "search-usw2"), (_gke_endpoint_with_one_host_address, "search-usc1")],
    ids=["EKS endpoint closed to the host", "GKE endpoint admits one of the host's addresses"],
)
def test_a_search_member_whose_endpoint_does_not_admit_the_host_is_reported(indexed, edit, member):
    egress = ", ".join(f"{ip}/32" for ip in indexed.plans["search.use1"].evaluation.referenced.values["egressIps"])
    (line,) = lines(check(indexed, edit), bringup.facts.CLUSTERPEDIA_MEMBER_HEALTHY)
    assert line.startswith(
        f"search.global: PediaCluster {member} (Clusterpedia indexes it) needs {member}'s API server reachable from "
        f"Clusterpedia's synchro manager on use1 (its NAT egress {egress}); its public endpoint admits "
    )
    assert line.endswith(" only [clusterpedia-indexes-a-member-it-reaches-from-the-host]")


def _usw2_brought_by_the_team(resources):
    """usw2's EKS cluster not created by the program (an existing cluster): its endpoint is not in the plan."""
    resources["search.usw2"][:] = [r for r in resources["search.usw2"] if r.type != "aws:eks/cluster:Cluster"]


@pytest.mark.plan
def test_an_existing_search_member_is_a_note_naming_the_hosts_addresses(indexed):
    """A cluster the team brings keeps its own endpoint, which the plan cannot see: the note names the addresses its
    endpoint must admit, from the host's stack (helper-88 L3/L4)."""
    report = check(indexed, _usw2_brought_by_the_team)
    egress = ", ".join(f"{ip}/32" for ip in indexed.plans["search.use1"].evaluation.referenced.values["egressIps"])
    assert lines(report, bringup.facts.CLUSTERPEDIA_MEMBER_HEALTHY) == []
    assert [n for n in report.notes["search.global"] if n.startswith("search: ")] == [
        f"search: search-usw2 is a cluster the program does not change: its public endpoint must admit use1's NAT "
        f"egress ({egress}), from which pods on use1 (Clusterpedia's synchro manager) dial its API server "
        "[clusterpedia-indexes-a-member-it-reaches-from-the-host]"
    ]


def _search_gate_in_the_hosts_wave(indexed: Prod):
    """The global wave's search check asked in the host's wave instead, before the global stack creates the other
    members' PediaClusters (a gate that waits for a later wave)."""
    current = offline_gates(indexed.env, "search", indexed.plans)

    def gates(stack, outputs):
        found = [c for c in current(stack, outputs) if stack != "search.global" or c.name != "search index"]
        if stack == "search.use1":
            found += [
                c for c in current("search.global", indexed.plans["search.global"].outputs) if c.name == "search index"
            ]
        return found

    return gates


def _no_usc1_pediacluster(resources):
    resources["search.global"][:] = [
        r
        for r in resources["search.global"]
        if not (r.inputs.get("kind") == "PediaCluster" and r.name.endswith("usc1"))
    ]


@pytest.mark.plan
def test_the_search_gate_waits_for_pediaclusters_its_wave_has_created(indexed):
    """The global wave's gate waits for the PediaClusters of usw2 and usc1 on use1, which the global stack creates
    and Clusterpedia's synchro manager (use1's wave) makes Ready: found. Asked a wave early, or for a PediaCluster
    no stack creates, the check reports it."""
    (search,) = [
        c for c in offline_gates(indexed.env, "search", indexed.plans)("search.global", {}) if c.target.what == "search"
    ]
    assert (search.name, search.waits_for) == (
        "search index",
        "PediaCluster Ready=True on search-use1: search-usw2, search-usc1",
    )
    assert lines(check(indexed), bringup.facts.CLUSTERPEDIA_MEMBER_HEALTHY) == []
    early = lines(
        check(indexed, gates=_search_gate_in_the_hosts_wave(indexed)), bringup.facts.CLUSTERPEDIA_MEMBER_HEALTHY
    )
    assert [line.split(";")[0] for line in early] == [
        f"search.use1: gate health: search index needs PediaCluster search-{m} on search-use1" for m in ("usw2", "usc1")
    ]
    assert all("after this wave" in line for line in early)
    assert lines(check(indexed, _no_usc1_pediacluster), bringup.facts.CLUSTERPEDIA_MEMBER_HEALTHY) == [
        "search.global: gate health: search index needs PediaCluster search-usc1 on search-use1; no stack creates it "
        "[clusterpedia-indexes-a-member-it-reaches-from-the-host]"
    ]


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


@pytest.mark.plan
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


@pytest.mark.plan
def test_defect_1_an_agent_patch_that_waits_for_its_rollout_is_a_wait_too(prod):
    def awaiting(resources):
        patch = one(resources["prod.usw2"], "prod-usw2-karmada-agent-flags")
        del patch.inputs["metadata"]["annotations"]["pulumi.com/skipAwait"]

    found = lines(check(prod, awaiting), bringup.facts.KARMADA_AGENT_STARTS)
    assert found and all(
        line.startswith("prod.usw2: prod-usw2-karmada-agent-flags (awaits the agent's rollout)") for line in found
    )


# --- 2. the chart's scripts need a shell ---------------------------------------------------------------------------


@pytest.mark.plan
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


@pytest.mark.plan
def test_defect_3_a_gate_on_a_model_a_later_wave_creates_or_of_another_kind_is_reported(prod):
    env, plans = prod.env, prod.plans
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


@pytest.mark.plan
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


def _old_bootstrap(stack: str, program: Plan, full: Plan, targets=None):
    """The old network-first step: the whole program, `--target` of the network's ancestors, itself, its
    descendants and their providers (as tools/rollout/bootstrap.py computed them before)."""
    (network,) = [r for r in full.resources if r.type in bootstrap.NETWORK_TYPES]
    members = [network, *full.descendants(network.urn)]
    old = [
        *(a.urn for a in full.ancestors(network)),
        *(r.urn for r in members),
        *sorted({r.provider for r in members if r.provider}),
    ]
    return bootstrap.network_bootstrap(stack, full, full, tuple(dict.fromkeys(old)))


@pytest.mark.plan
def test_c1_a_network_first_step_whose_providers_need_untargeted_creates_is_reported(prod, prod_report, monkeypatch):
    """The engine targets every provider; one whose parent or inputs are not created fails 'untargeted create'.
    Expected by hand from prod.use1's providers (build/prod/stacks/prod.use1/plan.json)."""
    assert prod_report.violations == []
    monkeypatch.setattr(bringup, "network_bootstrap", _old_bootstrap)
    found = lines(check(prod), bringup.facts.PULUMI_TARGETED_CREATE)
    assert sorted(line.split(":")[0] for line in found) == ["prod.usc1", "prod.use1", "prod.usw2"]
    (use1,) = [line for line in found if line.startswith("prod.use1:")]
    assert use1.startswith(
        "prod.use1: the Kubernetes provider of prod-use1 needs a runner inside use1's network, which this stack "
        "creates first on its own; a targeted `up` of its network-first program fails with 'untargeted create': "
    )
    for needs in (
        "pulumi:providers:tls gateway-ca-tls needs its parent inference-platform:addons:GatewayCa gateway-ca",
        "pulumi:providers:random tenant-api-keys needs its parent inference-platform:serving:TenantApiKeys "
        "tenant-api-keys",
        "pulumi:providers:kubernetes prod-use1 needs its input kubeconfig aws:eks/cluster:Cluster use1-cluster",
        "pulumi:providers:kubernetes prod-karmada needs its parent inference-platform:federation:KarmadaControlPlane "
        "prod-karmada-control-plane",
    ):
        assert needs in use1, needs
    (usc1,) = [line for line in found if line.startswith("prod.usc1:")]
    assert (
        "pulumi:providers:kubernetes prod-usc1 needs its input kubeconfig gcp:container/cluster:Cluster usc1-cluster"
        in usc1
    )


@pytest.mark.plan
def test_c1_the_network_first_program_registers_only_closed_targets(prod):
    """INFERENCE_PLATFORM_BOOTSTRAP=network: the region's cloud provider and network, URNs and inputs as the full
    program has them; every provider's parent, dependencies and inputs inside the targets."""
    plans = prod.plans
    for stack, provider in (("prod.use1", "aws"), ("prod.usw2", "aws"), ("prod.usc1", "gcp")):
        full, program = plans[stack], plans[stack].bootstrap
        assert program is not None and program.outputs == {}
        providers = [r for r in program.resources if r.type.startswith("pulumi:providers:")]
        assert [(p.type, p.name) for p in providers] == [(f"pulumi:providers:{provider}", f"{stack[5:]}-{provider}")]
        step = bootstrap.network_bootstrap(stack, program, full)
        assert step is not None and step.outside == () and step.differs == ()
        registered = {r.urn for r in program.resources if r.type != "pulumi:pulumi:Stack"}
        assert set(step.targets) == registered
        # Nothing but the region's component, its network and the network's resources.
        network = one(program.resources, stack[5:], f"inference-platform:{provider}:Network")
        region = one(program.resources, stack[5:], "inference-platform:stacks:RegionalPlatform")
        assert registered == {
            region.urn,
            network.urn,
            providers[0].urn,
            *(r.urn for r in full.descendants(network.urn)),
        }
    assert plans["prod.global"].bootstrap is None


def test_c1_the_network_mode_refuses_a_stack_without_a_network(monkeypatch):
    from components.config.base import ConfigError
    from stacks import config

    monkeypatch.setenv(config.BOOTSTRAP_VARIABLE, "everything")
    with pytest.raises(ConfigError, match="INFERENCE_PLATFORM_BOOTSTRAP=everything: the only value is `network`"):
        config.program_mode()
    monkeypatch.setenv(config.BOOTSTRAP_VARIABLE, "network")
    assert config.program_mode() == "network"
    monkeypatch.delenv(config.BOOTSTRAP_VARIABLE)
    assert config.program_mode() == "full"


@pytest.mark.plan
def test_defect_4_a_runner_whose_network_cannot_be_created_first_is_reported(prod):
    plans = prod.plans
    program = copy.deepcopy(plans["prod.use1"].bootstrap)
    vpc = one(program.resources, "use1-vpc", "aws:ec2/vpc:Vpc")
    vpc.options["dependsOn"] = [plans["prod.use1"].named("use1-cluster", "aws:eks/cluster:Cluster").urn]
    found = lines(check(prod, bootstraps={"prod.use1": program}), bringup.facts.PULUMI_TARGETED_CREATE)
    assert found == [
        "prod.use1: the Kubernetes provider of prod-use1 needs a runner inside use1's network, which this stack "
        "creates first on its own; a targeted `up` of its network-first program fails with 'untargeted create': "
        "aws:ec2/vpc:Vpc use1-vpc needs its dependsOn aws:eks/cluster:Cluster use1-cluster "
        "[pulumi-targeted-up-creates-only-closed-targets]"
    ]


# --- 5. a stack's secret keeps its environment's object --------------------------------------------------------------


@pytest.mark.plan
def test_defect_5_a_stack_key_that_replaces_its_environments_object_is_reported(prod, monkeypatch):
    env = prod.env
    own = stack_own_configs(ENVIRONMENTS_DIR, env, ENV)
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


@pytest.mark.plan
def test_defect_6_an_allowlist_patch_deleted_with_its_stack_is_reported(prod):
    def not_retained(resources):
        one(resources["prod.global"], "prod-use1-karmada-apiserver-allowlist").options["retainOnDelete"] = False

    assert lines(check(prod, not_retained), bringup.facts.PULUMI_PATCH_DELETE_RELINQUISHES) == [
        "prod.global: `pulumi destroy` of prod.global (or a replace of prod-use1-karmada-apiserver-allowlist) needs "
        "karmada-apiserver-external's loadBalancerSourceRanges left in place; deleting the patch removes the field "
        "it took over, and the load balancer then admits 0.0.0.0/0 [pulumi-patch-delete-removes-its-fields]"
    ]


# --- 7. the gateway's certificate and name ------------------------------------------------------------------------


@pytest.mark.plan
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


@pytest.mark.plan
def test_defect_7_an_internal_gateway_without_its_private_zone_is_reported(prod):
    def no_zone(resources):
        resources["prod.usc1"] = [r for r in resources["prod.usc1"] if r.type != "gcp:dns/managedZone:ManagedZone"]

    assert lines(check(prod, no_zone), bringup.facts.DNS_NAME_PUBLISHED) == [
        "prod.usc1: gate health: usc1 gateway needs a private zone serving usc1.llm.acme.example in usc1's network; "
        "no stack creates it [gateway-hostname-needs-a-record]"
    ]


# --- 8. the rest --------------------------------------------------------------------------------------------------


@pytest.mark.plan
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


@pytest.mark.plan
def test_h1_a_work_namespace_created_beside_its_cluster_is_reported(prod):
    """The old code created karmada-es-<member> as a sibling of the Cluster: the cluster controller creates it once
    the Cluster appears, and the program's client-side create then fails with AlreadyExists."""

    def sibling(resources):
        for stack in ("prod.use1", "prod.global"):
            namespaces = {r.urn for r in resources[stack] if r.name.startswith("prod-karmada-karmada-es-")}
            assert namespaces
            for cluster in [r for r in resources[stack] if r.name.startswith("prod-karmada-cluster-")]:
                cluster.options["dependsOn"] = [d for d in cluster.options["dependsOn"] if d not in namespaces]

    assert lines(check(prod, sibling), bringup.facts.KARMADA_CREATES_THE_EXECUTION_NAMESPACE) == [
        "prod.use1: the create of Namespace karmada-es-prod-use1 in Karmada needs its Cluster prod-use1 created after "
        "it; the cluster controller creates the namespace once the Cluster exists, and the Cluster is created by "
        "prod.use1 (wave 1: canary) without waiting for it "
        "[karmada-cluster-controller-creates-its-execution-namespace]",
        "prod.global: the create of Namespace karmada-es-prod-usc1 in Karmada needs its Cluster prod-usc1 created "
        "after it; the cluster controller creates the namespace once the Cluster exists, and the Cluster is created "
        "by prod.global (wave 4: global) without waiting for it "
        "[karmada-cluster-controller-creates-its-execution-namespace]",
        "prod.global: the create of Namespace karmada-es-prod-usw2 in Karmada needs its Cluster prod-usw2 created "
        "after it; the cluster controller creates the namespace once the Cluster exists, and the Cluster is created "
        "by prod.global (wave 4: global) without waiting for it "
        "[karmada-cluster-controller-creates-its-execution-namespace]",
    ]


@pytest.mark.plan
def test_h1_each_work_namespace_is_created_before_its_cluster_and_labelled_as_karmada_does(prod):
    plans = prod.plans
    for stack, member in (("prod.use1", "prod-use1"), ("prod.global", "prod-usw2"), ("prod.global", "prod-usc1")):
        plan = plans[stack]
        namespace = plan.named(f"prod-karmada-karmada-es-{member}", "kubernetes:core/v1:Namespace")
        cluster = plan.named(f"prod-karmada-cluster-{member}")
        assert namespace.urn in cluster.options["dependsOn"]
        assert namespace.inputs["metadata"]["labels"]["karmada.io/system"] == "true"  # pkg/util/constants.go L58


@pytest.mark.plan
def test_h2_a_karmada_provider_configured_before_its_load_balancer_answers_is_reported(prod):
    """The old code: prod.use1's Karmada provider waited only for the Service, whose load balancer answers minutes
    later; the provider's one discovery at configure fails and every create in Karmada with it."""

    def no_wait(resources):
        wait = one(resources["prod.use1"], "prod-use1-karmada-apiserver-reachable")
        resources["prod.use1"].remove(wait)
        for r in resources["prod.use1"]:
            r.options["dependsOn"] = [d for d in r.options.get("dependsOn", ()) if d != wait.urn]

    assert lines(check(prod, no_wait), bringup.facts.PULUMI_KUBERNETES_REACHES_ITS_CLUSTER_AT_CONFIGURE) == [
        "prod.use1: the Kubernetes provider of the Karmada API needs its load balancer "
        "(prod-use1-karmada-apiserver-external, created by this stack) answering from a runner inside use1's network "
        "before the provider is configured; no wait reaching the API through it comes first: the provider's one "
        "discovery fails and every create in Karmada fails with 'cluster is unreachable' "
        "[pulumi-kubernetes-reaches-its-cluster-once-at-configure]"
    ]


@pytest.mark.plan
def test_h2_the_wait_gets_readyz_through_the_load_balancer_with_the_federation_ca(prod):
    plans = prod.plans
    plan = plans["prod.use1"]
    wait = plan.named("prod-use1-karmada-apiserver-reachable", "command:local:Command")
    provider = plan.named("prod-karmada", "pulumi:providers:kubernetes")
    assert wait.urn in provider.options["dependsOn"]
    service = plan.named("prod-use1-karmada-apiserver-external")
    ca = plan.named("prod-use1-karmada-ca-cert")
    assert set(wait.property_dependencies["environment"]) >= {service.urn, ca.urn}
    script = wait.inputs["create"]
    assert '"$KARMADA_ENDPOINT/readyz"' in script and '--cacert "$ca"' in script and "= 200 ]" in script
    assert wait.inputs["triggers"] == [wait.inputs["environment"]["KARMADA_ENDPOINT"]]  # a new endpoint waits again


def test_m1_external_dns_keeps_only_zones_its_filters_match():
    """external-dns v0.15.1 zone choice, by hand from provider/aws/aws.go L345-361, google/google.go L175-201 and
    endpoint/domain_filter.go: the zone acme.example serves use1.llm.acme.example."""
    old_aws = ["--provider=aws", "--domain-filter=llm.acme.example"]
    assert bringup.external_dns_writes(old_aws, "use1.llm.acme.example", "llm.acme.example")
    assert not bringup.external_dns_writes(old_aws, "use1.llm.acme.example", "acme.example")  # parent: dropped
    new_aws = ["--provider=aws", "--domain-filter=use1.llm.acme.example", "--aws-zone-match-parent"]
    for zone in ("acme.example", "llm.acme.example", "use1.llm.acme.example"):
        assert bringup.external_dns_writes(new_aws, "use1.llm.acme.example", zone), zone
    assert not bringup.external_dns_writes(new_aws, "use1.llm.acme.example", "other.example")
    assert not bringup.external_dns_writes(new_aws[:2], "use1.llm.acme.example", "acme.example")  # flag needed
    old_google = ["--provider=google", "--domain-filter=llm.acme.example"]
    assert not bringup.external_dns_writes(old_google, "usc1.llm.acme.example", "acme.example")  # no parent match
    assert bringup.external_dns_writes(["--provider=google"], "usc1.llm.acme.example", "acme.example")
    assert bringup.parent_zones("use1.llm.acme.example") == ["llm.acme.example", "acme.example"]


@pytest.mark.plan
def test_m1_an_external_dns_whose_filters_drop_the_domains_parent_zone_is_reported(prod):
    """The old args (--domain-filter=<gateway.domain>, no --aws-zone-match-parent) publish nothing when the public
    zone make preflight accepts is a parent of the domain (acme.example)."""

    def old_args(resources):
        for stack in ("prod.use1", "prod.usw2"):
            (deployment,) = [r for r in resources[stack] if r.name.endswith("-external-dns") and "Deployment" in r.type]
            container = deployment.inputs["spec"]["template"]["spec"]["containers"][0]
            container["args"] = [
                "--domain-filter=llm.acme.example" if a.startswith("--domain-filter=") else a
                for a in container["args"]
                if a != "--aws-zone-match-parent"
            ]

    found = lines(check(prod, old_args), bringup.facts.EXTERNAL_DNS_KEEPS_A_ZONE)
    assert (
        "prod.use1: gate health: use1 gateway needs a DNS record for use1.llm.acme.example; ExternalDNS on prod-use1 "
        "(prod.use1 (wave 1: canary)) keeps no zone the name may be in (llm.acme.example, acme.example): its filters "
        "drop them [external-dns-writes-only-zones-its-filters-keep]"
    ) in found
    # use1's and usw2's gates in their waves and again in the global one.
    assert len(found) == 4


@pytest.mark.plan
def test_m1_the_external_dns_args_match_the_zones_they_write(prod):
    plans = prod.plans
    for stack, region in (("prod.use1", "use1"), ("prod.usw2", "usw2")):
        args = _external_dns(plans[stack]).inputs["spec"]["template"]["spec"]["containers"][0]["args"]
        assert f"--domain-filter={region}.llm.acme.example" in args and "--aws-zone-match-parent" in args
        assert "--zone-id-filter=Z0412345ACMELLM" in args  # Pulumi.prod.yaml gateway.dns.route53ZoneId
    args = _external_dns(plans["prod.usc1"]).inputs["spec"]["template"]["spec"]["containers"][0]["args"]
    assert not [a for a in args if a.startswith("--domain-filter")]  # google: the zone by name
    assert "--zone-id-filter=prod-usc1-gateway" in args


@pytest.mark.plan
def test_low_usc1s_private_zone_serves_its_own_name_only(prod):
    """A private zone for llm.acme.example would answer, inside usc1's network, for use1's and usw2's public names."""
    plans = prod.plans
    (zone,) = plans["prod.usc1"].of_type("gcp:dns/managedZone:ManagedZone")
    assert zone.inputs["dnsName"] == "usc1.llm.acme.example."


def _external_dns(plan: Plan) -> PlannedResource:
    (found,) = [
        r for r in plan.kubernetes_objects() if r.inputs["kind"] == "Deployment" and r.name.endswith("external-dns")
    ]
    return found


class HandReadCharts:
    """What three pinned charts install, read by hand at their tags (the catalog's chart CRD facts stand in here)."""

    # chart -> (kinds, whether its values install them, served in the Karmada API server it runs)
    TABLE: ClassVar[dict[str, tuple[set[tuple[str, str]], Callable[[dict], bool], bool]]] = {
        # cert-manager/cert-manager@v1.21.1:deploy/charts/cert-manager/templates/crd-cert-manager.io_*.yaml L1
        # `if or .Values.crds.enabled .Values.installCRDs`; values.yaml L104-109: both false by default.
        "cert-manager": (
            {("cert-manager.io", "Certificate"), ("cert-manager.io", "ClusterIssuer")},
            lambda v: bool((v.get("crds") or {}).get("enabled") or v.get("installCRDs")),
            False,
        ),
        # kserve/kserve@v0.20.0:charts/kserve-crd/templates/serving.kserve.io_{inferenceservices,
        # clusterservingruntimes}.yaml, ungated (LLMInferenceService is only in charts/kserve-llmisvc-crd).
        "kserve-crd": (
            {("serving.kserve.io", "InferenceService"), ("serving.kserve.io", "ClusterServingRuntime")},
            lambda v: True,
            False,
        ),
        # karmada-io/karmada@v1.18.2:charts/karmada/templates/pre-install-job.yaml L3 `if eq .Values.installMode
        # "host"` applies _crds/bases/policy/** to the Karmada API server; values.yaml L39 installMode: "host".
        "karmada": (
            {("policy.karmada.io", "PropagationPolicy"), ("policy.karmada.io", "OverridePolicy")},
            lambda v: v.get("installMode", "host") == "host",
            True,
        ),
    }

    def __init__(self):
        self.answered: set[tuple[str, str]] = set()  # kinds the check asked about and the table knows

    def charts(self, group, kind):
        charts = frozenset(chart for chart, (kinds, _, _) in self.TABLE.items() if (group, kind) in kinds)
        if charts:
            self.answered.add((group, kind))
        return charts

    def installed(self, chart, values):
        kinds, installs, in_karmada = self.TABLE.get(chart, (set(), lambda v: False, False))
        return (frozenset(kinds) if installs(values) else frozenset()), in_karmada


@pytest.mark.plan
def test_crd_charts_prod_creates_each_custom_resource_after_the_release_that_installs_its_kind(prod):
    charts = HandReadCharts()
    assert check(prod, crd_charts=charts).violations == []
    assert charts.answered == {kind for kinds, _, _ in HandReadCharts.TABLE.values() for kind in kinds}


@pytest.mark.plan
def test_crd_charts_a_release_whose_values_install_no_crds_is_reported(prod):
    """cert-manager's chart templates its CRDs only with crds.enabled (off by default): usw2's ClusterIssuer and
    Certificate then have no CRD, however early the release."""

    def crds_off(resources):
        release = one(resources["prod.usw2"], "prod-usw2-cert-manager", "kubernetes:helm.sh/v3:Release")
        release.inputs["values"]["crds"]["enabled"] = False

    assert lines(
        check(prod, crds_off, crd_charts=HandReadCharts()), bringup.facts.CUSTOM_RESOURCE_AFTER_ITS_CHARTS_CRDS
    ) == [
        f"prod.usw2: {kind} {name} on prod-usw2 needs the {kind} CRD on prod-usw2, installed by a release of "
        "cert-manager; no release of cert-manager installs it there with its values "
        "[custom-resource-after-the-release-that-installs-its-crd]"
        for kind, name in (("ClusterIssuer", "inference-gateway-ca"), ("Certificate", "inference-gateway"))
    ]


@pytest.mark.plan
def test_crd_charts_a_release_of_another_chart_is_not_an_installer(prod):
    """Any release on the cluster satisfied the check without the catalog; a release of kserve-llmisvc-crd (which has
    no InferenceService or ClusterServingRuntime template at v0.20.0) in place of kserve-crd installs neither."""

    def other_chart(resources):
        release = one(resources["prod.usw2"], "prod-usw2-kserve-crd", "kubernetes:helm.sh/v3:Release")
        release.inputs["chart"] = "oci://ghcr.io/kserve/charts/kserve-llmisvc-crd"

    assert lines(check(prod, other_chart), bringup.facts.HELM_RELEASE_WAITS) == []  # without the catalog: passes
    found = lines(
        check(prod, other_chart, crd_charts=HandReadCharts()), bringup.facts.CUSTOM_RESOURCE_AFTER_ITS_CHARTS_CRDS
    )
    assert sorted(line.split(" needs ")[0] for line in found) == [
        "prod.usw2: ClusterServingRuntime inference-platform-triton-trtllm on prod-usw2",
        "prod.usw2: ClusterServingRuntime inference-platform-vllm on prod-usw2",
        "prod.usw2: ClusterServingRuntime inference-platform-vllm-multinode on prod-usw2",
        "prod.usw2: InferenceService llama-3-1-8b on prod-usw2",
    ]


@pytest.mark.plan
def test_crd_charts_a_kind_served_only_by_another_clusters_release_is_reported(prod):
    """The Karmada API serves InferenceService only through the kserve-crd release installed into it: the members'
    own kserve-crd releases serve their clusters, not Karmada."""

    def no_crds_in_karmada(resources):
        release = one(resources["prod.global"], "prod-karmada-kserve-crd")
        resources["prod.global"].remove(release)
        for r in resources["prod.global"]:
            r.options["dependsOn"] = [u for u in r.options.get("dependsOn", ()) if u != release.urn]

    found = lines(
        check(prod, no_crds_in_karmada, crd_charts=HandReadCharts()),
        bringup.facts.CUSTOM_RESOURCE_AFTER_ITS_CHARTS_CRDS,
    )
    assert found == [
        "prod.global: InferenceService llama-3-1-70b on prod-karmada needs the InferenceService CRD on prod-karmada, "
        "installed by a release of kserve-crd; no release of kserve-crd installs it there with its values "
        "[custom-resource-after-the-release-that-installs-its-crd]"
    ]


@pytest.mark.plan
def test_crd_charts_an_object_created_beside_the_release_that_installs_its_kind_is_reported(prod):
    """Created in the same stack but not after the release (not in its dependency closure): the create may come
    first and be refused."""

    def beside(resources):
        release = one(resources["prod.global"], "prod-karmada-kserve-crd")
        for r in resources["prod.global"]:
            r.options["dependsOn"] = [u for u in r.options.get("dependsOn", ()) if u != release.urn]

    found = lines(check(prod, beside, crd_charts=HandReadCharts()), bringup.facts.CUSTOM_RESOURCE_AFTER_ITS_CHARTS_CRDS)
    assert found == [
        "prod.global: InferenceService llama-3-1-70b on prod-karmada needs the InferenceService CRD on prod-karmada, "
        "installed by a release of kserve-crd; it is created by prod.global (wave 4: global), after it "
        "[custom-resource-after-the-release-that-installs-its-crd]"
    ]


@pytest.mark.plan
def test_crd_charts_karmadas_kinds_are_served_by_the_host_mode_release(prod):
    """installMode host applies Karmada's CRDs to the API server it runs (in prod.use1, wave 1); a release in
    `component` mode (selected components only, values.yaml L38) installs none."""

    def component_mode(resources):
        release = one(resources["prod.use1"], "prod-use1-karmada", "kubernetes:helm.sh/v3:Release")
        release.inputs["values"]["installMode"] = "component"

    found = lines(
        check(prod, component_mode, crd_charts=HandReadCharts()), bringup.facts.CUSTOM_RESOURCE_AFTER_ITS_CHARTS_CRDS
    )
    assert sorted({line.split(" on prod-karmada needs")[0] for line in found}) == [
        "prod.global: OverridePolicy llama-3-1-70b-usc1",
        "prod.global: OverridePolicy llama-3-1-70b-use1",
        "prod.global: OverridePolicy llama-3-1-70b-usw2",
        "prod.global: PropagationPolicy llama-3-1-70b",
    ]


@pytest.mark.plan
def test_defect_8_a_region_stack_without_its_own_engine_settings_is_reported(prod):
    env = prod.env
    own = stack_own_configs(ENVIRONMENTS_DIR, env, ENV)
    own["prod.usw2"] = None
    assert lines(check(prod, own_configs=own), bringup.facts.PULUMI_ENGINE_READS_ITS_STACKS_CONFIG) == [
        "prod.usw2: `pulumi up` of prod.usw2 needs `pulumi:disable-default-providers` in its own stack settings; "
        "Pulumi.prod.usw2.yaml does not exist [pulumi-engine-reads-the-stacks-own-config]"
    ]


def test_the_fixture_stack_files_disable_default_providers():
    for stack in ("use1", "usw2", "usc1", "global"):
        path = ENVIRONMENTS_DIR / f"Pulumi.prod.{stack}.yaml"
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


@pytest.mark.plan
def test_make_plan_fails_on_a_wait_that_cannot_complete(tmp_path, capsys):
    """`make plan`: a missing precondition is an error line naming stack, waiter, need and where; exit 1."""
    import shutil

    import yaml

    from tools.plan.__main__ import main as plan_main

    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(PROJECT_DIR / name, tmp_path / name)
    for name in ("Pulumi.prod.use1.yaml", "Pulumi.prod.usw2.yaml", "Pulumi.prod.usc1.yaml"):
        shutil.copy(ENVIRONMENTS_DIR / name, tmp_path / name)
    document = yaml.safe_load((ENVIRONMENTS_DIR / "Pulumi.prod.yaml").read_text())
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


@pytest.mark.plan
def test_low_the_agent_values_keep_the_null_that_drops_the_charts_rolling_update(prod):
    """The SDK sends `rollingUpdate: None` as null (Helm then removes the chart's default); the plan and the build's
    values file keep it, so `helm template` with them renders a valid Recreate Deployment."""
    from tools.plan.artifacts import helm_files, yaml_text

    plans = prod.plans
    for stack, member in (("prod.use1", "use1"), ("prod.usw2", "usw2"), ("prod.usc1", "usc1")):
        release = plans[stack].named(f"prod-{member}-karmada-agent", "kubernetes:helm.sh/v3:Release")
        assert release.inputs["values"]["agent"]["strategy"] == {"type": "Recreate", "rollingUpdate": None}
    written = yaml_text(helm_files(plans["prod.use1"])["prod-use1/karmada-agent.yaml"])
    assert "    strategy:\n      rollingUpdate: null\n      type: Recreate\n" in written


# --- the catalog's chart CRD facts, as the plan's own check uses them ---------------------------------------------


@pytest.mark.parametrize("values", [{}, {"crds": {"enabled": True}}, {"installCRDs": True}, {"installMode": "agent"}])
def test_crd_charts_the_catalog_agrees_with_the_hand_read_charts(values):
    hand = HandReadCharts()
    assert sorted(HandReadCharts.TABLE) == ["cert-manager", "karmada", "kserve-crd"]
    for chart, (kinds, _, _) in HandReadCharts.TABLE.items():
        for group, kind in kinds:
            assert chart in bringup.CATALOG_CRD_CHARTS.charts(group, kind), (chart, kind)
        # the hand-read table names only the kinds prod uses of each chart
        catalog_kinds, catalog_in_karmada = bringup.CATALOG_CRD_CHARTS.installed(chart, values)
        hand_kinds, hand_in_karmada = hand.installed(chart, values)
        assert (catalog_kinds & kinds, catalog_in_karmada) == (hand_kinds, hand_in_karmada), (chart, values)


@pytest.mark.plan
def test_crd_charts_the_catalog_finds_the_llm_inference_service_without_its_crd_chart(prod):
    """kserve/kserve@v0.20.0: LLMInferenceService's CRD is only in charts/kserve-llmisvc-crd; without that release
    use1's disaggregated model has no CRD (the plan's own check runs with the catalog: tools/rollout/gates.py)."""
    plans = prod.plans
    [stack] = [s for s, plan in plans.items() if any(r.type.endswith(":LLMInferenceService") for r in plan.resources)]

    def drop_llmisvc_crds(resources):
        [release] = [r for r in resources[stack] if r.name.endswith("-kserve-llmisvc-crd")]
        release.inputs["chart"] = "oci://ghcr.io/kserve/charts/kserve-crd"

    assert check(prod, crd_charts=bringup.CATALOG_CRD_CHARTS).violations == []
    found = lines(
        check(prod, drop_llmisvc_crds, crd_charts=bringup.CATALOG_CRD_CHARTS),
        bringup.facts.CUSTOM_RESOURCE_AFTER_ITS_CHARTS_CRDS,
    )
    assert any(" LLMInferenceService llama-3-1-70b-rag " in line for line in found), found


# --- what a release's webhook admits waits for its Service to serve --------------------------------------------------


def _without_webhook_waits(*, stacks: tuple[str, ...], services: tuple[str, ...]):
    """The old code: what a webhook admits waited for the release only, and no patch awaited the webhook's Service."""

    def edit(resources):
        for stack in stacks:
            patches = [
                r
                for r in resources[stack]
                if r.type == "kubernetes:core/v1:ServicePatch" and r.inputs["metadata"]["name"] in services
            ]
            assert patches, stack
            gone = {p.urn for p in patches}
            for patch in patches:
                resources[stack].remove(patch)
            for r in resources[stack]:
                r.options["dependsOn"] = [u for u in r.options.get("dependsOn", ()) if u not in gone]

    return edit


def _unwaited(prod, service: str) -> list[str]:
    """The check's lines for usw2 with no wait for `service` (usw2 installs KServe and Volcano in its own stack)."""
    edit = _without_webhook_waits(stacks=("prod.usw2",), services=(service,))
    return lines(check(prod, edit), bringup.facts.WEBHOOK_SERVES_BEFORE_WHAT_IT_ADMITS)


@pytest.mark.plan
def test_webhooks_prod_awaits_each_webhook_service_before_what_it_admits(prod, prod_report):
    """usw2's stack installs KServe and Volcano and creates runtimes, queues and hypernodes at once (wave 2)."""
    assert lines(prod_report, bringup.facts.WEBHOOK_SERVES_BEFORE_WHAT_IT_ADMITS) == []
    found = _unwaited(prod, "kserve-webhook-server-service")
    assert sorted(found) == [
        f"prod.usw2: ClusterServingRuntime {name} on prod-usw2 needs the kserve-resources webhook's Service "
        "kserve/kserve-webhook-server-service serving (it admits ClusterServingRuntime); nothing waits for it to serve "
        "after its release [webhook-serves-before-what-it-admits]"
        for name in ("inference-platform-triton-trtllm", "inference-platform-vllm", "inference-platform-vllm-multinode")
    ] + [
        "prod.usw2: InferenceService llama-3-1-8b on prod-usw2 needs the kserve-resources webhook's Service "
        "kserve/kserve-webhook-server-service serving (it admits InferenceService); nothing waits for it to serve "
        "after its release [webhook-serves-before-what-it-admits]"
    ]


@pytest.mark.plan
def test_webhooks_a_release_whose_templates_the_llmisvc_webhook_admits_waits_for_it(prod):
    found = _unwaited(prod, "llmisvc-webhook-server-service")
    assert found[0] == (
        "prod.usw2: Helm release prod-usw2-kserve-runtime-configs needs the kserve-llmisvc-resources webhook's Service "
        "kserve/llmisvc-webhook-server-service serving (it admits LLMInferenceServiceConfig); nothing waits for it to "
        "serve after its release [webhook-serves-before-what-it-admits]"
    )


@pytest.mark.plan
def test_webhooks_volcanos_queues_wait_for_its_admission_service(prod):
    found = _unwaited(prod, "volcano-admission-service")
    kinds = sorted({line.split(" on prod-usw2 ")[0].split(": ")[1].split()[0] for line in found})
    assert kinds == ["HyperNode", "Queue"]
    assert all("volcano-system/volcano-admission-service serving" in line for line in found)


@pytest.mark.plan
def test_webhooks_a_patch_that_skips_its_await_does_not_count(prod):
    def skip(resources):
        for r in resources["prod.usw2"]:
            if (
                r.type == "kubernetes:core/v1:ServicePatch"
                and r.inputs["metadata"]["name"] == "volcano-admission-service"
            ):
                r.inputs["metadata"]["annotations"]["pulumi.com/skipAwait"] = "true"

    found = lines(check(prod, skip), bringup.facts.WEBHOOK_SERVES_BEFORE_WHAT_IT_ADMITS)
    assert found and all("nothing waits for it to serve" in line for line in found)


def _volcano_patch(resources):
    (patch,) = [
        r
        for r in resources["prod.usw2"]
        if r.type == "kubernetes:core/v1:ServicePatch" and r.inputs["metadata"]["name"] == "volcano-admission-service"
    ]
    return patch


@pytest.mark.plan
def test_webhooks_near_variants_of_the_wait_do_not_count(prod):
    """A patch that may run before its release (the Service is not there: the apply would create a port-less one),
    one whose waitFor replaces the Service await, and a release that does not wait for its pods."""

    def before_release(resources):
        _volcano_patch(resources).options["dependsOn"] = []

    def wait_for(resources):
        annotations = _volcano_patch(resources).inputs["metadata"]["annotations"]
        annotations["pulumi.com/waitFor"] = "jsonpath={.spec.clusterIP}"

    def release_skips_await(resources):
        release = one(resources["prod.usw2"], "prod-usw2-volcano", "kubernetes:helm.sh/v3:Release")
        release.inputs["skipAwait"] = True

    for edit, where in (
        (before_release, "nothing waits for it to serve after its release"),
        (wait_for, "nothing waits for it to serve after its release"),
        (release_skips_await, "its release prod-usw2-volcano does not wait for its pods (skipAwait)"),
    ):
        found = lines(check(prod, edit), bringup.facts.WEBHOOK_SERVES_BEFORE_WHAT_IT_ADMITS)
        assert found, edit.__name__
        assert all("volcano-system/volcano-admission-service serving (it admits " in line for line in found)
        assert all(f"; {where} [" in line for line in found), (edit.__name__, found[0])


@pytest.mark.plan
def test_webhooks_karmadas_policies_created_by_the_host_stack_wait_for_its_webhook(prod):
    """Karmada's webhooks (by URL to the host's `karmada-webhook` Service, failurePolicy Fail) admit the policies in
    the Karmada API; the global stack creates them a wave after the host installs Karmada. Created by the host's
    own stack, nothing would wait for the webhook to serve."""

    def in_host_stack(resources):
        move(resources, "prod.global", "prod.use1", lambda r: r.inputs.get("kind") == "PropagationPolicy")

    found = lines(check(prod, in_host_stack), bringup.facts.WEBHOOK_SERVES_BEFORE_WHAT_IT_ADMITS)
    assert found == [
        "prod.use1: PropagationPolicy llama-3-1-70b on prod-karmada needs the karmada webhook's Service "
        "karmada-system/karmada-webhook serving (it admits PropagationPolicy); nothing waits for it to serve after its "
        "release [webhook-serves-before-what-it-admits]"
    ]
