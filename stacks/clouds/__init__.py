"""One backend per cloud behind one small interface, chosen once per region by an exhaustive match.

A backend is a module (`stacks/clouds/aws.py`, `gcp.py`) with the functions of `CloudBackend`: its own
explicit provider, the cluster with its network and GPU pools, and the model bucket with its readers. Adding
a cloud means adding its module and its catalog entries; `backend_for`'s `assert_never` and the type
checker name what is missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, assert_never

import pulumi

from components.catalog.regions import Cloud
from components.config.base import ConfigError, Issue, join_path
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.domain.model_bucket import S3BucketRef
from components.k8s.cluster import ClusterHandle, PublicLoadBalancer
from components.k8s.workload_identity import ServiceAccountRef


def platform_tags(env: EnvironmentSpec, region: RegionSpec, stack: str) -> dict[str, str]:
    """Cost allocation and ownership on every resource (AWS tags, GCP labels)."""
    return {"platform": "inference-platform", "environment": stack, "region-entry": region.name, **env.tags}


@dataclass(frozen=True, kw_only=True)
class GcsBucketRef:
    """A GCS model bucket as cross-region wiring sees it: a Storage Transfer job's sink."""

    bucket: pulumi.Input[str]  # the bucket's name


ModelStoreRef = S3BucketRef | GcsBucketRef
"""A region's model bucket as cross-region wiring needs it, from this stack or another stack's outputs: one kind per
cloud (an S3 bucket is a replication source or destination, and carries its ARNs)."""


def model_store_ref(cloud: Cloud, output: pulumi.Output[dict[str, Any]]) -> ModelStoreRef:
    """From another stack's `modelStore` output (model_store_output)."""
    bucket = output.apply(lambda o: o["bucket"])
    match cloud:
        case "aws":
            arn, key_arn = output.apply(lambda o: o["arn"]), output.apply(lambda o: o["keyArn"])
            return S3BucketRef(bucket_id=bucket, bucket_arn=arn, key_arn=key_arn)
        case "gcp":
            return GcsBucketRef(bucket=bucket)
        case other:
            assert_never(other)


def model_store_output(ref: ModelStoreRef) -> dict[str, pulumi.Input[str]]:
    """What the global stack reads of a region's bucket."""
    match ref:
        case S3BucketRef():
            return {"cloud": "aws", "bucket": ref.bucket_id, "arn": ref.bucket_arn, "keyArn": ref.key_arn}
        case GcsBucketRef():
            return {"cloud": "gcp", "bucket": ref.bucket}
        case other:
            assert_never(other)


@dataclass(frozen=True, kw_only=True)
class GatewayDnsPublisher:
    """How ExternalDNS publishes a region's gateway name in its cloud's DNS, the zone made or named."""

    identity: pulumi.Input[str]  # IAM role ARN / Google service account e-mail
    flags: tuple[pulumi.Input[str], ...]  # --provider and its zone filters
    domain_filter: str | None  # --domain-filter, when the provider's zone selection allows one
    env: dict[str, str]


def required(value: str | None, key: str, message: str) -> str:
    """A key the config checks require for this gateway (check_gateway_names)."""
    if value is None:
        raise ConfigError([Issue(key, message)])
    return value


def private_zone_network(env: EnvironmentSpec, region: RegionSpec, cluster: ClusterHandle) -> pulumi.Input[str]:
    """The network an internal gateway's private zone answers in: the cluster's, which an existing GKE cluster's
    handle does not carry (config/gateway_tls.py refuses an internal gateway there)."""
    if cluster.network_id is None:
        at = join_path("regions", env.regions.index(region), "gateway", "exposure")
        raise ConfigError([Issue(at, "no network to bind a private zone to: exposure: public, or publish it yourself")])
    return cluster.network_id


@dataclass(frozen=True, kw_only=True)
class ModelStore:
    """A region's model bucket: the component, each reader's cloud identity, and its reference."""

    component: pulumi.ComponentResource
    identities: Mapping[str, pulumi.Output[str]]  # reader label -> IAM role ARN / service account email
    ref: ModelStoreRef


class CloudBackend(Protocol):
    """What composing a region needs of its cloud."""

    def provider(
        self, env: EnvironmentSpec, region: RegionSpec, env_name: str, parent: pulumi.Resource | None = None
    ) -> pulumi.ProviderResource:
        """The region's own explicit provider, tagging or labelling everything it creates."""
        ...

    def cluster(
        self,
        parent: pulumi.Resource,
        env: EnvironmentSpec,
        region: RegionSpec,
        cluster_name: str,
        stack: str,
        *,
        public_sources: pulumi.Input[Sequence[str]] | None = None,
    ) -> ClusterHandle:
        """Network, cluster, GPU pools and their autoscaling; the handle every add-on takes. `public_sources`:
        addresses the cluster's public endpoint admits besides the region's `apiAccess.publicCidrs` (the federation
        host's NAT egress: stacks/environment.py dialled_by_the_host); a cluster the region names as existing is not changed."""
        ...

    def network(
        self, parent: pulumi.Resource, env: EnvironmentSpec, region: RegionSpec, cluster_name: str, stack: str
    ) -> pulumi.ComponentResource:
        """The provider and network alone, with the URNs `cluster` gives them (a network-first bootstrap)."""
        ...

    def model_store(
        self,
        parent: pulumi.Resource,
        env: EnvironmentSpec,
        region: RegionSpec,
        *,
        bucket: str,
        cluster: ClusterHandle,
        readers: Mapping[str, ServiceAccountRef],
    ) -> ModelStore:
        """The model bucket and a cloud identity per reader (service account) of it."""
        ...

    def gateway_dns(
        self,
        parent: pulumi.Resource,
        env: EnvironmentSpec,
        region: RegionSpec,
        cluster: ClusterHandle,
        *,
        name: str,
        hostname: str,
        internal: bool,
    ) -> GatewayDnsPublisher:
        """ExternalDNS's zone for the gateway's `hostname` (the domain's public one, or a private zone of the region's
        network when `internal`) and its cloud identity, under `parent`."""
        ...

    def public_load_balancer(self, parent: pulumi.Resource, name: str, cluster: ClusterHandle) -> PublicLoadBalancer:
        """A public load balancer for a Service on `cluster`, spread over its zones; what it reserves (an address) is
        created under `parent` as `name`."""
        ...


def backend_for(cloud: Cloud) -> CloudBackend:
    """Each cloud's SDK is imported only by the regions that use it."""
    match cloud:
        case "aws":
            from stacks.clouds import aws

            return aws
        case "gcp":
            from stacks.clouds import gcp

            return gcp
        case other:
            assert_never(other)


def cloud_provider(
    env: EnvironmentSpec, region: RegionSpec, env_name: str, parent: pulumi.Resource | None = None
) -> pulumi.ProviderResource:
    return backend_for(region.cloud).provider(env, region, env_name, parent)
