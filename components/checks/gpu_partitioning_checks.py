"""Checks of GPU partitioning (MIG, GKE partitions, time-slicing) and driver ownership on GPU pools.

Rules, and why:
- driverInstall=operator is rejected on AWS: EKS GPU nodes run the AL2023 NVIDIA AMI, which ships
  the driver and container toolkit; a second, containerised driver would fight the first.
- mig needs a MIG-capable GPU (the message lists what the GPU offers instead), exactly one of
  profile / layout, a profile that is a mig-parted config of that GPU and creates instances, a
  layout within the GPU's 7 compute and 8 memory slices, and one profile per node under the
  single strategy (it advertises every instance as nvidia.com/gpu).
- On GKE pools whose driver GKE installs, GKE's device plugin owns the GPUs: the operator's MIG
  manager cannot run there (use gkePartitionSize), and GKE partitions only GPUs whose driver
  it installs (with driverInstall=operator use mig).
- gkePartitionSize is GKE's own MIG: not on AWS, not together with mig, and a profile of the GPU.
- MIG (either kind) and time-slicing on one pool are rejected: partitions and shares of one
  GPU would make the schedulable resources ambiguous.
- One cluster runs one GPU Operator: its MIG strategy is cluster-wide, and with custom layouts
  it reads one mig-parted config, in which a config name can mean only one layout.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from components.config.base import Issue, KeyPath, join_path
from components.config.environment import EnvironmentSpec
from components.config.region import GpuPoolSpec, MigSpec, RegionSpec
from components.domain.gpu_partitioning import gpu_software
from platform_catalog.gpus import GPUS, MIG_COMPUTE_SLICES, MIG_DISABLED, MIG_ENABLED_EMPTY, MIG_MEMORY_SLICES, GpuModel
from platform_catalog.machines import MACHINES

_EXAMPLE_LAYOUT = '{"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}'


def check_gpu_partitioning(env: EnvironmentSpec) -> Iterator[Issue]:
    for i, region in enumerate(env.regions):
        path = ("regions", i)
        pools: Sequence[GpuPoolSpec] = region.gpu_pools
        for j, pool in enumerate(pools):
            machine = MACHINES.get(pool.machine_type)
            if machine is not None:  # an unknown machine type is reported by the pool checks
                yield from _check_pool(pool, machine.gpu_model, (*path, "gpuPools", j))
        yield from _check_one_operator_per_cluster(region, path)


def _alternatives(gpu: GpuModel) -> str:
    return (
        f"{gpu.name} has no MIG; it offers whole GPUs or time-slicing (timeSlicing: {{replicas: N}}). "
        "Remove the MIG setting, or pick a machine type with a MIG-capable GPU ("
        + ", ".join(g.name for g in GPUS.values() if g.mig_capable)
        + ")"
    )


def _check_pool(pool: GpuPoolSpec, gpu: GpuModel, path: KeyPath) -> Iterator[Issue]:
    if pool.driver_in_node_image and pool.driver_install == "operator":
        yield Issue(
            join_path(*path, "driverInstall"),
            "EKS GPU nodes run the AL2023 NVIDIA AMI, which ships the NVIDIA driver and container "
            "toolkit, so the GPU Operator does not install them on AWS; remove driverInstall (default: cloud)",
        )
    if pool.gke_partition_size is not None:
        yield from _check_gke_partition(pool, pool.gke_partition_size, gpu, path)
    if pool.mig is not None:
        yield from _check_mig(pool, pool.mig, gpu, path)
    if pool.time_slicing is not None and (pool.mig is not None or pool.gke_partition_size is not None):
        yield Issue(
            join_path(*path, "timeSlicing"),
            "MIG and time-slicing cannot be combined on one pool; remove timeSlicing, or put the "
            "time-sliced GPUs in a pool of their own",
        )


def _check_gke_partition(pool: GpuPoolSpec, size: str, gpu: GpuModel, path: KeyPath) -> Iterator[Issue]:
    at = join_path(*path, "gkePartitionSize")
    if pool.mig is not None:
        yield Issue(at, "GKE partitioning and GPU Operator MIG (mig) cannot both partition one pool; keep one of them")
    elif pool.driver_install == "operator":
        yield Issue(
            at,
            f"GKE partitions GPUs only when GKE installs the driver; with driverInstall: operator use "
            f"mig: {{profile: all-{size}}} instead",
        )
    elif not gpu.mig_capable:
        yield Issue(at, _alternatives(gpu))
    elif gpu.mig_profile(size) is None:
        yield Issue(
            at, f"{size!r} is not a MIG profile of {gpu.name}; use one of {', '.join(p.name for p in gpu.mig_profiles)}"
        )


def _check_mig(pool: GpuPoolSpec, mig: MigSpec, gpu: GpuModel, path: KeyPath) -> Iterator[Issue]:
    at = (*path, "mig")
    if not gpu.mig_capable:
        yield Issue(join_path(*at), _alternatives(gpu))
        return
    if not gpu_software(pool).operator_managed:
        yield Issue(
            join_path(*at),
            "GKE installs the driver and runs its own device plugin on this pool (driverInstall: cloud), "
            "so the GPU Operator's MIG manager cannot partition it; use gkePartitionSize (one of "
            f"{', '.join(p.name for p in gpu.mig_profiles)}) or set driverInstall: operator",
        )
    if mig.profile is not None and mig.layout is None:
        problems = list(_check_profile(mig.profile, gpu, (*at, "profile")))
        layout = gpu.mig_config_layout(mig.profile) or {}
    elif mig.layout is not None and mig.profile is None:
        problems = list(_check_layout(mig.layout, gpu, (*at, "layout")))
        layout = mig.layout
    else:
        yield Issue(
            join_path(*at),
            "set exactly one of profile (a mig-parted config name, e.g. all-3g.40gb) or layout "
            f"(a custom per-GPU layout, e.g. {_EXAMPLE_LAYOUT})",
        )
        return
    yield from problems
    if not problems and mig.strategy == "single" and len(layout) > 1:
        yield Issue(
            join_path(*at, "strategy"),
            "the single strategy advertises every MIG instance as nvidia.com/gpu, so a node must hold one "
            f"profile, but this layout mixes {', '.join(layout)}; use strategy: mixed or a one-profile config",
        )


def _check_profile(profile: str, gpu: GpuModel, at: KeyPath) -> Iterator[Issue]:
    if profile == MIG_DISABLED:
        yield Issue(join_path(*at), f"{profile!r} turns MIG off; remove mig to use whole GPUs")
    elif profile == MIG_ENABLED_EMPTY:
        yield Issue(
            join_path(*at),
            f"{profile!r} turns MIG on without creating GPU instances, leaving nothing to schedule; "
            "pick a config that creates them (e.g. all-3g.40gb) or a custom layout",
        )
    elif gpu.mig_config_layout(profile) is None:
        usable = [c for c in gpu.mig_configs if gpu.mig_config_layout(c)]
        yield Issue(join_path(*at), f"{profile!r} is not a MIG config of {gpu.name}; use one of {', '.join(usable)}")


def _check_layout(layout: dict[str, int], gpu: GpuModel, at: KeyPath) -> Iterator[Issue]:
    if not layout:
        yield Issue(join_path(*at), f"the layout is empty; list MIG profiles and counts, e.g. {_EXAMPLE_LAYOUT}")
        return
    known = True
    for name, count in layout.items():
        if gpu.mig_profile(name) is None:
            known = False
            yield Issue(
                join_path(*at) + f"[{name!r}]",
                f"not a MIG profile of {gpu.name}; use one of {', '.join(p.name for p in gpu.mig_profiles)}",
            )
        elif count < 1:
            known = False
            yield Issue(
                join_path(*at) + f"[{name!r}]", f"count {count} must be at least 1; raise it or remove the profile"
            )
    if not known:
        return
    for kind, budget in (("compute", MIG_COMPUTE_SLICES), ("memory", MIG_MEMORY_SLICES)):
        terms = [(name, count, getattr(gpu.mig_profile(name), f"{kind}_slices")) for name, count in layout.items()]
        used = sum(count * slices for _, count, slices in terms)
        if used > budget:
            breakdown = " + ".join(f"{count} x {name} ({count * slices})" for name, count, slices in terms)
            yield Issue(
                join_path(*at),
                f"needs {used} {kind} slices ({breakdown}) but one {gpu.name} has {budget}; "
                "remove instances or use smaller profiles",
            )


def _check_one_operator_per_cluster(region: RegionSpec, path: KeyPath) -> Iterator[Issue]:
    """The GPU Operator's MIG strategy and mig-parted config are per cluster."""
    pools: Sequence[GpuPoolSpec] = region.gpu_pools
    mig_pools = [
        (j, pool, pool.mig)
        for j, pool in enumerate(pools)
        if pool.mig is not None
        and pool.machine_type in MACHINES
        and MACHINES[pool.machine_type].gpu_model.mig_capable
        and gpu_software(pool).operator_managed
    ]
    if not mig_pools:
        return
    _, first, first_mig = mig_pools[0]
    for j, _, mig in mig_pools[1:]:
        if mig.strategy != first_mig.strategy:
            yield Issue(
                join_path(*path, "gpuPools", j, "mig", "strategy"),
                f"the GPU Operator applies one MIG strategy per cluster and pool {first.name!r} uses "
                f"{first_mig.strategy!r}; use the same strategy on every MIG pool of region {region.name!r}",
            )
    if not any(mig.layout for _, _, mig in mig_pools):
        return
    seen: dict[str, tuple[GpuPoolSpec, GpuModel, dict[str, int]]] = {}
    for j, pool, mig in mig_pools:
        gpu = MACHINES[pool.machine_type].gpu_model
        if mig.profile is None or (layout := gpu.mig_config_layout(mig.profile)) is None:
            continue
        other = seen.setdefault(mig.profile, (pool, gpu, layout))
        if other[2] != layout:
            yield Issue(
                join_path(*path, "gpuPools", j, "mig", "profile"),
                f"{mig.profile!r} means {layout} on {gpu.name} but {other[2]} on {other[1].name} "
                f"(pool {other[0].name!r}); with custom layouts in the region the GPU Operator reads one "
                "mig-parted config, where a name has one layout; give one of the pools a custom layout",
            )
