"""Invalid model store / cache settings: one line naming the key and the fix, before any resource exists."""

from __future__ import annotations

from tests.harness import config_errors, raw_environment


def _cache(raw: dict, region: int, **settings) -> dict:
    raw["regions"][region]["modelCache"] = {"enabled": True, **settings}
    return raw


def test_model_store_is_required():
    raw = raw_environment("dev")
    del raw["modelStore"]
    assert config_errors(raw)[0].startswith("modelStore: required key is missing")


def test_bucket_prefix_must_be_a_valid_bucket_name_part():
    raw = raw_environment("dev")
    raw["modelStore"]["bucketPrefix"] = "Acme_Models"
    assert config_errors(raw) == [
        "modelStore.bucketPrefix: 'Acme_Models' is not usable as a bucket name prefix; use 3-30 lowercase letters, "
        "digits and single '-', starting and ending with a letter or digit, without 'google'"
    ]


def test_bucket_prefix_plus_region_must_leave_room_for_the_environment_name():
    raw = raw_environment("dev")
    raw["modelStore"]["bucketPrefix"] = "a" * 30
    raw["regions"][0]["name"] = "us-east-one-primary"
    for model in raw["models"]:
        model["placements"][0]["region"] = "us-east-one-primary"
    raw["tenants"][0]["gpuQuotas"][0]["region"] = "us-east-one-primary"
    assert config_errors(raw)[-1:] == [
        f"modelStore.bucketPrefix: bucket names are at most 63 characters and {'a' * 30!r} with region "
        "'us-east-one-primary' leaves too little for the environment name; shorten the prefix to at most 25 characters"
    ]


def test_source_region_must_exist():
    raw = raw_environment("prod")
    raw["modelStore"]["sourceRegion"] = "euw1"
    assert config_errors(raw) == ["modelStore.sourceRegion: no region named 'euw1'; use one of use1, usw2, usc1"]


def test_source_region_must_be_s3_when_other_regions_sync_from_it():
    raw = raw_environment("prod")
    raw["modelStore"]["sourceRegion"] = "usc1"
    assert config_errors(raw) == [
        "modelStore.sourceRegion: 'usc1' is a GCP region; the source of truth must be an S3 bucket because the other "
        "buckets are fed by S3 replication and the S3-to-GCS transfer; pick an AWS region"
    ]


def test_weights_outside_the_models_prefix_are_rejected():
    raw = raw_environment("dev")
    raw["models"][0]["storagePath"] = "checkpoints/llama/"
    assert config_errors(raw) == [
        "models[0].storagePath: 'checkpoints/llama/' is outside 'models/', the only prefix model servers and the "
        "cache may read; store the weights under models/"
    ]


def test_cache_needs_a_gpu_pool():
    raw = raw_environment("dev")
    raw["regions"][0]["gpuPools"] = []
    raw["models"] = []
    raw["tenants"] = []
    assert config_errors(raw) == [
        "regions[0].modelCache.enabled: cache workers run on GPU nodes and region 'use1' has no gpuPools; "
        "add a GPU pool or set enabled: false"
    ]


def test_memory_quota_must_leave_the_node_to_the_model_server():
    raw = _cache(raw_environment("prod"), 0, memory="40Gi")
    assert config_errors(raw) == [
        "regions[0].modelCache.memory: 40Gi is more than 25% of the 128 GiB of memory of g6e.4xlarge (pool 'l40s'), "
        "which model servers need; use at most 32Gi"
    ]


def test_memory_tier_cannot_be_empty():
    raw = _cache(raw_environment("dev"), 0, memory="0Gi")
    assert config_errors(raw) == [
        "regions[0].modelCache.memory: the memory tier is Alluxio's top tier and needs at least 1Gi"
    ]


def test_ssd_quota_must_fit_the_local_nvme():
    raw = _cache(raw_environment("prod"), 0, ssd="1Ti")
    assert config_errors(raw) == [
        "regions[0].modelCache.ssd: 1024Gi is more than 80% of the 600 GiB of local NVMe of g6e.4xlarge "
        "(pool 'l40s'), which also holds container images; use at most 480Gi"
    ]


def test_ssd_tier_needs_local_nvme_on_every_gpu_pool():
    raw = raw_environment("prod")
    raw["regions"][2]["gpuPools"][0]["machineType"] = "a2-highgpu-8g"
    del raw["regions"][2]["gpuPools"][0]["gpuDirect"]  # A2 has no GPUDirect NICs
    raw = _cache(raw, 2, ssd="100Gi")
    assert config_errors(raw) == [
        "regions[2].modelCache.ssd: a2-highgpu-8g (pool 'h200') has no local NVMe for the SSD tier; set ssd: 0Gi "
        "or use GPU machine types with local NVMe"
    ]


def test_more_workers_than_gpu_nodes_is_rejected():
    raw = _cache(raw_environment("dev"), 0, replicas=4)  # dev: l40s maxSize 2 + a100-mig maxSize 1
    assert config_errors(raw) == [
        "regions[0].modelCache.replicas: 4 cache workers but the GPU pools have at most 3 nodes (one worker per "
        "node); lower replicas to 3 or raise the pools' maxSize"
    ]


def test_sizes_are_whole_gi_or_ti():
    raw = _cache(raw_environment("dev"), 0, memory="16GB")
    assert config_errors(raw) == [
        "regions[0].modelCache.memory: '16GB' is not a size; use a whole number of Gi or Ti, e.g. 64Gi"
    ]
