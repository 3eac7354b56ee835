"""Regional clusters: what the evaluated program declares for EKS and GKE."""

from __future__ import annotations

import json

import pytest

from components.catalog.regions import EKS_ADDON_VERSIONS
from tests.harness import environment_config, ns, plan_config


def _one(plan, type_, name):
    return plan.named(name, type_)


# --- AWS ---------------------------------------------------------------------------------------------


def test_vpc_has_private_and_public_subnet_per_zone(prod_plan):
    region = prod_plan.spec.region("use1")
    subnets = [r for r in prod_plan.of_type("aws:ec2/subnet:Subnet") if r.name.startswith("use1-")]
    private = [s for s in subnets if "-private-" in s.name]
    public = [s for s in subnets if "-public-" in s.name]
    assert sorted(s.inputs["availabilityZone"] for s in private) == region.zones
    assert sorted(s.inputs["availabilityZone"] for s in public) == region.zones
    assert all(s.inputs["tags"]["kubernetes.io/role/internal-elb"] == "1" for s in private)
    assert all(s.inputs["tags"]["kubernetes.io/role/elb"] == "1" for s in public)
    assert not any(s.inputs.get("mapPublicIpOnLaunch") for s in subnets)


@pytest.mark.plan
@pytest.mark.parametrize(("env", "expected"), [("dev", 1), ("prod", 3)])
def test_nat_gateways_single_or_per_zone(env, expected, request):
    plan = request.getfixturevalue(f"{env}_plan")
    nats = [r for r in plan.of_type("aws:ec2/natGateway:NatGateway") if r.name.startswith("use1-")]
    assert len(nats) == expected


def test_eks_control_plane_is_encrypted_logged_and_private(prod_plan):
    cluster = _one(prod_plan, "aws:eks/cluster:Cluster", "use1-cluster")
    inputs = cluster.inputs
    assert inputs["name"] == "prod-use1"
    assert inputs["version"] == "1.33"
    # all five control plane log types EKS offers (EKS user guide, "Send control plane logs to CloudWatch Logs")
    assert inputs["enabledClusterLogTypes"] == ["api", "audit", "authenticator", "controllerManager", "scheduler"]
    assert inputs["encryptionConfig"]["resources"] == ["secrets"]
    key = _one(prod_plan, "aws:kms/key:Key", "use1-secrets")
    assert key.inputs["enableKeyRotation"] is True
    assert inputs["encryptionConfig"]["provider"]["keyArn"].startswith("arn:aws:kms:us-east-1:")
    assert inputs["vpcConfig"]["endpointPrivateAccess"] is True
    assert inputs["vpcConfig"]["endpointPublicAccess"] is False
    assert inputs["accessConfig"]["authenticationMode"] == "API"


def test_dev_public_endpoint_is_cidr_restricted(dev_plan):
    vpc_config = _one(dev_plan, "aws:eks/cluster:Cluster", "use1-cluster").inputs["vpcConfig"]
    assert vpc_config["endpointPublicAccess"] is True
    assert vpc_config["publicAccessCidrs"] == ["203.0.113.0/24"]


def test_stateful_resources_are_protected_in_prod_only(dev_plan, prod_plan):
    # One cluster per region; per AWS region a KMS key for the cluster's secrets and one for its model bucket.
    # dev: one AWS region; prod: two AWS regions and one GCP region.
    counts = {"dev": (1, 2, 0), "prod": (2, 4, 1)}
    for plan, protected in ((dev_plan, False), (prod_plan, True)):
        types = ("aws:eks/cluster:Cluster", "aws:kms/key:Key", "gcp:container/cluster:Cluster")
        assert tuple(len(plan.of_type(t)) for t in types) == counts[plan.environment], plan.environment
        for type_ in types:
            for r in plan.of_type(type_):
                assert r.options["protect"] is protected, r.urn
                assert r.options["retainOnDelete"] is protected, r.urn
                if "deletionProtection" in r.inputs:
                    assert r.inputs["deletionProtection"] is protected


def test_oidc_provider_for_irsa(dev_plan):
    oidc = _one(dev_plan, "aws:iam/openIdConnectProvider:OpenIdConnectProvider", "use1-oidc")
    assert oidc.inputs["clientIdLists"] == ["sts.amazonaws.com"]
    assert oidc.inputs["url"].startswith("https://oidc.eks.us-east-1.amazonaws.com/id/")


def test_addons_are_pinned_and_cni_uses_irsa(dev_plan):
    addons = {a.inputs["addonName"]: a.inputs for a in dev_plan.of_type("aws:eks/addon:Addon")}
    assert addons.keys() == {"vpc-cni", "coredns", "kube-proxy", "aws-ebs-csi-driver"}
    for name, inputs in addons.items():
        assert inputs["addonVersion"] == EKS_ADDON_VERSIONS["1.33"][name]
    cni_role = dev_plan.named("use1-vpc-cni", "aws:iam/role:Role")
    trust = json.loads(cni_role.inputs["assumeRolePolicy"])["Statement"][0]
    condition = trust["Condition"]["StringEquals"]
    issuer = next(k.split(":")[0] for k in condition)
    assert condition == {
        f"{issuer}:sub": "system:serviceaccount:kube-system:aws-node",
        f"{issuer}:aud": "sts.amazonaws.com",
    }
    assert addons["vpc-cni"]["serviceAccountRoleArn"].startswith("arn:aws:iam::123456789012:role/use1-vpc-cni-")


def test_system_node_group_is_hardened(dev_plan):
    group = _one(dev_plan, "aws:eks/nodeGroup:NodeGroup", "use1-system")
    template = _one(dev_plan, "aws:ec2/launchTemplate:LaunchTemplate", "use1-system")
    assert group.inputs["amiType"] == "AL2023_x86_64_STANDARD"
    assert group.inputs["scalingConfig"] == {"minSize": 2, "maxSize": 4, "desiredSize": 2}
    assert group.inputs["nodeRepairConfig"] == {"enabled": True}
    assert group.options["ignoreChanges"] == ["scalingConfig.desiredSize"]
    assert template.inputs["metadataOptions"]["httpTokens"] == "required"
    assert template.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 1
    ebs = template.inputs["blockDeviceMappings"][0]["ebs"]
    assert (ebs["encrypted"], ebs["volumeType"]) == ("true", "gp3")


def test_aws_provider_per_region_with_default_tags(prod_plan):
    providers = {p.name: p.inputs for p in prod_plan.of_type("pulumi:providers:aws")}
    assert {k: v["region"] for k, v in providers.items()} == {"use1-aws": "us-east-1", "usw2-aws": "us-west-2"}
    # Provider inputs reach the engine as JSON text.
    tags = json.loads(providers["use1-aws"]["defaultTags"])["tags"]
    assert tags["environment"] == "prod" and tags["cost-center"] == "prod"


# --- GCP ---------------------------------------------------------------------------------------------


def test_gke_cluster_is_private_with_workload_identity(prod_plan):
    cluster = _one(prod_plan, "gcp:container/cluster:Cluster", "usc1-cluster").inputs
    assert cluster["privateClusterConfig"]["enablePrivateNodes"] is True
    assert cluster["privateClusterConfig"]["enablePrivateEndpoint"] is True
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "acme-inference-prod.svc.id.goog"}
    assert cluster["enableShieldedNodes"] is True
    assert cluster["releaseChannel"] == {"channel": "REGULAR"}
    assert cluster["removeDefaultNodePool"] is True
    assert cluster["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [
        {"cidrBlock": "10.30.0.0/20", "displayName": "nodes"}
    ]
    assert cluster["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": "pods",
        "servicesSecondaryRangeName": "services",
    }


def test_gke_system_pool_uses_dedicated_service_account(prod_plan):
    pool = _one(prod_plan, "gcp:container/nodePool:NodePool", "usc1-system").inputs
    account = _one(prod_plan, "gcp:serviceaccount/account:Account", "usc1-nodes").inputs
    email = f"{account['accountId']}@acme-inference-prod.iam.gserviceaccount.com"
    assert pool["nodeConfig"]["serviceAccount"] == email
    assert "compute@developer" not in pool["nodeConfig"]["serviceAccount"]
    assert pool["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert pool["nodeConfig"]["shieldedInstanceConfig"] == {"enableSecureBoot": True, "enableIntegrityMonitoring": True}
    assert pool["management"] == {"autoRepair": True, "autoUpgrade": True}
    roles = {
        r.inputs["role"]
        for r in prod_plan.of_type("gcp:projects/iAMMember:IAMMember")
        if r.name.startswith("usc1-nodes-")
    }
    assert "roles/editor" not in roles and "roles/logging.logWriter" in roles


def test_gke_subnet_has_secondary_ranges(prod_plan):
    subnet = _one(prod_plan, "gcp:compute/subnetwork:Subnetwork", "usc1-nodes").inputs
    assert subnet["secondaryIpRanges"] == [
        {"rangeName": "pods", "ipCidrRange": "10.64.0.0/14"},
        {"rangeName": "services", "ipCidrRange": "10.68.0.0/20"},
    ]
    assert subnet["privateIpGoogleAccess"] is True


@pytest.mark.plan
def test_gke_public_endpoint_lists_authorized_cidrs():
    config = environment_config("prod")
    config[ns("regions")][2]["apiAccess"]["publicCidrs"] = ["198.51.100.0/24"]
    plan = plan_config(config)
    cluster = plan.named("usc1-cluster", "gcp:container/cluster:Cluster").inputs
    assert cluster["privateClusterConfig"]["enablePrivateEndpoint"] is False
    assert {"cidrBlock": "198.51.100.0/24", "displayName": "public-0"} in cluster["masterAuthorizedNetworksConfig"][
        "cidrBlocks"
    ]
