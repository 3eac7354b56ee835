"""GPU node pools as the evaluated program declares them: fabrics, placement, capacity, labels."""

from __future__ import annotations

import base64

import pulumi
import pytest

from components.checks.loader import load_environment
from components.k8s.topology import gpu_pool_labels
from platform_catalog.machines import MACHINES
from platform_catalog.topology import GPU_TAINT
from stacks.clouds import gcp as gcp_backend
from tests.harness import environment_config, evaluate_program, ns, plan_config
from tools.plan.report import render_markdown

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
NODE_POOL = "gcp:container/nodePool:NodePool"
NETWORK = "gcp:compute/network:Network"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp:compute/firewall:Firewall"

# Pools added to prod for the types and options prod does not use.
AWS_EXTRA = [
    {"name": "a100", "machineType": "p4d.24xlarge", "maxSize": 2, "zones": ["us-east-1b"], "efa": True,
     "capacity": {"type": "reservation", "reservationId": "cr-0123456789abcdef0"}},
    {"name": "h200", "machineType": "p5en.48xlarge", "maxSize": 2, "zones": ["us-east-1c"], "efa": True,
     "capacity": {"type": "capacityBlock", "reservationId": "cr-02168da1478b509e0"}},
    {"name": "spot", "machineType": "g6e.xlarge", "maxSize": 4, "capacity": {"type": "spot"}},
]  # fmt: skip
GCP_EXTRA = [
    {"name": "tcpx", "machineType": "a3-highgpu-8g", "maxSize": 2, "zones": ["us-central1-a"], "gpuDirect": True,
     "capacity": {"type": "spot"}},
    {"name": "tcpxo", "machineType": "a3-megagpu-8g", "maxSize": 2, "zones": ["us-central1-c"], "gpuDirect": True,
     "capacity": {"type": "reservation", "reservationId": "a3-mega-reservation"}},
    {"name": "flex", "machineType": "g2-standard-8", "maxSize": 4, "capacity": {"type": "flexStart"}},
    {"name": "shared", "machineType": "g2-standard-4", "maxSize": 4, "capacity": {"type": "spot"},
     "timeSlicing": {"replicas": 4}},
    {"name": "operator", "machineType": "g2-standard-4", "maxSize": 2, "driverInstall": "operator",
     "timeSlicing": {"replicas": 4}},
    {"name": "mig", "machineType": "a2-highgpu-1g", "maxSize": 2, "gkePartitionSize": "1g.5gb"},
]  # fmt: skip


@pytest.fixture(scope="module")
def variant_plan():
    config = environment_config("prod")
    regions = config[ns("regions")]
    regions[0]["gpuPools"] += AWS_EXTRA
    regions[2]["gpuPools"] += GCP_EXTRA
    return plan_config(config)


def _pools(plan, cloud):
    return [(r, p) for r in plan.spec.regions if r.cloud == cloud for p in r.gpu_pools]


def _cluster_name(plan, region) -> str:
    return f"{plan.environment}-{region.name}"


# --- AWS: EFA, placement, capacity ----------------------------------------------------------------


@pytest.mark.plan
@pytest.mark.parametrize(("pool", "efa"), [("a100", 4), ("h100", 32), ("h200", 16)])
def test_efa_interface_layout(variant_plan, pool, efa):
    template = variant_plan.named(f"use1-{pool}", LAUNCH_TEMPLATE).inputs
    interfaces = template["networkInterfaces"]
    assert len(interfaces) == efa + 1
    layout = [(i["networkCardIndex"], i["deviceIndex"], i["interfaceType"]) for i in interfaces]
    assert layout[0] == (0, 0, "interface")
    assert layout[1:] == [(0, 1, "efa-only")] + [(card, 0, "efa-only") for card in range(1, efa)]
    assert sum(t == "efa-only" for *_, t in layout) == MACHINES[template["instanceType"]].efa_interfaces
    assert all("subnetId" not in i for i in interfaces)  # the node group places them


@pytest.mark.plan
def test_efa_interfaces_carry_cluster_and_self_referencing_security_groups(variant_plan):
    rules = {direction: variant_plan.named(f"use1-h100-efa-{direction}").inputs for direction in ("in", "out")}
    efa_sg = rules["in"]["securityGroupId"]
    for rule in rules.values():
        assert rule["securityGroupId"] == rule["referencedSecurityGroupId"] == efa_sg
        assert rule["ipProtocol"] == "-1"
    assert variant_plan.named("use1-h100-efa-in").type == "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
    assert variant_plan.named("use1-h100-efa-out").type == "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
    cluster_sgs = set()
    for interface in variant_plan.named("use1-h100", LAUNCH_TEMPLATE).inputs["networkInterfaces"]:
        cluster_sg, own_sg = interface["securityGroups"]
        assert own_sg == efa_sg
        cluster_sgs.add(cluster_sg)
    assert len(cluster_sgs) == 1 and cluster_sgs != {efa_sg}


@pytest.mark.plan
def test_efa_pools_are_placement_grouped_and_single_zone(variant_plan):
    grouped = set()
    for region, pool in _pools(variant_plan, "aws"):
        if not pool.efa:
            continue
        name = f"{region.name}-{pool.name}"
        grouped.add(name)
        group = variant_plan.named(name, "aws:ec2/placementGroup:PlacementGroup").inputs
        template = variant_plan.named(name, LAUNCH_TEMPLATE).inputs
        node_group = variant_plan.named(name, NODE_GROUP).inputs
        assert group["strategy"] == "cluster"
        assert (
            template["placement"]["groupName"] == group["name"] == f"{_cluster_name(variant_plan, region)}-{pool.name}"
        )
        assert node_group["labels"]["inference-platform.io/placement-group"] == group["name"]
        # The pool's one subnet is the cluster's private subnet of the pool's zone.
        cluster_subnets = variant_plan.named(f"{region.name}-cluster", "aws:eks/cluster:Cluster").inputs["vpcConfig"][
            "subnetIds"
        ]
        (zone,) = pool.zones
        assert node_group["subnetIds"] == [cluster_subnets[region.zones.index(zone)]]
    # prod's h100 pools and AWS_EXTRA's a100 and h200 set efa
    assert grouped == {"use1-h100", "usw2-h100", "use1-a100", "use1-h200"}


@pytest.mark.plan
def test_pools_without_fabric_have_no_efa_or_placement_group(variant_plan):
    template = variant_plan.named("use1-l40s", LAUNCH_TEMPLATE).inputs
    assert "networkInterfaces" not in template and "placement" not in template
    assert not [r for r in variant_plan.of_type("aws:ec2/placementGroup:PlacementGroup") if "l40s" in r.name]
    assert len(variant_plan.named("use1-l40s", NODE_GROUP).inputs["subnetIds"]) == 3


@pytest.mark.plan
@pytest.mark.parametrize(
    ("pool", "capacity_type", "market", "reservation"),
    [
        ("h100", "ON_DEMAND", None, None),
        ("a100", "ON_DEMAND", None, "cr-0123456789abcdef0"),
        ("h200", "CAPACITY_BLOCK", "capacity-block", "cr-02168da1478b509e0"),
        ("spot", "SPOT", None, None),
    ],
)
def test_aws_capacity_types(variant_plan, pool, capacity_type, market, reservation):
    template = variant_plan.named(f"use1-{pool}", LAUNCH_TEMPLATE).inputs
    assert variant_plan.named(f"use1-{pool}", NODE_GROUP).inputs["capacityType"] == capacity_type
    assert template.get("instanceMarketOptions", {}).get("marketType") == market
    target = template.get("capacityReservationSpecification", {}).get("capacityReservationTarget", {})
    assert target.get("capacityReservationId") == reservation


@pytest.mark.plan
def test_aws_gpu_nodes_hardening_and_lifecycle(variant_plan):
    # prod's h100 and l40s in each AWS region, and AWS_EXTRA's pools in use1
    assert len(_pools(variant_plan, "aws")) == 2 + 2 + len(AWS_EXTRA), "the variant's AWS pools"
    for region, pool in _pools(variant_plan, "aws"):
        name = f"{region.name}-{pool.name}"
        template = variant_plan.named(name, LAUNCH_TEMPLATE).inputs
        assert template["metadataOptions"]["httpTokens"] == "required"
        (root,) = template["blockDeviceMappings"]
        assert root["ebs"] == {
            "volumeType": "gp3",
            "volumeSize": pool.disk_gib,
            "encrypted": "true",
            "deleteOnTermination": "true",
        }
        assert template["instanceType"] == pool.machine_type
        node_group = variant_plan.named(name, NODE_GROUP)
        assert node_group.inputs["amiType"] == "AL2023_x86_64_NVIDIA"
        assert node_group.inputs["nodeRepairConfig"] == {"enabled": True}
        assert node_group.inputs["updateConfig"] == {"maxUnavailable": 1}
        assert node_group.inputs["scalingConfig"] == {
            "minSize": pool.min_size,
            "maxSize": pool.max_size,
            "desiredSize": pool.desired,
        }
        assert node_group.options["customTimeouts"] == {"create": "90m", "update": "180m", "delete": "60m"}
        assert "scalingConfig.desiredSize" in node_group.options["ignoreChanges"]
        assert node_group.options["dependsOn"], "node groups wait for the CNI add-on and node policies"


@pytest.mark.plan
def test_instance_store_nvme_becomes_raid0_ephemeral_storage(variant_plan):
    # prod's h100 and l40s in each AWS region, and AWS_EXTRA's pools in use1
    assert len(_pools(variant_plan, "aws")) == 2 + 2 + len(AWS_EXTRA), "the variant's AWS pools"
    for region, pool in _pools(variant_plan, "aws"):
        assert MACHINES[pool.machine_type].local_nvme_gib
        user_data = base64.b64decode(
            variant_plan.named(f"{region.name}-{pool.name}", LAUNCH_TEMPLATE).inputs["userData"]
        )
        assert b"Content-Type: application/node.eks.aws" in user_data
        assert b"localStorage:\n      strategy: RAID0" in user_data


def test_efa_device_plugin_on_clusters_with_efa_pools(prod_plan, dev_plan):
    assert not [r for r in dev_plan.helm_releases() if r.inputs["name"] == "aws-efa-k8s-device-plugin"]
    releases = [r for r in prod_plan.helm_releases() if r.inputs["name"] == "aws-efa-k8s-device-plugin"]
    assert sorted(prod_plan.cluster_of(r) for r in releases) == ["prod-use1", "prod-usw2"]
    for release in releases:
        values = release.inputs["values"]
        assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"} in values[
            "tolerations"
        ]
        assert values["nodeSelector"] == {"inference-platform.io/fabric": "efa"}
        assert release.inputs["repositoryOpts"]["repo"] == "https://aws.github.io/eks-charts"
        # Privileged host access: it shares the GPU Operator's namespace, the only privileged one.
        assert release.inputs["namespace"] == "gpu-operator"


# --- GCP: GPUDirect, placement, capacity, drivers ------------------------------------------------------


@pytest.mark.plan
@pytest.mark.parametrize(
    ("pool", "vpcs", "mtu", "node_networks"),
    [("tcpx", 4, 8244, 4), ("tcpxo", 8, 8244, 8), ("h200", 2, 8896, 9)],
)
def test_gpudirect_node_networks_per_a3_flavour(variant_plan, pool, vpcs, mtu, node_networks):
    prefix = f"usc1-{pool}-"
    base = f"{_cluster_name(variant_plan, variant_plan.spec.region('usc1'))}-{pool}"
    networks = {r.inputs["name"]: r.inputs for r in variant_plan.of_type(NETWORK) if r.name.startswith(prefix)}
    subnets = {r.inputs["name"]: r.inputs for r in variant_plan.of_type(SUBNET) if r.name.startswith(prefix)}
    assert len(networks) == vpcs
    assert {n["mtu"] for n in networks.values()} == {mtu}
    configs = variant_plan.named(f"usc1-{pool}", NODE_POOL).inputs["networkConfig"]["additionalNodeNetworkConfigs"]
    assert len(configs) == node_networks == len(subnets)
    for config in configs:
        subnet = subnets[config["subnetwork"]]
        assert subnet["network"].endswith(f"/networks/{config['network']}")
        assert config["network"] in networks
    ranges = [s["ipCidrRange"] for s in subnets.values()]
    assert len(set(ranges)) == len(ranges), "a node's NICs need distinct subnets"
    if pool == "h200":
        (zone,) = variant_plan.spec.region("usc1").pool("h200").zones
        rdma = networks[f"{base}-rdma"]
        assert rdma["networkProfile"] == f"projects/acme-inference-prod/global/networkProfiles/{zone}-vpc-roce"
        assert configs[0]["network"] == f"{base}-gvnic0"  # the second Titanium gVNIC first
        assert {c["network"] for c in configs[1:]} == {f"{base}-rdma"}
    else:
        assert all("networkProfile" not in n for n in networks.values())
        assert [c["network"] for c in configs] == [f"{base}-gpu{i}" for i in range(vpcs)]


@pytest.mark.plan
def test_gpudirect_firewalls_allow_internal_traffic_except_on_roce(variant_plan):
    firewalls = [r.inputs for r in variant_plan.of_type(FIREWALL) if r.name.startswith("usc1-")]
    by_pool = {pool: [f for f in firewalls if f"-{pool}-" in f["name"]] for pool in ("tcpx", "tcpxo", "h200")}
    assert (len(by_pool["tcpx"]), len(by_pool["tcpxo"]), len(by_pool["h200"])) == (4, 8, 1)  # RoCE: implicit allow
    for firewall in [f for pool in by_pool.values() for f in pool]:  # the control plane's is tested elsewhere
        assert firewall["sourceRanges"] == ["192.168.0.0/16"]
        assert {a["protocol"] for a in firewall["allows"]} == {"tcp", "udp", "icmp"}


@pytest.mark.plan
def test_multi_networking_only_with_gpudirect_pools(variant_plan):
    assert variant_plan.named("usc1-cluster", "gcp:container/cluster:Cluster").inputs["enableMultiNetworking"] is True
    config = environment_config("prod")
    raw = {key.split(":", 1)[1]: value for key, value in config.items() if key.startswith(ns(""))}
    for pool in raw["regions"][2]["gpuPools"]:
        pool.pop("gpuDirect", None)
    env = load_environment(raw)

    def cluster_only():
        parent = pulumi.ComponentResource("test:Region", "usc1")
        gcp_backend.cluster(parent, env, env.region("usc1"), "t-usc1", "test")

    cluster = evaluate_program(cluster_only).named("usc1-cluster", "gcp:container/cluster:Cluster")
    assert "enableMultiNetworking" not in cluster.inputs


@pytest.mark.plan
def test_compact_placement_links_the_resource_policy(variant_plan):
    packed = set()
    for region, pool in _pools(variant_plan, "gcp"):
        node_pool = variant_plan.named(f"{region.name}-{pool.name}", NODE_POOL).inputs
        if not pool.packed:
            assert "placementPolicy" not in node_pool
            continue
        packed.add(pool.name)
        policy = variant_plan.named(f"{region.name}-{pool.name}", "gcp:compute/resourcePolicy:ResourcePolicy").inputs
        assert policy["groupPlacementPolicy"] == {"collocation": "COLLOCATED"}
        assert node_pool["placementPolicy"] == {"type": "COMPACT", "policyName": policy["name"]}
        assert node_pool["nodeLocations"] == pool.zones and len(pool.zones) == 1
        assert node_pool["nodeConfig"]["labels"]["inference-platform.io/placement-group"] == policy["name"]
    # the GPUDirect pools: prod's h200 (a3-ultragpu) and GCP_EXTRA's tcpx and tcpxo
    assert packed == {"h200", "tcpx", "tcpxo"}


@pytest.mark.plan
@pytest.mark.parametrize(
    ("pool", "affinity", "spot", "flex_start", "auto_repair"),
    [
        ("l4", {"consumeReservationType": "ANY_RESERVATION"}, None, None, True),
        (
            "h200",
            {
                "consumeReservationType": "SPECIFIC_RESERVATION",
                "key": "compute.googleapis.com/reservation-name",
                "values": ["acme-prod-a3u-usc1b"],
            },
            None,
            None,
            True,
        ),
        (
            "tcpxo",
            {
                "consumeReservationType": "SPECIFIC_RESERVATION",
                "key": "compute.googleapis.com/reservation-name",
                "values": ["a3-mega-reservation"],
            },
            None,
            None,
            True,
        ),
        ("shared", {"consumeReservationType": "NO_RESERVATION"}, True, None, True),
        ("flex", {"consumeReservationType": "NO_RESERVATION"}, None, True, False),
    ],
)
def test_gke_capacity_types(variant_plan, pool, affinity, spot, flex_start, auto_repair):
    node_pool = variant_plan.named(f"usc1-{pool}", NODE_POOL).inputs
    config = node_pool["nodeConfig"]
    assert config["reservationAffinity"] == affinity
    assert config.get("spot") is spot
    assert config.get("flexStart") is flex_start
    assert node_pool["management"] == {"autoRepair": auto_repair, "autoUpgrade": True}
    assert node_pool["autoscaling"]["locationPolicy"] == "ANY"


@pytest.mark.plan
@pytest.mark.parametrize(
    ("pool", "driver", "image", "secure_boot", "sharing", "partition"),
    [
        ("l4", "LATEST", "COS_CONTAINERD", True, None, None),
        ("shared", "LATEST", "COS_CONTAINERD", True, {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4}, None),
        ("operator", "INSTALLATION_DISABLED", "UBUNTU_CONTAINERD", False, None, None),
        ("mig", "LATEST", "COS_CONTAINERD", True, None, "1g.5gb"),
    ],
)  # fmt: skip
def test_gke_driver_ownership_and_gpu_sharing(variant_plan, pool, driver, image, secure_boot, sharing, partition):
    config = variant_plan.named(f"usc1-{pool}", NODE_POOL).inputs["nodeConfig"]
    (accelerator,) = config["guestAccelerators"]
    machine = MACHINES[config["machineType"]]
    assert (accelerator["type"], accelerator["count"]) == (machine.accelerator, machine.gpus)
    assert accelerator["gpuDriverInstallationConfig"] == {"gpuDriverVersion": driver}
    assert accelerator.get("gpuSharingConfig") == sharing
    assert accelerator.get("gpuPartitionSize") == partition
    assert config["imageType"] == image
    assert config["shieldedInstanceConfig"] == {"enableSecureBoot": secure_boot, "enableIntegrityMonitoring": True}


@pytest.mark.plan
def test_gke_gpu_nodes_networking_storage_and_identity(variant_plan):
    for region, pool in _pools(variant_plan, "gcp"):
        node_pool = variant_plan.named(f"{region.name}-{pool.name}", NODE_POOL)
        config = node_pool.inputs["nodeConfig"]
        machine = MACHINES[pool.machine_type]
        assert config["gvnic"] == {"enabled": True}
        assert config["gcfsConfig"] == {"enabled": True}
        assert config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
        assert config["metadata"] == {"disable-legacy-endpoints": "true"}
        cluster = _cluster_name(variant_plan, region)
        assert config["serviceAccount"] == f"{cluster}-nodes@{region.project}.iam.gserviceaccount.com"
        assert config["diskType"] == machine.boot_disk_type
        ssd = config.get("ephemeralStorageLocalSsdConfig")
        assert ssd == ({"localSsdCount": machine.local_ssd_count} if machine.local_ssd_count else None)
        assert node_pool.inputs["upgradeSettings"] == {"strategy": "SURGE", "maxSurge": 0, "maxUnavailable": 1}
        assert node_pool.options["customTimeouts"] == {"create": "90m", "update": "180m", "delete": "60m"}
    h200 = variant_plan.named("usc1-h200", NODE_POOL).inputs["nodeConfig"]
    assert (h200["diskType"], h200["ephemeralStorageLocalSsdConfig"]) == ("hyperdisk-balanced", {"localSsdCount": 32})
    assert "ephemeralStorageLocalSsdConfig" not in variant_plan.named("usc1-mig", NODE_POOL).inputs["nodeConfig"]


# --- both clouds -----------------------------------------------------------------------------------------


@pytest.mark.plan
@pytest.mark.parametrize("plan_name", ["dev", "prod", "variant"])
def test_every_gpu_pool_has_the_shared_labels_and_the_gpu_taint(plan_name, request):
    plan = request.getfixturevalue(f"{plan_name}_plan")
    taint = {"key": GPU_TAINT.key, "value": GPU_TAINT.value, "effect": "NO_SCHEDULE"}
    checked = 0
    for region in plan.spec.regions:
        for pool in region.gpu_pools:
            expected = gpu_pool_labels("inference-platform.io", _cluster_name(plan, region), pool)
            name = f"{region.name}-{pool.name}"
            if region.cloud == "aws":
                declared = plan.named(name, NODE_GROUP).inputs
            else:
                declared = plan.named(name, NODE_POOL).inputs["nodeConfig"]
            # EKS nodes also carry Cluster Autoscaler's GPU label (tests/test_cluster_autoscaler.py).
            labels = {k: v for k, v in declared["labels"].items() if k != "k8s.amazonaws.com/accelerator"}
            assert labels == expected
            assert declared["taints"] == [taint]
            checked += 1
    assert checked == sum(len(r.gpu_pools) for r in plan.spec.regions) > 0
    gpu_groups = [r for r in plan.of_type(NODE_GROUP) + plan.of_type(NODE_POOL) if not r.name.endswith("-system")]
    assert len(gpu_groups) == checked


def test_capacity_table_in_plan_md(prod_plan):
    markdown = render_markdown(prod_plan)
    table = markdown.split("## GPU capacity\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert table[0].startswith("| region | pool | machine type | GPU | GPUs / node | nodes (min-max) | fabric |")
    assert (
        "| use1 | h100 | p5.48xlarge | H100-80GB | 8 | 1-4 | efa (32 EFA + 1 ENA) | "
        "placement group `prod-use1-h100` in us-east-1a | parallel (SOCI, nodeadm FastImagePull) | onDemand | "
        "Cluster Autoscaler: on-demand instances "
        # 32 H100 at maxSize; each TP-4 demand gets what the other two's minimum (4 GPUs each) leave: 24 / 4.
        "| llama-3-1-70b: 6; llama-3-1-70b-rag: 6; llama-3-1-70b-rag prefill: 6 |"
    ) in table
    assert (
        "| usc1 | h200 | a3-ultragpu-8g | H200-141GB | 8 | 1-2 | roce (8 GPU NICs) | "
        "compact `prod-usc1-h200` in us-central1-b | whole (streaming: Artifact Registry images only) | "
        "reservation `acme-prod-a3u-usc1b` | GKE cluster autoscaler: "
        "VMs of reservation `acme-prod-a3u-usc1b` only | llama-3-1-70b: 8 |"
    ) in table
    assert len(table) == 2 + sum(len(r.gpu_pools) for r in prod_plan.spec.regions)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("use1-h100", ("h100", "H100-80GB", "80", "efa", "prod-use1-h100", "node")),
        ("use1-l40s", ("l40s", "L40S", "48", "none", "none", "none")),
        ("usc1-h200", ("h200", "H200-141GB", "141", "roce", "prod-usc1-h200", "node")),
        ("usc1-l4", ("l4", "L4", "24", "none", "none", "none")),
    ],
)
def test_shared_label_values(prod_plan, name, expected):
    keys = ("pool", "gpu-product", "gpu-memory-gib", "fabric", "placement-group", "nvlink-domain")
    resource = next(r for r in prod_plan.of_type(NODE_GROUP) + prod_plan.of_type(NODE_POOL) if r.name == name)
    labels = resource.inputs.get("labels") or resource.inputs["nodeConfig"]["labels"]
    assert {f"inference-platform.io/{k}": v for k, v in zip(keys, expected, strict=True)}.items() <= labels.items()
