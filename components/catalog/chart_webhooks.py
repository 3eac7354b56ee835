"""Which kinds each pinned chart's admission webhooks admit with failurePolicy Fail, and the Service the API server
calls for them: an object of such a kind is refused until that Service has a ready endpoint, which comes a moment
after the release's wait ends (upstream.WEBHOOK_CALLED_THROUGH_SERVICE_ENDPOINTS). The program makes what it creates
of these kinds wait for the Service (components/k8s/helm.py awaited_webhook_service); the rollout's bring-up check
(tools/rollout/bringup.py) holds every stack to it.

Read from each chart's files at its pinned tag (sources in upstream.KSERVE_AND_VOLCANO_WEBHOOK_SERVICES). Kinds whose
objects only controllers create (pods of an InferenceService, Volcano's PodGroups) are left out: a controller
retries a refused create.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from components.catalog.chart_crds import GroupKind


@dataclass(frozen=True)
class ChartWebhook:
    service: str  # in the release's namespace; "{release}" stands for the release's name
    admits: frozenset[GroupKind]
    # The release itself waits until the webhook answers (a post-install hook that calls it): nothing more to await.
    awaited_by_release: bool = False
    # Whose objects it admits: the release's own cluster's, or (Karmada's chart in host mode) the Karmada API's that
    # the release runs, which calls the webhook by a URL naming the Service on the release's cluster.
    admits_in: Literal["cluster", "karmada-api"] = "cluster"

    def service_of(self, release: str) -> str:
        return self.service.format(release=release)


_KSERVE = "serving.kserve.io"

CHART_WEBHOOKS: dict[str, tuple[ChartWebhook, ...]] = {
    "kserve-resources": (
        ChartWebhook(
            "kserve-webhook-server-service",
            frozenset(
                (_KSERVE, kind)
                for kind in (
                    "InferenceService",
                    "ServingRuntime",
                    "ClusterServingRuntime",
                    "InferenceGraph",
                    "TrainedModel",
                )
            ),
        ),
    ),
    "kserve-llmisvc-resources": (
        ChartWebhook(
            "llmisvc-webhook-server-service",
            frozenset({(_KSERVE, "LLMInferenceService"), (_KSERVE, "LLMInferenceServiceConfig")}),
        ),
    ),
    "volcano": (
        ChartWebhook(
            "{release}-admission-service",
            frozenset(
                {
                    ("scheduling.volcano.sh", "Queue"),
                    ("topology.volcano.sh", "HyperNode"),
                    ("batch.volcano.sh", "Job"),
                    ("batch.volcano.sh", "CronJob"),
                }
            ),
        ),
    ),
    # karmada-io/karmada@v1.18.2:charts/karmada/templates/_karmada_webhook_configuration.tpl L13-L273 (by URL
    # https://<release>-webhook.<namespace>.svc, every one failurePolicy Fail).
    "karmada": (
        ChartWebhook(
            "{release}-webhook",
            frozenset(
                {
                    ("policy.karmada.io", "PropagationPolicy"),
                    ("policy.karmada.io", "ClusterPropagationPolicy"),
                    ("policy.karmada.io", "OverridePolicy"),
                    ("policy.karmada.io", "ClusterOverridePolicy"),
                    ("policy.karmada.io", "FederatedResourceQuota"),
                    ("config.karmada.io", "ResourceInterpreterCustomization"),
                    ("config.karmada.io", "ResourceInterpreterWebhookConfiguration"),
                    ("autoscaling.karmada.io", "FederatedHPA"),
                    ("networking.karmada.io", "MultiClusterService"),
                    ("networking.karmada.io", "MultiClusterIngress"),
                }
            ),
            admits_in="karmada-api",
        ),
    ),
    # startupapicheck (on by default) is a post-install hook that runs `check api --wait`: the release's install
    # ends only once the webhook answers.
    "cert-manager": (
        ChartWebhook(
            "{release}-webhook",
            frozenset({("cert-manager.io", "*"), ("acme.cert-manager.io", "*")}),
            awaited_by_release=True,
        ),
    ),
}

# Kinds a chart's own templates create with our values, which another release's webhook admits: Helm creates them
# once, unretried, so that release's webhook must serve before this release installs.
# kserve/kserve@v0.20.0:charts/kserve-runtime-configs (llmisvcConfigs.enabled, components/addons/kserve.py).
# envoyproxy/ai-gateway@v1.1.0:manifests/charts/ai-gateway-helm/templates/admission_webhook.yaml L40-61
# (controller.mutatingWebhook.certManager.enable, components/addons/inference_gateway.py).
CHART_CREATES: dict[str, frozenset[GroupKind]] = {
    "kserve-runtime-configs": frozenset({(_KSERVE, "LLMInferenceServiceConfig")}),
    "ai-gateway-helm": frozenset({("cert-manager.io", "Certificate"), ("cert-manager.io", "Issuer")}),
}


def admitting(group: str, kind: str) -> dict[str, ChartWebhook]:
    """Chart -> its webhook that admits (group, kind)."""
    return {
        chart: hook
        for chart, hooks in CHART_WEBHOOKS.items()
        for hook in hooks
        if (group, kind) in hook.admits or (group, "*") in hook.admits
    }
