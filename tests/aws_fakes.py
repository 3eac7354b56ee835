"""AWS for preflight tests: moto where it implements the API, botocore's Stubber where it does not.

moto (5.2) answers STS, S3 ListObjectsV2, and EC2 DescribeInstanceTypes /
DescribeInstanceTypeOfferings from data files it bundles (real per-zone offerings: e.g.
g6e.xlarge is offered in us-east-1a-d but not us-east-1e). It does not implement EC2's
vCPU quotas in Service Quotas (only `vpc`) nor DescribeCapacityReservations
(NotImplementedError), so those come from Stubber with responses shaped after the AWS API
references (GetServiceQuota, GetAWSDefaultServiceQuota, DescribeCapacityReservations);
Stubber validates every response against botocore's service model.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from typing import Any

import boto3
import moto  # noqa: F401  (before the session below: moto hooks sessions created after it)
from botocore.stub import Stubber

ACCOUNT = "123456789012"  # moto's account

# One session for every test: it caches the parsed service models (EC2's takes ~0.2 s to load),
# and moto, imported first, intercepts the clients of any session made after it.
SESSION = boto3.Session()


@cache
def client(service: str, region: str) -> Any:
    """moto's client of `service` in `region`, shared by the tests (it keeps no state of its own: moto's backends,
    reset per test by mock_aws, do; building a client costs ~17 ms)."""
    return fresh_client(service, region)


def fresh_client(service: str, region: str) -> Any:
    """A client of its own, for a Stubber to answer on (a Stubber stays on the client it is activated on)."""
    return SESSION.client(service, region_name=region)


QUOTA_NAMES = {
    "L-417A185B": "Running On-Demand P instances",
    "L-DB2E81BA": "Running On-Demand G and VT instances",
    "L-7212CCBC": "All P Spot Instance Requests",
    "L-3819A6DF": "All G and VT Spot Instance Requests",
}


def quota_response(region: str, code: str, value: float) -> dict[str, Any]:
    """GetServiceQuota / GetAWSDefaultServiceQuota output (Service Quotas API reference, ServiceQuota)."""
    return {
        "Quota": {
            "ServiceCode": "ec2",
            "ServiceName": "Amazon Elastic Compute Cloud (Amazon EC2)",
            "QuotaArn": f"arn:aws:servicequotas:{region}:{ACCOUNT}:ec2/{code}",
            "QuotaCode": code,
            "QuotaName": QUOTA_NAMES[code],
            "Value": value,
            "Unit": "None",
            "Adjustable": True,
            "GlobalQuota": False,
            "UsageMetric": {
                "MetricNamespace": "AWS/Usage",
                "MetricName": "ResourceCount",
                "MetricDimensions": {"Class": "P/OnDemand", "Resource": "vCPU", "Service": "EC2", "Type": "Resource"},
                "MetricStatisticRecommendation": "Maximum",
            },
        }
    }


def reservation(
    rid: str,
    *,
    instance_type: str = "p5.48xlarge",
    zone: str = "us-east-1a",
    total: int = 4,
    state: str = "active",
    kind: str = "default",
) -> dict[str, Any]:
    """One CapacityReservation item (EC2 API reference, CapacityReservation data type)."""
    return {
        "CapacityReservationId": rid,
        "OwnerId": ACCOUNT,
        "CapacityReservationArn": f"arn:aws:ec2:{zone[:-1]}:{ACCOUNT}:capacity-reservation/{rid}",
        "AvailabilityZoneId": "use1-az4",
        "InstanceType": instance_type,
        "InstancePlatform": "Linux/UNIX",
        "AvailabilityZone": zone,
        "Tenancy": "default",
        "TotalInstanceCount": total,
        "AvailableInstanceCount": total,
        "EbsOptimized": True,
        "EphemeralStorage": False,
        "State": state,
        "StartDate": datetime(2026, 12, 1, 11, 30, tzinfo=UTC),
        "EndDate": datetime(2026, 12, 15, 11, 30, tzinfo=UTC),
        "EndDateType": "limited",
        "InstanceMatchCriteria": "targeted",
        "CreateDate": datetime(2026, 11, 20, 9, 0, tzinfo=UTC),
        "Tags": [],
        "ReservationType": kind,
    }


class _Ec2WithReservations:
    """moto's EC2 client, except DescribeCapacityReservations, answered by a stubbed client: `stubbed()` makes it
    (an EC2 client costs ~20 ms, and most tests stub no reservation: theirs is made only if preflight asks)."""

    def __init__(self, moto_client: Any, stubbed: Callable[[], Any]):
        self._moto = moto_client
        self._stubbed = stubbed

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stubbed() if name == "describe_capacity_reservations" else self._moto, name)


class FakeAws:
    """A ClientFactory for preflight. Use inside `mock_aws()`.

    quotas: {(region, code): value} — exactly the quotas preflight must ask for; `verify()`
    fails if one was not asked. default_only: codes with no applied value (the API's
    NoSuchResourceException), answered by GetAWSDefaultServiceQuota.
    reservations: (region, id, CapacityReservation item or None for an unknown id), in call order.
    """

    def __init__(
        self,
        quotas: dict[tuple[str, str], float] | None = None,
        default_only: frozenset[str] = frozenset(),
        reservations: list[tuple[str, str, dict[str, Any] | None]] | None = None,
    ):
        self.quotas = quotas or {}
        self.default_only = default_only
        self.reservations = reservations or []
        self.stubbers: list[Stubber] = []
        self._clients: dict[tuple[str, str], Any] = {}

    def __call__(self, service: str, region: str) -> Any:
        key = (service, region)
        if key not in self._clients:
            self._clients[key] = self._make(service, region)
        return self._clients[key]

    def _make(self, service: str, region: str) -> Any:
        if service == "service-quotas":
            quotas_client = fresh_client("service-quotas", region)
            stubber = self._stub(quotas_client)
            for (quota_region, code), value in sorted(self.quotas.items()):
                if quota_region != region:
                    continue
                params = {"ServiceCode": "ec2", "QuotaCode": code}
                if code in self.default_only:
                    stubber.add_client_error("get_service_quota", "NoSuchResourceException", expected_params=params)
                    operation = "get_aws_default_service_quota"
                else:
                    operation = "get_service_quota"
                stubber.add_response(operation, quota_response(region, code, value), params)
            return quotas_client
        if service == "ec2":
            stubbed = cache(lambda: self._stubbed_ec2(region))
            if any(reservation_region == region for reservation_region, _, _ in self.reservations):
                stubbed()  # now: `verify()` sees its answers, asked for or not
            return _Ec2WithReservations(client("ec2", region), stubbed)
        return client(service, region)

    def _stubbed_ec2(self, region: str) -> Any:
        """An EC2 client answering the region's DescribeCapacityReservations, in order, and nothing else."""
        stubbed = fresh_client("ec2", region)
        stubber = self._stub(stubbed)
        for reservation_region, rid, item in self.reservations:
            if reservation_region != region:
                continue
            params = {"CapacityReservationIds": [rid]}
            if item is None:
                stubber.add_client_error(
                    "describe_capacity_reservations",
                    "InvalidCapacityReservationId.NotFound",
                    f"The capacity reservation ID '{rid}' does not exist",
                    expected_params=params,
                )
            else:
                stubber.add_response("describe_capacity_reservations", {"CapacityReservations": [item]}, params)
        return stubbed

    def _stub(self, client: Any) -> Stubber:
        stubber = Stubber(client)
        stubber.activate()
        self.stubbers.append(stubber)
        return stubber

    def verify(self) -> None:
        """Every stubbed answer was asked for."""
        for stubber in self.stubbers:
            stubber.assert_no_pending_responses()


def put_model(region: str, bucket: str, prefix: str, files: dict[str, int]) -> None:
    """Create the bucket (if needed) and objects of the given sizes under `prefix` (moto)."""
    s3 = client("s3", region)
    existing = {b["Name"] for b in s3.list_buckets().get("Buckets", [])}
    if bucket not in existing:
        config = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
        s3.create_bucket(Bucket=bucket, **config)
    for name, size in files.items():
        s3.put_object(Bucket=bucket, Key=prefix + name, Body=b"\0" * size)


CHECKPOINT = {
    "config.json": 700,
    "tokenizer.json": 9_000,
    "tokenizer_config.json": 50_000,
    "model-00001-of-00002.safetensors": 4_000,
    "model-00002-of-00002.safetensors": 1_000,
    "model.safetensors.index.json": 24_000,
}
