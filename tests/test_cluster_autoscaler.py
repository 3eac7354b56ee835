"""Cluster Autoscaler on the EKS GPU pools: every pending model pod has a node CA can add.

The template node is rebuilt here the way CA 1.35.0 builds it from ASG tags
(autoscaler@cluster-autoscaler-1.35.0:cluster-autoscaler/cloudprovider/aws/aws_manager.go:
extractLabelsFromAsg, extractTaintsFromAsg, extractAllocatableResourcesFromAsg), independently of
the code that writes the tags, and each model pod is checked against it like the scheduler would.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml

from platform_catalog.machines import MACHINES
from tests.harness import cluster_objects, environment_config, ns, plan_config

TAG = "aws:autoscaling/tag:Tag"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
ROLE = "aws:iam/role:Role"
GPU_NODE_GROUP = "inference-platform:aws:EksGpuNodeGroup"
CA_DIR = "cluster-autoscaler/cluster-autoscaler-chart-9.59.0/"
CA_VALUES = CA_DIR + "chart-cluster-autoscaler.values.yaml"
CA_CHART = CA_DIR + "chart-cluster-autoscaler.Chart.yaml"
CA_EXAMPLE = CA_DIR + "cloudprovider-aws-examples-cluster-autoscaler-autodiscover.yaml"
TEMPLATE = "k8s.io/cluster-autoscaler/node-template/"
# The taint value format CA accepts; others are ignored (extractTaintsFromAsg).
TAINT_VALUE = re.compile(r"(.*):(?:NoSchedule|NoExecute|PreferNoSchedule)")
_UNITS = {"": 1, "m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def _quantity(value) -> float:
    number, unit = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(value)).groups()
    return float(number) * _UNITS[unit]


def _go_duration_seconds(value: str) -> int:
    parts = re.findall(r"([0-9]+)(h|m|s)", value)
    assert "".join(n + u for n, u in parts) == value, value
    return sum(int(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in parts)


def _asg_tags(plan) -> dict[str, dict[str, str]]:
    """Pool component name (`<region>-<pool>`) -> the tags on its ASG."""
    tags: dict[str, dict[str, str]] = {}
    asg_of: dict[str, str] = {}
    for r in plan.of_type(TAG):
        owner = next(a for a in plan.ancestors(r) if a.type == GPU_NODE_GROUP).name
        assert asg_of.setdefault(owner, r.inputs["autoscalingGroupName"]) == r.inputs["autoscalingGroupName"]
        assert r.inputs["tag"]["propagateAtLaunch"] is False
        tags.setdefault(owner, {})[r.inputs["tag"]["key"]] = r.inputs["tag"]["value"]
    assert len(set(asg_of.values())) == len(asg_of), "one ASG per pool"
    return tags


def _template_node(tags: dict[str, str], machine_type: str) -> dict:
    """What CA simulates for a scale-up from zero: instance-type capacity overridden by resource tags."""
    machine = MACHINES[machine_type]
    labels = {"node.kubernetes.io/instance-type": machine_type, "kubernetes.io/os": "linux"}
    taints, capacity = [], {"cpu": machine.vcpus, "memory": machine.memory_gib * 2**30, "pods": 110}
    for key, value in tags.items():
        if key.startswith(TEMPLATE + "label/"):
            labels[key.removeprefix(TEMPLATE + "label/")] = value
        elif key.startswith(TEMPLATE + "taint/") and TAINT_VALUE.fullmatch(value):
            taint_value, effect = value.split(":", 1)
            taints.append({"key": key.removeprefix(TEMPLATE + "taint/"), "value": taint_value, "effect": effect})
        elif key.startswith(TEMPLATE + "resources/"):
            capacity[key.removeprefix(TEMPLATE + "resources/")] = _quantity(value)
    return {"labels": labels, "taints": taints, "capacity": capacity}


def _tolerates(tolerations: list[dict], taint: dict) -> bool:
    return any(
        t.get("key") == taint["key"]
        and t.get("effect", taint["effect"]) == taint["effect"]
        and (t.get("operator") == "Exists" or t.get("value") == taint["value"])
        for t in tolerations
    )


def _model_pods(plan, cluster: str) -> list[tuple[str, dict, dict]]:
    """(model, pod-level fields, container resources) of every pod a model's InferenceService creates, and of both
    pools of an LLMInferenceService."""
    pods = []
    for (member, name), isvc in cluster_objects(plan, "InferenceService").items():
        if member != cluster:
            continue
        predictor = isvc["spec"]["predictor"]
        pods.append((name, predictor, predictor["model"]["resources"]))
        worker = predictor.get("workerSpec")
        if worker:
            pods.append((name, worker, worker["containers"][0]["resources"]))
    for (member, name), llmisvc in cluster_objects(plan, "LLMInferenceService").items():
        if member == cluster:
            for pod in (llmisvc["spec"]["template"], llmisvc["spec"]["prefill"]["template"]):
                pods.append((name, pod, pod["containers"][0]["resources"]))
    return pods


def _aws_pools(plan):
    return [(region, pool) for region in plan.spec.regions if region.cloud == "aws" for pool in region.gpu_pools]


def test_discovery_tags_and_image_are_the_pinned_chart_s(upstream, prod_plan):
    values = upstream.chart_values(CA_VALUES)
    assert values["autoDiscovery"]["tags"] == [
        "k8s.io/cluster-autoscaler/enabled",
        "k8s.io/cluster-autoscaler/{{ .Values.autoDiscovery.clusterName }}",
    ]
    example = yaml.safe_load_all((upstream.root / CA_EXAMPLE).read_text())
    args = [a for doc in example if doc["kind"] == "Deployment" for c in doc["spec"]["template"]["spec"]["containers"]
            for a in c["command"]]  # fmt: skip
    assert (
        "--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,k8s.io/cluster-autoscaler/<YOUR CLUSTER NAME>"
        in args
    )
    app_version = yaml.safe_load((upstream.root / CA_CHART).read_text())["appVersion"]
    [release, *_] = [r for r in prod_plan.helm_releases() if r.inputs["name"] == "cluster-autoscaler"]
    rendered = release.inputs["values"]
    # Ours keep upstream's two keys (with the cluster name) first, then add one only GPU pools carry.
    assert rendered["autoDiscovery"]["tags"][:2] == [
        "k8s.io/cluster-autoscaler/enabled",
        "k8s.io/cluster-autoscaler/prod-use1",
    ]
    assert rendered["image"]["tag"] == values["image"]["tag"] == f"v{app_version}"


def test_every_pending_model_pod_fits_the_node_ca_would_add(env_plan):
    tags = _asg_tags(env_plan)
    checked = 0
    for region, pool in _aws_pools(env_plan):
        template = _template_node(tags[f"{region.name}-{pool.name}"], pool.machine_type)
        for model, pod, resources in _model_pods(env_plan, f"{env_plan.environment}-{region.name}"):
            if pod["nodeSelector"].get("inference-platform.io/pool") != pool.name:
                continue  # another pool's
            assert pod["nodeSelector"].items() <= template["labels"].items(), model
            for taint in template["taints"]:
                assert _tolerates(pod["tolerations"], taint), (model, taint)
            for resource, amount in resources["requests"].items():
                assert resource in template["capacity"], (model, resource)
                assert _quantity(amount) <= template["capacity"][resource], (model, resource)
            checked += 1
    placed = sum(1 for m in env_plan.spec.models for p in m.placements if env_plan.spec.region(p.region).cloud == "aws")
    assert checked >= placed > 0


def test_the_template_advertises_what_the_device_plugins_will(dev_plan, prod_plan):
    dev, prod = _asg_tags(dev_plan), _asg_tags(prod_plan)
    res = TEMPLATE + "resources/"
    # Time-sliced x2 L40S: two nvidia.com/gpu per node.
    assert dev["use1-l40s"][res + "nvidia.com/gpu"] == "2"
    # Mixed MIG on 8 A100s, 3g.40gb + 2g.20gb + 2x 1g.10gb per GPU; no whole GPUs (CA's table says 8).
    assert {k.removeprefix(res): v for k, v in dev["use1-a100-mig"].items() if k.startswith(res)} == {
        "nvidia.com/gpu": "0",
        "nvidia.com/mig-3g.40gb": "8",
        "nvidia.com/mig-2g.20gb": "8",
        "nvidia.com/mig-1g.10gb": "16",
    }
    # EFA pool: every EFA device the launch template attaches.
    assert prod["use1-h100"][res + "vpc.amazonaws.com/efa"] == "32"
    assert prod["use1-h100"][res + "nvidia.com/gpu"] == "8"
    assert res + "vpc.amazonaws.com/efa" not in prod["use1-l40s"]


def test_gpu_label_only_where_nvidia_gpu_is_advertised(dev_plan, prod_plan):
    label = "k8s.amazonaws.com/accelerator"
    labels = {r.name: r.inputs["labels"] for plan in (dev_plan, prod_plan) for r in plan.of_type(NODE_GROUP)}
    assert labels["use1-l40s"][label] == "nvidia-l40s"
    assert labels["use1-h100"][label] == "nvidia-h100-80gb"
    # Mixed MIG nodes never advertise nvidia.com/gpu: CA would hold them unready for good.
    assert label not in labels["use1-a100-mig"]
    assert label not in labels["use1-system"]
    assert _asg_tags(prod_plan)["use1-h100"][TEMPLATE + "label/" + label] == "nvidia-h100-80gb"


def test_dev_gpu_pools_at_zero_can_scale_from_zero(dev_plan):
    tags = _asg_tags(dev_plan)
    for region, pool in _aws_pools(dev_plan):
        name = f"{region.name}-{pool.name}"
        scaling = dev_plan.named(name, NODE_GROUP).inputs["scalingConfig"]
        assert (scaling["minSize"], scaling["desiredSize"]) == (0, 0)
        assert scaling["maxSize"] == pool.max_size >= 1
        template = _template_node(tags[name], pool.machine_type)
        # With no node to copy, the template alone must say the pool label, the taint and a GPU resource.
        assert template["labels"]["inference-platform.io/pool"] == pool.name
        assert template["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
        assert any(v > 0 for k, v in template["capacity"].items() if k.startswith("nvidia.com/"))
    assert len(tags) == 2


def test_discovery_finds_the_gpu_pools_and_nothing_else(env_plan):
    tags = _asg_tags(env_plan)
    for release in env_plan.helm_releases():
        if release.inputs["name"] != "cluster-autoscaler":
            continue
        values = release.inputs["values"]
        cluster = values["autoDiscovery"]["clusterName"]
        region = cluster.removeprefix(f"{env_plan.environment}-")
        pools = {f"{region}-{p.name}" for p in env_plan.spec.region(region).gpu_pools}
        wanted = values["autoDiscovery"]["tags"]
        assert wanted[:2] == ["k8s.io/cluster-autoscaler/enabled", f"k8s.io/cluster-autoscaler/{cluster}"]
        discovered = {name for name, t in tags.items() if set(wanted) <= set(t)}
        assert discovered == pools
        # Bounds come from each ASG's min/max (set from the pool), never from --nodes.
        assert "autoscalingGroups" not in values
        assert values["awsRegion"] == env_plan.spec.region(region).region
        assert values["replicaCount"] == (2 if env_plan.spec.production else 1)
    releases = [r for r in env_plan.helm_releases() if r.inputs["name"] == "cluster-autoscaler"]
    assert len(releases) == sum(1 for r in env_plan.spec.regions if r.cloud == "aws" and r.gpu_pools)


def test_scale_down_waits_at_least_for_a_model_to_load(env_plan):
    tags = _asg_tags(env_plan)
    compared = 0
    for region, pool in _aws_pools(env_plan):
        delay = _go_duration_seconds(
            tags[f"{region.name}-{pool.name}"][TEMPLATE + "autoscaling-options/scaledownunneededtime"]
        )
        assert delay >= 600  # never below CA's default
        servers = [
            (key, isvc, isvc["spec"]["predictor"]["nodeSelector"])
            for key, isvc in cluster_objects(env_plan, "InferenceService").items()
        ] + [  # a disaggregated model's decode pool
            (key, llmisvc, llmisvc["spec"]["template"]["nodeSelector"])
            for key, llmisvc in cluster_objects(env_plan, "LLMInferenceService").items()
        ]
        for (cluster, model), isvc, selector in servers:
            if (
                cluster == f"{env_plan.environment}-{region.name}"
                and selector["inference-platform.io/pool"] == pool.name
            ):
                load = int(isvc["metadata"]["annotations"]["inference-platform.io/estimated-load-seconds"])
                assert delay >= load, (model, delay, load)
                compared += 1
    assert compared == sum(
        1 for m in env_plan.spec.models for p in m.placements if env_plan.spec.region(p.region).cloud == "aws"
    )


@pytest.mark.plan
def test_a_slow_loading_model_lengthens_its_pool_s_scale_down_delay():
    config = environment_config("dev")
    config[ns("regions")][0]["serving"] = {"weightLoadGibPerSecond": 0.01}  # 3.7 GiB at 10 MiB/s
    plan = plan_config(config)
    isvc = cluster_objects(plan, "InferenceService")["test-use1", "llama-3-1-8b"]
    load = int(isvc["metadata"]["annotations"]["inference-platform.io/estimated-load-seconds"])
    delay = _go_duration_seconds(_asg_tags(plan)["use1-l40s"][TEMPLATE + "autoscaling-options/scaledownunneededtime"])
    assert load > 600 and delay >= load


def test_efa_pools_stay_in_their_placement_group_and_zone(prod_plan):
    """CA only sets desired capacity: every node comes from the pool's launch template and subnets."""
    efa_pools = [(region, pool) for region, pool in _aws_pools(prod_plan) if pool.efa]
    assert len(efa_pools) == 2
    for region, pool in efa_pools:
        name = f"{region.name}-{pool.name}"
        node_group = prod_plan.named(name, NODE_GROUP).inputs
        template = prod_plan.named(name, "aws:ec2/launchTemplate:LaunchTemplate").inputs
        assert len(node_group["subnetIds"]) == 1
        assert template["placement"]["groupName"] == f"prod-{name}"
        assert _asg_tags(prod_plan)[name][TEMPLATE + "label/inference-platform.io/placement-group"] == f"prod-{name}"


def test_irsa_role_is_least_privilege(prod_plan):
    aws_regions = [r for r in prod_plan.spec.regions if r.cloud == "aws"]
    assert len(aws_regions) == 2
    for region in aws_regions:
        role = prod_plan.named(f"{region.name}-cluster-autoscaler", ROLE).inputs
        trust = json.loads(role["assumeRolePolicy"])["Statement"][0]["Condition"]["StringEquals"]
        assert "system:serviceaccount:cluster-autoscaler:cluster-autoscaler" in trust.values()
        policy = json.loads(prod_plan.named(f"{region.name}-cluster-autoscaler-inline", ROLE_POLICY).inputs["policy"])
        by_sid = {s["Sid"]: s for s in policy["Statement"]}
        writes = by_sid["ScaleGpuPools"]
        assert writes["Action"] == ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"]
        asgs = {
            r.inputs["autoscalingGroupName"] for r in prod_plan.of_type(TAG) if prod_plan.region_of(r) == region.name
        }
        assert len(asgs) == len(region.gpu_pools)
        assert {arn.rsplit("/", 1)[1] for arn in writes["Resource"]} == asgs
        assert all(arn.startswith(f"arn:aws:autoscaling:{region.region}:") for arn in writes["Resource"])
        node_groups = [r for r in prod_plan.of_type(NODE_GROUP) if prod_plan.region_of(r) == region.name]
        assert len(by_sid["ReadGpuNodeGroups"]["Resource"]) == len(region.gpu_pools) == len(node_groups) - 1
        assert all(":nodegroup/" in arn for arn in by_sid["ReadGpuNodeGroups"]["Resource"])
        # Only reads EC2 and Auto Scaling allow no resource scope for go to "*".
        assert all(a.split(":")[1].startswith(("Describe", "GetInstanceTypes")) for a in by_sid["Discover"]["Action"])
        release = next(
            r
            for r in prod_plan.helm_releases()
            if r.inputs["name"] == "cluster-autoscaler" and prod_plan.region_of(r) == region.name
        )
        service_account = release.inputs["values"]["rbac"]["serviceAccount"]
        assert service_account["name"] == "cluster-autoscaler"
        assert f":role/{region.name}-cluster-autoscaler" in service_account["annotations"]["eks.amazonaws.com/role-arn"]


def test_gke_clusters_get_no_cluster_autoscaler(prod_plan):
    """GKE node pools autoscale between their bounds themselves (the node pool's `autoscaling`)."""
    regions = {prod_plan.region_of(r) for r in prod_plan.helm_releases() if r.inputs["name"] == "cluster-autoscaler"}
    assert regions == {r.name for r in prod_plan.spec.regions if r.cloud == "aws"} == {"use1", "usw2"}


def test_every_model_pod_on_gke_matches_an_autoscaled_node_pool(prod_plan):
    """GKE's autoscaler builds its template from the node pool: labels and taints of nodeConfig, up to maxSize."""
    checked = 0
    for region in [r for r in prod_plan.spec.regions if r.cloud == "gcp"]:
        for pool in region.gpu_pools:
            node_pool = prod_plan.named(f"{region.name}-{pool.name}", "gcp:container/nodePool:NodePool").inputs
            assert node_pool["autoscaling"]["totalMaxNodeCount"] == pool.max_size >= 1
            config = node_pool["nodeConfig"]
            taints = [{**t, "effect": "NoSchedule"} for t in config["taints"] if t["effect"] == "NO_SCHEDULE"]
            assert len(taints) == len(config["taints"])
            for model, pod, _ in _model_pods(prod_plan, f"prod-{region.name}"):
                if pod["nodeSelector"].get("inference-platform.io/pool") != pool.name:
                    continue
                assert pod["nodeSelector"].items() <= config["labels"].items(), model
                assert all(_tolerates(pod["tolerations"], t) for t in taints), model
                checked += 1
    assert checked == sum(1 for m in prod_plan.spec.models for p in m.placements if p.region == "usc1") == 2


@pytest.mark.plan
def test_a_multi_node_gang_fits_the_efa_template_and_the_pool():
    """A pipeline-parallel replica over two p5 nodes: its head and worker pods each ask for a whole node's
    GPUs and every EFA interface, which the template advertises; the pool holds both nodes."""
    from components.domain.capacity import pool_holds, replica_demands
    from tests.test_serving_config import _multi_node_prod

    plan = plan_config(_multi_node_prod())  # as the other tests of this variant ask for it: one plan
    template = _template_node(_asg_tags(plan)["use1-h100"], "p5.48xlarge")
    gang = [(m, pod, res) for m, pod, res in _model_pods(plan, "test-use1") if m == "llama-3-1-70b"]
    assert len(gang) == 2  # head + one worker
    for _, pod, resources in gang:
        assert pod["nodeSelector"].items() <= template["labels"].items()
        assert resources["requests"]["vpc.amazonaws.com/efa"] == template["capacity"]["vpc.amazonaws.com/efa"] == 32
        assert resources["requests"]["nvidia.com/gpu"] == template["capacity"]["nvidia.com/gpu"] == 8
    use1 = plan.spec.region("use1")
    [demand] = [d for d in replica_demands(plan.spec, use1) if d.model.name == "llama-3-1-70b"]
    assert (demand.pipeline_parallel, demand.per_replica) == (2, 16)
    assert pool_holds(demand, [demand]) == 2  # 4 nodes, 2 per replica
