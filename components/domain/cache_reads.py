"""The weight reads a cache node serves at once, and Alluxio read buffers that hold them in the JVMs' memory.

Every engine process of a model server (one per GPU of a replica: tensor x pipeline parallel) streams the checkpoint
(its share of the files, distributed) with `STREAMER_CONCURRENCY` parallel reads
(upstream.VLLM_STREAMS_WEIGHTS_FROM_EVERY_RANK), through
its node's FUSE daemon; with emptyDir tiers every stream also goes through a worker (no short-circuit,
upstream.FLUID_EMPTYDIR_TIERS_READ_THROUGH_THE_WORKER). Servers may load together (a node boots, a model scales up), so
a node's streams are `STREAMER_CONCURRENCY` per engine process it can hold: its GPU slots, at most the processes of the
replicas placed on its pool. Per stream, the FUSE daemon buffers `READ_BUFFER_MESSAGES` chunks and the worker one
chunk, in direct memory, and a job worker loading blocks for a prewarm buffers as many per load
(upstream.ALLUXIO_READ_BUFFERS). The chunk is the largest power of two MiB (at most `MAX_CHUNK_MIB`) for which all
streams of the busiest node fit in the FUSE daemon's direct memory and in half the worker's (the other half for reads
from other nodes and from the bucket), and the job worker's loads in its own; the worker sends chunks that size only if
its largest chunk is at least that, so the runtime sets it to the chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.catalog.engines import STREAMER_CONCURRENCY
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.domain.cache_memory import JOB_WORKER_THREADS, WORKER_JVM_GIB, direct_mib, job_direct_mib
from components.domain.cache_plan import cache_plan
from components.domain.fit import placement_fit, prefill_fit
from components.domain.slots import placed_in, placed_pool, placed_resource, slots_per_node

READ_BUFFER_MESSAGES = 4  # chunks in flight per stream in the FUSE daemon (Alluxio's default is 16)
MAX_CHUNK_MIB = 64  # below the client's 100 MB inbound gRPC message limit (upstream.ALLUXIO_READ_BUFFERS)
MIN_CHUNK_MIB = 1  # Alluxio's default chunk


@dataclass(frozen=True)
class CacheReads:
    streams_per_node: int  # the busiest cached pool's
    busiest_pool: str
    chunk_mib: int  # 0: not even MIN_CHUNK_MIB fits
    worker_bound: bool  # the worker's direct memory, not the FUSE daemon's, bounds the chunk

    @property
    def fuse_buffers_mib(self) -> int:
        return self.streams_per_node * READ_BUFFER_MESSAGES * self.chunk_mib

    @property
    def worker_buffers_mib(self) -> int:
        return self.streams_per_node * self.chunk_mib

    @property
    def job_worker_buffers_mib(self) -> int:
        return JOB_WORKER_THREADS * READ_BUFFER_MESSAGES * self.chunk_mib


def engine_processes(env: EnvironmentSpec, region: RegionSpec) -> dict[str, int]:
    """GPU pool -> engine processes of the replicas placed on it at their maximum (GPUs per replica each), the
    prefill pods of disaggregated placements included. Every placement must be sized (the serving checks passed)."""
    processes: dict[str, int] = {}

    def add(pool_name: str, count: int) -> None:
        processes[pool_name] = processes.get(pool_name, 0) + count

    for model, placement, pool, resource in placed_in(env, region):
        add(pool.name, placement.max_replicas * placement_fit(model, pool, resource).sizing.gpus_per_replica)
        prefill = placement.prefill
        if placement.serving_mode != "aggregated" and prefill is not None:
            prefill_pool = placed_pool(region, prefill.pool)
            prefill_resource = placed_resource(prefill_pool, None)
            fit = prefill_fit(model, prefill_pool, prefill_resource, prefill.max_num_seqs)
            add(prefill_pool.name, prefill.replicas * fit.sizing.gpus_per_replica)
    return processes


def node_streams(env: EnvironmentSpec, region: RegionSpec) -> dict[str, int]:
    """GPU pool -> weight streams one of its nodes may serve at once (its FUSE daemon; with emptyDir tiers every
    stream also goes through a worker, the node's own or another's)."""
    processes = engine_processes(env, region)
    return {
        pool.name: STREAMER_CONCURRENCY * min(slots_per_node(pool), processes.get(pool.name, 0))
        for pool in region.gpu_pools
    }


def cache_reads(env: EnvironmentSpec, region: RegionSpec) -> CacheReads:
    """The read sizing of an enabled cache."""
    streams = node_streams(env, region)
    busiest = max(streams, key=lambda name: (streams[name], name))
    count = max(1, streams[busiest])
    fuse_budget = direct_mib(cache_plan(region).fuse_memory_gib) // (count * READ_BUFFER_MESSAGES)
    worker_budget = direct_mib(WORKER_JVM_GIB) // 2 // count
    job_budget = job_direct_mib() // (JOB_WORKER_THREADS * READ_BUFFER_MESSAGES)
    chunk = MAX_CHUNK_MIB
    while chunk > min(fuse_budget, worker_budget, job_budget) and chunk >= MIN_CHUNK_MIB:
        chunk //= 2
    return CacheReads(
        streams_per_node=count, busiest_pool=busiest, chunk_mib=chunk, worker_bound=worker_budget < fuse_budget
    )
