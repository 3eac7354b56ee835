"""Small region / pool specs for unit tests of GPU partitioning, labels and operator values."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from components.config.region import AwsGpuPoolSpec, GcpGpuPoolSpec, GpuPoolSpec, RegionSpec
from platform_catalog.machines import MACHINES

_CLOUD = {
    "aws": {
        "region": "us-east-1",
        "zones": ["us-east-1a"],
        "network": {"cidr": "10.0.0.0/16"},
        "systemPool": {"machineType": "m7i.xlarge", "maxSize": 2},
    },
    "gcp": {
        "region": "us-central1",
        "zones": ["us-central1-a"],
        "project": "test-project",
        "network": {
            "cidr": "10.30.0.0/20",
            "podsCidr": "10.64.0.0/14",
            "servicesCidr": "10.68.0.0/20",
            "controlPlaneCidr": "172.16.0.0/28",
        },
        "systemPool": {"machineType": "n2-standard-4", "maxSize": 2},
    },
}


def pool(name: str, machine_type: str, max_size: int = 2, *, cloud: str | None = None, **fields: Any) -> GpuPoolSpec:
    """A pool of the machine type's cloud, or of `cloud` for a type the catalog does not know (its region entry's
    cloud decides which keys a pool takes)."""
    model = {"aws": AwsGpuPoolSpec, "gcp": GcpGpuPoolSpec}[cloud or MACHINES[machine_type].cloud]
    return model.model_validate({"name": name, "machineType": machine_type, "maxSize": max_size, **fields})


def region(cloud: str, *pools: GpuPoolSpec) -> RegionSpec:
    return TypeAdapter(RegionSpec).validate_python(
        {"name": "r1", "cloud": cloud, "kubernetesVersion": "1.33", **_CLOUD[cloud], "gpuPools": list(pools)}
    )
