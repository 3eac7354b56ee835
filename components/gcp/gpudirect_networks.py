"""The VPCs a GPUDirect node pool's extra NICs attach to, one layout per A3/A4 flavour.

Every GPU NIC of an A3 needs a subnet outside the cluster's VPC: TCPX (a3-highgpu-8g, 4 NICs) and
TCPXO (a3-megagpu-8g, 8 NICs) put each NIC in its own VPC; RDMA (a3-ultragpu-8g, a4) puts the 8
MRDMA NICs in one zonal RoCE VPC (a subnet each) and the second Titanium gVNIC in its own VPC.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.catalog.machines import GPUDIRECT_NETWORKING, MACHINES
from components.spec.region import GpuPoolSpec, RegionSpec

_GPU_NIC_SUBNET_PREFIX = 24


@dataclass(frozen=True)
class GpuDirectNetworksArgs:
    region: RegionSpec
    pool: GpuPoolSpec
    cluster_name: str


class GpuDirectNetworks(pulumi.ComponentResource):
    """VPCs, subnets and internal-traffic firewall rules for one GPUDirect pool."""

    # Node pool `network_config.additional_node_network_configs`, in NIC order.
    node_networks: list[dict[str, pulumi.Output[str]]]

    def __init__(self, name: str, args: GpuDirectNetworksArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:gcp:GpuDirectNetworks", name, None, opts)
        region, pool = args.region, args.pool
        machine = MACHINES[pool.machine_type]
        layout = GPUDIRECT_NETWORKING[machine.gpudirect]
        self._name, self._region = name, region
        self._base = f"{args.cluster_name}-{pool.name}"
        self._ranges = iter(region.network.gpu_nic_cidr.subnets(new_prefix=_GPU_NIC_SUBNET_PREFIX))
        self._mtu = layout.mtu
        self.node_networks = []

        for i in range(layout.extra_gvnic):
            network = self._network(f"gvnic{i}")
            self._subnet(network, f"gvnic{i}")
            self._allow_internal(network, f"gvnic{i}")
        if layout.vpc_per_nic:
            for i in range(machine.extra_nics):
                network = self._network(f"gpu{i}")
                self._subnet(network, f"gpu{i}")
                self._allow_internal(network, f"gpu{i}")
        else:
            # RoCE VPCs allow all traffic implicitly (and take no firewall rules).
            zone = region.pool_zones(pool)[0]
            network = self._network(
                "rdma", network_profile=f"projects/{region.project}/global/networkProfiles/{layout.profile_for(zone)}"
            )
            for i in range(machine.extra_nics):
                self._subnet(network, f"rdma{i}")
        self.register_outputs({"nodeNetworks": self.node_networks})

    def _network(self, suffix: str, **kwargs) -> gcp.compute.Network:
        return gcp.compute.Network(
            f"{self._name}-{suffix}",
            name=f"{self._base}-{suffix}",
            project=self._region.project,
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
            mtu=self._mtu,
            opts=pulumi.ResourceOptions(parent=self),
            **kwargs,
        )

    def _subnet(self, network: gcp.compute.Network, suffix: str) -> None:
        subnet = gcp.compute.Subnetwork(
            f"{self._name}-{suffix}",
            name=f"{self._base}-{suffix}",
            project=self._region.project,
            region=self._region.region,
            network=network.id,
            ip_cidr_range=str(next(self._ranges)),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.node_networks.append({"network": network.name, "subnetwork": subnet.name})

    def _allow_internal(self, network: gcp.compute.Network, suffix: str) -> None:
        gcp.compute.Firewall(
            f"{self._name}-{suffix}-internal",
            name=f"{self._base}-{suffix}-internal",
            project=self._region.project,
            network=network.id,
            direction="INGRESS",
            source_ranges=[str(self._region.network.gpu_nic_cidr)],
            allows=[{"protocol": "tcp"}, {"protocol": "udp"}, {"protocol": "icmp"}],
            opts=pulumi.ResourceOptions(parent=self),
        )
