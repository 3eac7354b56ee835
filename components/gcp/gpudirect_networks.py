"""The VPCs a GPUDirect node pool's extra NICs attach to, one layout per A3/A4 flavour.

Every GPU NIC of an A3 needs a subnet outside the cluster's VPC: TCPX (a3-highgpu-8g, 4 NICs) and
TCPXO (a3-megagpu-8g, 8 NICs) put each NIC in its own VPC; RDMA (a3-ultragpu-8g, a4) puts the 8
MRDMA NICs in one zonal RoCE VPC (a subnet each) and the second Titanium gVNIC in its own VPC.

Only the nodes get them: NICs are attached when a node pool is created. Pods reach them through GKE
multi-networking objects (a `GKENetworkParamSet` and a `Network` per NIC) and Google's NCCL plugin on the node;
the platform creates neither while no replica spans nodes on these pools (components/domain/slots.py
multi_node_capable), so nothing in the cluster refers to NICs no pod uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Network

import pulumi
import pulumi_gcp as gcp

from components.catalog.machines import GPUDIRECT_NETWORKING, GpuDirectNetworking
from components.config.region import GpuPoolSpec
from components.gcp.network import GcpLocation
from components.k8s.inputs import InputError, gpu_machine
from platform_catalog.machines import MACHINES

_GPU_NIC_SUBNET_PREFIX = 24


@dataclass(frozen=True)
class GpuNic:
    """One extra NIC of a GPUDirect node: its VPC and subnet."""

    network: str  # VPC suffix (several RDMA NICs share one RoCE VPC)
    subnet: str  # subnet suffix, unique per NIC
    firewall: bool  # VPCs of their own take an internal-traffic rule; RoCE VPCs take none


def gpu_nics(pool: GpuPoolSpec) -> list[GpuNic]:
    """The pool's extra NICs in node order: the second gVNIC (RDMA machines), then one per GPU NIC."""
    machine = MACHINES[pool.machine_type]
    layout = GPUDIRECT_NETWORKING[machine.gpudirect]
    nics = [GpuNic(f"gvnic{i}", f"gvnic{i}", True) for i in range(layout.extra_gvnic)]
    for i in range(machine.extra_nics):
        if layout.vpc_per_nic:
            nics.append(GpuNic(f"gpu{i}", f"gpu{i}", True))
        else:
            nics.append(GpuNic("rdma", f"rdma{i}", False))
    return nics


def gpu_nic_vpc(cluster_name: str, pool: GpuPoolSpec, suffix: str) -> str:
    """GCP name of a GPU NIC's VPC or subnet."""
    return f"{cluster_name}-{pool.name}-{suffix}"


@dataclass(frozen=True, kw_only=True)
class GpuDirectNetworksArgs:
    location: GcpLocation
    zone: str  # the pool's first zone: a RoCE VPC's network profile is zonal
    gpu_nic_cidr: IPv4Network  # carved into one /24 per GPU NIC subnet
    pool: GpuPoolSpec
    cluster_name: str

    def __post_init__(self) -> None:
        machine = gpu_machine("pool.machine_type", self.pool.machine_type, "gcp")
        if machine.gpudirect not in GPUDIRECT_NETWORKING:
            with_nics = sorted(m.name for m in MACHINES.values() if m.gpudirect in GPUDIRECT_NETWORKING)
            raise InputError(
                "pool.machine_type", f"{machine.name} has no GPUDirect NICs; those with: {', '.join(with_nics)}"
            )


class GpuDirectNetworks(pulumi.ComponentResource):
    """VPCs, subnets and internal-traffic firewall rules for one GPUDirect pool."""

    # Node pool `network_config.additional_node_network_configs`, in NIC order.
    node_networks: list[dict[str, pulumi.Output[str]]]

    def __init__(self, name: str, args: GpuDirectNetworksArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:gcp:GpuDirectNetworks", name, None, opts)
        pool = args.pool
        machine = MACHINES[pool.machine_type]
        layout = GPUDIRECT_NETWORKING[machine.gpudirect]
        self._name, self._args = name, args
        self._cluster_name, self._pool = args.cluster_name, pool
        self._ranges = iter(args.gpu_nic_cidr.subnets(new_prefix=_GPU_NIC_SUBNET_PREFIX))
        self._mtu = layout.mtu
        self.node_networks = []

        networks: dict[str, gcp.compute.Network] = {}
        for nic in gpu_nics(pool):
            if nic.network not in networks:
                # RoCE VPCs are zonal: their network profile names the pool's zone.
                profile = {} if nic.firewall else {"network_profile": self._roce_profile(layout)}
                networks[nic.network] = self._network(nic.network, **profile)
                if nic.firewall:
                    self._allow_internal(networks[nic.network], nic.network)
            self._subnet(networks[nic.network], nic.subnet)
        self.register_outputs({"nodeNetworks": self.node_networks})

    def _roce_profile(self, layout: GpuDirectNetworking) -> str:
        location = self._args.location
        return f"projects/{location.project}/global/networkProfiles/{layout.profile_for(self._args.zone)}"

    def _network(self, suffix: str, **kwargs: str) -> gcp.compute.Network:
        return gcp.compute.Network(
            f"{self._name}-{suffix}",
            name=gpu_nic_vpc(self._cluster_name, self._pool, suffix),
            project=self._args.location.project,
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
            mtu=self._mtu,
            opts=pulumi.ResourceOptions(parent=self),
            **kwargs,
        )

    def _subnet(self, network: gcp.compute.Network, suffix: str) -> None:
        subnet = gcp.compute.Subnetwork(
            f"{self._name}-{suffix}",
            name=gpu_nic_vpc(self._cluster_name, self._pool, suffix),
            project=self._args.location.project,
            region=self._args.location.region,
            network=network.id,
            ip_cidr_range=str(next(self._ranges)),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.node_networks.append({"network": network.name, "subnetwork": subnet.name})

    def _allow_internal(self, network: gcp.compute.Network, suffix: str) -> None:
        gcp.compute.Firewall(
            f"{self._name}-{suffix}-internal",
            name=f"{gpu_nic_vpc(self._cluster_name, self._pool, suffix)}-internal",
            project=self._args.location.project,
            network=network.id,
            direction="INGRESS",
            source_ranges=[str(self._args.gpu_nic_cidr)],
            allows=[{"protocol": "tcp"}, {"protocol": "udp"}, {"protocol": "icmp"}],
            opts=pulumi.ResourceOptions(parent=self),
        )
