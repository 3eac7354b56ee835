"""A federated model: created once in Karmada, a copy on each of its member clusters in its placement's range."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.config.karmada import FailoverSpec
from components.config.workloads import ModelSpec
from components.federation.manifests import federated_template, override_policy, propagation_policy
from components.federation.placement import MemberShare, replica_range
from components.federation.serving_api import FederatedServingApi
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import custom_resource


@dataclass(frozen=True, kw_only=True)
class FederatedModelArgs:
    model: ModelSpec
    shares: tuple[MemberShare, ...]
    # Region name -> the model's InferenceService as rendered for that region.
    renders: dict[str, dict[str, Any]]
    # Its PodDisruptionBudget over the federation's replica range (None for a single replica).
    budget: dict[str, Any] | None
    karmada: ClusterHandle
    serving: FederatedServingApi
    failover: FailoverSpec
    registry_mirrors: dict[str, str]


class FederatedModel(pulumi.ComponentResource):
    """InferenceService template, its PodDisruptionBudget, its PropagationPolicy and per-member OverridePolicies.

    The template is the first placement's rendering with the placements' total replica range; every
    member (the first one included) gets an OverridePolicy for what its own rendering differs in. The
    policies exist before the template, so that no member ever receives it un-overridden. Karmada
    carries the budget to every member the model runs on (the interpreter's GetDependencies); each
    member's platform keeps what is its own: the gang PodGroup of multi-node replicas and the KEDA
    ScaledObject of the predictor Deployment.
    """

    inference_service: k8s.apiextensions.CustomResource
    propagation_policy: k8s.apiextensions.CustomResource
    override_policies: dict[str, k8s.apiextensions.CustomResource]  # region name -> policy

    def __init__(self, name: str, args: FederatedModelArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:federation:FederatedModel", name, None, opts)
        model, karmada = args.model, args.karmada
        first = args.shares[0].region.name
        template = federated_template(args.renders[first], *replica_range(model))
        namespace = template["metadata"]["namespace"]
        in_namespace = [*karmada.ready, args.serving.serving_namespace]
        serving_namespace = [args.serving.serving_namespace]  # Karmada's own API serves the policies' kinds

        def create(
            manifest: dict[str, Any], *, crd_from: list[pulumi.Resource], depends_on: list[pulumi.Resource]
        ) -> k8s.apiextensions.CustomResource:
            return custom_resource(
                f"{karmada.name}-{namespace}-{manifest['kind'].lower()}-{manifest['metadata']['name']}",
                manifest,
                cluster=karmada,
                parent=self,
                crd_from=crd_from,
                depends_on=depends_on,
            )

        self.override_policies, overrides = {}, []
        for share in args.shares:
            region = share.region.name
            manifest = override_policy(template, args.renders[region], share, args.registry_mirrors.get(region))
            if manifest is not None:
                self.override_policies[region] = create(manifest, crd_from=karmada.ready, depends_on=serving_namespace)
                overrides.append(manifest["metadata"]["name"])
        self.propagation_policy = create(
            propagation_policy(model.name, namespace, list(args.shares), args.failover, overrides),
            crd_from=karmada.ready,
            depends_on=[*serving_namespace, *self.override_policies.values()],
        )
        if args.budget is not None:
            k8s.policy.v1.PodDisruptionBudget(
                f"{karmada.name}-{namespace}-pdb-{model.name}",
                metadata=args.budget["metadata"],
                spec=args.budget["spec"],
                opts=pulumi.ResourceOptions(parent=self, provider=karmada.provider, depends_on=in_namespace),
            )
        self.inference_service = create(
            template,
            crd_from=[args.serving.crds],
            depends_on=[*in_namespace, args.serving.interpreter, self.propagation_policy],
        )
        self.register_outputs(
            {
                "inferenceService": f"{namespace}/{model.name}",
                "members": {s.cluster: f"{s.placement.min_replicas}-{s.placement.max_replicas}" for s in args.shares},
            }
        )
