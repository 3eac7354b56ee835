"""What a GPU pool offers the scheduler, in Kubernetes extended-resource names.

Model deployments request exactly these names, queues are sized in them, and plan.md shows
them; computing them in one place keeps the three consistent.
"""

from __future__ import annotations

from components.config.region import GpuPoolSpec
from components.domain.gpu_partitioning import mig_layout, mig_resource_name
from platform_catalog.machines import MACHINES

WHOLE_GPU = "nvidia.com/gpu"
# EFA interfaces, which the EFA device plugin advertises on EFA pools and their pods request.
EFA_RESOURCE = "vpc.amazonaws.com/efa"


def schedulable_resources(pool: GpuPoolSpec) -> dict[str, int]:
    """Resource name -> count per node.

    - whole GPUs: `nvidia.com/gpu` x GPUs;
    - operator MIG, mixed strategy: `nvidia.com/mig-<profile>` x instances x GPUs;
    - operator MIG, single strategy, and GKE partitions: `nvidia.com/gpu` x instances x GPUs
      (each instance is advertised as a GPU);
    - time-slicing (operator or GKE): `nvidia.com/gpu` x replicas x GPUs.
    """
    gpus = MACHINES[pool.machine_type].gpus
    layout = mig_layout(pool)
    if layout and pool.mig is not None and pool.mig.strategy == "mixed":
        return {mig_resource_name(device): count * gpus for device, count in layout.items()}
    if layout:
        return {WHOLE_GPU: sum(layout.values()) * gpus}
    replicas = pool.time_slicing.replicas if pool.time_slicing is not None else 1
    return {WHOLE_GPU: gpus * replicas}


def schedulable_at_max_size(pool: GpuPoolSpec) -> dict[str, int]:
    """Resource name -> count when the pool runs at maxSize (what a queue or a placement can hope for)."""
    return {name: count * pool.max_size for name, count in schedulable_resources(pool).items()}
