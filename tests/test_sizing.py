"""Sizing against hand-computed figures (GiB = 2^30 bytes)."""

from __future__ import annotations

import pytest

from components.catalog.models import MODELS
from components.config.region import AwsGpuPoolSpec, GcpGpuPoolSpec, GpuPoolSpec, MigSpec, TimeSlicingSpec
from components.domain.sizing import (
    DoesNotFit,
    GpuSlot,
    SizingRequest,
    engine_memory_utilization,
    estimated_startup_seconds,
    kv_bytes_per_token,
    kv_cache_memory_bytes,
    lora_bytes,
    replica_kv_bytes_per_token,
    replica_weight_bytes,
    size,
    startup_budget_seconds,
    weight_bytes,
)
from components.domain.slots import gpu_slot, placement_resource, slots_per_node
from platform_catalog.machines import MACHINES

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
    # AWQ 4-bit, but the embedding and the output head (2 x 152,064 x 8,192 = 2.4914e9 parameters) stay 16-bit:
    # (72.7e9 - 2.4914e9) x 0.5 + 2.4914e9 x 2 = 40.087e9 B = 37.33 GiB, not 72.7e9 x 0.5 = 33.85 GiB
    assert weight_bytes(MODELS["qwen2.5-72b"], "awq") / 2**30 == pytest.approx(37.334, abs=1e-3)
    # Llama 3.1 8B in AWQ: 2 x 128,256 x 4,096 = 1.0507e9 of them; 6.9793e9 x 0.5 + 1.0507e9 x 2 = 5.21 GiB;
    # FP8 likewise keeps them 16-bit: 6.9793e9 + 2.1013e9 = 8.46 GiB
    assert weight_bytes(MODELS["llama-3.1-8b"], "awq") / 2**30 == pytest.approx(5.207, abs=1e-3)
    assert weight_bytes(MODELS["llama-3.1-8b"], "fp8") / 2**30 == pytest.approx(8.457, abs=1e-3)


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


def test_estimated_startup_time_counts_compilation():
    # 131.5 GiB at 2 GiB/s = 65.75 s, x1.5 margin = 98.6 -> 99 s, + 60 s engine start, + 180 s vLLM compile
    assert estimated_startup_seconds(weights_gib=131.5, load_gib_per_second=2.0, runtime="vllm") == 339
    # TensorRT-LLM engines are compiled ahead of time
    assert estimated_startup_seconds(weights_gib=131.5, load_gib_per_second=2.0, runtime="triton") == 159


def test_startup_budget_is_twice_the_estimate_and_never_below_five_minutes():
    assert startup_budget_seconds(339) == 678
    assert startup_budget_seconds(100) == 300


# --- more models and GPUs, by hand ----------------------------------------------------------------------

H200 = GpuSlot("H200-141GB", 141, gpus_per_node=8, max_nodes=2, fp8=True)
L4_NODE = GpuSlot("L4", 24, gpus_per_node=2, max_nodes=1, fp8=True)


def test_qwen_72b_with_fp8_kv_needs_tensor_parallel_2_on_h200():
    # weights 72.7e9 x 2 B = 135.41 GiB; usable 141 x 0.9 - 2 = 124.9 GiB per GPU
    # fp8 KV: 2 x 80 x 8 x 128 x 1 = 163840 B/token; 64 x 8192 tokens = 80 GiB
    # TP1: 124.9 - 135.41 < 0; TP2: 249.8 - 135.41 = 114.39 >= 80
    sizing = size(SizingRequest(MODELS["qwen2.5-72b"], kv_cache_dtype="fp8"), H200)
    assert (sizing.tensor_parallel, sizing.pipeline_parallel) == (2, 1)
    assert sizing.weights_gib == pytest.approx(135.41, abs=0.01)
    assert sizing.kv_cache_gib == pytest.approx(114.39, abs=0.01)
    assert sizing.required_kv_gib == 80.0
    # 114.39 GiB / (8192 x 160 KiB = 1.25 GiB per sequence) -> 91 full-length sequences
    assert sizing.max_sequences_at_max_len == 91


def test_mixtral_keeps_every_expert_resident_and_needs_tensor_parallel_4_on_h100():
    # 46.7e9 params (8 experts, all resident) x 2 B = 86.99 GiB; KV 2 x 32 x 8 x 128 x 2 = 131072 B/token -> 64 GiB
    # TP2: 2 x 70 - 86.99 = 53.01 < 64; TP4: 280 - 86.99 = 193.01
    sizing = size(SizingRequest(MODELS["mixtral-8x7b"]), H100)
    assert (sizing.tensor_parallel, sizing.weights_gib, sizing.required_kv_gib) == (4, 86.99, 64.0)
    assert sizing.kv_cache_gib == pytest.approx(193.01, abs=0.01)


def test_a_model_larger_than_a_whole_l4_node_is_rejected():
    # Qwen2.5 32B: 32.8e9 x 2 B = 61.1 GiB of weights, 2 x 64 x 8 x 128 x 2 = 256 KiB of KV per token
    # (128 GiB for 64 x 8k); two L4s offer 2 x (24 x 0.9 - 2) = 39.2 GiB
    with pytest.raises(DoesNotFit) as info:
        size(SizingRequest(MODELS["qwen2.5-32b"]), L4_NODE)
    assert str(info.value) == (
        "qwen2.5-32b (bf16) needs 61.1 GiB of weights + 128.0 GiB of KV cache (64 seqs x 8192 tokens); "
        "L4 offers 19.6 GiB usable per GPU, at most 2 per node x 1 nodes: lower maxNumSeqs/maxModelLen, "
        "quantize, or use a larger GPU"
    )


def test_a_draft_model_adds_its_weights_and_its_kv_cache():
    # weights 131.5 + 14.96 = 146.46 GiB; KV per token 163840 + 65536 (both fp8) = 229376 B -> 112 GiB for 64 x 8k
    # TP4: 4 x 70 - 146.46 = 133.54 >= 112
    request = SizingRequest(MODELS["llama-3.1-70b"], kv_cache_dtype="fp8", draft=MODELS["llama-3.1-8b"])
    assert replica_kv_bytes_per_token(request) == 229376
    sizing = size(request, H100)
    assert (sizing.tensor_parallel, sizing.weights_gib, sizing.required_kv_gib) == (4, 146.46, 112.0)


def test_lora_slots_are_counted_with_the_weights():
    # 2 adapters x (A + B) x 32 layers x 7 projections x rank 16 x 4096 x 2 B = 117440512 B
    assert lora_bytes(MODELS["llama-3.1-8b"], rank=16, adapters=2) == 117_440_512
    request = SizingRequest(MODELS["llama-3.1-8b"], lora_adapters=2, max_lora_rank=16)
    assert replica_weight_bytes(request) == weight_bytes(MODELS["llama-3.1-8b"], "bf16") + 117_440_512


def test_a_time_slice_share_sizes_its_memory_and_scales_the_engine_utilization():
    # A quarter of an L40S: 12 GiB, so 12 x 0.9 - 2 = 8.8 GiB usable; the engine sees the whole 48 GiB
    # GPU, so its --gpu-memory-utilization is 0.9 x 12 / 48 = 0.225. AWQ weights: 5.21 GiB (above).
    share = GpuSlot("L40S 1/4", 12, gpus_per_node=1, max_nodes=1, fp8=True, splittable=False, device_memory_gib=48)
    request = SizingRequest(MODELS["llama-3.1-8b"], precision="awq", kv_cache_dtype="fp8", max_model_len=4096)
    assert engine_memory_utilization(share, request) == 0.225
    with pytest.raises(DoesNotFit):  # 64 x 4096 x 64 KiB = 16 GiB of KV
        size(request, share)
    with pytest.raises(DoesNotFit):  # 16 x 4096 x 64 KiB = 4 GiB > 8.8 - 5.21
        size(SizingRequest(**{**request.__dict__, "max_num_seqs": 16}), share)
    twelve = SizingRequest(**{**request.__dict__, "max_num_seqs": 12})
    sizing = size(twelve, share)
    assert (sizing.weights_gib, sizing.kv_cache_gib, sizing.required_kv_gib) == (5.21, 3.59, 3.0)
    # 8.8 - 5.2070 = 3.5930 GiB = 3,679.2 MiB, floored: the engine's KV cache (not the rounded 3.59 GiB's 3,676)
    assert kv_cache_memory_bytes(share, twelve, sizing) == 3679 * 2**20
    assert engine_memory_utilization(MIG_3G, request) == 0.9  # a MIG slice is the engine's whole device


# --- the GPU slot a pool offers -------------------------------------------------------------------------


def _pool(machine_type: str, **fields) -> GpuPoolSpec:
    model = {"aws": AwsGpuPoolSpec, "gcp": GcpGpuPoolSpec}[MACHINES[machine_type].cloud]
    return model(name="p", machine_type=machine_type, max_size=3, **fields)


def test_whole_gpus_split_within_a_node_and_across_nodes_only_on_efa_pools():
    # What each device reports (nvidia-smi memory.total), not the datasheet's GB: H100 80GB HBM3 81559 MiB,
    # L40S 46068 MiB.
    efa = gpu_slot(_pool("p5.48xlarge", efa=True, zones=["us-east-1a"]), "nvidia.com/gpu")
    assert efa == GpuSlot("H100-80GB", 81559 / 1024, gpus_per_node=8, max_nodes=3, fp8=True)
    plain = gpu_slot(_pool("g6e.12xlarge"), "nvidia.com/gpu")
    assert (plain.name, plain.memory_gib, plain.gpus_per_node, plain.max_nodes) == ("L40S", 46068 / 1024, 4, 1)
    assert round(efa.memory_gib, 2) == 79.65 and round(plain.memory_gib, 2) == 44.99
    # GKE GPUDirect pools keep replicas in one node: the pods would need GPUDirect NICs the platform does not render
    assert gpu_slot(_pool("a3-ultragpu-8g", gpu_direct=True), "nvidia.com/gpu").max_nodes == 1


def test_a_mig_slice_is_its_profile_memory_and_cannot_be_split():
    pool = _pool("p4de.24xlarge", mig=MigSpec(layout={"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}))
    slot = gpu_slot(pool, "nvidia.com/mig-2g.20gb")
    # nvidia-smi mig -lgip on an A100 80GB: 2g.20gb has 19.50 GiB.
    assert (slot.name, slot.memory_gib, slot.splittable, slot.fp8) == ("A100-80GB MIG 2g.20gb", 19.5, False, False)
    assert slot.engine_memory_fraction == 1
    # single strategy (every instance advertised as nvidia.com/gpu) and H100's FP8
    single = _pool("p5.48xlarge", mig=MigSpec(strategy="single", profile="all-3g.40gb"))
    assert gpu_slot(single, "nvidia.com/gpu") == GpuSlot(
        "H100-80GB MIG 3g.40gb", 39.5, gpus_per_node=1, max_nodes=1, fp8=True, splittable=False, gpu_share=0.5
    )
    # its share of the GPU (cost, bandwidth) is its memory slices, 2 of 8, not 19.5 of the 80 GiB reported
    assert slot.gpu_share == 0.25
    assert slots_per_node(pool) == 8 * 4  # 8 GPUs x (1 + 1 + 2) instances


def test_a_time_slice_share_is_a_fraction_of_the_gpu():
    slot = gpu_slot(_pool("g6e.xlarge", time_slicing=TimeSlicingSpec(replicas=4)), "nvidia.com/gpu")
    assert (slot.memory_gib, slot.device_memory_gib, slot.splittable, slot.engine_memory_fraction, slot.gpu_share) == (
        46068 / 1024 / 4,  # a quarter of the 44.99 GiB an L40S reports
        46068 / 1024,
        False,
        0.25,
        0.25,
    )


def test_placement_resource_is_the_choice_or_the_pools_only_one():
    mixed = _pool("p4de.24xlarge", mig=MigSpec(layout={"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}))
    assert placement_resource(mixed, None) is None
    assert placement_resource(mixed, "nvidia.com/mig-3g.40gb") == "nvidia.com/mig-3g.40gb"
    assert placement_resource(mixed, "nvidia.com/gpu") is None
    assert placement_resource(_pool("g6e.xlarge"), None) == "nvidia.com/gpu"
