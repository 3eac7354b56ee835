"""Prefill/decode disaggregation rules the program's config checks and the policy pack both apply.

- The KV hand-off of one prompt may take at most `MAX_TRANSFER_SHARE_OF_TTFT` of the model's first-token objective:
  `servingMode: auto` disaggregates only under it, and a `disaggregated` placement over it is refused.
- vLLM's NixlConnector hands a cache only between engines of one attention backend (components/catalog/upstream.py
  NIXL_HANDSHAKE_COMPAT); `vllm_attention_backend` is the one vLLM picks when not told
  (VLLM_DEFAULT_ATTENTION_BACKEND): FlashInfer on Blackwell; FlashAttention elsewhere, but FlashInfer for an FP8
  cache off Hopper (FlashAttention reads FP8 KV only as FA3 on SM 9.0). For models without MLA, as the catalog's.
"""

from __future__ import annotations

from platform_catalog.gpus import COMPUTE_CAPABILITY

MAX_TRANSFER_SHARE_OF_TTFT = 0.1


def vllm_attention_backend(gpu: str, kv_cache_dtype: str) -> str:
    """vLLM's default attention backend on `gpu` (a GPUS name) for a cache of `kv_cache_dtype` (auto or fp8)."""
    major, _ = COMPUTE_CAPABILITY[gpu]
    return "FLASHINFER" if major == 10 or (kv_cache_dtype == "fp8" and major != 9) else "FLASH_ATTN"
