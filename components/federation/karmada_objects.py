"""The federation as the Karmada API holds it: members' registrations, failover taints and federated models.

The control plane (control_plane.py) runs on the host cluster and each member runs its agent (member.py);
this is what is created through the Karmada API once both exist: in one stack with them, or in the global
stack of an environment split per region.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.config.environment import EnvironmentSpec
from components.config.karmada import FailoverSpec
from components.config.workloads import ModelSpec
from components.domain.stack_split import global_deployer
from components.federation.manifests import member_taint_policies
from components.federation.member import KarmadaMembership, KarmadaMembershipArgs, PullMember, PushMember
from components.federation.model import FederatedModel, FederatedModelArgs
from components.federation.placement import MemberShare
from components.federation.serving_api import FederatedServingApi, FederatedServingApiArgs
from components.k8s.cluster import ClusterHandle
from components.k8s.inputs import InputError


@dataclass(frozen=True, kw_only=True)
class MemberRef:
    """What Karmada's side of a member needs: its name, labels and API endpoint, and how it syncs."""

    cluster_name: str
    labels: dict[str, str]  # where it runs and what it offers (placement.member_labels)
    endpoint: pulumi.Input[str]
    sync: PullMember | PushMember


@dataclass(frozen=True, kw_only=True)
class FederatedModelPlan:
    """A federated model: its members' shares, the InferenceService rendered for each, its disruption budget."""

    model: ModelSpec
    shares: tuple[MemberShare, ...]  # in placement order: the first rendering is the template
    renders: dict[str, dict[str, Any]]  # region name -> the model's InferenceService as rendered for it
    budget: dict[str, Any] | None  # its PodDisruptionBudget over the federation's replica range


@dataclass(frozen=True, kw_only=True)
class KarmadaFederationArgs:
    karmada: ClusterHandle  # the Karmada API server
    members: dict[str, MemberRef]  # region name -> member registered here
    # Members registered by their own stack in an earlier wave (the host): region name -> cluster name.
    joined: dict[str, str] = field(default_factory=dict)
    models: Sequence[FederatedModelPlan] = ()
    failover: FailoverSpec
    registry_mirrors: Mapping[str, str] = field(default_factory=dict)  # registry -> the mirror members pull from

    def __post_init__(self) -> None:
        for i, plan in enumerate(self.models):
            if not plan.shares:
                raise InputError(f"models[{i}].shares", f"{plan.model.name} runs on no member: give it a share")
            unrendered = [s.region.name for s in plan.shares if s.region.name not in plan.renders]
            if unrendered:
                raise InputError(
                    f"models[{i}].renders", f"{plan.model.name} is not rendered for {', '.join(unrendered)}"
                )


class KarmadaFederation(pulumi.ComponentResource):
    """The federation as the Karmada API holds it: members' registrations, failover taints, federated models."""

    memberships: dict[str, KarmadaMembership]  # region name -> member
    models: dict[str, FederatedModel]  # model name -> federated model

    def __init__(self, name: str, args: KarmadaFederationArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:federation:KarmadaFederation", name, None, opts)
        karmada = args.karmada
        self.memberships = {
            region: KarmadaMembership(
                member.cluster_name,
                KarmadaMembershipArgs(
                    karmada=karmada,
                    cluster_name=member.cluster_name,
                    endpoint=member.endpoint,
                    labels=member.labels,
                    sync=member.sync,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            for region, member in args.members.items()
        }
        clusters = [m.registration for m in self.memberships.values()]
        names = [*args.joined.values(), *(m.cluster_name for m in args.members.values())]
        for policy in member_taint_policies(names):
            k8s.apiextensions.CustomResource(
                f"{karmada.name}-clustertaintpolicy-{policy['metadata']['name']}",
                api_version=policy["apiVersion"],
                kind=policy["kind"],
                metadata=policy["metadata"],
                spec=policy["spec"],
                opts=pulumi.ResourceOptions(
                    parent=self, provider=karmada.provider, depends_on=[*karmada.ready, *clusters]
                ),
            )

        # A pull host joins in its own stack (`joined`); push members all register here.
        mode = "push" if any(isinstance(m.sync, PushMember) for m in args.members.values()) else "pull"
        serving = FederatedServingApi(
            f"{name}-serving", FederatedServingApiArgs(karmada=karmada), opts=pulumi.ResourceOptions(parent=self)
        )
        self.models = {}
        for plan in args.models:
            self.models[plan.model.name] = FederatedModel(
                f"{name}-{plan.model.name}",
                FederatedModelArgs(
                    model=plan.model,
                    shares=plan.shares,
                    renders=plan.renders,
                    budget=plan.budget,
                    karmada=karmada,
                    serving=serving,
                    failover=args.failover,
                    registry_mirrors=dict(args.registry_mirrors),
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.register_outputs(
            {
                "members": {name: mode for name in names},
                "models": list(self.models),
            }
        )


def karmada_allowlist(env: EnvironmentSpec, egress: Sequence[pulumi.Input[Sequence[str]]]) -> pulumi.Output[list[str]]:
    """Who may open a connection to the Karmada API: the clusters' NAT egress, the configured CIDRs and the
    sources of the global stack's deployer (it applies Karmada's objects)."""
    deployer = global_deployer(env)
    extra = [str(c) for c in env.federation.api_server.allowed_cidrs]
    extra += [str(c) for c in (deployer.cidrs if deployer is not None else ()) if str(c) not in extra]
    return pulumi.Output.all(*egress).apply(
        lambda lists: list(dict.fromkeys([*sorted({f"{ip}/32" for ips in lists for ip in ips}), *extra]))
    )
