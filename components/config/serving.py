"""How models are served: the region's KServe settings and the engine options of a model.

The checks that need the catalog and the sizing (does it fit, which GPU, which flags) are in
`serving_checks.py`; these classes stay free of them so that the region and workload specs can
use them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from components.config.base import Name, Spec


class ServingSpec(Spec):
    """KServe on the region's cluster: deployment mode, weight loading, the Prometheus autoscalers query."""

    deployment_mode: Literal["Standard", "Knative"] = Field(
        "Standard",
        description="Standard: plain Deployments, autoscaled by KEDA on queue depth and TTFT. Knative: Knative "
        "Services scaled by Knative's autoscaler, with scale to zero through its activator; requires Knative "
        "Serving (and its networking layer) already installed in the cluster, with the pod-spec features model pods "
        "use enabled (scheduler name, node selector, tolerations, topology spread, emptyDir): the platform does not "
        "install it.",
    )
    weight_load_gib_per_second: float | None = Field(
        None,
        gt=0,
        description="Rate one replica reads its weights at, which sizes the startup probe; default 2 with the "
        "model cache, 0.5 straight from the bucket.",
    )
    prometheus_url: str | None = Field(
        None,
        description="Prometheus that KEDA queries for the autoscaling metrics; default the one observability "
        "installs. Required when models autoscale and observability is off or uses an existing Prometheus.",
    )
    waiting_requests_per_replica: int = Field(
        4, ge=1, description="Queued requests per replica above which the autoscaler adds replicas."
    )

    def load_gib_per_second(self, cache_enabled: bool) -> float:
        if self.weight_load_gib_per_second is not None:
            return self.weight_load_gib_per_second
        return 2.0 if cache_enabled else 0.5


class SpeculativeDecodingSpec(Spec):
    """Propose tokens cheaply and verify them in one pass of the model (vLLM only)."""

    method: Literal["ngram", "draft"] = Field(
        description="ngram: propose from n-grams of the prompt (no extra weights); draft: a smaller model of the "
        "same family, stored under <storagePath>/draft/."
    )
    num_speculative_tokens: int = Field(4, ge=1, le=16, description="Tokens proposed per step.")
    draft_preset: str | None = Field(
        None, description="method draft: the draft's preset from the model catalog, e.g. llama-3.1-8b."
    )
    prompt_lookup_max: int = Field(4, ge=1, le=16, description="method ngram: longest n-gram matched in the prompt.")


LoraRank = Literal[8, 16, 32, 64, 128, 256]


class TenantLoraSpec(Spec):
    """A tenant's own LoRA adapter, served by its base model's pods and callable by that tenant only."""

    name: Name = Field(description="Name the tenant sends as `model` to use the adapter.")
    base_model: str = Field(description="The vLLM model (name of a models[] entry) whose pods load it.")
    path: str | None = Field(
        None, description="Directory of the adapter under the base model's storagePath; default loras/<name>."
    )
    rank: LoraRank = Field(description="Rank the adapter was trained with; at most the base model's maxLoraRank.")

    def served(self) -> LoraAdapterSpec:
        return LoraAdapterSpec(name=self.name, path=self.path)


class LoraAdapterSpec(Spec):
    """A LoRA adapter served next to its base model under its own name (vLLM only)."""

    name: Name = Field(description="Name clients send as `model` to use the adapter.")
    path: str | None = Field(
        None, description="Directory of the adapter under the model's storagePath; default loras/<name>."
    )

    @property
    def directory(self) -> str:
        return (self.path or f"loras/{self.name}").strip("/")
