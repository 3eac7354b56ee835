"""GPU models: memory, FP8, NVLink and MIG geometry.

Sources: NVIDIA datasheets (A10G, L4, L40S, A100, H100, H200, B200) for memory, FP8 and
NVLink; MIG config names and profiles from the GPU Operator's default mig-parted config
(gpu-operator@v26.7.0:assets/state-mig-manager/0400_configmap.yaml, FACTS.md) and the MIG
user guide's profile tables (docs.nvidia.com/datacenter/tesla/mig-user-guide). The tests
cross-check the config names against the upstream file.
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class GpuModel:
    name: str
    memory_gib: int
    fp8: bool
    nvlink: bool
    nvlink_gbps: int  # per-GPU NVLink bandwidth, GB/s (0 without NVLink)
    memory_bandwidth_gbps: int
    mig_profiles: tuple[MigProfile, ...] = ()
    gfd_product: str = ""  # nvidia.com/gpu.product as GPU Feature Discovery reports it

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


GPUS: dict[str, GpuModel] = {
    g.name: g
    for g in (
        GpuModel(
            "A10G", 24, fp8=False, nvlink=False, nvlink_gbps=0, memory_bandwidth_gbps=600, gfd_product="NVIDIA-A10G"
        ),
        GpuModel("L4", 24, fp8=True, nvlink=False, nvlink_gbps=0, memory_bandwidth_gbps=300, gfd_product="NVIDIA-L4"),
        GpuModel(
            "L40S", 48, fp8=True, nvlink=False, nvlink_gbps=0, memory_bandwidth_gbps=864, gfd_product="NVIDIA-L40S"
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
        ),
    )
}
