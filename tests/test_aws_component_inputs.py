"""The AWS components alone under the mocks, from hand-written narrow inputs: one that builds, one that is refused
with Pulumi's input error naming the argument (issue 35 §4)."""

from __future__ import annotations

from ipaddress import IPv4Network

import pulumi
import pytest

from components.aws.cluster_autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs
from components.aws.efa_device_plugin import EfaDevicePluginArgs
from components.aws.eks import EksCluster, EksClusterArgs
from components.aws.existing_cluster import ExistingEksCluster, ExistingEksClusterArgs
from components.aws.gpu_node_group import EksGpuNodeGroup, EksGpuNodeGroupArgs, EksNodeTarget
from components.aws.irsa import IrsaRoleArgs, irsa_role
from components.aws.model_store import S3ModelStore, S3ModelStoreArgs
from components.aws.network import AwsNetwork, AwsNetworkArgs, ZoneSubnets
from components.config.model_store import ModelStoreSpec
from components.config.region import SystemPoolSpec
from components.k8s.cluster import IrsaIdentity
from tests.gpu_specs import pool
from tests.harness import cluster_handle, evaluate_program

TARGET = EksNodeTarget(
    cluster_name="team",
    cluster_security_group_id="sg-0123456789abcdef0",
    node_role_arn="arn:aws:iam::123456789012:role/team-nodes",
    vpc_id="vpc-0123456789abcdef0",
    private_subnet_ids={"us-east-1a": "subnet-a", "us-east-1b": "subnet-b"},
)
IDENTITY = IrsaIdentity(
    oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC",
    oidc_issuer="https://oidc.eks.us-east-1.amazonaws.com/id/ABC",
)


def _refused(program) -> pulumi.InputPropertyError:
    with pytest.raises(pulumi.InputPropertyError) as info:
        evaluate_program(program)
    return info.value


def _network(private: str = "10.0.0.0/19", name: str = "net") -> AwsNetwork:
    return AwsNetwork(
        name,
        AwsNetworkArgs(
            cluster_name="team",
            cidr=IPv4Network("10.0.0.0/16"),
            subnets={
                "us-east-1a": ZoneSubnets(private=IPv4Network(private), public=IPv4Network("10.0.192.0/24")),
            },
        ),
    )


def test_a_network_keeps_its_subnets_in_the_vpc():
    plan = evaluate_program(_network)
    subnets = {r.inputs["cidrBlock"]: r.inputs["availabilityZone"] for r in plan.of_type("aws:ec2/subnet:Subnet")}
    assert subnets == {"10.0.0.0/19": "us-east-1a", "10.0.192.0/24": "us-east-1a"}
    assert len(plan.of_type("aws:ec2/natGateway:NatGateway")) == 1

    error = _refused(lambda: _network(private="10.1.0.0/19"))
    assert error.property_path == "subnets.us-east-1a.private"


def _node_group(machine_type: str, zones=("us-east-1a",), version: str = "1.33", **fields) -> EksGpuNodeGroup:
    return EksGpuNodeGroup(
        "gpu",
        EksGpuNodeGroupArgs(
            zones=list(zones),
            kubernetes_version=version,
            pool=pool("l40s", machine_type, cloud="aws", **fields),
            cluster_name="team",
            label_domain="example.com",
            target=TARGET,
            scale_down_unneeded_seconds=600,
        ),
    )


def test_a_gpu_node_group_names_an_unknown_machine_type_and_the_known_ones():
    plan = evaluate_program(lambda: _node_group("g6e.xlarge", zones=("us-east-1b",)))
    (group,) = plan.of_type("aws:eks/nodeGroup:NodeGroup")
    assert group.inputs["subnetIds"] == ["subnet-b"]
    (template,) = plan.of_type("aws:ec2/launchTemplate:LaunchTemplate")
    assert template.inputs["instanceType"] == "g6e.xlarge"

    error = _refused(lambda: _node_group("g6e.xlarge2"))
    assert error.property_path == "pool.machine_type"
    assert "'g6e.xlarge2'" in error.reason and "p5.48xlarge" in error.reason
    assert "a3-highgpu-8g" not in error.reason  # a GKE machine type is no EC2 instance type
    assert str(error).startswith("pool.machine_type: ")


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"zones": ("us-east-1c",)}, "zones"),
        ({"version": "1.20"}, "kubernetes_version"),
        ({"efa": True}, "pool.efa"),  # g6e.xlarge has no EFA interface
        ({"capacity": {"type": "capacityBlock"}}, "pool.capacity.reservation_id"),
    ],
)
def test_a_gpu_node_group_refuses_what_it_cannot_build(kwargs, argument):
    assert _refused(lambda: _node_group("g6e.xlarge", **kwargs)).property_path == argument


def _cluster(version: str, public: list[str] | None = None, sources: list[str] | None = None) -> None:
    EksCluster(
        "eks",
        EksClusterArgs(
            aws_region="us-east-1",
            kubernetes_version=version,
            cluster_name="team",
            network=_network(),
            public_cidrs=[IPv4Network(c) for c in public or []],
            public_sources=pulumi.Output.from_input(sources) if sources is not None else None,
            deployer_cidrs=[IPv4Network("10.0.0.0/16")],
            system_pool=SystemPoolSpec.model_validate({"machineType": "m7i.xlarge", "maxSize": 3}),
            label_domain="example.com",
            production=False,
        ),
    )


def test_a_public_endpoint_admits_addresses_known_at_deploy_time_besides_its_cidrs():
    """The federation host's NAT egress (stacks/environment.py dialled_by_the_host), as /32s after the CIDRs."""
    plan = evaluate_program(lambda: _cluster("1.33", ["198.51.100.0/24"], ["203.0.113.9", "203.0.113.10"]))
    vpc = plan.named("eks-cluster", "aws:eks/cluster:Cluster").inputs["vpcConfig"]
    assert vpc["endpointPublicAccess"] is True
    assert vpc["publicAccessCidrs"] == ["198.51.100.0/24", "203.0.113.9/32", "203.0.113.10/32"]
    assert _refused(lambda: _cluster("1.33", [], ["203.0.113.9"])).property_path == "public_sources"


def test_a_cluster_runs_a_pinned_version():
    plan = evaluate_program(lambda: _cluster("1.33"))
    assert plan.named("eks-cluster", "aws:eks/cluster:Cluster").inputs["version"] == "1.33"
    system = plan.named("eks-system", "aws:eks/nodeGroup:NodeGroup").inputs
    assert (system["instanceTypes"], system["scalingConfig"]["maxSize"]) == (["m7i.xlarge"], 3)
    (admitted,) = plan.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    assert admitted.inputs["cidrIpv4"] == "10.0.0.0/16"

    error = _refused(lambda: _cluster("1.20"))
    assert error.property_path == "kubernetes_version" and "1.33" in error.reason


def test_an_existing_cluster_is_read_by_name():
    def program(name: str) -> None:
        ExistingEksCluster(
            "found",
            ExistingEksClusterArgs(
                aws_region="us-east-1",
                cluster_name=name,
                node_role_arn="arn:aws:iam::123456789012:role/team-nodes",
                subnets={"us-east-1a": "subnet-a"},
            ),
        )

    evaluate_program(lambda: program("team"))
    assert _refused(lambda: program("")).property_path == "cluster_name"


def test_cluster_autoscaler_scales_the_node_groups_it_is_given():
    def program(with_groups: bool, grace: int = 905) -> None:
        groups = [_node_group("g6e.xlarge")] if with_groups else []
        ClusterAutoscaler(
            "ca",
            ClusterAutoscalerArgs(
                cluster=cluster_handle("team", identity=IDENTITY),
                aws_region="us-west-2",
                cluster_name="team",
                label_domain="example.com",
                production=False,
                node_groups=[g.node_group for g in groups],
                tags=[tag for g in groups for tag in g.autoscaler_tags],
                max_graceful_termination_seconds=grace,
            ),
        )

    (release,) = evaluate_program(lambda: program(True)).helm_releases()
    assert release.inputs["values"]["awsRegion"] == "us-west-2"
    assert release.inputs["values"]["extraArgs"]["max-graceful-termination-sec"] == "905"
    assert _refused(lambda: program(False)).property_path == "node_groups"
    # below CA's own 600 s default it would cut drains its default lets through
    assert _refused(lambda: program(True, 599)).property_path == "max_graceful_termination_seconds"


def test_keyword_only_inputs_of_the_helpers():
    """IRSA roles, the EFA plugin and the S3 store take keywords only: a positional call is a TypeError."""
    with pytest.raises(TypeError):
        IrsaRoleArgs(IDENTITY.oidc_provider_arn, IDENTITY.oidc_issuer, "ns", "sa")  # type: ignore[misc]
    with pytest.raises(TypeError):
        EfaDevicePluginArgs(None, "example.com", None)  # type: ignore[misc]

    def program() -> None:
        role = irsa_role(
            "reader",
            IrsaRoleArgs(
                oidc_provider_arn=IDENTITY.oidc_provider_arn,
                oidc_issuer_url=IDENTITY.oidc_issuer,
                namespace="ns",
                service_account="sa",
            ),
            parent=pulumi.ComponentResource("test:Parent", "p"),
        )
        assert role is not None
        S3ModelStore(
            "store",
            S3ModelStoreArgs(
                bucket_name="team-models",
                aws_region="us-east-1",
                spec=ModelStoreSpec.model_validate({"bucketPrefix": "team"}),
                production=False,
                identity=IDENTITY,
                readers={},
            ),
        )

    plan = evaluate_program(program)
    assert plan.named("store-models", "aws:s3/bucket:Bucket").inputs["bucket"] == "team-models"
