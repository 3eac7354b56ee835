"""Model weights for one region (bucket, readers, serving identity, cache) and their sync across regions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi

from components.addons.model_cache import (
    CACHE_SERVICE_ACCOUNT,
    CacheNodes,
    ModelCache,
    ModelCacheArgs,
    prewarmed_models,
    under_store,
)
from components.config.base import ConfigError, Issue
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.domain.cache_plan import cache_plan
from components.domain.cache_reads import cache_reads
from components.domain.model_bucket import S3BucketRef
from components.k8s.cluster import ClusterHandle
from components.k8s.names import MODEL_SERVER_SERVICE_ACCOUNT, model_bucket_name
from components.k8s.workload_identity import ServiceAccountRef
from components.serving.identity import ServingIdentity, ServingIdentityArgs
from components.serving.network_policies import prometheus_namespace
from platform_catalog.names import SERVING_NAMESPACE
from stacks.clouds import GcsBucketRef, ModelStoreRef, backend_for

MODEL_SERVER = "model-server"
MODEL_CACHE = "model-cache"


@dataclass
class RegionalModelStorage:
    bucket: str
    store: pulumi.ComponentResource  # S3ModelStore or GcsModelStore
    serving: ServingIdentity
    cache: ModelCache | None
    ref: ModelStoreRef  # for cross-region wiring


def build_model_storage(
    parent: pulumi.Resource, env: EnvironmentSpec, region: RegionSpec, stack: str, cluster: ClusterHandle
) -> RegionalModelStorage:
    bucket = model_bucket_name(env.model_store.bucket_prefix, stack, region.name)
    readers = {MODEL_SERVER: ServiceAccountRef(namespace=SERVING_NAMESPACE, name=MODEL_SERVER_SERVICE_ACCOUNT)}
    if region.model_cache.enabled:
        readers[MODEL_CACHE] = CACHE_SERVICE_ACCOUNT
    store = backend_for(region.cloud).model_store(parent, env, region, bucket=bucket, cluster=cluster, readers=readers)
    identities = store.identities
    serving = ServingIdentity(
        region.name,
        ServingIdentityArgs(
            cluster=cluster,
            cloud=region.cloud,
            cloud_identity=identities[MODEL_SERVER],
            prometheus_namespace=prometheus_namespace(region.observability),
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )
    cache = None
    if region.model_cache.enabled:
        cache = ModelCache(
            region.name,
            ModelCacheArgs(
                cluster=cluster,
                plan=cache_plan(region),
                store=under_store(region, bucket),
                nodes=CacheNodes.of(region),
                cloud_identity=identities[MODEL_CACHE],
                serving_namespace=serving.namespace,
                label_domain=env.label_domain,
                reads=cache_reads(env, region),
                prewarm=tuple(prewarmed_models(env, region)),
            ),
            opts=pulumi.ResourceOptions(parent=parent),
        )
    return RegionalModelStorage(bucket, store.component, serving, cache, store.ref)


def sync_model_stores(
    env: EnvironmentSpec,
    env_name: str,
    stores: Mapping[str, ModelStoreRef],
    providers: Mapping[str, pulumi.ProviderResource] | None = None,
) -> None:
    """Keep every region's bucket in step with the source of truth.

    Decision: the source is an S3 bucket (modelStore.sourceRegion, default the first AWS region);
    uploads go there only. Other AWS buckets get S3 replication from it (configured on the source
    bucket), GCS buckets a Storage Transfer job from it every `syncIntervalHours`. `providers`: each
    region's cloud provider in this stack (the regions' own); without it (the global stack), they are made here.
    """
    source = env.model_store_source()
    others = [r for r in env.regions if r.name != source.name]
    if not others:
        return

    def provider(region: RegionSpec) -> pulumi.ProviderResource:
        if providers is not None:
            return providers[region.name]
        from stacks.clouds import cloud_provider

        return cloud_provider(env, region, env_name)

    origin = stores[source.name]
    if not isinstance(origin, S3BucketRef):
        raise ConfigError(
            [Issue("modelStore.sourceRegion", f"{source.name} is on GCP: name an AWS region (S3 bucket)")]
        )
    aws_targets = {r.name: (ref, r.region) for r in others if isinstance(ref := stores[r.name], S3BucketRef)}
    if aws_targets:
        from components.aws.model_store_replication import S3ModelReplication, S3ModelReplicationArgs

        S3ModelReplication(
            f"{source.name}-models-replication",
            S3ModelReplicationArgs(source=origin, source_region=source.region, destinations=aws_targets),
            opts=pulumi.ResourceOptions(providers={"aws": provider(source)}),
        )
    for region in others:
        sink = stores[region.name]
        if not isinstance(sink, GcsBucketRef):
            continue
        from components.gcp.model_store_transfer import S3ToGcsTransfer, S3ToGcsTransferArgs
        from stacks.clouds.gcp import location

        S3ToGcsTransfer(
            f"{region.name}-models-transfer",
            S3ToGcsTransferArgs(
                source=origin,
                source_region=source.region,
                sink_bucket=sink.bucket,
                project=location(region).project,
                interval_hours=env.model_store.sync_interval_hours,
            ),
            opts=pulumi.ResourceOptions(providers={"aws": provider(source), "gcp": provider(region)}),
        )
