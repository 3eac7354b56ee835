"""Grafana dashboards as code: serving, GPU, gateway and cache, built from the metric catalog.

Each dashboard is a Grafana JSON model provisioned as a ConfigMap the Grafana sidecar loads
(kube-prometheus-stack: grafana.sidecar.dashboards.label/labelValue, searchNamespace ALL).
Queries go through a `datasource` variable, so the same JSON works on an existing Grafana.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components.addons.scrape_targets import ObservedScope
from components.catalog import metrics as m
from components.k8s import names
from components.k8s.names import MODEL_TARGET_LABEL, POOL_TARGET_LABEL

# kube-prometheus-stack 88.5.3 values: grafana.sidecar.dashboards.{label: grafana_dashboard, labelValue: "1"}.
DASHBOARD_LABEL = {"grafana_dashboard": "1"}
RATE = "$__rate_interval"  # Grafana's scrape-aware rate window
_DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
_QUANTILES = (0.5, 0.95, 0.99)
# The tenant attribute the AI Gateway adds to its gen_ai metrics, as Prometheus names it (`.` -> `_`).
TENANT_LABEL = names.TENANT_METRIC_ATTRIBUTE.replace(".", "_")


@dataclass(frozen=True)
class Panel:
    title: str
    targets: tuple[tuple[str, str], ...]  # (PromQL, legend)
    unit: str = "short"


def _quantiles(histogram: m.Metric, selector: str, by: str) -> tuple[tuple[str, str], ...]:
    return tuple(
        (
            f"histogram_quantile({q}, sum by (le, {by}) (rate({histogram.bucket}{{{selector}}}[{RATE}])))",
            f"p{round(q * 100)} {{{{{by}}}}}",
        )
        for q in _QUANTILES
    )


def _variable(name: str, metric: m.Metric | str, label: str) -> dict[str, Any]:
    query = f"label_values({metric}, {label})"
    return {
        "name": name,
        "type": "query",
        "datasource": _DATASOURCE,
        "query": {"query": query, "refId": f"{name}-values"},
        "definition": query,
        "includeAll": True,
        "multi": True,
        "current": {"text": "All", "value": "$__all"},
        "refresh": 2,
    }


def _dashboard(
    uid: str, title: str, rows: list[tuple[str, list[Panel]]], variables: list[dict[str, Any]]
) -> dict[str, Any]:
    panels: list[dict[str, Any]] = []
    y = 0
    for row_title, row in rows:
        panels.append(
            {"id": len(panels) + 1, "type": "row", "title": row_title, "collapsed": False, "panels": []}
            | {"gridPos": {"h": 1, "w": 24, "x": 0, "y": y}}
        )
        y += 1
        for i, panel in enumerate(row):
            panels.append(
                {
                    "id": len(panels) + 1,
                    "type": "timeseries",
                    "title": panel.title,
                    "datasource": _DATASOURCE,
                    "gridPos": {"h": 8, "w": 12, "x": 12 * (i % 2), "y": y + 8 * (i // 2)},
                    "fieldConfig": {"defaults": {"unit": panel.unit}, "overrides": []},
                    "targets": [
                        {"refId": chr(ord("A") + j), "expr": expr, "legendFormat": legend, "datasource": _DATASOURCE}
                        for j, (expr, legend) in enumerate(panel.targets)
                    ],
                }
            )
        y += 8 * ((len(row) + 1) // 2)
    datasource = {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source"}
    return {
        "uid": uid,
        "title": title,
        "tags": ["inference-platform"],
        "timezone": "utc",
        "schemaVersion": 39,
        "editable": False,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": [datasource, *variables]},
        "panels": panels,
    }


def _serving(scope: ObservedScope) -> dict[str, Any]:
    sel = f'{MODEL_TARGET_LABEL}=~"$model"'
    by = MODEL_TARGET_LABEL
    rows: list[tuple[str, list[Panel]]] = []
    if scope.vllm_models:
        rows.append(
            (
                "Latency (vLLM)",
                [
                    Panel("Time to first token", _quantiles(m.VLLM_TTFT, sel, by), "s"),
                    Panel("Time per output token", _quantiles(m.VLLM_TPOT, sel, by), "s"),
                    Panel("Queue wait", _quantiles(m.VLLM_QUEUE_TIME, sel, by), "s"),
                    Panel("End-to-end request latency", _quantiles(m.VLLM_E2E_LATENCY, sel, by), "s"),
                ],
            )
        )
        rows.append(
            (
                "Throughput and load (vLLM)",
                [
                    Panel(
                        "Tokens per second",
                        (
                            (
                                f"sum by ({by}) (rate({m.VLLM_PROMPT_TOKENS}{{{sel}}}[{RATE}]) "
                                f"+ rate({m.VLLM_GENERATION_TOKENS}{{{sel}}}[{RATE}]))",
                                f"total {{{{{by}}}}}",
                            ),
                            (
                                f"sum by ({by}) (rate({m.VLLM_GENERATION_TOKENS}{{{sel}}}[{RATE}]))",
                                f"output {{{{{by}}}}}",
                            ),
                        ),
                    ),
                    Panel(
                        "Requests running / waiting",
                        (
                            (f"sum by ({by}) ({m.VLLM_RUNNING}{{{sel}}})", f"running {{{{{by}}}}}"),
                            (f"sum by ({by}) ({m.VLLM_WAITING}{{{sel}}})", f"waiting {{{{{by}}}}}"),
                        ),
                    ),
                    Panel(
                        "Batch size (tokens per engine step)",
                        _quantiles(m.VLLM_ITERATION_TOKENS, sel, by),
                    ),
                    Panel(
                        "KV-cache usage (max per replica)",
                        ((f"max by ({by}) ({m.VLLM_KV_CACHE_USAGE}{{{sel}}})", f"{{{{{by}}}}}"),),
                        "percentunit",
                    ),
                    Panel(
                        "Prefix-cache hit rate",
                        (
                            (
                                f"sum by ({by}) (rate({m.VLLM_PREFIX_CACHE_HITS}{{{sel}}}[{RATE}])) / "
                                f"sum by ({by}) (rate({m.VLLM_PREFIX_CACHE_QUERIES}{{{sel}}}[{RATE}]))",
                                f"{{{{{by}}}}}",
                            ),
                        ),
                        "percentunit",
                    ),
                ],
            )
        )
    if scope.triton_models:
        rows.append(
            (
                "Triton",
                [
                    Panel(
                        "Requests per second",
                        (
                            (
                                f"sum by ({by}) (rate({m.TRITON_REQUEST_SUCCESS}{{{sel}}}[{RATE}]))",
                                f"ok {{{{{by}}}}}",
                            ),
                            (
                                f"sum by ({by}) (rate({m.TRITON_REQUEST_FAILURE}{{{sel}}}[{RATE}]))",
                                f"failed {{{{{by}}}}}",
                            ),
                        ),
                    ),
                    Panel(
                        "Average queue wait and request time",
                        tuple(
                            (
                                f"sum by ({by}) (rate({counter}{{{sel}}}[{RATE}])) / 1e6 / "
                                f"sum by ({by}) (rate({m.TRITON_REQUEST_SUCCESS}{{{sel}}}[{RATE}]))",
                                f"{what} {{{{{by}}}}}",
                            )
                            for counter, what in (
                                (m.TRITON_QUEUE_DURATION_US, "queue"),
                                (m.TRITON_REQUEST_DURATION_US, "request"),
                            )
                        ),
                        "s",
                    ),
                    Panel(
                        "Batch size (inferences per execution)",
                        (
                            (
                                f"sum by ({by}) (rate({m.TRITON_INFERENCE_COUNT}{{{sel}}}[{RATE}])) / "
                                f"sum by ({by}) (rate({m.TRITON_EXEC_COUNT}{{{sel}}}[{RATE}]))",
                                f"{{{{{by}}}}}",
                            ),
                        ),
                    ),
                ],
            )
        )
    # The model variable lists the platform's models whatever their engine.
    variable_source = m.VLLM_RUNNING if scope.vllm_models else m.TRITON_REQUEST_SUCCESS
    return _dashboard(
        "inference-serving", "Inference / Serving", rows, [_variable("model", variable_source, MODEL_TARGET_LABEL)]
    )


def gpu_utilisation_percent(selector: str = "", window: str | None = None) -> str:
    """Mean engine-active percentage per pool (over `window` when given)."""
    series = f"{m.DCGM_GR_ENGINE_ACTIVE}{{{selector}}}" if selector else str(m.DCGM_GR_ENGINE_ACTIVE)
    if window:
        series = f"avg_over_time({series}[{window}])"
    return f"100 * avg by ({POOL_TARGET_LABEL}) ({series})"


def _gpu() -> dict[str, Any]:
    sel = f'{POOL_TARGET_LABEL}=~"$pool"'
    by = POOL_TARGET_LABEL
    rows = [
        (
            "GPUs per pool",
            [
                # The seed's band is read from the engine-active ratio: DCGM reports it per MIG
                # instance too, where DCGM_FI_DEV_GPU_UTIL stays empty.
                Panel(
                    "GPU utilisation (engine active, mean per pool)",
                    ((gpu_utilisation_percent(sel), f"{{{{{by}}}}}"),),
                    "percent",
                ),
                Panel(
                    "GPU utilisation (DCGM_FI_DEV_GPU_UTIL, whole GPUs)",
                    ((f"avg by ({by}) ({m.DCGM_GPU_UTIL}{{{sel}}})", f"{{{{{by}}}}}"),),
                    "percent",
                ),
                Panel(
                    "Tensor pipe active (mean per pool)",
                    ((f"avg by ({by}) ({m.DCGM_TENSOR_ACTIVE}{{{sel}}})", f"{{{{{by}}}}}"),),
                    "percentunit",
                ),
                Panel(
                    "Framebuffer memory used",
                    (
                        (
                            f"sum by ({by}) ({m.DCGM_FB_USED}{{{sel}}}) / "
                            f"(sum by ({by}) ({m.DCGM_FB_USED}{{{sel}}}) + sum by ({by}) ({m.DCGM_FB_FREE}{{{sel}}}))",
                            f"{{{{{by}}}}}",
                        ),
                    ),
                    "percentunit",
                ),
                Panel("Power draw", ((f"sum by ({by}) ({m.DCGM_POWER_USAGE}{{{sel}}})", f"{{{{{by}}}}}"),), "watt"),
                Panel(
                    "Temperature (hottest GPU)",
                    ((f"max by ({by}) ({m.DCGM_GPU_TEMP}{{{sel}}})", f"{{{{{by}}}}}"),),
                    "celsius",
                ),
                Panel(
                    "Last XID error per GPU (non-zero = error)",
                    (
                        (
                            f"max by ({by}, Hostname, gpu) ({m.DCGM_XID_ERRORS}{{{sel}}})",
                            "{{" + by + "}} {{Hostname}} GPU {{gpu}}",
                        ),
                    ),
                ),
            ],
        )
    ]
    return _dashboard(
        "inference-gpu", "Inference / GPU", rows, [_variable("pool", m.DCGM_GR_ENGINE_ACTIVE, POOL_TARGET_LABEL)]
    )


def _gateway(scope: ObservedScope) -> dict[str, Any]:
    tenant = TENANT_LABEL
    tokens = m.GEN_AI_TOKEN_USAGE.sum
    gateway = [
        Panel(
            "Tokens per second by tenant",
            (
                (
                    f'sum by ({tenant}, gen_ai_token_type) (rate({tokens}{{{tenant}=~"$tenant"}}[{RATE}]))',
                    "{{" + tenant + "}} {{gen_ai_token_type}}",
                ),
            ),
        ),
        Panel(
            "Tokens per second by model",
            (
                (
                    f"sum by (gen_ai_request_model, gen_ai_token_type) (rate({tokens}[{RATE}]))",
                    "{{gen_ai_request_model}} {{gen_ai_token_type}}",
                ),
            ),
        ),
    ]
    if scope.has_tenants:
        gateway.append(
            Panel(
                "Rate-limit rejections per descriptor (tenant)",
                (
                    (
                        f"sum by (domain, key1, key2) (rate({m.RATELIMIT_OVER_LIMIT}[{RATE}]))",
                        "{{key1}} {{key2}}",
                    ),
                ),
                "reqps",
            )
        )
    picker = [
        Panel(
            "Requests per model (endpoint picker)",
            (
                (f"sum by (model_name) (rate({m.EPP_REQUESTS}[{RATE}]))", "{{model_name}}"),
                (f"sum by (model_name) (rate({m.EPP_REQUEST_ERRORS}[{RATE}]))", "errors {{model_name}}"),
            ),
            "reqps",
        ),
        Panel(
            "InferencePool KV-cache utilisation and queue",
            (
                (f"max by (name) ({m.EPP_POOL_KV_CACHE})", "kv {{name}}"),
                (f"max by (name) ({m.EPP_POOL_QUEUE})", "queue {{name}}"),
            ),
        ),
        Panel("InferencePool ready pods", ((f"max by (name) ({m.EPP_POOL_READY_PODS})", "{{name}}"),)),
    ]
    return _dashboard(
        "inference-gateway",
        "Inference / Gateway and tenants",
        [("Tenants", gateway), ("Endpoint picker", picker)],
        [_variable("tenant", tokens, tenant)],
    )


def _cache_reads(window: str) -> tuple[str, str]:
    """(bytes read by clients, bytes fetched from object storage) per second, per runtime."""
    by = "fluid_runtime"
    served = " + ".join(
        f"sum by ({by}) (rate({metric}[{window}]))"
        for metric in (m.ALLUXIO_BYTES_READ_LOCAL, m.ALLUXIO_BYTES_READ_REMOTE, m.ALLUXIO_BYTES_READ_DOMAIN)
    )
    return served, f"sum by ({by}) (rate({m.ALLUXIO_BYTES_READ_UFS}[{window}]))"


def cache_hit_ratio(window: str) -> str:
    """Share of bytes served from the cache rather than fetched from object storage (Alluxio's definition)."""
    served, ufs = _cache_reads(window)
    return f"1 - ({ufs}) / ({served})"


def _cache() -> dict[str, Any]:
    served, ufs = _cache_reads(RATE)
    rows = [
        (
            "Model cache (Alluxio)",
            [
                Panel("Cache hit ratio", ((cache_hit_ratio(RATE), "{{fluid_runtime}}"),), "percentunit"),
                Panel(
                    "Bytes served",
                    ((served, "served {{fluid_runtime}}"), (ufs, "from object storage {{fluid_runtime}}")),
                    "Bps",
                ),
                Panel(
                    "Cache capacity used",
                    (
                        (
                            f"sum by (fluid_runtime) ({m.ALLUXIO_CAPACITY_USED}) / "
                            f"sum by (fluid_runtime) ({m.ALLUXIO_CAPACITY_TOTAL})",
                            "{{fluid_runtime}}",
                        ),
                    ),
                    "percentunit",
                ),
                Panel("Live workers", ((f"sum by (fluid_runtime) ({m.ALLUXIO_WORKERS})", "{{fluid_runtime}}"),)),
            ],
        )
    ]
    return _dashboard("inference-cache", "Inference / Model cache", rows, [])


def dashboards(scope: ObservedScope) -> dict[str, dict[str, Any]]:
    """Dashboard name -> Grafana JSON model, for the components the region runs."""
    out: dict[str, dict[str, Any]] = {}
    if scope.models:
        out["serving"] = _serving(scope)
        out["gateway"] = _gateway(scope)
    if scope.dcgm_pools:
        out["gpu"] = _gpu()
    if scope.model_cache:
        out["cache"] = _cache()
    return out
