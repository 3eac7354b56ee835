"""What a GPU pool offers the scheduler, in Kubernetes extended-resource names.

Model deployments request exactly these names, queues are sized in them, and plan.md shows
them; computing them in one place keeps the three consistent.
"""

from __future__ import annotations

from components.catalog.gpus import GPUS
from components.catalog.machines import MACHINES
from components.spec.region import GpuPoolSpec

WHOLE_GPU = "nvidia.com/gpu"


def _layout(pool: GpuPoolSpec) -> dict[str, int]:
    """Per-GPU MIG layout: the custom one, or the one an all-<profile> config name implies."""
    mig = pool.mig
    if mig is None:
        return {}
    if mig.layout:
        return dict(mig.layout)
    gpu = GPUS[MACHINES[pool.machine_type].gpu]
    name = (mig.profile or "").removeprefix("all-").removesuffix(".me")
    profile = gpu.mig_profile(name)
    return {profile.name: profile.max_instances} if profile else {}


def schedulable_resources(pool: GpuPoolSpec) -> dict[str, int]:
    """Resource name -> count per node."""
    machine = MACHINES[pool.machine_type]
    if pool.mig is not None:
        layout = _layout(pool)
        if pool.mig.strategy == "single":
            return {WHOLE_GPU: sum(layout.values()) * machine.gpus}
        return {f"nvidia.com/mig-{profile}": n * machine.gpus for profile, n in layout.items()}
    if pool.gke_partition_size:
        gpu = GPUS[machine.gpu]
        profile = gpu.mig_profile(pool.gke_partition_size)
        return {WHOLE_GPU: (profile.max_instances if profile else 1) * machine.gpus}
    if pool.time_slicing is not None:
        return {WHOLE_GPU: machine.gpus * pool.time_slicing.replicas}
    return {WHOLE_GPU: machine.gpus}
