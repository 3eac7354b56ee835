"""GPUDirect pools' pod side on GKE: the multi-networking objects pods attach to, and the NCCL plugin installers."""

from __future__ import annotations

import pytest

from tests.harness import environment_config, ns, plan_config

PARAM_SET = "kubernetes:networking.gke.io/v1:GKENetworkParamSet"
NETWORK = "kubernetes:networking.gke.io/v1:Network"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
GCP_NETWORK = "gcp:compute/network:Network"
GCP_SUBNET = "gcp:compute/subnetwork:Subnetwork"


@pytest.fixture(scope="module")
def tcpx_plan():
    config = environment_config("prod")
    config[ns("regions")][2]["gpuPools"] += [
        # A3 High and A3 Mega are not sold on demand (components/catalog/machines.py).
        {
            "name": "tcpx",
            "machineType": "a3-highgpu-8g",
            "maxSize": 2,
            "zones": ["us-central1-a"],
            "gpuDirect": True,
            "capacity": {"type": "reservation", "reservationId": "a3-high-reservation"},
        },
        {
            "name": "tcpxo",
            "machineType": "a3-megagpu-8g",
            "maxSize": 2,
            "zones": ["us-central1-c"],
            "gpuDirect": True,
            "capacity": {"type": "reservation", "reservationId": "a3-mega-reservation"},
        },
    ]
    return plan_config(config, stack="gpud")


def _by_name(plan, type_: str) -> dict[str, dict]:
    return {r.inputs["metadata"]["name"]: r.inputs for r in plan.of_type(type_)}


def test_rdma_pool_gets_one_device_network_per_nic(prod_plan):
    params, networks = _by_name(prod_plan, PARAM_SET), _by_name(prod_plan, NETWORK)
    expected = ["h200-gvnic-1", *(f"h200-rdma-{i}" for i in range(8))]
    assert sorted(params) == sorted(expected) and sorted(networks) == sorted(expected)
    assert {params[n]["spec"]["deviceMode"] for n in expected[1:]} == {"RDMA"}
    assert params["h200-gvnic-1"]["spec"]["deviceMode"] == "NetDevice"
    for name, network in networks.items():
        assert network["spec"] == {
            "type": "Device",
            "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": name},
        }


def test_param_sets_name_the_vpcs_and_subnets_the_node_pool_attaches(prod_plan):
    vpcs = {r.inputs["name"] for r in prod_plan.of_type(GCP_NETWORK)}
    subnets = {r.inputs["name"] for r in prod_plan.of_type(GCP_SUBNET)}
    pool = prod_plan.named("usc1-h200", "gcp:container/nodePool:NodePool").inputs
    attached = pool["networkConfig"]["additionalNodeNetworkConfigs"]
    params = _by_name(prod_plan, PARAM_SET)
    assert len(attached) == len(params) == 9
    for param in params.values():
        assert param["spec"]["vpc"] in vpcs and param["spec"]["vpcSubnet"] in subnets
    # One RoCE VPC holds the 8 RDMA subnets; the second gVNIC has a VPC of its own.
    assert len({p["spec"]["vpc"] for p in params.values()}) == 2
    assert [a["subnetwork"] for a in attached] == [
        params[n]["spec"]["vpcSubnet"] for n in ["h200-gvnic-1", *(f"h200-rdma-{i}" for i in range(8))]
    ]


def test_rdma_nodes_run_the_gib_installer_in_kube_system(prod_plan):
    (installer,) = [r for r in prod_plan.of_type(DAEMONSET) if r.inputs["metadata"]["name"] == "nccl-rdma-installer"]
    assert prod_plan.cluster_of(installer) == "prod-usc1"
    spec = installer.inputs["spec"]["template"]["spec"]
    assert installer.inputs["metadata"]["namespace"] == "kube-system"
    assert spec["priorityClassName"] == "system-node-critical"
    (term,) = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term["matchExpressions"] == [{"key": "inference-platform.io/pool", "operator": "In", "values": ["h200"]}]
    (init,) = spec["initContainers"]
    assert init["image"] == "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.1.1"
    assert {v["hostPath"]["path"] for v in spec["volumes"]} == {
        "/home/kubernetes/bin/nvidia/lib64",
        "/home/kubernetes/bin/gib",
    }
    # It waits for the node pool (a dependency on its component reaches its resources).
    pool = prod_plan.named("usc1-h200", "gcp:container/nodePool:NodePool")
    assert pool.urn in installer.options["dependsOn"]


def test_tcpx_pools_get_netdevice_networks_and_their_installer(tcpx_plan):
    params = _by_name(tcpx_plan, PARAM_SET)
    tcpx = {n: p for n, p in params.items() if n.startswith("tcpx-")}
    assert sorted(tcpx) == [f"tcpx-gpu-{i}" for i in range(4)]
    assert {p["spec"]["deviceMode"] for p in tcpx.values()} == {"NetDevice"}
    assert len([n for n in params if n.startswith("tcpxo-")]) == 8
    installers = {r.inputs["metadata"]["name"] for r in tcpx_plan.of_type(DAEMONSET)}
    # TCPXO's installer needs an unpinned host pre-installation step: not installed (gpudirect_pods.py).
    assert {"nccl-rdma-installer", "nccl-tcpx-installer"} <= installers
    assert not any("tcpxo" in name for name in installers)


def test_gpudirect_objects_validate_against_gke_networking_api(upstream, prod_plan):
    objects = prod_plan.of_type(PARAM_SET) + prod_plan.of_type(NETWORK)
    assert len(objects) == 18
    for r in objects:
        assert upstream.validate_custom_resource(r.inputs) == [], r.name
