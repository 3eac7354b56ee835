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

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, TypeAdapter

from components.catalog.models import (
    MODELS,
    ModelArchitecture,
    from_hf_config,
)
from components.config.base import Precision, Spec, join_path
from components.config.stackfile import PlanInputError, read_yaml

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
