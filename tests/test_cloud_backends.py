"""Each cloud is one backend behind one interface, and one catalog entry: nothing falls through to "the other"."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import get_args

import pytest

from components.catalog.regions import CLOUDS, Cloud, kubernetes_versions, zones_of
from components.config import region as region_models
from stacks.clouds import CloudBackend, backend_for

INTERFACE = ("provider", "cluster", "model_store", "gateway_dns", "public_load_balancer")
ROOT = Path(__file__).resolve().parents[1]
# Where a cloud's name may decide something (issue 35 §2): its backend, and the per-cloud config models whose
# properties and constants the shared code reads instead.
CLOUD_OWN = ("components/aws/", "components/gcp/", "stacks/clouds/", "components/config/region.py")


def test_the_clouds_are_aws_and_gcp_each_with_catalog_facts():
    assert get_args(Cloud) == ("aws", "gcp")
    assert set(CLOUDS) == {"aws", "gcp"}
    assert (CLOUDS["aws"].cluster_kind, CLOUDS["gcp"].cluster_kind) == ("EKS", "GKE")


@pytest.mark.parametrize("cloud", get_args(Cloud))
def test_each_backend_has_the_interface_with_its_signatures(cloud):
    backend = backend_for(cloud)
    assert backend.__name__ == f"stacks.clouds.{cloud}"
    for name in INTERFACE:
        expected = inspect.signature(getattr(CloudBackend, name))
        actual = inspect.signature(getattr(backend, name))
        # The protocol's methods take `self`; a module's functions do not.
        assert list(actual.parameters) == list(expected.parameters)[1:], (cloud, name)
        assert [p.kind for p in actual.parameters.values()] == [p.kind for p in expected.parameters.values()][1:]


def test_an_unknown_cloud_has_no_backend():
    with pytest.raises(AssertionError):
        backend_for("azure")  # type: ignore[arg-type]


def test_zone_names_follow_each_clouds_convention():
    assert zones_of("aws", "us-east-1")[:2] == ("us-east-1a", "us-east-1b")
    assert zones_of("gcp", "us-central1")[0] == "us-central1-a"
    assert zones_of("aws", "mars-1") is None
    assert kubernetes_versions("gcp") == ("1.33", "1.34")


def test_a_gpu_node_group_fits_a_cluster_that_already_exists():
    """EksGpuNodeGroup takes ids, not our EksCluster / AwsNetwork: a pool can join a cluster built elsewhere."""
    import pulumi
    import pulumi_aws as aws

    from components.aws.gpu_node_group import EksGpuNodeGroup, EksGpuNodeGroupArgs, EksNodeTarget
    from components.checks.loader import load_environment
    from tests.harness import evaluate_program, raw_environment

    region = load_environment(raw_environment("prod")).region("use1")
    pool = region.pool("h100")
    assert pool is not None and pool.efa

    def program() -> None:
        provider = aws.Provider("existing-aws", region="us-east-1")
        EksGpuNodeGroup(
            "existing-h100",
            EksGpuNodeGroupArgs(
                zones=region.pool_zones(pool),
                kubernetes_version=region.kubernetes_version,
                pool=pool,
                cluster_name="team-cluster",
                label_domain="inference-platform.io",
                target=EksNodeTarget(
                    cluster_name="team-cluster",
                    cluster_security_group_id="sg-0123456789abcdef0",
                    node_role_arn="arn:aws:iam::123456789012:role/team-nodes",
                    vpc_id="vpc-0123456789abcdef0",
                    private_subnet_ids={zone: f"subnet-{zone}" for zone in region.zones},
                ),
                scale_down_unneeded_seconds=900,
            ),
            opts=pulumi.ResourceOptions(providers={"aws": provider}),
        )

    plan = evaluate_program(program)
    (group,) = plan.of_type("aws:eks/nodeGroup:NodeGroup")
    assert group.inputs["clusterName"] == "team-cluster"
    assert group.inputs["nodeRoleArn"] == "arn:aws:iam::123456789012:role/team-nodes"
    assert group.inputs["subnetIds"] == [f"subnet-{zone}" for zone in region.pool_zones(pool)]
    (efa_group,) = plan.of_type("aws:ec2/securityGroup:SecurityGroup")
    assert efa_group.inputs["vpcId"] == "vpc-0123456789abcdef0"
    (template,) = plan.of_type("aws:ec2/launchTemplate:LaunchTemplate")
    assert "sg-0123456789abcdef0" in template.inputs["networkInterfaces"][0]["securityGroups"]


def _names_a_cloud(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in get_args(Cloud)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_a_cloud(e) for e in node.elts)
    return False


def _compares_a_cloud(node: ast.AST) -> bool:
    if isinstance(node, ast.Compare):
        return any(_names_a_cloud(e) for e in (node.left, *node.comparators))
    return isinstance(node, ast.MatchValue) and _names_a_cloud(node.value)


def cloud_comparisons(source: str) -> list[int]:
    """Lines comparing something with a cloud's name: `== "aws"`, `!= "gcp"`, `cloud in ("aws", ...)`, `case "aws":`."""
    return sorted(node.lineno for node in ast.walk(ast.parse(source)) if _compares_a_cloud(node))


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ('x = cluster.cloud == "gcp"', 1),
        ("x = 'aws' != region.cloud", 1),
        ('x = region.cloud in ("aws", "gcp")', 1),
        ('x = region.cloud not in {"gcp"}', 1),
        ('x = 1 if a and region.cloud == "aws" else 2', 1),
        ('match region.cloud:\n    case "gcp":\n        pass', 2),
    ],
)
def test_the_scan_finds_a_comparison_with_a_cloud_name(source, line):
    assert cloud_comparisons(source) == [line]


def test_the_scan_leaves_other_comparisons_and_lookups():
    assert cloud_comparisons('x = region.cloud == other.cloud\ny = STORAGE["gcp"]\nz = name == "gcp-a"') == []


# The per-cloud config models: every member of each union a region entry's `cloud` chooses between.
PER_CLOUD_MODELS = frozenset(
    model.__name__
    for union in (
        get_args(region_models.RegionSpec)[0],
        region_models.NetworkSpec,
        region_models.ExistingClusterSpec,
        region_models.ClusterSpec,
        region_models.GpuPoolSpec,
    )
    for model in get_args(union)
)


def _per_cloud_model_named(node: ast.AST) -> bool:
    """A name, attribute, import or string annotation naming a per-cloud model (`AwsRegionSpec`, `m.GcpGpuPoolSpec`,
    `from ... import AwsRegionSpec as A`, `"GcpNetworkSpec"`)."""
    if isinstance(node, ast.Name):
        return node.id in PER_CLOUD_MODELS
    if isinstance(node, ast.Attribute):
        return node.attr in PER_CLOUD_MODELS
    if isinstance(node, ast.alias):
        return node.name.rpartition(".")[2] in PER_CLOUD_MODELS
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a string annotation, whole or in part
        if not any(name in node.value for name in PER_CLOUD_MODELS):
            return False
        try:
            quoted = ast.parse(node.value.strip(), mode="eval")
        except SyntaxError:
            return False  # prose
        return any(_per_cloud_model_named(inner) for inner in ast.walk(quoted))
    return False


def per_cloud_model_references(source: str) -> list[int]:
    """Lines naming a per-cloud model at all. Shared code has no use for one but to decide by its class (an
    isinstance, a `type(x) in (...)`, a dispatch table keyed by class, `case AwsGpuPoolSpec():`...), which is the
    cloud-string comparison by another name; it reads the shared union and asks the model instead."""
    tree = ast.parse(source)
    return sorted({getattr(node, "lineno", 0) for node in ast.walk(tree) if _per_cloud_model_named(node)})


def test_the_per_cloud_models_are_each_clouds_region_network_cluster_and_pool():
    assert {"AwsRegionSpec", "GcpRegionSpec", "AwsGpuPoolSpec", "GcpNetworkSpec", "AwsExistingClusterSpec"} <= (
        PER_CLOUD_MODELS
    )
    assert len(PER_CLOUD_MODELS) == 10


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ("x = isinstance(region, AwsRegionSpec)", 1),
        ("x = isinstance(pool, region_models.GcpGpuPoolSpec)", 1),
        ("x = isinstance(existing, AwsExistingClusterSpec | GcpExistingClusterSpec)", 1),
        ("x = isinstance(net, (int, GcpNetworkSpec))", 1),
        ("x = issubclass(kind, AwsClusterSpec)", 1),
        ("x = type(region) is GcpRegionSpec", 1),
        ("match pool:\n    case AwsGpuPoolSpec():\n        pass", 2),
        # The last review's blind spots of a scan for class tests only:
        ("x = type(r) in (AwsRegionSpec, GcpRegionSpec)", 1),
        ("from components.config.region import AwsRegionSpec as Aws\nx = isinstance(r, Aws)", 1),
        ("AWS_MODELS = (AwsRegionSpec,)", 1),
        ("x = {AwsRegionSpec: f, GcpRegionSpec: g}[type(r)](r)", 1),
        ("x = type(r).__name__ == 'GcpRegionSpec'", 1),
        ("def f(r: 'GcpRegionSpec') -> None: ...", 1),
        ("def f(r: 'AwsRegionSpec | None') -> None: ...", 1),
        ("x: 'list[GcpRegionSpec]' = []", 1),
    ],
)
def test_the_scan_finds_a_per_cloud_model_named(source, line):
    assert per_cloud_model_references(source) == [line]


def test_the_scan_leaves_shared_models_and_prose():
    source = (
        "x = isinstance(region, RegionBase)\ny: RegionSpec = r\nz = AwsRegionSpecial\n"
        '"""The AwsRegionSpec model says so."""\nw = r.placement_kind'
    )
    assert per_cloud_model_references(source) == []


def _outside_the_cloud_own_code(*tops: str) -> list[Path]:
    return [
        path
        for top in tops
        for path in sorted((ROOT / top).rglob("*.py"))
        if not str(path.relative_to(ROOT)).startswith(CLOUD_OWN)
    ]


def test_only_the_backends_and_the_per_cloud_models_name_a_per_cloud_model():
    """`isinstance(region, GcpRegionSpec)` is `region.cloud == "gcp"` by another name: shared code, the tools and the
    examples included, asks the model."""
    found = {
        f"{path.relative_to(ROOT)}:{line}"
        for path in _outside_the_cloud_own_code("components", "stacks", "tools", "examples", "policies")
        for line in per_cloud_model_references(path.read_text())
    }
    assert not found, "ask the per-cloud model (a property, constant or method saying why): " + ", ".join(sorted(found))


def test_only_the_backends_and_the_per_cloud_models_compare_the_cloud_name():
    """Shared code asks the region's model (a property or constant saying why) or its backend, never `cloud == ...`."""
    found = {
        f"{path.relative_to(ROOT)}:{line}"
        for path in _outside_the_cloud_own_code("components", "stacks")
        for line in cloud_comparisons(path.read_text())
    }
    assert not found, "compare the cloud in its backend or its config model: " + ", ".join(sorted(found))
