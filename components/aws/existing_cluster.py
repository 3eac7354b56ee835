"""An EKS cluster that already exists, as the platform needs it: read by name, never managed.

The cluster, its network, its add-ons and its system nodes are the owner's; what the platform adds
(GPU node groups, autoscaler, add-ons, models) needs only its endpoint and CA (for an exec-based
kubeconfig), its OIDC issuer and IAM OIDC provider (IRSA), its cluster security group and VPC, and
the subnets and node role the owner names in `regions[].cluster.existing`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.aws.eks import eks_kubeconfig
from components.aws.gpu_node_group import EksNodeTarget
from components.config.region import ExistingClusterSpec, RegionSpec
from components.k8s.cluster import ClusterHandle, kubernetes_provider


@dataclass(frozen=True, kw_only=True)
class ExistingEksClusterArgs:
    region: RegionSpec
    existing: ExistingClusterSpec


class ExistingEksCluster(pulumi.ComponentResource):
    handle: ClusterHandle
    target: EksNodeTarget  # where GPU node groups join it
    oidc_provider_arn: pulumi.Output[str]
    oidc_issuer: pulumi.Output[str]

    def __init__(self, name: str, args: ExistingEksClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:aws:ExistingEksCluster", name, None, opts)
        existing, region = args.existing, args.region
        read = pulumi.InvokeOptions(parent=self)
        cluster = aws.eks.get_cluster_output(name=existing.name, opts=read)
        self.oidc_issuer = cluster.identities.apply(lambda ids: ids[0].oidcs[0].issuer)
        self.oidc_provider_arn = aws.iam.get_open_id_connect_provider_output(url=self.oidc_issuer, opts=read).arn
        kubeconfig = eks_kubeconfig(
            existing.name,
            region.region,
            cluster.endpoint,
            cluster.certificate_authorities.apply(lambda cas: cas[0].data),
        )
        self.handle = ClusterHandle(
            name=existing.name,
            region=region,
            provider=kubernetes_provider(existing.name, kubeconfig, self, []),
            kubeconfig=kubeconfig,
            endpoint=cluster.endpoint,
        )
        self.target = EksNodeTarget(
            cluster_name=existing.name,
            cluster_security_group_id=cluster.vpc_config.cluster_security_group_id,
            node_role_arn=existing.node_role_arn or "",
            vpc_id=cluster.vpc_config.vpc_id,
            private_subnet_ids=dict(existing.subnets),
        )
        self.register_outputs({"endpoint": cluster.endpoint})
