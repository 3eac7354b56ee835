"""Cluster Autoscaler on the GPU pools' managed node groups: pending model pods get nodes, idle ones go.

EKS managed node groups only move between minSize and maxSize when something sets their Auto
Scaling group's desired capacity; Cluster Autoscaler (chart 9.59.0, CA 1.35.0) is that something.
It finds the GPU pools' ASGs by tag, and for a pool at 0 nodes it simulates the node a scale-up
would add from the ASG's `node-template` tags (components/catalog/cluster_autoscaler.py): the pool's
labels, its GPU taint and the extended resources the node will advertise once the device plugins run. EKS does
not copy node group tags to the ASG, so each tag is set on the ASG itself (`aws.autoscaling.Tag` on
`resources[0].autoscalingGroups[0].name`).

Nothing about the launch changes: the ASG keeps the pool's launch template (EFA interfaces,
placement group, ODCR / Capacity Block target), subnets and min/max; CA only sets desired capacity.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.aws.irsa import IrsaRoleArgs, irsa_role
from components.catalog import cluster_autoscaler as ca
from components.catalog.charts import CHARTS, CLUSTER_AUTOSCALER_IMAGE_TAG
from components.config.region import GpuPoolSpec
from components.domain.gpu_resources import EFA_RESOURCE, WHOLE_GPU, schedulable_resources
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import helm_release, namespace
from components.k8s.inputs import InputError, required
from components.k8s.topology import gpu_pool_labels, pool_selector
from platform_catalog.machines import MACHINES
from platform_catalog.topology import GPU_TAINT

NAMESPACE = "cluster-autoscaler"
SERVICE_ACCOUNT = "cluster-autoscaler"
# A p5.48xlarge needs 15-20 min from launch to Ready (8 GPUs, 32 EFA interfaces, NVMe RAID); CA's
# default --max-node-provision-time of 15 min would give up on it and back the pool off. CA reads no
# per-ASG override of it on AWS, so it is global.
MAX_NODE_PROVISION_SECONDS = 1800
# Cluster Autoscaler's default --max-graceful-termination-sec: the most of a pod's grace a scale-down grants
# (kubernetes/autoscaler@cluster-autoscaler-1.35.0:cluster-autoscaler/config/flags/flags.go L121; core/scaledown/
# actuation/drain.go L230-L247: min(the pod's grace, this)).
CA_MAX_GRACEFUL_TERMINATION_SECONDS = 600


def discovery_tags(label_domain: str, cluster_name: str) -> dict[str, str]:
    """Tags CA discovers node groups by: the upstream pair, plus ours so only GPU pools are picked up
    (the system pool keeps its fixed size)."""
    enabled, cluster = (key.format(cluster=cluster_name) for key in ca.DISCOVERY_TAGS)
    return {enabled: "true", cluster: "owned", f"{label_domain}/gpu-pool": "true"}


def accelerator_labels(pool: GpuPoolSpec) -> dict[str, str]:
    """CA's GPU label, on pools that advertise `nvidia.com/gpu` (mixed MIG pools advertise none: CA would
    hold such a node unready forever)."""
    if WHOLE_GPU not in schedulable_resources(pool):
        return {}
    return {ca.GPU_LABEL: "nvidia-" + MACHINES[pool.machine_type].gpu.lower()}


def node_labels(label_domain: str, cluster_name: str, pool: GpuPoolSpec) -> dict[str, str]:
    """Labels the pool's nodes get from EKS, and the template CA builds for a scale-up from zero."""
    return {**gpu_pool_labels(label_domain, cluster_name, pool), **accelerator_labels(pool)}


def node_resources(pool: GpuPoolSpec) -> dict[str, int]:
    """Extended resources a node of the pool advertises once the GPU Operator (MIG, time-slicing) and the
    EFA device plugin run; CA's instance table knows neither MIG devices, shares nor EFA."""
    machine = MACHINES[pool.machine_type]
    resources = {WHOLE_GPU: 0, **schedulable_resources(pool)}
    if pool.efa:
        resources[EFA_RESOURCE] = machine.efa_interfaces
    return resources


def max_graceful_termination_seconds(graces: Iterable[int | None]) -> int:
    """What a scale-down grants a pod of its grace: the longest of the pools' pods (`graces`, None where a pod keeps
    the default), at least Cluster Autoscaler's own default."""
    return max([CA_MAX_GRACEFUL_TERMINATION_SECONDS, *(g for g in graces if g is not None)])


def scale_down_unneeded_seconds(load_seconds: Sequence[int]) -> int:
    """How long an idle node stays: at least CA's default, and at least the slowest model start on the pool,
    so a node is not given back while bringing a replica back would take longer."""
    return max([ca.DEFAULT_SCALE_DOWN_UNNEEDED_SECONDS, *load_seconds])


def asg_tags(*, label_domain: str, cluster_name: str, pool: GpuPoolSpec, unneeded_seconds: int) -> dict[str, str]:
    """Every tag the pool's ASG carries for CA: discovery, template labels, taint, resources, scale-down."""
    tags = discovery_tags(label_domain, cluster_name)
    for key, value in node_labels(label_domain, cluster_name, pool).items():
        tags[ca.LABEL_TAG + key] = value
    tags[ca.TAINT_TAG + GPU_TAINT.key] = f"{GPU_TAINT.value}:{GPU_TAINT.effect}"
    for resource, count in node_resources(pool).items():
        tags[ca.RESOURCE_TAG + resource] = str(count)
    tags[ca.OPTION_TAG + "scaledownunneededtime"] = f"{math.ceil(unneeded_seconds / 60)}m0s"
    return tags


def tag_auto_scaling_group(
    name: str, node_group: aws.eks.NodeGroup, tags: dict[str, str], parent: pulumi.Resource
) -> list[aws.autoscaling.Tag]:
    """One `aws.autoscaling.Tag` per key on the node group's ASG (named after the key, so adding one
    replaces nothing); not propagated to the instances."""
    asg_name = _asg_name(node_group)
    return [
        aws.autoscaling.Tag(
            f"{name}-" + re.sub(r"[^a-z0-9.-]+", "-", key.removeprefix(ca.NODE_TEMPLATE).lower()),
            autoscaling_group_name=asg_name,
            tag={"key": key, "value": value, "propagate_at_launch": False},
            opts=pulumi.ResourceOptions(parent=parent),
        )
        for key, value in tags.items()
    ]


def _asg_name(node_group: aws.eks.NodeGroup) -> pulumi.Output[str]:
    """The Auto Scaling group EKS made for a managed node group."""
    name: pulumi.Output[str] = node_group.resources.apply(lambda resources: resources[0].autoscaling_groups[0].name)
    return name


def autoscaler_policy(region: str, asg_names: Sequence[str], node_group_arns: Sequence[str]) -> str:
    """Least privilege: reads where EC2 and Auto Scaling allow no resource scope, writes only to the GPU
    pools' ASGs, DescribeNodegroup only on their node groups [cloudprovider-aws-README.md "IAM Policy"]."""
    account = node_group_arns[0].split(":")[4]
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "Discover",
                    "Effect": "Allow",
                    "Action": [
                        "autoscaling:DescribeAutoScalingGroups",
                        "autoscaling:DescribeAutoScalingInstances",
                        "autoscaling:DescribeLaunchConfigurations",
                        "autoscaling:DescribeScalingActivities",
                        "ec2:DescribeImages",
                        "ec2:DescribeInstanceTypes",
                        "ec2:DescribeLaunchTemplateVersions",
                        "ec2:GetInstanceTypesFromInstanceRequirements",
                    ],
                    "Resource": "*",
                },
                {
                    "Sid": "ScaleGpuPools",
                    "Effect": "Allow",
                    "Action": ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"],
                    "Resource": [
                        f"arn:aws:autoscaling:{region}:{account}:autoScalingGroup:*:autoScalingGroupName/{asg}"
                        for asg in asg_names
                    ],
                },
                {
                    "Sid": "ReadGpuNodeGroups",
                    "Effect": "Allow",
                    "Action": ["eks:DescribeNodegroup"],
                    "Resource": list(node_group_arns),
                },
            ],
        }
    )


def chart_values(
    *,
    cluster_name: str,
    aws_region: str,
    label_domain: str,
    role_arn: pulumi.Input[str],
    production: bool,
    max_graceful_termination_seconds: int,
) -> dict[str, object]:
    """CA on the system pool, finding the GPU pools by tag, with the IRSA role; a standby replica in
    production (CA elects a leader by default, --leader-elect). A node it removes is drained within
    `max_graceful_termination_seconds`: CA cuts each pod's grace to it (default 10 min)."""
    return {
        "replicaCount": 2 if production else 1,
        "cloudProvider": "aws",
        "awsRegion": aws_region,
        "autoDiscovery": {"clusterName": cluster_name, "tags": list(discovery_tags(label_domain, cluster_name))},
        "image": {"tag": CLUSTER_AUTOSCALER_IMAGE_TAG},
        "rbac": {"serviceAccount": {"name": SERVICE_ACCOUNT, "annotations": {"eks.amazonaws.com/role-arn": role_arn}}},
        "nodeSelector": pool_selector(label_domain, "system"),
        "extraArgs": {
            "max-node-provision-time": f"{MAX_NODE_PROVISION_SECONDS // 60}m",
            "max-graceful-termination-sec": str(max_graceful_termination_seconds),
        },
        "resources": {"requests": {"cpu": "100m", "memory": "600Mi"}, "limits": {"memory": "600Mi"}},
        # The image is distroless:nonroot (uid 65532): it runs under the restricted Pod Security profile.
        "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "seccompProfile": {"type": "RuntimeDefault"}},
        "containerSecurityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
    }


@dataclass(frozen=True, kw_only=True)
class ClusterAutoscalerArgs:
    cluster: ClusterHandle  # an EKS cluster's, with its IRSA identity
    aws_region: str  # where the node groups' Auto Scaling groups are
    cluster_name: str
    label_domain: str
    production: bool
    node_groups: Sequence[aws.eks.NodeGroup]  # the GPU pools' (tagged for discovery)
    # The longest grace of a pod on those pools (a draining model server's, ModelPlacement
    # .termination_grace_seconds), at least CA's own 600 s: a scale-down waits it out instead of cutting the drain.
    max_graceful_termination_seconds: int
    tags: Sequence[aws.autoscaling.Tag]  # CA must see the template tags before it scales a pool

    def __post_init__(self) -> None:
        required("aws_region", self.aws_region, "name the AWS region, e.g. us-east-1")
        if not self.node_groups:
            raise InputError("node_groups", "Cluster Autoscaler scales GPU node groups: pass at least one")
        if self.max_graceful_termination_seconds < CA_MAX_GRACEFUL_TERMINATION_SECONDS:
            raise InputError(
                "max_graceful_termination_seconds",
                f"at least Cluster Autoscaler's own {CA_MAX_GRACEFUL_TERMINATION_SECONDS} s: a shorter one cuts pods "
                "its default would have let drain",
            )


class ClusterAutoscaler(pulumi.ComponentResource):
    """The IRSA role and the Helm release of Cluster Autoscaler for one EKS cluster."""

    def __init__(self, name: str, args: ClusterAutoscalerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:aws:ClusterAutoscaler", name, None, opts)
        cluster = args.cluster
        identity = cluster.irsa()
        asg_names = [_asg_name(g) for g in args.node_groups]
        policy = pulumi.Output.all(pulumi.Output.all(*asg_names), pulumi.Output.all(*(g.arn for g in args.node_groups)))
        role = irsa_role(
            f"{name}-cluster-autoscaler",
            IrsaRoleArgs(
                oidc_provider_arn=identity.oidc_provider_arn,
                oidc_issuer_url=identity.oidc_issuer,
                namespace=NAMESPACE,
                service_account=SERVICE_ACCOUNT,
                inline_policy=policy.apply(lambda a: autoscaler_policy(args.aws_region, a[0], a[1])),
            ),
            parent=self,
        )
        chart = CHARTS["cluster-autoscaler"]
        self.release = helm_release(
            "cluster-autoscaler",
            chart,
            cluster,
            namespace(NAMESPACE, cluster, self, pod_security="restricted"),
            chart_values(
                cluster_name=args.cluster_name,
                aws_region=args.aws_region,
                label_domain=args.label_domain,
                role_arn=role.arn,
                production=args.production,
                max_graceful_termination_seconds=args.max_graceful_termination_seconds,
            ),
            parent=self,
            depends_on=list(args.tags),
        )
        self.register_outputs({})
