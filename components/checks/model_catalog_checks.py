"""Model catalog entries (`modelCatalog`, `models/*.yaml`) that size as the presets do: the rules and their
reasons are in components/config/model_catalog.py."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import get_args

from components.catalog.models import (
    EXPERT_COUNT_KEYS,
    HEAD_DIM_FROM_HIDDEN_SIZE,
    MODELS,
    architecture_name,
)
from components.config.base import Issue, Precision
from components.config.environment import EnvironmentSpec
from components.config.model_catalog import (
    DTYPE_OF_FORMAT,
    FORMAT_OF_QUANT_METHOD,
    SIZE_TOLERANCE,
    DeclaredModel,
    HfConfigSpec,
)
from components.domain.sizing import weight_bytes

_NAME = re.compile(r"^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$")
_NEAR_MISS = 0.85


def check_model_catalog(env: EnvironmentSpec) -> Iterator[Issue]:
    """Each declared model against the rules of the module docstring, at its key path."""
    seen: dict[str, DeclaredModel] = {}
    for model in env.declared_models:
        if model.name in MODELS:
            yield Issue(
                model.path(),
                f"{model.name!r} is a shipped preset; use it as is (models[].preset: {model.name}) or give yours "
                "another name",
            )
        elif model.name in seen:
            yield Issue(
                model.path(), f"{model.name!r} is also declared in {seen[model.name].where}; keep one declaration"
            )
        elif not _NAME.match(model.name):
            yield Issue(
                model.path(),
                f"{model.name!r} is not a valid preset name; use lowercase letters, digits, '.', '-' and '_', "
                "starting and ending with a letter or digit (e.g. llama-3.2-3b)",
            )
        seen.setdefault(model.name, model)
        yield from _check_card(model)


def _check_card(model: DeclaredModel) -> Iterator[Issue]:
    config = model.card.hf_config

    def at(key: str) -> str:
        return model.path("hfConfig", key)

    yield from _near_misses(model)
    heads, hidden = config.num_attention_heads, config.hidden_size
    kv_heads = config.num_key_value_heads or heads
    if heads % kv_heads:
        yield Issue(
            at("num_key_value_heads"),
            f"{heads} attention heads do not split into groups of {kv_heads} KV heads; num_key_value_heads must "
            f"divide num_attention_heads (config.json states both)",
        )
    architecture = architecture_name(config.model_dump(exclude_none=True))
    if config.head_dim is None and hidden % heads:
        yield Issue(
            at("head_dim"),
            f"required: hidden_size {hidden} is not a multiple of num_attention_heads {heads}, so the head size "
            "cannot be derived; copy head_dim from config.json",
        )
    elif (
        config.head_dim is not None and architecture in HEAD_DIM_FROM_HIDDEN_SIZE and config.head_dim * heads != hidden
    ):
        yield Issue(
            at("head_dim"),
            f"{config.head_dim} x {heads} heads is not hidden_size {hidden}, and vLLM sizes {architecture}'s heads "
            f"as hidden_size / num_attention_heads; check hidden_size, num_attention_heads and head_dim against "
            "config.json",
        )
    yield from _check_experts(model)
    if "kv_lora_rank" in (config.model_extra or {}):
        yield Issue(
            at("kv_lora_rank"),
            "multi-head latent attention (DeepSeek) caches a compressed latent the platform's KV sizing does not "
            "model; serve a model with grouped-query attention",
        )
    if config.dtype and config.torch_dtype and config.dtype != config.torch_dtype:
        yield Issue(at("dtype"), f"{config.dtype} contradicts torch_dtype {config.torch_dtype}; keep one of them")
    yield from _check_weights(model)


def _near_misses(model: DeclaredModel) -> Iterator[Issue]:
    """An unread key resembling a key the platform reads that config.json does not state: a misspelling."""
    config = model.card.hf_config
    absent = [key for key in HfConfigSpec.model_fields if getattr(config, key) is None]
    for key in config.model_extra or {}:
        close = difflib.get_close_matches(key, absent, n=1, cutoff=_NEAR_MISS)
        if close:
            yield Issue(
                model.path("hfConfig", key),
                f"not a key the platform reads; did you mean {close[0]!r}? (the other keys of config.json are ignored)",
            )


def _check_experts(model: DeclaredModel) -> Iterator[Issue]:
    config = model.card.hf_config
    stated = [key for key in EXPERT_COUNT_KEYS if getattr(config, key) is not None]
    if len(stated) > 1:
        yield Issue(
            model.path("hfConfig", stated[1]),
            f"the expert count is stated twice ({', '.join(stated)}); keep the one config.json has",
        )
    experts = getattr(config, stated[0]) if stated else None
    active = config.num_experts_per_tok
    if active is None:
        return
    if experts is None:
        yield Issue(
            model.path("hfConfig", "num_experts_per_tok"),
            "experts per token without experts; add num_local_experts (or num_experts) from config.json, or "
            "remove it for a dense model",
        )
    elif active > experts:
        yield Issue(
            model.path("hfConfig", "num_experts_per_tok"),
            f"{active} experts per token, but the model has {experts}; num_experts_per_tok is at most {stated[0]}",
        )


def _check_weights(model: DeclaredModel) -> Iterator[Issue]:
    card, config = model.card, model.card.hf_config
    implied = FORMAT_OF_QUANT_METHOD.get(config.quant_method or "")
    if card.weights is None:
        if config.quant_method and implied is None:
            yield Issue(
                model.path("hfConfig", "quantization_config", "quant_method"),
                f"{config.quant_method!r} checkpoints are not sized from config.json; state weights.format "
                f"(one of {', '.join(get_args(Precision))})",
            )
        return
    fmt = card.weights.format
    if implied is not None and implied != fmt:
        yield Issue(
            model.path("weights", "format"),
            f"config.json's quantization_config says {config.quant_method}; set format {implied}",
        )
    # A 16-bit checkpoint in the other 16-bit type than config.json says (float32 checkpoints load as either).
    elif (
        fmt in DTYPE_OF_FORMAT
        and (dtype := config.published_dtype) in DTYPE_OF_FORMAT.values()
        and dtype != DTYPE_OF_FORMAT[fmt]
    ):
        fitting = next(f for f, d in DTYPE_OF_FORMAT.items() if d == dtype)
        yield Issue(model.path("weights", "format"), f"config.json's dtype is {dtype}; set format {fitting}")
    size = card.weights.total_size
    if size is None:
        return
    expected = weight_bytes(replace(model.architecture, weights_bytes=None), fmt)
    low, high = SIZE_TOLERANCE
    if not low * expected <= size <= high * expected:
        yield Issue(
            model.path("weights", "totalSize"),
            f"{size} bytes is {size / expected:.2f}x what {card.params_billion:g}B parameters take in {fmt} "
            f"({expected:.4g} bytes); give metadata.total_size of this checkpoint's model.safetensors.index.json "
            "(bytes), and paramsBillion in billions",
        )
