"""Per-cluster observability: kube-prometheus-stack (or an existing Prometheus) plus the platform's
monitors, Grafana dashboards and alerting rules.

With `existingPrometheus`, nothing is installed: the monitors, rules and dashboard ConfigMaps
go to the existing stack's namespace with the labels its selectors need, and the Prometheus
Operator CRDs (monitoring.coreos.com/v1) must already be in the cluster. That stack's Prometheus
needs list/watch on nodes (monitors attach node metadata to label GPUs with their pool) and
GET on the /metrics non-resource URL (the endpoint picker authenticates scrapers).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random

from components.addons.alerts import alert_groups
from components.addons.dashboards import DASHBOARD_LABEL, dashboards
from components.addons.scrape_targets import ObservedScope, scrape_targets
from components.addons.showback import showback_dashboard
from components.catalog.charts import CHARTS, KUBE_PROMETHEUS_CRD_UPGRADE_IMAGES
from components.config.observability import ObservabilitySpec
from components.k8s import names
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import custom_resource, helm_release, namespace
from components.k8s.inputs import InputError
from platform_catalog.names import annotation

GRAFANA_ADMIN_SECRET = "grafana-admin"  # read by the chart through grafana.admin.existingSecret
# The remote write's basic-auth credentials, from the config: the operator makes no Prometheus while a Secret its
# remoteWrite names is missing (upstream.PROMETHEUS_OPERATOR_WAITS_FOR_REMOTE_WRITE_SECRETS), so it precedes the
# release.
REMOTE_WRITE_SECRET = "remote-write-credentials"
# The node exporter (opt-in) needs hostNetwork/hostPID/hostPath: its own privileged namespace
# keeps the rest of the monitoring stack under the baseline profile.
NODE_EXPORTER_NAMESPACE = "node-exporter"
RELEASE = "kube-prometheus-stack"
# kube-prometheus-stack's Prometheus selects monitors and rules labelled with its release
# (prometheus.prometheusSpec.*SelectorNilUsesHelmValues: true, FACTS-2.md).
RELEASE_LABELS = {"release": RELEASE}
# Service `<fullname>-prometheus`; the fullname is the release name when it contains the chart name.
PROMETHEUS_URL = f"http://{RELEASE}-prometheus.{names.MONITORING_NAMESPACE}.svc:9090"
MONITORING_API = "monitoring.coreos.com/v1"


def stack_values(cluster_name: str, region_name: str, obs: ObservabilitySpec, production: bool) -> dict[str, Any]:
    """kube-prometheus-stack values for a managed (EKS/GKE) cluster."""
    # Managed control planes expose no controller-manager, scheduler or etcd metrics, and
    # kube-proxy binds its metrics to localhost: scraping them would only raise TargetDown.
    unreachable = ("kubeControllerManager", "kubeScheduler", "kubeEtcd", "kubeProxy")
    prometheus: dict[str, Any] = {
        "retention": obs.retention,
        # Keep the series of each cluster apart in Grafana, federation and long-term storage.
        "externalLabels": {"cluster": cluster_name, "region": region_name},
        "replicas": 2 if production else 1,
        "resources": {"requests": {"cpu": "500m", "memory": "2Gi"}, "limits": {"memory": "8Gi"}},
        "serviceMonitorSelectorNilUsesHelmValues": True,
        "podMonitorSelectorNilUsesHelmValues": True,
        "ruleSelectorNilUsesHelmValues": True,
    }
    if obs.remote_write is not None:
        target: dict[str, Any] = {"url": obs.remote_write.url}
        if obs.remote_write.password is not None:
            target["basicAuth"] = {
                "username": {"name": REMOTE_WRITE_SECRET, "key": "username"},
                "password": {"name": REMOTE_WRITE_SECRET, "key": "password"},
            }
        prometheus["remoteWrite"] = [target]
    values: dict[str, Any] = {
        # Helm installs the chart's crds/ once and never upgrades them: the chart's own Job applies them before
        # every install and upgrade (upstream.HELM_NEVER_UPGRADES_A_CHARTS_CRDS_FOLDER).
        "crds": {
            "enabled": True,
            "upgradeJob": {
                "enabled": True,
                "image": KUBE_PROMETHEUS_CRD_UPGRADE_IMAGES,
                "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
            },
        },
        "defaultRules": {
            "rules": {
                "etcd": False,
                "kubeControllerManager": False,
                "kubeSchedulerAlerting": False,
                "kubeSchedulerRecording": False,
                "kubeProxy": False,
                "nodeExporterAlerting": obs.node_exporter,
                "nodeExporterRecording": obs.node_exporter,
            }
        },
        **{component: {"enabled": False} for component in unreachable},
        "nodeExporter": {"enabled": obs.node_exporter},
        "prometheus": {"prometheusSpec": prometheus},
    }
    if obs.node_exporter:
        values["prometheus-node-exporter"] = {"namespaceOverride": NODE_EXPORTER_NAMESPACE}
    # The chart's Grafana otherwise starts with its default admin password (values.yaml `adminPassword`).
    # Its keys are the chart's defaults, admin.userKey admin-user and admin.passwordKey admin-password.
    values["grafana"] = {"admin": {"existingSecret": GRAFANA_ADMIN_SECRET}}
    if obs.grafana.expose:
        values["grafana"]["ingress"] = {
            "enabled": True,
            "hosts": [obs.grafana.host],
            "tls": [{"secretName": obs.grafana.tls_secret, "hosts": [obs.grafana.host]}],
        }
    return values


@dataclass(frozen=True, kw_only=True)
class ObservabilityArgs:
    cluster: ClusterHandle
    region_name: str  # the region entry's: Prometheus' `region` external label
    spec: ObservabilitySpec  # the region's observability settings
    scope: ObservedScope  # what the region runs that exposes metrics
    label_domain: str
    production: bool
    ttft_objectives: Mapping[str, float] = field(default_factory=dict)  # vLLM model -> TTFT p95 objective, seconds
    showback: Sequence[dict[str, Any]] = ()  # the recording-rule groups of the models' costs (showback_groups)

    def __post_init__(self) -> None:
        unserved = sorted(set(self.ttft_objectives) - set(self.scope.vllm_models))
        if unserved:
            served = ", ".join(self.scope.vllm_models) or "none"
            raise InputError("ttft_objectives", f"{', '.join(unserved)} not among the vLLM models served: {served}")


class Observability(pulumi.ComponentResource):
    """Metrics, dashboards and alerts of one cluster, scoped to what its region runs."""

    def _grafana_admin(self, cluster: ClusterHandle, ns: pulumi.Resource) -> k8s.core.v1.Secret:
        """Grafana's admin login: a generated password (a secret output), in the Secret the chart reads."""
        password = random.RandomPassword(
            f"{cluster.name}-grafana-admin",
            length=32,
            special=False,
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=random.Provider(f"{cluster.name}-grafana-admin", opts=pulumi.ResourceOptions(parent=self)),
            ),
        )
        return k8s.core.v1.Secret(
            f"{cluster.name}-{GRAFANA_ADMIN_SECRET}",
            metadata={"name": GRAFANA_ADMIN_SECRET, "namespace": names.MONITORING_NAMESPACE},
            string_data={"admin-user": "admin", "admin-password": password.result},
            opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[*cluster.ready, ns]),
        )

    def _remote_write_credentials(
        self, cluster: ClusterHandle, ns: k8s.core.v1.Namespace, obs: ObservabilitySpec
    ) -> list[k8s.core.v1.Secret]:
        """The remote write's basic-auth Secret, the password a Pulumi secret; none without credentials."""
        remote = obs.remote_write
        if remote is None or remote.password is None:
            return []
        return [
            k8s.core.v1.Secret(
                f"{cluster.name}-{REMOTE_WRITE_SECRET}",
                metadata={"name": REMOTE_WRITE_SECRET, "namespace": names.MONITORING_NAMESPACE},
                string_data={
                    "username": remote.username or "",
                    "password": pulumi.Output.secret(remote.password.get_secret_value()),
                },
                opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[*cluster.ready, ns]),
            )
        ]

    namespace: str
    monitor_labels: dict[str, str]
    prometheus_url: str | None

    def __init__(self, name: str, args: ObservabilityArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:Observability", name, None, opts)
        cluster, obs = args.cluster, args.spec
        existing = obs.existing_prometheus
        crds_from: list[pulumi.Resource] = []  # the release installing the Prometheus Operator CRDs
        in_namespace: list[pulumi.Resource] = []  # our monitoring namespace, when we create it
        if existing is None:
            self.namespace, self.monitor_labels, self.prometheus_url = (
                names.MONITORING_NAMESPACE,
                RELEASE_LABELS,
                PROMETHEUS_URL,
            )
            ns = namespace(names.MONITORING_NAMESPACE, cluster, self)
            node_exporter_ns = (
                [namespace(NODE_EXPORTER_NAMESPACE, cluster, self, pod_security="privileged")]
                if obs.node_exporter
                else []
            )
            admin = self._grafana_admin(cluster, ns)
            credentials = self._remote_write_credentials(cluster, ns, obs)
            release = helm_release(
                RELEASE,
                CHARTS["kube-prometheus-stack"],
                cluster,
                ns,
                stack_values(cluster.name, args.region_name, obs, args.production),
                parent=self,
                depends_on=[*node_exporter_ns, admin, *credentials],
            )
            crds_from, in_namespace = [release], [ns]
        else:
            self.namespace, self.monitor_labels, self.prometheus_url = existing.namespace, existing.monitor_labels, None

        def opts_for(*depends_on: pulumi.Resource) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(
                parent=self, provider=cluster.provider, depends_on=[*cluster.ready, *depends_on]
            )

        def metadata(
            object_name: str, labels: dict[str, str], annotations: dict[str, str] | None = None
        ) -> dict[str, Any]:
            meta: dict[str, Any] = {
                "name": object_name,
                "namespace": self.namespace,
                "labels": {names.PART_OF_LABEL: names.PLATFORM_PART_OF, **labels},
            }
            if annotations:
                meta["annotations"] = annotations
            return meta

        scope = args.scope
        targets = scrape_targets(scope, args.label_domain)
        boards = dashboards(scope)
        if args.showback:
            boards["showback"] = showback_dashboard()
        groups = alert_groups(scope, obs.thresholds, args.ttft_objectives) + list(args.showback)
        after_crds = partial(
            custom_resource,
            cluster=cluster,
            parent=self,
            crd_from=crds_from,
            depends_on=[*cluster.ready, *in_namespace],
        )
        self.monitors = [
            after_crds(
                f"{cluster.name}-{target.name}-monitor",
                {
                    "apiVersion": MONITORING_API,
                    "kind": target.kind,
                    "metadata": metadata(
                        target.name, self.monitor_labels, {annotation("selector-source"): target.source}
                    ),
                    "spec": target.spec(),
                },
            )
            for target in targets
        ]
        self.dashboards = [
            k8s.core.v1.ConfigMap(
                f"{cluster.name}-{board}-dashboard",
                metadata=metadata(f"inference-{board}-dashboard", DASHBOARD_LABEL),
                data={f"inference-{board}.json": json.dumps(model, indent=1, sort_keys=True)},
                opts=opts_for(*in_namespace),
            )
            for board, model in boards.items()
        ]
        self.rules = (
            after_crds(
                f"{cluster.name}-inference-alerts",
                {
                    "apiVersion": MONITORING_API,
                    "kind": "PrometheusRule",
                    "metadata": metadata("inference-platform", self.monitor_labels),
                    "spec": {"groups": groups},
                },
            )
            if groups
            else None
        )
        self.register_outputs(
            {
                "namespace": self.namespace,
                "prometheusUrl": self.prometheus_url,
                "monitors": [t.name for t in targets],
                "dashboards": sorted(boards),
            }
        )
