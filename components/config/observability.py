"""Per-region monitoring (Prometheus, Grafana, alert thresholds) and per-model latency objectives."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, SecretStr

from components.config.base import Name, Spec

_DURATION = re.compile(r"^[0-9]+(ms|s|m|h|d|w|y)$")


def _check_duration(value: str) -> str:
    if not _DURATION.match(value):
        raise ValueError(f"{value!r} is not a Prometheus duration; write it like 15d or 12h")
    return value


Duration = Annotated[str, AfterValidator(_check_duration)]


class ExistingPrometheusSpec(Spec):
    """A Prometheus Operator stack already runs in the cluster: add only monitors, rules and dashboards."""

    namespace: Name = Field(description="Namespace its Prometheus watches for monitors and rules, e.g. monitoring.")
    monitor_labels: dict[str, str] = Field(
        default_factory=dict,
        description="Labels its serviceMonitor/podMonitor/rule selectors require, e.g. {release: prom}.",
    )


class RemoteWriteSpec(Spec):
    """Long-term storage: Prometheus remote-writes every sample to this endpoint."""

    url: str = Field(description="HTTPS remote-write endpoint, e.g. https://mimir.example.com/api/v1/push.")
    username: str | None = Field(None, description="Basic-auth user of the endpoint, with `password`.")
    password: SecretStr | None = Field(
        None,
        description="Basic-auth password, a `secure:` value on the stack that deploys the region (pulumi config "
        "set --secret --path -s <env>.<region> 'regions[N].observability.remoteWrite.password' <password>, the "
        "username beside it the same way); the platform puts both in a Secret in the monitoring namespace before "
        "Prometheus starts.",
    )
    basic_auth_secret: str | None = Field(
        None,
        description="Refused: a Secret made out of band cannot be in the monitoring namespace the stack creates "
        "before Prometheus needs it (its operator then never creates Prometheus); give username and password.",
    )


class GrafanaSpec(Spec):
    expose: bool = Field(False, description="Publish Grafana through an Ingress (off: reach it by port-forward).")
    host: str | None = Field(None, description="Hostname of the Ingress; required when expose is true.")
    tls_secret: str | None = Field(
        None, description="TLS secret (in the monitoring namespace) for the host; required when expose is true."
    )


class ThresholdsSpec(Spec):
    """Alert thresholds; defaults follow the seed (GPU utilisation band 60-80 %)."""

    ttft_p95_seconds: float = Field(
        2.0, gt=0, description="TTFT p95 objective for models that set no slo.ttftP95Seconds."
    )
    kv_cache_near_full: float = Field(0.9, gt=0, le=1, description="KV-cache usage (0-1) that counts as near full.")
    gpu_idle_below_percent: float = Field(
        60, ge=0, le=100, description="Pool GPU utilisation under this for 30 min: capacity is idle."
    )
    gpu_saturated_above_percent: float = Field(
        80, ge=0, le=100, description="Pool GPU utilisation over this for 30 min: the pool is saturated."
    )
    queue_waiting_requests: int = Field(
        10, ge=1, description="Waiting requests per model above which a still-growing queue alerts."
    )
    cache_hit_ratio_below: float = Field(
        0.5, ge=0, le=1, description="Model-cache hit ratio (0-1) under which the cache counts as collapsed."
    )


class ObservabilitySpec(Spec):
    """Metrics, dashboards and alerts of one cluster."""

    enabled: bool = Field(True, description="Scrape, dashboard and alert on this cluster.")
    existing_prometheus: ExistingPrometheusSpec | None = Field(
        None,
        description="Use a Prometheus Operator stack already in the cluster instead of installing "
        "kube-prometheus-stack (its CRDs must be installed).",
    )
    retention: Duration = Field("10d", description="Local retention of the Prometheus we install, e.g. 15d.")
    node_exporter: bool = Field(
        False,
        description="Run the Prometheus node exporter (host disk, network, memory) on every node; it needs "
        "hostNetwork, hostPID and hostPath, so its namespace is Pod Security privileged.",
    )
    remote_write: RemoteWriteSpec | None = Field(None, description="Long-term storage; off by default.")
    grafana: GrafanaSpec = Field(default_factory=GrafanaSpec, description="Grafana of the stack we install.")
    thresholds: ThresholdsSpec = Field(default_factory=ThresholdsSpec, description="Alert thresholds.")


class ModelSloSpec(Spec):
    """Latency objectives of one model, alerted in every region serving it."""

    ttft_p95_seconds: float = Field(gt=0, description="Time to first token, 95th percentile, in seconds.")
