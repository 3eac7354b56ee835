"""Host CPU and memory of one model server: its GPUs' share of what the node has left.

A GPU node runs the kubelet, the system daemons (CNI, GPU Operator operands, DCGM, EFA plugin)
and, where the model cache is on, the FUSE daemon its model servers read through and, on the pools cache workers
run on, an Alluxio worker pod (worker and job worker), each with the memory the cache gives it
(`components/domain/cache_memory.py`); the rest is shared out by GPU slot (whole
GPU, MIG instance or time-slice share). Requests equal limits (Guaranteed QoS: model servers are
the last pods the kubelet evicts), and /dev/shm, being memory-backed, is part of that memory.

A server never gets less than its engine needs (`ENGINE_HOST_NEEDS`: vLLM's 2 + N busy processes,
one physical core each); where a slot's share is smaller, the node runs fewer servers than it has slots
(`servers_per_node`), and a node that cannot hold one is a config error (checks/serving_checks.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from components.catalog.engines import ENGINE_HOST_NEEDS
from components.config.region import GpuPoolSpec, RegionSpec
from components.domain.cache_memory import CACHE_COMPONENT_CPU, JOB_COMPONENT_CPU, JOB_JVM_GIB, WORKER_JVM_GIB
from components.domain.cache_plan import cache_plan
from components.domain.slots import slots_per_node
from platform_catalog.machines import MACHINES

# Kubelet reservations and eviction threshold, roughly what EKS and GKE keep back on large nodes.
ALLOCATABLE_SHARE = 0.9
DAEMONS_CPU = 1.0
DAEMONS_MEMORY_GIB = 2
SHM_GIB_PER_GPU = 1


@dataclass(frozen=True)
class HostResources:
    cpu: float  # vCPUs, a multiple of 0.1
    memory_gib: int
    shm_gib: int
    slots_per_node: int
    servers_per_node: int  # at most slots_per_node / gpus; fewer where the engine's needs bound it
    node_cpu: float  # what the node leaves for model servers
    node_memory_gib: float
    need_cpu: int  # the engine's needs for one server
    need_memory_gib: int

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
    """Memory the cache takes on each node of `pool`: its FUSE daemon on every GPU node, and its worker pod (memory
    tier, worker JVM, job worker JVM) on the pools workers run on."""
    if not region.model_cache.enabled:
        return 0
    plan = cache_plan(region)
    worker = plan.memory_gib + WORKER_JVM_GIB + JOB_JVM_GIB if pool.name in plan.pools else 0
    return worker + plan.fuse_memory_gib


def cache_cpu(region: RegionSpec, pool: GpuPoolSpec) -> float:
    """CPU the cache requests on each node of `pool`: the FUSE daemon's, and the worker's and job worker's where
    workers run."""
    if not region.model_cache.enabled:
        return 0
    worker_pod = CACHE_COMPONENT_CPU + JOB_COMPONENT_CPU if pool.name in cache_plan(region).pools else 0
    return CACHE_COMPONENT_CPU + worker_pod


def pod_host_resources(region: RegionSpec, pool: GpuPoolSpec, gpus: int, *, runtime: str) -> HostResources:
    """CPU and memory of a `runtime` pod holding `gpus` of the pool's slots: its share of the node, or what
    the engine needs when that is more."""
    machine = MACHINES[pool.machine_type]
    slots = slots_per_node(pool)
    worker_gib = cache_worker_memory_gib(region, pool)
    node_cpu = machine.vcpus * ALLOCATABLE_SHARE - DAEMONS_CPU - cache_cpu(region, pool)
    node_memory = machine.memory_gib * ALLOCATABLE_SHARE - DAEMONS_MEMORY_GIB - worker_gib
    shm = SHM_GIB_PER_GPU * gpus
    needs = ENGINE_HOST_NEEDS[runtime]
    need_cpu, need_memory = needs.vcpus(gpus), needs.memory_gib(gpus, shm)
    cpu = max(math.floor(node_cpu * gpus / slots * 10) / 10, need_cpu)
    memory = max(math.floor(node_memory * gpus / slots), need_memory)
    servers = min(slots // gpus, math.floor(node_cpu / cpu + 1e-9), math.floor(node_memory / memory + 1e-9))
    return HostResources(
        cpu=cpu,
        memory_gib=memory,
        shm_gib=shm,
        slots_per_node=slots,
        servers_per_node=max(servers, 0),
        node_cpu=node_cpu,
        node_memory_gib=node_memory,
        need_cpu=need_cpu,
        need_memory_gib=need_memory,
    )
