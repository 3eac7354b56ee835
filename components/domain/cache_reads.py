"""The weight reads a cache node serves at once, and Alluxio read buffers that hold them in the JVMs' memory.

Every model server on a GPU node loads its weights through that node's FUSE daemon, with up to
`STREAMER_CONCURRENCY` parallel streams; with emptyDir tiers every stream also goes through the node's worker
(no short-circuit, upstream.FLUID_EMPTYDIR_TIERS_READ_THROUGH_THE_WORKER). Per stream, the FUSE daemon buffers
`READ_BUFFER_MESSAGES` chunks and the worker one chunk (upstream.ALLUXIO_READ_BUFFERS), in direct memory:
the chunk is the largest power of two MiB (at most `MAX_CHUNK_MIB`) for which all streams of the busiest node
fit in the FUSE daemon's direct memory, and in half the worker's (the other half for reads from other nodes and
from the bucket). Servers may load together (a node boots, a model scales up), so a node's streams are
`STREAMER_CONCURRENCY` per server it can hold: its GPU slots, at most the replicas placed on its pool.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from components.catalog.engines import STREAMER_CONCURRENCY
from components.config.base import Issue, join_path
from components.config.model_store import cache_plan
from components.domain.slots import slots_per_node

if TYPE_CHECKING:
    from components.config.environment import EnvironmentSpec
    from components.config.region import RegionSpec

# Alluxio worker JVM heap + direct memory; the memory tier (tmpfs) comes on top of it.
WORKER_JVM_GIB = 4
READ_BUFFER_MESSAGES = 4  # chunks in flight per stream in the FUSE daemon (Alluxio's default is 16)
MAX_CHUNK_MIB = 64
MIN_CHUNK_MIB = 1  # Alluxio's default chunk


def heap_mib(memory_gib: int) -> int:
    """A cache JVM's heap: a quarter of its container's memory."""
    return memory_gib * 1024 // 4


def direct_mib(memory_gib: int) -> int:
    """A cache JVM's direct buffers: half of its container's memory (the rest is the JVM's own)."""
    return memory_gib * 1024 // 2


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


def node_streams(env: EnvironmentSpec, region: RegionSpec) -> dict[str, int]:
    """GPU pool -> weight streams one of its nodes may serve at once (its FUSE daemon; with emptyDir tiers every
    stream also goes through a worker, the node's own or another's)."""
    replicas: dict[str, int] = {}
    for model in env.models:
        for placement in model.placements:
            if placement.region != region.name:
                continue
            replicas[placement.pool] = replicas.get(placement.pool, 0) + placement.max_replicas
            if placement.prefill is not None:
                replicas[placement.prefill.pool] = replicas.get(placement.prefill.pool, 0) + placement.prefill.replicas
    return {
        pool.name: STREAMER_CONCURRENCY * min(slots_per_node(pool), replicas.get(pool.name, 0))
        for pool in region.gpu_pools
    }


def cache_reads(env: EnvironmentSpec, region: RegionSpec) -> CacheReads:
    """The read sizing of an enabled cache."""
    streams = node_streams(env, region)
    busiest = max(streams, key=lambda name: (streams[name], name))
    count = max(1, streams[busiest])
    fuse_budget = direct_mib(cache_plan(region).fuse_memory_gib) // (count * READ_BUFFER_MESSAGES)
    worker_budget = direct_mib(WORKER_JVM_GIB) // 2 // count
    chunk = MAX_CHUNK_MIB
    while chunk > min(fuse_budget, worker_budget) and chunk >= MIN_CHUNK_MIB:
        chunk //= 2
    return CacheReads(
        streams_per_node=count, busiest_pool=busiest, chunk_mib=chunk, worker_bound=worker_budget < fuse_budget
    )


def check_cache_reads(env: EnvironmentSpec) -> Iterator[Issue]:
    """A cache whose FUSE daemon cannot buffer even Alluxio's default chunk for every stream of a node."""
    for i, region in enumerate(env.regions):
        if not region.model_cache.enabled or not region.gpu_pools:
            continue
        reads = cache_reads(env, region)
        if reads.chunk_mib >= MIN_CHUNK_MIB:
            continue
        streams = (
            f"a node of pool {reads.busiest_pool!r} serves {reads.streams_per_node} weight streams at once "
            f"({STREAMER_CONCURRENCY} per model server it holds)"
        )
        if reads.worker_bound:
            yield Issue(
                join_path("regions", i, "modelCache"),
                f"{streams}, more than the cache worker's {direct_mib(WORKER_JVM_GIB) // 2} MiB of read buffers hold "
                f"at {MIN_CHUNK_MIB} MiB each; place fewer replicas on {reads.busiest_pool!r}",
            )
            continue
        need_gib = -(-2 * reads.streams_per_node * READ_BUFFER_MESSAGES * MIN_CHUNK_MIB // 1024)
        yield Issue(
            join_path("regions", i, "modelCache", "fuseMemory"),
            f"{streams}, more than the FUSE daemon's direct memory (half of fuseMemory) buffers at "
            f"{READ_BUFFER_MESSAGES} x {MIN_CHUNK_MIB} MiB each; set fuseMemory to at least {need_gib}Gi",
        )
