"""Models an environment declares from their Hugging Face `config.json`: `modelCatalog` in `Pulumi.<env>.yaml`,
and `models/*.yaml` beside it (each a mapping of the same entries, shared by every environment of the project).

An entry is what sizing needs and the shipped presets state (components/catalog/models.py): the config.json keys
under `hfConfig` with config.json's own names (paste the file: keys the platform does not read are ignored, a
near miss of one it reads is an error), the parameter count, and optionally the checkpoint stored (format, size).
It becomes a ModelArchitecture through the presets' own `from_hf_config`, held by this environment's
EnvironmentSpec only: nothing global changes, so two environments never see each other's models.

Rules, and why:
- A name is new (not a shipped preset, declared once across the files and the environment) and looks like the
  presets' names.
- GQA: the attention heads are a whole multiple of the KV heads (each KV head serves a group of query heads).
- head_dim: when absent, vLLM takes hidden_size / num_attention_heads, so they must divide; when stated for an
  architecture vLLM sizes from hidden_size anyway (HEAD_DIM_FROM_HIDDEN_SIZE), it must be that quotient.
- MoE: experts per token only with experts, and at most their number; the count under one name.
- MLA (DeepSeek's `kv_lora_rank`) caches a compressed latent that the KV sizing (2 x layers x KV heads x head
  dim) does not model: refused rather than sized wrong.
- The checkpoint: a 16-bit format agrees with config.json's dtype, any format with its `quantization_config`;
  its size agrees with the parameter count in that format (within SIZE_TOLERANCE: a size in GiB, in another
  format or a count in millions is off by far more, quantization scales and 16-bit embeddings by less).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, TypeAdapter

from components.catalog.models import (
    EXPERT_COUNT_KEYS,
    HEAD_DIM_FROM_HIDDEN_SIZE,
    MODELS,
    ModelArchitecture,
    architecture_name,
    from_hf_config,
)
from components.config.base import Issue, Spec, join_path
from components.config.stackfile import PlanInputError, read_yaml
from components.domain.sizing import Precision, weight_bytes

if TYPE_CHECKING:
    from components.config.environment import EnvironmentSpec

CATALOG_KEY = "modelCatalog"  # the environment's key
CATALOG_DIR = "models"  # the project's folder of catalog files, beside Pulumi.<env>.yaml
CATALOG_FILES_CONTEXT = "model_catalog_files"  # validation context: file -> {name: ModelCardSpec}

Dtype = Literal["bfloat16", "float16", "float32"]
# config.json's dtype of a 16-bit checkpoint, by format.
DTYPE_OF_FORMAT = {"bf16": "bfloat16", "fp16": "float16"}
# quantization_config.quant_method -> the format it stores (the methods vLLM reads from a checkpoint that the
# platform sizes; others need weights.format stated).
FORMAT_OF_QUANT_METHOD = {"awq": "awq", "gptq": "gptq", "fp8": "fp8"}
SIZE_TOLERANCE = (0.8, 1.25)
_NAME = re.compile(r"^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$")
_NEAR_MISS = 0.85


class HfConfigSpec(BaseModel):
    """The model's config.json, keys as published; only those listed are read, the others are ignored."""

    model_config = ConfigDict(extra="allow", frozen=True)

    architectures: list[str] | None = Field(
        None,
        description="Model class vLLM loads, e.g. [LlamaForCausalLM]; decides whether head_dim is read "
        "(Qwen2ForCausalLM and Qwen2MoeForCausalLM size heads from hidden_size).",
    )
    num_hidden_layers: PositiveInt = Field(description="Transformer layers.")
    hidden_size: PositiveInt = Field(description="Hidden size (the embedding width).")
    num_attention_heads: PositiveInt = Field(description="Query heads per layer.")
    num_key_value_heads: PositiveInt | None = Field(
        None, description="KV heads per layer (grouped-query attention); default one per attention head."
    )
    head_dim: PositiveInt | None = Field(
        None, description="Size of one head; default hidden_size / num_attention_heads."
    )
    vocab_size: PositiveInt = Field(description="Tokenizer vocabulary: sizes the embedding and the output head.")
    max_position_embeddings: PositiveInt = Field(description="Longest context; bounds models[].maxModelLen.")
    torch_dtype: Dtype | None = Field(None, description="dtype of the published weights (`dtype` in newer files).")
    dtype: Dtype | None = Field(None, description="torch_dtype's name since transformers 4.56.")
    tie_word_embeddings: bool = Field(
        False, description="Output head shares the input embedding (default false, as Llama, Qwen2, Mistral)."
    )
    num_local_experts: PositiveInt | None = Field(None, description="MoE experts per layer (Mixtral's name).")
    num_experts: PositiveInt | None = Field(None, description="MoE experts per layer (Qwen-MoE's name).")
    num_experts_per_tok: PositiveInt | None = Field(None, description="MoE experts each token is routed to.")
    quantization_config: dict[str, Any] | None = Field(
        None, description="A quantized checkpoint's method: quant_method awq, gptq or fp8 sets its format."
    )

    @property
    def published_dtype(self) -> str | None:
        return self.dtype or self.torch_dtype

    @property
    def quant_method(self) -> str | None:
        return (self.quantization_config or {}).get("quant_method")


class ModelWeightsSpec(Spec):
    """The checkpoint the model store holds for this model."""

    format: Precision = Field(
        description="What the safetensors hold: bf16, fp16, fp8, int8 (W8A8), awq or gptq (4-bit); a model "
        "serving it must set this precision."
    )
    total_size: PositiveInt | None = Field(
        None,
        description="Bytes of the weights: `metadata.total_size` of model.safetensors.index.json; sizes the "
        "weights instead of paramsBillion x bytes per parameter.",
    )


class ModelCardSpec(Spec):
    """A model of the environment's own, from its Hugging Face config.json."""

    hf_repo: str | None = Field(
        None, description="Hub repository, e.g. meta-llama/Llama-3.2-3B-Instruct; shown in plan.md."
    )
    params_billion: float = Field(
        gt=0, description="Parameters in billions, as the model card or the Hub's safetensors metadata states."
    )
    weights: ModelWeightsSpec | None = Field(
        None, description="The stored checkpoint, when it is one format: its format and size in bytes."
    )
    hf_config: HfConfigSpec = Field(description="The model's config.json (its keys as published).")

    @property
    def weights_format(self) -> str | None:
        """The stored format: stated, or the one config.json's quantization_config implies."""
        if self.weights is not None:
            return self.weights.format
        return FORMAT_OF_QUANT_METHOD.get(self.hf_config.quant_method or "")

    def architecture(self, name: str) -> ModelArchitecture:
        return from_hf_config(
            name,
            self.hf_config.model_dump(exclude_none=True),
            params_billion=self.params_billion,
            hf_repo=self.hf_repo,
            weights_format=self.weights_format,
            weights_bytes=self.weights.total_size if self.weights else None,
        )


CATALOG_FILE = TypeAdapter(dict[str, ModelCardSpec])


@dataclass(frozen=True)
class DeclaredModel:
    """An entry of the environment's catalog and where it was declared."""

    name: str
    card: ModelCardSpec
    source: str  # CATALOG_KEY, or the file: models/<file>.yaml

    def path(self, *keys: str | int) -> str:
        """Key path of the entry (or one of its keys) in error lines."""
        inner = join_path(self.name, *keys)
        return f"{CATALOG_KEY}.{inner}" if self.source == CATALOG_KEY else f"{self.source}: {inner}"

    @property
    def where(self) -> str:
        return f"{CATALOG_KEY} of the environment" if self.source == CATALOG_KEY else self.source

    @property
    def architecture(self) -> ModelArchitecture:
        return self.card.architecture(self.name)


def declared_models(
    environment: Mapping[str, ModelCardSpec], files: Mapping[str, Mapping[str, ModelCardSpec]]
) -> tuple[DeclaredModel, ...]:
    """The files' entries (by file name), then the environment's."""
    return (
        *(DeclaredModel(name, card, file) for file in sorted(files) for name, card in files[file].items()),
        *(DeclaredModel(name, card, CATALOG_KEY) for name, card in environment.items()),
    )


def architectures(declared: tuple[DeclaredModel, ...]) -> dict[str, ModelArchitecture]:
    """The presets, and each declared name's first declaration (a clash is reported by check_model_catalog)."""
    found = dict(MODELS)
    for model in declared:
        if model.name not in found:
            found[model.name] = model.architecture
    return found


def read_model_catalog(project_dir: Path) -> dict[str, Any]:
    """The YAML documents of `models/*.yaml` in `project_dir`, by their path there (`models/acme.yaml`)."""
    documents = {}
    for path in sorted((project_dir / CATALOG_DIR).glob("*.yaml")):
        try:
            documents[f"{CATALOG_DIR}/{path.name}"] = read_yaml(path)
        except PlanInputError as exc:
            raise PlanInputError([f"{CATALOG_DIR}/{line}" for line in exc.lines]) from None
    return documents


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
