"""AWS vCPU service quotas that gate GPU instances, per instance class and purchase option.

EC2 meters running instances in vCPUs per region, one quota per instance class: every P
type (p4d, p5, p5en, p6-b200, ...) draws on the P quota, every G and VT type (g5, g6,
g6e, vt1) on the G-and-VT quota; Spot has its own quotas. New accounts often start at 0.
Sources: Service Quotas codes of the `ec2` service, as listed by
`aws service-quotas list-service-quotas --service-code ec2` ("Running On-Demand P
instances", "Running On-Demand G and VT instances", "All P Spot Instance Requests",
"All G and VT Spot Instance Requests"); docs.aws.amazon.com/AWSEC2/latest/UserGuide/
ec2-resource-limits.html and .../using-spot-limits.html.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SERVICE_CODE = "ec2"


@dataclass(frozen=True)
class VcpuQuota:
    code: str
    name: str


_ON_DEMAND = {
    "P": VcpuQuota("L-417A185B", "Running On-Demand P instances"),
    "G": VcpuQuota("L-DB2E81BA", "Running On-Demand G and VT instances"),
}
_SPOT = {
    "P": VcpuQuota("L-7212CCBC", "All P Spot Instance Requests"),
    "G": VcpuQuota("L-3819A6DF", "All G and VT Spot Instance Requests"),
}
_CLASS_OF_PREFIX = {"p": "P", "g": "G", "vt": "G"}


def vcpu_quota(instance_type: str, spot: bool) -> VcpuQuota | None:
    """The quota an instance type draws on, or None for classes without a GPU quota here."""
    prefix = re.match(r"[a-z]+", instance_type)
    instance_class = _CLASS_OF_PREFIX.get(prefix.group(0)) if prefix else None
    if instance_class is None:
        return None
    return (_SPOT if spot else _ON_DEMAND)[instance_class]
