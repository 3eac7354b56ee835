"""Volcano on a GPU cluster: gangs, tenant queues, priority tiers and topology-aware placement.

The default scheduler places pods one by one, so a multi-node replica can half-start and hold
GPUs it cannot use. Volcano starts a gang whole or not at all, shares GPUs between tenant
queues by weight within each queue's capability, lets real-time pods preempt batch work, and
keeps a tensor-parallel gang inside one fabric domain (a tier-1 HyperNode).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.catalog.charts import CHARTS, VOLCANO_IMAGE_TAG
from components.config.scheduling import PriorityTierSpec
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import awaited_webhook_service, custom_resource, helm_release, namespace, release_digest
from components.k8s.inputs import InputError, known
from components.k8s.scheduling import (
    PLACEMENT_GROUP_TIER,
    SCHEDULER_NAME,
    SCHEDULING_API_VERSION,
    ZONE_TIER,
    priority_class_name,
    queue_name,
)
from components.k8s.topology import ZONE_LABEL, placement_group_selector, pool_selector

NAMESPACE = "volcano-system"
RELEASE = "volcano"
# `{{ .Release.Name }}-admission-service`: what the API server calls for its webhooks
# (upstream.KSERVE_AND_VOLCANO_WEBHOOK_SERVICES).
ADMISSION_SERVICE = f"{RELEASE}-admission-service"
HYPERNODE_API_VERSION = "topology.volcano.sh/v1alpha1"

# enqueue admits whole gangs within queue capability; preempt evicts lower tiers inside a queue,
# reclaim takes back GPUs other queues borrowed; backfill fills gaps with pods that fit.
ACTIONS = ("enqueue", "allocate", "preempt", "reclaim", "backfill")
# Weight of GPUs against cpu/memory (1 each) when packing: whole nodes and fabric domains stay free for gangs.
GPU_BINPACK_WEIGHT = 10
NETWORK_TOPOLOGY_WEIGHT = 10


def scheduler_config(gpu_resources: Sequence[str]) -> dict[str, Any]:
    """The scheduler's actions and plugin tiers, packing on the GPU resources this cluster's pools offer.

    The chart's default `overcommit` plugin is left out: it admits jobs against the cluster's
    idle capacity, which is zero while a GPU pool is scaled to zero. Queue capability bounds
    admission instead (proportion). gang and drf keep upstream's `enablePreemptable: false`,
    so they do not veto evictions: a real-time pod may evict members of a running batch gang.
    """
    resources = sorted(gpu_resources)
    binpack: dict[str, Any] = {"binpack.weight": GPU_BINPACK_WEIGHT}
    topology: dict[str, Any] = {"weight": NETWORK_TOPOLOGY_WEIGHT, "hypernode.binpack.normal-pod.enable": True}
    if resources:
        binpack["binpack.resources"] = topology["hypernode.binpack.resources"] = ", ".join(resources)
        for resource in resources:
            binpack[f"binpack.resources.{resource}"] = GPU_BINPACK_WEIGHT
            topology[f"hypernode.binpack.resources.{resource}"] = GPU_BINPACK_WEIGHT
    return {
        "actions": ", ".join(ACTIONS),
        "tiers": [
            {
                "plugins": [
                    {"name": "priority"},
                    {"name": "gang", "enablePreemptable": False},
                    {"name": "conformance"},
                ]
            },
            {
                "plugins": [
                    {"name": "drf", "enablePreemptable": False},
                    {"name": "predicates"},
                    {"name": "proportion"},
                    {"name": "nodeorder"},
                    {"name": "binpack", "arguments": binpack},
                    {"name": "network-topology-aware", "arguments": topology},
                ]
            },
        ],
    }


def chart_values(*, label_domain: str, production: bool, gpu_resources: Sequence[str]) -> dict[str, Any]:
    """Our scheduler config, on the system pool; highly available in production."""
    replicas = 2 if production else 1
    return {
        "basic": {"image_tag_version": VOLCANO_IMAGE_TAG},
        "custom": {
            "scheduler_name": SCHEDULER_NAME,
            "scheduler_config_override": yaml.safe_dump(scheduler_config(gpu_resources), sort_keys=False),
            "default_ns": pool_selector(label_domain, "system"),
            "leader_elect_enable": production,
            "scheduler_replicas": replicas,
            "controller_replicas": replicas,
            "admission_replicas": replicas,
        },
    }


def priority_class(tier: PriorityTierSpec) -> dict[str, Any]:
    """PriorityClass fields of one tier; only preempting tiers may evict to start."""
    return {
        "metadata": {"name": priority_class_name(tier.name)},
        "value": tier.value,
        "preemption_policy": "PreemptLowerPriority" if tier.preempts else "Never",
        "global_default": False,
        "description": tier.description or None,
    }


@dataclass(frozen=True, kw_only=True)
class TenantQueue:
    """One tenant's share of the cluster's GPUs: its GPU quota in this region."""

    tenant: str
    tier: str  # a priority tier's name: higher tiers are served first and reclaimed from last
    weight: int  # share of contended GPUs relative to the other queues
    reclaimable: bool
    capability: Mapping[str, int]  # resource -> most GPUs (0 for the cluster's other GPU resources)
    guarantee: Mapping[str, int] = field(default_factory=dict)  # resource -> GPUs kept from reclaim


def queue_spec(queue: TenantQueue, priority: int, gpu_resources: Sequence[str]) -> dict[str, Any]:
    """A Queue's spec; capped at 0 in every GPU resource the quota leaves out (Volcano bounds a queue only in the
    resources its capability lists: upstream.VOLCANO_UNLISTED_RESOURCES_ARE_UNCAPPED)."""
    spec: dict[str, Any] = {
        "weight": queue.weight,
        "reclaimable": queue.reclaimable,
        "priority": priority,
        "capability": {**dict.fromkeys(sorted(gpu_resources), 0), **queue.capability},
    }
    if queue.guarantee:
        # The queue webhook admits a guarantee only under an equal or larger `deserved`; the proportion plugin
        # computes its own deserved and never reads this one (VOLCANO_QUEUE_GUARANTEE_NEEDS_DESERVED).
        spec["guarantee"] = {"resource": dict(queue.guarantee)}
        spec["deserved"] = dict(queue.guarantee)
    return spec


def _hyper_node(name: str, tier: int, tier_name: str, members: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": HYPERNODE_API_VERSION,
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {"tier": tier, "tierName": tier_name, "members": members},
    }


@dataclass(frozen=True, kw_only=True)
class FabricDomain:
    """A GPU pool packed into one placement group (its nodes labelled by topology.gpu_pool_labels)."""

    pool: str
    zones: Sequence[str]


def hyper_nodes(domain: str, cluster_name: str, fabrics: Sequence[FabricDomain]) -> list[dict[str, Any]]:
    """The fabric tree of the cluster's multi-node pools, from the shared node labels.

    Tier 1: one placement group in one zone (EFA / GPUDirect RDMA between its nodes; the
    NVLink domains of the catalog's machines are single nodes). Tier 2: the zone, above its
    placement groups. Pools without a multi-node fabric get none, so a gang that must stay in
    tier 1 never spans plain-Ethernet nodes. The clouds' own network-layer labels carry values
    known only once nodes exist, so they cannot be named here.
    """
    tier1: list[dict[str, Any]] = []
    by_zone: dict[str, list[str]] = {}
    for fabric in fabrics:
        for zone in fabric.zones:
            name = f"{fabric.pool}-{zone}"
            selector = {**placement_group_selector(domain, cluster_name, fabric.pool), ZONE_LABEL: zone}
            tier1.append(
                _hyper_node(
                    name,
                    PLACEMENT_GROUP_TIER,
                    "placement-group",
                    [{"type": "Node", "selector": {"labelMatch": {"matchLabels": selector}}}],
                )
            )
            by_zone.setdefault(zone, []).append(name)
    tier2 = [
        _hyper_node(
            f"zone-{zone}",
            ZONE_TIER,
            "zone",
            [{"type": "HyperNode", "selector": {"exactMatch": {"name": child}}} for child in children],
        )
        for zone, children in by_zone.items()
    ]
    return tier1 + tier2


@dataclass(frozen=True, kw_only=True)
class VolcanoArgs:
    cluster: ClusterHandle
    label_domain: str
    production: bool
    gpu_resources: Sequence[str]  # the extended resources the cluster's GPU pools offer: packed on first
    priority_tiers: Sequence[PriorityTierSpec]  # a PriorityClass each
    queues: Sequence[TenantQueue] = ()
    fabrics: Sequence[FabricDomain] = ()  # the pools packed into placement groups

    def __post_init__(self) -> None:
        tiers = {t.name: t for t in self.priority_tiers}
        for i, queue in enumerate(self.queues):
            known(f"queues[{i}].tier", queue.tier, tiers, "priority tier")
        for i, fabric in enumerate(self.fabrics):
            if not fabric.zones:
                raise InputError(f"fabrics[{i}].zones", f"name the zones of pool {fabric.pool}'s placement group")


class Volcano(pulumi.ComponentResource):
    """The Volcano release, PriorityClasses per tier, a Queue per tenant and the HyperNode tree."""

    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: VolcanoArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:Volcano", name, None, opts)
        cluster = args.cluster
        ns = namespace(NAMESPACE, cluster, parent=self, pod_security="baseline")
        values = chart_values(
            label_domain=args.label_domain, production=args.production, gpu_resources=args.gpu_resources
        )
        self.release = helm_release(RELEASE, CHARTS["volcano"], cluster, ns, values, parent=self)

        on_cluster = pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=cluster.ready)
        for tier in args.priority_tiers:
            k8s.scheduling.v1.PriorityClass(
                f"{cluster.name}-priority-{tier.name}", **priority_class(tier), opts=on_cluster
            )

        # Queues and HyperNodes are Volcano CRs: their CRDs come with the release, and its admission webhook
        # (failurePolicy Fail) validates them, so they wait until its Service serves.
        admission = awaited_webhook_service(
            ADMISSION_SERVICE,
            release=self.release,
            installed=release_digest(CHARTS["volcano"], values),
            namespace=NAMESPACE,
            cluster=cluster,
            label_domain=args.label_domain,
            parent=self,
        )
        after_crds = partial(
            custom_resource,
            cluster=cluster,
            parent=self,
            crd_from=[self.release],
            depends_on=[*cluster.ready, admission],
        )
        priorities = {t.name: t.value for t in args.priority_tiers}
        tenant_queues = {
            queue_name(q.tenant): queue_spec(q, priorities[q.tier], args.gpu_resources) for q in args.queues
        }
        for queue, spec in tenant_queues.items():
            queue_manifest = {
                "apiVersion": SCHEDULING_API_VERSION,
                "kind": "Queue",
                "metadata": {"name": queue},
                "spec": spec,
            }
            after_crds(f"{cluster.name}-queue-{queue}", queue_manifest)
        tree = hyper_nodes(args.label_domain, cluster.name, args.fabrics)
        for node in tree:
            after_crds(f"{cluster.name}-hypernode-{node['metadata']['name']}", node)
        self.register_outputs(
            {"queues": list(tenant_queues), "hyperNodes": [node["metadata"]["name"] for node in tree]}
        )
