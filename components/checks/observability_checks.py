"""Monitoring options that work together, and latency objectives a metric can measure."""

from __future__ import annotations

from collections.abc import Iterator

from components.checks.endpoint_checks import https_url
from components.config.base import Issue, join_path
from components.config.environment import EnvironmentSpec


def check_observability(env: EnvironmentSpec) -> Iterator[Issue]:
    """Option combinations that cannot work, and objectives that no metric can measure."""
    for i, region in enumerate(env.regions):
        obs = region.observability
        path = ("regions", i, "observability")
        t = obs.thresholds
        if t.gpu_idle_below_percent >= t.gpu_saturated_above_percent:
            yield Issue(
                join_path(*path, "thresholds", "gpuIdleBelowPercent"),
                f"{t.gpu_idle_below_percent:g} must be below gpuSaturatedAbovePercent "
                f"{t.gpu_saturated_above_percent:g}; the two bound the target utilisation band",
            )
        remote = obs.remote_write
        if remote is not None and not https_url(remote.url):
            yield Issue(
                join_path(*path, "remoteWrite", "url"),
                f"{remote.url!r} is not an https:// URL; metrics leave the cluster, use TLS",
            )
        if remote is not None and remote.basic_auth_secret is not None:
            yield Issue(
                join_path(*path, "remoteWrite", "basicAuthSecret"),
                "Prometheus's operator creates no Prometheus while a Secret its remote write names is missing "
                "(upstream.PROMETHEUS_OPERATOR_WAITS_FOR_REMOTE_WRITE_SECRETS), and this stack creates the monitoring "
                "namespace, so a Secret made out of band cannot be there on a first rollout: remove it and give "
                "remoteWrite.username and remoteWrite.password on the stack that deploys the region (a secret: "
                f"pulumi config set --secret --path -s <env>.{region.name} "
                f"'{join_path(*path, 'remoteWrite', 'password')}' <password>; -s <env> for a one-stack "
                "environment); the platform makes the Secret",
            )
        if remote is not None and (remote.username is None) != (remote.password is None):
            missing = "password" if remote.password is None else "username"
            yield Issue(join_path(*path, "remoteWrite", missing), "basic auth needs both username and password")
        if obs.grafana.expose:
            for key, value in (("host", obs.grafana.host), ("tlsSecret", obs.grafana.tls_secret)):
                if not value:
                    yield Issue(join_path(*path, "grafana", key), "required when grafana.expose is true")
        if obs.existing_prometheus is not None:
            for key, given in (("remoteWrite", obs.remote_write is not None), ("grafana", obs.grafana.expose)):
                if given:
                    yield Issue(
                        join_path(*path, key),
                        "not applied with existingPrometheus (we install no Prometheus or Grafana); "
                        "configure it on the existing stack and remove it here",
                    )

    for i, model in enumerate(env.models):
        if model.slo is not None and model.runtime != "vllm":
            yield Issue(
                join_path("models", i, "slo"),
                f"TTFT objectives are alerted from vLLM's time_to_first_token histogram; {model.runtime} "
                "exports no TTFT histogram by default, remove slo from this model",
            )
