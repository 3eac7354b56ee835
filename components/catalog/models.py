"""Architecture facts of models, from the fields of each model's Hugging Face `config.json`.

The presets we ship are below, each an excerpt of its `config.json` on the Hub (source noted) and its parameter
count from the model card. An environment declares its own the same way (`modelCatalog`, `models/*.yaml`:
components/config/model_catalog.py); both become a `ModelArchitecture` through `from_hf_config`, which reads the
keys as the pinned vLLM does. These drive weight and KV-cache sizing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class ModelArchitecture:
    preset: str
    hf_repo: str | None
    params_billion: float
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    max_context: int
    experts: int = 0  # MoE: total experts (all resident in memory)
    # config.json `vocab_size`: a draft model proposes token ids of its target's vocabulary, so they must match.
    vocab_size: int = field(kw_only=True)
    # config.json `tie_word_embeddings`: the output head shares the input embedding's matrix (false for every
    # preset here: each has its own lm_head of vocab_size x hidden_size).
    tied_embeddings: bool = field(default=False, kw_only=True)
    # MoE: experts each token is routed to (config.json `num_experts_per_tok`); 0 for a dense model.
    active_experts: int = field(default=0, kw_only=True)
    # A declared checkpoint: its format (a model serving it runs in that precision) and its size in bytes
    # (`metadata.total_size` of model.safetensors.index.json), which then sizes the weights. None for the presets:
    # a team stores them in the precision it chooses.
    weights_format: str | None = field(default=None, kw_only=True)
    weights_bytes: int | None = field(default=None, kw_only=True)

    @property
    def embedding_params(self) -> int:
        """The input embedding and the output head, which quantized checkpoints keep in 16 bits."""
        return self.vocab_size * self.hidden_size * (1 if self.tied_embeddings else 2)

    @property
    def params(self) -> float:
        return self.params_billion * 1e9


# Architectures (config.json `architectures[0]`) whose vLLM model computes the attention head size as
# hidden_size // num_attention_heads whatever config.json's `head_dim` says: vllm-project/vllm@v0.33.0
# vllm/model_executor/models/qwen2.py L150 and qwen2_moe.py L225 (`self.head_dim = hidden_size //
# self.total_num_heads`). Others read `head_dim` first and fall back to that quotient: llama.py L158-159 (Llama,
# and Mistral's MistralAttention(LlamaAttention), mistral.py L77), mixtral.py L173-175, qwen3_moe.py L277.
HEAD_DIM_FROM_HIDDEN_SIZE = frozenset({"Qwen2ForCausalLM", "Qwen2MoeForCausalLM"})

# config.json's names for the number of experts, by family: Mixtral's `num_local_experts` (mixtral.py L253),
# Qwen-MoE's `num_experts` (qwen2_moe.py, qwen3_moe.py L147); `num_experts_per_tok` is both families' top-k
# (mixtral.py L254, qwen3_moe.py L208).
EXPERT_COUNT_KEYS = ("num_local_experts", "num_experts")


def architecture_name(config: Mapping[str, Any]) -> str | None:
    """The model class vLLM instantiates: the first of config.json's `architectures`."""
    names = config.get("architectures") or []
    return names[0] if names else None


def head_dim(config: Mapping[str, Any]) -> int:
    """The attention head size the pinned vLLM uses for this config (HEAD_DIM_FROM_HIDDEN_SIZE)."""
    derived: int = config["hidden_size"] // config["num_attention_heads"]
    if architecture_name(config) in HEAD_DIM_FROM_HIDDEN_SIZE:
        return derived
    stated: int = config.get("head_dim") or derived
    return stated


def expert_count(config: Mapping[str, Any]) -> int:
    count: int = next((config[key] for key in EXPERT_COUNT_KEYS if config.get(key)), 0)
    return count


def from_hf_config(
    preset: str,
    config: Mapping[str, Any],
    *,
    params_billion: float,
    hf_repo: str | None = None,
    weights_format: str | None = None,
    weights_bytes: int | None = None,
) -> ModelArchitecture:
    """A model's architecture from its config.json keys; absent optional keys take the defaults vLLM applies
    (`num_key_value_heads`: one per attention head, llama.py L287; `head_dim`: head_dim() above)."""
    experts = expert_count(config)
    return ModelArchitecture(
        preset,
        hf_repo,
        params_billion,
        layers=config["num_hidden_layers"],
        hidden_size=config["hidden_size"],
        attention_heads=config["num_attention_heads"],
        kv_heads=config.get("num_key_value_heads") or config["num_attention_heads"],
        head_dim=head_dim(config),
        max_context=config["max_position_embeddings"],
        experts=experts,
        vocab_size=config["vocab_size"],
        tied_embeddings=bool(config.get("tie_word_embeddings", False)),
        active_experts=(config.get("num_experts_per_tok") or 0) if experts else 0,
        weights_format=weights_format,
        weights_bytes=weights_bytes,
    )


@dataclass(frozen=True)
class PresetSource:
    """A shipped preset as a team declares a model of its own: Hub repository, parameter count, config.json keys."""

    preset: str
    hf_repo: str
    params_billion: float
    hf_config: Mapping[str, Any]


def _config(
    layers: int, hidden: int, heads: int, kv_heads: int, context: int, vocab: int, **more: Any
) -> dict[str, Any]:
    """The config.json keys the platform reads, as each preset's config.json publishes them: all seven are bf16
    with untied embeddings, and their `head_dim` (absent, or stated) is hidden_size / num_attention_heads = 128."""
    return {
        "num_hidden_layers": layers,
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "max_position_embeddings": context,
        "vocab_size": vocab,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        **more,
    }


_LLAMA, _QWEN2 = ["LlamaForCausalLM"], ["Qwen2ForCausalLM"]
PRESETS: tuple[PresetSource, ...] = (
    # huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/config.json
    PresetSource(
        "llama-3.1-8b",
        "meta-llama/Llama-3.1-8B-Instruct",
        8.03,
        _config(32, 4096, 32, 8, 131072, 128256, architectures=_LLAMA),
    ),
    # huggingface.co/meta-llama/Llama-3.1-70B-Instruct/blob/main/config.json
    PresetSource(
        "llama-3.1-70b",
        "meta-llama/Llama-3.1-70B-Instruct",
        70.6,
        _config(80, 8192, 64, 8, 131072, 128256, architectures=_LLAMA),
    ),
    # huggingface.co/Qwen/Qwen2.5-7B-Instruct/blob/main/config.json
    PresetSource(
        "qwen2.5-7b", "Qwen/Qwen2.5-7B-Instruct", 7.62, _config(28, 3584, 28, 4, 32768, 152064, architectures=_QWEN2)
    ),
    # huggingface.co/Qwen/Qwen2.5-32B-Instruct/blob/main/config.json
    PresetSource(
        "qwen2.5-32b", "Qwen/Qwen2.5-32B-Instruct", 32.8, _config(64, 5120, 40, 8, 32768, 152064, architectures=_QWEN2)
    ),
    # huggingface.co/Qwen/Qwen2.5-72B-Instruct/blob/main/config.json
    PresetSource(
        "qwen2.5-72b", "Qwen/Qwen2.5-72B-Instruct", 72.7, _config(80, 8192, 64, 8, 32768, 152064, architectures=_QWEN2)
    ),
    # huggingface.co/mistralai/Mistral-7B-Instruct-v0.3/blob/main/config.json
    PresetSource(
        "mistral-7b",
        "mistralai/Mistral-7B-Instruct-v0.3",
        7.25,
        _config(32, 4096, 32, 8, 32768, 32768, architectures=["MistralForCausalLM"]),
    ),
    # huggingface.co/mistralai/Mixtral-8x7B-Instruct-v0.1/blob/main/config.json (8 experts, 2 active)
    PresetSource(
        "mixtral-8x7b",
        "mistralai/Mixtral-8x7B-Instruct-v0.1",
        46.7,
        _config(
            32,
            4096,
            32,
            8,
            32768,
            32000,
            architectures=["MixtralForCausalLM"],
            num_local_experts=8,
            num_experts_per_tok=2,
        ),
    ),
)

# The shipped presets, read-only: an environment's own models live in its EnvironmentSpec, never here.
MODELS: Mapping[str, ModelArchitecture] = MappingProxyType(
    {
        p.preset: from_hf_config(p.preset, p.hf_config, params_billion=p.params_billion, hf_repo=p.hf_repo)
        for p in PRESETS
    }
)
