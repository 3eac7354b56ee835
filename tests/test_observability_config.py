"""Invalid observability settings: one line naming the key path and the fix, before any resource exists."""

from __future__ import annotations

from components.checks.loader import load_environment
from tests.harness import config_errors, raw_environment


def _with_observability(**settings) -> dict:
    raw = raw_environment()
    raw["regions"][0]["observability"] = settings
    return raw


def test_defaults_turn_observability_on_with_the_seed_band_and_nothing_exposed():
    raw = raw_environment()
    del raw["regions"][0]["observability"]
    obs = load_environment(raw).regions[0].observability
    assert obs.enabled and obs.existing_prometheus is None
    assert obs.remote_write is None and obs.grafana.expose is False
    t = obs.thresholds
    assert (t.gpu_idle_below_percent, t.gpu_saturated_above_percent) == (60, 80)
    assert (t.kv_cache_near_full, t.ttft_p95_seconds, t.cache_hit_ratio_below) == (0.9, 2.0, 0.5)


def test_gpu_band_must_be_a_band():
    raw = _with_observability(thresholds={"gpuIdleBelowPercent": 80, "gpuSaturatedAbovePercent": 60})
    assert config_errors(raw) == [
        "regions[0].observability.thresholds.gpuIdleBelowPercent: 80 must be below gpuSaturatedAbovePercent 60; "
        "the two bound the target utilisation band"
    ]


def test_threshold_ranges():
    raw = _with_observability(thresholds={"kvCacheNearFull": 1.5, "gpuSaturatedAbovePercent": 120})
    assert config_errors(raw) == [
        "regions[0].observability.thresholds.kvCacheNearFull: input should be less than or equal to 1 (got 1.5); "
        "change the value",
        "regions[0].observability.thresholds.gpuSaturatedAbovePercent: input should be less than or equal to 100 "
        "(got 120); change the value",
    ]


def test_remote_write_must_use_tls():
    raw = _with_observability(remoteWrite={"url": "http://mimir.example.com/api/v1/push"})
    assert config_errors(raw) == [
        "regions[0].observability.remoteWrite.url: 'http://mimir.example.com/api/v1/push' is not an https:// URL; "
        "metrics leave the cluster, use TLS"
    ]


def test_exposed_grafana_needs_a_host_and_a_certificate():
    raw = _with_observability(grafana={"expose": True})
    assert config_errors(raw) == [
        "regions[0].observability.grafana.host: required when grafana.expose is true",
        "regions[0].observability.grafana.tlsSecret: required when grafana.expose is true",
    ]


def test_existing_prometheus_excludes_what_we_would_install():
    raw = _with_observability(
        existingPrometheus={"namespace": "monitoring"},
        remoteWrite={"url": "https://mimir.example.com/api/v1/push"},
        grafana={"expose": True, "host": "grafana.example.com", "tlsSecret": "grafana-tls"},
    )
    message = (
        "not applied with existingPrometheus (we install no Prometheus or Grafana); "
        "configure it on the existing stack and remove it here"
    )
    assert config_errors(raw) == [
        f"regions[0].observability.remoteWrite: {message}",
        f"regions[0].observability.grafana: {message}",
    ]


def test_existing_prometheus_needs_its_namespace():
    raw = _with_observability(existingPrometheus={"monitorLabels": {"release": "prom"}})
    assert config_errors(raw) == [
        "regions[0].observability.existingPrometheus.namespace: required key is missing; add `namespace` "
        "(see docs/configuration.md)"
    ]


def test_retention_is_a_prometheus_duration():
    raw = _with_observability(retention="two weeks")
    assert config_errors(raw) == [
        "regions[0].observability.retention: 'two weeks' is not a Prometheus duration; write it like 15d or 12h"
    ]


def test_unknown_observability_key_suggests_the_right_one():
    raw = _with_observability(remoteWrites={"url": "https://x.example.com"})
    (error,) = config_errors(raw)
    assert error.startswith("regions[0].observability.remoteWrites: unknown key; did you mean 'remoteWrite'?")


def test_model_slo_must_be_positive():
    raw = raw_environment()
    raw["models"][0]["slo"] = {"ttftP95Seconds": 0}
    assert config_errors(raw) == [
        "models[0].slo.ttftP95Seconds: input should be greater than 0 (got 0); change the value"
    ]


def test_ttft_slo_only_on_models_with_a_ttft_histogram():
    raw = raw_environment("prod")
    triton = next(i for i, m in enumerate(raw["models"]) if m["runtime"] == "triton")
    raw["models"][triton]["slo"] = {"ttftP95Seconds": 1}
    assert config_errors(raw) == [
        f"models[{triton}].slo: TTFT objectives are alerted from vLLM's time_to_first_token histogram; "
        "triton exports no TTFT histogram by default, remove slo from this model"
    ]


def test_a_remote_write_secret_made_out_of_band_is_refused_and_credentials_come_in_pairs():
    raw = _with_observability(remoteWrite={"url": "https://m.example.com/push", "basicAuthSecret": "rw"})
    (line,) = config_errors(raw)
    assert line.startswith("regions[0].observability.remoteWrite.basicAuthSecret: Prometheus's operator creates no ")
    assert line.endswith(
        "give remoteWrite.username and remoteWrite.password on the stack that deploys the region (a secret: "
        "pulumi config set --secret --path -s <env>.use1 'regions[0].observability.remoteWrite.password' <password>; "
        "-s <env> for a one-stack environment); the platform makes the Secret"
    )
    raw = _with_observability(remoteWrite={"url": "https://m.example.com/push", "username": "prom"})
    assert config_errors(raw) == [
        "regions[0].observability.remoteWrite.password: basic auth needs both username and password"
    ]
    raw = _with_observability(remoteWrite={"url": "https://m.example.com/push", "password": "p"})
    assert config_errors(raw) == [
        "regions[0].observability.remoteWrite.username: basic auth needs both username and password"
    ]
    raw = _with_observability(remoteWrite={"url": "https://m.example.com/push", "username": "prom", "password": "p"})
    assert load_environment(raw).regions[0].observability.remote_write.password.get_secret_value() == "p"
