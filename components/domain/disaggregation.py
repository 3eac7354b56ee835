"""A placement's serving mode resolved: aggregated, or a prefill pool handing KV caches to the decode pool.

The figures come from `kv_transfer.py`; this module reads them off the config (pools, fabric, zones, the
two fits) and applies `servingMode: auto`'s rule. The config checks (`serving_checks.py`) guarantee that
what it reads exists and fits.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.catalog.engines import LIBFABRIC, PD_NIXL_BACKENDS
from components.config.region import GpuPoolSpec, RegionSpec
from components.config.workloads import ModelSpec, PlacementSpec, PrefillSpec
from components.domain.fit import Fit, prefill_fit
from components.domain.host import HostResources, pod_host_resources
from components.domain.kv_transfer import KvTransfer, ModeDecision, decide_mode, kv_transfer, prompt_kv_bytes
from components.domain.slots import placed_pool, placed_resource


@dataclass(frozen=True)
class Disaggregation:
    """The prefill side of a disaggregated placement and the hand-off to its decode pods."""

    spec: PrefillSpec
    pool: GpuPoolSpec
    resource: str
    fit: Fit
    host: HostResources
    transfer: KvTransfer
    # Both GPUs have FP8 but the cache is 16-bit: `kvCacheDtype: fp8` would halve every transfer.
    fp8_would_halve: bool


def shared_zones(region: RegionSpec, a: GpuPoolSpec, b: GpuPoolSpec) -> list[str]:
    return sorted(set(region.pool_zones(a)) & set(region.pool_zones(b)))


def efa_path(
    region: RegionSpec, prefill: GpuPoolSpec, decode: GpuPoolSpec, nixl_backends: tuple[str, ...] = PD_NIXL_BACKENDS
) -> bool:
    """EFA carries the hand-off when both pools have it and share a zone (EFA traffic stays in its subnet), and the
    disaggregated pods' image has NIXL's LIBFABRIC backend with the EFA userspace it needs."""
    fabric = prefill.efa and decode.efa and bool(shared_zones(region, prefill, decode))
    return fabric and LIBFABRIC in nixl_backends


def prefill_side(model: ModelSpec, region: RegionSpec, placement: PlacementSpec, decode: Fit) -> Disaggregation:
    """Size the prefill pool of `placement` and the hand-off to the decode pods sized by `decode`."""
    spec = placement.prefill
    if spec is None:
        raise LookupError(f"{model.name} in {region.name} names no prefill pool: the config checks did not run")
    pool = placed_pool(region, spec.pool)
    decode_pool = placed_pool(region, placement.pool)
    resource = placed_resource(pool, None)
    fit = prefill_fit(model, pool, resource, spec.max_num_seqs)
    efa = efa_path(region, pool, decode_pool)
    transfer = kv_transfer(
        bytes_per_prompt=prompt_kv_bytes(model.architecture, model.kv_cache_dtype, spec.prompt_tokens),
        prefill_tp=fit.sizing.tensor_parallel,
        decode_tp=decode.sizing.tensor_parallel,
        efa_machines=(pool.machine_type, decode_pool.machine_type) if efa else None,
        same_placement_group=pool.name == decode_pool.name and pool.packed,
    )
    return Disaggregation(
        spec=spec,
        pool=pool,
        resource=resource,
        fit=fit,
        host=pod_host_resources(region, pool, fit.sizing.tensor_parallel, runtime=model.runtime),
        transfer=transfer,
        fp8_would_halve=model.kv_cache_dtype == "auto" and fit.slot.fp8 and decode.slot.fp8,
    )


def auto_decision(
    model: ModelSpec, placement: PlacementSpec, side: Disaggregation, ttft_objective_seconds: float
) -> ModeDecision:
    return decide_mode(
        params_billion=model.architecture.params_billion,
        prompt_tokens=side.spec.prompt_tokens,
        concurrency=model.max_num_seqs * placement.max_replicas,
        transfer_seconds=side.transfer.seconds,
        ttft_objective_seconds=ttft_objective_seconds,
    )


def resolve_mode(
    model: ModelSpec, region: RegionSpec, placement: PlacementSpec, decode: Fit, ttft_objective_seconds: float
) -> tuple[Disaggregation | None, ModeDecision | None]:
    """(the prefill side when the placement runs disaggregated, the auto rule's verdict when it was asked)."""
    if placement.serving_mode == "aggregated":
        return None, None
    side = prefill_side(model, region, placement, decode)
    if placement.serving_mode == "disaggregated":
        return side, None
    decision = auto_decision(model, placement, side, ttft_objective_seconds)
    return (side if decision.disaggregate else None), decision
