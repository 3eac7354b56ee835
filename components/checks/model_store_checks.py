"""Bucket names and sync topology, weights under the models prefix, cache quotas that fit the GPU nodes."""

from __future__ import annotations

from collections.abc import Iterator

from components.config.base import Issue, KeyPath, join_path, unknown_name
from components.config.environment import EnvironmentSpec
from components.config.model_store import BUCKET_NAME_BUDGET, MEMORY_SHARE_MAX, MIN_FUSE_MEMORY_GIB, SSD_SHARE_MAX
from components.config.region import RegionSpec
from components.domain.cache_plan import cache_plan, smallest_node
from components.domain.model_bucket import MODELS_PREFIX


def check_model_storage(env: EnvironmentSpec) -> Iterator[Issue]:
    """Bucket naming and sync topology, weights under the models prefix, cache quotas that fit the nodes."""
    store = env.model_store
    names = [r.name for r in env.regions]
    if store.source_region is not None and store.source_region not in names:
        yield unknown_name("modelStore.sourceRegion", "region", store.source_region, names)
    elif len(env.regions) > 1 and not env.model_store_source().can_source_models:
        yield Issue(
            "modelStore.sourceRegion",
            f"{env.model_store_source().name!r} is a GCP region; the source of truth must be an S3 bucket because the "
            "other buckets are fed by S3 replication and the S3-to-GCS transfer; pick an AWS region",
        )
    for region in env.regions:
        if len(store.bucket_prefix) + len(region.name) > BUCKET_NAME_BUDGET:
            yield Issue(
                "modelStore.bucketPrefix",
                f"bucket names are at most 63 characters and {store.bucket_prefix!r} with region "
                f"{region.name!r} leaves too little for the environment name; shorten the prefix to at most "
                f"{BUCKET_NAME_BUDGET - len(region.name)} characters",
            )
    for i, model in enumerate(env.models):
        if not model.weights_prefix.startswith(MODELS_PREFIX):
            yield Issue(
                join_path("models", i, "storagePath"),
                f"{model.storage_path!r} is outside {MODELS_PREFIX!r}, the only prefix model servers and the "
                f"cache may read; store the weights under {MODELS_PREFIX}",
            )
    for i, region in enumerate(env.regions):
        if region.model_cache.enabled:
            yield from _check_cache(region, ("regions", i, "modelCache"))


def _check_cache(region: RegionSpec, path: KeyPath) -> Iterator[Issue]:
    if not region.gpu_pools:
        yield Issue(
            join_path(*path, "enabled"),
            f"cache workers run on GPU nodes and region {region.name!r} has no gpuPools; add a GPU pool or set "
            "enabled: false",
        )
        return
    plan = cache_plan(region)
    pool, memory = smallest_node(region, "memory_gib")
    limit = int(memory * MEMORY_SHARE_MAX)
    if plan.fuse_memory_gib < MIN_FUSE_MEMORY_GIB:
        yield Issue(
            join_path(*path, "fuseMemory"),
            f"{plan.fuse_memory_gib}Gi leaves the FUSE daemon's JVM too little heap and direct memory; use at least "
            f"{MIN_FUSE_MEMORY_GIB}Gi",
        )
    if plan.memory_gib < 1:
        yield Issue(join_path(*path, "memory"), "the memory tier is Alluxio's top tier and needs at least 1Gi")
    elif plan.memory_gib > limit:
        yield Issue(
            join_path(*path, "memory"),
            f"{plan.memory_gib}Gi is more than {MEMORY_SHARE_MAX:.0%} of the {memory} GiB of memory of "
            f"{pool.machine_type} (pool {pool.name!r}), which model servers need; use at most {limit}Gi",
        )
    if plan.ssd_gib:
        pool, nvme = smallest_node(region, "local_nvme_gib")
        limit = int(nvme * SSD_SHARE_MAX)
        if not nvme:
            yield Issue(
                join_path(*path, "ssd"),
                f"{pool.machine_type} (pool {pool.name!r}) has no local NVMe for the SSD tier; set ssd: 0Gi "
                "or use GPU machine types with local NVMe",
            )
        elif plan.ssd_gib > limit:
            yield Issue(
                join_path(*path, "ssd"),
                f"{plan.ssd_gib}Gi is more than {SSD_SHARE_MAX:.0%} of the {nvme} GiB of local NVMe of "
                f"{pool.machine_type} (pool {pool.name!r}), which also holds container images; use at most "
                f"{limit}Gi",
            )
    nodes = sum(p.max_size for p in region.gpu_pools)
    if plan.replicas > nodes:
        yield Issue(
            join_path(*path, "replicas"),
            f"{plan.replicas} cache workers but the GPU pools have at most {nodes} nodes (one worker per node); "
            f"lower replicas to {nodes} or raise the pools' maxSize",
        )
