"""Karmada across the environment's clusters: which stack builds which part, and how the parts meet.

- the host's stack (in one stack: the environment): the control plane, the federation's PKI, every pull
  member's agent certificate (signed where the CA key lives), the host's own agent and, in pull mode, the
  host's registration (its Cluster and its agent's RBAC): the host joins in the wave that deploys it, since
  everything its agent needs at start is in that stack (it dials the API server in-cluster);
- each other member's stack: its agent (pull), whose release does not wait for it (its RBAC and its NAT
  address on the API's allowlist come with the global stack), or the account Karmada dials (push);
- the Karmada API's other objects (the other members' registrations, failover taints, federated models) and
  the API's final allowlist: with everything else in one stack, or in the global stack once every member
  exists, since a member's NAT address is known only after its stack is up. The rollout's gates wait for
  each member's Cluster to be Ready: the host's in its own wave, the others' in the global one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pulumi_tls as tls

from components.config.base import ConfigError, Issue
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.federation.certificates import KeyPair
from components.federation.control_plane import (
    EXTERNAL_SERVICE,
    INTERNAL_ENDPOINT,
    KARMADA_NAMESPACE,
    KarmadaControlPlane,
    KarmadaControlPlaneArgs,
    karmada_name,
)
from components.federation.karmada_objects import (
    FederatedModelPlan,
    KarmadaFederation,
    KarmadaFederationArgs,
    MemberRef,
    karmada_allowlist,
)
from components.federation.member import (
    IN_CLUSTER_API,
    KarmadaAgent,
    KarmadaAgentArgs,
    KarmadaMembership,
    KarmadaMembershipArgs,
    PullAgent,
    PullMember,
    PushAgent,
    PushMember,
    kube_system_uid,
)
from components.federation.placement import federated_models, member_labels, member_regions, model_shares, replica_range
from components.federation.render import inference_service_renderer, pod_disruption_budget_renderer
from components.k8s.cluster import ClusterHandle, kubernetes_provider
from components.k8s.names import cluster_name
from stacks.clouds import backend_for
from stacks.references import output_item


def pull_members(env: EnvironmentSpec, env_name: str) -> tuple[str, ...]:
    """Cluster names whose agents dial Karmada with a certificate of the federation's CA."""
    if env.federation.member_mode != "pull":
        return ()
    return tuple(cluster_name(env_name, r) for r in member_regions(env))


def is_member(env: EnvironmentSpec, region: RegionSpec) -> bool:
    return any(r.name == region.name for r in member_regions(env))


def control_plane(
    env: EnvironmentSpec,
    env_name: str,
    host: ClusterHandle,
    *,
    allowed_sources: pulumi.Input[Sequence[str]],
    allowlist_applied_elsewhere: bool,
) -> KarmadaControlPlane:
    """The control plane on the host cluster; its certificates come from the federation's own tls provider."""
    name = karmada_name(env_name)
    pki = tls.Provider(f"{name}-tls")
    return KarmadaControlPlane(
        f"{name}-control-plane",
        KarmadaControlPlaneArgs(
            host=host,
            load_balancer=lambda parent, name: backend_for(host.cloud).public_load_balancer(parent, name, host),
            stack=env_name,
            production=env.production,
            allowed_sources=allowed_sources,
            agents=pull_members(env, env_name),
            allowlist_applied_elsewhere=allowlist_applied_elsewhere,
        ),
        opts=pulumi.ResourceOptions(providers={"tls": pki}),
    )


def federation_host(env: EnvironmentSpec) -> str:
    """The region hosting Karmada, which a federated environment names (check_federation)."""
    if env.federation.host is None:
        raise ConfigError([Issue("federation.host", "name the region entry that hosts Karmada, e.g. host: use1")])
    return env.federation.host


def agent(
    env: EnvironmentSpec,
    member: ClusterHandle,
    *,
    pull: Callable[[], PullAgent],
    depends_on: Sequence[pulumi.Resource] = (),
) -> KarmadaAgent:
    """The member's agent in the environment's mode: `pull` gives what a pull agent dials with."""
    sync = pull() if env.federation.member_mode == "pull" else PushAgent()
    return KarmadaAgent(
        member.name, KarmadaAgentArgs(member=member, sync=sync, production=env.production, depends_on=depends_on)
    )


def karmada_objects(
    env: EnvironmentSpec,
    env_name: str,
    karmada: ClusterHandle,
    members: Mapping[str, MemberRef],
    joined: Mapping[str, str] | None = None,
) -> KarmadaFederation:
    render, budget = inference_service_renderer(env, env_name), pod_disruption_budget_renderer(env)
    models = []
    for model in federated_models(env):
        shares = model_shares(env, env_name, model)
        models.append(
            FederatedModelPlan(
                model=model,
                shares=tuple(shares),
                renders={s.region.name: render(model, s.region) for s in shares},
                budget=budget(model, replica_range(model)[1]),
            )
        )
    return KarmadaFederation(
        karmada_name(env_name),
        KarmadaFederationArgs(
            karmada=karmada,
            members=dict(members),
            joined=dict(joined or {}),
            models=models,
            failover=env.federation.failover,
            registry_mirrors=env.federation.registry_mirrors,
        ),
    )


def federate_in_one_stack(
    env: EnvironmentSpec, env_name: str, clusters: Mapping[str, ClusterHandle]
) -> dict[str, pulumi.Input[Any]]:
    """Every part in this stack: each agent, then its Cluster and (after the agent's flags) its RBAC. Returns the
    `karmada` output."""
    host_name = federation_host(env)
    plane = control_plane(
        env,
        env_name,
        clusters[host_name],
        allowed_sources=karmada_allowlist(env, [c.egress_ips for c in clusters.values() if c.egress_ips is not None]),
        allowlist_applied_elsewhere=False,
    )
    # Each agent first: its RBAC in Karmada follows its flags (pull), its token feeds its registration (push).
    agents = {
        r.name: _member_agent(env, plane, clusters[r.name], host=r.name == host_name) for r in member_regions(env)
    }
    members = {
        r.name: member_ref(env.label_domain, r, clusters[r.name], agents[r.name], host=r.name == host_name)
        for r in member_regions(env)
    }
    federation = karmada_objects(env, env_name, plane.api, members)
    return {
        "karmada": federation_output(env, plane.endpoint, host_name, _registered(federation), list(federation.models)),
        "karmadaKubeconfig": plane.kubeconfig,
    }


def member_ref(
    label_domain: str, region: RegionSpec, cluster: ClusterHandle, agent: KarmadaAgent, *, host: bool
) -> MemberRef:
    """What Karmada's side needs of a member cluster of this stack: a push agent made credentials, a pull agent
    checks the cluster's id. A push host is named by its in-cluster API (IN_CLUSTER_API)."""
    sync: PullMember | PushMember
    endpoint: pulumi.Input[str] = cluster.endpoint
    if agent.push_credentials is not None:
        sync = push_member(region, agent.push_credentials)
        endpoint = IN_CLUSTER_API if host else endpoint
    else:
        sync = PullMember(cluster_id=kube_system_uid(cluster), agent=tuple(agent.deployed))
    return MemberRef(
        cluster_name=cluster.name, labels=member_labels(label_domain, region), endpoint=endpoint, sync=sync
    )


def push_member(region: RegionSpec, credentials: pulumi.Input[dict[str, str]]) -> PushMember:
    return PushMember(credentials=credentials, cloud=region.cloud, region=region.region, zones=region.zones)


def _member_agent(
    env: EnvironmentSpec,
    plane: KarmadaControlPlane,
    member: ClusterHandle,
    *,
    host: bool,
) -> KarmadaAgent:
    """A member's agent in the stack of the control plane; the host's dials it in-cluster, after its release."""
    return agent(
        env,
        member,
        pull=lambda: PullAgent(
            karmada_server=INTERNAL_ENDPOINT if host else plane.endpoint,
            ca_cert=plane.certificates.ca.cert_pem,
            agent_cert=plane.agent_certificates[member.name],  # the control plane signs one per pull member
            host_namespace=plane.namespace if host else None,
        ),
        depends_on=[plane.release] if host else [],
    )


def federation_output(
    env: EnvironmentSpec,
    endpoint: pulumi.Input[str],
    host: str,
    registered: Mapping[str, pulumi.Input[str]],
    models: Sequence[str] = (),
) -> dict[str, Any]:
    """The `karmada` output: endpoint, host, members' Cluster names (once registered), federated models."""
    return {
        "endpoint": endpoint,
        "host": host,
        "members": {r.name: registered.get(r.name) for r in member_regions(env)},
        "federatedModels": list(models),
    }


def _registered(federation: KarmadaFederation) -> dict[str, pulumi.Input[str]]:
    return {region: m.registration.metadata["name"] for region, m in federation.memberships.items()}


def federate_region(
    env: EnvironmentSpec, env_name: str, cluster: ClusterHandle, anchor: pulumi.StackReference | None
) -> dict[str, pulumi.Input[Any]]:
    """The federation's parts in a region's own stack; returns the outputs the other stacks read. `anchor` is the
    anchor region's stack, the host's in a federated environment (anchor_region): None in the host's own."""
    region = cluster.region
    host_name = federation_host(env)
    pull = env.federation.member_mode == "pull"
    exports: dict[str, pulumi.Input[Any]] = {}
    if anchor is None:
        plane = control_plane(
            env,
            env_name,
            cluster,
            allowed_sources=karmada_allowlist(env, [cluster.egress_ips] if cluster.egress_ips is not None else []),
            allowlist_applied_elsewhere=True,
        )
        exports["karmadaKubeconfig"] = plane.kubeconfig
        exports["karmadaCa"] = plane.certificates.ca.cert_pem
        exports["karmadaAgentCerts"] = {name: c.cert_pem for name, c in plane.agent_certificates.items()}
        exports["karmadaAgentKeys"] = pulumi.Output.secret(
            {name: c.key_pem for name, c in plane.agent_certificates.items()}
        )
        member_agent = _member_agent(env, plane, cluster, host=True) if is_member(env, region) else None
        registered: dict[str, pulumi.Input[str]] = {}
        if member_agent is not None and pull:
            # The host joins here, in its own wave: everything its agent needs at start is in this stack.
            joining = PullMember(cluster_id=kube_system_uid(cluster), agent=tuple(member_agent.deployed))
            membership = KarmadaMembership(
                cluster.name,
                KarmadaMembershipArgs(
                    karmada=plane.api,
                    cluster_name=cluster.name,
                    endpoint=cluster.endpoint,
                    labels=member_labels(env.label_domain, region),
                    sync=joining,
                ),
            )
            registered[region.name] = membership.registration.metadata["name"]
            exports["karmadaMember"] = {"clusterId": joining.cluster_id}
        exports["karmada"] = federation_output(env, plane.endpoint, host_name, registered)
    elif is_member(env, region):
        member_agent = agent(env, cluster, pull=lambda: _pull_from(anchor, cluster.name))
    else:
        return exports
    if member_agent is not None and "karmadaMember" not in exports:
        exports["karmadaMember"] = (
            {"clusterId": kube_system_uid(cluster)} if pull else pulumi.Output.secret(member_agent.push_credentials)
        )
    return exports


def _pull_from(anchor: pulumi.StackReference, cluster: str) -> PullAgent:
    """A pull agent in a member's own stack: the control plane's endpoint, CA and the agent's certificate, from the
    anchor stack's outputs."""
    return PullAgent(
        karmada_server=output_item(anchor, "karmada", "endpoint"),
        ca_cert=anchor.require_output("karmadaCa"),
        agent_cert=KeyPair(
            cert_pem=output_item(anchor, "karmadaAgentCerts", cluster),
            key_pem=pulumi.Output.secret(output_item(anchor, "karmadaAgentKeys", cluster)),
        ),
    )


def federate_globally(
    env: EnvironmentSpec, env_name: str, regions: Mapping[str, pulumi.StackReference]
) -> dict[str, pulumi.Input[Any]]:
    """Karmada's objects and the API's final allowlist, from the region stacks' outputs."""
    host_name = federation_host(env)
    anchor = regions[host_name]
    name = karmada_name(env_name)
    karmada_kubeconfig: pulumi.Output[str] = pulumi.Output.secret(anchor.require_output("karmadaKubeconfig"))
    endpoint = output_item(anchor, "karmada", "endpoint")
    karmada = ClusterHandle(
        name=name,
        region=env.region(host_name),
        provider=kubernetes_provider(name, karmada_kubeconfig, None, []),
        kubeconfig=karmada_kubeconfig,
        endpoint=endpoint,
    )
    pull = env.federation.member_mode == "pull"
    members = {}
    # A pull host registered itself in its own stack (federate_region).
    joined = (
        {host_name: cluster_name(env_name, env.region(host_name))}
        if pull and is_member(env, env.region(host_name))
        else {}
    )
    for region in member_regions(env):
        if region.name in joined:
            continue
        reference = regions[region.name]
        member = reference.require_output("karmadaMember")
        members[region.name] = MemberRef(
            cluster_name=cluster_name(env_name, region),
            labels=member_labels(env.label_domain, region),
            endpoint=IN_CLUSTER_API
            if not pull and region.name == host_name
            else output_item(reference, "clusters", region.name, "endpoint"),
            sync=PullMember(cluster_id=member.apply(lambda m: m["clusterId"])) if pull else push_member(region, member),
        )
    federation = karmada_objects(env, env_name, karmada, members, joined)
    host_kubeconfig: pulumi.Output[str] = pulumi.Output.secret(output_item(anchor, "kubeconfigs", host_name))
    host_cluster = cluster_name(env_name, env.region(host_name))
    host = ClusterHandle(
        name=host_cluster,
        region=env.region(host_name),
        provider=kubernetes_provider(host_cluster, host_kubeconfig, None, []),
        kubeconfig=host_kubeconfig,
        endpoint=output_item(anchor, "clusters", host_name, "endpoint"),
    )
    # Members' Clusters first: an agent that gets through re-registers the Cluster, never creates it.
    allowlist_patch(
        env,
        host,
        [reference.require_output("egressIps") for reference in regions.values()],
        depends_on=[m.registration for m in federation.memberships.values()],
    )
    if env.federation.search.enabled:
        from stacks.search import search_globally

        search_globally(env, env_name, host, regions)
    registered = {**joined, **_registered(federation)}
    return {"karmada": federation_output(env, endpoint, host_name, registered, list(federation.models))}


def allowlist_patch(
    env: EnvironmentSpec,
    host: ClusterHandle,
    egress: Sequence[pulumi.Input[Sequence[str]]],
    *,
    depends_on: Sequence[pulumi.Resource],
) -> k8s.core.v1.ServicePatch:
    """The Karmada API's final allowlist, applied from the global stack once every member's NAT address exists.

    Retained on delete: deleting a patch removes the fields it owns (PULUMI_PATCH_DELETE_RELINQUISHES), and a
    load balancer without source ranges admits the internet (LOAD_BALANCER_OPEN_WITHOUT_SOURCE_RANGES); destroying
    the global stack, or replacing this patch, leaves the last allowlist in place."""
    return k8s.core.v1.ServicePatch(
        f"{host.name}-karmada-apiserver-allowlist",
        metadata={
            "name": EXTERNAL_SERVICE,
            "namespace": KARMADA_NAMESPACE,
            # The host's stack created the Service and leaves this field alone (ignoreChanges); take it over.
            "annotations": {"pulumi.com/patchForce": "true"},
        },
        spec={"loadBalancerSourceRanges": karmada_allowlist(env, egress)},
        opts=pulumi.ResourceOptions(provider=host.provider, depends_on=list(depends_on), retain_on_delete=True),
    )
