"""Engine command lines derived per model x GPU: the sizing's parallelism and limits, the seed's
optimisations (prefix caching, chunked prefill, FP8 KV cache where the GPU has FP8), weights in the
stored format, speculative decoding, LoRA adapters, and the model's validated overrides.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from components.catalog.engines import STREAMER_CONCURRENCY
from components.config.base import Precision
from components.config.workloads import ModelSpec
from components.domain.sizing import GpuSlot, Sizing, SizingRequest, engine_memory_utilization, kv_cache_memory_bytes

# Streamed loads, never mmap over the cache's FUSE mount nor a bucket (components/addons/model_cache.py).
VLLM_LOAD_ARGS = ("--load-format", "runai_streamer")
# What vLLM loads each stored weight format with (vllm-project/vllm@v0.27.1:docs/features/quantization):
# 16-bit by dtype; FP8 checkpoints (or 16-bit ones quantized at load) by fp8; INT8 W8A8 checkpoints
# from llm-compressor by compressed-tensors; 4-bit AWQ/GPTQ with the Marlin kernels (compute
# capability >= 8.0, which every GPU of the catalog has).
VLLM_WEIGHTS: dict[Precision, tuple[str, str]] = {
    "bf16": ("--dtype", "bfloat16"),
    "fp16": ("--dtype", "float16"),
    "fp8": ("--quantization", "fp8"),
    "int8": ("--quantization", "compressed-tensors"),
    "awq": ("--quantization", "awq_marlin"),
    "gptq": ("--quantization", "gptq_marlin"),
}


def streamer_config(sizing: Sizing, memory_limit: int) -> dict[str, Any]:
    """The Run:ai streamer's `--model-loader-extra-config`: `distributed` when a replica has several GPUs, so each
    node reads the checkpoint once instead of once per rank (VLLM_STREAMER_DISTRIBUTED in
    components/catalog/upstream.py; TP 4 of the 70B would read 4 x 131.5 GiB, which the start-up estimate does not
    count)."""
    config: dict[str, Any] = {"concurrency": STREAMER_CONCURRENCY, "memory_limit": memory_limit}
    if sizing.gpus_per_replica > 1:
        config["distributed"] = True
    return config


def override_args(engine_args: Mapping[str, str | int | float | bool]) -> list[str]:
    """`engineArgs` as flags: `--name=value`, or `--name` for true (the checks reject false)."""
    return [f"--{flag}" if value is True else f"--{flag}={value}" for flag, value in engine_args.items()]


def triton_args(model: ModelSpec) -> list[str]:
    """Triton's OpenAI frontend flags the InferenceService adds: the answer length of a request without max_tokens
    (the frontend's default, 16, cuts answers short), then the model's overrides."""
    return [f"--default-max-tokens={model.output_budget}", *override_args(model.engine_args)]


def speculative_config(model: ModelSpec, model_dir: str) -> dict[str, Any] | None:
    spec = model.speculative_decoding
    if spec is None:
        return None
    if spec.method == "ngram":
        return {
            "method": "ngram",
            "num_speculative_tokens": spec.num_speculative_tokens,
            "prompt_lookup_max": spec.prompt_lookup_max,
        }
    return {"model": f"{model_dir}/draft", "num_speculative_tokens": spec.num_speculative_tokens}


def vllm_args(
    model: ModelSpec,
    slot: GpuSlot,
    request: SizingRequest,
    sizing: Sizing,
    model_dir: str,
    streamer_memory_bytes: int,
    drain_seconds: int,
) -> list[str]:
    """The vLLM OpenAI server's flags for `model` on `slot`; `model_dir` is /mnt/models or the bucket URI. Stopped,
    it finishes the requests it holds for up to `drain_seconds` (its default, 0, aborts them:
    upstream.VLLM_ABORTS_IN_FLIGHT_REQUESTS_AT_SIGTERM); KServe's LLMInferenceService passes the flag itself."""
    return [
        f"--served-model-name={model.name}",
        f"--model={model_dir}",
        f"--shutdown-timeout={drain_seconds}",
        *vllm_engine_args(model, slot, request, sizing, model_dir, streamer_memory_bytes),
        *override_args(model.engine_args),
    ]


def vllm_engine_args(
    model: ModelSpec,
    slot: GpuSlot,
    request: SizingRequest,
    sizing: Sizing,
    model_dir: str,
    streamer_memory_bytes: int,
) -> list[str]:
    """The derived flags but the served name and the weights' location, which KServe's LLMInferenceService
    templates set; the model's overrides go last (`override_args`)."""
    args = [
        "=".join(VLLM_LOAD_ARGS),
        "--model-loader-extra-config=" + json.dumps(streamer_config(sizing, streamer_memory_bytes)),
        f"--tensor-parallel-size={sizing.tensor_parallel}",
        f"--pipeline-parallel-size={sizing.pipeline_parallel}",
        f"--max-model-len={request.max_model_len}",
        f"--max-num-seqs={request.max_num_seqs}",
        f"--gpu-memory-utilization={engine_memory_utilization(slot, request)}",
        "--enable-prefix-caching",
        "--enable-chunked-prefill",
        "=".join(VLLM_WEIGHTS[model.precision]),
    ]
    if slot.time_shared:
        # Two engines starting together on one GPU would size their KV caches from each other's loads.
        args.append(f"--kv-cache-memory-bytes={kv_cache_memory_bytes(slot, request, sizing)}")
    if model.kv_cache_dtype == "fp8":
        args.append("--kv-cache-dtype=fp8")
    if sizing.pipeline_parallel > 1:
        args.append("--distributed-executor-backend=ray")
    speculative = speculative_config(model, model_dir)
    if speculative is not None:
        args.append("--speculative-config=" + json.dumps(speculative))
    if model.served_adapters:
        args += [
            "--enable-lora",
            f"--max-loras={len(model.served_adapters)}",
            f"--max-lora-rank={model.max_lora_rank}",
            "--lora-modules",
            *(f"{adapter.name}={model_dir}/{adapter.directory}" for adapter in model.served_adapters),
        ]
    return args
