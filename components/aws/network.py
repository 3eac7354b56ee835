"""VPC for one EKS cluster: private subnets per zone for nodes, public ones for load balancers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import IPv4Network
from typing import Literal

import pulumi
import pulumi_aws as aws

from components.k8s.inputs import InputError


@dataclass(frozen=True, kw_only=True)
class ZoneSubnets:
    private: IPv4Network  # the nodes'
    public: IPv4Network  # load balancers' and the NAT gateway's


@dataclass(frozen=True, kw_only=True)
class AwsNetworkArgs:
    cluster_name: str
    cidr: IPv4Network  # the VPC's
    subnets: Mapping[str, ZoneSubnets]  # availability zone -> its two subnets, in the VPC's range
    nat: Literal["single", "perZone"] = "single"  # one NAT gateway for the VPC, or one per zone

    def __post_init__(self) -> None:
        if not self.subnets:
            raise InputError("subnets", "name at least one availability zone and its subnets")
        for zone, subnets in self.subnets.items():
            for kind, cidr in (("private", subnets.private), ("public", subnets.public)):
                if not cidr.subnet_of(self.cidr):
                    raise InputError(f"subnets.{zone}.{kind}", f"{cidr} is outside the VPC's range {self.cidr}")


class AwsNetwork(pulumi.ComponentResource):
    """VPC, subnets tagged for EKS load balancers, internet gateway, NAT and routes."""

    vpc_id: pulumi.Output[str]
    private_subnet_ids: dict[str, pulumi.Output[str]]  # zone -> subnet id
    public_subnet_ids: dict[str, pulumi.Output[str]]
    egress_ips: pulumi.Output[list[str]]  # the NAT gateways' Elastic IPs

    def __init__(self, name: str, args: AwsNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:aws:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        shared_tag = {f"kubernetes.io/cluster/{args.cluster_name}": "shared"}

        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=str(args.cidr),
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={"Name": f"{args.cluster_name}-vpc"},
            opts=child,
        )
        # Deny-all default security group: nothing should silently use it.
        aws.ec2.DefaultSecurityGroup(f"{name}-default-sg", vpc_id=vpc.id, opts=child)
        igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, opts=child)

        public_rt = aws.ec2.RouteTable(
            f"{name}-public",
            vpc_id=vpc.id,
            routes=[{"cidr_block": "0.0.0.0/0", "gateway_id": igw.id}],
            opts=child,
        )
        self.private_subnet_ids, self.public_subnet_ids = {}, {}
        nat_ids: dict[str, pulumi.Output[str]] = {}
        nat_ips: list[pulumi.Output[str]] = []
        for zone, subnets in args.subnets.items():
            public = aws.ec2.Subnet(
                f"{name}-public-{zone}",
                vpc_id=vpc.id,
                cidr_block=str(subnets.public),
                availability_zone=zone,
                map_public_ip_on_launch=False,
                tags={"Name": f"{args.cluster_name}-public-{zone}", "kubernetes.io/role/elb": "1", **shared_tag},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{zone}", subnet_id=public.id, route_table_id=public_rt.id, opts=child
            )
            self.public_subnet_ids[zone] = public.id
            if args.nat == "perZone" or not nat_ids:
                eip = aws.ec2.Eip(f"{name}-nat-{zone}", domain="vpc", opts=child)
                nat_ips.append(eip.public_ip)
                nat_ids[zone] = aws.ec2.NatGateway(
                    f"{name}-nat-{zone}",
                    allocation_id=eip.id,
                    subnet_id=public.id,
                    tags={"Name": f"{args.cluster_name}-nat-{zone}"},
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[igw]),
                ).id
            nat_id = nat_ids.get(zone) or next(iter(nat_ids.values()))

            private = aws.ec2.Subnet(
                f"{name}-private-{zone}",
                vpc_id=vpc.id,
                cidr_block=str(subnets.private),
                availability_zone=zone,
                tags={
                    "Name": f"{args.cluster_name}-private-{zone}",
                    "kubernetes.io/role/internal-elb": "1",
                    **shared_tag,
                },
                opts=child,
            )
            private_rt = aws.ec2.RouteTable(
                f"{name}-private-{zone}",
                vpc_id=vpc.id,
                routes=[{"cidr_block": "0.0.0.0/0", "nat_gateway_id": nat_id}],
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-private-{zone}", subnet_id=private.id, route_table_id=private_rt.id, opts=child
            )
            self.private_subnet_ids[zone] = private.id

        self.vpc_id = vpc.id
        self.egress_ips = pulumi.Output.all(*nat_ips)
        self.register_outputs({"vpcId": vpc.id, "privateSubnetIds": list(self.private_subnet_ids.values())})
