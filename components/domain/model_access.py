"""Who may call a model by name, and which self-hosted model answers that name."""

from __future__ import annotations

from components.config.environment import EnvironmentSpec
from components.config.workloads import ModelSpec


def granted_tenants(env: EnvironmentSpec, model: str) -> list[str]:
    """Who may call `model`: tenants listing it; for a model's own LoRA adapter, its base model's tenants; for a
    tenant's adapter (tenants[].loras), that tenant alone."""
    owners = [t.name for t in env.tenants if any(lora.name == model for lora in t.loras)]
    if owners:
        return owners
    base = next((m.name for m in env.models if any(a.name == model for a in m.lora_adapters)), model)
    return sorted(t.name for t in env.tenants if base in t.models)


def served_base(env: EnvironmentSpec, name: str) -> ModelSpec | None:
    """The self-hosted model that serves `name`: itself, or the base model of a LoRA adapter of that name."""
    return next((m for m in env.models if m.name == name or any(a.name == name for a in m.served_adapters)), None)
