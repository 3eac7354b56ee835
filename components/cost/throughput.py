"""Output tokens per second of a model replica, estimated: decode is memory-bandwidth bound.

Each decode step produces one token for every sequence of the batch and reads the replica's weights
once plus the KV cache of the whole batch, so

    step seconds = (weight bytes + batch x context tokens x KV bytes per token) / HBM bytes per second
    output tokens/s = batch / step seconds

at the configured batch (`maxNumSeqs`), each sequence at half its `maxModelLen` (a mean context), over
the HBM bandwidth of the replica's GPUs (catalog, NVIDIA datasheets): the whole GPUs' for tensor or
pipeline parallel replicas, the slot's share of the GPU's memory for a MIG slice or a time-slice
share. This is the bandwidth roofline: an upper bound on tokens/s, so $/1M output tokens is a floor.
Prefill (compute bound) and speculative decoding's accepted tokens are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.domain.fit import Fit
from components.domain.sizing import GIB
from platform_catalog.gpus import GPUS

# The seed's tuning path (the reference of the sanity check): a 7B model in FP16 on one A100-40GB served
# at 40 output tokens/s with static batching, 320 tokens/s tuned (continuous batching and the rest).
REFERENCE_GPU = "A100-40GB"
REFERENCE_WEIGHT_BYTES = 7e9 * 2
REFERENCE_STATIC_TOKENS_PER_SECOND = 40
REFERENCE_TUNED_TOKENS_PER_SECOND = 320
# An estimate more than this many times the tuned path (scaled to the placement) is flagged as optimistic.
OPTIMISTIC_FACTOR = 8


@dataclass(frozen=True)
class DecodeEstimate:
    tokens_per_second: float
    bandwidth_gbps: float  # HBM GB/s the replica reads through
    batch: int
    context_tokens: int
    # The estimate translated to the reference (7B FP16 on one A100-40GB): tokens/s x reference
    # bandwidth / bandwidth x weights / reference weights.
    reference_equivalent: float

    @property
    def sanity(self) -> str:
        """'' when the estimate lies on the seed's path (scaled), else what is off."""
        if self.reference_equivalent < REFERENCE_STATIC_TOKENS_PER_SECOND:
            return f"below the reference's static {REFERENCE_STATIC_TOKENS_PER_SECOND} tokens/s"
        if self.reference_equivalent > OPTIMISTIC_FACTOR * REFERENCE_TUNED_TOKENS_PER_SECOND:
            factor = self.reference_equivalent / REFERENCE_TUNED_TOKENS_PER_SECOND
            return f"{factor:.0f}x the reference's tuned {REFERENCE_TUNED_TOKENS_PER_SECOND} tokens/s: optimistic"
        return ""


def decode_tokens_per_second(
    *, weight_bytes: float, kv_bytes_per_token: float, batch: int, context_tokens: int, bandwidth_gbps: float
) -> float:
    """The roofline of the module docstring."""
    step_bytes = weight_bytes + batch * context_tokens * kv_bytes_per_token
    return batch * bandwidth_gbps * 1e9 / step_bytes


def replica_bandwidth_gbps(fit: Fit, *, gpu: str) -> float:
    """HBM bandwidth of one replica: its GPUs, or the memory share of a MIG slice / time-slice share."""
    model = GPUS[gpu]
    return fit.sizing.gpus_per_replica * model.memory_bandwidth_gbps * fit.slot.gpu_share


def estimate_decode(fit: Fit, *, gpu: str) -> DecodeEstimate:
    request, sizing = fit.request, fit.sizing
    bandwidth = replica_bandwidth_gbps(fit, gpu=gpu)
    weight_bytes = sizing.weights_gib * GIB
    context = request.max_model_len // 2
    tokens = decode_tokens_per_second(
        weight_bytes=weight_bytes,
        kv_bytes_per_token=sizing.kv_bytes_per_token,
        batch=request.max_num_seqs,
        context_tokens=context,
        bandwidth_gbps=bandwidth,
    )
    scale = bandwidth / GPUS[REFERENCE_GPU].memory_bandwidth_gbps * REFERENCE_WEIGHT_BYTES / weight_bytes
    return DecodeEstimate(tokens, bandwidth, request.max_num_seqs, context, tokens / scale)
