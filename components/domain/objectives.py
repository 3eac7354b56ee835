"""The service objectives a region's models are held to: the alerts and `servingMode: auto`'s rule read the same ones."""

from __future__ import annotations

from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec


def ttft_objectives(env: EnvironmentSpec, region: RegionSpec) -> dict[str, float]:
    """vLLM model served in the region -> its TTFT p95 objective (its own, else the region default)."""
    default = region.observability.thresholds.ttft_p95_seconds
    return {
        model.name: model.slo.ttft_p95_seconds if model.slo else default
        for model in env.models
        if model.runtime == "vllm" and any(p.region == region.name for p in model.placements)
    }
