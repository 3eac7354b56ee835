"""Memory and CPU of the cache's JVMs: what each container of the Alluxio runtime gets, and how its JVM splits it.

Five JVMs run per cache: master and job master (the master pod, on the system pool), worker and job worker (the worker
pod, on the GPU pools workers run on) and the FUSE daemon (every GPU node whose servers mount the cache). Master, worker
and FUSE state their heap and direct memory (`-Xmx`, `-XX:MaxDirectMemorySize`) within their container's memory. Fluid
1.0.8 renders no JVM options of the job master and job worker of their own, only the runtime's, which every JVM of the
runtime gets: the runtime says `-XX:MaxRAM=<job container memory>`, so that the job JVMs size their heap (a quarter)
and direct memory (as much again) from it and not from the node's memory; the others' explicit sizes take precedence
over it, whatever the order of the options (upstream.FLUID_JOB_JVMS_TAKE_THE_RUNTIMES_OPTIONS).
"""

from __future__ import annotations

# Alluxio worker heap + direct memory; the memory tier (tmpfs, charged to the worker's container) comes on top of it.
WORKER_JVM_GIB = 4
# Job master and job worker: jobs of a few prewarms, a few block loads at a time.
JOB_JVM_GIB = 2
# Block loads a job worker runs at once (`alluxio.job.worker.threadpool.size`; Fluid's default 32): each read through
# its client buffers chunks in its direct memory (components/domain/cache_reads.py).
JOB_WORKER_THREADS = 4
CACHE_COMPONENT_CPU = 0.5  # request of the master, worker and FUSE containers (components/addons/model_cache.py)
JOB_COMPONENT_CPU = 0.1  # request of the job master and job worker: they mostly wait on the worker's block loads


def heap_mib(memory_gib: int) -> int:
    """A cache JVM's heap: a quarter of its container's memory (what HotSpot takes by default from MaxRAM)."""
    return memory_gib * 1024 // 4


def direct_mib(memory_gib: int) -> int:
    """A cache JVM's direct buffers: half of its container's memory (the rest is the JVM's own)."""
    return memory_gib * 1024 // 2


def job_direct_mib() -> int:
    """The job JVMs' direct buffers: HotSpot's default, as large as the heap they take from MaxRAM."""
    return heap_mib(JOB_JVM_GIB)
