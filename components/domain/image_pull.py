"""How long a new GPU node takes to pull a model server's engine image: the gain of parallel pulls counts only
where nodeadm turns them on and they write to the instance-store NVMe."""

from __future__ import annotations

import math

from components.catalog.engines import ENGINE_IMAGE_GIB
from components.catalog.node_images import (
    FAST_IMAGE_PULL_MIN_MEMORY_GIB,
    FAST_IMAGE_PULL_MIN_VCPUS,
    PULL_GIB_PER_SECOND,
    ImagePull,
)
from components.config.region import GpuPoolSpec
from platform_catalog.machines import MACHINES, MachineType


def parallel_pull_applies(machine: MachineType) -> bool:
    """nodeadm turns FastImagePull on only from 4 vCPU and 7 GiB, and the pull gains only on the instance-store
    array (upstream.NODEADM_FAST_IMAGE_PULL): on a root EBS volume at gp3's baseline throughput it is slower."""
    return (
        machine.vcpus >= FAST_IMAGE_PULL_MIN_VCPUS
        and machine.memory_gib >= FAST_IMAGE_PULL_MIN_MEMORY_GIB
        and machine.local_nvme_gib > 0
    )


def effective_image_pull(pool: GpuPoolSpec) -> ImagePull:
    """How the pool's nodes really pull the engine images. GKE's image streaming is not counted: it streams only
    Artifact Registry images (upstream.GKE_IMAGE_STREAMING_ONLY_ARTIFACT_REGISTRY), and the engines come from
    Docker Hub and NGC."""
    machine = MACHINES[pool.machine_type]
    if pool.image_pull == "parallel" and parallel_pull_applies(machine):  # an EKS node setting: GKE pools have none
        return "parallel"
    return "default"


def image_pull_seconds(pool: GpuPoolSpec, runtime: str) -> int:
    """Seconds a node of the pool takes to pull `runtime`'s engine image the first time."""
    return math.ceil(ENGINE_IMAGE_GIB[runtime] / PULL_GIB_PER_SECOND[effective_image_pull(pool)])
