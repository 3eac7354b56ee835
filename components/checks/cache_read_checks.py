"""The cache's read buffers against the JVMs' direct memory, with the chunk every stream of the busiest node
can have (components/domain/cache_reads.py computes it)."""

from __future__ import annotations

from collections.abc import Iterator

from components.catalog.engines import STREAMER_CONCURRENCY
from components.config.base import Issue, join_path
from components.config.environment import EnvironmentSpec
from components.domain.cache_memory import WORKER_JVM_GIB, direct_mib
from components.domain.cache_reads import MIN_CHUNK_MIB, READ_BUFFER_MESSAGES, cache_reads


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
            f"({STREAMER_CONCURRENCY} per engine process, one per GPU slot of its model servers)"
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
