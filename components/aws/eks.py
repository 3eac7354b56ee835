"""EKS cluster: encrypted, logged, private-by-default control plane with a system node group."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Network
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws.irsa import IrsaRoleArgs, irsa_role
from components.aws.launch_template import hardened_node_settings
from components.aws.network import AwsNetwork
from components.aws.policy_docs import service_trust
from components.catalog.node_images import EKS_AMI_RELEASE_VERSIONS
from components.catalog.regions import EKS_ADDON_VERSIONS
from components.config.deployer import ClusterAccessSpec
from components.config.region import SystemPoolSpec
from components.k8s.cluster import ExecAuth, kubernetes_provider, render_kubeconfig
from components.k8s.inputs import InputError, known, required

CONTROL_PLANE_LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")
# The VPC CNI addon's configuration: prefix delegation (more pod IPs per node), and its network policy
# agent, without which EKS accepts NetworkPolicies but enforces none (docs.aws.amazon.com/eks/latest/
# userguide/cni-network-policy-configure.html: the addon setting `enableNetworkPolicy`, VPC CNI >= 1.14).
VPC_CNI_CONFIGURATION = {
    "env": {"ENABLE_PREFIX_DELEGATION": "true", "WARM_PREFIX_TARGET": "1"},
    "enableNetworkPolicy": "true",
}
_POLICY = "arn:aws:iam::aws:policy/"
# Node instances: join the cluster, pull images, be reachable by SSM instead of SSH.
NODE_POLICIES = (
    _POLICY + "AmazonEKSWorkerNodePolicy",
    _POLICY + "AmazonEC2ContainerRegistryReadOnly",
    _POLICY + "AmazonSSMManagedInstanceCore",
)
# EKS control planes take 10-15 min; node groups wait for capacity.
CLUSTER_TIMEOUTS = pulumi.CustomTimeouts(create="40m", update="90m", delete="30m")


@dataclass(frozen=True, kw_only=True)
class EksClusterArgs:
    aws_region: str  # e.g. us-east-1: the kubeconfig's `aws eks get-token --region`
    kubernetes_version: str  # a minor with pinned add-on and AMI versions, e.g. "1.33"
    cluster_name: str
    network: AwsNetwork
    services_cidr: IPv4Network | None = None  # None: EKS picks 10.100.0.0/16 or 172.20.0.0/16
    public_cidrs: Sequence[IPv4Network] = ()  # none: a private endpoint only
    # Addresses the public endpoint admits besides public_cidrs, known only at deploy time: the federation host's NAT
    # egress, whose pods dial this cluster (Karmada in push mode, Clusterpedia: catalog.bringup
    # KARMADA_PUSH_MEMBER_READY, CLUSTERPEDIA_MEMBER_HEALTHY). Needs public_cidrs.
    public_sources: pulumi.Input[Sequence[str]] | None = None
    # Where the deployer reaches the private endpoint from (a runner in the VPC, a private link), admitted on 443.
    deployer_cidrs: Sequence[IPv4Network] = ()
    deployer_private_link: bool = False  # the deployer_cidrs are a private link's (else a runner's VPC)
    system_pool: SystemPoolSpec
    label_domain: str
    production: bool
    access: ClusterAccessSpec = field(default_factory=ClusterAccessSpec)  # principals besides the creator
    log_retention_days: int = 90

    def __post_init__(self) -> None:
        required("aws_region", self.aws_region, "name the AWS region, e.g. us-east-1")
        known("kubernetes_version", self.kubernetes_version, EKS_ADDON_VERSIONS, "EKS version with pinned add-ons")
        known("kubernetes_version", self.kubernetes_version, EKS_AMI_RELEASE_VERSIONS, "EKS version with a pinned AMI")
        if self.public_sources is not None and not self.public_cidrs:
            raise InputError("public_sources", "admitting addresses needs the public endpoint: give public_cidrs too")


def eks_kubeconfig(
    cluster_name: str, aws_region: str, endpoint: pulumi.Input[str], ca_data: pulumi.Input[str]
) -> pulumi.Output[str]:
    """A secret kubeconfig whose credentials come from `aws eks get-token` each time (no static token)."""
    auth = ExecAuth(
        command="aws",
        args=("eks", "get-token", "--cluster-name", cluster_name, "--region", aws_region, "--output", "json"),
    )
    return pulumi.Output.secret(
        pulumi.Output.all(endpoint, ca_data).apply(lambda a: render_kubeconfig(cluster_name, a[0], a[1], auth))
    )


class EksCluster(pulumi.ComponentResource):
    """Control plane + OIDC + system node group + pinned managed add-ons + kubeconfig/provider."""

    cluster: aws.eks.Cluster
    node_role: aws.iam.Role
    oidc_provider: aws.iam.OpenIdConnectProvider
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider  # the cluster's own, once the system nodes run and the deployer is admitted
    endpoint: pulumi.Output[str]
    ready: list[pulumi.Resource]  # what workloads wait for: the system nodes and the managed add-ons
    # What any node group must wait for: the CNI (nodes turn Ready with it) and the node role's policies.
    node_prerequisites: list[pulumi.Resource]

    def __init__(self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:aws:EksCluster", name, None, opts)
        self._name, self._args = name, args
        private_subnets = list(args.network.private_subnet_ids.values())
        self.cluster = self._control_plane(private_subnets)
        self._deployer_rules = self._admit_deployer()
        self._grant_access()
        self.oidc_issuer = self.cluster.identities.apply(lambda ids: ids[0]["oidcs"][0]["issuer"])
        self.oidc_provider = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc", url=self.oidc_issuer, client_id_lists=["sts.amazonaws.com"], opts=self._child
        )
        self.node_role = aws.iam.Role(
            f"{name}-node", assume_role_policy=service_trust("ec2.amazonaws.com"), opts=self._child
        )
        node_policies = [
            aws.iam.RolePolicyAttachment(f"{name}-node-{i}", role=self.node_role.name, policy_arn=arn, opts=self._child)
            for i, arn in enumerate(NODE_POLICIES)
        ]
        # The CNI must run before nodes can become Ready; it gets its own IRSA role, not the node role.
        vpc_cni = self._addon(
            "vpc-cni",
            [],
            service_account_role_arn=self._irsa("vpc-cni", "kube-system", "aws-node", "AmazonEKS_CNI_Policy").arn,
            configuration_values=json.dumps(VPC_CNI_CONFIGURATION, separators=(",", ":")),
        )
        kube_proxy = self._addon("kube-proxy", [])
        self.node_prerequisites = [vpc_cni, *node_policies]
        self.system_nodes = self._system_node_group(name, args, private_subnets, self.node_prerequisites)
        coredns = self._addon("coredns", [self.system_nodes])
        ebs_csi = self._addon(
            "aws-ebs-csi-driver",
            [self.system_nodes],
            service_account_role_arn=self._irsa(
                "ebs-csi", "kube-system", "ebs-csi-controller-sa", "service-role/AmazonEBSCSIDriverPolicy"
            ).arn,
        )
        self.kubeconfig = eks_kubeconfig(
            args.cluster_name, args.aws_region, self.cluster.endpoint, self.cluster.certificate_authority["data"]
        )
        self.provider = kubernetes_provider(
            args.cluster_name, self.kubeconfig, self, [self.system_nodes, *self._deployer_rules]
        )
        self.endpoint = self.cluster.endpoint
        self.ready = [self.system_nodes, vpc_cni, kube_proxy, coredns, ebs_csi]
        self.register_outputs(
            {"endpoint": self.cluster.endpoint, "oidcIssuer": self.oidc_issuer, "kubeconfig": self.kubeconfig}
        )

    @property
    def _child(self) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self)

    def _control_plane(self, private_subnets: list[pulumi.Output[str]]) -> aws.eks.Cluster:
        """Private-by-default API, secrets encrypted with our own key, every control-plane log kept."""
        name, args = self._name, self._args
        # Stateful in production: a `pulumi destroy` or a replace must not take these down.
        stateful = pulumi.ResourceOptions(parent=self, protect=args.production, retain_on_delete=args.production)
        key = aws.kms.Key(
            f"{name}-secrets",
            description=f"Envelope encryption of Kubernetes secrets in {args.cluster_name}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            opts=stateful,
        )
        aws.kms.Alias(
            f"{name}-secrets", name=f"alias/{args.cluster_name}-eks-secrets", target_key_id=key.key_id, opts=self._child
        )
        cluster_role = aws.iam.Role(
            f"{name}-cluster", assume_role_policy=service_trust("eks.amazonaws.com"), opts=self._child
        )
        cluster_policy = aws.iam.RolePolicyAttachment(
            f"{name}-cluster", role=cluster_role.name, policy_arn=_POLICY + "AmazonEKSClusterPolicy", opts=self._child
        )
        # Created by us so retention is set; EKS would otherwise create it with "never expire".
        log_group = aws.cloudwatch.LogGroup(
            f"{name}-control-plane",
            name=f"/aws/eks/{args.cluster_name}/cluster",
            retention_in_days=args.log_retention_days,
            opts=self._child,
        )
        public_cidrs = [str(c) for c in args.public_cidrs]
        public_access: pulumi.Input[list[str]] | None = public_cidrs or None
        if args.public_sources is not None:
            public_access = pulumi.Output.from_input(args.public_sources).apply(
                lambda ips: public_cidrs + [f"{ip}/32" for ip in ips if f"{ip}/32" not in public_cidrs]
            )
        return aws.eks.Cluster(
            f"{name}-cluster",
            name=args.cluster_name,
            version=args.kubernetes_version,
            role_arn=cluster_role.arn,
            vpc_config={
                "subnet_ids": private_subnets,
                "endpoint_private_access": True,
                "endpoint_public_access": bool(public_cidrs),
                "public_access_cidrs": public_access,
            },
            encryption_config={"provider": {"key_arn": key.arn}, "resources": ["secrets"]},
            enabled_cluster_log_types=list(CONTROL_PLANE_LOG_TYPES),
            access_config={"authentication_mode": "API", "bootstrap_cluster_creator_admin_permissions": True},
            kubernetes_network_config=({"service_ipv4_cidr": str(args.services_cidr)} if args.services_cidr else None),
            bootstrap_self_managed_addons=False,
            deletion_protection=args.production,
            upgrade_policy={"support_type": "STANDARD"},
            opts=pulumi.ResourceOptions.merge(
                stateful,
                pulumi.ResourceOptions(depends_on=[cluster_policy, log_group], custom_timeouts=CLUSTER_TIMEOUTS),
            ),
        )

    def _admit_deployer(self) -> list[aws.vpc.SecurityGroupIngressRule]:
        """The cluster security group admits only itself (EKS_PRIVATE_ENDPOINT_ADMITS_ITS_SECURITY_GROUP): the
        deployer's sources (a runner in the VPC, a private link) get 443 on the private endpoint, before the
        cluster's Kubernetes provider is first used."""
        via = "private link" if self._args.deployer_private_link else "runner inside the VPC"
        return [
            aws.vpc.SecurityGroupIngressRule(
                f"{self._name}-api-deployer-{i}",
                security_group_id=self.cluster.vpc_config.cluster_security_group_id,
                cidr_ipv4=str(cidr),
                ip_protocol="tcp",
                from_port=443,
                to_port=443,
                description=f"Kubernetes API from the deployer ({via})",
                opts=self._child,
            )
            for i, cidr in enumerate(self._args.deployer_cidrs)
        ]

    def _grant_access(self) -> None:
        """Access entries for `stacks.access` (EKS_ACCESS_ENTRIES): only the creator has one otherwise."""
        policies = {"viewers": "AmazonEKSViewPolicy", "administrators": "AmazonEKSClusterAdminPolicy"}
        for group, policy in policies.items():
            for i, principal in enumerate(getattr(self._args.access, group)):
                entry = aws.eks.AccessEntry(
                    f"{self._name}-access-{group}-{i}",
                    cluster_name=self.cluster.name,
                    principal_arn=principal,
                    type="STANDARD",
                    opts=self._child,
                )
                aws.eks.AccessPolicyAssociation(
                    f"{self._name}-access-{group}-{i}",
                    cluster_name=self.cluster.name,
                    principal_arn=entry.principal_arn,
                    policy_arn=f"arn:aws:eks::aws:cluster-access-policy/{policy}",
                    access_scope={"type": "cluster"},
                    opts=self._child,
                )

    def _irsa(self, sa_name: str, namespace: str, service_account: str, policy: str) -> aws.iam.Role:
        """An add-on's own IAM role, assumable only by its service account (IRSA)."""
        return irsa_role(
            f"{self._name}-{sa_name}",
            IrsaRoleArgs(
                oidc_provider_arn=self.oidc_provider.arn,
                oidc_issuer_url=self.oidc_issuer,
                namespace=namespace,
                service_account=service_account,
                managed_policy_arns=(_POLICY + policy,),
            ),
            parent=self,
        )

    def _addon(self, addon_name: str, depends_on: list[pulumi.Resource], **kwargs: Any) -> aws.eks.Addon:
        """A managed add-on at the version pinned for the cluster's Kubernetes minor."""
        return aws.eks.Addon(
            f"{self._name}-{addon_name}",
            cluster_name=self.cluster.name,
            addon_name=addon_name,
            addon_version=EKS_ADDON_VERSIONS[self._args.kubernetes_version][addon_name],
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            opts=pulumi.ResourceOptions(parent=self, depends_on=depends_on),
            **kwargs,
        )

    def _system_node_group(
        self, name: str, args: EksClusterArgs, subnets: list[pulumi.Output[str]], depends_on: list[pulumi.Resource]
    ) -> aws.eks.NodeGroup:
        pool = args.system_pool
        template = aws.ec2.LaunchTemplate(
            f"{name}-system",
            description="System nodes: IMDSv2 only, encrypted gp3 root volume",
            **hardened_node_settings(f"{args.cluster_name}-system", pool.disk_gib),
            opts=pulumi.ResourceOptions(parent=self),
        )
        return aws.eks.NodeGroup(
            f"{name}-system",
            cluster_name=self.cluster.name,
            node_group_name=f"{args.cluster_name}-system",
            node_role_arn=self.node_role.arn,
            subnet_ids=subnets,
            ami_type="AL2023_x86_64_STANDARD",
            release_version=EKS_AMI_RELEASE_VERSIONS[args.kubernetes_version],
            capacity_type="ON_DEMAND",
            instance_types=[pool.machine_type],
            scaling_config={"min_size": pool.min_size, "max_size": pool.max_size, "desired_size": pool.desired},
            update_config={"max_unavailable": 1},
            node_repair_config={"enabled": True},
            launch_template={"id": template.id, "version": template.latest_version.apply(str)},
            labels={f"{args.label_domain}/pool": "system"},
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=depends_on,
                ignore_changes=["scalingConfig.desiredSize"],
                custom_timeouts=pulumi.CustomTimeouts(create="30m", update="60m", delete="30m"),
            ),
        )
