"""Every recorded resource's inputs checked against its provider SDK's input types: property names at
every depth, required properties, value types and closed enums, read at test time from the installed
pulumi-aws / pulumi-gcp / pulumi-kubernetes / pulumi-random / pulumi-tls (tools/provider_schema.py).
"""

from __future__ import annotations

import copy
import enum
import json

import pulumi
import pytest

from tools.conformance import is_custom_resource
from tools.plan.model import is_kubernetes_object
from tools.provider_schema import Report, _check_object, check_inputs


def test_every_resource_input_matches_its_provider_schema(checked_plan):
    checked, unchecked, problems = [], [], []
    properties = 0
    for resource in checked_plan.resources:
        if not resource.custom:
            continue
        report = check_inputs(resource.type, resource.inputs)
        if report is None:
            unchecked.append(resource)
            continue
        checked.append(resource.type)
        properties += report.properties
        problems.extend(f"{resource.type} {resource.name}: {p}" for p in report.problems)
    print(f"{checked_plan.environment}: {len(checked)} resources, {properties} values checked")
    packages = {t.split(":")[0] if not t.startswith("pulumi:providers:") else t for t in checked}
    assert {"aws", "kubernetes", "random", "pulumi:providers:aws", "pulumi:providers:kubernetes"} <= packages
    # Only Kubernetes CRs have no Args class (they go through CustomResource); their CRDs check them.
    assert [r.type for r in unchecked if not (is_kubernetes_object(r) and is_custom_resource(r.inputs))] == []
    assert problems == []


def _eks_cluster(dev_plan) -> tuple[str, dict]:
    (cluster,) = dev_plan.of_type("aws:eks/cluster:Cluster")
    return cluster.type, copy.deepcopy(cluster.inputs)


def test_a_recorded_resource_passes_and_a_misnamed_nested_input_fails(dev_plan):
    typ, inputs = _eks_cluster(dev_plan)
    assert check_inputs(typ, inputs).problems == []
    inputs["vpcConfig"]["subnetIdz"] = inputs["vpcConfig"].pop("subnetIds")
    assert check_inputs(typ, inputs).problems == [
        "vpcConfig.subnetIdz: no property 'subnetIdz' in ClusterVpcConfigArgs; did you mean subnetIds?",
        "vpcConfig: required property 'subnetIds' of ClusterVpcConfigArgs is missing",
    ]


def test_a_mistyped_input_fails(dev_plan):
    typ, inputs = _eks_cluster(dev_plan)
    inputs["version"] = 1.33
    inputs["vpcConfig"]["subnetIds"] = "subnet-1"
    assert check_inputs(typ, inputs).problems == [
        "version: 1.33 is not str",
        "vpcConfig.subnetIds: 'subnet-1' is not Sequence",
    ]


def test_a_provider_input_is_decoded_from_its_json_string():
    """The SDK sends a provider's non-string inputs as JSON strings; the check reads through them."""
    tags = {"tags": {"team": "ml"}}
    assert check_inputs("pulumi:providers:aws", {"region": "us-east-1", "defaultTags": json.dumps(tags)}).problems == []
    bad = check_inputs("pulumi:providers:aws", {"region": "us-east-1", "defaultTags": json.dumps({"tag": {}})})
    assert bad.problems == ["defaultTags.tag: no property 'tag' in ProviderDefaultTagsArgs; did you mean tags?"]


def test_a_kubernetes_cr_has_no_args_class_but_a_typed_kind_does():
    assert check_inputs("kubernetes:monitoring.coreos.com/v1:ServiceMonitor", {}) is None
    report = check_inputs(
        "kubernetes:core/v1:Service", {"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"prot": 80}]}}
    )
    assert report.problems == [
        "spec.ports[0].prot: no property 'prot' in ServicePortArgs; did you mean port, protocol?",
        "spec.ports[0]: required property 'port' of ServicePortArgs is missing",
    ]


class _Tier(enum.StrEnum):
    STANDARD = "STANDARD"
    PREMIUM = "PREMIUM"


@pulumi.input_type
class _TierArgs:
    def __init__(__self__, *, tier: pulumi.Input[_Tier], size: pulumi.Input[int] | None = None):
        pulumi.set(__self__, "tier", tier)

    @property
    @pulumi.getter(name="tier")
    def tier(self) -> pulumi.Input[_Tier]:
        return pulumi.get(self, "tier")

    @property
    @pulumi.getter(name="sizeGb")
    def size(self) -> pulumi.Input[int] | None:
        return pulumi.get(self, "size")


@pytest.mark.parametrize(
    ("value", "problems"),
    [
        ({"tier": "PREMIUM", "sizeGb": 10}, []),
        ({"tier": "GOLD"}, ["tier: 'GOLD' is not _Tier ['PREMIUM', 'STANDARD']"]),
        ({"sizeGb": 1.5}, ["sizeGb: 1.5 is not int", "<root>: required property 'tier' of _TierArgs is missing"]),
    ],
)
def test_closed_enums_and_ints(value, problems):
    report = Report()
    _check_object(value, _TierArgs, "", report)
    assert report.problems == problems


def test_a_provider_string_input_stays_a_string():
    """Only a non-string property is JSON-decoded: a numeric-looking project id is still a string."""
    assert check_inputs("pulumi:providers:gcp", {"project": "123456", "region": "us-central1"}).problems == []
    assert check_inputs("pulumi:providers:gcp", {"project": "p", "batching": "1"}).problems == [
        "batching: 1 is not ProviderBatchingArgs"
    ]
