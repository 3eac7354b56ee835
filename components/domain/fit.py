"""A model's sizing request from its config, and its fit on one placement: the single computation the
config checks, the rendered InferenceServices and plan.md share."""

from __future__ import annotations

from dataclasses import dataclass, replace

from components.config.region import GpuPoolSpec, RegionSpec
from components.config.workloads import ModelSpec
from components.domain.sizing import GpuSlot, Sizing, SizingRequest, estimated_startup_seconds, size
from components.domain.slots import gpu_slot


def sizing_request(model: ModelSpec) -> SizingRequest:
    """The model's engine limits as a sizing request (its preset and draft preset must be in the catalog)."""
    return SizingRequest(
        model.architecture,
        precision=model.precision,
        kv_cache_dtype=model.kv_cache_dtype,
        max_model_len=model.max_model_len,
        max_num_seqs=model.max_num_seqs,
        gpu_memory_utilization=model.gpu_memory_utilization,
        draft=model.draft_architecture,
        lora_adapters=len(model.served_adapters),
        max_lora_rank=model.max_lora_rank,
    )


@dataclass(frozen=True)
class Fit:
    slot: GpuSlot
    request: SizingRequest
    sizing: Sizing


def placement_fit(model: ModelSpec, pool: GpuPoolSpec, resource: str) -> Fit:
    """How `model` splits over `resource` of `pool`; raises sizing.DoesNotFit with the numbers."""
    slot = gpu_slot(pool, resource)
    request = sizing_request(model)
    return Fit(slot, request, size(request, slot))


def prefill_fit(model: ModelSpec, pool: GpuPoolSpec, resource: str, max_num_seqs: int) -> Fit:
    """The prefill pods' fit: the model's weights, and KV cache for the prompts one pod batches (not decode's)."""
    slot = gpu_slot(pool, resource)
    request = replace(sizing_request(model), max_num_seqs=max_num_seqs)
    return Fit(slot, request, size(request, slot))


def startup_seconds(region: RegionSpec, model: ModelSpec, sizing: Sizing) -> int:
    """Estimated time for a replica to start in `region`: its weights from the cache or the bucket, the engine's
    start and compilation."""
    return estimated_startup_seconds(
        weights_gib=sizing.weights_gib,
        load_gib_per_second=region.serving.load_gib_per_second(region.model_cache.enabled),
        runtime=model.runtime,
    )
