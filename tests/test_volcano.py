"""Volcano: scheduler config, tiers, tenant queues, HyperNodes, the scheduling contract and its config errors."""

from __future__ import annotations

import copy

import pytest
import yaml
from pydantic import TypeAdapter

from components.addons.volcano import hyper_nodes, scheduler_config
from components.catalog.charts import CHARTS, VOLCANO_IMAGE_TAG
from components.checks.loader import load_environment
from components.config.region import RegionSpec
from components.domain.queues import gpu_capacity
from components.k8s.scheduling import (
    GROUP_NAME_ANNOTATION,
    PREEMPTABLE_ANNOTATION,
    QUEUE_ANNOTATION,
    model_scheduling,
    pod_group,
)
from stacks.scheduling import fabric_domains
from tests.harness import SERVING_CLUSTERS, config_errors, environment_config, plan_config, raw_environment
from tools.plan.report import render_markdown

QUEUE = "kubernetes:scheduling.volcano.sh/v1beta1:Queue"
HYPERNODE = "kubernetes:topology.volcano.sh/v1alpha1:HyperNode"
PRIORITY_CLASS = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
DOMAIN = "inference-platform.io"


def _release(plan, cluster: str):
    return next(r for r in plan.helm_releases() if r.name == f"{cluster}-volcano")


def _by_cluster(plan, type_: str) -> dict[str, dict[str, dict]]:
    """cluster -> object name -> inputs."""
    out: dict[str, dict[str, dict]] = {}
    for r in plan.of_type(type_):
        out.setdefault(plan.cluster_of(r), {})[r.inputs["metadata"]["name"]] = r
    return out


# --- release and scheduler configuration ------------------------------------------------------------


def test_scheduler_config_has_our_actions_and_plugins(dev_plan):
    values = _release(dev_plan, "dev-use1").inputs["values"]
    config = yaml.safe_load(values["custom"]["scheduler_config_override"])
    assert config["actions"] == "enqueue, allocate, preempt, reclaim, backfill"
    assert [p["name"] for p in config["tiers"][0]["plugins"]] == ["priority", "gang", "conformance"]
    second = {p["name"]: p for p in config["tiers"][1]["plugins"]}
    assert list(second) == ["drf", "predicates", "proportion", "nodeorder", "binpack", "network-topology-aware"]
    assert "overcommit" not in second
    # dev offers time-sliced nvidia.com/gpu (l40s) and three MIG profiles (a100-mig).
    offered = "nvidia.com/gpu, nvidia.com/mig-1g.10gb, nvidia.com/mig-2g.20gb, nvidia.com/mig-3g.40gb"
    assert second["binpack"]["arguments"] == {
        "binpack.weight": 10,
        "binpack.resources": offered,
        **{f"binpack.resources.{r}": 10 for r in offered.split(", ")},
    }
    topology = second["network-topology-aware"]["arguments"]
    assert topology["hypernode.binpack.resources"] == offered
    assert topology["hypernode.binpack.normal-pod.enable"] is True


def test_scheduler_config_packs_on_every_resource_the_pools_offer():
    raw = raw_environment("prod")["regions"][0]
    raw["gpuPools"][0]["mig"] = {"strategy": "mixed", "profile": "all-3g.40gb"}
    region = TypeAdapter(RegionSpec).validate_python(raw)
    plugins = {p["name"]: p for p in scheduler_config(list(gpu_capacity(region)))["tiers"][1]["plugins"]}
    assert plugins["binpack"]["arguments"]["binpack.resources"] == "nvidia.com/gpu, nvidia.com/mig-3g.40gb"
    assert plugins["network-topology-aware"]["arguments"]["hypernode.binpack.resources.nvidia.com/mig-3g.40gb"] == 10
    # enqueue admits whole PodGroups, allocate places them, preempt (realtime over batch within a queue), reclaim
    # (a queue's guarantee back from queues over theirs), backfill (best effort into what is left)
    assert scheduler_config(list(gpu_capacity(region)))["actions"] == "enqueue, allocate, preempt, reclaim, backfill"


@pytest.mark.plan
@pytest.mark.parametrize(("env", "replicas"), [("dev", 1), ("prod", 2)])
def test_release_is_pinned_on_the_system_pool_and_redundant_in_production(env, replicas, request):
    plan = request.getfixturevalue(f"{env}_plan")
    releases = [r for r in plan.helm_releases() if r.name.endswith("-volcano")]
    assert len(releases) == len(plan.spec.regions)
    for release in releases:
        inputs = release.inputs
        assert (inputs["chart"], inputs["version"], inputs["namespace"]) == (
            "volcano",
            CHARTS["volcano"].version,
            "volcano-system",
        )
        custom = inputs["values"]["custom"]
        assert inputs["values"]["basic"]["image_tag_version"] == VOLCANO_IMAGE_TAG
        assert custom["scheduler_name"] == "volcano"
        assert custom["default_ns"] == {f"{DOMAIN}/pool": "system"}
        assert custom["scheduler_replicas"] == custom["controller_replicas"] == replicas
        assert custom["leader_elect_enable"] is (env == "prod")


def test_no_volcano_on_a_cluster_without_gpu_pools(dev_plan):
    # the selectors below find dev's Volcano, so finding nothing here is the absence, not a wrong selector
    assert len([r for r in dev_plan.resources if r.type == "inference-platform:addons:Volcano"]) == 1
    assert len([r for r in dev_plan.helm_releases() if r.name.endswith("-volcano")]) == 1
    config = environment_config("dev")
    config["inference-platform:regions"][0]["gpuPools"] = []
    config["inference-platform:regions"][0]["modelCache"] = {"enabled": False}
    config["inference-platform:models"] = []
    config["inference-platform:tenants"] = []
    plan = plan_config(config)
    assert not [r for r in plan.resources if r.type == "inference-platform:addons:Volcano"]
    assert not [r for r in plan.helm_releases() if r.name.endswith("-volcano")]


# --- priority tiers ---------------------------------------------------------------------------------


def test_priority_classes_per_cluster_in_tier_order(prod_plan):
    by_cluster = _by_cluster(prod_plan, PRIORITY_CLASS)
    assert sorted(by_cluster) == SERVING_CLUSTERS["prod"], "a GPU cluster's classes"
    for cluster, classes in by_cluster.items():
        assert set(classes) == {"inference-realtime", "inference-batch", "inference-best-effort"}, cluster
        realtime, batch, best = (classes[f"inference-{t}"].inputs for t in ("realtime", "batch", "best-effort"))
        assert realtime["value"] > batch["value"] > best["value"] >= 0
        assert realtime["preemptionPolicy"] == "PreemptLowerPriority"
        assert batch["preemptionPolicy"] == best["preemptionPolicy"] == "Never"
        assert not any(c.inputs["globalDefault"] for c in classes.values())


def test_tiers_can_be_redefined_in_config():
    raw = raw_environment()
    raw["priorityTiers"] = [
        {"name": "realtime", "value": 500, "preempts": True, "preemptible": False},
        {"name": "research", "value": 10, "preempts": False, "preemptible": True},
    ]
    raw["tenants"][0]["tier"] = "research"
    env = load_environment(raw)
    assert [t.name for t in env.priority_tiers] == ["realtime", "research"]


# --- tenant queues ----------------------------------------------------------------------------------


def test_one_queue_per_tenant_quota_with_its_capability(prod_plan):
    queues = _by_cluster(prod_plan, QUEUE)
    assert {cluster: set(q) for cluster, q in queues.items()} == {
        "prod-use1": {"search", "support-bot", "evals"},
        "prod-usw2": {"search", "support-bot"},
        "prod-usc1": {"search", "support-bot"},
    }
    assert queues["prod-use1"]["search"].inputs["spec"] == {
        "weight": 3,
        "reclaimable": False,
        "priority": 1_000_000,
        "capability": {"nvidia.com/gpu": 32},
        "guarantee": {"resource": {"nvidia.com/gpu": 16}},
        "deserved": {"nvidia.com/gpu": 16},
    }
    evals = queues["prod-use1"]["evals"].inputs["spec"]
    assert evals == {"weight": 1, "reclaimable": True, "priority": 10_000, "capability": {"nvidia.com/gpu": 16}}
    # usc1's a100-mig pool offers nvidia.com/mig-3g.40gb, which no quota there names: capped at 0, as Volcano would
    # otherwise leave a resource the capability does not list unbounded (VOLCANO_UNLISTED_RESOURCES_ARE_UNCAPPED).
    assert queues["prod-usc1"]["support-bot"].inputs["spec"]["capability"] == {
        "nvidia.com/gpu": 12,
        "nvidia.com/mig-3g.40gb": 0,
    }


def test_plan_md_lists_the_queues(prod_plan):
    md = render_markdown(prod_plan)
    assert "## Scheduling queues (Volcano)" in md
    assert "| prod-use1 | evals | 1 | 10000 | True | nvidia.com/gpu: 16 | - |" in md
    assert (
        "| prod-usc1 | search | 3 | 1000000 | False | nvidia.com/mig-3g.40gb: 0, nvidia.com/gpu: 16 | "
        "nvidia.com/gpu: 8 |" in md
    )


def test_queues_and_hypernodes_wait_for_the_release_that_installs_their_crds(prod_plan):
    # a Queue per tenant quota (search and support-bot in three regions, evals in use1); per cluster a HyperNode for
    # the fabric pool's zone and one for the pool (h100 in use1 and usw2, h200 in usc1)
    assert (len(prod_plan.of_type(QUEUE)), len(prod_plan.of_type(HYPERNODE))) == (7, 6), "queues, hypernodes"
    for type_ in (QUEUE, HYPERNODE):
        for r in prod_plan.of_type(type_):
            release = _release(prod_plan, prod_plan.cluster_of(r))
            assert release.urn in r.options["dependsOn"], r.name


# --- topology ---------------------------------------------------------------------------------------


def _selector_kinds(member: dict) -> list[str]:
    return [k for k in ("exactMatch", "regexMatch", "labelMatch") if k in member["selector"]]


def test_hypernodes_of_a_multi_pool_cluster():
    raw = raw_environment("prod")
    raw["regions"][0]["gpuPools"].append(
        {"name": "h200", "machineType": "p5en.48xlarge", "maxSize": 2, "zones": ["us-east-1b"], "efa": True}
    )
    region = load_environment(raw).region("use1")
    nodes = {n["metadata"]["name"]: n["spec"] for n in hyper_nodes(DOMAIN, "prod-use1", fabric_domains(region))}
    # l40s (g6e.2xlarge) has no multi-node fabric: no HyperNode may claim its nodes.
    assert set(nodes) == {"h100-us-east-1a", "h200-us-east-1b", "zone-us-east-1a", "zone-us-east-1b"}
    assert nodes["h200-us-east-1b"] == {
        "tier": 1,
        "tierName": "placement-group",
        "members": [
            {
                "type": "Node",
                "selector": {
                    "labelMatch": {
                        "matchLabels": {
                            f"{DOMAIN}/placement-group": "prod-use1-h200",
                            "topology.kubernetes.io/zone": "us-east-1b",
                        }
                    }
                },
            }
        ],
    }
    assert nodes["zone-us-east-1a"]["tier"] == 2
    assert [m["selector"]["exactMatch"]["name"] for m in nodes["zone-us-east-1a"]["members"]] == ["h100-us-east-1a"]
    assert [m["selector"]["exactMatch"]["name"] for m in nodes["zone-us-east-1b"]["members"]] == ["h200-us-east-1b"]


def test_planned_hypernodes_follow_the_crd_selector_rules(prod_plan):
    # The CEL rules the conformance checker cannot run: exactly one selector; labelMatch only for Nodes.
    nodes = _by_cluster(prod_plan, HYPERNODE)
    assert {cluster: set(n) for cluster, n in nodes.items()} == {
        "prod-use1": {"h100-us-east-1a", "zone-us-east-1a"},
        "prod-usw2": {"h100-us-west-2b", "zone-us-west-2b"},
        "prod-usc1": {"h200-us-central1-b", "zone-us-central1-b"},
    }
    for by_name in nodes.values():
        for node in by_name.values():
            for member in node.inputs["spec"]["members"]:
                assert len(_selector_kinds(member)) == 1
                assert member["type"] == "Node" or "labelMatch" not in member["selector"]


# --- the scheduling contract ------------------------------------------------------------------------


def test_model_pods_get_scheduler_tier_and_tenant_queue(prod_plan):
    env = prod_plan.spec
    queues, classes = _by_cluster(prod_plan, QUEUE), _by_cluster(prod_plan, PRIORITY_CLASS)
    assert len(env.models) == 4, "prod declares four models"
    for model in env.models:
        scheduling = model_scheduling(env, model)
        assert scheduling.pod_spec_fields() == {
            "schedulerName": "volcano",
            "priorityClassName": "inference-realtime",
        }
        assert scheduling.annotations == {QUEUE_ANNOTATION: model.tenant, PREEMPTABLE_ANNOTATION: "false"}
        for placement in model.placements:  # the names resolve on every cluster the model runs on
            cluster = f"prod-{placement.region}"
            assert scheduling.queue in queues[cluster]
            assert scheduling.priority_class_name in classes[cluster]


def test_batch_model_without_tenant_is_preemptible_in_the_default_queue():
    raw = raw_environment()
    raw["models"][0]["tier"] = "batch"
    del raw["models"][0]["tenant"]
    env = load_environment(raw)
    scheduling = model_scheduling(env, env.models[0])
    assert scheduling.priority_class_name == "inference-batch"
    assert scheduling.annotations == {QUEUE_ANNOTATION: "default", PREEMPTABLE_ANNOTATION: "true"}


def test_pod_group_gangs_the_whole_replica_in_one_fabric_domain(prod_plan, upstream):
    env = prod_plan.spec
    scheduling = model_scheduling(env, env.models[0])
    group = pod_group("llama-3-1-70b-0", "inference", scheduling, members=2, resources_per_member={"nvidia.com/gpu": 8})
    assert group["spec"] == {
        "minMember": 2,
        "queue": "search",
        "priorityClassName": "inference-realtime",
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
        "minResources": {"nvidia.com/gpu": 16},
    }
    assert upstream.validate_custom_resource(group) == []
    assert GROUP_NAME_ANNOTATION == "scheduling.k8s.io/group-name"
    with pytest.raises(ValueError, match="multi-node"):
        pod_group("single", "inference", scheduling, members=1)


# --- configuration errors ---------------------------------------------------------------------------


def test_unknown_tier_lists_the_tiers():
    raw = raw_environment()
    raw["models"][0]["tier"] = "gold"
    raw["tenants"][0]["tier"] = "silver"
    assert config_errors(raw) == [
        "models[0].tier: unknown priority tier 'gold'; use one of realtime, batch, best-effort",
        "tenants[0].tier: unknown priority tier 'silver'; use one of realtime, batch, best-effort",
    ]


def test_redefined_tiers_must_still_cover_the_defaults_in_use():
    raw = raw_environment()
    raw["priorityTiers"] = [{"name": "critical", "value": 10, "preempts": True, "preemptible": False}]
    assert config_errors(raw) == [
        "models[0].tier: unknown priority tier 'realtime'; use one of critical",
        "models[1].tier: unknown priority tier 'realtime'; use one of critical",
        "tenants[0].tier: unknown priority tier 'realtime'; use one of critical",
    ]


def test_duplicate_tiers():
    raw = raw_environment()
    tier = {"name": "realtime", "value": 10, "preempts": True, "preemptible": False}
    raw["priorityTiers"] = [tier, copy.deepcopy(tier)]
    assert config_errors(raw) == [
        "priorityTiers[1]: duplicate tier name 'realtime' (also at index 0); tier names must be unique",
        "priorityTiers[1]: duplicate tier value '10' (also at index 0); tier values must be unique",
    ]


def test_queue_limit_in_a_resource_no_pool_offers():
    raw = raw_environment()
    raw["tenants"][0]["gpuQuotas"][0]["capability"] = {"nvidia.com/mig-7g.80gb": 4}
    assert config_errors(raw) == [
        "tenants[0].gpuQuotas[0].capability: 'nvidia.com/mig-7g.80gb' is not offered by any GPU pool of region "
        "'use1' (offered: nvidia.com/gpu, nvidia.com/mig-1g.10gb, nvidia.com/mig-2g.20gb, nvidia.com/mig-3g.40gb); "
        "use an offered resource name or add a pool that offers it"
    ]


def test_quota_in_a_region_without_gpu_pools():
    raw = raw_environment("prod")
    raw["regions"][2]["gpuPools"] = []
    raw["regions"][2]["modelCache"] = {"enabled": False}  # its workers need GPU nodes: an error of an earlier stage
    raw["models"] = [m for m in raw["models"] if m["name"] == "llama-3-1-8b"]
    for tenant in raw["tenants"]:
        tenant["models"] = ["llama-3-1-8b"]
    errors = config_errors(raw)
    assert errors[0] == (
        "tenants[0].gpuQuotas[2].capability: 'nvidia.com/gpu' is not offered by any GPU pool of region 'usc1' "
        "(offered: none: the region has no GPU pools); use an offered resource name or add a pool that offers it"
    )


def test_guarantees_exceeding_the_cluster_gpu_capacity():
    raw = raw_environment("prod")
    raw["tenants"][2]["gpuQuotas"][0] = {
        "region": "use1",
        "capability": {"nvidia.com/gpu": 20},
        "guarantee": {"nvidia.com/gpu": 16},
    }
    load_environment(raw)  # 16 + 8 + 16 = 40: exactly what use1 holds (4 x 8 H100 + 8 x 1 L40S)
    raw["tenants"][2]["gpuQuotas"][0]["guarantee"] = {"nvidia.com/gpu": 17}
    assert config_errors(raw) == [
        "tenants[2].gpuQuotas[0].guarantee: guarantees in region 'use1' add up to 41 nvidia.com/gpu "
        "(search 16, support-bot 8, evals 17), more than the 40 its GPU pools hold at maxSize; "
        "lower the guarantees or raise pool maxSize"
    ]


def test_guarantee_above_capability_and_above_capacity():
    raw = raw_environment()
    # dev use1: l40s g6e.4xlarge time-sliced x2, maxSize 2 -> 4 nvidia.com/gpu at maxSize
    raw["tenants"][0]["gpuQuotas"][0]["guarantee"] = {"nvidia.com/gpu": 9}
    assert config_errors(raw) == [
        "tenants[0].gpuQuotas[0].guarantee: guarantees 9 nvidia.com/gpu but the capability is only 2; "
        "lower the guarantee or raise the capability",
        "tenants[0].gpuQuotas[0].guarantee: guarantees in region 'use1' add up to 9 nvidia.com/gpu (research 9), "
        "more than the 4 its GPU pools hold at maxSize; lower the guarantees or raise pool maxSize",
    ]


def test_quota_region_unknown_or_repeated():
    raw = raw_environment()
    quota = raw["tenants"][0]["gpuQuotas"][0]
    raw["tenants"][0]["gpuQuotas"] = [quota, copy.deepcopy(quota), {**quota, "region": "euw1"}]
    assert config_errors(raw) == [
        "tenants[0].gpuQuotas[1]: duplicate quota region 'use1' (also at index 0); quota regions must be unique",
        "tenants[0].gpuQuotas[2].region: no region named 'euw1'; use one of use1",
    ]


def test_model_placed_where_its_tenant_has_no_queue():
    raw = raw_environment("prod")
    del raw["tenants"][0]["gpuQuotas"][2]  # search loses usc1, where llama-3-1-70b runs
    assert config_errors(raw) == [
        "models[0].placements[2].region: tenant 'search' has no GPU quota in region 'usc1', so the model's pods "
        "would have no queue there; add a gpuQuotas entry for 'usc1' to the tenant"
    ]


def test_tenant_named_like_a_volcano_queue():
    raw = raw_environment()
    raw["tenants"][0]["name"] = "default"
    for model in raw["models"]:
        model["tenant"] = "default"
    assert config_errors(raw) == [
        "tenants[0].name: 'default' is the name of a queue Volcano manages itself; rename the tenant"
    ]
