"""How the GPU machine types are bought, the GPUDirect networks they need, the CPU types of system pools, and the
bandwidths a KV-cache transfer is sized with: machine facts only the program reads.

The GPU machine types themselves (GPUs, vCPUs, memory, fabric) are platform_catalog/machines.py, which the policy
pack reads too. Sources: GCP GPUDirect networking (cloud.google.com/kubernetes-engine/docs/how-to/
gpu-bandwidth-gpudirect-tcpx, .../gpu-bandwidth-gpudirect-rdma; cloud.google.com/vpc/docs/rdma-network-profiles);
how each type can be bought (OBTAINABLE below, sources there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from platform_catalog.machines import MACHINES, MachineType


@dataclass(frozen=True)
class GpuDirectNetworking:
    """What the GPU NICs of one GPUDirect flavour need from the VPC, per the GKE how-tos."""

    vpc_per_nic: bool  # TCPX/TCPXO: one VPC per GPU NIC; RDMA: one RoCE VPC with a subnet per NIC
    mtu: int
    extra_gvnic: int  # RDMA machines have a second Titanium gVNIC that needs its own VPC
    network_profile: str = ""  # RDMA: the zonal RoCE network profile, `{zone}` filled in

    def profile_for(self, zone: str) -> str:
        return self.network_profile.format(zone=zone)


GPUDIRECT_NETWORKING: dict[str, GpuDirectNetworking] = {
    "tcpx": GpuDirectNetworking(vpc_per_nic=True, mtu=8244, extra_gvnic=0),
    "tcpxo": GpuDirectNetworking(vpc_per_nic=True, mtu=8244, extra_gvnic=0),
    # RoCE VPCs are zonal (the profile names the zone) and only accept the MRDMA NICs.
    "rdma": GpuDirectNetworking(vpc_per_nic=False, mtu=8896, extra_gvnic=1, network_profile="{zone}-vpc-roce"),
}

# How each family can be bought: a pool asking for a model its type lacks waits out its create
# timeout (90 min) for nodes that never come. Values are `capacity.type` names; a model whose
# availability could not be confirmed is left out (stricter than the cloud, never looser).
# AWS: every type takes ODCRs ("reservation") and, unless noted, on-demand and spot. Capacity Blocks
# for ML sell p6-b200, p5, p5e, p5en, p4d and p4de (docs.aws.amazon.com/AWSEC2/latest/UserGuide/
# capacity-blocks-how.html). On-demand prices exist for p5, p5en, p4d, p6-b200 and g5/g6/g6e
# (FACTS-3.md §10, aws-ec2-pricing/2026-07-20); p5e's on-demand and spot offers, and spot for
# p5en / p6-b200, were not confirmed: those are reservation / Capacity Block only here.
# GCP (FACTS-3.md §10, cloud.google.com/ai-hypercomputer/docs/consumption-models): A3 Ultra and A4
# have no on-demand, only reservations, flex-start (DWS) and spot; A3 Mega / High on-demand is
# unverified, so reservations, flex-start and spot; A2 and G2 are sold on demand, as spot and
# through reservations, and flex-start covers every GPU type but A4X.
_ODCR = ("onDemand", "spot", "reservation")
_BLOCKS = ("onDemand", "spot", "reservation", "capacityBlock")
_RESERVED_ONLY = ("reservation", "capacityBlock")
_GCP_GENERAL = ("onDemand", "reservation", "flexStart", "spot")
_GCP_RESERVED = ("reservation", "flexStart", "spot")
OBTAINABLE: dict[str, dict[str, tuple[str, ...]]] = {
    "aws": {
        "g5": _ODCR,
        "g6": _ODCR,
        "g6e": _ODCR,
        "p4d": _BLOCKS,
        "p4de": _BLOCKS,
        "p5": _BLOCKS,
        "p5e": _RESERVED_ONLY,
        "p5en": ("onDemand", "reservation", "capacityBlock"),
        "p6-b200": ("onDemand", "reservation", "capacityBlock"),
    },
    "gcp": {
        "g2-standard": _GCP_GENERAL,
        "a2-highgpu": _GCP_GENERAL,
        "a2-ultragpu": _GCP_GENERAL,
        "a3-highgpu": _GCP_RESERVED,
        "a3-megagpu": _GCP_RESERVED,
        "a3-ultragpu": _GCP_RESERVED,
        "a4-highgpu": _GCP_RESERVED,
    },
}


def capacity_types(machine: MachineType) -> tuple[str, ...]:
    """The consumption models (`capacity.type` values) the cloud sells this type through."""
    return OBTAINABLE[machine.cloud][machine.family]


def machine(name: str) -> MachineType | None:
    return MACHINES.get(name)


def machines_of(cloud: str) -> list[str]:
    return sorted(m.name for m in MACHINES.values() if m.cloud == cloud)


@dataclass(frozen=True)
class SystemMachineType:
    """A CPU machine type for the system pool (controllers and add-ons, x86_64 node images)."""

    name: str
    cloud: Literal["aws", "gcp"]
    vcpus: int
    memory_gib: int


# AWS general purpose / compute / memory families, x86_64 (the system pool's AL2023 AMI type is x86_64):
# size -> vCPUs is the same across them; memory per vCPU is 4 GiB (m), 2 GiB (c) and 8 GiB (r)
# (aws.amazon.com/ec2/instance-types/, "General Purpose", "Compute Optimized", "Memory Optimized").
_AWS_SIZES = {"large": 2, "xlarge": 4, "2xlarge": 8, "4xlarge": 16, "8xlarge": 32, "12xlarge": 48, "16xlarge": 64}
_AWS_CPU_FAMILIES = {"m5": 4, "m6i": 4, "m6a": 4, "m7i": 4, "m7a": 4, "c6i": 2, "c7i": 2, "r6i": 8, "r7i": 8}
# GCP: vCPU counts per series, memory 4 GiB per vCPU for -standard and 8 GiB for -highmem
# (cloud.google.com/compute/docs/general-purpose-machines; E2 standard stops at 32 vCPUs).
_GCP_CPU_SERIES = {
    "e2-standard": (4, (2, 4, 8, 16, 32)),
    "n2-standard": (4, (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)),
    "n2-highmem": (8, (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)),
    "n2d-standard": (4, (2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224)),
    "n4-standard": (4, (2, 4, 8, 16, 32, 48, 64, 80)),
    "c3-standard": (4, (4, 8, 22, 44, 88, 176)),
}

SYSTEM_MACHINES: dict[str, SystemMachineType] = {
    m.name: m
    for m in (
        *(
            SystemMachineType(f"{family}.{size}", "aws", vcpus, vcpus * per_vcpu)
            for family, per_vcpu in _AWS_CPU_FAMILIES.items()
            for size, vcpus in _AWS_SIZES.items()
        ),
        *(
            SystemMachineType(f"{series}-{vcpus}", "gcp", vcpus, vcpus * per_vcpu)
            for series, (per_vcpu, counts) in _GCP_CPU_SERIES.items()
            for vcpus in counts
        ),
    )
}


def system_machines_of(cloud: str) -> list[str]:
    return sorted(m.name for m in SYSTEM_MACHINES.values() if m.cloud == cloud)


_SYSTEM_FAMILIES = {
    "aws": f"{', '.join(sorted(_AWS_CPU_FAMILIES))} (.large to .16xlarge)",
    "gcp": f"{', '.join(sorted(_GCP_CPU_SERIES))} (-<vCPUs>)",
}


def system_machine_families(cloud: str) -> str:
    """The catalog's system-pool families of a cloud, in a line an error message can carry."""
    return _SYSTEM_FAMILIES[cloud]


# KV-cache transfer between a prefill and a decode pod (disaggregated serving, components/domain/kv_transfer.py).
# RDMA: the type's total EFA bandwidth in Gbps, shared evenly by its GPUs (one or more NICs per GPU); from the
# AWS instance pages (P4d 400 Gbps, P5/P5e/P5en/P6-B200 3200 Gbps). A type missing here has no figure to size
# a transfer with, and the config checks say so.
EFA_GBPS: dict[str, int] = {
    "p4d.24xlarge": 400,
    "p4de.24xlarge": 400,
    "p5.48xlarge": 3200,
    "p5e.48xlarge": 3200,
    "p5en.48xlarge": 3200,
    "p6-b200.48xlarge": 3200,
}
# TCP: one flow per tensor-parallel rank; AWS caps a single flow at 5 Gbps between instances, 10 Gbps inside one
# cluster placement group (docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-instance-network-bandwidth.html).
AWS_TCP_FLOW_GBPS = 5
AWS_TCP_FLOW_GBPS_PLACEMENT_GROUP = 10
