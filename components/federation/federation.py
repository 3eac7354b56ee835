"""The environment's Karmada federation: control plane on the host, members, and federated models."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s
import pulumi_tls as tls

from components.config.environment import EnvironmentSpec
from components.federation.control_plane import INTERNAL_ENDPOINT, KarmadaControlPlane, KarmadaControlPlaneArgs
from components.federation.manifests import member_taint_policies
from components.federation.member import KarmadaMember, KarmadaMemberArgs
from components.federation.model import FederatedModel, FederatedModelArgs
from components.federation.placement import (
    federated_models,
    member_labels,
    member_regions,
    model_shares,
    replica_range,
)
from components.federation.render import BudgetRenderer, Renderer
from components.federation.serving_api import FederatedServingApi, FederatedServingApiArgs
from components.k8s.cluster import ClusterHandle


@dataclass(frozen=True)
class KarmadaFederationArgs:
    env: EnvironmentSpec
    stack: str
    clusters: dict[str, ClusterHandle]  # region name -> its cluster
    # Renders a model's InferenceService for one region: the federated template and the members' overrides.
    render: Renderer
    # Renders a model's PodDisruptionBudget for a replica range.
    budget: BudgetRenderer


class KarmadaFederation(pulumi.ComponentResource):
    control_plane: KarmadaControlPlane
    members: dict[str, KarmadaMember]  # region name -> member
    models: dict[str, FederatedModel]  # model name -> federated model

    def __init__(self, name: str, args: KarmadaFederationArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:federation:KarmadaFederation", name, None, opts)
        env, fed = args.env, args.env.federation
        assert fed.host is not None  # check_federation
        # The federation's certificates are generated in the program (see certificates.py).
        pki = pulumi.ResourceOptions(
            parent=self, providers={"tls": tls.Provider(f"{name}-tls", opts=pulumi.ResourceOptions(parent=self))}
        )

        self.control_plane = KarmadaControlPlane(
            f"{name}-control-plane",
            KarmadaControlPlaneArgs(
                host=args.clusters[fed.host],
                stack=args.stack,
                production=env.production,
                allowed_sources=_allowed_sources(env, args.clusters),
            ),
            opts=pki,
        )
        karmada = self.control_plane.api

        self.members = {}
        for region in member_regions(env):
            cluster = args.clusters[region.name]
            self.members[region.name] = KarmadaMember(
                cluster.name,
                KarmadaMemberArgs(
                    member=cluster,
                    karmada=karmada,
                    mode=fed.member_mode,
                    labels=member_labels(env.label_domain, region),
                    production=env.production,
                    ca=self.control_plane.certificates.ca,
                    # The host's own agent stays inside the cluster.
                    karmada_server=INTERNAL_ENDPOINT if region.name == fed.host else self.control_plane.endpoint,
                    host_namespace=self.control_plane.namespace if region.name == fed.host else None,
                ),
                opts=pki,
            )
        clusters = [m.registration for m in self.members.values()]
        for policy in member_taint_policies([args.clusters[r].name for r in self.members]):
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
                "endpoint": self.control_plane.endpoint,
                "members": {args.clusters[r].name: fed.member_mode for r in self.members},
                "models": list(self.models),
            }
        )


def _allowed_sources(env: EnvironmentSpec, clusters: dict[str, ClusterHandle]) -> pulumi.Output[list[str]]:
    """Who may open a connection to the Karmada API: every cluster's NAT egress, plus the configured CIDRs."""
    extra = [str(c) for c in env.federation.api_server.allowed_cidrs]
    egress = [c.egress_ips for c in clusters.values() if c.egress_ips is not None]
    return pulumi.Output.all(*egress).apply(
        lambda lists: list(dict.fromkeys([*sorted({f"{ip}/32" for ips in lists for ip in ips}), *extra]))
    )
