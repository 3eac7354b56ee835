"""Model weights: the per-region buckets (environment level) and the cache over them (per region)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

from pydantic import AfterValidator, Field

from components.config.base import Spec

_QUANTITY = re.compile(r"^(\d+)(Gi|Ti)$")
_BUCKET_PREFIX = re.compile(r"^[a-z0-9][a-z0-9-]{1,28}[a-z0-9]$")
# S3 and GCS bucket names are at most 63 characters; `<prefix>-<env>-<region>-models` leaves
# this much for prefix + region name when environment (stack) names stay within 10 characters.
BUCKET_NAME_BUDGET = 63 - len("--") - len("-models") - 10

# The cache shares GPU nodes with model servers, which need host memory to stage weights and
# local NVMe for container images: the cache may take at most these shares of a node.
MEMORY_SHARE_MAX = 0.25
SSD_SHARE_MAX = 0.8
# Defaults leave more headroom than the maximum.
MEMORY_SHARE_DEFAULT = 0.125
SSD_SHARE_DEFAULT = 0.6


def _check_quantity(value: str) -> str:
    if not _QUANTITY.match(value):
        raise ValueError(f"{value!r} is not a size; use a whole number of Gi or Ti, e.g. 64Gi")
    return value


def _check_bucket_prefix(value: str) -> str:
    if not _BUCKET_PREFIX.match(value) or "--" in value or "google" in value:
        raise ValueError(
            f"{value!r} is not usable as a bucket name prefix; use 3-30 lowercase letters, digits and "
            "single '-', starting and ending with a letter or digit, without 'google'"
        )
    return value


Quantity = Annotated[str, AfterValidator(_check_quantity)]
"""A size in whole GiB or TiB, written like a Kubernetes quantity: 64Gi, 2Ti."""


MIN_FUSE_MEMORY_GIB = 2


def gib(quantity: str) -> int:
    number, unit = _QUANTITY.match(quantity).groups()  # type: ignore[union-attr]
    return int(number) * (1024 if unit == "Ti" else 1)


class ModelStoreSpec(Spec):
    """One bucket per region entry; one of them is the source of truth the others are synced from."""

    bucket_prefix: Annotated[str, AfterValidator(_check_bucket_prefix)] = Field(
        description="First part of every model bucket name (<prefix>-<env>-<region>-models); bucket names are "
        "global, so make it unique to your organisation, e.g. acme-inference."
    )
    source_region: str | None = Field(
        None,
        description="Region entry whose bucket receives uploads and feeds the others; default the first AWS "
        "region entry (S3 replication and the S3-to-GCS transfer both start from S3).",
    )
    noncurrent_version_days: int = Field(
        30, ge=1, le=3650, description="Days an overwritten or deleted weights file stays recoverable."
    )
    abort_multipart_days: int = Field(
        7, ge=1, le=365, description="Days after which unfinished multipart uploads are removed."
    )
    gcs_cmek: bool = Field(
        False, description="GCS buckets: encrypt with a customer-managed Cloud KMS key (rotated every 90 days)."
    )
    sync_interval_hours: int = Field(
        1, ge=1, le=24, description="How often the transfer job copies new weights from the source S3 bucket to GCS."
    )


class ModelCacheSpec(Spec):
    """Alluxio cache (via Fluid) over the region's model bucket, on the region's GPU nodes."""

    enabled: bool = Field(False, description="Run the cache; model servers then read pvc://models/<path>.")
    memory: Quantity | None = Field(
        None, description="Memory tier per cache worker, e.g. 16Gi; default 1/8 of the smallest GPU node's memory."
    )
    ssd: Quantity | None = Field(
        None,
        description="Local NVMe tier per cache worker, e.g. 300Gi (0Gi: none); default 60% of the smallest "
        "GPU node's local NVMe.",
    )
    replicas: int | None = Field(
        None, ge=1, description="Cache workers (one per GPU node); default the GPU pools' summed minSize, at least 1."
    )
    prewarm: bool = Field(True, description="Load every model placed in this region into the cache ahead of use.")
    fuse_memory: Quantity = Field(
        "4Gi",
        description="Memory of the FUSE daemon on each GPU node that mounts the cache, at least 2Gi: a quarter JVM "
        "heap, half direct buffers for reads in flight. Fluid's default without it is a 16 GiB heap and 32 GiB of "
        "direct memory, unbounded, beside every model server.",
    )


@dataclass(frozen=True)
class CachePlan:
    """The cache of one region with every default resolved."""

    memory_gib: int
    ssd_gib: int
    replicas: int
    pools: tuple[str, ...]
    fuse_memory_gib: int

    @property
    def capacity_gib(self) -> int:
        return self.replicas * (self.memory_gib + self.ssd_gib)
