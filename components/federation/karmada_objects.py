"""The federation as the Karmada API holds it: members' registrations, failover taints and federated models.

The control plane (control_plane.py) runs on the host cluster and each member runs its agent (member.py);
this is what is created through the Karmada API once both exist: in one stack with them, or in the global
stack of an environment split per region.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.config.deployer import global_deployer
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.federation.manifests import member_taint_policies
from components.federation.member import KarmadaMembership, KarmadaMembershipArgs, PullMember, PushMember
from components.federation.model import FederatedModel, FederatedModelArgs
from components.federation.placement import (
    federated_models,
    member_labels,
    model_shares,
    replica_range,
)
from components.federation.render import BudgetRenderer, Renderer
from components.federation.serving_api import FederatedServingApi, FederatedServingApiArgs
from components.k8s.cluster import ClusterHandle


@dataclass(frozen=True, kw_only=True)
class MemberRef:
    """What Karmada's side of a member needs: its name, place and API endpoint (its credentials, in push)."""

    cluster_name: str
    region: RegionSpec  # its labels: where it runs and what it offers
    endpoint: pulumi.Input[str]
    sync: PullMember | PushMember


@dataclass(frozen=True, kw_only=True)
class KarmadaFederationArgs:
    env: EnvironmentSpec
    stack: str
    karmada: ClusterHandle  # the Karmada API server
    members: dict[str, MemberRef]  # region name -> member registered here
    # Members registered by their own stack in an earlier wave (the host): region name -> cluster name.
    joined: dict[str, str] = field(default_factory=dict)
    # Renders a model's InferenceService for one region: the federated template and the members' overrides.
    render: Renderer
    # Renders a model's PodDisruptionBudget for a replica range.
    budget: BudgetRenderer


class KarmadaFederation(pulumi.ComponentResource):
    """The federation as the Karmada API holds it: members' registrations, failover taints, federated models."""

    memberships: dict[str, KarmadaMembership]  # region name -> member
    models: dict[str, FederatedModel]  # model name -> federated model

    def __init__(self, name: str, args: KarmadaFederationArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:federation:KarmadaFederation", name, None, opts)
        env, fed, karmada = args.env, args.env.federation, args.karmada
        self.memberships = {
            region: KarmadaMembership(
                member.cluster_name,
                KarmadaMembershipArgs(
                    karmada=karmada,
                    cluster_name=member.cluster_name,
                    endpoint=member.endpoint,
                    labels=member_labels(env.label_domain, member.region),
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

        serving = FederatedServingApi(
            f"{name}-serving", FederatedServingApiArgs(karmada=karmada), opts=pulumi.ResourceOptions(parent=self)
        )
        self.models = {}
        for model in federated_models(env):
            shares = model_shares(env, args.stack, model)
            self.models[model.name] = FederatedModel(
                f"{name}-{model.name}",
                FederatedModelArgs(
                    model=model,
                    shares=tuple(shares),
                    renders={s.region.name: args.render(model, s.region) for s in shares},
                    budget=args.budget(model, replica_range(model)[1]),
                    karmada=karmada,
                    serving=serving,
                    failover=fed.failover,
                    registry_mirrors=dict(fed.registry_mirrors),
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.register_outputs(
            {
                "members": {name: fed.member_mode for name in names},
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
