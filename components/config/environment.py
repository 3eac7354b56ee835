"""The whole environment: what one `Pulumi.<env>.yaml` describes."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Annotated

from pydantic import AfterValidator, Field, PrivateAttr, ValidationInfo, model_validator

from components.catalog.models import MODELS, ModelArchitecture
from components.config.base import Issue, Spec, duplicates
from components.config.capacity_checks import check_capacity
from components.config.consistency import check_consistency
from components.config.deployer import check_deployers
from components.config.endpoint_checks import check_endpoints
from components.config.existing_clusters import check_existing_clusters
from components.config.gateway import GatewaySpec, check_gateway
from components.config.gateway_tls import check_gateway_names
from components.config.gpu_partitioning import check_gpu_partitioning
from components.config.gpu_pools import check_gpu_pools
from components.config.karmada import FederationSpec, check_federated_models, check_federation, check_search
from components.config.model_catalog import (
    CATALOG_FILES_CONTEXT,
    DeclaredModel,
    ModelCardSpec,
    architectures,
    check_model_catalog,
    declared_models,
)
from components.config.model_store import ModelStoreSpec, check_model_storage
from components.config.observability import check_observability
from components.config.pricing import PricingSpec, check_pricing
from components.config.region import RegionSpec, check_region
from components.config.rollout import RolloutSpec, check_rollout
from components.config.scheduling import PriorityTierSpec, check_scheduling, default_tiers
from components.config.serving_checks import check_engine_options, check_serving
from components.config.stacks import StacksSpec
from components.config.stand_in_checks import check_stand_ins
from components.config.workloads import ModelSpec, TenantSpec, check_workloads
from components.domain.cache_reads import check_cache_reads

_LABEL = re.compile(r"^[a-z0-9_-]{1,63}$")


def _check_label(value: str) -> str:
    if not _LABEL.match(value):
        raise ValueError(f"{value!r} is not usable as a GCP label; use 1-63 lowercase letters, digits, '_' or '-'")
    return value


class EnvironmentSpec(Spec):
    """Top-level keys of the `inference-platform:` config namespace."""

    production: bool = Field(
        False, description="Protect stateful resources (clusters, keys, buckets) and apply production rules."
    )
    label_domain: str = Field(
        "inference-platform.io", description="Domain prefix of the shared node labels (DESIGN.md §4)."
    )
    tags: dict[Annotated[str, AfterValidator(_check_label)], Annotated[str, AfterValidator(_check_label)]] = Field(
        default_factory=dict,
        description="Tags (AWS) and labels (GCP) added to every cloud resource; GCP label syntax.",
    )
    regions: list[RegionSpec] = Field(min_length=1, description="Clusters of this environment, one per entry.")
    model_catalog: dict[str, ModelCardSpec] = Field(
        default_factory=dict,
        description="Models of your own, by preset name (what models[].preset names), from each model's Hugging "
        "Face config.json; `models/*.yaml` beside this file declare more, for every environment (docs/serving.md, Models of "
        "your own).",
    )
    models: list[ModelSpec] = Field(default_factory=list, description="Models to serve.")
    tenants: list[TenantSpec] = Field(default_factory=list, description="Tenants of the gateway.")
    federation: FederationSpec = Field(
        default_factory=FederationSpec, description="Karmada federation of the environment's clusters."
    )
    priority_tiers: list[PriorityTierSpec] = Field(
        default_factory=default_tiers,
        min_length=1,
        description="Priority tiers, one PriorityClass each; default realtime > batch > best-effort.",
    )
    model_store: ModelStoreSpec = Field(description="Buckets holding model weights, one per region entry.")
    gateway: GatewaySpec = Field(
        default_factory=GatewaySpec, description="OpenAI-compatible gateways, tenant budgets, external providers."
    )
    pricing: PricingSpec = Field(
        default_factory=PricingSpec, description="Prices this environment pays, over the catalog's list prices."
    )
    stacks: StacksSpec = Field(
        default_factory=StacksSpec,
        description="One Pulumi stack for the environment, or one per region and a global one.",
    )
    rollout: RolloutSpec = Field(default_factory=RolloutSpec, description="Waves and gates of `make rollout`.")

    # The catalog files' entries and this environment's own, and every preset by name (set by _resolve_presets).
    _declared_models: tuple[DeclaredModel, ...] = PrivateAttr(default=())
    _architectures: dict[str, ModelArchitecture] = PrivateAttr(default_factory=lambda: dict(MODELS))

    @model_validator(mode="after")
    def _resolve_presets(self, info: ValidationInfo) -> EnvironmentSpec:
        """This environment's catalog: the shipped presets, the `models/*.yaml` entries the loader passes in the
        validation context, `modelCatalog`; each model gets its preset's (and draft's) architecture. Unknown
        presets are reported by the serving checks."""
        files = (info.context or {}).get(CATALOG_FILES_CONTEXT, {})
        self._declared_models = declared_models(self.model_catalog, files)
        self._architectures = architectures(self._declared_models)
        for model in self.models:
            model._resolve(self._architectures)
        return self

    @property
    def declared_models(self) -> tuple[DeclaredModel, ...]:
        return self._declared_models

    @property
    def architectures(self) -> Mapping[str, ModelArchitecture]:
        """Every preset this environment may serve, by name."""
        return MappingProxyType(self._architectures)

    @model_validator(mode="after")
    def _attach_tenant_loras(self) -> EnvironmentSpec:
        """Each tenant LoRA joins its base model's served adapters (sizing, engine flags); unknown bases are
        reported by check_workloads."""
        models = {m.name: m for m in self.models}
        for tenant in self.tenants:
            for lora in tenant.loras:
                if lora.base_model in models:
                    models[lora.base_model]._tenant_adapters.append(lora.served())
        return self

    def region(self, name: str) -> RegionSpec:
        return next(r for r in self.regions if r.name == name)


def _check_regions(env: EnvironmentSpec) -> Iterable[Issue]:
    yield from duplicates([r.name for r in env.regions], ("regions",), "region name")
    for i, region in enumerate(env.regions):
        yield from check_region(region, ("regions", i))


# Cross-field checks run after the structure is valid, before any resource exists.
# Stages run in order, all of them in one run (components/config/loader.py semantic_issues): a later
# stage's checks rely on what earlier ones establish (known machine types, resolvable references), so
# after a mistake a check that cannot run is skipped and an issue under an already reported key is
# dropped, rather than reported as a consequence of the mistake. Model sizing comes late: it reads each
# pool's GPU partitioning (MIG profiles, time-slice shares), checked in stage 2; replicas are checked
# against pools and queues once every placement is sized.
SEMANTIC_CHECKS: tuple[tuple[Callable[[EnvironmentSpec], Iterable[Issue]], ...], ...] = (
    (
        _check_regions,
        check_model_catalog,
        check_existing_clusters,
        check_endpoints,
        check_gpu_pools,
        check_workloads,
        check_engine_options,
        check_federation,
        check_observability,
        check_pricing,
        check_deployers,
    ),
    (
        check_gpu_partitioning,
        check_model_storage,
        check_gateway,
        check_gateway_names,
        check_federated_models,
        check_search,
        check_consistency,
        check_rollout,
        check_stand_ins,
    ),
    # Queues are sized in the resources the pools offer, known once their partitioning is valid.
    (check_scheduling,),
    (check_serving,),
    # A node's weight streams count the engine processes of the replicas sized on its pool.
    (check_capacity, check_cache_reads),
)
