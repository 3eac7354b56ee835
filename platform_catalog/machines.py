"""GPU machine types on AWS and GCP: which GPU, how many, and the fabric they bring.

Sources: AWS accelerated computing instance pages and the EFA supported-instance table
(docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html#efa-instance-types, "maximum EFA
interfaces" = network cards for p4d/p5*); GCP GPU machine types
(cloud.google.com/compute/docs/gpus, .../accelerator-optimized-machines) and GPUDirect
networking (cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx,
.../gpu-bandwidth-gpudirect-rdma; cloud.google.com/vpc/docs/rdma-network-profiles); boot disk
types per series (cloud.google.com/compute/docs/accelerator-optimized-machines: A3 Ultra and
A4 support Hyperdisk only).

The program sizes and builds its GPU pools from this catalog and the policy pack checks the pools against it, so it
lives here, in the package both depend on; how each type is bought and the CPU and network facts only the program
reads stay in components/catalog/machines.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, assert_never

from platform_catalog.gpus import GPUS, GpuModel

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
    def local_ssd_count(self) -> int:
        """GCP: bundled 375 GiB local SSDs (G2, A2 Ultra and A3 come with a fixed number)."""
        return self.local_nvme_gib // GCP_LOCAL_SSD_GIB


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
