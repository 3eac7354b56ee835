"""Model weights for one region (bucket, readers, serving identity, cache) and their sync across regions."""

from __future__ import annotations

from collections.abc import Mapping
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
    from components.domain.model_bucket import S3BucketRef

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
        ref = ModelStoreRef(
            cloud="aws", bucket=store.bucket.id, arn=store.bucket.arn, key_arn=store.key.arn, ready=(store.versioning,)
        )
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
        ref = ModelStoreRef(cloud="gcp", bucket=store.bucket.name)

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
    return RegionalModelStorage(bucket, store, serving, cache, ref)


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
    source = env.model_store.source(env)
    others = [r for r in env.regions if r.name != source.name]
    if not others:
        return

    def provider(region: RegionSpec) -> pulumi.ProviderResource:
        if providers is not None:
            return providers[region.name]
        from stacks.clouds import cloud_provider

        return cloud_provider(env, region, env_name)

    origin = stores[source.name].s3()
    aws_targets = {r.name: (stores[r.name].s3(), r.region) for r in others if r.cloud == "aws"}
    if aws_targets:
        from components.aws.model_store_replication import S3ModelReplication, S3ModelReplicationArgs

        S3ModelReplication(
            f"{source.name}-models-replication",
            S3ModelReplicationArgs(source=origin, source_region=source.region, destinations=aws_targets),
            opts=pulumi.ResourceOptions(providers={"aws": provider(source)}),
        )
    for region in (r for r in others if r.cloud == "gcp"):
        from components.gcp.model_store_transfer import S3ToGcsTransfer, S3ToGcsTransferArgs

        S3ToGcsTransfer(
            f"{region.name}-models-transfer",
            S3ToGcsTransferArgs(
                source=origin,
                source_region=source.region,
                sink_bucket=stores[region.name].bucket,
                project=region.project,
                interval_hours=env.model_store.sync_interval_hours,
            ),
            opts=pulumi.ResourceOptions(providers={"aws": provider(source), "gcp": provider(region)}),
        )


@dataclass(frozen=True, kw_only=True)
class ModelStoreRef:
    """A region's model bucket as cross-region wiring needs it, from this stack or another stack's outputs."""

    cloud: str
    bucket: pulumi.Input[str]  # S3 bucket id / GCS bucket name
    arn: pulumi.Input[str] | None = None  # S3 only: the bucket's and its KMS key's ARNs
    key_arn: pulumi.Input[str] | None = None
    ready: tuple[pulumi.Resource, ...] = ()  # in this stack: what replication waits for (versioning)

    def s3(self) -> S3BucketRef:
        from components.domain.model_bucket import S3BucketRef

        assert self.cloud == "aws" and self.arn is not None and self.key_arn is not None
        return S3BucketRef(bucket_id=self.bucket, bucket_arn=self.arn, key_arn=self.key_arn, ready=self.ready)

    @staticmethod
    def from_output(cloud: str, output: pulumi.Output[dict]) -> ModelStoreRef:
        """From another stack's `modelStore` output (model_store_output)."""
        if cloud == "aws":
            return ModelStoreRef(
                cloud=cloud,
                bucket=output.apply(lambda o: o["bucket"]),
                arn=output.apply(lambda o: o["arn"]),
                key_arn=output.apply(lambda o: o["keyArn"]),
            )
        return ModelStoreRef(cloud=cloud, bucket=output.apply(lambda o: o["bucket"]))


def model_store_output(ref: ModelStoreRef) -> dict[str, pulumi.Input[str]]:
    """What the global stack reads of a region's bucket."""
    out = {"cloud": ref.cloud, "bucket": ref.bucket}
    if ref.arn is not None:
        out |= {"arn": ref.arn, "keyArn": ref.key_arn}
    return out
