"""An EKS cluster that already exists, as the platform needs it: read by name, never managed.

The cluster, its network, its add-ons and its system nodes are the owner's; what the platform adds
(GPU node groups, autoscaler, add-ons, models) needs only its endpoint and CA (for an exec-based
kubeconfig), its OIDC issuer and IAM OIDC provider (IRSA), its cluster security group and VPC, and
the subnets and node role the owner names in `regions[].cluster.existing`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws.eks import eks_kubeconfig
from components.aws.gpu_node_group import EksNodeTarget
from components.k8s.cluster import kubernetes_provider
from components.k8s.inputs import required


@dataclass(frozen=True, kw_only=True)
class ExistingEksClusterArgs:
    aws_region: str
    cluster_name: str  # the cluster's name in the account and region
    # Where the platform's GPU node groups join it: the owner's node role and a private subnet per zone.
    node_role_arn: str
    subnets: Mapping[str, str]  # availability zone -> subnet id

    def __post_init__(self) -> None:
        required("aws_region", self.aws_region, "name the AWS region, e.g. us-east-1")
        required("cluster_name", self.cluster_name, "name the existing EKS cluster")


class ExistingEksCluster(pulumi.ComponentResource):
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    endpoint: pulumi.Output[str]
    ready: list[pulumi.Resource]  # nothing: the owner's cluster is up
    target: EksNodeTarget  # where GPU node groups join it
    oidc_provider_arn: pulumi.Output[str]
    oidc_issuer: pulumi.Output[str]

    def __init__(self, name: str, args: ExistingEksClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:aws:ExistingEksCluster", name, None, opts)
        read = pulumi.InvokeOptions(parent=self)
        cluster = aws.eks.get_cluster_output(name=args.cluster_name, opts=read)
        self.oidc_issuer = cluster.identities.apply(lambda ids: ids[0].oidcs[0].issuer)
        self.oidc_provider_arn = aws.iam.get_open_id_connect_provider_output(url=self.oidc_issuer, opts=read).arn
        self.kubeconfig = eks_kubeconfig(
            args.cluster_name,
            args.aws_region,
            cluster.endpoint,
            cluster.certificate_authorities.apply(lambda cas: cas[0].data),
        )
        self.provider = kubernetes_provider(args.cluster_name, self.kubeconfig, self, [])
        self.endpoint = cluster.endpoint
        self.ready = []
        self.target = EksNodeTarget(
            cluster_name=args.cluster_name,
            cluster_security_group_id=cluster.vpc_config.cluster_security_group_id,
            node_role_arn=args.node_role_arn,
            vpc_id=cluster.vpc_config.vpc_id,
            private_subnet_ids=dict(args.subnets),
        )
        self.register_outputs({"endpoint": cluster.endpoint})
