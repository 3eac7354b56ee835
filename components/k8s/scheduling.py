"""The scheduling contract: how a workload asks Volcano for its tenant's queue, its tier and a gang.

Model deployments call `model_scheduling` for the pod-level fields of every server pod and,
when one replica spans several nodes, `pod_group` for the gang that starts all of them or none.
The Volcano add-on creates the queues, PriorityClasses and HyperNodes these names refer to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from components.config.environment import EnvironmentSpec
    from components.config.workloads import ModelSpec

SCHEDULER_NAME = "volcano"
# Volcano's catch-all queue (its scheduler creates it) for workloads no tenant owns.
DEFAULT_QUEUE = "default"

QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
# Volcano treats pods without it as preemptible; real-time pods must say they are not.
PREEMPTABLE_ANNOTATION = "volcano.sh/preemptable"

# API version of Volcano's Queue and PodGroup.
SCHEDULING_API_VERSION = "scheduling.volcano.sh/v1beta1"

# HyperNode tiers (smaller = more bandwidth): a tensor-parallel gang must stay inside tier 1.
PLACEMENT_GROUP_TIER = 1
ZONE_TIER = 2


def priority_class_name(tier: str) -> str:
    """Prefixed so a tier can never take a built-in (system-*) or another team's class name."""
    return f"inference-{tier}"


def queue_name(tenant: str | None) -> str:
    return tenant or DEFAULT_QUEUE


@dataclass(frozen=True)
class PodScheduling:
    """Pod-level scheduling of one workload: put `pod_spec_fields()` in the pod spec, `annotations` on the pod."""

    priority_class_name: str
    queue: str
    annotations: dict[str, str] = field(default_factory=dict)
    scheduler_name: str = SCHEDULER_NAME

    def pod_spec_fields(self) -> dict[str, str]:
        return {"schedulerName": self.scheduler_name, "priorityClassName": self.priority_class_name}


def model_scheduling(env: EnvironmentSpec, model: ModelSpec) -> PodScheduling:
    """The model's tier PriorityClass, its owning tenant's queue, and whether higher tiers may evict it."""
    tier = next(t for t in env.priority_tiers if t.name == model.tier)
    queue = queue_name(model.tenant)
    return PodScheduling(
        priority_class_name=priority_class_name(tier.name),
        queue=queue,
        annotations={QUEUE_ANNOTATION: queue, PREEMPTABLE_ANNOTATION: str(tier.preemptible).lower()},
    )


def pod_group(
    name: str,
    namespace: str,
    scheduling: PodScheduling,
    members: int,
    resources_per_member: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """A gang for one multi-node replica: all `members` pods start together inside one fabric domain.

    Pods join it with the annotation `GROUP_NAME_ANNOTATION: name`. `resources_per_member`
    (e.g. {"nvidia.com/gpu": 8}) lets Volcano's enqueue check the queue's capability for the
    whole gang before any pod is placed.
    """
    if members < 2:
        raise ValueError(f"a PodGroup gangs a multi-node replica; got {members} member(s)")
    spec: dict[str, Any] = {
        "minMember": members,
        "queue": scheduling.queue,
        "priorityClassName": scheduling.priority_class_name,
        "networkTopology": {"mode": "hard", "highestTierAllowed": PLACEMENT_GROUP_TIER},
    }
    if resources_per_member:
        spec["minResources"] = {resource: n * members for resource, n in resources_per_member.items()}
    return {
        "apiVersion": SCHEDULING_API_VERSION,
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
