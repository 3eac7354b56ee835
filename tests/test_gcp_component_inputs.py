"""The GCP components alone under the mocks, from hand-written narrow inputs: one that builds, one that is refused
with Pulumi's input error naming the argument (issue 35 §4)."""

from __future__ import annotations

from ipaddress import IPv4Network

import pulumi
import pytest

from components.config.model_store import ModelStoreSpec
from components.config.region import SystemPoolSpec
from components.gcp.existing_cluster import ExistingGkeCluster, ExistingGkeClusterArgs
from components.gcp.gke import GkeCluster, GkeClusterArgs
from components.gcp.gpu_node_pool import GkeGpuNodePool, GkeGpuNodePoolArgs
from components.gcp.gpudirect_networks import GpuDirectNetworks, GpuDirectNetworksArgs
from components.gcp.model_store import GcsModelStore, GcsModelStoreArgs
from components.gcp.network import GcpLocation, GcpNetwork, GcpNetworkArgs
from components.k8s.cluster import GkeIdentity
from tests.gpu_specs import pool
from tests.harness import evaluate_program

HERE = GcpLocation(project="team-project", region="us-central1")


def _refused(program) -> pulumi.InputPropertyError:
    with pytest.raises(pulumi.InputPropertyError) as info:
        evaluate_program(program)
    return info.value


def _network(name: str = "net") -> GcpNetwork:
    return GcpNetwork(
        name,
        GcpNetworkArgs(
            location=HERE,
            cluster_name="team",
            node_cidr=IPv4Network("10.30.0.0/20"),
            pods_cidr=IPv4Network("10.64.0.0/14"),
            services_cidr=IPv4Network("10.68.0.0/20"),
        ),
    )


def _node_pool(machine_type: str, **fields) -> None:
    GkeGpuNodePool(
        "gpu",
        GkeGpuNodePoolArgs(
            location=HERE,
            zones=["us-central1-a"],
            pool=pool("l4", machine_type, cloud="gcp", **fields),
            cluster_name="team",
            label_domain="example.com",
            cluster="team",
            node_service_account="nodes@team-project.iam.gserviceaccount.com",
        ),
    )


def test_a_network_needs_a_project():
    subnet = evaluate_program(_network).named("net-nodes", "gcp:compute/subnetwork:Subnetwork").inputs
    assert (subnet["project"], subnet["region"], subnet["ipCidrRange"]) == (
        "team-project",
        "us-central1",
        "10.30.0.0/20",
    )

    error = _refused(lambda: GcpLocation(project="", region="us-central1"))
    assert error.property_path == "location.project"


def test_a_gpu_node_pool_names_an_unknown_machine_type_and_the_known_ones():
    node_pool = evaluate_program(lambda: _node_pool("g2-standard-8")).named("gpu", "gcp:container/nodePool:NodePool")
    assert node_pool.inputs["nodeConfig"]["machineType"] == "g2-standard-8"
    assert node_pool.inputs["nodeLocations"] == ["us-central1-a"]
    assert node_pool.inputs["project"] == "team-project"

    error = _refused(lambda: _node_pool("g2-standard-9"))
    assert error.property_path == "pool.machine_type"
    assert "'g2-standard-9'" in error.reason and "a3-highgpu-8g" in error.reason
    assert "p5.48xlarge" not in error.reason  # an AWS type is no GKE machine type
    assert str(error).startswith("pool.machine_type: ")


def test_a_reservation_pool_names_its_reservation():
    error = _refused(lambda: _node_pool("g2-standard-8", capacity={"type": "reservation"}))
    assert error.property_path == "pool.capacity.reservation_id"


def test_a_gpudirect_pool_needs_a_range_for_its_nics():
    error = _refused(lambda: _node_pool("a3-highgpu-8g", gpuDirect=True))
    assert error.property_path == "gpu_nic_cidr"


def _gpudirect(machine_type: str) -> None:
    GpuDirectNetworks(
        "tcpx",
        GpuDirectNetworksArgs(
            location=HERE,
            zone="us-central1-a",
            gpu_nic_cidr=IPv4Network("192.168.0.0/16"),
            pool=pool("h100", machine_type, gpuDirect=True),
            cluster_name="team",
        ),
    )


def test_gpudirect_networks_only_for_machines_with_gpu_nics():
    plan = evaluate_program(lambda: _gpudirect("a3-highgpu-8g"))
    subnets = [r.inputs for r in plan.of_type("gcp:compute/subnetwork:Subnetwork")]
    assert len(subnets) == 4  # a3-highgpu-8g: four GPU NICs (TCPX), a VPC each
    assert {s["region"] for s in subnets} == {"us-central1"}

    error = _refused(lambda: _gpudirect("g2-standard-8"))
    assert error.property_path == "pool.machine_type"
    assert "a3-megagpu-8g" in error.reason


def _cluster(zones: list[str], public: list[str] | None = None, sources: list[str] | None = None) -> None:
    GkeCluster(
        "gke",
        GkeClusterArgs(
            location=HERE,
            zones=zones,
            kubernetes_version="1.33",
            cluster_name="team",
            network=_network(),
            node_cidr=IPv4Network("10.30.0.0/20"),
            control_plane_cidr=IPv4Network("172.16.0.0/28"),
            public_cidrs=[IPv4Network(c) for c in public or []],
            public_sources=pulumi.Output.from_input(sources) if sources is not None else None,
            system_pool=SystemPoolSpec.model_validate({"machineType": "n2-standard-4", "maxSize": 3}),
            label_domain="example.com",
            production=False,
        ),
    )


def test_a_public_endpoint_admits_addresses_known_at_deploy_time_besides_its_cidrs():
    """The federation host's NAT egress (stacks/environment.py dialled_by_the_host), as authorized networks."""
    plan = evaluate_program(lambda: _cluster(["us-central1-a"], ["198.51.100.0/24"], ["203.0.113.9"]))
    cluster = plan.named("gke-cluster", "gcp:container/cluster:Cluster").inputs
    assert cluster["privateClusterConfig"]["enablePrivateEndpoint"] is False
    assert cluster["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [
        {"cidrBlock": "10.30.0.0/20", "displayName": "nodes"},
        {"cidrBlock": "198.51.100.0/24", "displayName": "public-0"},
        {"cidrBlock": "203.0.113.9/32", "displayName": "karmada-host-0"},
    ]
    assert _refused(lambda: _cluster(["us-central1-a"], [], ["203.0.113.9"])).property_path == "public_sources"
    # an address the team already lists (as the old error message asked) is not listed twice
    plan = evaluate_program(lambda: _cluster(["us-central1-a"], ["203.0.113.9/32"], ["203.0.113.9"]))
    blocks = plan.named("gke-cluster", "gcp:container/cluster:Cluster").inputs["masterAuthorizedNetworksConfig"]
    assert [b["cidrBlock"] for b in blocks["cidrBlocks"]] == ["10.30.0.0/20", "203.0.113.9/32"]


def test_a_cluster_names_its_zones():
    plan = evaluate_program(lambda: _cluster(["us-central1-a"]))
    cluster = plan.named("gke-cluster", "gcp:container/cluster:Cluster")
    assert cluster.inputs["nodeLocations"] == ["us-central1-a"]
    assert cluster.inputs["privateClusterConfig"]["masterIpv4CidrBlock"] == "172.16.0.0/28"
    assert "enableMultiNetworking" not in cluster.inputs
    system = plan.named("gke-system", "gcp:container/nodePool:NodePool").inputs
    assert (system["nodeConfig"]["machineType"], system["autoscaling"]["totalMaxNodeCount"]) == ("n2-standard-4", 3)

    assert _refused(lambda: _cluster([])).property_path == "zones"


def test_an_existing_cluster_is_read_by_name():
    def program(name: str) -> None:
        found = ExistingGkeCluster("found", ExistingGkeClusterArgs(location=HERE, cluster_name=name))
        assert found.workload_pool == "team-project.svc.id.goog"

    evaluate_program(lambda: program("team"))
    assert _refused(lambda: program("")).property_path == "cluster_name"


def test_a_model_store_lives_in_its_location():
    def program(project: str) -> None:
        GcsModelStore(
            "store",
            GcsModelStoreArgs(
                bucket_name="team-models",
                location=GcpLocation(project=project, region="us-central1"),
                cluster_name="team",
                spec=ModelStoreSpec.model_validate({"bucketPrefix": "team"}),
                production=False,
                identity=GkeIdentity(workload_pool=f"{project}.svc.id.goog"),
                readers={},
            ),
        )

    bucket = evaluate_program(lambda: program("team-project")).named("store-models", "gcp:storage/bucket:Bucket")
    assert (bucket.inputs["project"], bucket.inputs["location"]) == ("team-project", "US-CENTRAL1")
    assert _refused(lambda: program("")).property_path == "location.project"
