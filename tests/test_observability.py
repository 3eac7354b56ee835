"""Observability per cluster: the stack, one monitor per metric-exposing component, dashboards and alerts.

Every PromQL expression the platform renders (alert rules and dashboard panels) is parsed with a
real PromQL parser (promql-parser, the Rust `promql-parser` crate's Python binding) and every
metric it selects must be in the upstream metric catalog. Grafana's `$__rate_interval` is not
PromQL, so it is replaced by a literal window before parsing; `$var` inside label matchers is a
plain string to the parser.
"""

from __future__ import annotations

import json

import pulumi
import pulumi_kubernetes as k8s
import pytest
from promql_parser import VectorSelector, parse, walk

from components.addons.dashboards import DASHBOARD_LABEL, RATE, TENANT_LABEL
from components.addons.observability import (
    NODE_EXPORTER_NAMESPACE,
    RELEASE,
    Observability,
)
from components.catalog import metrics
from components.catalog.charts import CHARTS
from components.checks.loader import load_environment
from components.k8s import names
from components.k8s.cluster import ClusterHandle
from components.k8s.names import MODEL_TARGET_LABEL as MODEL_LABEL
from components.k8s.names import POOL_TARGET_LABEL as POOL_LABEL
from platform_catalog.names import SERVING_NAMESPACE
from stacks.observability import observability_args
from tests.harness import evaluate_program, plan_config, raw_environment

SERVICE_MONITOR = "kubernetes:monitoring.coreos.com/v1:ServiceMonitor"
POD_MONITOR = "kubernetes:monitoring.coreos.com/v1:PodMonitor"
RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"


def _component_plan(raw: dict, region_index: int = 0):
    """Evaluate only the Observability component of one region of `raw` (no cloud resources)."""
    env = load_environment(raw)
    region = env.regions[region_index]

    def program():
        cluster_name = f"test-{region.name}"
        provider = k8s.Provider(cluster_name, kubeconfig="apiVersion: v1")
        handle = ClusterHandle(
            name=cluster_name,
            region=region,
            provider=provider,
            kubeconfig=pulumi.Output.from_input("apiVersion: v1"),
            endpoint=pulumi.Output.from_input("https://cluster.example"),
        )
        Observability(region.name, observability_args(env, region, handle))

    return evaluate_program(program)


def _monitors(plan, region: str | None = None) -> dict[str, dict]:
    return {
        r.inputs["metadata"]["name"]: r.inputs
        for r in plan.resources
        if r.type in (SERVICE_MONITOR, POD_MONITOR) and (region is None or plan.region_of(r) == region)
    }


def _rules(plan, region: str | None = None) -> list[dict]:
    """The alerting rules (the showback recording rules are tests/test_showback.py's)."""
    return [
        rule
        for r in plan.of_type(RULE)
        if region is None or plan.region_of(r) == region
        for group in r.inputs["spec"]["groups"]
        for rule in group["rules"]
        if "alert" in rule
    ]


def _dashboards(plan, region: str | None = None) -> dict[str, dict]:
    out = {}
    for r in plan.of_type(CONFIG_MAP):
        labels = r.inputs["metadata"].get("labels", {})
        if labels.get("grafana_dashboard") == "1" and (region is None or plan.region_of(r) == region):
            ((key, text),) = r.inputs["data"].items()
            out[key] = json.loads(text)
    return out


def metric_names(expr: str) -> set[str]:
    """Metric names selected by a PromQL expression; raises ValueError if it does not parse."""
    found: set[str] = set()

    def visit(node):
        if isinstance(node, VectorSelector):
            name = node.name or next((m.value for m in node.matchers.matchers if m.name == "__name__"), None)
            assert name, f"selector without a metric name in {expr!r}"
            found.add(name)
        return True

    walk(parse(expr.replace(RATE, "5m")), visit)
    return found


def _panel_exprs(dashboard: dict) -> list[str]:
    return [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]


# --- the checker itself ---------------------------------------------------------------------------------


def test_metric_check_parses_real_promql_and_finds_every_metric():
    expr = (
        f"histogram_quantile(0.95, sum by (le) (rate({metrics.VLLM_TTFT.bucket}[5m]))) > 2 "
        f'and on() {metrics.DCGM_GPU_UTIL} unless {{__name__="{metrics.VLLM_WAITING}"}}'
    )
    assert metric_names(expr) == {metrics.VLLM_TTFT.bucket, metrics.DCGM_GPU_UTIL.name, metrics.VLLM_WAITING.name}
    with pytest.raises(ValueError):
        metric_names("sum(rate(vllm:num_requests_running[5m])")


def test_metric_catalog_rejects_deprecated_and_misspelt_names():
    # vLLM 0.9 deprecated gpu_cache_usage_perc (FACTS-2.md); a histogram family name is no series.
    for name in ("vllm:gpu_cache_usage_perc", "vllm:time_to_first_token_seconds", "DCGM_FI_DEV_GPU_UTILS"):
        assert name not in metrics.KNOWN_SERIES
    assert metrics.VLLM_TTFT.bucket in metrics.KNOWN_SERIES
    with pytest.raises(ValueError):
        _ = metrics.VLLM_RUNNING.bucket


def test_every_metric_group_names_its_source():
    assert {g.exporter for g in metrics.METRIC_GROUPS} == {
        "vllm",
        "triton",
        "dcgm-exporter",
        "endpoint-picker",
        "ai-gateway",
        "envoy-ratelimit",
        "alluxio",
        "showback",
    }
    for group in metrics.METRIC_GROUPS:
        assert group.source.strip() and group.metrics


# --- the stack ------------------------------------------------------------------------------------------


def test_one_pinned_stack_per_cluster_with_crds_and_cluster_labels(env_plan):
    releases = [r for r in env_plan.helm_releases() if r.inputs["name"] == RELEASE]
    assert len(releases) == len(env_plan.spec.regions)
    for release in releases:
        values = release.inputs["values"]
        assert release.inputs["chart"] == "oci://ghcr.io/prometheus-community/charts/kube-prometheus-stack"
        assert release.inputs["version"] == "88.5.3"
        assert release.inputs["namespace"] == "monitoring"
        assert values["crds"]["enabled"] is True
        spec = values["prometheus"]["prometheusSpec"]
        assert spec["externalLabels"] == {
            "cluster": env_plan.cluster_of(release),
            "region": env_plan.region_of(release),
        }
        assert spec["serviceMonitorSelectorNilUsesHelmValues"] is True
        # Managed control planes: nothing to scrape there.
        assert all(values[c]["enabled"] is False for c in ("kubeControllerManager", "kubeScheduler", "kubeEtcd"))


def test_monitoring_is_baseline_and_the_node_exporter_is_opt_in(dev_plan):
    namespaces = {
        r.inputs["metadata"]["name"]: r.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
        for r in dev_plan.of_type(NAMESPACE)
    }
    assert namespaces["monitoring"] == "baseline"
    assert NODE_EXPORTER_NAMESPACE not in namespaces
    (release,) = [r for r in dev_plan.helm_releases() if r.inputs["name"] == RELEASE]
    assert release.inputs["values"]["nodeExporter"] == {"enabled": False}

    raw = raw_environment("dev")
    raw["regions"][0]["observability"]["nodeExporter"] = True
    plan = _component_plan(raw)
    (ns,) = [r for r in plan.of_type(NAMESPACE) if r.inputs["metadata"]["name"] == NODE_EXPORTER_NAMESPACE]
    assert ns.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    (release,) = plan.of_type(RELEASE_TYPE)
    assert release.inputs["values"]["prometheus-node-exporter"] == {"namespaceOverride": NODE_EXPORTER_NAMESPACE}
    assert ns.urn in release.options["dependsOn"]


def test_remote_write_only_where_configured(dev_plan, prod_plan):
    (dev_release,) = [r for r in dev_plan.helm_releases() if r.inputs["name"] == RELEASE]
    assert "remoteWrite" not in dev_release.inputs["values"]["prometheus"]["prometheusSpec"]
    releases = [r for r in prod_plan.helm_releases() if r.inputs["name"] == RELEASE]
    targets = [r.inputs["values"]["prometheus"]["prometheusSpec"]["remoteWrite"] for r in releases]
    # prod's endpoint takes no credentials in the checked-in file (a password is a secret set per stack)
    assert targets == [[{"url": "https://metrics.ml-platform.example.com/api/v1/push"}]] * 3
    assert [r.inputs["values"]["prometheus"]["prometheusSpec"]["replicas"] for r in releases] == [2] * 3


def test_grafana_admin_password_is_generated_not_the_charts_default(upstream):
    """kube-prometheus-stack's Grafana starts with `adminPassword: prom-operator` unless admin.existingSecret names
    a Secret; ours holds a generated password, which stays a secret output."""
    plan = _component_plan(raw_environment("dev"))
    (release,) = plan.of_type(RELEASE_TYPE)
    admin = release.inputs["values"]["grafana"]["admin"]
    assert admin == {"existingSecret": "grafana-admin"}
    # the chart's default key names, which our Secret uses
    defaults = upstream.chart_values(CHARTS["kube-prometheus-stack"].upstream_values)["grafana"]["admin"]
    assert (defaults["userKey"], defaults["passwordKey"]) == ("admin-user", "admin-password")
    (secret,) = [
        r
        for r in plan.kubernetes_objects()
        if r.inputs["kind"] == "Secret" and r.inputs["metadata"]["name"] == "grafana-admin"
    ]
    assert secret.inputs["metadata"]["namespace"] == release.inputs["namespace"]
    assert secret.inputs["stringData"] == "[secret]"  # admin-user / admin-password, a generated password
    assert secret.urn in release.options["dependsOn"]


def test_grafana_is_exposed_only_on_request():
    raw = raw_environment("dev")
    plan = _component_plan(raw)
    (release,) = plan.of_type(RELEASE_TYPE)
    assert "ingress" not in release.inputs["values"]["grafana"]
    raw["regions"][0]["observability"]["grafana"] = {
        "expose": True,
        "host": "grafana.dev.example.com",
        "tlsSecret": "grafana-tls",
    }
    (release,) = _component_plan(raw).of_type(RELEASE_TYPE)
    assert release.inputs["values"]["grafana"]["ingress"] == {
        "enabled": True,
        "hosts": ["grafana.dev.example.com"],
        "tls": [{"secretName": "grafana-tls", "hosts": ["grafana.dev.example.com"]}],
    }


# --- monitors -------------------------------------------------------------------------------------------

DEV_MONITORS = {
    "dcgm-exporter": "ServiceMonitor",
    "volcano-scheduler": "ServiceMonitor",
    "vllm": "PodMonitor",
    "endpoint-picker": "ServiceMonitor",
    "envoy-proxy": "PodMonitor",
    "envoy-ratelimit": "ServiceMonitor",
    "alluxio": "ServiceMonitor",
}


def test_one_monitor_per_metric_exposing_component(dev_plan, prod_plan):
    assert {n: m["kind"] for n, m in _monitors(dev_plan).items()} == DEV_MONITORS
    # Triton only where a Triton model is placed (prod: usc1).
    # usc1 also has GKE-managed pools (h200, l4): the standalone DCGM exporter's monitor.
    assert {n: m["kind"] for n, m in _monitors(prod_plan, "usc1").items()} == DEV_MONITORS | {
        "triton": "PodMonitor",
        "dcgm-exporter-gke": "ServiceMonitor",
    }
    assert "triton" not in _monitors(prod_plan, "use1")


def test_monitors_follow_what_the_region_runs():
    raw = raw_environment("dev")
    assert set(_monitors(_component_plan(raw))) == set(DEV_MONITORS)
    # (models served with no tenant is refused at config: every call would be)
    raw["models"] = []
    raw["tenants"] = []
    # the cache stays (it is switched on per region), the model servers and their picker go
    assert set(_monitors(_component_plan(raw))) == {"dcgm-exporter", "volcano-scheduler", "alluxio"}
    raw["regions"][0]["modelCache"] = {"enabled": False}
    assert set(_monitors(_component_plan(raw))) == {"dcgm-exporter", "volcano-scheduler"}
    raw["regions"][0]["gpuPools"] = []
    plan = _component_plan(raw)
    assert not _monitors(plan) and not _dashboards(plan) and not plan.of_type(RULE)
    assert plan.of_type(RELEASE_TYPE)  # the stack still monitors the cluster itself


def test_gke_managed_gpu_pools_are_scraped_from_the_standalone_dcgm_exporter():
    raw = raw_environment("prod")
    usc1 = next(i for i, r in enumerate(raw["regions"]) if r["name"] == "usc1")
    plan = _component_plan(raw, usc1)
    assert {"dcgm-exporter", "dcgm-exporter-gke"} <= set(_monitors(plan))  # a100-mig runs the GPU Operator
    raw["regions"][usc1]["gpuPools"] = [p for p in raw["regions"][usc1]["gpuPools"] if p["name"] != "a100-mig"]
    plan = _component_plan(raw, usc1)
    monitors = _monitors(plan)
    assert "dcgm-exporter" not in monitors and "volcano-scheduler" in monitors
    gke = monitors["dcgm-exporter-gke"]["spec"]
    assert gke["namespaceSelector"] == {"matchNames": ["dcgm-exporter"]}
    assert gke["selector"] == {"matchLabels": {"app.kubernetes.io/name": "dcgm-exporter"}}
    assert gke["endpoints"][0]["port"] == "metrics" and gke["attachMetadata"] == {"node": True}
    # The GPU dashboard and the utilisation band alerts have data on GKE-managed pools too.
    assert "inference-gpu.json" in _dashboards(plan)
    assert {"GPUPoolIdle", "GPUPoolSaturated"} <= {r["alert"] for r in _rules(plan)}


def test_monitors_are_selected_by_the_stack_and_wait_for_its_crds(env_plan):
    releases = {env_plan.cluster_of(r): r.urn for r in env_plan.helm_releases() if r.inputs["name"] == RELEASE}
    custom = [r for r in env_plan.resources if r.type in (SERVICE_MONITOR, POD_MONITOR, RULE)]
    assert custom
    for r in custom:
        assert r.inputs["metadata"]["labels"]["release"] == RELEASE
        assert r.inputs["metadata"]["namespace"] == "monitoring"
        assert releases[env_plan.cluster_of(r)] in r.options["dependsOn"]
        assert r.provider is not None


def test_model_server_pod_monitors_select_the_region_models_by_label(prod_plan):
    vllm = _monitors(prod_plan, "use1")["vllm"]["spec"]
    assert vllm["selector"]["matchLabels"] == {"app.kubernetes.io/part-of": "inference-platform"}
    assert vllm["selector"]["matchExpressions"] == [
        {
            "key": "inference-platform.io/model",
            "operator": "In",
            "values": ["llama-3-1-70b", "llama-3-1-8b", "llama-3-1-70b-rag"],
        }
    ]
    assert vllm["namespaceSelector"] == {"matchNames": [SERVING_NAMESPACE]}
    (endpoint,) = vllm["podMetricsEndpoints"]
    assert endpoint["portNumber"] == names.VLLM_METRICS_PORT
    triton = _monitors(prod_plan, "usc1")["triton"]["spec"]
    assert triton["selector"]["matchExpressions"][0]["values"] == ["mistral-7b-trt"]
    assert triton["podMetricsEndpoints"][0]["portNumber"] == names.TRITON_METRICS_PORT


def test_gpu_and_model_series_get_pool_and_model_labels(dev_plan):
    monitors = _monitors(dev_plan)
    pool_source = "__meta_kubernetes_node_label_inference_platform_io_pool"
    for name in ("dcgm-exporter", "vllm"):
        spec = monitors[name]["spec"]
        assert spec["attachMetadata"] == {"node": True}
        endpoints = spec.get("endpoints") or spec["podMetricsEndpoints"]
        relabels = {(r["sourceLabels"][0], r["targetLabel"]) for r in endpoints[0]["relabelings"]}
        assert (pool_source, POOL_LABEL) in relabels
    vllm_relabels = monitors["vllm"]["spec"]["podMetricsEndpoints"][0]["relabelings"]
    assert {"sourceLabels": ["__meta_kubernetes_pod_label_inference_platform_io_model"], "targetLabel": MODEL_LABEL, "action": "replace"} in vllm_relabels  # fmt: skip


def test_upstream_selectors(dev_plan):
    monitors = _monitors(dev_plan)
    dcgm = monitors["dcgm-exporter"]["spec"]
    assert dcgm["selector"] == {"matchLabels": {"app": "nvidia-dcgm-exporter"}}
    assert dcgm["namespaceSelector"] == {"matchNames": ["gpu-operator"]}
    assert dcgm["endpoints"][0]["port"] == "gpu-metrics"
    assert monitors["volcano-scheduler"]["spec"]["namespaceSelector"] == {"matchNames": ["volcano-system"]}
    epp = monitors["endpoint-picker"]["spec"]["endpoints"][0]
    assert epp["port"] == "http-metrics" and epp["bearerTokenFile"]
    assert epp["relabelings"][0]["regex"] == ".+-epp"
    assert [
        (e.get("port"), e.get("portNumber"), e["path"]) for e in monitors["envoy-proxy"]["spec"]["podMetricsEndpoints"]
    ] == [
        ("metrics", None, "/stats/prometheus"),
        (None, 1064, "/metrics"),
    ]
    for monitor in monitors.values():
        assert monitor["metadata"]["annotations"]["inference-platform.io/selector-source"]


def test_existing_prometheus_gets_only_monitors_rules_and_dashboards():
    raw = raw_environment("dev")
    raw["regions"][0]["observability"] = {
        "existingPrometheus": {"namespace": "observability", "monitorLabels": {"prometheus": "main"}}
    }
    # Its URL is not known to the platform: the autoscalers are told where it is.
    raw["regions"][0]["serving"] = {"prometheusUrl": "http://prometheus.observability.svc:9090"}
    plan = _component_plan(raw)
    assert not plan.of_type(RELEASE_TYPE) and not plan.of_type(NAMESPACE)
    monitors = _monitors(plan)
    assert set(monitors) == set(DEV_MONITORS)
    for r in plan.resources:
        if r.type in (SERVICE_MONITOR, POD_MONITOR, RULE, CONFIG_MAP):
            assert r.inputs["metadata"]["namespace"] == "observability"
            assert r.options["dependsOn"] == []
    for r in plan.resources:
        if r.type in (SERVICE_MONITOR, POD_MONITOR, RULE):
            assert r.inputs["metadata"]["labels"]["prometheus"] == "main"
            assert "release" not in r.inputs["metadata"]["labels"]


@pytest.mark.plan
def test_disabled_region_gets_nothing():
    raw = raw_environment("dev")
    raw["regions"][0]["observability"] = {"enabled": False}
    raw["regions"][0]["serving"] = {"prometheusUrl": "https://prometheus.elsewhere.example:9090"}
    plan = plan_config({f"inference-platform:{k}": v for k, v in raw.items()})
    assert not plan.of_type("inference-platform:addons:Observability")
    assert not [r for r in plan.resources if r.type.startswith("kubernetes:monitoring.coreos.com")]


# --- alerts ---------------------------------------------------------------------------------------------


def test_alert_expressions_parse_and_use_only_known_metrics(env_plan):
    rules = _rules(env_plan)
    assert rules
    for rule in rules:
        unknown = metric_names(rule["expr"]) - metrics.KNOWN_SERIES
        assert not unknown, f"{rule['alert']}: unknown metrics {unknown}"
        assert rule["labels"]["severity"] in {"info", "warning", "critical"}
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]


def test_alerts_cover_the_seed_objectives(prod_plan):
    assert {r["alert"] for r in _rules(prod_plan, "use1")} == {
        "InferenceTTFTP95OverSLO",
        "InferenceKVCacheNearFull",
        "InferenceQueueGrowing",
        "GPUPoolIdle",
        "GPUPoolSaturated",
        "GPUXidError",
        "ModelCacheHitRatioCollapsed",
    }


def test_ttft_objective_per_model_from_its_slo_or_the_region_default(prod_plan):
    def objectives(region):
        return {
            r["labels"][MODEL_LABEL]: r["expr"].rsplit(" > ", 1)[1]
            for r in _rules(prod_plan, region)
            if r["alert"] == "InferenceTTFTP95OverSLO"
        }

    assert objectives("use1") == {"llama-3-1-70b": "2.5", "llama-3-1-8b": "1", "llama-3-1-70b-rag": "2.5"}
    # usc1 serves the 70b model (vLLM) and a Triton model, which has no TTFT histogram.
    assert objectives("usc1") == {"llama-3-1-70b": "2.5"}
    # dev's model sets no slo: the region default (2s) applies.
    raw = raw_environment("dev")
    dev = {r["labels"][MODEL_LABEL]: r["expr"] for r in _rules(_component_plan(raw)) if "TTFT" in r["alert"]}
    assert dev["llama-3-1-8b"].endswith(" > 2")
    assert f'{MODEL_LABEL}="llama-3-1-8b"' in dev["llama-3-1-8b"]


def test_thresholds_come_from_config():
    raw = raw_environment("dev")
    raw["regions"][0]["observability"]["thresholds"] = {
        "kvCacheNearFull": 0.85,
        "gpuIdleBelowPercent": 50,
        "gpuSaturatedAbovePercent": 90,
        "queueWaitingRequests": 25,
        "cacheHitRatioBelow": 0.7,
        "ttftP95Seconds": 3,
    }
    exprs = {r["alert"]: r["expr"] for r in _rules(_component_plan(raw))}
    assert exprs["InferenceKVCacheNearFull"].endswith(" > 0.85")
    assert exprs["GPUPoolIdle"].endswith(" < 50")
    assert exprs["GPUPoolSaturated"].endswith(" > 90")
    assert " > 25 and " in exprs["InferenceQueueGrowing"]
    assert exprs["ModelCacheHitRatioCollapsed"].endswith(" < 0.7")
    assert exprs["InferenceTTFTP95OverSLO"].endswith(" > 3")


def test_default_gpu_band_is_the_seeds_60_to_80_percent(dev_plan):
    exprs = {r["alert"]: r["expr"] for r in _rules(dev_plan)}
    assert exprs["GPUPoolIdle"].endswith(" < 60") and exprs["GPUPoolSaturated"].endswith(" > 80")
    assert f"avg by ({POOL_LABEL})" in exprs["GPUPoolIdle"]


# --- dashboards -----------------------------------------------------------------------------------------


def test_dashboards_are_sidecar_configmaps_in_the_monitoring_namespace(dev_plan):
    maps = [r for r in dev_plan.of_type(CONFIG_MAP) if "grafana_dashboard" in r.inputs["metadata"].get("labels", {})]
    assert len(maps) == 5
    for r in maps:
        assert DASHBOARD_LABEL.items() <= r.inputs["metadata"]["labels"].items()
        assert r.inputs["metadata"]["namespace"] == "monitoring"
    assert set(_dashboards(dev_plan)) == {
        "inference-serving.json",
        "inference-gpu.json",
        "inference-gateway.json",
        "inference-cache.json",
        "inference-showback.json",
    }


def test_dashboard_queries_parse_and_use_only_known_metrics(env_plan):
    # the serving, gateway, GPU, cache and showback dashboards
    assert len(_dashboards(env_plan)) == 5, "dashboards declared"
    for name, dashboard in _dashboards(env_plan).items():
        assert dashboard["uid"] and dashboard["title"] and dashboard["panels"]
        exprs = _panel_exprs(dashboard)
        assert exprs, name
        for expr in exprs:
            unknown = metric_names(expr) - metrics.KNOWN_SERIES
            assert not unknown, f"{name}: unknown metrics {unknown} in {expr}"
        for variable in dashboard["templating"]["list"]:
            if variable["type"] == "query":
                metric = variable["query"]["query"].removeprefix("label_values(").split(",")[0]
                assert metric in metrics.KNOWN_SERIES, f"{name}: variable {variable['name']} on {metric}"


def test_dashboards_show_the_seed_metrics(prod_plan):
    dashboards = _dashboards(prod_plan, "usc1")
    used = {n for d in dashboards.values() for e in _panel_exprs(d) for n in metric_names(e)}
    seed = {
        metrics.VLLM_TTFT.bucket,
        metrics.VLLM_TPOT.bucket,
        metrics.VLLM_QUEUE_TIME.bucket,
        metrics.VLLM_GENERATION_TOKENS.name,
        metrics.VLLM_PROMPT_TOKENS.name,
        metrics.VLLM_RUNNING.name,
        metrics.VLLM_WAITING.name,
        metrics.VLLM_KV_CACHE_USAGE.name,
        metrics.VLLM_PREFIX_CACHE_HITS.name,
        metrics.VLLM_ITERATION_TOKENS.bucket,
        metrics.DCGM_GPU_UTIL.name,
        metrics.DCGM_FB_USED.name,
        metrics.DCGM_POWER_USAGE.name,
        metrics.DCGM_XID_ERRORS.name,
        metrics.GEN_AI_TOKEN_USAGE.sum,
        metrics.RATELIMIT_OVER_LIMIT.name,
        metrics.ALLUXIO_BYTES_READ_UFS.name,
        metrics.TRITON_REQUEST_SUCCESS.name,
    }
    assert seed <= used, seed - used
    gateway = dashboards["inference-gateway.json"]
    assert TENANT_LABEL == "tenant_id"
    assert any(f"by ({TENANT_LABEL}" in e for e in _panel_exprs(gateway))


def test_dashboard_panels_do_not_overlap(dev_plan):
    # the serving, gateway, GPU, cache and showback dashboards
    assert len(_dashboards(dev_plan)) == 5, "dashboards declared"
    for name, dashboard in _dashboards(dev_plan).items():
        cells = set()
        for panel in dashboard["panels"]:
            pos = panel["gridPos"]
            for x in range(pos["x"], pos["x"] + pos["w"]):
                for y in range(pos["y"], pos["y"] + pos["h"]):
                    assert (x, y) not in cells, f"{name}: panel {panel['title']} overlaps"
                    cells.add((x, y))
        assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])


# --- plan.md --------------------------------------------------------------------------------------------


def test_plan_md_lists_monitors_dashboards_and_alerts_per_region(prod_plan):
    from tools.plan.report import render_markdown

    md = render_markdown(prod_plan)
    section = md.split("## Observability\n", 1)[1].split("\n## ", 1)[0]
    usc1 = next(line for line in section.splitlines() if line.startswith("| usc1 |"))
    assert "kube-prometheus-stack 88.5.3" in usc1
    assert (
        "| 9 (alluxio, dcgm-exporter, dcgm-exporter-gke, endpoint-picker, envoy-proxy, envoy-ratelimit, triton, vllm"
        in usc1
    )
    assert usc1.endswith("| 5 | 7 | yes | no |")
