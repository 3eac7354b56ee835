"""Will a model fit a GPU, and how should it be split? Pure functions, unit-tested by hand.

Memory model (vLLM): each GPU may use `gpu_memory_utilization` of its memory; out of that,
a fixed runtime overhead (CUDA context, activations, CUDA graphs) is reserved; the rest of
the group's memory holds the weights (split across the TP x PP GPUs) and the KV cache.
A deployment fits when the KV cache can hold `max_num_seqs` sequences of `max_model_len`
tokens — the worst case the engine admits — so an OOM is found in review, not at 3 a.m.

A speculative-decoding draft model adds its weights and its own KV cache for the same tokens;
LoRA adapters add one slot of `max_lora_rank` per adapter (vLLM allocates them up front).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from components.catalog.models import ModelArchitecture
from components.config.base import KvDtype, Precision

GIB = 1024**3

BYTES_PER_PARAM: dict[str, float] = {"bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "awq": 0.5, "gptq": 0.5}
TENSOR_PARALLEL_SIZES = (1, 2, 4, 8)


class DoesNotFit(ValueError):
    """No tensor/pipeline split of the model fits the GPUs; the message states the numbers."""


@dataclass(frozen=True)
class GpuSlot:
    """What one model-server GPU offers: its memory (a whole GPU, a MIG slice or a time-slice share)."""

    name: str  # e.g. "H100-80GB" or "H100-80GB MIG 3g.40gb"
    memory_gib: float
    gpus_per_node: int  # max tensor-parallel size within a node
    max_nodes: int  # max pipeline-parallel size (nodes in the pool)
    fp8: bool
    splittable: bool = True  # MIG slices and time-slice shares cannot be tensor-parallel
    # Memory of the device the engine sees: the whole GPU for a time-slice share (default: memory_gib).
    device_memory_gib: float | None = None
    # Share of one GPU (its cost, its memory bandwidth): a MIG profile's memory slices of the GPU's 8, a time-slice
    # share's 1/n. Not memory_gib over the GPU's: a MIG slice reports less than its share of the device's memory.
    gpu_share: float = 1.0

    @property
    def time_shared(self) -> bool:
        """A time-slice share: other engines use the same device, with no memory isolation."""
        return self.device_memory_gib is not None and self.memory_gib < self.device_memory_gib

    @property
    def engine_memory_fraction(self) -> float:
        """Share of the engine's device that is this slot's: vLLM's utilization is a fraction of the device."""
        return self.memory_gib / (self.device_memory_gib or self.memory_gib)


@dataclass(frozen=True)
class SizingRequest:
    model: ModelArchitecture
    precision: Precision = "bf16"
    kv_cache_dtype: KvDtype = "auto"
    max_model_len: int = 8192
    max_num_seqs: int = 64
    gpu_memory_utilization: float = 0.90
    overhead_gib: float = 2.0
    draft: ModelArchitecture | None = None  # speculative decoding with a draft model
    lora_adapters: int = 0
    max_lora_rank: int = 16


@dataclass(frozen=True)
class Sizing:
    tensor_parallel: int
    pipeline_parallel: int
    weights_gib: float
    kv_bytes_per_token: int
    kv_cache_gib: float  # KV capacity of one replica (all its GPUs)
    required_kv_gib: float  # max_num_seqs x max_model_len
    max_sequences_at_max_len: int
    gpus_per_replica: int


# Bytes per parameter of what quantization leaves alone: vLLM keeps the input embedding and the output head in
# 16 bits (VLLM_QUANTIZATION_KEEPS_EMBEDDINGS, components/catalog/upstream.py), 1.5 GiB more than 4 bits for
# Llama 3.1 8B.
UNQUANTIZED_BYTES = 2


def weight_bytes(model: ModelArchitecture, precision: Precision) -> float:
    """The model's weights in `precision`: a declared checkpoint's size when it is in that format, else from the
    parameter count; quantized, the embedding and output head still count 16 bits."""
    if model.weights_bytes is not None and model.weights_format == precision:
        return model.weights_bytes
    per_param = BYTES_PER_PARAM[precision]
    if per_param >= UNQUANTIZED_BYTES:
        return model.params * per_param
    kept = model.embedding_params
    return (model.params - kept) * per_param + kept * UNQUANTIZED_BYTES


def lora_bytes(model: ModelArchitecture, rank: int, adapters: int) -> int:
    """16-bit A and B matrices of `rank` on the 7 projections of every layer (q, k, v, o, gate, up, down).

    Each projection is approximated as hidden x rank on both sides: an upper bound for attention,
    close for the MLP's A side; adapters are tens of MiB, so the approximation never decides a fit.
    """
    return adapters * 2 * model.layers * 7 * rank * model.hidden_size * 2


def replica_weight_bytes(request: SizingRequest) -> float:
    """Everything resident besides the KV cache: the model, its draft (same precision), the LoRA slots."""
    total = weight_bytes(request.model, request.precision)
    if request.draft is not None:
        total += weight_bytes(request.draft, request.precision)
    return total + lora_bytes(request.model, request.max_lora_rank, request.lora_adapters)


def replica_kv_bytes_per_token(request: SizingRequest, tensor_parallel: int = 1) -> int:
    """The model's KV per token, plus the draft's: the draft keeps a KV cache for the same tokens."""
    per_token = kv_bytes_per_token(request.model, request.kv_cache_dtype, tensor_parallel)
    if request.draft is not None:
        per_token += kv_bytes_per_token(request.draft, request.kv_cache_dtype, tensor_parallel)
    return per_token


def kv_bytes_per_token(model: ModelArchitecture, kv_dtype: KvDtype, tensor_parallel: int = 1) -> int:
    """2 (K and V) x layers x KV heads x head dim x bytes per element, over the replica's GPUs.

    `auto` keeps the activation dtype (16-bit, also for quantized weights); fp8 halves it. With more GPUs
    than KV heads, vLLM gives each GPU one head's copy (max(1, KV heads // TP) per GPU,
    vllm-project/vllm@v0.33.0:vllm/config/model.py L1663-1683), so the replica holds TP heads.
    """
    element = 1 if kv_dtype == "fp8" else 2
    return 2 * model.layers * max(model.kv_heads, tensor_parallel) * model.head_dim * element


def tensor_parallel_splits(model: ModelArchitecture, tensor_parallel: int) -> bool:
    """vLLM splits attention heads evenly (vllm/config/model.py L1559-1563) and KV heads evenly or replicated
    evenly (`total_num_kv_heads % tp_size == 0`, else `tp_size % total_num_kv_heads == 0`: qwen2.py L140-148,
    llama.py L147-155, the same in mixtral.py at vllm-project/vllm@v0.33.0)."""
    heads, kv_heads = model.attention_heads, model.kv_heads
    return heads % tensor_parallel == 0 and (kv_heads % tensor_parallel == 0 or tensor_parallel % kv_heads == 0)


def usable_gib_per_gpu(slot: GpuSlot, request: SizingRequest) -> float:
    return slot.memory_gib * request.gpu_memory_utilization - request.overhead_gib


def _evaluate(request: SizingRequest, slot: GpuSlot, tp: int, pp: int) -> Sizing:
    gpus = tp * pp
    weights = replica_weight_bytes(request) / GIB
    per_token = replica_kv_bytes_per_token(request, tp)
    kv_capacity = gpus * usable_gib_per_gpu(slot, request) - weights
    required = per_token * request.max_model_len * request.max_num_seqs / GIB
    per_sequence = per_token * request.max_model_len / GIB
    return Sizing(
        tensor_parallel=tp,
        pipeline_parallel=pp,
        weights_gib=round(weights, 2),
        kv_bytes_per_token=per_token,
        kv_cache_gib=round(kv_capacity, 2),
        required_kv_gib=round(required, 2),
        max_sequences_at_max_len=max(0, math.floor(kv_capacity / per_sequence)) if per_sequence else 0,
        gpus_per_replica=gpus,
    )


def size(request: SizingRequest, slot: GpuSlot) -> Sizing:
    """Smallest TP (splitting the heads as vLLM does, within one node) that fits; else PP across nodes."""
    model = request.model
    if request.max_model_len > model.max_context:
        raise DoesNotFit(
            f"maxModelLen {request.max_model_len} exceeds {model.preset}'s context of {model.max_context} tokens"
        )
    if request.kv_cache_dtype == "fp8" and not slot.fp8:
        raise DoesNotFit(f"kvCacheDtype fp8 needs FP8 support; {slot.name} has none (use auto)")
    tp_options = [
        tp
        for tp in TENSOR_PARALLEL_SIZES
        if tp <= slot.gpus_per_node and tensor_parallel_splits(model, tp) and (slot.splittable or tp == 1)
    ]
    for tp in tp_options:
        sizing = _evaluate(request, slot, tp, 1)
        if sizing.kv_cache_gib >= sizing.required_kv_gib:
            return sizing
    if slot.splittable and tp_options:
        tp = tp_options[-1]
        for pp in range(2, slot.max_nodes + 1):
            if model.layers % pp:
                continue
            sizing = _evaluate(request, slot, tp, pp)
            if sizing.kv_cache_gib >= sizing.required_kv_gib:
                return sizing
    best = _evaluate(request, slot, tp_options[-1] if tp_options else 1, 1)
    raise DoesNotFit(
        f"{model.preset} ({request.precision}) needs {best.weights_gib:.1f} GiB of weights + "
        f"{best.required_kv_gib:.1f} GiB of KV cache ({request.max_num_seqs} seqs x {request.max_model_len} tokens); "
        f"{slot.name} offers {usable_gib_per_gpu(slot, request):.1f} GiB usable per GPU, at most "
        f"{slot.gpus_per_node} per node x {slot.max_nodes} nodes: lower maxNumSeqs/maxModelLen, quantize, "
        "or use a larger GPU"
    )


def engine_memory_utilization(slot: GpuSlot, request: SizingRequest) -> float:
    """The engine's `--gpu-memory-utilization`: the slot's budget as a fraction of the device it sees.

    On a time-slice share of 1/N the engine still sees the whole GPU, so its fraction is 1/N of
    the configured one and N shares together stay within it.
    """
    return round(request.gpu_memory_utilization * slot.engine_memory_fraction, 4)


def kv_cache_memory_bytes(slot: GpuSlot, request: SizingRequest, sizing: Sizing) -> int:
    """Each GPU worker's KV cache as the sizing fits it, floored to MiB: vLLM's `--kv-cache-memory-bytes`.

    Given on a time-slice share, where vLLM's own profiling would count a neighbour engine's loads as its own
    (VLLM_KV_CACHE_BYTES_SKIP_PROFILING, components/catalog/upstream.py); weights, overhead and this cache are
    what the sizing fitted in the share's budget. From the unrounded figures: `Sizing.kv_cache_gib` is rounded.
    """
    weights_per_gpu = replica_weight_bytes(request) / GIB / sizing.gpus_per_replica
    return math.floor((usable_gib_per_gpu(slot, request) - weights_per_gpu) * 1024) * 2**20


# Start-up of a model server, besides reading its weights: the process, CUDA context, tokenizer and the
# engine's KV-cache profiling (the figure this estimate always used) ...
ENGINE_START_SECONDS = 60
# ... and compilation. vLLM's first start runs torch.compile on the model and captures CUDA graphs for its
# batch sizes, minutes for a large model; the result is cached under VLLM_CACHE_ROOT and reused while the
# cache directory lives (vllm-project/vllm@v0.27.1:docs/design/torch_compile.md, "Compilation Cache").
# An estimate, not a measurement. TensorRT-LLM engines are compiled when the model repository is built,
# so Triton compiles nothing at start.
COMPILE_SECONDS = {"vllm": 180, "triton": 0}
# The floor of a GPU model server's startup probe: a probe too tight is a restart loop that never
# finishes compiling; a generous one only delays noticing a server that hangs.
MIN_GPU_STARTUP_BUDGET_SECONDS = 300
STARTUP_MARGIN = 2


def estimated_startup_seconds(
    *, weights_gib: float, load_gib_per_second: float, runtime: str, margin: float = 1.5
) -> int:
    """Time to ready on a cold start: the weights at the configured bandwidth with margin, engine start, compile."""
    return math.ceil(weights_gib / load_gib_per_second * margin) + ENGINE_START_SECONDS + COMPILE_SECONDS[runtime]


def startup_budget_seconds(estimate_seconds: int) -> int:
    """What the startup probe allows: twice the estimate (a cold cache reads from the bucket), at least 5 minutes."""
    return max(STARTUP_MARGIN * estimate_seconds, MIN_GPU_STARTUP_BUDGET_SECONDS)
