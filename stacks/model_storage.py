"""Model weights for one region (bucket, readers, serving identity, cache) and their sync across regions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi

from components.addons.model_cache import (
    CACHE_SERVICE_ACCOUNT,
    FLUID_INJECTION_LABEL,
    ModelCache,
    ModelCacheArgs,
    prewarmed_models,
)
from components.config.environment import EnvironmentSpec
from components.config.model_store import cache_plan
from components.config.region import RegionSpec
from components.k8s.cluster import ClusterHandle
from components.k8s.names import MODEL_SERVER_SERVICE_ACCOUNT, SERVING_NAMESPACE, model_bucket_name
from components.k8s.workload_identity import ServiceAccountRef
from components.serving.identity import ServingIdentity, ServingIdentityArgs

if TYPE_CHECKING:
    from stacks.region import RegionalPlatform

MODEL_SERVER = "model-server"
MODEL_CACHE = "model-cache"


@dataclass
class RegionalModelStorage:
    bucket: str
    store: pulumi.ComponentResource  # S3ModelStore or GcsModelStore
    serving: ServingIdentity
    cache: ModelCache | None


def build_model_storage(
    parent: pulumi.Resource, env: EnvironmentSpec, region: RegionSpec, stack: str, cluster: ClusterHandle
) -> RegionalModelStorage:
    bucket = model_bucket_name(env.model_store.bucket_prefix, stack, region.name)
    readers = {MODEL_SERVER: ServiceAccountRef(SERVING_NAMESPACE, MODEL_SERVER_SERVICE_ACCOUNT)}
    if region.model_cache.enabled:
        readers[MODEL_CACHE] = CACHE_SERVICE_ACCOUNT
    opts = pulumi.ResourceOptions(parent=parent, providers={region.cloud: cluster.cloud_provider})
    # Each cloud's SDK is imported only by the regions that use it.
    if region.cloud == "aws":
        from components.aws.model_store import S3ModelStore, S3ModelStoreArgs

        store = S3ModelStore(
            region.name,
            S3ModelStoreArgs(bucket, region.region, env.model_store, env.production, cluster.identity, readers),
            opts=opts,
        )
        identities = {label: role.arn for label, role in store.reader_roles.items()}
    else:
        from components.gcp.model_store import GcsModelStore, GcsModelStoreArgs

        store = GcsModelStore(
            region.name,
            GcsModelStoreArgs(
                bucket,
                region.project,
                region.region,
                cluster.name,
                env.model_store,
                env.production,
                cluster.identity,
                readers,
            ),
            opts=opts,
        )
        identities = {label: account.email for label, account in store.reader_accounts.items()}

    serving = ServingIdentity(
        region.name,
        ServingIdentityArgs(
            cluster=cluster,
            cloud_identity=identities[MODEL_SERVER],
            namespace_labels=FLUID_INJECTION_LABEL if region.model_cache.enabled else {},
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
                bucket=bucket,
                cloud_identity=identities[MODEL_CACHE],
                serving_namespace=serving.namespace,
                label_domain=env.label_domain,
                prewarm=tuple(prewarmed_models(env, region)),
            ),
            opts=pulumi.ResourceOptions(parent=parent),
        )
    return RegionalModelStorage(bucket, store, serving, cache)


def sync_model_stores(env: EnvironmentSpec, platforms: dict[str, RegionalPlatform]) -> None:
    """Keep every region's bucket in step with the source of truth.

    Decision: the source is an S3 bucket (modelStore.sourceRegion, default the first AWS region);
    uploads go there only. Other AWS buckets get S3 replication from it (owned by the source
    region), GCS buckets a Storage Transfer job from it every `syncIntervalHours` (owned by the
    GCS region).
    """
    source = env.model_store.source(env)
    origin = platforms[source.name]
    others = [r for r in env.regions if r.name != source.name]
    aws_targets = {r.name: (platforms[r.name].model_storage.store, r.region) for r in others if r.cloud == "aws"}
    if aws_targets:
        from components.aws.model_store_replication import S3ModelReplication, S3ModelReplicationArgs

        S3ModelReplication(
            f"{source.name}-models-replication",
            S3ModelReplicationArgs(
                source=origin.model_storage.store, source_region=source.region, destinations=aws_targets
            ),
            opts=pulumi.ResourceOptions(parent=origin, providers={"aws": origin.cluster.cloud_provider}),
        )
    for region in (r for r in others if r.cloud == "gcp"):
        from components.gcp.model_store_transfer import S3ToGcsTransfer, S3ToGcsTransferArgs

        sink = platforms[region.name]
        S3ToGcsTransfer(
            f"{region.name}-models-transfer",
            S3ToGcsTransferArgs(
                source=origin.model_storage.store,
                source_region=source.region,
                sink=sink.model_storage.store,
                project=region.project,
                interval_hours=env.model_store.sync_interval_hours,
            ),
            opts=pulumi.ResourceOptions(
                parent=sink,
                providers={"aws": origin.cluster.cloud_provider, "gcp": sink.cluster.cloud_provider},
            ),
        )
