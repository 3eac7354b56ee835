"""A model served on one cluster: its InferenceService and what keeps it available and scaled.

The manifests are pure data (`deployment.py`, `autoscaling.py`); this component only places them on
the cluster, after what they refer to exists: KServe's controller and runtimes, Volcano's queues and
PriorityClasses, the serving namespace and service account, the cache's PVC, KEDA's CRDs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.k8s.cluster import ClusterTarget
from components.k8s.helm import custom_resource
from components.k8s.inputs import InputError
from components.serving import llm_inference_service as llmisvc
from components.serving.autoscaling import scaled_object_manifest
from components.serving.deployment import (
    ModelPlacement,
    inference_service_manifest,
    network_policy_manifest,
    pod_disruption_budget_manifest,
    pod_group_manifest,
)


@dataclass(frozen=True, kw_only=True)
class KedaScaling:
    """What a KEDA-autoscaled placement needs: the release installing ScaledObject's CRD, and the Prometheus its
    triggers query."""

    release: pulumi.Resource
    prometheus_url: str


@dataclass(frozen=True, kw_only=True)
class ModelDeploymentArgs:
    cluster: ClusterTarget
    placement: ModelPlacement
    storage_uri: str
    # KServe's controller and runtimes, Volcano, the serving identity and the cache, when the region has them.
    depends_on: Sequence[pulumi.Resource]
    # A disaggregated placement: the LLMInferenceService's CRD, controller and the configs it is merged over
    # (KServe.llm_inference_service).
    llm_inference_service: Sequence[pulumi.Resource] = ()
    keda: KedaScaling | None = None  # a placement autoscaled by KEDA (Standard mode)
    # Federated: Karmada propagates the InferenceService and its PodDisruptionBudget to the cluster
    # (components/federation); the gang and the autoscaler stay the cluster's own.
    federated: bool = False

    def __post_init__(self) -> None:
        p = self.placement
        if p.disaggregation is not None and not self.llm_inference_service:
            raise InputError(
                "llm_inference_service", f"{p.name} is disaggregated: pass the releases installing LLMInferenceService"
            )
        if p.disaggregation is not None and not self.storage_uri.startswith("pvc://"):
            raise InputError("storage_uri", f"{p.name} is disaggregated: both pools read the cache's pvc://")
        if p.autoscaler == "keda" and self.keda is None:
            raise InputError("keda", f"{p.name} autoscales with KEDA: pass its release and the Prometheus it queries")
        if p.autoscaler != "keda" and self.keda is not None:
            raise InputError("keda", f"{p.name} is not autoscaled by KEDA ({p.autoscaler}): pass no KEDA scaling")


class ModelDeployment(pulumi.ComponentResource):
    inference_service: k8s.apiextensions.CustomResource | None  # None when Karmada propagates it

    def __init__(self, name: str, args: ModelDeploymentArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:serving:ModelDeployment", name, None, opts)
        cluster, p = args.cluster, args.placement
        on_cluster = [*cluster.ready, *args.depends_on]

        def custom(
            manifest: dict[str, Any],
            *,
            crd_from: Sequence[pulumi.Resource] = args.depends_on,
            after: Sequence[pulumi.Resource] = (),
        ) -> k8s.apiextensions.CustomResource:
            """KServe's and Volcano's CRDs come with the releases of `args.depends_on`."""
            return custom_resource(
                f"{cluster.name}-{manifest['kind'].lower()}-{manifest['metadata']['name']}",
                manifest,
                cluster=cluster,
                parent=self,
                crd_from=crd_from,
                depends_on=[*cluster.ready, *after],
            )

        def network_policy(manifest: dict[str, Any], resource_name: str) -> None:
            k8s.networking.v1.NetworkPolicy(
                resource_name,
                metadata=manifest["metadata"],
                spec=manifest["spec"],
                opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=on_cluster),
            )

        self.inference_service = None
        if (side := p.disaggregation) is not None:
            # KServe's LLMInferenceService: both pools, its InferencePool and picker; fixed replicas.
            for manifest in llmisvc.network_policy_manifests(p):
                network_policy(manifest, f"{cluster.name}-netpol-{manifest['metadata']['name']}")
            custom(
                llmisvc.llm_inference_service_manifest(p, side, args.storage_uri),
                crd_from=[*args.depends_on, *args.llm_inference_service],
            )
            for budget in llmisvc.pod_disruption_budget_manifests(p, side):
                k8s.policy.v1.PodDisruptionBudget(
                    f"{cluster.name}-pdb-{budget['metadata']['name']}",
                    metadata=budget["metadata"],
                    spec=budget["spec"],
                    opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=on_cluster),
                )
            self._register(p)
            return
        network_policy(network_policy_manifest(p), f"{cluster.name}-netpol-{p.name}")
        gang = pod_group_manifest(p)
        group = [custom(gang)] if gang is not None else []
        if not args.federated:
            self.inference_service = custom(inference_service_manifest(p, args.storage_uri), after=group)
        disruption_budget = pod_disruption_budget_manifest(p)
        if disruption_budget is not None and not args.federated:
            k8s.policy.v1.PodDisruptionBudget(
                f"{cluster.name}-pdb-{p.name}",
                metadata=disruption_budget["metadata"],
                spec=disruption_budget["spec"],
                opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=on_cluster),
            )
        if p.autoscaler == "keda" and args.keda is not None:  # checked with the args
            served = [self.inference_service] if self.inference_service is not None else []
            custom(
                scaled_object_manifest(p, args.keda.prometheus_url),
                crd_from=[args.keda.release],
                after=[*args.depends_on, *served],
            )
        self._register(p)

    def _register(self, p: ModelPlacement) -> None:
        sizing = p.fit.sizing
        self.register_outputs(
            {
                "gpu": p.fit.slot.name,
                "resource": p.resource,
                "tensorParallel": sizing.tensor_parallel,
                "pipelineParallel": sizing.pipeline_parallel,
                "autoscaler": p.autoscaler,
                "servingMode": p.serving_mode,
            }
        )
