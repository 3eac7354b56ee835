"""Helm releases, namespaces and custom resources on a cluster, with the platform's defaults."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.catalog.charts import ChartRef
from components.k8s import names
from components.k8s.cluster import ClusterHandle, ClusterTarget
from platform_catalog.pod_priorities import GKE_CRITICAL_PRIORITY_CLASSES

PodSecurity = Literal["restricted", "baseline", "privileged"]


def namespace(
    name: str,
    cluster: ClusterTarget,
    parent: pulumi.Resource,
    pod_security: PodSecurity = "baseline",
    labels: Mapping[str, str] | None = None,
    retain_on_delete: bool = False,
) -> k8s.core.v1.Namespace:
    """A namespace with Pod Security admission enforced; `privileged` only where a component must.
    `retain_on_delete`: for one holding what is kept (deleting a namespace deletes everything in it)."""
    return k8s.core.v1.Namespace(
        f"{cluster.name}-{name}",
        metadata={
            "name": name,
            "labels": {
                "pod-security.kubernetes.io/enforce": pod_security,
                "pod-security.kubernetes.io/warn": pod_security,
                **(labels or {}),
            },
        },
        opts=pulumi.ResourceOptions(
            parent=parent,
            provider=cluster.provider,
            depends_on=cluster.ready,
            retain_on_delete=retain_on_delete or None,
        ),
    )


# Checkov reads a DeploymentPatch as a whole Deployment: every pod check fails on the one field it sets.
PATCH_SKIPPED_CHECKS = (
    "CKV_K8S_8", "CKV_K8S_9", "CKV_K8S_10", "CKV_K8S_11", "CKV_K8S_12", "CKV_K8S_13", "CKV_K8S_14", "CKV_K8S_15",
    "CKV_K8S_20", "CKV_K8S_22", "CKV_K8S_23", "CKV_K8S_28", "CKV_K8S_29", "CKV_K8S_30", "CKV_K8S_31", "CKV_K8S_37",
    "CKV_K8S_38", "CKV_K8S_40", "CKV_K8S_43",
)  # fmt: skip


def chart_patch_skips(chart: str, deployment: str, sets: str) -> dict[str, str]:
    """Checkov's skips on a patch that sets only `sets` of a chart's Deployment: what each check reads is not in the
    patch but in the chart's Deployment, which Helm renders at deploy and `make checkov` does not scan."""
    reason = (
        f"a server-side-apply patch setting only {sets} of the {chart} chart's {deployment} Deployment; "
        "what this check reads stays the chart's, which make checkov does not scan (Helm renders it at deploy)"
    )
    return names.checkov_skips(dict.fromkeys(PATCH_SKIPPED_CHECKS, reason))


def helm_release(
    release: str,
    chart: ChartRef,
    cluster: ClusterHandle,
    ns: k8s.core.v1.Namespace,
    values: Mapping[str, Any],
    parent: pulumi.Resource,
    depends_on: Sequence[pulumi.Resource] = (),
    timeout_seconds: int = 900,
    secret_values: Mapping[str, Any] | None = None,
    wait: bool = True,
) -> k8s.helm.v3.Release:
    """A pinned, atomic Helm release into an existing namespace on the cluster's provider.

    `secret_values` (private keys, tokens) go in a separate values file that is a Pulumi secret, merged
    under `values`: the rest of the values stay readable in previews and plans. `wait=False`: the release does
    not wait for its workloads (HELM_RELEASE_WAITS), for one whose pods need what a later step or stack creates.
    """
    if cluster.region.critical_pods_need_quota and chart.pods.priority_classes(values) & set(
        GKE_CRITICAL_PRIORITY_CLASSES
    ):
        depends_on = [*depends_on, critical_pods_quota(cluster, ns, parent)]
    chart_args: dict[str, Any] = (
        {"chart": f"{chart.repository}/{chart.name}"}
        if chart.is_oci
        else {"chart": chart.name, "repository_opts": {"repo": chart.repository}}
    )
    return k8s.helm.v3.Release(
        f"{cluster.name}-{release}",
        name=release,
        version=chart.version,
        namespace=ns.metadata["name"],
        create_namespace=False,
        values=dict(values),
        # `atomic` would turn skipAwait back off (Release.atomic docs): a release that does not wait is not atomic.
        **({"atomic": True} if wait else {"skip_await": True}),
        cleanup_on_fail=True,
        max_history=10,
        timeout=timeout_seconds,
        **({"value_yaml_files": [_secret_values_file(secret_values)]} if secret_values else {}),
        **chart_args,
        opts=pulumi.ResourceOptions(
            parent=parent, provider=cluster.provider, depends_on=[ns, *cluster.ready, *depends_on]
        ),
    )


def release_digest(chart: ChartRef, values: Mapping[str, Any]) -> str:
    """What a release installs, in 12 hex digits: it changes exactly when the release upgrades (chart or values)."""
    document = json.dumps([chart.name, chart.version, values], sort_keys=True)
    return hashlib.sha256(document.encode()).hexdigest()[:12]


def awaited_webhook_service(
    service: str,
    *,
    release: k8s.helm.v3.Release,
    installed: str,
    namespace: str,
    cluster: ClusterHandle,
    label_domain: str,
    parent: pulumi.Resource,
) -> k8s.core.v1.ServicePatch:
    """The Service a release's webhooks are called through, awaited until it serves: what the webhooks admit
    (failurePolicy Fail) depends on this, not on the release alone.

    Helm's wait ends when the webhook's pods are Ready; the API server calls it through the Service's endpoints,
    which the endpoints controller fills a moment later, and refuses the request until then
    (upstream.WEBHOOK_CALLED_THROUGH_SERVICE_ENDPOINTS). A Patch waits as its kind does
    (upstream.PULUMI_PATCH_AWAITS): for a Service, until its endpoints are ready and settled
    (upstream.PULUMI_SERVICE_AWAITS_SETTLED_ENDPOINTS): the webhook's pods have then been Ready for 10 s, in which the
    endpoints controller lists them. The patch owns one annotation, which the chart never sets; its value is
    `installed` (release_digest), so an upgrade of the release, which rolls the webhook's pods, changes the patch
    and Pulumi waits again (a Patch is awaited only when its inputs change)."""
    return k8s.core.v1.ServicePatch(
        f"{cluster.name}-{service}-serving",
        metadata={
            "name": service,
            "namespace": namespace,
            "annotations": {f"{label_domain}/awaited-before-webhook-calls": installed},
        },
        opts=pulumi.ResourceOptions(parent=parent, provider=cluster.provider, depends_on=[release]),
    )


def custom_resource(
    resource_name: str,
    manifest: Mapping[str, Any],
    *,
    cluster: ClusterTarget,
    parent: pulumi.Resource,
    crd_from: Sequence[pulumi.Resource],
    depends_on: Sequence[pulumi.Resource] = (),
    replace_on_changes: Sequence[str] = (),
) -> k8s.apiextensions.CustomResource:
    """A custom resource (`apiVersion`, `kind`, `metadata`, `spec` of `manifest`) on the cluster's provider.

    It waits for `crd_from`, what installs its CRD (a release, CRD files, the control plane that serves the
    API), so the API server knows the kind when it is created; `depends_on` adds what else it needs first
    (the cluster, its namespace, a webhook). `replace_on_changes`: input paths whose change its controller would
    not apply to the live object, so it is replaced instead, deleted first since its name stays
    (upstream.PULUMI_REPLACES_ON_CHANGES_AS_TOLD).
    """
    return k8s.apiextensions.CustomResource(
        resource_name,
        api_version=manifest["apiVersion"],
        kind=manifest["kind"],
        metadata=manifest["metadata"],
        spec=manifest["spec"],
        opts=pulumi.ResourceOptions(
            parent=parent,
            provider=cluster.provider,
            depends_on=[*crd_from, *depends_on],
            replace_on_changes=list(replace_on_changes) or None,
            delete_before_replace=True if replace_on_changes else None,
        ),
    )


def created_pods_quota(
    cluster: ClusterHandle,
    chart: ChartRef,
    values: Mapping[str, Any],
    kind: str,
    ns: k8s.core.v1.Namespace,
    parent: pulumi.Resource,
) -> list[k8s.core.v1.ResourceQuota]:
    """What a `kind` custom resource in `ns` waits for so that the pods `chart`'s controller creates for it there are
    admitted: the critical-pods quota on GKE when they are system-*-critical with `values` (the release's), else
    nothing."""
    if cluster.region.critical_pods_need_quota and chart.pods.created_pod_classes(values, kind) & set(
        GKE_CRITICAL_PRIORITY_CLASSES
    ):
        return [critical_pods_quota(cluster, ns, parent)]
    return []


def critical_pods_quota(
    cluster: ClusterHandle, ns: k8s.core.v1.Namespace, parent: pulumi.Resource
) -> k8s.core.v1.ResourceQuota:
    """The namespace's ResourceQuota for system-*-critical pods, without which GKE rejects them (one per namespace).

    `hard.pods` is the bound GKE's own kube-system quota uses: it admits, it does not limit.
    """
    key = ns.pulumi_resource_name
    if key not in cluster.critical_pod_quotas:
        cluster.critical_pod_quotas[key] = k8s.core.v1.ResourceQuota(
            f"{key}-critical-pods",
            metadata={"name": "critical-pods", "namespace": ns.metadata["name"]},
            spec={
                "hard": {"pods": "1G"},
                "scopeSelector": {
                    "matchExpressions": [
                        {
                            "scopeName": "PriorityClass",
                            "operator": "In",
                            "values": list(GKE_CRITICAL_PRIORITY_CLASSES),
                        }
                    ]
                },
            },
            opts=pulumi.ResourceOptions(parent=parent, provider=cluster.provider, depends_on=[ns]),
        )
    return cluster.critical_pod_quotas[key]


def _secret_values_file(values: Mapping[str, Any]) -> pulumi.Output[pulumi.Asset]:
    return pulumi.Output.secret(values).apply(lambda v: pulumi.StringAsset(yaml.safe_dump(v, sort_keys=False)))
