"""VPC for one GKE cluster: a regional subnet with pod/service ranges, Cloud NAT for private nodes."""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Network

import pulumi
import pulumi_gcp as gcp

from components.k8s.inputs import required

PODS_RANGE = "pods"
SERVICES_RANGE = "services"


@dataclass(frozen=True, kw_only=True)
class GcpLocation:
    """Where a GCP component creates its resources: a project and a region (its zones are the caller's)."""

    project: str
    region: str

    def __post_init__(self) -> None:
        required("location.project", self.project, "GCP resources need a project id")
        required("location.region", self.region, "GCP resources need a region, e.g. us-central1")


@dataclass(frozen=True, kw_only=True)
class GcpNetworkArgs:
    location: GcpLocation
    cluster_name: str
    node_cidr: IPv4Network  # the nodes' subnet
    pods_cidr: IPv4Network  # its secondary ranges, for VPC-native pods and services
    services_cidr: IPv4Network


class GcpNetwork(pulumi.ComponentResource):
    network: gcp.compute.Network
    subnet: gcp.compute.Subnetwork
    egress_ips: pulumi.Output[list[str]]  # Cloud NAT's reserved address

    def __init__(self, name: str, args: GcpNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:gcp:Network", name, None, opts)
        location = args.location
        child = pulumi.ResourceOptions(parent=self)
        self.network = gcp.compute.Network(
            f"{name}-vpc",
            name=f"{args.cluster_name}-vpc",
            project=location.project,
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
            opts=child,
        )
        self.subnet = gcp.compute.Subnetwork(
            f"{name}-nodes",
            name=f"{args.cluster_name}-nodes",
            project=location.project,
            region=location.region,
            network=self.network.id,
            ip_cidr_range=str(args.node_cidr),
            private_ip_google_access=True,
            secondary_ip_ranges=[
                {"range_name": PODS_RANGE, "ip_cidr_range": str(args.pods_cidr)},
                {"range_name": SERVICES_RANGE, "ip_cidr_range": str(args.services_cidr)},
            ],
            log_config={
                "aggregation_interval": "INTERVAL_5_SEC",
                "flow_sampling": 0.5,
                "metadata": "INCLUDE_ALL_METADATA",
            },
            opts=child,
        )
        router = gcp.compute.Router(
            f"{name}-router",
            name=f"{args.cluster_name}-router",
            project=location.project,
            region=location.region,
            network=self.network.id,
            opts=child,
        )
        # Private nodes have no external IPs; image pulls and model downloads go out through NAT, from
        # a reserved address so that peers (e.g. the Karmada API server) can allow-list it.
        nat_ip = gcp.compute.Address(
            f"{name}-nat",
            name=f"{args.cluster_name}-nat",
            project=location.project,
            region=location.region,
            address_type="EXTERNAL",
            opts=child,
        )
        gcp.compute.RouterNat(
            f"{name}-nat",
            name=f"{args.cluster_name}-nat",
            project=location.project,
            region=location.region,
            router=router.name,
            nat_ip_allocate_option="MANUAL_ONLY",
            nat_ips=[nat_ip.self_link],
            source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
            log_config={"enable": True, "filter": "ERRORS_ONLY"},
            opts=child,
        )
        self.egress_ips = pulumi.Output.all(nat_ip.address)
        self.register_outputs({"network": self.network.id, "subnet": self.subnet.id})
