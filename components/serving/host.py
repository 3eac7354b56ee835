"""Host CPU and memory of one model server: its GPUs' share of what the node has left.

A GPU node runs the kubelet, the system daemons (CNI, GPU Operator operands, DCGM, EFA plugin)
and, where the model cache is on, one Alluxio worker and the FUSE daemon its model servers read
through, each with the memory the cache gives it (`model_cache.py`); the rest is shared out by GPU slot (whole
GPU, MIG instance or time-slice share). Requests equal limits (Guaranteed QoS: model servers are
the last pods the kubelet evicts), and /dev/shm, being memory-backed, is part of that memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from components.catalog.machines import MACHINES
from components.serving.slots import slots_per_node
from components.spec.model_store import cache_plan
from components.spec.region import GpuPoolSpec, RegionSpec

# Kubelet reservations and eviction threshold, roughly what EKS and GKE keep back on large nodes.
ALLOCATABLE_SHARE = 0.9
DAEMONS_CPU = 1.0
DAEMONS_MEMORY_GIB = 2
CACHE_CPU = 1.0  # the Alluxio worker's and the FUSE daemon's requests (components/addons/model_cache.py)
# Below this an engine (Python, CUDA context, tokenizer, streaming buffer) does not start reliably.
MIN_POD_MEMORY_GIB = 4
SHM_GIB_PER_GPU = 1


@dataclass(frozen=True)
class HostResources:
    cpu: float  # vCPUs, a multiple of 0.1
    memory_gib: int
    shm_gib: int
    slots_per_node: int

    @property
    def cpu_quantity(self) -> str:
        return f"{round(self.cpu * 1000)}m"

    @property
    def memory_quantity(self) -> str:
        return f"{self.memory_gib}Gi"

    @property
    def streamer_buffer_bytes(self) -> int:
        """The weight streamer's CPU buffer: a quarter of the pod's memory, at most 4 GiB."""
        return min(4 * 1024**3, self.memory_gib * 1024**3 // 4)


def cache_worker_memory_gib(region: RegionSpec, pool: GpuPoolSpec) -> int:
    """Memory the cache takes on each node of `pool`: its worker (tiers and JVM) and its FUSE daemon."""
    if not region.model_cache.enabled:
        return 0
    plan = cache_plan(region)
    if pool.name not in plan.pools:
        return 0
    # Imported here: the add-on imports the environment spec, whose checks import this module.
    from components.addons.model_cache import WORKER_JVM_GIB

    return plan.memory_gib + WORKER_JVM_GIB + plan.fuse_memory_gib


def pod_host_resources(region: RegionSpec, pool: GpuPoolSpec, gpus: int) -> HostResources:
    """CPU and memory of a pod holding `gpus` of the pool's slots."""
    machine = MACHINES[pool.machine_type]
    slots = slots_per_node(pool)
    worker_gib = cache_worker_memory_gib(region, pool)
    cpu = machine.vcpus * ALLOCATABLE_SHARE - DAEMONS_CPU - (CACHE_CPU if worker_gib else 0)
    memory = machine.memory_gib * ALLOCATABLE_SHARE - DAEMONS_MEMORY_GIB - worker_gib
    return HostResources(
        cpu=math.floor(cpu * gpus / slots * 10) / 10,
        memory_gib=math.floor(memory * gpus / slots),
        shm_gib=SHM_GIB_PER_GPU * gpus,
        slots_per_node=slots,
    )
