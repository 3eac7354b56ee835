"""What one model-server GPU of a pool is: a whole GPU, a MIG slice or a time-slice share.

Sizing (`sizing.size`) needs the memory a server gets, how far it may be split and whether
it has FP8; these follow from the pool's machine type and partitioning, and from which of the
pool's extended resources (`gpu_resources.schedulable_resources`) the placement requests.
"""

from __future__ import annotations

from collections.abc import Iterator

from components.config.environment import EnvironmentSpec
from components.config.region import GpuPoolSpec, RegionSpec
from components.config.workloads import ModelSpec, PlacementSpec
from components.domain.gpu_partitioning import mig_layout
from components.domain.gpu_resources import WHOLE_GPU, schedulable_resources
from components.domain.sizing import GpuSlot
from platform_catalog.gpus import MEDIA_EXTENSION, GpuModel, MigProfile
from platform_catalog.machines import MACHINES

MIG_RESOURCE_PREFIX = "nvidia.com/mig-"


def placement_resource(pool: GpuPoolSpec, requested: str | None) -> str | None:
    """The extended resource a placement requests: the one asked for, else the pool's only one.

    None when the pool offers several and none was chosen (the config checks report it).
    """
    offered = schedulable_resources(pool)
    if requested is not None:
        return requested if requested in offered else None
    return next(iter(offered)) if len(offered) == 1 else None


def placed_in(env: EnvironmentSpec, region: RegionSpec) -> Iterator[tuple[ModelSpec, PlacementSpec, GpuPoolSpec, str]]:
    """Each placement in `region`, in config order, with its validated pool and the resource it takes there."""
    for model in env.models:
        for placement in model.placements:
            if placement.region == region.name:
                pool = placed_pool(region, placement.pool)
                yield model, placement, pool, placed_resource(pool, placement.resource)


def placed_pool(region: RegionSpec, name: str) -> GpuPoolSpec:
    """The pool a validated placement names (check_workloads); a LookupError names the pool it does not find."""
    pool = region.pool(name)
    if pool is None:
        raise LookupError(f"region {region.name} has no GPU pool {name!r}: the config checks did not run")
    return pool


def placed_resource(pool: GpuPoolSpec, requested: str | None) -> str:
    """`placement_resource` of a validated placement; a LookupError names the pool when there is none."""
    resource = placement_resource(pool, requested)
    if resource is None:
        raise LookupError(f"pool {pool.name} offers no resource {requested or ''}: the config checks did not run")
    return resource


def multi_node_capable(pool: GpuPoolSpec) -> bool:
    """Pools whose replicas may span nodes: EFA pools, packed in one placement group.

    Pipeline-parallel gangs must stay inside one fabric domain (a tier-1 HyperNode, which only
    placement-group pools have). GKE GPUDirect pools would also need the GPUDirect NIC annotations
    and NCCL plugin on the pods, which the platform does not render: their replicas stay in one node.
    """
    return pool.efa


def _mig_profile(gpu: GpuModel, device: str) -> MigProfile:
    name = device.removesuffix(MEDIA_EXTENSION).removesuffix(".me")
    profile = gpu.mig_profile(name)
    if profile is None:
        raise ValueError(f"{device!r} is not a MIG profile of {gpu.name}")
    return profile


def gpu_slot(pool: GpuPoolSpec, resource: str) -> GpuSlot:
    """The GPU one unit of `resource` gives a model server on `pool`."""
    machine = MACHINES[pool.machine_type]
    gpu = machine.gpu_model
    layout = mig_layout(pool)
    if layout:
        # Mixed strategy: the resource names the profile; otherwise the pool holds one profile.
        device = resource.removeprefix(MIG_RESOURCE_PREFIX) if resource != WHOLE_GPU else next(iter(layout))
        profile = _mig_profile(gpu, device)
        return GpuSlot(
            f"{gpu.name} MIG {profile.name}",
            gpu.mig_memory_gib(profile),
            gpus_per_node=1,
            max_nodes=1,
            fp8=gpu.fp8,
            splittable=False,
            gpu_share=profile.memory_slices / max(p.memory_slices for p in gpu.mig_profiles),
        )
    if pool.time_slicing is not None:
        shares = pool.time_slicing.replicas
        return GpuSlot(
            f"{gpu.name} 1/{shares} time-slice",
            gpu.device_memory_gib / shares,
            gpus_per_node=1,
            max_nodes=1,
            fp8=gpu.fp8,
            splittable=False,
            device_memory_gib=gpu.device_memory_gib,
            gpu_share=1 / shares,
        )
    return GpuSlot(
        gpu.name,
        gpu.device_memory_gib,
        gpus_per_node=machine.gpus,
        max_nodes=pool.max_size if multi_node_capable(pool) else 1,
        fp8=gpu.fp8,
    )


def slots_per_node(pool: GpuPoolSpec) -> int:
    """Model-server GPUs one node offers (every profile of a mixed MIG layout counted): the node's
    CPU and memory are shared out among them."""
    return sum(schedulable_resources(pool).values())
