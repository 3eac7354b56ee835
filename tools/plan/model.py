"""A finished plan: the recorded resources with the queries reports and tests need."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from tools.plan.engine import Evaluation, PlannedResource

REGION_TYPE = "inference-platform:stacks:RegionalPlatform"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
K8S_PROVIDER = "pulumi:providers:kubernetes"


@dataclass
class Plan:
    environment: str
    project: str
    evaluation: Evaluation
    spec: Any = None  # the validated EnvironmentSpec
    policy: list[dict] = field(default_factory=list)  # policy.json: every violation
    policy_verdicts: list[dict] = field(default_factory=list)  # one row per policy rule (plan.md)
    policy_config: Mapping[str, Any] = field(default_factory=dict)  # the pack settings used, for `pulumi preview`
    # An environment of several stacks: each stack's own plan (this plan is their union).
    stacks: dict[str, Plan] = field(default_factory=dict)
    # The bring-up check of the environment's stacks (tools/rollout/bringup.py Report), once run.
    bring_up: Any = None
    # A stack whose runner lives in the network it creates: what its network-first program registers.
    bootstrap: Plan | None = None

    @property
    def resources(self) -> list[PlannedResource]:
        return self.evaluation.resources

    @property
    def outputs(self) -> dict[str, Any]:
        return self.evaluation.outputs

    @cached_property
    def by_urn(self) -> dict[str, PlannedResource]:
        return {r.urn: r for r in self.resources}

    @cached_property
    def _children(self) -> dict[str | None, list[PlannedResource]]:
        index: dict[str | None, list[PlannedResource]] = defaultdict(list)
        for r in self.resources:
            index[r.parent].append(r)
        return index

    def of_type(self, type_: str) -> list[PlannedResource]:
        return [r for r in self.resources if r.type == type_]

    def named(self, name: str, type_: str | None = None) -> PlannedResource:
        found = [r for r in self.resources if r.name == name and (type_ is None or r.type == type_)]
        if len(found) != 1:
            raise LookupError(f"{len(found)} resources named {name!r} (type {type_})")
        return found[0]

    def children(self, urn: str) -> list[PlannedResource]:
        return self._children.get(urn, [])

    def descendants(self, urn: str) -> Iterator[PlannedResource]:
        for child in self.children(urn):
            yield child
            yield from self.descendants(child.urn)

    def ancestors(self, resource: PlannedResource) -> Iterator[PlannedResource]:
        parent = self.by_urn.get(resource.parent or "")
        while parent is not None:
            yield parent
            parent = self.by_urn.get(parent.parent or "")

    @cached_property
    def _regions(self) -> dict[str, str | None]:
        """urn -> region entry, for every resource at once (parents are registered before children)."""
        regions: dict[str, str | None] = {}
        for r in self.resources:
            regions[r.urn] = r.name if r.type == REGION_TYPE else regions.get(r.parent or "")
        return regions

    def region_of(self, resource: PlannedResource) -> str | None:
        """Name of the region entry a resource belongs to (None for environment-level ones)."""
        return self._regions[resource.urn]

    def cluster_of(self, resource: PlannedResource) -> str | None:
        """Kubernetes resources: the cluster their provider targets (providers are named after clusters)."""
        provider = self.by_urn.get(resource.provider or "")
        return provider.name if provider is not None and provider.type == K8S_PROVIDER else None

    def kubernetes_objects(self) -> list[PlannedResource]:
        return [r for r in self.resources if is_kubernetes_object(r)]

    def helm_releases(self) -> list[PlannedResource]:
        return self.of_type(HELM_RELEASE)


def is_kubernetes_object(resource: PlannedResource) -> bool:
    return (
        resource.custom
        and resource.type.startswith("kubernetes:")
        and resource.type != HELM_RELEASE
        and "kind" in resource.inputs
    )


def is_patch(resource: PlannedResource) -> bool:
    """A server-side-apply patch of an object some other resource (or controller) creates."""
    return resource.type.endswith("Patch")
