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

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pulumi_tls as tls

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
from components.federation.karmada_objects import KarmadaFederation, KarmadaFederationArgs, MemberRef, karmada_allowlist
from components.federation.member import (
    KarmadaAgent,
    KarmadaAgentArgs,
    KarmadaMembership,
    KarmadaMembershipArgs,
    kube_system_uid,
)
from components.federation.placement import member_labels, member_regions
from components.federation.render import inference_service_renderer, pod_disruption_budget_renderer
from components.k8s.cluster import ClusterHandle, kubernetes_provider
from components.k8s.names import cluster_name
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
            stack=env_name,
            production=env.production,
            allowed_sources=allowed_sources,
            agents=pull_members(env, env_name),
            allowlist_applied_elsewhere=allowlist_applied_elsewhere,
        ),
        opts=pulumi.ResourceOptions(providers={"tls": pki}),
    )


def agent(
    env: EnvironmentSpec,
    member: ClusterHandle,
    *,
    karmada_server: pulumi.Input[str] | None,
    ca_cert: pulumi.Input[str] | None,
    agent_cert: KeyPair | None,
    host_namespace: k8s.core.v1.Namespace | None = None,
    depends_on: Sequence[pulumi.Resource] = (),
) -> KarmadaAgent:
    return KarmadaAgent(
        member.name,
        KarmadaAgentArgs(
            member=member,
            mode=env.federation.member_mode,
            production=env.production,
            ca_cert=ca_cert,
            agent_cert=agent_cert,
            karmada_server=karmada_server,
            host_namespace=host_namespace,
            depends_on=depends_on,
        ),
    )


def karmada_objects(
    env: EnvironmentSpec,
    env_name: str,
    karmada: ClusterHandle,
    members: Mapping[str, MemberRef],
    joined: Mapping[str, str] | None = None,
) -> KarmadaFederation:
    return KarmadaFederation(
        karmada_name(env_name),
        KarmadaFederationArgs(
            env=env,
            stack=env_name,
            karmada=karmada,
            members=dict(members),
            joined=dict(joined or {}),
            render=inference_service_renderer(env, env_name),
            budget=pod_disruption_budget_renderer(env),
        ),
    )


def federate_in_one_stack(
    env: EnvironmentSpec, env_name: str, clusters: Mapping[str, ClusterHandle]
) -> dict[str, pulumi.Input[Any]]:
    """Every part in this stack: each agent, then its Cluster and (after the agent's flags) its RBAC. Returns the
    `karmada` output."""
    host_name = env.federation.host
    assert host_name is not None  # check_federation
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
    members = {r.name: member_ref(env, r, clusters[r.name], agents[r.name]) for r in member_regions(env)}
    federation = karmada_objects(env, env_name, plane.api, members)
    return {
        "karmada": federation_output(env, plane.endpoint, host_name, _registered(federation), list(federation.models)),
        "karmadaKubeconfig": plane.kubeconfig,
    }


def member_ref(env: EnvironmentSpec, region: RegionSpec, cluster: ClusterHandle, agent: KarmadaAgent) -> MemberRef:
    """What Karmada's side needs of a member cluster of this stack."""
    pull = env.federation.member_mode == "pull"
    return MemberRef(
        cluster_name=cluster.name,
        region=region,
        endpoint=cluster.endpoint,
        cluster_id=kube_system_uid(cluster) if pull else None,
        push_credentials=None if pull else agent.push_credentials,
        agent=tuple(agent.deployed),
    )


def _member_agent(
    env: EnvironmentSpec,
    plane: KarmadaControlPlane,
    member: ClusterHandle,
    *,
    host: bool,
) -> KarmadaAgent:
    """A member's agent in the stack of the control plane; the host's dials it in-cluster, after its release."""
    pull = env.federation.member_mode == "pull"
    return agent(
        env,
        member,
        karmada_server=(INTERNAL_ENDPOINT if host else plane.endpoint) if pull else None,
        ca_cert=plane.certificates.ca.cert_pem if pull else None,
        agent_cert=plane.agent_certificates.get(member.name),
        host_namespace=plane.namespace if host else None,
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
    """The federation's parts in a region's own stack; returns the outputs the other stacks read."""
    region = cluster.region
    host_name = env.federation.host
    pull = env.federation.member_mode == "pull"
    exports: dict[str, pulumi.Input[Any]] = {}
    if region.name == host_name:
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
            ref = member_ref(env, region, cluster, member_agent)
            membership = KarmadaMembership(
                cluster.name,
                KarmadaMembershipArgs(
                    karmada=plane.api,
                    cluster_name=cluster.name,
                    region=region,
                    endpoint=ref.endpoint,
                    mode="pull",
                    labels=member_labels(env.label_domain, region),
                    cluster_id=ref.cluster_id,
                    agent=ref.agent,
                ),
            )
            registered[region.name] = membership.registration.metadata["name"]
            exports["karmadaMember"] = {"clusterId": ref.cluster_id}
        exports["karmada"] = federation_output(env, plane.endpoint, host_name, registered)
    elif is_member(env, region):
        assert anchor is not None
        member_agent = agent(
            env,
            cluster,
            karmada_server=output_item(anchor, "karmada", "endpoint") if pull else None,
            ca_cert=anchor.require_output("karmadaCa") if pull else None,
            agent_cert=KeyPair(
                output_item(anchor, "karmadaAgentCerts", cluster.name),
                pulumi.Output.secret(output_item(anchor, "karmadaAgentKeys", cluster.name)),
            )
            if pull
            else None,
        )
    else:
        return exports
    if member_agent is not None and "karmadaMember" not in exports:
        exports["karmadaMember"] = (
            {"clusterId": kube_system_uid(cluster)} if pull else pulumi.Output.secret(member_agent.push_credentials)
        )
    return exports


def federate_globally(
    env: EnvironmentSpec, env_name: str, regions: Mapping[str, pulumi.StackReference]
) -> dict[str, pulumi.Input[Any]]:
    """Karmada's objects and the API's final allowlist, from the region stacks' outputs."""
    host_name = env.federation.host
    assert host_name is not None  # check_federation
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
            region=region,
            endpoint=output_item(reference, "clusters", region.name, "endpoint"),
            cluster_id=member.apply(lambda m: m["clusterId"]) if pull else None,
            push_credentials=None if pull else member,
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
