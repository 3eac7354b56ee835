"""Models to serve and the tenants that call them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import Field, PrivateAttr

from components.catalog.models import ModelArchitecture
from components.config.base import KvDtype, Name, Precision, Spec
from components.config.gateway import TenantBudgetSpec
from components.config.observability import ModelSloSpec
from components.config.pricing import MoneyBudgetSpec
from components.config.scheduling import GpuQuotaSpec
from components.config.serving import LoraAdapterSpec, LoraRank, SpeculativeDecodingSpec, TenantLoraSpec


class PrefillSpec(Spec):
    """The prefill pool of a disaggregated placement: its pods compute prompts' KV caches and hand them to decode."""

    pool: str = Field(
        description="GPU pool of the placement's region for the prefill pods: the decode pool, or one of another GPU "
        "type in the same single zone (compute-strong GPUs; docs/serving.md, Prefill and decode on two GPU types)."
    )
    replicas: int = Field(1, ge=1, description="Prefill pods; fixed (KServe runs them as one Deployment).")
    max_num_seqs: int = Field(
        8, ge=1, le=1024, description="Prompts one prefill pod batches at once; its KV cache is sized for them."
    )
    prompt_tokens: int = Field(
        4096,
        ge=1,
        description="Typical prompt length; sizes the KV cache each request hands to decode and its transfer time.",
    )


class PlacementSpec(Spec):
    """Where a model runs: a GPU pool of a region, with its replica range."""

    region: str = Field(description="Name of a region entry of this environment.")
    pool: str = Field(description="Name of a GPU pool of that region.")
    min_replicas: int = Field(1, ge=0, description="Fewest replicas (0 = scale to zero, not in production).")
    max_replicas: int = Field(1, ge=1, description="Most replicas the autoscaler may run.")
    resource: str | None = Field(
        None,
        description="GPU resource each replica requests, when the pool offers several (MIG profiles), e.g. "
        "nvidia.com/mig-3g.40gb; default the pool's only one.",
    )
    serving_mode: Literal["aggregated", "disaggregated", "auto"] = Field(
        "aggregated",
        description="aggregated: each replica prefills and decodes. disaggregated: prefill pods (`prefill`) hand "
        "the KV cache to decode pods on `pool` over NIXL (KServe LLMInferenceService). auto: the sizing's rule "
        "(docs/serving.md, Disaggregated serving) picks one.",
    )
    prefill: PrefillSpec | None = Field(
        None, description="Prefill pool of a disaggregated (or auto) placement; `pool` then runs the decode pods."
    )
    stand_in: str | None = Field(
        None,
        description="A model of this region that answers this model's requests while it has no Ready replica here "
        "(cold start, first rollout, after a failover), with the response header x-inference-platform-stand-in; "
        "the gateway then routes this model straight to its Service, without an endpoint picker "
        "(docs/serving.md, Stand-in while a model wakes).",
    )


class ModelSpec(Spec):
    """A model served by the platform."""

    name: Name = Field(description="Model name clients send (`model` in the OpenAI request).")
    preset: str = Field(
        description="Architecture preset: a shipped one (e.g. llama-3.1-8b) or one of the environment's "
        "modelCatalog / models/*.yaml."
    )
    runtime: Literal["vllm", "triton"] = Field("vllm", description="Serving engine.")
    storage_path: str | None = Field(
        None, description="Prefix of the weights in the region's model bucket; default models/<name>/."
    )
    tenant: str | None = Field(None, description="Tenant whose scheduling queue the model's pods run in.")
    tier: str = Field("realtime", description="Priority tier of the model's pods.")
    placements: list[PlacementSpec] = Field(min_length=1, description="Regions and pools serving it.")
    slo: ModelSloSpec | None = Field(None, description="Latency objectives; default from the region's thresholds.")
    precision: Precision = Field(
        "bf16",
        description="Format of the stored weights: bf16/fp16, fp8, int8 (W8A8), or 4-bit awq/gptq; sets the weight "
        "size and the engine's --dtype/--quantization.",
    )
    max_model_len: int = Field(
        8192, ge=256, description="Longest sequence (prompt + output) in tokens; at most the preset's context."
    )
    max_num_seqs: int = Field(
        64, ge=1, le=1024, description="Sequences batched at once; the KV cache is sized for maxNumSeqs x maxModelLen."
    )
    max_output_tokens: int | None = Field(
        None,
        ge=1,
        description="Triton only: tokens an answer may run to when the request sets no max_tokens (the OpenAI "
        "frontend's --default-max-tokens, 16 upstream); default half of maxModelLen, so a prompt of up to the other "
        "half gets a full answer. vLLM answers up to maxModelLen minus the prompt.",
    )
    gpu_memory_utilization: float = Field(
        0.9, ge=0.5, le=0.95, description="Share of each GPU (MIG slice, time-slice share) the engine may use."
    )
    kv_cache_dtype: KvDtype = Field(
        "auto", description="auto (16-bit) or fp8, which halves the KV cache; only on GPUs with FP8 (not A100/A10G)."
    )
    speculative_decoding: SpeculativeDecodingSpec | None = Field(
        None, description="Speculative decoding with n-grams or a draft model (vLLM only)."
    )
    lora_adapters: list[LoraAdapterSpec] = Field(
        default_factory=list, description="LoRA adapters served with the model (vLLM only)."
    )
    max_lora_rank: LoraRank = Field(
        16, description="Largest rank among the LoRA adapters, its own and its tenants' (tenants[].loras)."
    )
    engine_args: dict[str, str | int | float | bool] = Field(
        default_factory=dict,
        description="Extra engine flags without the leading --, e.g. {max-num-batched-tokens: 8192, "
        "enable-auto-tool-choice: true}; flags the platform derives are rejected with the key to use instead.",
    )
    federated: bool = Field(
        False,
        description="Create the model once in Karmada, which runs a copy on each placement's member cluster once "
        "all of them serve InferenceServices and takes it off a member that fails; each member scales it within "
        "its placement's range.",
    )

    # Tenants' adapters on this base model (tenants[].loras), attached by EnvironmentSpec.
    _tenant_adapters: list[LoraAdapterSpec] = PrivateAttr(default_factory=list)
    # The preset's and the draft preset's architecture in the environment's catalog, resolved by EnvironmentSpec.
    _architecture: ModelArchitecture | None = PrivateAttr(default=None)
    _draft_architecture: ModelArchitecture | None = PrivateAttr(default=None)

    def _resolve(self, architectures: Mapping[str, ModelArchitecture]) -> None:
        self._architecture = architectures.get(self.preset)
        draft = self.speculative_decoding.draft_preset if self.speculative_decoding else None
        self._draft_architecture = architectures.get(draft) if draft else None

    @property
    def architecture(self) -> ModelArchitecture:
        """The preset's architecture; sizing runs only on models whose preset the serving checks found."""
        if self._architecture is None:
            raise LookupError(f"{self.name}: preset {self.preset!r} is not in the environment's model catalog")
        return self._architecture

    @property
    def draft_architecture(self) -> ModelArchitecture | None:
        """The speculative-decoding draft's architecture, for method draft with a known draft preset."""
        return self._draft_architecture

    @property
    def served_adapters(self) -> list[LoraAdapterSpec]:
        """Every adapter its pods load: its own, then its tenants'; each takes a LoRA slot of maxLoraRank."""
        return [*self.lora_adapters, *self._tenant_adapters]

    @property
    def output_budget(self) -> int:
        """What a request without max_tokens may generate on Triton: maxOutputTokens, else half of maxModelLen."""
        return self.max_output_tokens or self.max_model_len // 2

    @property
    def weights_prefix(self) -> str:
        return (self.storage_path or f"models/{self.name}/").strip("/") + "/"


# Request classes, most urgent first (components/domain/priority.py says what each does).
PriorityClass = Literal["interactive", "batch", "bestEffort"]


class TenantSpec(Spec):
    """A team or customer calling the gateway."""

    name: Name = Field(description="Tenant id; forwarded to backends and used in metrics.")
    models: list[str] = Field(min_length=1, description="Names of the models this tenant may call.")
    weight: int = Field(1, ge=1, le=65535, description="Share of contended GPUs relative to other tenants' queues.")
    tier: str = Field("realtime", description="Priority tier of the tenant's queue: higher tiers are reclaimed last.")
    reclaimable: bool = Field(
        True, description="Other queues may reclaim GPUs this tenant borrowed beyond its fair share."
    )
    gpu_quotas: list[GpuQuotaSpec] = Field(
        default_factory=list, description="Per-region GPU limits; the tenant gets a scheduling queue in each region."
    )
    budget: TenantBudgetSpec | None = Field(
        None, description="Token and request budgets the gateway enforces across the tenant's models."
    )
    money_budget: MoneyBudgetSpec | None = Field(
        None, description="A budget in USD per month, converted in plan.md to output tokens per model."
    )
    loras: list[TenantLoraSpec] = Field(
        default_factory=list,
        description="The tenant's LoRA adapters: loaded by their base model's pods (multi-LoRA), routed by name to "
        "this tenant only.",
    )
    priority: PriorityClass = Field(
        "batch",
        description="Request class, set by the gateway from the tenant's API key: where tenants of several classes "
        "share a model, its endpoint picker dispatches interactive requests first and bestEffort ones last, and "
        "sheds those first (docs/serving.md, Request priority classes).",
    )
