"""Sizing against hand-computed figures (GiB = 2^30 bytes)."""

from __future__ import annotations

import pytest

from components.catalog.models import MODELS
from components.serving.sizing import (
    DoesNotFit,
    GpuSlot,
    SizingRequest,
    estimated_load_seconds,
    kv_bytes_per_token,
    size,
    weight_bytes,
)

H100 = GpuSlot("H100-80GB", 80, gpus_per_node=8, max_nodes=4, fp8=True)
A100 = GpuSlot("A100-80GB", 80, gpus_per_node=8, max_nodes=2, fp8=False)
L40S = GpuSlot("L40S", 48, gpus_per_node=1, max_nodes=2, fp8=True)
MIG_3G = GpuSlot("A100-80GB MIG 3g.40gb", 40, gpus_per_node=1, max_nodes=1, fp8=False, splittable=False)


def test_weights_and_kv_per_token_by_hand():
    # Llama 3.1 8B: 8.03e9 params x 2 bytes = 16.06e9 B = 14.96 GiB
    assert weight_bytes(MODELS["llama-3.1-8b"], "bf16") / 2**30 == pytest.approx(14.957, abs=1e-3)
    # 2 x 32 layers x 8 KV heads x 128 dims x 2 bytes = 131072 B per token
    assert kv_bytes_per_token(MODELS["llama-3.1-8b"], "auto") == 131072
    # Llama 3.1 70B: 2 x 80 x 8 x 128 x 2 = 327680; fp8 halves it
    assert kv_bytes_per_token(MODELS["llama-3.1-70b"], "auto") == 327680
    assert kv_bytes_per_token(MODELS["llama-3.1-70b"], "fp8") == 163840
    # Qwen2.5 7B (4 KV heads): 2 x 28 x 4 x 128 x 2 = 57344
    assert kv_bytes_per_token(MODELS["qwen2.5-7b"], "auto") == 57344
    # AWQ 4-bit: 72.7e9 x 0.5 B = 33.85 GiB
    assert weight_bytes(MODELS["qwen2.5-72b"], "awq") / 2**30 == pytest.approx(33.853, abs=1e-3)


def test_small_model_on_one_l40s():
    # usable = 48 x 0.9 - 2 = 41.2 GiB; KV needed = 16 x 8192 x 131072 B = 16 GiB; 14.96 + 16 <= 41.2
    sizing = size(SizingRequest(MODELS["llama-3.1-8b"], max_num_seqs=16), L40S)
    assert (sizing.tensor_parallel, sizing.pipeline_parallel) == (1, 1)
    assert sizing.required_kv_gib == 16.0
    assert sizing.kv_cache_gib == pytest.approx(41.2 - 14.96, abs=0.01)
    # 26.24 GiB / (8192 x 128 KiB = 1 GiB per sequence) -> 26 full-length sequences
    assert sizing.max_sequences_at_max_len == 26


def test_70b_needs_tensor_parallel_8_on_h100_and_4_with_fp8_kv():
    # bf16 KV: 64 x 8192 x 327680 B = 160 GiB; TP4: 4 x 70 - 131.5 = 148.5 < 160 -> TP8: 560 - 131.5 = 428.5
    sizing = size(SizingRequest(MODELS["llama-3.1-70b"]), H100)
    assert (sizing.tensor_parallel, sizing.kv_cache_gib, sizing.required_kv_gib) == (8, 428.5, 160.0)
    # fp8 KV halves the need to 80 GiB: TP4 (148.5) is enough
    assert size(SizingRequest(MODELS["llama-3.1-70b"], kv_cache_dtype="fp8"), H100).tensor_parallel == 4


def test_tensor_parallel_divides_attention_heads():
    # Qwen2.5 7B has 28 heads: TP 8 is not allowed, so a too-large request stops at TP 4 or fails.
    request = SizingRequest(MODELS["qwen2.5-7b"], max_model_len=32768, max_num_seqs=256)
    with pytest.raises(DoesNotFit):
        size(request, GpuSlot("L4", 24, gpus_per_node=8, max_nodes=1, fp8=True))


def test_pipeline_parallel_across_nodes_when_one_node_is_not_enough():
    # 64 x 8192 tokens = 64 GiB of KV: one L40S has 26.2 GiB after weights, two have 2 x 41.2 - 14.96 = 67.44
    sizing = size(SizingRequest(MODELS["llama-3.1-8b"], max_num_seqs=64), L40S)
    assert (sizing.tensor_parallel, sizing.pipeline_parallel, sizing.gpus_per_replica) == (1, 2, 2)
    assert sizing.kv_cache_gib == pytest.approx(67.44, abs=0.01)


def test_mig_slice_serves_a_small_model_without_splitting():
    # 3g.40gb: 40 x 0.9 - 2 = 34 GiB usable; 14.96 + 16 = 30.96 fits
    sizing = size(SizingRequest(MODELS["llama-3.1-8b"], max_num_seqs=16), MIG_3G)
    assert (sizing.tensor_parallel, sizing.gpus_per_replica) == (1, 1)


def test_a_model_that_fits_nowhere_is_rejected_with_the_numbers():
    with pytest.raises(DoesNotFit) as info:
        size(SizingRequest(MODELS["llama-3.1-70b"]), L40S)
    assert str(info.value) == (
        "llama-3.1-70b (bf16) needs 131.5 GiB of weights + 160.0 GiB of KV cache (64 seqs x 8192 tokens); "
        "L40S offers 41.2 GiB usable per GPU, at most 1 per node x 2 nodes: lower maxNumSeqs/maxModelLen, "
        "quantize, or use a larger GPU"
    )


def test_fp8_kv_cache_only_on_fp8_gpus():
    with pytest.raises(DoesNotFit, match="kvCacheDtype fp8 needs FP8 support; A100-80GB has none"):
        size(SizingRequest(MODELS["llama-3.1-8b"], kv_cache_dtype="fp8"), A100)


def test_context_longer_than_the_model_supports():
    with pytest.raises(DoesNotFit, match="exceeds mistral-7b's context of 32768 tokens"):
        size(SizingRequest(MODELS["mistral-7b"], max_model_len=65536), H100)


def test_estimated_load_time():
    # 131.5 GiB at 2 GiB/s = 65.75 s, x1.5 margin = 98.6 -> 99 s, + 60 s engine start
    assert estimated_load_seconds(131.5, 2.0) == 159
