"""Will the region's GPU pools get their instances? Offerings, instance facts, quotas, reservations.

A handful of read-only EC2 / Service Quotas calls per region, batched over the pools:
DescribeInstanceTypeOfferings and DescribeInstanceTypes once for all pool types,
GetServiceQuota once per quota, DescribeCapacityReservations once per referenced id.
Each check is a pure function of what the API returned, so tests can feed it directly.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from components.catalog import quotas
from components.catalog.machines import machine
from components.config.base import join_path
from components.config.region import GpuPoolSpec, RegionSpec
from platform_catalog.machines import MachineType
from tools.preflight.aws_api import AccessDenied, ClientFactory, call, collect, error_code
from tools.preflight.findings import Finding

# Reservation states from the DescribeCapacityReservations API reference.
_RESERVATION_NOT_YET = {"scheduled", "pending", "payment-pending", "assessing", "delayed"}


@dataclass(frozen=True)
class PoolRef:
    """A GPU pool with where it sits in the config, for hints that name the key to change."""

    region_index: int
    pool_index: int
    pool: GpuPoolSpec
    machine: MachineType

    def path(self, *keys: str) -> str:
        return join_path("regions", self.region_index, "gpuPools", self.pool_index, *keys)

    @property
    def subject(self) -> str:
        return f"pool {self.pool.name} ({self.pool.machine_type})"


@dataclass
class QuotaDemand:
    """vCPUs the pools drawing on one quota may run at their min and max size."""

    quota: quotas.VcpuQuota
    min_vcpus: int = 0
    max_vcpus: int = 0
    pools: list[str] = field(default_factory=list)


def check_aws_pools(region_index: int, region: RegionSpec, client_for: ClientFactory) -> list[Finding]:
    findings: list[Finding] = []
    refs: list[PoolRef] = []
    pools: Sequence[GpuPoolSpec] = region.gpu_pools
    for j, pool in enumerate(pools):
        known = machine(pool.machine_type)
        if known is None or known.cloud != "aws":
            findings.append(
                Finding(
                    region.name,
                    "instance type",
                    f"pool {pool.name} ({pool.machine_type})",
                    "fail",
                    f"{pool.machine_type} is not an AWS GPU type of the catalog",
                    f"set {join_path('regions', region_index, 'gpuPools', j, 'machineType')} to a type in "
                    "platform_catalog/machines.py",
                )
            )
        else:
            refs.append(PoolRef(region_index, j, pool, known))
    if not refs:
        return findings

    ec2 = client_for("ec2", region.region)
    types = sorted({ref.machine.name for ref in refs})
    offered = _fetch(region.name, "offering", "ec2:DescribeInstanceTypeOfferings", lambda: _offerings(ec2, types))
    described = _fetch(region.name, "instance type", "ec2:DescribeInstanceTypes", lambda: _instance_types(ec2, types))
    findings.extend(denied for denied in (offered, described) if isinstance(denied, Finding))

    for ref in refs:
        zones = region.pool_zones(ref.pool)
        if not isinstance(offered, Finding):
            findings.append(offering_finding(region, ref, zones, offered))
        if not isinstance(described, Finding):
            findings.append(instance_type_finding(region.name, ref, described.get(ref.machine.name)))
        if ref.pool.capacity.type in ("reservation", "capacityBlock"):
            findings.append(_reservation(region, ref, zones, ec2))

    vcpus = {} if isinstance(described, Finding) else {t: i["VCpuInfo"]["DefaultVCpus"] for t, i in described.items()}
    findings.extend(_quotas(region, refs, vcpus, client_for))
    return findings


def _fetch(region_name: str, check: str, action: str, request) -> Any:
    """The API data, or a warn finding when the identity may not call the API."""
    try:
        return request()
    except AccessDenied:
        return _denied(region_name, check, "all pools", action)


def _denied(region_name: str, check: str, subject: str, action: str) -> Finding:
    return Finding(
        region_name,
        check,
        subject,
        "warn",
        f"not checked: access denied to {action}",
        f"grant {action} to the identity running preflight (docs/operations.md, Preflight)",
    )


# --- offerings ------------------------------------------------------------------------------


def _offerings(ec2: Any, types: list[str]) -> dict[str, set[str]]:
    """Zones of the region offering each type (zone names as this account sees them)."""
    items = collect(
        ec2,
        "describe_instance_type_offerings",
        "ec2:DescribeInstanceTypeOfferings",
        "InstanceTypeOfferings",
        LocationType="availability-zone",
        Filters=[{"Name": "instance-type", "Values": types}],
    )
    offered: dict[str, set[str]] = {t: set() for t in types}
    for item in items:
        offered.setdefault(item["InstanceType"], set()).add(item["Location"])
    return offered


def offering_finding(region: RegionSpec, ref: PoolRef, zones: list[str], offered: dict[str, set[str]]) -> Finding:
    available = offered.get(ref.machine.name, set())
    missing = [z for z in zones if z not in available]
    if not missing:
        return Finding(region.name, "offering", ref.subject, "pass", f"offered in {', '.join(zones)}")
    where = ", ".join(sorted(available)) or f"no zone of {region.region}"
    usable = [z for z in zones if z in available]
    if usable:
        hint = f"set {ref.path('zones')} to [{', '.join(usable)}] or choose another machine type"
    elif available:
        hint = f"set {ref.path('zones')} to zones that offer it ({where}), adding them to the region's zones"
    else:
        hint = f"choose another machine type or region: {ref.machine.name} is not offered in {region.region}"
    return Finding(
        region.name,
        "offering",
        ref.subject,
        "fail",
        f"{ref.machine.name} is not offered in {', '.join(missing)} (offered in: {where})",
        hint,
    )


# --- instance type facts: EFA and vCPUs -------------------------------------------------------


def _instance_types(ec2: Any, types: list[str]) -> dict[str, dict[str, Any]]:
    """Types the region does not have are left out (EC2 rejects the whole batch for one of them)."""
    try:
        items = collect(
            ec2, "describe_instance_types", "ec2:DescribeInstanceTypes", "InstanceTypes", InstanceTypes=types
        )
    except ClientError as exc:
        if error_code(exc) != "InvalidInstanceType":
            raise
        return {} if len(types) == 1 else {k: v for t in types for k, v in _instance_types(ec2, [t]).items()}
    return {item["InstanceType"]: item for item in items}


def instance_type_finding(region_name: str, ref: PoolRef, info: dict[str, Any] | None) -> Finding:
    """The catalog's EFA count and vCPUs against what EC2 reports for the type.

    An `efa: true` pool's launch template creates one EFA interface per `efa_interfaces` of the
    catalog entry (config validation allows `efa` only where that is non-zero; AWS's layout: card 0 device 1, then device 0 of every further network
    card), so a count above the type's MaximumEfaInterfaces makes every launch fail.
    """
    name = ref.machine.name
    if info is None:
        return Finding(
            region_name,
            "instance type",
            ref.subject,
            "fail",
            f"EC2 does not know {name} in this region",
            "choose a machine type this region has",
        )
    network = info.get("NetworkInfo", {})
    supported = bool(network.get("EfaSupported"))
    maximum = network.get("EfaInfo", {}).get("MaximumEfaInterfaces", 0) if supported else 0
    expected = ref.machine.efa_interfaces
    vcpus = info["VCpuInfo"]["DefaultVCpus"]
    data = {"vcpus": vcpus, "efaInterfaces": expected, "efaMaximum": maximum}
    catalog_fix = "correct platform_catalog/machines.py"

    if expected and not supported:
        return Finding(
            region_name,
            "instance type",
            ref.subject,
            "fail",
            f"the pool creates {expected} EFA interfaces but EC2 reports no EFA support for {name}",
            f"{catalog_fix} (efa_interfaces) or choose an EFA type",
            data,
        )
    if expected > maximum:
        return Finding(
            region_name,
            "instance type",
            ref.subject,
            "fail",
            f"the pool creates {expected} EFA interfaces but {name} allows at most {maximum}",
            f"{catalog_fix}: efa_interfaces={maximum}",
            data,
        )
    drift = []
    if expected < maximum:
        drift.append(f"the pool creates {expected} of {maximum} possible EFA interfaces")
    if vcpus != ref.machine.vcpus:
        drift.append(f"catalog says {ref.machine.vcpus} vCPUs, EC2 {vcpus} (quotas use EC2's)")
    efa = f"EFA: {expected} interfaces" if expected else "no EFA"
    if drift:
        return Finding(
            region_name, "instance type", ref.subject, "warn", "; ".join(drift), f"{catalog_fix} to match EC2", data
        )
    return Finding(region_name, "instance type", ref.subject, "pass", f"{vcpus} vCPUs, {efa}", data=data)


# --- vCPU quotas --------------------------------------------------------------------------------


def quota_demands(refs: list[PoolRef], vcpus: dict[str, int]) -> tuple[list[QuotaDemand], list[PoolRef]]:
    """Pools grouped by the quota they draw on, and the pools no vCPU quota applies to.

    On-Demand and ODCR pools draw on the On-Demand quota (instances in a Capacity
    Reservation are On-Demand instances), spot pools on the Spot quota. Capacity Block
    pools are bounded by the block they bought, which the reservation check sizes.
    """
    demands: dict[str, QuotaDemand] = {}
    unmetered: list[PoolRef] = []
    for ref in refs:
        capacity = ref.pool.capacity.type
        quota = (
            quotas.vcpu_quota(ref.machine.name, spot=capacity == "spot")
            if capacity in ("onDemand", "spot", "reservation")
            else None
        )
        if quota is None:
            unmetered.append(ref)
            continue
        per_node = vcpus.get(ref.machine.name, ref.machine.vcpus)
        demand = demands.setdefault(quota.code, QuotaDemand(quota))
        demand.min_vcpus += ref.pool.min_size * per_node
        demand.max_vcpus += ref.pool.max_size * per_node
        demand.pools.append(ref.pool.name)
    return [demands[code] for code in sorted(demands)], unmetered


def _quotas(
    region: RegionSpec, refs: list[PoolRef], vcpus: dict[str, int], client_for: ClientFactory
) -> Iterator[Finding]:
    demands, unmetered = quota_demands(refs, vcpus)
    for ref in unmetered:
        if ref.pool.capacity.type == "flexStart":
            yield Finding(
                region.name,
                "quota",
                ref.subject,
                "warn",
                "not checked: flexStart is a GCP capacity type",
                f"set {ref.path('capacity', 'type')} to onDemand, spot, reservation or capacityBlock",
            )
    if not demands:
        return
    client = client_for("service-quotas", region.region)
    for demand in demands:
        subject = f"{demand.quota.name} ({demand.quota.code})"
        try:
            value = _quota_value(client, demand.quota.code)
        except AccessDenied as denied:
            yield _denied(region.name, "quota", subject, denied.action)
            continue
        yield quota_finding(region, demand, value)


def _quota_value(client: Any, code: str) -> float:
    """The applied quota value; the AWS default when the account has none applied."""
    try:
        response = call(
            client,
            "get_service_quota",
            "servicequotas:GetServiceQuota",
            ServiceCode=quotas.SERVICE_CODE,
            QuotaCode=code,
        )
    except ClientError as exc:
        if error_code(exc) != "NoSuchResourceException":
            raise
        response = call(
            client,
            "get_aws_default_service_quota",
            "servicequotas:GetAWSDefaultServiceQuota",
            ServiceCode=quotas.SERVICE_CODE,
            QuotaCode=code,
        )
    return float(response["Quota"]["Value"])


def quota_finding(region: RegionSpec, demand: QuotaDemand, value: float) -> Finding:
    subject = f"{demand.quota.name} ({demand.quota.code})"
    pools = ", ".join(demand.pools)
    data = {"quota": value, "minVcpus": demand.min_vcpus, "maxVcpus": demand.max_vcpus, "pools": demand.pools}
    needs = f"pools {pools} need {demand.min_vcpus} vCPUs at min size, {demand.max_vcpus} at max size"
    if value >= demand.max_vcpus:
        return Finding(
            region.name,
            "quota",
            subject,
            "pass",
            f"quota {value:g} vCPUs; {needs} (usage by other instances not counted)",
            data=data,
        )
    return Finding(
        region.name,
        "quota",
        subject,
        "fail",
        f"quota {value:g} vCPUs is below what {needs}",
        f"aws service-quotas request-service-quota-increase --region {region.region} --service-code "
        f"{quotas.SERVICE_CODE} --quota-code {demand.quota.code} --desired-value {demand.max_vcpus}",
        data,
    )


# --- capacity reservations and capacity blocks --------------------------------------------------


def _reservation(region: RegionSpec, ref: PoolRef, zones: list[str], ec2: Any) -> Finding:
    reservation_id = ref.pool.capacity.reservation_id
    if not reservation_id:
        return Finding(
            region.name,
            "reservation",
            ref.subject,
            "fail",
            f"capacity type {ref.pool.capacity.type} without a reservation id",
            f"set {ref.path('capacity', 'reservationId')} (cr-...)",
        )
    try:
        found = call(
            ec2,
            "describe_capacity_reservations",
            "ec2:DescribeCapacityReservations",
            CapacityReservationIds=[reservation_id],
        )["CapacityReservations"]
    except AccessDenied as denied:
        return _denied(region.name, "reservation", ref.subject, denied.action)
    except ClientError as exc:
        if not error_code(exc).startswith("InvalidCapacityReservationId"):
            raise
        found = []
    return reservation_finding(region, ref, zones, found[0] if found else None)


def reservation_finding(
    region: RegionSpec, ref: PoolRef, zones: list[str], reservation: dict[str, Any] | None
) -> Finding:
    pool = ref.pool
    rid = pool.capacity.reservation_id
    subject = f"{ref.subject} {rid}"
    if reservation is None:
        return Finding(
            region.name,
            "reservation",
            subject,
            "fail",
            f"{rid} not found in {region.region} for this account",
            f"check {ref.path('capacity', 'reservationId')}: reservations are regional and per account",
        )
    kind = reservation.get("ReservationType", "default")
    zone = reservation["AvailabilityZone"]
    state = reservation["State"]
    total = reservation["TotalInstanceCount"]
    data = {"state": state, "zone": zone, "total": total, "available": reservation.get("AvailableInstanceCount")}
    wanted_kind = "capacity-block" if pool.capacity.type == "capacityBlock" else "default"

    problems: list[tuple[str, str]] = []  # (what is wrong, what to change)
    if kind != wanted_kind:
        other = "capacityBlock" if kind == "capacity-block" else "reservation"
        problems.append(
            (
                f"{rid} is a {'Capacity Block' if kind == 'capacity-block' else 'Capacity Reservation'}, "
                f"the pool says {pool.capacity.type}",
                f"set {ref.path('capacity', 'type')} to {other}",
            )
        )
    if reservation["InstanceType"] != ref.machine.name:
        problems.append(
            (
                f"it reserves {reservation['InstanceType']}, the pool runs {ref.machine.name}",
                f"set {ref.path('machineType')} to {reservation['InstanceType']} or reference a matching reservation",
            )
        )
    if zone not in zones:
        problems.append(
            (
                f"it is in {zone}, the pool runs in {', '.join(zones)}",
                f"set {ref.path('zones')} to [{zone}] (a reservation serves one zone only)",
            )
        )
    if state not in _RESERVATION_NOT_YET and state != "active":
        problems.append((f"it is {state}", "reference an active reservation, or switch the pool to onDemand"))
    if total < pool.max_size:
        problems.append(
            (
                f"it holds {total} instances, the pool may grow to {pool.max_size}",
                f"lower {ref.path('maxSize')} to {total} or enlarge the reservation",
            )
        )
    if problems:
        return Finding(
            region.name,
            "reservation",
            subject,
            "fail",
            "; ".join(detail for detail, _ in problems),
            "; ".join(hint for _, hint in problems),
            data,
        )
    ends = reservation.get("EndDate")
    until = f" until {ends:%Y-%m-%d %H:%M} UTC" if ends else ""
    if state != "active":
        starts = reservation.get("StartDate")
        when = f" (starts {starts:%Y-%m-%d %H:%M} UTC)" if starts else ""
        return Finding(
            region.name,
            "reservation",
            subject,
            "warn",
            f"{rid} is {state}{when}: nodes cannot launch before it is active",
            f"apply after it starts, or set {ref.path('minSize')} to 0 until then",
            data,
        )
    if len(zones) > 1:
        return Finding(
            region.name,
            "reservation",
            subject,
            "warn",
            f"{rid} covers {zone} only, the pool also spans {', '.join(z for z in zones if z != zone)}",
            f"set {ref.path('zones')} to [{zone}]",
            data,
        )
    return Finding(
        region.name,
        "reservation",
        subject,
        "pass",
        f"{state} in {zone}, {total} x {ref.machine.name}{until}",
        data=data,
    )
