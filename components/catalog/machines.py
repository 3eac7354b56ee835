"""GPU machine types on AWS and GCP: which GPU, how many, and the fabric they bring.

Sources: AWS accelerated computing instance pages and the EFA supported-instance table
(docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html#efa-instance-types, "maximum EFA
interfaces" = network cards for p4d/p5*); GCP GPU machine types
(cloud.google.com/compute/docs/gpus, .../accelerator-optimized-machines) and GPUDirect
networking (cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx,
.../gpu-bandwidth-gpudirect-rdma; cloud.google.com/vpc/docs/rdma-network-profiles); boot disk
types per series (cloud.google.com/compute/docs/accelerator-optimized-machines: A3 Ultra and
A4 support Hyperdisk only); how each type can be bought (OBTAINABLE below, sources there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, assert_never

from components.catalog.gpus import GPUS, GpuModel

# The `<domain>/fabric` label values of DESIGN.md §4.
Fabric = Literal["efa", "infiniband", "roce", "tcpx", "tcpxo", "none"]


@dataclass(frozen=True)
class MachineType:
    name: str
    cloud: Literal["aws", "gcp"]
    gpu: str  # key of GPUS
    gpus: int
    vcpus: int
    memory_gib: int
    local_nvme_gib: int = 0  # instance-store / local SSD capacity
    # AWS: EFA interfaces the type supports (one per network card on p4d/p5*); 0 = no EFA.
    efa_interfaces: int = 0
    placement_group: bool = False  # AWS cluster placement groups / GCP compact placement
    # GCP: accelerator type string and GPUDirect flavour with its extra NICs.
    accelerator: str = ""
    gpudirect: Literal["none", "tcpx", "tcpxo", "rdma"] = "none"
    extra_nics: int = 0  # GPU NICs beside the primary gVNIC, one per GPU on A3
    boot_disk_type: str = ""  # GCP boot disk type the series accepts

    @property
    def gpu_model(self) -> GpuModel:
        return GPUS[self.gpu]

    @property
    def family(self) -> str:
        match self.cloud:
            case "aws":
                return self.name.split(".")[0]  # p5.48xlarge -> p5
            case "gcp":
                return self.name.rsplit("-", 1)[0]  # a3-highgpu-8g -> a3-highgpu
            case other:
                assert_never(other)

    @property
    def fabric(self) -> Fabric:
        match self.cloud:
            case "aws":
                return "efa" if self.efa_interfaces else "none"
            case "gcp":
                return "roce" if self.gpudirect == "rdma" else self.gpudirect
            case other:
                assert_never(other)

    @property
    def capacity_types(self) -> tuple[str, ...]:
        """The consumption models (`capacity.type` values) the cloud sells this type through."""
        return OBTAINABLE[self.cloud][self.family]

    @property
    def local_ssd_count(self) -> int:
        """GCP: bundled 375 GiB local SSDs (G2, A2 Ultra and A3 come with a fixed number)."""
        return self.local_nvme_gib // GCP_LOCAL_SSD_GIB


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

GCP_LOCAL_SSD_GIB = 375


def _aws(name: str, gpu: str, gpus: int, vcpus: int, mem: int, nvme: int, efa: int = 0, pg: bool = True) -> MachineType:
    return MachineType(name, "aws", gpu, gpus, vcpus, mem, nvme, efa_interfaces=efa, placement_group=pg)


def _g(family: str, gpu: str, sizes: list[tuple[str, int, int, int, int, int]]) -> list[MachineType]:
    return [_aws(f"{family}.{size}", gpu, gpus, vcpus, mem, nvme, efa) for size, gpus, vcpus, mem, nvme, efa in sizes]


_AWS = [
    # size, GPUs, vCPUs, memory GiB, local NVMe GiB, max EFA interfaces
    *_g(
        "g5",
        "A10G",
        [
            ("xlarge", 1, 4, 16, 250, 0),
            ("2xlarge", 1, 8, 32, 450, 0),
            ("4xlarge", 1, 16, 64, 600, 0),
            ("8xlarge", 1, 32, 128, 900, 1),
            ("12xlarge", 4, 48, 192, 3800, 1),
            ("16xlarge", 1, 64, 256, 1900, 1),
            ("24xlarge", 4, 96, 384, 3800, 1),
            ("48xlarge", 8, 192, 768, 7600, 1),
        ],
    ),
    *_g(
        "g6",
        "L4",
        [
            ("xlarge", 1, 4, 16, 250, 0),
            ("2xlarge", 1, 8, 32, 450, 0),
            ("4xlarge", 1, 16, 64, 600, 0),
            ("8xlarge", 1, 32, 128, 900, 1),
            ("12xlarge", 4, 48, 192, 3760, 1),
            ("16xlarge", 1, 64, 256, 1880, 1),
            ("24xlarge", 4, 96, 384, 3760, 1),
            ("48xlarge", 8, 192, 768, 7520, 1),
        ],
    ),
    *_g(
        "g6e",
        "L40S",
        [
            ("xlarge", 1, 4, 32, 250, 0),
            ("2xlarge", 1, 8, 64, 450, 0),
            ("4xlarge", 1, 16, 128, 600, 0),
            ("8xlarge", 1, 32, 256, 900, 1),
            ("12xlarge", 4, 48, 384, 3800, 1),
            ("16xlarge", 1, 64, 512, 1900, 1),
            ("24xlarge", 4, 96, 768, 3800, 2),
            ("48xlarge", 8, 192, 1536, 7600, 4),
        ],
    ),
    _aws("p4d.24xlarge", "A100-40GB", 8, 96, 1152, 8000, efa=4),
    _aws("p4de.24xlarge", "A100-80GB", 8, 96, 1152, 8000, efa=4),
    _aws("p5.48xlarge", "H100-80GB", 8, 192, 2048, 30720, efa=32),
    _aws("p5e.48xlarge", "H200-141GB", 8, 192, 2048, 30720, efa=32),
    _aws("p5en.48xlarge", "H200-141GB", 8, 192, 2048, 30720, efa=16),
    _aws("p6-b200.48xlarge", "B200", 8, 192, 2048, 30720, efa=8),
]


def _gcp(
    name: str,
    gpu: str,
    accel: str,
    gpus: int,
    vcpus: int,
    mem: int,
    ssd_disks: int,
    gpudirect: Literal["none", "tcpx", "tcpxo", "rdma"] = "none",
    nics: int = 0,
    compact: bool = False,
    disk: str = "pd-balanced",
) -> MachineType:
    return MachineType(
        name,
        "gcp",
        gpu,
        gpus,
        vcpus,
        mem,
        ssd_disks * GCP_LOCAL_SSD_GIB,
        placement_group=compact,
        accelerator=accel,
        gpudirect=gpudirect,
        extra_nics=nics,
        boot_disk_type=disk,
    )


_GCP = [
    # G2 (L4): vCPUs in the name; local SSD disks of 375 GiB.
    *[
        _gcp(f"g2-standard-{v}", "L4", "nvidia-l4", g, v, m, d)
        for v, g, m, d in [
            (4, 1, 16, 1),
            (8, 1, 32, 1),
            (12, 1, 48, 1),
            (16, 1, 64, 1),
            (24, 2, 96, 2),
            (32, 1, 128, 1),
            (48, 4, 192, 4),
            (96, 8, 384, 8),
        ]
    ],
    *[
        _gcp(f"a2-highgpu-{g}g", "A100-40GB", "nvidia-tesla-a100", g, 12 * g, 85 * g, 0, compact=True)
        for g in (1, 2, 4, 8)
    ],
    *[
        _gcp(f"a2-ultragpu-{g}g", "A100-80GB", "nvidia-a100-80gb", g, 12 * g, 170 * g, g, compact=True)
        for g in (1, 2, 4, 8)
    ],
    _gcp("a3-highgpu-8g", "H100-80GB", "nvidia-h100-80gb", 8, 208, 1872, 16, "tcpx", 4, compact=True),
    _gcp("a3-megagpu-8g", "H100-80GB", "nvidia-h100-mega-80gb", 8, 208, 1872, 16, "tcpxo", 8, compact=True),
    _gcp(
        "a3-ultragpu-8g",
        "H200-141GB",
        "nvidia-h200-141gb",
        8,
        224,
        2952,
        32,
        "rdma",
        8,
        compact=True,
        disk="hyperdisk-balanced",
    ),
    _gcp("a4-highgpu-8g", "B200", "nvidia-b200", 8, 224, 3968, 32, "rdma", 8, compact=True, disk="hyperdisk-balanced"),
]

MACHINES: dict[str, MachineType] = {m.name: m for m in (*_AWS, *_GCP)}

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


def system_machine_families(cloud: str) -> str:
    """The catalog's system-pool families of a cloud, in a line an error message can carry."""
    match cloud:
        case "aws":
            return f"{', '.join(sorted(_AWS_CPU_FAMILIES))} (.large to .16xlarge)"
        case "gcp":
            return f"{', '.join(sorted(_GCP_CPU_SERIES))} (-<vCPUs>)"
    raise ValueError(f"unknown cloud {cloud!r}")


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
