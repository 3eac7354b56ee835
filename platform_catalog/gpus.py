"""GPU models: memory, FP8, NVLink and MIG geometry.

Sources: NVIDIA datasheets (A10G, L4, L40S, A100, H100, H200, B200) for memory, FP8 and
NVLink; MIG config names and profiles from the GPU Operator's default mig-parted config
(gpu-operator@v26.7.0:assets/state-mig-manager/0400_configmap.yaml, FACTS.md) and the MIG
user guide's profile tables (docs.nvidia.com/datacenter/tesla/mig-user-guide). The tests
cross-check the config names against the upstream file.

Memory is sized in what the device reports, not the datasheet's decimal GB (an "L40S 48 GB" is 46068 MiB,
44.99 GiB, to CUDA and vLLM): `device_memory_mib` is `nvidia-smi`'s memory.total (NVML's), and a MIG profile's
memory is what `nvidia-smi mig -lgip` lists in GiB. Measured values, from published nvidia-smi outputs of each
model (A10G 23028, L4 23034, L40S 46068, A100-SXM4-40GB 40960, A100-SXM4-80GB 81920, H100 80GB HBM3 81559,
H200 143771, B200 183359 MiB; MIG tables of the A100 80GB, H100 80GB, A100 40GB and the H200's 1g.18gb).
A MIG profile without a published figure is estimated below its share of the device (`MIG_UNMEASURED_RATIO`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

MIG_COMPUTE_SLICES = 7
MIG_MEMORY_SLICES = 8

# Config names every MIG-capable GPU accepts (besides the all-<profile> ones).
MIG_DISABLED = "all-disabled"
MIG_ENABLED_EMPTY = "all-enabled"  # MIG mode on, no GPU instances
MIG_BALANCED = "all-balanced"
MIG_GENERIC_CONFIGS = (MIG_DISABLED, MIG_ENABLED_EMPTY, MIG_BALANCED)
# mig-parted spells the media-extension variant of a profile "<profile>+me"; config names use ".me".
MEDIA_EXTENSION = "+me"


@dataclass(frozen=True)
class MigProfile:
    name: str  # e.g. "3g.40gb"
    compute_slices: int
    memory_slices: int
    memory_gib: int
    max_instances: int


# A MIG profile with no measured figure: its memory slices' share of the device times the lowest ratio of reported
# to proportional memory among measured profiles (H200 1g.18gb: 16.00 GiB of 1/8 x 140.40 GiB = 17.55).
MIG_UNMEASURED_RATIO = 0.91


@dataclass(frozen=True)
class GpuModel:
    name: str
    memory_gib: int  # the datasheet's figure, as in the node label <domain>/gpu-memory-gib
    fp8: bool
    nvlink: bool
    nvlink_gbps: int  # per-GPU NVLink bandwidth, GB/s (0 without NVLink)
    memory_bandwidth_gbps: int
    mig_profiles: tuple[MigProfile, ...] = ()
    gfd_product: str = ""  # nvidia.com/gpu.product as GPU Feature Discovery reports it
    device_memory_mib: int = 0  # what the device reports (nvidia-smi memory.total)
    mig_device_gib: dict[str, float] = field(default_factory=dict)  # profile -> nvidia-smi mig -lgip's GiB

    @property
    def device_memory_gib(self) -> float:
        return self.device_memory_mib / 1024

    def mig_memory_gib(self, profile: MigProfile) -> float:
        """What a MIG instance of `profile` reports: measured, else estimated below its share of the device."""
        measured = self.mig_device_gib.get(profile.name)
        if measured is not None:
            return measured
        same_memory = [
            self.mig_device_gib[p.name]
            for p in self.mig_profiles
            if p.name in self.mig_device_gib and p.memory_slices == profile.memory_slices
        ]
        if same_memory:
            return same_memory[0]  # profiles of the same memory slices report the same memory
        share = profile.memory_slices / MIG_MEMORY_SLICES * self.device_memory_gib
        return round(share * MIG_UNMEASURED_RATIO, 2)

    @property
    def mig_capable(self) -> bool:
        return bool(self.mig_profiles)

    @property
    def mig_configs(self) -> tuple[str, ...]:
        """Names accepted by the `nvidia.com/mig.config` node label on this GPU."""
        if not self.mig_capable:
            return ()
        single = tuple(f"all-{p.name}" for p in self.mig_profiles)
        # The "+me" (media extensions) variant exists for the smallest profile only.
        return MIG_GENERIC_CONFIGS + single + (f"all-{self.mig_profiles[0].name}.me",)

    def mig_profile(self, name: str) -> MigProfile | None:
        return next((p for p in self.mig_profiles if p.name == name), None)

    def mig_config_layout(self, config: str) -> dict[str, int] | None:
        """MIG devices per GPU that a named mig-parted config creates on this GPU (mig-parted spelling).

        None for a name this GPU does not accept and for the two configs that create no
        instances (all-disabled, all-enabled). all-balanced is 2x the smallest, 1x 2g and 1x 3g
        profile on every GPU of the A100/H100/H200/B200 geometry (upstream device-filter entries).
        """
        if config not in self.mig_configs or config in (MIG_DISABLED, MIG_ENABLED_EMPTY):
            return None
        smallest = self.mig_profiles[0]
        if config == MIG_BALANCED:
            two, three = (next(p for p in self.mig_profiles if p.compute_slices == n) for n in (2, 3))
            return {smallest.name: 2, two.name: 1, three.name: 1}
        if config == f"all-{smallest.name}.me":
            return {smallest.name + MEDIA_EXTENSION: 1}
        profile = self.mig_profile(config.removeprefix("all-"))
        return {profile.name: profile.max_instances} if profile else None


def _mig(small: int, double: int, half: int, full: int) -> tuple[MigProfile, ...]:
    """The A100/H100/H200/B200 geometry: 7 compute and 8 memory slices, named by memory size."""
    return (
        MigProfile(f"1g.{small}gb", 1, 1, small, 7),
        MigProfile(f"1g.{double}gb", 1, 2, double, 4),
        MigProfile(f"2g.{double}gb", 2, 2, double, 3),
        MigProfile(f"3g.{half}gb", 3, 4, half, 2),
        MigProfile(f"4g.{half}gb", 4, 4, half, 1),
        MigProfile(f"7g.{full}gb", 7, 8, full, 1),
    )


def _measured(*gib: float) -> dict[str, float]:
    """nvidia-smi mig -lgip's memory of the six profiles of an 80 GB A100/H100, in `_mig`'s order."""
    return dict(zip((p.name for p in _mig(10, 20, 40, 80)), gib, strict=True))


GPUS: dict[str, GpuModel] = {
    g.name: g
    for g in (
        GpuModel(
            "A10G",
            24,
            fp8=False,
            nvlink=False,
            nvlink_gbps=0,
            memory_bandwidth_gbps=600,
            gfd_product="NVIDIA-A10G",
            device_memory_mib=23028,
        ),
        GpuModel(
            "L4",
            24,
            fp8=True,
            nvlink=False,
            nvlink_gbps=0,
            memory_bandwidth_gbps=300,
            gfd_product="NVIDIA-L4",
            device_memory_mib=23034,
        ),
        GpuModel(
            "L40S",
            48,
            fp8=True,
            nvlink=False,
            nvlink_gbps=0,
            memory_bandwidth_gbps=864,
            gfd_product="NVIDIA-L40S",
            device_memory_mib=46068,
        ),
        GpuModel(
            "A100-40GB",
            40,
            fp8=False,
            nvlink=True,
            nvlink_gbps=600,
            memory_bandwidth_gbps=1555,
            mig_profiles=_mig(5, 10, 20, 40),
            gfd_product="NVIDIA-A100-SXM4-40GB",
            device_memory_mib=40960,
            mig_device_gib={"1g.5gb": 4.75, "1g.10gb": 9.75, "2g.10gb": 9.75, "3g.20gb": 19.62},
        ),
        GpuModel(
            "A100-80GB",
            80,
            fp8=False,
            nvlink=True,
            nvlink_gbps=600,
            memory_bandwidth_gbps=2039,
            mig_profiles=_mig(10, 20, 40, 80),
            gfd_product="NVIDIA-A100-SXM4-80GB",
            device_memory_mib=81920,
            mig_device_gib=_measured(9.50, 19.50, 19.50, 39.25, 39.25, 79.00),
        ),
        GpuModel(
            "H100-80GB",
            80,
            fp8=True,
            nvlink=True,
            nvlink_gbps=900,
            memory_bandwidth_gbps=3350,
            mig_profiles=_mig(10, 20, 40, 80),
            gfd_product="NVIDIA-H100-80GB-HBM3",
            device_memory_mib=81559,
            mig_device_gib=_measured(9.75, 19.62, 19.62, 39.50, 39.50, 79.25),
        ),
        GpuModel(
            "H200-141GB",
            141,
            fp8=True,
            nvlink=True,
            nvlink_gbps=900,
            memory_bandwidth_gbps=4800,
            mig_profiles=_mig(18, 35, 71, 141),
            gfd_product="NVIDIA-H200",
            device_memory_mib=143771,
            mig_device_gib={"1g.18gb": 16.00},
        ),
        GpuModel(
            "B200",
            180,
            fp8=True,
            nvlink=True,
            nvlink_gbps=1800,
            memory_bandwidth_gbps=8000,
            mig_profiles=_mig(23, 45, 90, 180),
            gfd_product="NVIDIA-B200",
            device_memory_mib=183359,
        ),
    )
}

# CUDA compute capability of each GPU (developer.nvidia.com/cuda-gpus): the engine picks kernels by it, e.g. vLLM's
# default attention backend (platform_catalog/disaggregation.py).
COMPUTE_CAPABILITY: dict[str, tuple[int, int]] = {
    "A10G": (8, 6),
    "L4": (8, 9),
    "L40S": (8, 9),
    "A100-40GB": (8, 0),
    "A100-80GB": (8, 0),
    "H100-80GB": (9, 0),
    "H200-141GB": (9, 0),
    "B200": (10, 0),
}
