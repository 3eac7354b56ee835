"""Multi-cluster search (components/federation/search.py): which stack builds which part.

- the host's stack (wave of the anchor): Clusterpedia, its database and CRDs, the host's reader and PediaCluster;
- each other search member's stack: its reader, whose token and CA it exports (`searchReader`, a secret);
- the global stack (last wave, deployed from the host's runner): every other member's PediaCluster and the Secret
  holding its credentials on the host, from that member's `searchReader` and endpoint outputs.
In one stack, all of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_tls as tls

from components.config.environment import EnvironmentSpec
from components.domain.federation_members import search_members
from components.federation.member import IN_CLUSTER_API, api_endpoint
from components.federation.search import (
    IndexedMember,
    IndexedMemberArgs,
    SearchReader,
    SearchReaderArgs,
)
from components.federation.search_index import SearchIndex, SearchIndexArgs
from components.k8s.cluster import ClusterHandle
from components.k8s.names import cluster_name
from stacks.federation_parts import federation_host
from stacks.references import output_item


def _index(env: EnvironmentSpec, host: ClusterHandle) -> tuple[SearchIndex, IndexedMember | None]:
    """Clusterpedia on the host, and the host's own PediaCluster when it is a search member."""
    index = SearchIndex(
        f"{host.name}-search",
        SearchIndexArgs(
            host=host,
            label_domain=env.label_domain,
            storage_gib=env.federation.search.storage_gib,
            production=env.production,
        ),
        # The index's CA and its API server's serving certificate.
        opts=pulumi.ResourceOptions(providers={"tls": tls.Provider(f"{host.name}-search-tls")}),
    )
    if not any(r.name == host.region.name for r in search_members(env)):
        return index, None
    reader = SearchReader(f"{host.name}-search-reader", SearchReaderArgs(member=host, namespace=index.namespace))
    own = IndexedMember(
        f"{host.name}-search-{host.name}",
        IndexedMemberArgs(
            host=host,
            member_cluster=host.name,
            api_server=IN_CLUSTER_API,
            credentials=None,
            crds=index.crds,
            depends_on=[reader.token, index.synchro_manager],
        ),
    )
    return index, own


def search_in_one_stack(env: EnvironmentSpec, clusters: Mapping[str, ClusterHandle]) -> None:
    host_name = federation_host(env)
    host = clusters[host_name]
    index, _ = _index(env, host)
    for region in search_members(env):
        if region.name == host_name:
            continue
        member = clusters[region.name]
        reader = SearchReader(f"{member.name}-search-reader", SearchReaderArgs(member=member))
        IndexedMember(
            f"{host.name}-search-{member.name}",
            IndexedMemberArgs(
                host=host,
                member_cluster=member.name,
                api_server=member.endpoint.apply(api_endpoint),
                credentials=reader.credentials,
                crds=index.crds,
                depends_on=[index.synchro_manager],
            ),
        )


def search_region(env: EnvironmentSpec, cluster: ClusterHandle) -> dict[str, pulumi.Input[Any]]:
    """The search's parts in a region's own stack; returns what the global stack reads."""
    if cluster.region.name == env.federation.host:
        _index(env, cluster)
        return {}
    if not any(r.name == cluster.region.name for r in search_members(env)):
        return {}
    reader = SearchReader(f"{cluster.name}-search-reader", SearchReaderArgs(member=cluster))
    return {"searchReader": reader.credentials}


def search_globally(
    env: EnvironmentSpec, env_name: str, host: ClusterHandle, regions: Mapping[str, pulumi.StackReference]
) -> None:
    """Every other member's PediaCluster on the host, from its stack's reader credentials and endpoint. The CRDs
    and Clusterpedia came with the host's stack, an earlier wave."""
    for region in search_members(env):
        if region.name == host.region.name:
            continue
        reference = regions[region.name]
        member = cluster_name(env_name, region)
        IndexedMember(
            f"{host.name}-search-{member}",
            IndexedMemberArgs(
                host=host,
                member_cluster=member,
                api_server=output_item(reference, "clusters", region.name, "endpoint").apply(api_endpoint),
                credentials=pulumi.Output.secret(reference.require_output("searchReader")),
                crds=(),
            ),
        )
