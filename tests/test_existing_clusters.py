"""Regions built on clusters that already exist (`regions[].cluster.existing`): read, never created."""

from __future__ import annotations

import pytest

from components.checks.loader import load_environment
from policies.offline import evaluate_plan
from tests.harness import config_errors, plan_config, plan_stacks, program_values, raw_environment

EKS_ROLE = "arn:aws:iam::123456789012:role/team-gpu-nodes"
GKE_ACCOUNT = "gpu-nodes@acme-inference-prod.iam.gserviceaccount.com"


def _existing_prod() -> dict:
    raw = raw_environment("prod")
    use1, _, usc1 = raw["regions"]
    use1["cluster"] = {
        "existing": {
            "name": "team-eks",
            "egressIps": ["198.51.100.7", "198.51.100.8"],
            "nodeRoleArn": EKS_ROLE,
            "subnets": {zone: f"subnet-{i:08x}" for i, zone in enumerate(use1["zones"])},
        }
    }
    usc1["cluster"] = {
        "existing": {"name": "team-gke", "egressIps": ["203.0.113.9"], "nodeServiceAccount": GKE_ACCOUNT}
    }
    # ExternalDNS cannot publish an internal gateway of a GKE cluster the stack reads (no known network to bind a
    # private zone to): this one is public.
    usc1["gateway"] = {"exposure": "public"}
    raw["gateway"]["dns"]["cloudDnsZone"] = "acme-llm"
    return raw


@pytest.fixture(scope="module")
def existing_plan():
    return plan_config(_existing_prod(), stack="prod")


@pytest.mark.plan
def test_no_network_or_control_plane_is_created_for_an_existing_cluster(existing_plan):
    clusters = {r.name for r in existing_plan.of_type("aws:eks/cluster:Cluster")}
    assert clusters == {"usw2-cluster"}  # use1's is the team's
    assert existing_plan.of_type("gcp:container/cluster:Cluster") == []
    vpcs = {r.name for r in existing_plan.of_type("aws:ec2/vpc:Vpc")}
    assert vpcs == {"usw2-vpc"}
    # Only the h200 pool's GPUDirect networks (its extra NICs), not the cluster's VPC.
    networks = {r.name for r in existing_plan.of_type("gcp:compute/network:Network")}
    assert networks == {"usc1-h200-gvnic0", "usc1-h200-rdma"}


@pytest.mark.plan
def test_gpu_pools_join_the_existing_clusters_with_the_declared_role_subnets_and_account(existing_plan):
    groups = {r.name: r.inputs for r in existing_plan.of_type("aws:eks/nodeGroup:NodeGroup")}
    h100 = groups["use1-h100"]
    assert h100["clusterName"] == "team-eks" and h100["nodeRoleArn"] == EKS_ROLE
    declared = {f"subnet-{i:08x}" for i in range(3)}  # _existing_prod's subnet per zone
    assert set(h100["subnetIds"]) <= declared and h100["subnetIds"]
    pools = {r.name: r.inputs for r in existing_plan.of_type("gcp:container/nodePool:NodePool")}
    gpu_pools = {name: p for name, p in pools.items() if name.startswith("usc1-")}
    assert len(gpu_pools) == 3  # h200, l4, a100-mig
    for name, pool in gpu_pools.items():
        assert pool["cluster"] == "team-gke", name
        assert pool["nodeConfig"]["serviceAccount"] == GKE_ACCOUNT, name


@pytest.mark.plan
def test_add_ons_use_the_existing_clusters_providers_and_identity(existing_plan):
    providers = {r.name for r in existing_plan.of_type("pulumi:providers:kubernetes")}
    assert {"team-eks", "team-gke", "prod-usw2", "prod-karmada"} <= providers
    releases = {(existing_plan.cluster_of(r), r.inputs["name"]) for r in existing_plan.helm_releases()}
    assert ("team-eks", "kserve") in {(c, n) for c, n in releases if n == "kserve"} or (
        "team-eks",
        "kserve-resources",
    ) in releases
    # IRSA trusts the existing cluster's OIDC provider, read by its issuer.
    trusts = [
        r.inputs["assumeRolePolicy"]
        for r in existing_plan.of_type("aws:iam/role:Role")
        if r.urn.startswith("urn:pulumi:prod.use1::") and "oidc-provider" in str(r.inputs.get("assumeRolePolicy"))
    ]
    assert trusts and all("oidc.eks.us-east-1.amazonaws.com/id/" in t for t in trusts)


@pytest.mark.plan
def test_the_declared_egress_joins_the_karmada_allowlist(existing_plan):
    (patch,) = [p for p in existing_plan.of_type("kubernetes:core/v1:ServicePatch") if p.name.endswith("-allowlist")]
    sources = patch.inputs["spec"]["loadBalancerSourceRanges"]
    assert {"198.51.100.7/32", "198.51.100.8/32", "203.0.113.9/32"} <= set(sources)
    members = {
        r.inputs["metadata"]["name"] for r in existing_plan.of_type("kubernetes:cluster.karmada.io/v1alpha1:Cluster")
    }
    assert members == {"team-eks", "prod-usw2", "team-gke"}


@pytest.mark.plan
def test_an_environment_on_existing_clusters_passes_the_pack(existing_plan):
    assert evaluate_plan(existing_plan).mandatory == []


@pytest.mark.parametrize(
    ("region", "existing", "path", "fragment"),
    [
        (
            0,
            {"name": "team-eks", "subnets": {"us-east-1a": "subnet-a"}},
            "regions[0].cluster.existing.nodeRoleArn",
            "nodes' IAM role",
        ),
        (
            0,
            {"name": "team-eks", "nodeRoleArn": EKS_ROLE},
            "regions[0].cluster.existing.subnets",
            "no private subnet for zone(s) us-east-1a",
        ),
        (2, {"name": "team-gke"}, "regions[2].cluster.existing.nodeServiceAccount", "nodes' service account"),
        (
            2,
            {"name": "team-gke", "nodeServiceAccount": GKE_ACCOUNT, "nodeRoleArn": EKS_ROLE},
            "regions[2].cluster.existing.nodeRoleArn",
            "unknown key",
        ),
    ],
)
def test_an_existing_cluster_missing_what_its_pools_need_is_refused(region, existing, path, fragment):
    raw = raw_environment("prod")
    raw["regions"][region]["cluster"] = {"existing": existing}
    errors = config_errors(raw)
    assert any(e.startswith(path) and fragment in e for e in errors), errors


@pytest.mark.parametrize(("mode", "host", "refused"), [("push", 2, True), ("push", 0, False), ("pull", 2, False)])
def test_an_existing_push_host_names_the_nat_addresses_its_karmada_controllers_dial_from(mode, host, refused):
    """Push mode: the members' endpoints must admit the host's NAT egress, which only the team can name for a cluster
    it brings (the program adds its own host's); a member of push mode need not name its own (nothing dials from
    it), and a pull member's is asked for by the agent's rule."""
    from tests.test_federation import _push_config

    raw = program_values(_push_config())
    raw["federation"]["memberMode"] = mode
    raw["federation"]["host"] = raw["regions"][host]["name"]
    gke = {"name": "team-gke", "nodeServiceAccount": GKE_ACCOUNT}
    raw["regions"][2]["cluster"] = {"existing": gke}
    errors = [e for e in _errors(raw) if e.startswith("regions[2].cluster.existing.egressIps")]
    assert bool(errors) is (refused or mode == "pull"), errors
    if refused:
        assert errors == [  # prod's search indexes use1, which the host's Clusterpedia dials too
            "regions[2].cluster.existing.egressIps: pods on the federation host (Karmada controllers and Clusterpedia's "
            "synchro manager) dial other members from its NAT addresses, which the members' "
            "endpoints must admit (the program adds them to the clusters it creates); add egressIps: [<NAT address>, ...]"
        ]


@pytest.mark.parametrize(("members", "refused"), [(None, True), (["use1"], False)])
def test_an_existing_search_host_names_the_nat_addresses_clusterpedia_dials_from(members, refused):
    """Pull mode: an existing host that is no federation member (so no agent's rule asks for its egress) still dials
    every other search member from its NAT addresses (CLUSTERPEDIA_MEMBER_HEALTHY); indexing itself only, it dials
    nothing (helper-88 M2)."""
    raw = raw_environment("prod")
    raw["regions"][0]["cluster"] = {
        "existing": {
            "name": "team-eks",
            "nodeRoleArn": EKS_ROLE,
            "subnets": {z: f"subnet-0a1b2c3{n}" for n, z in enumerate(("us-east-1a", "us-east-1b", "us-east-1c"))},
        }
    }
    raw["federation"]["members"] = ["usw2", "usc1"]
    raw["federation"]["search"] = {"enabled": True, "members": members}
    for region in raw["regions"][1:]:
        region["apiAccess"]["publicCidrs"] = ["198.51.100.7/32"]
    errors = [e for e in _errors(raw) if e.startswith("regions[0].cluster.existing.egressIps")]
    expected = (
        "regions[0].cluster.existing.egressIps: pods on the federation host (Clusterpedia's synchro manager) dial "
        "other members from its NAT addresses, which the members' endpoints must admit (the program adds them to the "
        "clusters it creates); add egressIps: [<NAT address>, ...]"
    )
    assert errors == ([expected] if refused else []), errors


def _errors(raw: dict) -> list[str]:
    from components.checks.loader import load_environment
    from components.config.base import ConfigError

    try:
        load_environment(raw)
    except ConfigError as error:
        return [str(issue) for issue in error.issues]
    return []


@pytest.mark.plan
def test_an_internal_gateway_on_an_existing_eks_cluster_gets_its_private_zone_in_the_clusters_vpc():
    """ExternalDNS publishes an internal gateway's name into a private hosted zone that Route 53 answers only inside
    the VPCs associated with it: for a cluster the stack reads, the VPC its API reports (the one its GPU nodes'
    security groups are created in), never none."""
    raw = _existing_prod()
    raw["regions"][0]["gateway"] = {"exposure": "internal"}
    plan = plan_stacks(raw, "prod", ["use1"])  # use1's stack creates the zone and the node security groups
    (zone,) = [z for z in plan.of_type("aws:route53/zone:Zone") if z.name.startswith("team-eks-")]
    node_vpcs = {
        g.inputs["vpcId"] for g in plan.of_type("aws:ec2/securityGroup:SecurityGroup") if g.name.startswith("use1-")
    }
    assert len(node_vpcs) == 1 and next(iter(node_vpcs)).startswith("vpc-")
    assert [v["vpcId"] for v in zone.inputs["vpcs"]] == list(node_vpcs)


def test_an_internal_gateway_on_an_existing_gke_cluster_is_published_by_you():
    """A private Cloud DNS zone binds a VPC network, and the stack does not know an existing GKE cluster's: ExternalDNS
    cannot publish an internal gateway's name there (the zone rendered before bound no network)."""
    raw = _existing_prod()
    raw["regions"][2]["gateway"] = {"exposure": "internal"}
    errors = config_errors(raw)
    refused = [e for e in errors if e.startswith("regions[2].gateway.exposure:")]
    assert len(refused) == 1 and "gateway.dns.publisher: external" in refused[0], errors
    raw["gateway"]["dns"]["publisher"] = "external"  # you publish the name: accepted
    load_environment(raw)
