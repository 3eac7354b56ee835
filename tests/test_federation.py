"""Karmada federation in whole plans: control plane, members, the KServe API and federated models.

The checked-in prod environment federates the 70B model (pull members, AWS host); a variant, planned
once per module, covers the rest: push members, a GCP host, an extra allowed CIDR, usw2 reading
weights from its bucket, a registry mirror on usw2.
"""

from __future__ import annotations

import base64
from types import SimpleNamespace

import pytest
import yaml

from components.addons.model_cache import model_storage_uri
from components.catalog.charts import CHARTS
from components.checks.loader import load_environment
from components.federation.certificates import KeyPair
from components.federation.control_plane import host_secret_values
from components.federation.member import agent_secret_values
from components.federation.placement import model_shares
from components.serving.deployment import inference_service_manifest, model_placement
from policies.model import Stack
from policies.offline import evaluate_plan, plan_resources
from policies.pods import is_workload, serving_runtime, workloads
from tests.harness import cluster_objects, environment_config, kubernetes_object_keys, ns, plan_config, raw_environment
from tools.conformance import unknown_values
from tools.plan.model import is_patch
from tools.plan.report import render_markdown
from tools.rollout.bringup import check_bring_up
from tools.rollout.gates import offline_gates

MODEL = "llama-3-1-70b"
EXTRA_CIDR = "192.0.2.0/24"


def _push_config() -> dict:
    config = environment_config("prod")
    config[ns("federation")] |= {
        "host": "usc1",
        "memberMode": "push",
        "registryMirrors": {"usw2": "mirror.example"},
        "apiServer": {"allowedCidrs": [EXTRA_CIDR]},
        "failover": {"applicationTolerationSeconds": 1800},  # usw2 loads from its bucket: a longer start-up
    }
    regions = config[ns("regions")]
    for region in regions[:2]:
        region["apiAccess"]["publicCidrs"] = ["198.51.100.0/24"]
    regions[1]["modelCache"]["enabled"] = False
    for tenant in config[ns("tenants")]:
        tenant.pop("loras", None)  # LoRA adapters load from the cache usw2 now lacks
    return config


@pytest.fixture(scope="module")
def push_plan():
    return plan_config(_push_config(), stack="push")


def _objects(plan, cluster: str, kind: str) -> dict[str, dict]:
    """name -> inputs of the Kubernetes objects of a kind on a cluster (Karmada's is `<stack>-karmada`)."""
    found = [r for r in plan.kubernetes_objects() if plan.cluster_of(r) == cluster and r.inputs["kind"] == kind]
    # An object over a patch of it (another stack's): patches first, so the object wins.
    return {r.inputs["metadata"]["name"]: r.inputs for r in sorted(found, key=lambda r: not is_patch(r))}


def _releases(plan, name: str) -> dict[str, dict]:
    """cluster -> inputs of the Helm releases called `name`."""
    return {plan.cluster_of(r): r.inputs for r in plan.helm_releases() if r.inputs["name"] == name}


def _one(plan, type_: str, name: str) -> dict:
    return plan.named(name, type_).inputs


# --- control plane ----------------------------------------------------------------------------------------


def test_control_plane_release_on_the_host(prod_plan):
    (cluster, release), *others = _releases(prod_plan, "karmada").items()
    assert not others and cluster == "prod-use1"
    # Published as oci://docker.io/karmada/karmada (FACTS-3.md §3), not in the raw master/charts index.
    assert (release["chart"], release["version"], release["namespace"]) == (
        "oci://docker.io/karmada/karmada",
        "v1.18.2",
        "karmada-system",
    )
    assert "repositoryOpts" not in release
    values = release["values"]
    assert values["installMode"] == "host"
    assert values["karmadaImageVersion"] == "v1.18.2"
    assert values["certs"]["mode"] == "custom"  # our CA: signs the agents' client certificates
    assert values["apiServer"] == {
        "replicaCount": 2,
        "serviceType": "ClusterIP",
        "labels": {"app": "karmada-apiserver"},
    }
    assert values["etcd"]["internal"] == {
        "replicaCount": 3,
        "storageType": "pvc",
        "pvc": {"storageClass": "gp2", "size": "10Gi"},
    }
    # `etcd.affinity` replaces the chart's: its one-member-per-node term is kept, zones are preferred besides, and a
    # budget lets a drain take one member of three (the chart renders none)
    etcd = {"matchLabels": {"app": "etcd"}}
    assert values["etcd"]["affinity"]["podAntiAffinity"] == {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": etcd, "topologyKey": "kubernetes.io/hostname"}
        ],
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"labelSelector": etcd, "topologyKey": "topology.kubernetes.io/zone"}}
        ],
    }
    (budget,) = [
        r
        for r in prod_plan.kubernetes_objects()
        if r.inputs["kind"] == "PodDisruptionBudget" and r.inputs["metadata"]["namespace"] == "karmada-system"
    ]
    assert budget.inputs["spec"] == {"maxUnavailable": 1, "selector": etcd}
    manager = values["controllerManager"]
    assert manager["featureGates"] == {"Failover": True, "PropagateDeps": True}
    assert manager["extraCommandArgs"] == {"enable-no-execute-taint-eviction": "true"}
    for component in ("scheduler", "webhook", "aggregatedApiServer", "controllerManager"):
        assert values[component]["image"]["tag"] == "v1.18.2"
    # The hooks' `bash` runs in an image with a shell (alpine/k8s, by digest; registry.k8s.io/kubectl has none).
    assert values["kubectl"]["image"] == {
        "registry": "docker.io",
        "repository": "alpine/k8s",
        "tag": "1.34.1@sha256:ec714df3813b5405292860f8a1c55c5727bf8c33c88992f1e981efad8065547f",
    }
    assert values["cfssl"]["image"]["tag"] == "v1.6.5"
    # Private keys travel in a secret values file; the rest stays readable.
    assert release["valueYamlFiles"] == "[secret]"
    assert "caKey" not in values["certs"]["custom"] and "key" not in values["certs"]["custom"]


def test_secret_chart_values_exist_in_the_pinned_chart(upstream):
    defaults = upstream.chart_values(CHARTS["karmada"].upstream_values)
    pair = KeyPair(cert_pem="cert", key_pem="key")
    certs = SimpleNamespace(ca=pair, server=pair, front_proxy_ca=pair, front_proxy_client=pair)
    assert unknown_values(host_secret_values(certs), defaults) == []
    assert unknown_values(agent_secret_values("key"), defaults) == []


def test_webhook_admits_noexecute_taint_policies(prod_plan):
    patch = _objects(prod_plan, "prod-use1", "Deployment")["karmada-webhook"]
    assert (patch["metadata"]["name"], patch["metadata"]["namespace"]) == ("karmada-webhook", "karmada-system")
    assert patch["spec"]["template"]["spec"]["containers"] == [
        {"name": "karmada-webhook", "args": ["--allow-no-execute-taint-policy=true"]}
    ]


def test_api_server_load_balancer_is_open_to_the_clusters_nat_egress_only(prod_plan, push_plan):
    service = _objects(prod_plan, "prod-use1", "Service")["karmada-apiserver-external"]
    spec = service["spec"]
    assert spec["type"] == "LoadBalancer" and spec["selector"] == {"app": "karmada-apiserver"}
    assert spec["ports"] == [{"name": "https", "port": 5443, "targetPort": 5443, "protocol": "TCP"}]
    assert service["metadata"]["annotations"]["service.beta.kubernetes.io/aws-load-balancer-type"] == "nlb"
    # The host's stack opens it to the host's own NAT (3 zones) and leaves the field to the global stack,
    # which applies every member's NAT gateways once they exist: use1, usw2 one per zone (3 + 3), usc1's one.
    assert len(spec["loadBalancerSourceRanges"]) == 3
    (host_service,) = [
        r for r in prod_plan.of_type("kubernetes:core/v1:Service") if r.name.endswith("apiserver-external")
    ]
    assert host_service.options["ignoreChanges"] == ["spec.loadBalancerSourceRanges"]
    (patch,) = [p for p in prod_plan.of_type("kubernetes:core/v1:ServicePatch") if p.name.endswith("-allowlist")]
    assert patch.urn.startswith("urn:pulumi:prod.global::")
    assert patch.inputs["metadata"]["name"] == "karmada-apiserver-external"
    sources = patch.inputs["spec"]["loadBalancerSourceRanges"]
    assert len(sources) == len(set(sources)) == 7 and all(s.endswith("/32") for s in sources)
    assert set(spec["loadBalancerSourceRanges"]) <= set(sources)
    # The registrations come first: an agent that gets through finds its Cluster. The host registered itself in
    # its own stack (its agent dials the API in-cluster); the global stack registers usw2 and usc1.
    clusters = {r.urn for r in prod_plan.of_type("kubernetes:cluster.karmada.io/v1alpha1:Cluster")}
    in_global = {u for u in clusters if u.startswith("urn:pulumi:prod.global::")}
    assert len(clusters) == 3 and len(in_global) == 2 and in_global <= set(patch.options["dependsOn"])
    (extra,) = [p for p in push_plan.of_type("kubernetes:core/v1:ServicePatch") if p.name.endswith("-allowlist")]
    assert extra.inputs["spec"]["loadBalancerSourceRanges"][-1] == EXTRA_CIDR


def test_gke_nat_egress_is_a_reserved_address(prod_plan):
    nat = _one(prod_plan, "gcp:compute/routerNat:RouterNat", "usc1-nat")
    assert nat["natIpAllocateOption"] == "MANUAL_ONLY" and len(nat["natIps"]) == 1
    assert _one(prod_plan, "gcp:compute/address:Address", "usc1-nat")["addressType"] == "EXTERNAL"


def test_api_server_certificate_names_the_load_balancer(prod_plan, push_plan):
    aws = _one(prod_plan, "tls:index/certRequest:CertRequest", "prod-use1-karmada-server-csr")
    assert aws["subject"] == {"commonName": "system:admin", "organization": "system:masters"}
    assert {"*.elb.us-east-1.amazonaws.com", "karmada-apiserver.karmada-system.svc.cluster.local"} <= set(
        aws["dnsNames"]
    )
    assert aws["ipAddresses"] == ["127.0.0.1"]
    # GCP host: a reserved address, given to the Service and written into the certificate.
    gcp = _one(push_plan, "tls:index/certRequest:CertRequest", "push-usc1-karmada-server-csr")
    assert not any("amazonaws" in n for n in gcp["dnsNames"])
    (address,) = [ip for ip in gcp["ipAddresses"] if ip != "127.0.0.1"]
    service = _objects(push_plan, "push-usc1", "Service")["karmada-apiserver-external"]
    assert service["spec"]["loadBalancerIP"] == address


def test_karmada_provider_and_secret_kubeconfig_output(prod_plan):
    # One in the host's stack (the control plane's), one in the global stack (Karmada's objects).
    providers = prod_plan.of_type("pulumi:providers:kubernetes")
    karmada = [p for p in providers if p.name == "prod-karmada"]
    assert sorted(p.urn.split("::")[0] for p in karmada) == ["urn:pulumi:prod.global", "urn:pulumi:prod.use1"]
    assert {p.inputs["kubeconfig"] for p in karmada} == {"[secret]"}
    assert prod_plan.outputs["karmadaKubeconfig"] == "[secret]"
    karmada = prod_plan.outputs["karmada"]
    assert karmada["host"] == "use1" and karmada["endpoint"].startswith("https://")
    assert karmada["endpoint"].endswith(":5443")
    assert karmada["members"] == {"use1": "prod-use1", "usw2": "prod-usw2", "usc1": "prod-usc1"}


def test_member_health_taints_are_noexecute(prod_plan):
    policies = _objects(prod_plan, "prod-karmada", "ClusterTaintPolicy")
    # the keys Karmada's cluster controller taints an unhealthy member with (karmada-io/karmada pkg/apis/cluster/v1alpha1:
    # TaintClusterNotReady, TaintClusterUnreachable)
    assert {p["spec"]["taints"][0]["key"] for p in policies.values()} == {
        "cluster.karmada.io/not-ready",
        "cluster.karmada.io/unreachable",
    }
    unreachable = policies["member-unreachable"]["spec"]
    assert unreachable["addOnConditions"] == [{"conditionType": "Ready", "statusValues": ["Unknown"], "operator": "In"}]
    assert unreachable["taints"] == [{"key": "cluster.karmada.io/unreachable", "effect": "NoExecute"}]
    assert unreachable["targetClusters"] == {"clusterNames": ["prod-use1", "prod-usw2", "prod-usc1"]}


# --- members ----------------------------------------------------------------------------------------------


def test_pull_members_are_declared_with_their_labels_and_agents_wait_for_access(prod_plan):
    """The program creates each pull member's Cluster with its labels; the agent re-registers it (spec is its)."""
    patches = {
        r.inputs["metadata"]["name"]: r
        for r in prod_plan.kubernetes_objects()
        if r.type == "kubernetes:cluster.karmada.io/v1alpha1:Cluster"
    }
    assert sorted(patches) == ["prod-usc1", "prod-use1", "prod-usw2"]
    usc1 = patches["prod-usc1"].inputs
    assert usc1["spec"]["syncMode"] == "Pull"
    assert usc1["metadata"]["labels"] == {
        "inference-platform.io/cloud": "gcp",
        "inference-platform.io/region": "us-central1",
        "inference-platform.io/gpu-product-H200-141GB": "true",
        "inference-platform.io/gpu-product-L4": "true",
        "inference-platform.io/gpu-product-A100-80GB": "true",
    }
    # Different stacks: the agent (prod.usc1) is deployed, not waited for, before the Cluster (prod.global) is
    # created; it starts once the global stack grants its RBAC and opens the allowlist, after the Cluster exists.
    agent = prod_plan.named("prod-usc1-karmada-agent", "kubernetes:helm.sh/v3:Release")
    assert agent.urn.startswith("urn:pulumi:prod.usc1::") and agent.inputs["skipAwait"] is True
    assert "atomic" not in agent.inputs
    assert patches["prod-usc1"].urn.startswith("urn:pulumi:prod.global::")
    # The host joins in its own stack: its Cluster, then (after the agent's flags) its RBAC.
    host_agent = prod_plan.named("prod-use1-karmada-agent", "kubernetes:helm.sh/v3:Release")
    control_plane = prod_plan.named("prod-use1-karmada", "kubernetes:helm.sh/v3:Release")
    assert control_plane.urn in host_agent.options["dependsOn"]
    assert patches["prod-use1"].urn.startswith("urn:pulumi:prod.use1::")
    agents = _releases(prod_plan, "karmada-agent")
    assert sorted(agents) == ["prod-usc1", "prod-use1", "prod-usw2"]
    for cluster, release in agents.items():
        values = release["values"]
        assert values["installMode"] == "agent" and values["agent"]["clusterName"] == cluster
        assert release["namespace"] == "karmada-system" and release["valueYamlFiles"] == "[secret]"
    # The host's agent stays in-cluster; the others dial the load balancer.
    # the chart's karmada-apiserver Service in karmada-system, on its secure port 5443
    internal = "https://karmada-apiserver.karmada-system.svc.cluster.local:5443"
    assert agents["prod-use1"]["values"]["agent"]["kubeconfig"]["server"] == internal
    assert agents["prod-usc1"]["values"]["agent"]["kubeconfig"]["server"] == prod_plan.outputs["karmada"]["endpoint"]


def test_pull_agents_get_least_privilege_rbac_in_karmada(prod_plan):
    cert = _one(prod_plan, "tls:index/certRequest:CertRequest", "prod-usc1-karmada-agent-csr")
    assert cert["subject"] == {"commonName": "system:karmada:agent:prod-usc1", "organization": "system:karmada:agents"}
    binding = _objects(prod_plan, "prod-karmada", "ClusterRoleBinding")["system:karmada:prod-usc1:agent"]
    assert binding["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:karmada:agent:prod-usc1"}
    ]
    role = _objects(prod_plan, "prod-karmada", "ClusterRole")["system:karmada:prod-usc1:agent"]
    own = role["rules"][0]
    assert own["resourceNames"] == ["prod-usc1"] and "update" in own["verbs"]
    # It can neither create a Cluster (the program creates its own first) nor touch a Secret in Karmada.
    assert not [r for r in role["rules"] if r["resources"] == ["clusters"] and "create" in r["verbs"]]
    roles = {**_objects(prod_plan, "prod-karmada", "ClusterRole"), **_objects(prod_plan, "prod-karmada", "Role")}
    agent_rules = [rule for name, r in roles.items() if ":agent" in name for rule in r["rules"]]
    assert agent_rules and not [r for r in agent_rules if "secrets" in r["resources"]]
    work = _objects(prod_plan, "prod-karmada", "Role")["system:karmada:prod-usc1:agent-work"]
    assert work["metadata"]["namespace"] == "karmada-es-prod-usc1"
    assert "karmada-es-prod-usc1" in _objects(prod_plan, "prod-karmada", "Namespace")


@pytest.mark.plan
def test_push_members_hand_a_token_to_karmada(push_plan):
    clusters = _objects(push_plan, "push-karmada", "Cluster")
    assert {c["spec"]["syncMode"] for c in clusters.values()} == {"Push"}
    # the host by its in-cluster API, which its control plane's pods reach; the others by their endpoints
    assert clusters["push-usc1"]["spec"]["apiEndpoint"] == "https://kubernetes.default.svc"
    assert (
        clusters["push-use1"]["spec"]["apiEndpoint"].startswith("https://")
        and "kubernetes.default" not in (clusters["push-use1"]["spec"]["apiEndpoint"])
    )
    assert clusters["push-usw2"]["spec"]["secretRef"] == {"namespace": "karmada-cluster", "name": "push-usw2"}
    assert not _releases(push_plan, "karmada-agent")
    secret = _objects(push_plan, "push-karmada", "Secret")["push-usw2"]
    assert secret["metadata"]["namespace"] == "karmada-cluster" and secret["data"] == "[secret]"
    token = _objects(push_plan, "push-usw2", "Secret")["karmada-controller-manager-token"]
    assert token["type"] == "kubernetes.io/service-account-token"
    assert _objects(push_plan, "push-usw2", "ServiceAccount")["karmada-controller-manager"]


@pytest.mark.plan
def test_one_stack_of_push_mode_names_its_host_in_cluster_and_opens_its_members_to_the_hosts_nat():
    """stacks.layout single (every region's deployer reaching its cluster from listed CIDRs): the same Clusters and
    endpoints as the split stacks give (stacks/federation_parts.py member_ref, stacks/environment.py)."""
    config = _push_config()
    config[ns("stacks")] = {"layout": "single"}
    for region in config[ns("regions")]:
        region["deployer"] = {"kind": "cidrs", "cidrs": ["198.51.100.0/24"]}
        region["apiAccess"]["publicCidrs"] = ["198.51.100.0/24"]
    plan = plan_config(config, stack="single")
    clusters = _objects(plan, "single-karmada", "Cluster")
    assert clusters["single-usc1"]["spec"]["apiEndpoint"] == "https://kubernetes.default.svc"
    assert "kubernetes.default" not in clusters["single-use1"]["spec"]["apiEndpoint"]
    endpoints = {
        r.inputs["name"]: r.inputs["vpcConfig"]["publicAccessCidrs"] for r in plan.of_type("aws:eks/cluster:Cluster")
    }
    assert sorted(endpoints) == ["single-use1", "single-usw2"]
    (host_nat,) = {cidrs[1] for cidrs in endpoints.values()}  # the same address, usc1's NAT, on both
    assert all(cidrs == ["198.51.100.0/24", host_nat] for cidrs in endpoints.values()) and host_nat.endswith("/32")
    # The bring-up asks the team for nothing about reach: the program adds the host's egress in the same evaluation,
    # and a single stack exports no egressIps to compare it with (helper-88 L4).
    report = check_bring_up(plan.spec, "single", {"single": plan}, offline_gates(plan.spec, "single", {"single": plan}))
    assert not [n for ns in report.notes.values() for n in ns if n.startswith(("push: ", "search: "))]


def test_a_push_members_endpoint_admits_the_hosts_nat_egress_and_pull_members_do_not_change(prod_plan, push_plan):
    """Karmada's controllers on usc1 dial use1 and usw2 (KARMADA_PUSH_MEMBER_READY): their EKS endpoints admit
    usc1's NAT egress, read from its stack's `egressIps`, besides the team's publicCidrs; the host's own endpoint
    and pull members' keep the config's (the host's NAT egress reaches none of prod's)."""
    egress = push_plan.stacks["push.usc1"].evaluation.referenced.values["egressIps"]
    assert len(egress) == 1

    def endpoints(plan):
        return {
            r.inputs["name"]: r.inputs["vpcConfig"].get("publicAccessCidrs")
            for r in plan.of_type("aws:eks/cluster:Cluster")
        }

    assert endpoints(push_plan) == {
        "push-use1": ["198.51.100.0/24", f"{egress[0]}/32"],
        "push-usw2": ["198.51.100.0/24", f"{egress[0]}/32"],
    }
    (gke,) = [r for r in push_plan.of_type("gcp:container/cluster:Cluster")]
    assert gke.inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [
        {"displayName": "nodes", "cidrBlock": "10.30.0.0/20"}
    ]
    assert all(cidrs is None or all(not c.endswith("/32") for c in cidrs) for cidrs in endpoints(prod_plan).values())


# --- the KServe API in Karmada ----------------------------------------------------------------------------


def test_kserve_crds_and_interpreter_in_karmada(prod_plan):
    assert "prod-karmada" in _releases(prod_plan, "kserve-crd")  # besides every serving cluster
    namespaces = _objects(prod_plan, "prod-karmada", "Namespace")
    for name in ("inference", "kserve"):
        assert namespaces[name]["metadata"]["labels"]["namespace.karmada.io/skip-auto-propagation"] == "true"
    interpreter = _objects(prod_plan, "prod-karmada", "ResourceInterpreterCustomization")["kserve-inferenceservice"]
    assert interpreter["spec"]["target"] == {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService"}
    assert set(interpreter["spec"]["customizations"]) == {
        "replicaResource",
        "healthInterpretation",
        "statusReflection",
        "statusAggregation",
        "dependencyInterpretation",
    }


# --- federated models -------------------------------------------------------------------------------------


def test_federated_model_is_created_once_in_karmada(prod_plan):
    isvcs = [r for r in prod_plan.kubernetes_objects() if r.inputs["kind"] == "InferenceService"]
    assert [prod_plan.cluster_of(r) for r in isvcs if r.inputs["metadata"]["name"] == MODEL] == ["prod-karmada"]
    (template,) = [r.inputs for r in isvcs if prod_plan.cluster_of(r) == "prod-karmada"]
    predictor = template["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (3, 10)  # the placements' totals
    assert predictor["nodeSelector"] == {"inference-platform.io/pool": "h100"}  # the first placement's rendering
    budget = _objects(prod_plan, "prod-karmada", "PodDisruptionBudget")[MODEL]
    assert budget["spec"]["selector"] == {"matchLabels": {"serving.kserve.io/inferenceservice": MODEL}}
    # Each member keeps its own autoscaler for the predictor Karmada's InferenceService creates there.
    for member in ("prod-use1", "prod-usw2", "prod-usc1"):
        assert MODEL not in _objects(prod_plan, member, "PodDisruptionBudget")
        assert MODEL in _objects(prod_plan, member, "ScaledObject")


def test_propagation_policy_gives_every_member_its_copy_once_all_serve_the_kind(prod_plan):
    policy = _objects(prod_plan, "prod-karmada", "PropagationPolicy")[MODEL]["spec"]
    assert policy["resourceSelectors"] == [
        {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService", "name": MODEL}
    ]
    placement = policy["placement"]
    assert placement["clusterAffinity"] == {"clusterNames": ["prod-use1", "prod-usw2", "prod-usc1"]}
    # each member its own copy (its OverridePolicy sets its range), and all three members or none
    assert placement["replicaScheduling"] == {"replicaSchedulingType": "Duplicated"}
    assert placement["spreadConstraints"] == [{"spreadByField": "cluster", "minGroups": 3, "maxGroups": 3}]
    assert placement["clusterTolerations"] == [
        {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        for key in ("cluster.karmada.io/not-ready", "cluster.karmada.io/unreachable")
    ]
    assert policy["failover"] == {
        "cluster": {"purgeMode": "Gracefully"},
        "application": {
            "decisionConditions": {"tolerationSeconds": 900},
            "purgeMode": "Gracefully",
            "gracePeriodSeconds": 1800,
        },
    }
    assert policy["propagateDeps"] is True and policy["conflictResolution"] == "Abort"
    assert policy["dependentOverrides"] == [f"{MODEL}-use1", f"{MODEL}-usw2", f"{MODEL}-usc1"]


def test_override_policy_per_member_binds_the_region(prod_plan):
    policies = _objects(prod_plan, "prod-karmada", "OverridePolicy")
    assert sorted(policies) == [f"{MODEL}-usc1", f"{MODEL}-use1", f"{MODEL}-usw2"]
    (rule,) = policies[f"{MODEL}-usc1"]["spec"]["overrideRules"]
    assert rule["targetCluster"] == {"clusterNames": ["prod-usc1"]}
    patches = {op["path"]: op for op in rule["overriders"]["plaintext"]}
    assert list(patches)[:2] == ["/spec/predictor/model/storageUri", "/spec/predictor/nodeSelector"]
    assert patches["/spec/predictor/nodeSelector"]["value"] == {"inference-platform.io/pool": "h200"}
    # The H200 member runs the model as sized for its GPU: half the GPUs, its own engine flags and sizing.
    assert patches["/spec/predictor/model/resources/limits/nvidia.com~1gpu"]["value"] == 2
    assert "--tensor-parallel-size=2" in patches["/spec/predictor/model/args"]["value"]
    assert patches["/metadata/annotations/inference-platform.io~1gpu-product"]["value"] == "H200-141GB"
    assert (patches["/spec/predictor/minReplicas"]["value"], patches["/spec/predictor/maxReplicas"]["value"]) == (1, 2)
    (use1,) = policies[f"{MODEL}-use1"]["spec"]["overrideRules"]
    assert [(op["path"], op.get("value")) for op in use1["overriders"]["plaintext"]] == [
        ("/spec/predictor/model/storageUri", f"pvc://models/models/{MODEL}"),
        ("/spec/predictor/nodeSelector", {"inference-platform.io/pool": "h100"}),
        ("/spec/predictor/minReplicas", 1),
        ("/spec/predictor/maxReplicas", 4),
    ]


def test_members_run_the_model_as_their_regions_deployment_would(prod_plan):
    """What Karmada hands each member is the member's own rendering, with its placement's range."""
    delivered = cluster_objects(prod_plan, "InferenceService")
    env = load_environment(raw_environment("prod"))
    model = env.models[0]
    for placement in model.placements:
        region = env.region(placement.region)
        regional = inference_service_manifest(
            model_placement(env, model, placement), model_storage_uri(env, region, "prod", model)
        )
        assert delivered[f"prod-{region.name}", MODEL] == regional
    assert set(cluster_objects(prod_plan, "PodDisruptionBudget")) >= {(f"prod-{r}", MODEL) for r in ("use1", "usc1")}


@pytest.mark.plan
def test_override_points_a_member_without_cache_at_its_own_bucket(push_plan):
    (rule,) = _objects(push_plan, "push-karmada", "OverridePolicy")[f"{MODEL}-usw2"]["spec"]["overrideRules"]
    patches = {op["path"]: op for op in rule["overriders"]["plaintext"]}
    # No cache in usw2: no pvc:// storage, vLLM streams from the region's bucket.
    assert patches["/spec/predictor/model/storageUri"] == {
        "operator": "remove",
        "path": "/spec/predictor/model/storageUri",
    }
    args = patches["/spec/predictor/model/args"]["value"]
    assert f"--model=s3://acme-inference-push-usw2-models/models/{MODEL}" in args
    # The model server's image comes from the member's runtime: the usw2 mirror has nothing to rewrite here.
    assert "imageOverrider" not in rule["overriders"]


def test_members_are_the_placements_in_order():
    env = load_environment(raw_environment("prod"))
    shares = model_shares(env, "prod", env.models[0])
    assert [(s.cluster, s.pool.name, s.gpu, s.placement.max_replicas) for s in shares] == [
        ("prod-use1", "h100", "H100-80GB", 4),
        ("prod-usw2", "h100", "H100-80GB", 4),
        ("prod-usc1", "h200", "H200-141GB", 2),
    ]


# --- conformance and policy -------------------------------------------------------------------------------


def test_karmada_objects_match_upstream_crds(upstream, prod_plan, push_plan):
    checked = set()
    for plan in (prod_plan, push_plan):
        for r in plan.kubernetes_objects():
            obj = r.inputs
            if plan.cluster_of(r).endswith("-karmada") and upstream.has_crd(obj["apiVersion"], obj["kind"]):
                assert upstream.validate_custom_resource(obj) == [], r.urn
                checked.add(obj["kind"])
    assert {"PropagationPolicy", "OverridePolicy", "InferenceService"} <= checked


def test_kinds_served_without_crd_match_karmadas_openapi(upstream, prod_plan, push_plan):
    checked = set()
    for plan in (prod_plan, push_plan):
        for r in plan.kubernetes_objects():
            if r.inputs["kind"] in ("Cluster", "ResourceInterpreterCustomization", "ClusterTaintPolicy") and not (
                r.type.endswith("Patch")  # a partial object: the agent owns the rest
            ):
                assert upstream.validate_served_resource(r.inputs) == [], r.urn
                checked.add(r.inputs["kind"])
    assert checked == {"Cluster", "ResourceInterpreterCustomization", "ClusterTaintPolicy"}
    bad = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "spec": {"syncMode": "Pull", "zonez": []}}
    assert upstream.validate_served_resource(bad) == [
        "spec: Additional properties are not allowed ('zonez' was unexpected)"
    ]


@pytest.mark.plan
def test_push_variant_passes_the_policy_pack(push_plan):
    evaluation = evaluate_plan(push_plan)
    assert not evaluation.mandatory, [f"{f.policy}: {f.message}" for f in evaluation.mandatory]


def test_policy_checks_a_karmada_template_with_its_members_runtime(prod_plan):
    resources = plan_resources(prod_plan)
    isvc = next(r for r in resources if r.kind == "InferenceService" and r.cluster == "prod-karmada")
    runtime = serving_runtime(isvc, Stack(resources))
    assert runtime is not None and runtime.kind == "ClusterServingRuntime" and runtime.cluster == "prod-use1"
    without_policy = [r for r in resources if r.kind != "PropagationPolicy"]
    assert serving_runtime(isvc, Stack(without_policy)) is None  # Karmada itself runs no model server


def test_a_patch_of_a_charts_workload_is_judged_on_what_it_sets(prod_plan):
    """The webhook's DeploymentPatch patches the chart's Deployment (not in the plan): a partial workload, judged on
    the fields it sets (a privileged container would be reported), never on the ones it leaves to the chart."""
    evaluation = evaluate_plan(prod_plan)
    patch = prod_plan.named("prod-use1-karmada-webhook-flags")
    assert evaluation.subjects["k8s-probes"] > 0, "the workload rules judged the plan's workloads"
    assert not [f for f in evaluation.findings if f.urn == patch.urn]
    (resource,) = [r for r in plan_resources(prod_plan) if r.urn == patch.urn]
    assert is_workload(resource)
    [pod] = workloads(resource, None)
    assert pod.partial and pod.containers[0]["args"] == ["--allow-no-execute-taint-policy=true"]


# --- plan.md ----------------------------------------------------------------------------------------------


def test_plan_md_shows_the_federation(prod_plan):
    md = render_markdown(prod_plan)
    assert '  fed[["Karmada v1.18.2 on use1<br/>pull members"]]' in md
    assert '  fed ===|"host · member · H100-80GB, L40S"| c_use1' in md
    assert '  fed -.-|"member · H200-141GB, L4, A100-80GB"| c_usc1' in md
    # the federated model's node in each member carries that member's replica range (its own copy)
    assert '    m_usc1_llama_3_1_70b_h200(["model llama-3-1-70b<br/>vllm · 1-2 replicas"])' in md
    assert "    m_usc1_llama_3_1_70b_h200 --> p_usc1_h200" in md
    assert "| llama-3-1-70b | prod-use1 | h100 | H100-80GB | 1-4 |" in md
    assert "| prod-usc1 | gcp | us-central1 | H200-141GB, L4, A100-80GB |" in render_markdown(prod_plan)


def test_kubeconfig_is_a_client_certificate_kubeconfig():
    from components.federation.certificates import client_kubeconfig

    config = yaml.safe_load(client_kubeconfig("k", "https://lb:5443", "CA", "CERT", "KEY"))
    assert config["clusters"][0]["cluster"] == {
        "server": "https://lb:5443",
        "certificate-authority-data": base64.b64encode(b"CA").decode(),
    }
    assert config["users"][0]["user"]["client-key-data"] == base64.b64encode(b"KEY").decode()


@pytest.mark.plan
def test_push_mode_declares_no_kubernetes_object_twice(push_plan):
    keys = kubernetes_object_keys(push_plan)
    assert len(keys) > 50
    assert sorted(k for k in set(keys) if keys.count(k) > 1) == []
