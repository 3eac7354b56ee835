"""The health gate with fake cluster and HTTP clients and a fake clock: ready, not ready until the deadline,
ready after a few polls, a gateway refusing the key, and the kubernetes client's answers read right."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from components.catalog.upstream import FACTS, KSERVE_LLMISVC_READY_NEEDS_ITS_OWN_ROUTE
from components.checks.loader import load_environment
from tests.harness import raw_environment
from tools.rollout.health import (
    CheckResult,
    KubernetesProbe,
    ProbeError,
    Target,
    federated_models_check,
    gateway_checks,
    region_checks,
    search_checks,
    wait_healthy,
)

DEV = load_environment(raw_environment("dev"))
GATEWAY = {"baseUrl": "https://use1.gw/v1", "models": ["llama-3-1-8b", "qwen2-5-7b"]}
LISTED = {"data": [{"id": "llama-3-1-8b"}, {"id": "qwen2-5-7b"}]}


class Clock:
    def __init__(self):
        self.now = 0.0
        self.sleeps = 0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps += 1
        self.now += seconds


class Cluster:
    """Models become Ready after `ready_after` polls; GPU nodes are all Ready."""

    def __init__(self, ready_after: int = 0):
        self.polls = 0
        self.ready_after = ready_after
        self.selectors: list[str] = []

    def pool_nodes(self, label_selector):
        self.selectors.append(label_selector)
        return 1, 1

    def serving_ready(self, namespace, kind):
        assert (namespace, kind) == ("inference", "InferenceService")
        self.polls += 1
        return {"llama-3-1-8b": True, "qwen2-5-7b": self.polls > self.ready_after}


def checks(cluster, http_get, keys=None):
    return region_checks(
        env=DEV,
        region="use1",
        gateway=GATEWAY,
        api_keys=lambda: {"research": "sk-research"} if keys is None else keys,
        cluster=lambda: cluster,
        http_get=http_get,
    )


def run(cluster, http_get, timeout=600, keys=None):
    clock = Clock()
    results = wait_healthy(checks(cluster, http_get, keys), timeout_seconds=timeout, clock=clock, sleep=clock.sleep)
    return results, clock


def test_a_healthy_region_passes_every_check_at_once():
    sent = []

    def http_get(url, headers):
        sent.append((url, headers))
        return 200, LISTED

    cluster = Cluster()
    results, clock = run(cluster, http_get)
    assert [(r.name, r.ok) for r in results] == [
        ("use1 pool l40s", True),
        ("use1 pool a100-mig", True),
        ("use1 models", True),
        ("use1 gateway", True),
    ]
    assert clock.sleeps == 0
    assert cluster.selectors == ["inference-platform.io/pool=l40s", "inference-platform.io/pool=a100-mig"]
    assert sent == [("https://use1.gw/v1/models", {"Authorization": "Bearer sk-research"})]


def test_a_model_ready_after_three_polls_passes_and_only_pending_checks_are_polled_again():
    cluster = Cluster(ready_after=3)
    results, clock = run(cluster, lambda url, headers: (200, LISTED))
    assert all(r.ok for r in results)
    assert (cluster.polls, clock.sleeps, len(cluster.selectors)) == (4, 3, 2)


def test_a_model_never_ready_fails_at_the_deadline():
    results, clock = run(Cluster(ready_after=10**6), lambda url, headers: (200, LISTED), timeout=60)
    assert results[2] == CheckResult("use1 models", False, "not Ready: qwen2-5-7b (1/2 Ready)")
    assert clock.now == 60 and clock.sleeps == 4  # every 15 s until the deadline


def test_a_gateway_refusing_the_key_fails():
    results, _ = run(Cluster(), lambda url, headers: (401, None), timeout=30)
    assert results[3] == CheckResult(
        "use1 gateway", False, "GET https://use1.gw/v1/models with research's key: HTTP 401"
    )


def test_a_gateway_not_listing_a_model_fails():
    results, _ = run(Cluster(), lambda url, headers: (200, {"data": [{"id": "llama-3-1-8b"}]}), timeout=0)
    assert results[3].message == "GET https://use1.gw/v1/models: qwen2-5-7b not listed for research"


def test_no_tenant_key_in_the_outputs_fails_without_calling_the_gateway():
    results, _ = run(Cluster(), lambda url, headers: (_ for _ in ()).throw(AssertionError(url)), timeout=0, keys={})
    assert results[3].message == "no key for tenant research in the apiKeys output"


def test_an_unreachable_cluster_is_not_ready_rather_than_a_crash():
    class Unreachable(Cluster):
        def pool_nodes(self, label_selector):
            raise ProbeError("Kubernetes API unreachable: timed out")

    results, _ = run(Unreachable(), lambda url, headers: (200, LISTED), timeout=0)
    assert results[0] == CheckResult("use1 pool l40s", False, "Kubernetes API unreachable: timed out")


def test_kubernetes_probe_reads_node_and_kserve_conditions():
    from kubernetes.client.exceptions import ApiException  # here: the client takes ~0.15 s to import, used only here

    def node(ready):
        return SimpleNamespace(status=SimpleNamespace(conditions=[SimpleNamespace(type="Ready", status=ready)]))

    def isvc(name, ready):
        return {"metadata": {"name": name}, "status": {"conditions": [{"type": "Ready", "status": ready}]}}

    asked = []

    def custom(group, version, namespace, plural):
        asked.append((group, version, plural))
        if plural == "llminferenceservices":
            raise ApiException(status=404, reason="Not Found")  # KServe without the LLMInferenceService CRD
        return {"items": [isvc("a", "True"), isvc("b", "False")]}

    probe = KubernetesProbe.__new__(KubernetesProbe)
    probe._core = SimpleNamespace(list_node=lambda label_selector: SimpleNamespace(items=[node("True"), node("False")]))
    probe._custom = SimpleNamespace(list_namespaced_custom_object=custom)
    assert probe.pool_nodes("x=y") == (1, 2)
    assert probe.serving_ready("inference", "InferenceService") == {"a": True, "b": False}
    # A kind the cluster does not serve is a reason to wait, never an empty (passing) answer.
    with pytest.raises(ProbeError, match="404 Not Found"):
        probe.serving_ready("inference", "LLMInferenceService")
    assert asked == [
        ("serving.kserve.io", "v1beta1", "inferenceservices"),
        ("serving.kserve.io", "v1alpha2", "llminferenceservices"),
    ]


def test_kubernetes_probe_reads_karmada_clusters_and_pediaclusters_ready_conditions():
    """Both are cluster-scoped: Karmada's Cluster (cluster.karmada.io/v1alpha1) and Clusterpedia v0.9.0's
    PediaCluster (cluster.clusterpedia.io/v1alpha2, types.go L11: Ready), each Ready only with status "True"."""

    def cluster(name, conditions):
        return {"metadata": {"name": name}, "status": {"conditions": conditions}}

    asked = []

    def custom(group, version, plural):
        asked.append((group, version, plural))
        return {
            "items": [
                cluster("a", [{"type": "Ready", "status": "True"}]),
                cluster("b", [{"type": "SynchroRunning", "status": "True"}, {"type": "Ready", "status": "False"}]),
                cluster("c", []),
            ]
        }

    probe = KubernetesProbe.__new__(KubernetesProbe)
    probe._custom = SimpleNamespace(list_cluster_custom_object=custom)
    assert probe.members_ready() == probe.indexed_clusters() == {"a": True, "b": False, "c": False}
    assert asked == [
        ("cluster.karmada.io", "v1alpha1", "clusters"),
        ("cluster.clusterpedia.io", "v1alpha2", "pediaclusters"),
    ]


def test_the_search_gate_waits_for_every_pediacluster_the_wave_created():
    class Host:
        def __init__(self):
            self.polls = 0

        def indexed_clusters(self):
            self.polls += 1
            return {"prod-use1": True, "prod-usw2": self.polls > 2, "prod-other": False}

    host = Host()
    (check,) = search_checks(
        host_region="use1", host_cluster="prod-use1", members=["prod-use1", "prod-usw2"], host=lambda: host
    )
    assert check.target == Target("search", "use1", names=("prod-use1", "prod-usw2"))
    assert check.waits_for == "PediaCluster Ready=True on prod-use1: prod-use1, prod-usw2"
    clock = Clock()
    results = wait_healthy([check], timeout_seconds=600, clock=clock, sleep=clock.sleep)
    assert results == [CheckResult("search index", True, "2/2 PediaClusters Ready on prod-use1")]
    assert (host.polls, clock.sleeps) == (3, 2)
    never = search_checks(host_region="use1", host_cluster="prod-use1", members=["prod-usc1"], host=lambda: host)
    assert wait_healthy(never, timeout_seconds=0, clock=clock, sleep=clock.sleep) == [
        CheckResult("search index", False, "not Ready on prod-use1: prod-usc1 (0/1)")
    ]
    assert search_checks(host_region="use1", host_cluster="prod-use1", members=[], host=pytest.fail) == []


def test_a_disaggregated_model_serves_when_its_workloads_and_picker_are_ready():
    """KServe v0.20.0 never sets an LLMInferenceService without a route of its own Ready (its InferencePool waits for
    a Gateway it knows, KSERVE_LLMISVC_READY_NEEDS_ITS_OWN_ROUTE: the rehearsal of prod found the canary gate waiting
    forever): the gate reads its workloads and its picker. Conditions as KServe sets them, written by hand."""
    assert KSERVE_LLMISVC_READY_NEEDS_ITS_OWN_ROUTE.name in FACTS
    waiting = {
        "type": "InferencePoolReady",
        "status": "False",
        "reason": "WaitingForGateway",
        "message": "Inference Pool inference/rag-inference-pool exists but no Gateway controller has accepted it yet",
    }

    def llmisvc(name, workloads, scheduler):
        conditions = [
            {"type": "WorkloadsReady", "status": workloads},
            {"type": "SchedulerWorkloadReady", "status": scheduler},
            waiting,
            {"type": "RouterReady", "status": "False", "reason": "WaitingForGateway"},
            {"type": "Ready", "status": "False", "reason": "WaitingForGateway"},
        ]
        return {"metadata": {"name": name}, "status": {"conditions": conditions}}

    items = [llmisvc("rag", "True", "True"), llmisvc("cold", "False", "True"), llmisvc("no-picker", "True", "False")]
    probe = KubernetesProbe.__new__(KubernetesProbe)
    probe._custom = SimpleNamespace(list_namespaced_custom_object=lambda *_: {"items": items})
    assert probe.serving_ready("inference", "LLMInferenceService") == {"rag": True, "cold": False, "no-picker": False}
    # An InferenceService still needs its Ready.
    isvc = {"metadata": {"name": "a"}, "status": {"conditions": [{"type": "WorkloadsReady", "status": "True"}]}}
    probe._custom = SimpleNamespace(list_namespaced_custom_object=lambda *_: {"items": [isvc]})
    assert probe.serving_ready("inference", "InferenceService") == {"a": False}


def test_a_pool_with_a_node_not_ready_or_below_its_min_size_fails():
    class Nodes(Cluster):
        def __init__(self, answer):
            super().__init__()
            self.answer = answer

        def pool_nodes(self, label_selector):
            return self.answer

    prod = load_environment(raw_environment("prod"))

    def pool_results(answer):
        found = region_checks(
            env=prod,
            region="use1",
            gateway=None,
            api_keys=dict,
            cluster=lambda: Nodes(answer),
            http_get=lambda url, headers: (200, LISTED),
        )
        clock = Clock()
        results = wait_healthy(found[:2], timeout_seconds=0, clock=clock, sleep=clock.sleep)
        return [(r.name, r.ok, r.message) for r in results]

    assert pool_results((1, 2)) == [
        ("use1 pool h100", False, "1/2 nodes Ready (minSize 1)"),
        ("use1 pool l40s", False, "1/2 nodes Ready (minSize 1)"),
    ]
    assert pool_results((0, 0))[0] == ("use1 pool h100", False, "0/0 nodes Ready (minSize 1)")
    assert pool_results((1, 1))[0] == ("use1 pool h100", True, "1/1 nodes Ready (minSize 1)")


def test_a_region_wave_waits_only_for_its_own_models_as_the_kind_each_is_served_as():
    """prod: llama-3-1-70b is federated (Karmada creates it from the global stack), llama-3-1-70b-rag is
    disaggregated (an LLMInferenceService), llama-3-1-8b an InferenceService of use1's own stack."""
    prod = load_environment(raw_environment("prod"))

    def gates(region, federated):
        gateway = {"baseUrl": f"https://{region}.gw/v1", "models": [m.name for m in prod.models]}
        common = {"env": prod, "region": region, "gateway": gateway, "api_keys": dict, "http_get": pytest.fail}
        if federated:
            found = gateway_checks(**common, federated=True)
        else:
            found = region_checks(**common, cluster=lambda: pytest.fail("the dry listing asks no cluster"))
        return {c.name: c.waits_for for c in found if "pool" not in c.name}

    assert gates("use1", federated=False) == {
        "use1 models": "InferenceService Ready=True: llama-3-1-8b",
        "use1 models (LLMInferenceService)": (
            "LLMInferenceService WorkloadsReady=True and SchedulerWorkloadReady=True: llama-3-1-70b-rag"
        ),
        "use1 gateway": "GET https://use1.gw/v1/models with tenant search's key lists llama-3-1-70b-rag, llama-3-1-8b",
    }
    # The global wave: the gateway lists the federated model too (its readiness is read through Karmada).
    assert gates("usw2", federated=True) == {
        "usw2 gateway (federated)": "GET https://usw2.gw/v1/models with tenant search's key lists llama-3-1-70b, "
        "llama-3-1-8b",
    }
    (karmada,) = [federated_models_check(names=["llama-3-1-70b"], karmada=lambda: pytest.fail("no cluster"))]
    assert karmada.target == Target("serving", None, "InferenceService", ("llama-3-1-70b",))
    # usc1 serves mistral on its own and llama-3-1-70b only once the global wave federates it.
    assert gates("usc1", federated=False)["usc1 models"] == "InferenceService Ready=True: mistral-7b-trt"
