"""The whole environment: what one `Pulumi.<env>.yaml` describes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated

from pydantic import AfterValidator, Field, PrivateAttr, ValidationInfo, model_validator

from components.catalog.models import MODELS, ModelArchitecture
from components.config.base import Spec
from components.config.gateway import GatewaySpec
from components.config.karmada import FederationSpec
from components.config.model_catalog import (
    CATALOG_FILES_CONTEXT,
    DeclaredModel,
    ModelCardSpec,
    architectures,
    declared_models,
)
from components.config.model_store import ModelStoreSpec
from components.config.pricing import PricingSpec
from components.config.region import RegionSpec
from components.config.rollout import CANARY, SINGLE, RolloutSpec
from components.config.scheduling import PriorityTierSpec, default_tiers
from components.config.stacks import GLOBAL, Layout, StacksSpec
from components.config.workloads import ModelSpec, TenantSpec

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

    def model_store_source(self) -> RegionSpec:
        """The region entry whose bucket is the source of truth (`modelStore.sourceRegion`): default the first one that
        can be (an AWS one)."""
        if self.model_store.source_region is not None:
            return self.region(self.model_store.source_region)
        return next((r for r in self.regions if r.can_source_models), self.regions[0])

    # The defaults of `stacks.layout`, the anchor region and `rollout.waves`, resolved: keys of this environment read
    # together, and what the policy pack is told of the SLO gate (policies/offline.py reads slo_models off the spec).

    def stack_layout(self) -> Layout:
        """`stacks.layout`, `auto` resolved: one stack per region entry when there is more than one."""
        if self.stacks.layout == "auto":
            return "perRegion" if len(self.regions) > 1 else "single"
        return self.stacks.layout

    def anchor_region(self) -> str:
        """The region whose stack holds what the whole environment shares."""
        return self.federation.host if self.federation.enabled and self.federation.host else self.regions[0].name

    def region_waves(self) -> list[tuple[str, list[str]]]:
        """(wave name, region entries) of the region waves, the configured ones or the default: the anchor's canary,
        then one wave per cloud and runner (`make rollout WAVE=<wave>` runs on one runner: regions of one cloud
        share a wave only where they share a `deployer.runnerLabel`; a cloud's only wave is named after it, its
        several after it and their first region)."""
        if self.rollout.waves is not None:
            return [(w.name, list(w.regions)) for w in self.rollout.waves]
        anchor = self.region(self.anchor_region())
        clouds = list(dict.fromkeys([anchor.cloud, *(r.cloud for r in self.regions)]))
        waves = [(CANARY, [anchor.name])]
        for cloud in clouds:
            by_runner: dict[str, list[str]] = {}
            for r in self.regions:
                if r.cloud == cloud and r.name != anchor.name:
                    by_runner.setdefault(r.wave_runner(), []).append(r.name)
            groups = list(by_runner.values())
            waves += [(cloud if len(groups) == 1 else f"{cloud}-{names[0]}", names) for names in groups]
        return waves

    def wave_names(self) -> list[str]:
        if self.stack_layout() == "single":
            return [SINGLE]
        return [name for name, _ in self.region_waves()] + [GLOBAL]

    def slo_models(self) -> list[str]:
        """Every model the SLO gate may send to: those `slo.models` and `slo.waves` name, and the tenant's own when a
        region wave is named in neither (tools/rollout/slo.py region_target); what the pack holds its tenant to."""
        slo = self.rollout.slo
        if slo is None:
            return []
        listed = [*slo.models, *(m for models in slo.waves.values() for m in models)]
        unnamed = [w for w in self.wave_names() if w != GLOBAL and w not in slo.waves]
        if unnamed and not slo.models:
            listed += [m for t in self.tenants if t.name == slo.tenant for m in t.models]
        return sorted(set(listed))
