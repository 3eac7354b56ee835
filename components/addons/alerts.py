"""Alerting rules (PrometheusRule groups) for the seed's objectives, thresholds from config.

Every cluster evaluates the rules for what it runs: TTFT objectives for the models placed in
its region, GPU utilisation band and XID errors for its pools, the hit ratio of its cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.addons.dashboards import cache_hit_ratio, gpu_utilisation_percent
from components.addons.scrape_targets import ObservedScope
from components.catalog import metrics as m
from components.config.observability import ThresholdsSpec
from components.k8s.names import MODEL_TARGET_LABEL, POOL_TARGET_LABEL


def _rule(
    alert: str, expr: str, severity: str, summary: str, description: str, for_: str | None, **labels: str
) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "alert": alert,
        "expr": expr,
        "labels": {"severity": severity, **labels},
        "annotations": {"summary": summary, "description": description},
    }
    if for_:
        rule["for"] = for_
    return rule


def _serving_rules(ttft: Mapping[str, float], t: ThresholdsSpec) -> list[dict[str, Any]]:
    rules = [
        _rule(
            "InferenceTTFTP95OverSLO",
            f'histogram_quantile(0.95, sum by (le) (rate({m.VLLM_TTFT.bucket}{{{MODEL_TARGET_LABEL}="{model}"}}[5m])))'
            f" > {objective:g}",
            "warning",
            f"{model}: TTFT p95 above its {objective:g}s objective",
            f"Time to first token (p95 over 5m) of {model} is {{{{ $value | humanizeDuration }}}}, over the "
            f"{objective:g}s objective. Check queue depth and KV-cache use; scale out or shed load.",
            "10m",
            **{MODEL_TARGET_LABEL: model},
        )
        for model, objective in sorted(ttft.items())
    ]
    if ttft:
        rules.append(
            _rule(
                "InferenceKVCacheNearFull",
                f"max by ({MODEL_TARGET_LABEL}, pod) ({m.VLLM_KV_CACHE_USAGE}) > {t.kv_cache_near_full:g}",
                "warning",
                "{{ $labels." + MODEL_TARGET_LABEL + " }}: KV cache nearly full on {{ $labels.pod }}",
                f"KV-cache usage has stayed above {t.kv_cache_near_full:.0%} for 10 minutes; requests will queue "
                "or be preempted. Add replicas or lower max-num-seqs.",
                "10m",
            )
        )
        rules.append(
            _rule(
                "InferenceQueueGrowing",
                f"sum by ({MODEL_TARGET_LABEL}) ({m.VLLM_WAITING}) > {t.queue_waiting_requests} "
                f"and sum by ({MODEL_TARGET_LABEL}) (deriv({m.VLLM_WAITING}[10m])) > 0",
                "warning",
                "{{ $labels." + MODEL_TARGET_LABEL + " }}: request queue keeps growing",
                f"More than {t.queue_waiting_requests} requests wait and the queue has grown for 10 minutes: "
                "capacity is short of demand.",
                "10m",
            )
        )
    return rules


def _gpu_rules(t: ThresholdsSpec) -> list[dict[str, Any]]:
    utilisation = gpu_utilisation_percent(window="30m")
    pool = "{{ $labels." + POOL_TARGET_LABEL + " }}"
    return [
        _rule(
            "GPUPoolIdle",
            f"{utilisation} < {t.gpu_idle_below_percent:g}",
            "info",
            f"GPU pool {pool} is under-used",
            f"Mean GPU utilisation over 30 minutes is {{{{ $value | humanize }}}}%, under the "
            f"{t.gpu_idle_below_percent:g}% floor of the target band: scale the pool or its models down.",
            "30m",
        ),
        _rule(
            "GPUPoolSaturated",
            f"{utilisation} > {t.gpu_saturated_above_percent:g}",
            "warning",
            f"GPU pool {pool} is saturated",
            f"Mean GPU utilisation over 30 minutes is {{{{ $value | humanize }}}}%, over the "
            f"{t.gpu_saturated_above_percent:g}% ceiling of the target band: latency will suffer; add capacity.",
            "30m",
        ),
        _rule(
            "GPUXidError",
            f"max by ({POOL_TARGET_LABEL}, Hostname, gpu) ({m.DCGM_XID_ERRORS}) > 0",
            "critical",
            f"XID error on {{{{ $labels.Hostname }}}} GPU {{{{ $labels.gpu }}}} (pool {pool})",
            "The driver reported XID {{ $value }}. Cordon the node and check `nvidia-smi -q`; XIDs 48, 63, 64, "
            "74, 79 and 94/95 usually need a reset or a replacement.",
            None,
        ),
    ]


def _cache_rules(t: ThresholdsSpec) -> list[dict[str, Any]]:
    return [
        _rule(
            "ModelCacheHitRatioCollapsed",
            f"({cache_hit_ratio('15m')}) < {t.cache_hit_ratio_below:g}",
            "warning",
            "Model cache {{ $labels.fluid_runtime }} serves most reads from object storage",
            f"The cache hit ratio over 15 minutes is {{{{ $value | humanizePercentage }}}}, under "
            f"{t.cache_hit_ratio_below:.0%}: new replicas load weights at object-storage speed. Check cache "
            "capacity, evictions and pre-warm jobs.",
            "15m",
        )
    ]


def alert_groups(scope: ObservedScope, thresholds: ThresholdsSpec, ttft: Mapping[str, float]) -> list[dict[str, Any]]:
    """PrometheusRule `spec.groups` for the components the region runs (empty groups left out)."""
    groups = [
        ("inference-platform.serving", _serving_rules(ttft, thresholds)),
        ("inference-platform.gpu", _gpu_rules(thresholds) if scope.dcgm_pools else []),
        ("inference-platform.cache", _cache_rules(thresholds) if scope.model_cache else []),
    ]
    return [{"name": name, "rules": rules} for name, rules in groups if rules]
