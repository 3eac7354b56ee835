"""One GPU pool on EKS: a managed node group on the pinned NVIDIA AL2023 AMI, wired to EFA when asked.

The launch template carries everything EKS's node group API cannot say: the instance type (Capacity
Blocks require it there), the EFA interface layout, the placement group, the capacity reservation,
and nodeadm's NodeConfig (the NVMe instance-store setup, parallel image pulls).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_aws as aws
import yaml

from components.aws.cluster_autoscaler import asg_tags, node_labels, tag_auto_scaling_group
from components.aws.launch_template import hardened_node_settings
from components.catalog.node_images import EKS_AMI_RELEASE_VERSIONS
from components.config.region import GpuPoolSpec
from components.k8s.inputs import InputError, gpu_machine, known, within
from components.k8s.topology import placement_group_name, uses_placement_group
from platform_catalog.machines import MACHINES
from platform_catalog.nodeadm import FAST_IMAGE_PULL
from platform_catalog.topology import GPU_TAINT

if TYPE_CHECKING:
    from components.aws.eks import EksCluster
    from components.aws.network import AwsNetwork

# The NVIDIA variant of the EKS AL2023 AMI ships the driver, the container toolkit and the EFA driver.
GPU_AMI_TYPE = "AL2023_x86_64_NVIDIA"
NODE_GROUP_CAPACITY_TYPE = {
    "onDemand": "ON_DEMAND",
    "reservation": "ON_DEMAND",
    "spot": "SPOT",
    "capacityBlock": "CAPACITY_BLOCK",
}
# create: the node group waits for desiredSize nodes to join. A p5.48xlarge takes ~15-20 min from
#   launch to Ready (8 GPUs, 32 EFA interfaces, 8 NVMe drives assembled into RAID0), and the
#   Auto Scaling group keeps retrying on InsufficientInstanceCapacity: 90 min.
# update: a rolling replacement, one node at a time (max_unavailable 1): drain (model servers get their
#   grace period), launch, join, ~30 min per node for a pool of up to ~6 nodes: 180 min.
# delete: draining and terminating every node in parallel: 60 min.
GPU_NODE_GROUP_TIMEOUTS = pulumi.CustomTimeouts(create="90m", update="180m", delete="60m")
# The launch template's user data: one NodeConfig for nodeadm (AL2023) in a MIME multi-part document, which nodeadm
# merges with the one EKS adds for the cluster (nodeadm/doc/examples.md).
_NODE_CONFIG_USER_DATA = """MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="BOUNDARY"

--BOUNDARY
Content-Type: application/node.eks.aws

---
{node_config}
--BOUNDARY--
"""


def node_config(pool: GpuPoolSpec) -> dict[str, Any] | None:
    """What a GPU pool asks of nodeadm, None when nothing: the instance-store NVMe drives assembled into one RAID0
    array holding the kubelet's and containerd's state (images, emptyDir) and the SOCI snapshotter's, and parallel
    image pulls (upstream.NODEADM_FAST_IMAGE_PULL)."""
    spec: dict[str, Any] = {}
    if MACHINES[pool.machine_type].local_nvme_gib:
        spec["instance"] = {"localStorage": {"strategy": "RAID0"}}
    if pool.image_pull == "parallel":
        spec["featureGates"] = {FAST_IMAGE_PULL: True}
    if not spec:
        return None
    return {"apiVersion": "node.eks.aws/v1alpha1", "kind": "NodeConfig", "spec": spec}


def node_user_data(pool: GpuPoolSpec) -> str | None:
    """The launch template's base64 user data carrying `node_config`, None without one."""
    config = node_config(pool)
    if config is None:
        return None
    text = _NODE_CONFIG_USER_DATA.format(node_config=yaml.safe_dump(config, sort_keys=False))
    return base64.b64encode(text.encode()).decode()


@dataclass(frozen=True, kw_only=True)
class EksNodeTarget:
    """What a node group needs of its cluster and network: from an EksCluster and AwsNetwork built here
    (`EksNodeTarget.of`), or from a cluster that already exists, by its ids."""

    cluster_name: pulumi.Input[str]
    cluster_security_group_id: pulumi.Input[str]
    node_role_arn: pulumi.Input[str]
    vpc_id: pulumi.Input[str]
    private_subnet_ids: Mapping[str, pulumi.Input[str]]  # zone -> subnet
    # What must exist before nodes join (the node role's policies, the CNI add-on).
    ready: Sequence[pulumi.Resource] = ()

    @staticmethod
    def of(eks: EksCluster, network: AwsNetwork) -> EksNodeTarget:
        return EksNodeTarget(
            cluster_name=eks.cluster.name,
            cluster_security_group_id=eks.cluster.vpc_config.cluster_security_group_id,
            node_role_arn=eks.node_role.arn,
            vpc_id=network.vpc_id,
            private_subnet_ids=network.private_subnet_ids,
            ready=tuple(eks.node_prerequisites),
        )


@dataclass(frozen=True, kw_only=True)
class EksGpuNodeGroupArgs:
    zones: Sequence[str]  # the pool's availability zones: target.private_subnet_ids has a subnet in each
    kubernetes_version: str  # the cluster's minor, e.g. "1.33": picks the pinned NVIDIA AMI release
    pool: GpuPoolSpec
    cluster_name: str
    label_domain: str
    target: EksNodeTarget
    # How long Cluster Autoscaler keeps an idle node (cluster_autoscaler.scale_down_unneeded_seconds).
    scale_down_unneeded_seconds: int

    def __post_init__(self) -> None:
        machine = gpu_machine("pool.machine_type", self.pool.machine_type, "aws")
        known("kubernetes_version", self.kubernetes_version, EKS_AMI_RELEASE_VERSIONS, "EKS version with a pinned AMI")
        if not self.zones:
            raise InputError("zones", "name at least one availability zone for the pool's nodes")
        within("zones", self.zones, self.target.private_subnet_ids, "zones target.private_subnet_ids has subnets in")
        if isinstance(self.target.node_role_arn, str) and not self.target.node_role_arn:
            raise InputError("target.node_role_arn", "name the IAM role the pool's nodes run as")
        if self.pool.efa and not machine.efa_interfaces:
            raise InputError("pool.efa", f"{machine.name} has no EFA interfaces")
        capacity = self.pool.capacity
        if capacity.type in ("reservation", "capacityBlock") and not capacity.reservation_id:
            raise InputError("pool.capacity.reservation_id", f"a {capacity.type} pool names the reservation it uses")


def efa_network_interfaces(efa_count: int, security_groups: list[pulumi.Input[str]]) -> list[dict[str, Any]]:
    """AWS's recommended layout: an ENA primary, then one `efa-only` device per network card.

    Card 0 holds the ENA primary (device 0) and an EFA-only device (device 1); every further card
    gets one EFA-only device at index 0. `efa_count` EFA devices plus one ENA in total.
    """
    common = {"security_groups": security_groups, "delete_on_termination": "true"}
    primary = {"network_card_index": 0, "device_index": 0, "interface_type": "interface", **common}
    efa = [{"network_card_index": 0, "device_index": 1, "interface_type": "efa-only", **common}]
    efa += [
        {"network_card_index": card, "device_index": 0, "interface_type": "efa-only", **common}
        for card in range(1, efa_count)
    ]
    return [primary, *efa]


class EksGpuNodeGroup(pulumi.ComponentResource):
    """Placement group, EFA security group, launch template, managed node group of one GPU pool, and the
    Cluster Autoscaler tags on its Auto Scaling group."""

    node_group: aws.eks.NodeGroup
    launch_template: aws.ec2.LaunchTemplate
    autoscaler_tags: list[aws.autoscaling.Tag]  # what Cluster Autoscaler reads on the ASG

    def __init__(self, name: str, args: EksGpuNodeGroupArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:aws:EksGpuNodeGroup", name, None, opts)
        pool = args.pool
        machine = MACHINES[pool.machine_type]
        child = pulumi.ResourceOptions(parent=self)
        full_name = f"{args.cluster_name}-{pool.name}"

        template: dict[str, Any] = {}
        if uses_placement_group(pool):
            group = aws.ec2.PlacementGroup(
                name, name=placement_group_name(args.cluster_name, pool.name), strategy="cluster", opts=child
            )
            template["placement"] = {"group_name": group.name}
        if pool.efa:
            # With interfaces in the template EKS no longer adds the cluster security group itself.
            cluster_sg = args.target.cluster_security_group_id
            template["network_interfaces"] = efa_network_interfaces(
                machine.efa_interfaces, [cluster_sg, self._efa_security_group(name, args, full_name).id]
            )
        user_data = node_user_data(pool)
        if user_data is not None:
            template["user_data"] = user_data
        template |= _capacity_options(pool)

        self.launch_template = aws.ec2.LaunchTemplate(
            name,
            description=f"GPU pool {pool.name}: {machine.name}, IMDSv2 only, encrypted gp3 root volume",
            instance_type=machine.name,
            **hardened_node_settings(full_name, pool.disk_gib),
            **template,
            opts=child,
        )
        self.node_group = aws.eks.NodeGroup(
            name,
            cluster_name=args.target.cluster_name,
            node_group_name=full_name,
            node_role_arn=args.target.node_role_arn,
            subnet_ids=[args.target.private_subnet_ids[zone] for zone in args.zones],
            ami_type=GPU_AMI_TYPE,
            release_version=EKS_AMI_RELEASE_VERSIONS[args.kubernetes_version],
            capacity_type=NODE_GROUP_CAPACITY_TYPE[pool.capacity.type],
            scaling_config={"min_size": pool.min_size, "max_size": pool.max_size, "desired_size": pool.desired},
            # GPU capacity is scarce: replace one node at a time rather than surge several.
            update_config={"max_unavailable": 1},
            node_repair_config={"enabled": True},
            launch_template={"id": self.launch_template.id, "version": self.launch_template.latest_version.apply(str)},
            labels=node_labels(args.label_domain, args.cluster_name, pool),
            taints=[{"key": GPU_TAINT.key, "value": GPU_TAINT.value, "effect": GPU_TAINT.cloud_effect}],
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=list(args.target.ready),
                ignore_changes=["scalingConfig.desiredSize"],
                custom_timeouts=GPU_NODE_GROUP_TIMEOUTS,
            ),
        )
        tags = asg_tags(
            label_domain=args.label_domain,
            cluster_name=args.cluster_name,
            pool=pool,
            unneeded_seconds=args.scale_down_unneeded_seconds,
        )
        self.autoscaler_tags = tag_auto_scaling_group(name, self.node_group, tags, self)
        self.register_outputs({"nodeGroup": self.node_group.node_group_name})

    def _efa_security_group(self, name: str, args: EksGpuNodeGroupArgs, full_name: str) -> aws.ec2.SecurityGroup:
        """EFA's OS-bypass traffic needs all traffic allowed to and from the group itself."""
        child = pulumi.ResourceOptions(parent=self)
        group = aws.ec2.SecurityGroup(
            f"{name}-efa",
            vpc_id=args.target.vpc_id,
            description=f"EFA traffic between the nodes of {full_name}",
            tags={"Name": f"{full_name}-efa"},
            opts=child,
        )
        for direction, rule in (("in", aws.vpc.SecurityGroupIngressRule), ("out", aws.vpc.SecurityGroupEgressRule)):
            rule(
                f"{name}-efa-{direction}",
                security_group_id=group.id,
                referenced_security_group_id=group.id,
                ip_protocol="-1",
                description="EFA: all traffic within the group",
                opts=child,
            )
        return group


def _capacity_options(pool: GpuPoolSpec) -> dict[str, Any]:
    """Launch template settings that pick the capacity: an ODCR or a Capacity Block (spot is the node group's)."""
    capacity = pool.capacity
    target = {"capacity_reservation_target": {"capacity_reservation_id": capacity.reservation_id}}
    if capacity.type == "capacityBlock":
        return {
            "instance_market_options": {"market_type": "capacity-block"},
            "capacity_reservation_specification": target,
        }
    if capacity.type == "reservation":
        return {"capacity_reservation_specification": target}
    return {}
