"""The order the cross-spec checks run in over a structurally valid EnvironmentSpec (components/checks/loader.py
runs them and reports each mistake once)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from components.checks.cache_read_checks import check_cache_reads
from components.checks.capacity_checks import check_capacity
from components.checks.consistency_checks import check_consistency
from components.checks.deployer_checks import check_deployers
from components.checks.endpoint_checks import check_endpoints
from components.checks.existing_cluster_checks import check_existing_clusters
from components.checks.federation_checks import check_federated_models, check_federation, check_search
from components.checks.gateway_checks import check_gateway, check_gateway_names
from components.checks.gpu_partitioning_checks import check_gpu_partitioning
from components.checks.gpu_pool_checks import check_gpu_pools
from components.checks.model_catalog_checks import check_model_catalog
from components.checks.model_store_checks import check_model_storage
from components.checks.observability_checks import check_observability
from components.checks.pricing_checks import check_pricing
from components.checks.region_checks import check_region
from components.checks.rollout_checks import check_rollout
from components.checks.scheduling_checks import check_scheduling
from components.checks.serving_checks import check_engine_options, check_serving
from components.checks.stand_in_checks import check_stand_ins
from components.checks.workload_checks import check_workloads
from components.config.base import Issue, duplicates
from components.config.environment import EnvironmentSpec


def _check_regions(env: EnvironmentSpec) -> Iterable[Issue]:
    yield from duplicates([r.name for r in env.regions], ("regions",), "region name")
    for i, region in enumerate(env.regions):
        yield from check_region(region, ("regions", i))


# Cross-field checks run after the structure is valid, before any resource exists.
# Stages run in order, all of them in one run (components/checks/loader.py semantic_issues): a later
# stage's checks rely on what earlier ones establish (known machine types, resolvable references), so
# after a mistake a check that cannot run is skipped and an issue under an already reported key is
# dropped, rather than reported as a consequence of the mistake. Model sizing comes late: it reads each
# pool's GPU partitioning (MIG profiles, time-slice shares), checked in stage 2; replicas are checked
# against pools and queues once every placement is sized.
SEMANTIC_CHECKS: tuple[tuple[Callable[[EnvironmentSpec], Iterable[Issue]], ...], ...] = (
    (
        _check_regions,
        check_model_catalog,
        check_existing_clusters,
        check_endpoints,
        check_gpu_pools,
        check_workloads,
        check_engine_options,
        check_federation,
        check_observability,
        check_pricing,
        check_deployers,
    ),
    (
        check_gpu_partitioning,
        check_model_storage,
        check_gateway,
        check_gateway_names,
        check_federated_models,
        check_search,
        check_consistency,
        check_rollout,
        check_stand_ins,
    ),
    # Queues are sized in the resources the pools offer, known once their partitioning is valid.
    (check_scheduling,),
    (check_serving,),
    # A node's weight streams count the engine processes of the replicas sized on its pool.
    (check_capacity, check_cache_reads),
)
