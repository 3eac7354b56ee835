"""The observability add-on's narrow inputs from the environment: what the region runs, its objectives and costs."""

from __future__ import annotations

from components.addons.observability import ObservabilityArgs
from components.addons.scrape_targets import observed_scope
from components.addons.showback import showback_groups
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.domain.objectives import ttft_objectives
from components.k8s.cluster import ClusterHandle


def observability_args(env: EnvironmentSpec, region: RegionSpec, cluster: ClusterHandle) -> ObservabilityArgs:
    return ObservabilityArgs(
        cluster=cluster,
        region_name=region.name,
        spec=region.observability,
        scope=observed_scope(env, region),
        label_domain=env.label_domain,
        production=env.production,
        ttft_objectives=ttft_objectives(env, region),
        showback=showback_groups(env, region),
    )
