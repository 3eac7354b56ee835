"""Each rule: the compliant stack passes, and one mutation per violation path is caught (Checkov/Kyverno style)."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from components.catalog.charts import CHARTS
from components.k8s.topology import gpu_tolerations
from platform_catalog.names import SERVING_NAMESPACE as SERVING
from platform_catalog.names import annotation
from policies.framework import CONFIG, LEVELS, Evaluation, PackSettings, evaluate_stack
from policies.model import UNKNOWN, Resource, Stack
from policies.pods import workload
from policies.rules import ALL_RULES, CATEGORIES
from tests.harness import PackBaseline
from tests.policy_fixtures import CONFIG as FIXTURE_CONFIG
from tests.policy_fixtures import GATEWAY_NS, VLLM_IMAGE, added, compliant, find

SETTINGS = PackSettings().merged(FIXTURE_CONFIG, ALL_RULES)
RULE_NAMES = {r.name for r in ALL_RULES}


def run(resources: list[Resource], settings: PackSettings = SETTINGS) -> Evaluation:
    return evaluate_stack(ALL_RULES, resources, settings)


def set_in(obj: Any, path: tuple, value: Any) -> None:
    for key in path[:-1]:
        obj = obj.setdefault(key, {}) if isinstance(obj, dict) else obj[key]
    obj[path[-1]] = value


def drop(obj: Any, path: tuple) -> None:
    for key in path[:-1]:
        obj = obj[key]
    del obj[path[-1]]


def remove(rs: list[Resource], suffix: str, name: str) -> None:
    rs.remove(find(rs, suffix, name))


def p(rs: list[Resource], suffix: str, name: str) -> dict:
    return find(rs, suffix, name).props


# Shortcuts to the fixture's resources.
def eks(rs):
    return p(rs, "eks/cluster:Cluster", "eks")


EFA = "vpc.amazonaws.com/efa"


def pd(rs):
    return p(rs, "LLMInferenceService", "llama-70b-pd")


def pd_main(pod: dict) -> dict:
    return pod["containers"][0]


def _handoff(rs, *, bytes_per_prompt=None, gbps=None, ttft=None, prefill_gpu=None):
    notes = pd(rs)["metadata"]["annotations"]
    for key, value in (
        ("kv-transfer-bytes-per-prompt", bytes_per_prompt),
        ("kv-transfer-gbps", gbps),
        ("ttft-objective-seconds", ttft),
        ("prefill-gpu-product", prefill_gpu),
    ):
        if value is not None:
            notes[f"inference-platform.io/{key}"] = value
    return rs


def _kv_fp8(rs):
    spec = pd(rs)["spec"]
    for pod in (spec["template"], spec["prefill"]["template"]):
        pd_main(pod)["args"].append("--kv-cache-dtype=fp8")
    return rs


def gke(rs):
    return p(rs, "container/cluster:Cluster", "gke")


def template(rs):
    return p(rs, ":LaunchTemplate", "h100")


def node_group(rs):
    return p(rs, ":NodeGroup", "h100")


def _node_config_edit(rs, old: str, new: str) -> None:
    """Rewrite the h100 launch template's NodeConfig text (its base64 MIME user data)."""
    text = base64.b64decode(template(rs)["userData"]).decode()
    assert old in text
    template(rs)["userData"] = base64.b64encode(text.replace(old, new).encode()).decode()


def pool(rs, name="h200"):
    return p(rs, ":NodePool", name)


def isvc(rs):
    return p(rs, ":InferenceService", "llama-70b")


def model(rs):
    return isvc(rs)["spec"]["predictor"]["model"]


def runtime_container(rs):
    return p(rs, ":ClusterServingRuntime", "vllm-runtime")["spec"]["containers"][0]


def redis_pod(rs):
    return p(rs, ":Deployment", "redis")["spec"]["template"]["spec"]


def redis(rs):
    return redis_pod(rs)["containers"][0]


def _gpu_node_redis(rs):
    """The redis pod, tolerating the GPU taint (so it may land on a GPU node), with one init container set right."""
    pod = redis_pod(rs)
    pod["tolerations"] = gpu_tolerations()
    redis(rs).setdefault("env", []).append({"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"})
    pod["initContainers"] = [{"name": "ok", "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}]}]
    return pod


def sizing(rs, key, value):
    annotations = isvc(rs)["metadata"]["annotations"]
    if value is None:
        del annotations[annotation(key)]
    else:
        annotations[annotation(key)] = value


def _synchro_pod(rs):
    return p(rs, ":Deployment", "clusterpedia-clustersynchro-manager")["spec"]["template"]["spec"]


def _synchro_container(rs):
    return _synchro_pod(rs)["containers"][0]


def _storage_from_configmap(rs):
    (volume,) = [v for v in _synchro_pod(rs)["volumes"] if v["name"] == "storage"]
    volume.pop("secret")
    volume["configMap"] = {"name": "clusterpedia-internalstorage"}


def statement(rs, suffix, name, key="policy"):
    return json.loads(p(rs, suffix, name)[key])


def replace_json(rs, suffix, name, document, key="policy"):
    p(rs, suffix, name)[key] = json.dumps(document)


def _trust(rs, change: Callable[[dict], None]):
    doc = statement(rs, ":Role", "model-server", "assumeRolePolicy")
    change(doc["Statement"][0])
    replace_json(rs, ":Role", "model-server", doc, "assumeRolePolicy")


def _condition(s):
    return s["Condition"]["StringEquals"]


def _sub_key(s):
    return next(k for k in _condition(s) if k.endswith(":sub"))


def _mig_layout(rs, layout):
    cm = p(rs, ":ConfigMap", "custom-mig-config")
    cm["data"]["config.yaml"] = cm["data"]["config.yaml"].replace("3g.40gb: 1", f"{layout}: 1")


def _second_subnet(rs):
    group = find(rs, ":NodeGroup", "h100")
    other = find(rs, ":Subnet", "gpu-b")
    group.deps["subnetIds"].append(other.urn)


def _security_policy(rs, spec, name="route-auth"):
    like = find(rs, ":SecurityPolicy", "tenant-auth")
    added(
        rs,
        like,
        name,
        {
            "apiVersion": "gateway.envoyproxy.io/v1alpha1",
            "kind": "SecurityPolicy",
            "metadata": {"name": name, "namespace": like.namespace},
            "spec": spec,
        },
    )


ROUTE_REF = {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "llm"}


@dataclass(frozen=True)
class Case:
    rule: str
    path: str
    mutate: Callable[[list[Resource]], object]


CASES = [
    # --- AWS -------------------------------------------------------------------------------------------
    Case(
        "eks-endpoint-not-public",
        "public, no CIDRs",
        lambda rs: set_in(eks(rs), ("vpcConfig", "endpointPublicAccess"), True),
    ),
    Case(
        "eks-endpoint-not-public", "default is public", lambda rs: drop(eks(rs), ("vpcConfig", "endpointPublicAccess"))
    ),
    Case(
        "eks-endpoint-not-public",
        "world CIDR",
        lambda rs: (
            set_in(eks(rs), ("vpcConfig", "endpointPublicAccess"), True),
            set_in(eks(rs), ("vpcConfig", "publicAccessCidrs"), ["0.0.0.0/0"]),
        ),
    ),
    Case("eks-secrets-encrypted", "no encryption", lambda rs: drop(eks(rs), ("encryptionConfig",))),
    Case("eks-secrets-encrypted", "not secrets", lambda rs: set_in(eks(rs), ("encryptionConfig", "resources"), [])),
    Case("eks-secrets-encrypted", "no key", lambda rs: drop(eks(rs), ("encryptionConfig", "provider"))),
    Case("eks-control-plane-logging", "audit off", lambda rs: set_in(eks(rs), ("enabledClusterLogTypes",), ["api"])),
    Case(
        "ec2-imdsv2-hop-limit", "IMDSv1", lambda rs: set_in(template(rs), ("metadataOptions", "httpTokens"), "optional")
    ),
    Case(
        "ec2-imdsv2-hop-limit",
        "hop limit 2",
        lambda rs: set_in(template(rs), ("metadataOptions", "httpPutResponseHopLimit"), 2),
    ),
    Case(
        "ec2-imdsv2-hop-limit",
        "hop limit unset",
        lambda rs: drop(template(rs), ("metadataOptions", "httpPutResponseHopLimit")),
    ),
    Case("eks-node-image-pinned", "newest AMI", lambda rs: drop(node_group(rs), ("releaseVersion",))),
    Case("eks-node-image-pinned", "empty release", lambda rs: set_in(node_group(rs), ("releaseVersion",), "")),
    Case("eks-nodeadm-config", "unknown gate", lambda rs: _node_config_edit(rs, "FastImagePull: true", "Lazy: true")),
    Case(
        "eks-nodeadm-config",
        "gate in lower case",
        lambda rs: _node_config_edit(rs, "FastImagePull: true", "fastImagePull: true"),
    ),
    Case(
        "eks-nodeadm-config",
        "parallel pull onto EBS",
        lambda rs: _node_config_edit(rs, "  instance:\n    localStorage:\n      strategy: RAID0\n", ""),
    ),
    Case(
        "eks-nodeadm-config",
        "SOCI kept off the array",
        lambda rs: _node_config_edit(rs, "strategy: RAID0", "strategy: RAID0\n      disabledMounts: [SOCI]"),
    ),
    Case(
        "ec2-volumes-encrypted",
        "unencrypted",
        lambda rs: set_in(template(rs), ("blockDeviceMappings", 0, "ebs", "encrypted"), "false"),
    ),
    Case("ec2-volumes-encrypted", "AMI root volume", lambda rs: drop(template(rs), ("blockDeviceMappings",))),
    Case(
        "ec2-no-public-ip",
        "launch template",
        lambda rs: set_in(template(rs), ("networkInterfaces", 0, "associatePublicIpAddress"), "true"),
    ),
    Case("ec2-no-public-ip", "subnet", lambda rs: set_in(p(rs, ":Subnet", "gpu-a"), ("mapPublicIpOnLaunch",), True)),
    Case(
        "ec2-no-open-ssh",
        "security group port 22",
        lambda rs: p(rs, ":SecurityGroup", "efa")["ingress"].append(
            {"protocol": "tcp", "fromPort": 22, "toPort": 22, "cidrBlocks": ["0.0.0.0/0"]}
        ),
    ),
    Case(
        "ec2-no-open-ssh",
        "all traffic from the world",
        lambda rs: p(rs, ":SecurityGroup", "efa")["ingress"].append(
            {"protocol": "-1", "fromPort": 0, "toPort": 0, "ipv6CidrBlocks": ["::/0"]}
        ),
    ),
    Case(
        "ec2-no-open-ssh",
        "ingress rule",
        lambda rs: p(rs, ":SecurityGroupIngressRule", "https").update(cidrIpv4="0.0.0.0/0", fromPort=0, toPort=1024),
    ),
    Case(
        "ec2-no-open-ssh",
        "security group rule",
        lambda rs: added(
            rs,
            find(rs, ":SecurityGroupIngressRule", "https"),
            "ssh",
            {"type": "ingress", "protocol": "tcp", "fromPort": 22, "toPort": 22, "cidrBlocks": ["0.0.0.0/0"]},
            type="aws:ec2/securityGroupRule:SecurityGroupRule",
        ),
    ),
    Case(
        "ec2-no-open-ssh",
        "node group remote access",
        lambda rs: set_in(node_group(rs), ("remoteAccess",), {"ec2SshKey": "ops"}),
    ),
    Case(
        "iam-no-wildcards",
        "action *",
        lambda rs: replace_json(
            rs,
            ":Policy",
            "model-read",
            {"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "arn:aws:s3:::x"}]},
        ),
    ),
    Case(
        "iam-no-wildcards",
        "service:*",
        lambda rs: replace_json(
            rs,
            ":RolePolicy",
            "model-server-inline",
            {"Statement": [{"Effect": "Allow", "Action": ["s3:*"], "Resource": "arn:aws:s3:::x"}]},
        ),
    ),
    Case(
        "iam-no-wildcards",
        "write on every resource",
        lambda rs: replace_json(
            rs, ":Policy", "model-read", {"Statement": [{"Effect": "Allow", "Action": "s3:PutObject", "Resource": "*"}]}
        ),
    ),
    Case(
        "iam-no-wildcards",
        "administrator attached",
        lambda rs: set_in(
            p(rs, ":RolePolicyAttachment", "node-worker"), ("policyArn",), "arn:aws:iam::aws:policy/AdministratorAccess"
        ),
    ),
    Case(
        "iam-no-wildcards",
        "inline policy on the role",
        lambda rs: set_in(
            p(rs, ":Role", "node"),
            ("inlinePolicies",),
            [
                {
                    "name": "all",
                    "policy": json.dumps({"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}),
                }
            ],
        ),
    ),
    Case(
        "irsa-trust-pinned",
        "StringLike subject",
        lambda rs: _trust(rs, lambda s: s["Condition"].update(StringLike={_sub_key(s): "system:serviceaccount:*"})),
    ),
    Case("irsa-trust-pinned", "no subject", lambda rs: _trust(rs, lambda s: _condition(s).pop(_sub_key(s)))),
    Case(
        "irsa-trust-pinned",
        "wildcard subject",
        lambda rs: _trust(rs, lambda s: _condition(s).update({_sub_key(s): "system:serviceaccount:inference:*"})),
    ),
    Case(
        "irsa-trust-pinned",
        "no audience",
        lambda rs: _trust(rs, lambda s: [_condition(s).pop(k) for k in list(_condition(s)) if k.endswith(":aud")]),
    ),
    Case(
        "kms-key-rotation",
        "AWS rotation off",
        lambda rs: set_in(p(rs, ":Key", "models-key"), ("enableKeyRotation",), False),
    ),
    Case("kms-key-rotation", "GCP no rotation", lambda rs: drop(p(rs, ":CryptoKey", "models"), ("rotationPeriod",))),
    Case(
        "kms-key-rotation",
        "GCP yearly",
        lambda rs: set_in(p(rs, ":CryptoKey", "models"), ("rotationPeriod",), "31536000s"),
    ),
    # --- storage -----------------------------------------------------------------------------------------
    Case("s3-public-access-blocked", "no block", lambda rs: remove(rs, ":BucketPublicAccessBlock", "models")),
    Case(
        "s3-public-access-blocked",
        "policy not blocked",
        lambda rs: set_in(p(rs, ":BucketPublicAccessBlock", "models"), ("blockPublicPolicy",), False),
    ),
    Case(
        "s3-encrypted-with-kms",
        "no configuration",
        lambda rs: remove(rs, ":BucketServerSideEncryptionConfiguration", "models"),
    ),
    Case(
        "s3-encrypted-with-kms",
        "AES256",
        lambda rs: set_in(
            p(rs, ":BucketServerSideEncryptionConfiguration", "models"),
            ("rules", 0, "applyServerSideEncryptionByDefault"),
            {"sseAlgorithm": "AES256"},
        ),
    ),
    Case(
        "s3-encrypted-with-kms",
        "AWS-managed key",
        lambda rs: drop(
            p(rs, ":BucketServerSideEncryptionConfiguration", "models"),
            ("rules", 0, "applyServerSideEncryptionByDefault", "kmsMasterKeyId"),
        ),
    ),
    Case("s3-tls-only", "no policy", lambda rs: remove(rs, ":BucketPolicy", "models")),
    Case(
        "s3-tls-only",
        "no deny",
        lambda rs: replace_json(
            rs,
            ":BucketPolicy",
            "models",
            {
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"AWS": "arn:aws:iam::1:root"},
                        "Action": "s3:GetObject",
                        "Resource": "*",
                    }
                ]
            },
        ),
    ),
    Case("s3-versioning", "not versioned", lambda rs: remove(rs, ":BucketVersioning", "models")),
    Case(
        "s3-versioning",
        "suspended",
        lambda rs: set_in(p(rs, ":BucketVersioning", "models"), ("versioningConfiguration", "status"), "Suspended"),
    ),
    Case("s3-acls-disabled", "no ownership controls", lambda rs: remove(rs, ":BucketOwnershipControls", "models")),
    Case(
        "s3-acls-disabled",
        "object writer",
        lambda rs: set_in(p(rs, ":BucketOwnershipControls", "models"), ("rule", "objectOwnership"), "ObjectWriter"),
    ),
    Case(
        "s3-no-public-grants", "public-read ACL", lambda rs: set_in(p(rs, ":Bucket", "models"), ("acl",), "public-read")
    ),
    Case(
        "s3-no-public-grants",
        "AllUsers grant",
        lambda rs: added(
            rs,
            find(rs, ":BucketVersioning", "models"),
            "models-acl",
            {
                "accessControlPolicy": {
                    "grants": [
                        {
                            "grantee": {"type": "Group", "uri": "http://acs.amazonaws.com/groups/global/AllUsers"},
                            "permission": "READ",
                        }
                    ],
                    "owner": {"id": "x"},
                }
            },
            type="aws:s3/bucketAcl:BucketAcl",
        ),
    ),
    Case(
        "s3-no-public-grants",
        "Principal * policy",
        lambda rs: replace_json(
            rs,
            ":BucketPolicy",
            "models",
            {
                "Statement": [
                    *statement(rs, ":BucketPolicy", "models")["Statement"],
                    {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/*"},
                ]
            },
        ),
    ),
    Case(
        "gcs-public-access-prevention",
        "inherited",
        lambda rs: set_in(p(rs, "storage/bucket:Bucket", "models-gcs"), ("publicAccessPrevention",), "inherited"),
    ),
    Case(
        "gcs-uniform-access",
        "object ACLs",
        lambda rs: set_in(p(rs, "storage/bucket:Bucket", "models-gcs"), ("uniformBucketLevelAccess",), False),
    ),
    Case(
        "gcs-no-public-members",
        "allUsers member",
        lambda rs: set_in(p(rs, ":BucketIAMMember", "models-reader"), ("member",), "allUsers"),
    ),
    Case(
        "gcs-no-public-members",
        "binding",
        lambda rs: added(
            rs,
            find(rs, ":BucketIAMMember", "models-reader"),
            "models-binding",
            {"bucket": "fx-models", "role": "roles/storage.objectViewer", "members": ["allAuthenticatedUsers"]},
            type="gcp:storage/bucketIAMBinding:BucketIAMBinding",
        ),
    ),
    Case(
        "gcs-no-public-members",
        "ACL",
        lambda rs: added(
            rs,
            find(rs, ":BucketIAMMember", "models-reader"),
            "models-acl",
            {"bucket": "fx-models", "role": "READER", "entity": "allUsers"},
            type="gcp:storage/bucketAccessControl:BucketAccessControl",
        ),
    ),
    # --- GKE -------------------------------------------------------------------------------------------
    Case(
        "gke-private-nodes",
        "cluster",
        lambda rs: set_in(gke(rs), ("privateClusterConfig", "enablePrivateNodes"), False),
    ),
    Case(
        "gke-private-nodes",
        "pool opts out",
        lambda rs: set_in(pool(rs), ("networkConfig", "enablePrivateNodes"), False),
    ),
    Case(
        "gke-control-plane-not-public",
        "no authorized networks",
        lambda rs: (
            set_in(gke(rs), ("privateClusterConfig", "enablePrivateEndpoint"), False),
            drop(gke(rs), ("masterAuthorizedNetworksConfig",)),
        ),
    ),
    Case(
        "gke-control-plane-not-public",
        "world network",
        lambda rs: (
            set_in(gke(rs), ("privateClusterConfig", "enablePrivateEndpoint"), False),
            set_in(gke(rs), ("masterAuthorizedNetworksConfig", "cidrBlocks", 0, "cidrBlock"), "0.0.0.0/0"),
        ),
    ),
    Case(
        "gke-control-plane-not-public",
        "all Google Cloud IPs",
        lambda rs: (
            set_in(gke(rs), ("privateClusterConfig", "enablePrivateEndpoint"), False),
            set_in(gke(rs), ("masterAuthorizedNetworksConfig", "gcpPublicCidrsAccessEnabled"), True),
        ),
    ),
    Case("gke-workload-identity", "cluster", lambda rs: drop(gke(rs), ("workloadIdentityConfig",))),
    Case(
        "gke-workload-identity",
        "pool metadata",
        lambda rs: set_in(pool(rs), ("nodeConfig", "workloadMetadataConfig", "mode"), "GCE_METADATA"),
    ),
    Case("gke-shielded-nodes", "cluster", lambda rs: set_in(gke(rs), ("enableShieldedNodes",), False)),
    Case(
        "gke-shielded-nodes",
        "secure boot",
        lambda rs: set_in(pool(rs), ("nodeConfig", "shieldedInstanceConfig", "enableSecureBoot"), False),
    ),
    Case(
        "gke-shielded-nodes",
        "integrity monitoring",
        lambda rs: set_in(pool(rs), ("nodeConfig", "shieldedInstanceConfig", "enableIntegrityMonitoring"), False),
    ),
    Case(
        "gke-node-service-account",
        "default compute account",
        lambda rs: set_in(pool(rs), ("nodeConfig", "serviceAccount"), "123-compute@developer.gserviceaccount.com"),
    ),
    Case(
        "gke-node-service-account",
        "no account",
        lambda rs: drop(pool(rs, "a100-mig"), ("nodeConfig", "serviceAccount")),
    ),
    Case("node-auto-repair", "GKE", lambda rs: set_in(pool(rs), ("management", "autoRepair"), False)),
    Case("node-auto-repair", "EKS", lambda rs: drop(node_group(rs), ("nodeRepairConfig",))),
    # --- Kubernetes --------------------------------------------------------------------------------------
    Case("k8s-no-privileged", "privileged", lambda rs: set_in(redis(rs), ("securityContext", "privileged"), True)),
    Case(
        "k8s-no-privileged",
        "SYS_ADMIN",
        lambda rs: set_in(runtime_container(rs), ("securityContext", "capabilities", "add"), ["SYS_ADMIN"]),
    ),
    Case("k8s-no-host-namespaces", "hostNetwork", lambda rs: set_in(redis_pod(rs), ("hostNetwork",), True)),
    Case("k8s-no-host-namespaces", "hostPID", lambda rs: set_in(redis_pod(rs), ("hostPID",), True)),
    Case(
        "k8s-no-host-namespaces",
        "hostIPC on the runtime",
        lambda rs: set_in(p(rs, ":ClusterServingRuntime", "vllm-runtime"), ("spec", "hostIPC"), True),
    ),
    Case(
        "k8s-no-host-path",
        "hostPath",
        lambda rs: set_in(redis_pod(rs), ("volumes",), [{"name": "host", "hostPath": {"path": "/var/lib"}}]),
    ),
    Case(
        "k8s-no-privilege-escalation",
        "unset",
        lambda rs: drop(runtime_container(rs), ("securityContext", "allowPrivilegeEscalation")),
    ),
    Case(
        "k8s-no-privilege-escalation",
        "true",
        lambda rs: set_in(redis(rs), ("securityContext", "allowPrivilegeEscalation"), True),
    ),
    Case("k8s-run-as-non-root", "uid 0", lambda rs: set_in(redis(rs), ("securityContext", "runAsUser"), 0)),
    Case("k8s-run-as-non-root", "unset", lambda rs: drop(redis_pod(rs), ("securityContext",))),
    Case("k8s-resources-set", "no limits", lambda rs: drop(redis(rs), ("resources", "limits"))),
    Case(
        "k8s-resources-set",
        "no memory request in the model nor its runtime",  # KServe merges the requests map with the runtime's
        lambda rs: (
            drop(model(rs), ("resources", "requests", "memory")),
            drop(runtime_container(rs), ("resources", "requests", "memory")),
        ),
    ),
    Case(
        "k8s-resources-set", "GPU without limit", lambda rs: drop(model(rs), ("resources", "limits", "nvidia.com/gpu"))
    ),
    Case("k8s-images-pinned", "no tag", lambda rs: set_in(redis(rs), ("image",), "redis")),
    Case(
        "k8s-images-pinned", "latest", lambda rs: set_in(runtime_container(rs), ("image",), "vllm/vllm-openai:latest")
    ),
    Case(
        "k8s-images-pinned",
        "Helm values",
        lambda rs: set_in(p(rs, ":Release", "gpu-operator"), ("values", "driver", "tag"), "latest"),
    ),
    Case("helm-charts-pinned", "no version", lambda rs: drop(p(rs, ":Release", "gpu-operator"), ("version",))),
    Case("helm-charts-pinned", "range", lambda rs: set_in(p(rs, ":Release", "gpu-operator"), ("version",), "^26.0.0")),
    Case("k8s-probes", "no readiness", lambda rs: drop(redis(rs), ("readinessProbe",))),
    Case("k8s-probes", "no liveness", lambda rs: drop(runtime_container(rs), ("livenessProbe",))),
    Case(
        "k8s-probes",
        "identical",
        lambda rs: set_in(runtime_container(rs), ("livenessProbe",), runtime_container(rs)["readinessProbe"]),
    ),
    Case("k8s-pdb", "no budget", lambda rs: remove(rs, ":PodDisruptionBudget", "redis")),
    Case(
        "k8s-pdb",
        "selector misses the pods",
        lambda rs: set_in(
            p(rs, ":PodDisruptionBudget", "llama-70b"), ("spec", "selector", "matchLabels"), {"app": "llama"}
        ),
    ),
    Case(
        "k8s-privileged-namespaces",
        "privileged serving namespace",
        lambda rs: set_in(
            p(rs, ":Namespace", "ns-inference"),
            ("metadata", "labels", "pod-security.kubernetes.io/enforce"),
            "privileged",
        ),
    ),
    Case(
        "k8s-privileged-namespaces",
        "no level",
        lambda rs: drop(p(rs, ":Namespace", "ns-ai-gateway"), ("metadata", "labels")),
    ),
    # --- GPU pools ---------------------------------------------------------------------------------------
    Case("gpu-pool-taint-and-labels", "no taint", lambda rs: set_in(node_group(rs), ("taints",), [])),
    Case(
        "gpu-pool-taint-and-labels",
        "wrong effect",
        lambda rs: set_in(pool(rs), ("nodeConfig", "taints", 0, "effect"), "PREFER_NO_SCHEDULE"),
    ),
    Case(
        "gpu-pool-taint-and-labels",
        "missing label",
        lambda rs: drop(pool(rs), ("nodeConfig", "labels", "inference-platform.io/fabric")),
    ),
    Case(
        "gpu-pool-taint-and-labels",
        "wrong GPU label",
        lambda rs: set_in(node_group(rs), ("labels", "inference-platform.io/gpu-product"), "A100-80GB"),
    ),
    Case(
        "gpu-pool-taint-and-labels",
        "wrong placement group label",
        lambda rs: set_in(node_group(rs), ("labels", "inference-platform.io/placement-group"), "none"),
    ),
    Case(
        "gpu-mig-config-valid",
        "config of another GPU",
        lambda rs: set_in(node_group(rs), ("labels", "nvidia.com/mig.config"), "all-3g.71gb"),
    ),
    Case(
        "gpu-mig-config-valid",
        "GPU without MIG",
        lambda rs: set_in(node_group(rs), ("instanceTypes",), ["g6e.48xlarge"]),
    ),
    Case(
        "gpu-mig-config-valid",
        "GKE partition size",
        lambda rs: set_in(pool(rs), ("nodeConfig", "guestAccelerators", 0, "gpuPartitionSize"), "1g.10gb"),
    ),
    Case(
        "gpu-mig-config-valid",
        "custom config not defined",
        lambda rs: set_in(pool(rs, "a100-mig"), ("nodeConfig", "labels", "nvidia.com/mig.config"), "custom-other"),
    ),
    Case("gpu-mig-config-valid", "custom layout too big", lambda rs: _mig_layout(rs, "4g.40gb")),
    Case("gpu-mig-config-valid", "custom layout unknown profile", lambda rs: _mig_layout(rs, "3g.71gb")),
    Case(  # a config.yaml mig-parted cannot read defines nothing
        "gpu-mig-config-valid",
        "custom config in a config.yaml that does not parse",
        lambda rs: _mig_layout(rs, "3g.40gb: [1"),
    ),
    Case("gpu-fabric-placement", "no placement group", lambda rs: drop(template(rs), ("placement",))),
    Case(
        "gpu-fabric-placement",
        "spread strategy",
        lambda rs: set_in(p(rs, ":PlacementGroup", "h100"), ("strategy",), "spread"),
    ),
    Case("gpu-fabric-placement", "two zones", _second_subnet),
    Case("gpu-fabric-placement", "GKE not compact", lambda rs: drop(pool(rs), ("placementPolicy",))),
    Case("gpu-fabric-placement", "GKE two zones", lambda rs: pool(rs)["nodeLocations"].append("us-central1-c")),
    Case(
        "gpu-visible-devices-from-the-device-plugin",
        "model server sets all",
        lambda rs: model(rs).setdefault("env", []).append({"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}),
    ),
    Case(
        "gpu-visible-devices-from-the-device-plugin",
        "runtime sets a GPU index",
        lambda rs: runtime_container(rs).setdefault("env", []).append({"name": "NVIDIA_VISIBLE_DEVICES", "value": "0"}),
    ),
    Case(
        "gpu-visible-devices-from-the-device-plugin",
        "from a ConfigMap",
        lambda rs: (
            redis(rs)
            .setdefault("env", [])
            .append(
                {"name": "NVIDIA_VISIBLE_DEVICES", "valueFrom": {"configMapKeyRef": {"name": "gpus", "key": "all"}}}
            )
        ),
    ),
    Case(
        "gpu-visible-devices-from-the-device-plugin",
        "a sidecar on a GPU node requests no GPU and leaves the image's value",
        lambda rs: (
            isvc(rs)["spec"]["predictor"]
            .setdefault("containers", [])
            .append({"name": "log-shipper", "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"})
        ),
    ),
    Case(
        "gpu-visible-devices-from-the-device-plugin",
        "an init container on a GPU node requests no GPU",
        lambda rs: _gpu_node_redis(rs)["initContainers"].append({"name": "warm-up", "image": "busybox:1.36"}),
    ),
    Case(
        "gpu-visible-devices-from-the-device-plugin",
        "an init container on a GPU node says none (the driver is still set up)",
        lambda rs: _gpu_node_redis(rs)["initContainers"][0].update(
            env=[{"name": "NVIDIA_VISIBLE_DEVICES", "value": "none"}]
        ),
    ),
    Case(
        "gpu-visible-devices-from-the-device-plugin",
        "a sidecar on a GPU node asks for zero GPUs",
        lambda rs: _gpu_node_redis(rs)["initContainers"].append(
            {"name": "warm-up", "resources": {"limits": {"nvidia.com/gpu": "0"}}}
        ),
    ),
    Case(
        "gpu-visible-devices-from-the-device-plugin",
        "the decode pod's routing sidecar leaves its image's value",
        lambda rs: p(rs, ":LLMInferenceService", "llama-70b-pd")["spec"]["template"]["initContainers"][0].pop("env"),
    ),
    Case(
        "gpu-visible-devices-from-the-device-plugin",
        "Helm values outside the GPU stack tolerate the GPU taint",
        lambda rs: set_in(p(rs, ":Release", "volcano"), ("values", "scheduler", "tolerations"), gpu_tolerations()),
    ),
    # --- model servers -----------------------------------------------------------------------------------
    Case("llm-model-fits-gpu", "does not fit", lambda rs: sizing(rs, "weights-gib", "300")),
    Case("llm-model-fits-gpu", "memory above the GPU's", lambda rs: sizing(rs, "gpu-memory-gib", "100")),
    # The datasheet's 80 GB taken as GiB: an H100 80GB reports 81559 MiB, 79.65 GiB.
    Case("llm-model-fits-gpu", "datasheet GB as GiB", lambda rs: sizing(rs, "gpu-memory-gib", "80")),
    Case(
        "llm-model-fits-gpu", "engine TP differs", lambda rs: set_in(model(rs), ("args", 0), "--tensor-parallel-size=2")
    ),
    Case(
        "llm-model-fits-gpu",
        "fewer GPUs than TP",
        lambda rs: model(rs)["resources"]["limits"].update({"nvidia.com/gpu": "2"}),
    ),
    Case("llm-model-fits-gpu", "no GPUs", lambda rs: drop(model(rs), ("resources",))),
    Case("llm-model-fits-gpu", "annotation not a number", lambda rs: sizing(rs, "kv-cache-gib", "lots")),
    Case(
        "llm-startup-probe-budget", "too short", lambda rs: set_in(model(rs), ("startupProbe", "failureThreshold"), 10)
    ),
    Case(
        "llm-startup-probe-budget",
        "no startup probe",
        lambda rs: (drop(model(rs), ("startupProbe",)), drop(runtime_container(rs), ("startupProbe",))),
    ),
    Case(
        "llm-startup-probe-budget",
        "runtime default too short",
        lambda rs: drop(model(rs), ("startupProbe",)),
    ),
    Case(
        "llm-shm-for-tensor-parallel",
        "no /dev/shm",
        lambda rs: (drop(runtime_container(rs), ("volumeMounts",)),),
    ),
    Case(
        "llm-shm-for-tensor-parallel",
        "disk-backed",
        lambda rs: set_in(p(rs, ":ClusterServingRuntime", "vllm-runtime"), ("spec", "volumes", 0, "emptyDir"), {}),
    ),
    Case("llm-fp8-kv-cache-supported", "declared without FP8", lambda rs: sizing(rs, "fp8-capable", "false")),
    Case(
        "llm-fp8-kv-cache-supported",
        "catalog GPU without FP8",
        lambda rs: (sizing(rs, "fp8-capable", None), sizing(rs, "gpu-product", "A100-80GB")),
    ),
    # --- gateway -----------------------------------------------------------------------------------------
    Case("gateway-route-authenticated", "no SecurityPolicy", lambda rs: remove(rs, ":SecurityPolicy", "tenant-auth")),
    Case(
        "gateway-route-authenticated",
        "no authentication",
        lambda rs: (
            drop(p(rs, ":SecurityPolicy", "tenant-auth"), ("spec", "apiKeyAuth")),
            set_in(p(rs, ":SecurityPolicy", "tenant-auth"), ("spec", "cors"), {"allowOrigins": ["*"]}),
        ),
    ),
    Case(
        "gateway-route-authenticated",
        "route policy overrides",
        lambda rs: _security_policy(rs, {"targetRefs": [ROUTE_REF], "cors": {"allowOrigins": ["*"]}}),
    ),
    Case(
        "gateway-route-authenticated",
        "policy on another gateway",
        lambda rs: set_in(p(rs, ":SecurityPolicy", "tenant-auth"), ("spec", "targetRefs", 0, "name"), "other"),
    ),
    Case(
        "gateway-route-token-budget",
        "no costs",
        lambda rs: drop(p(rs, ":AIGatewayRoute", "llm-route"), ("spec", "llmRequestCosts")),
    ),
    Case("gateway-route-token-budget", "no budget", lambda rs: remove(rs, ":BackendTrafficPolicy", "token-budgets")),
    Case(
        "gateway-route-token-budget",
        "request rate only",
        lambda rs: drop(
            p(rs, ":BackendTrafficPolicy", "token-budgets")["spec"]["rateLimit"]["global"]["rules"][0]["cost"],
            ("response",),
        ),
    ),
    Case(
        "gateway-route-token-budget",
        "key never recorded",
        lambda rs: set_in(
            p(rs, ":BackendTrafficPolicy", "token-budgets")["spec"]["rateLimit"]["global"]["rules"][0],
            ("cost", "response", "metadata", "key"),
            "llm_output_token",
        ),
    ),
    # --- production --------------------------------------------------------------------------------------
    Case(
        "stateful-resources-protected",
        "bucket unprotected",
        lambda rs: setattr(find(rs, ":Bucket", "models"), "protect", False),
    ),
    Case(
        "stateful-resources-protected",
        "key not retained",
        lambda rs: setattr(find(rs, ":Key", "models-key"), "retain_on_delete", False),
    ),
    Case(
        "stateful-resources-protected",
        "GKE unprotected",
        lambda rs: setattr(find(rs, "container/cluster:Cluster", "gke"), "protect", False),
    ),
    Case(
        "no-scale-to-zero-in-production",
        "minReplicas 0",
        lambda rs: set_in(isvc(rs), ("spec", "predictor", "minReplicas"), 0),
    ),
    Case(
        "no-scale-to-zero-in-production",
        "Knative min-scale",
        lambda rs: set_in(isvc(rs), ("metadata", "annotations", "autoscaling.knative.dev/min-scale"), "0"),
    ),
    Case(
        "no-scale-to-zero-in-production",
        "KEDA default",
        lambda rs: drop(p(rs, ":ScaledObject", "llama-70b-scaler"), ("spec", "minReplicaCount")),
    ),
    Case(
        "llm-pd-kv-fabric",
        "tcp hand-off",
        lambda rs: set_in(pd(rs), ("metadata", "annotations", "inference-platform.io/kv-transfer"), "tcp"),
    ),
    Case(
        "llm-pd-efa-wired",
        "prefill without efa",
        lambda rs: drop(pd_main(pd(rs)["spec"]["prefill"]["template"]), ("resources", "requests", EFA)),
    ),
    Case(
        "llm-pd-efa-wired",
        "decode on ucx",
        lambda rs: set_in(
            pd_main(pd(rs)["spec"]["template"]),
            ("args",),
            ['--kv-transfer-config={"kv_connector": "NixlConnector", "kv_role": "kv_consumer"}'],
        ),
    ),
    Case(
        "llm-pd-kv-handoff-within-budget",
        "tcp between two pools",  # 2 x 5 Gbps: 536.9 ms of a 250 ms budget
        lambda rs: set_in(pd(rs), ("metadata", "annotations", "inference-platform.io/kv-transfer-gbps"), "10"),
    ),
    Case(
        "llm-pd-kv-handoff-within-budget",
        "over by a little",  # 1908 FP8 tokens of the 70B at 10 Gbps: 250.09 ms
        lambda rs: _handoff(rs, bytes_per_prompt="312606720", gbps="10"),
    ),
    Case(
        "llm-pd-kv-handoff-within-budget",
        "tighter objective",  # 3.4 ms against a 30 ms objective's 3 ms
        lambda rs: _handoff(rs, ttft="0.03"),
    ),
    Case(
        "llm-pd-one-attention-backend",
        "b200 prefill",
        lambda rs: _handoff(rs, prefill_gpu="B200"),
    ),
    Case(
        "llm-pd-one-attention-backend",
        "fp8 cache on an l40s prefill",
        lambda rs: _kv_fp8(_handoff(rs, prefill_gpu="L40S")),
    ),
    Case(
        "llm-pd-one-attention-backend",
        "backend pinned on one side",
        lambda rs: pd_main(pd(rs)["spec"]["prefill"]["template"])["args"].append("--attention-backend=FLASHINFER"),
    ),
    # --- GKE admission of system-*-critical pods ---------------------------------------------------------
    Case("gke-critical-priority-quota", "no quota", lambda rs: remove(rs, ":ResourceQuota", "critical-pods")),
    Case(
        "gke-critical-priority-quota",
        "quota scoped to the other class",
        lambda rs: set_in(_critical_scope(rs), ("values",), ["system-node-critical"]),
    ),
    Case("gke-critical-priority-quota", "NotIn scope", lambda rs: set_in(_critical_scope(rs), ("operator",), "NotIn")),
    Case(
        "gke-critical-priority-quota",
        "quota in another namespace",
        lambda rs: set_in(p(rs, ":ResourceQuota", "critical-pods"), ("metadata", "namespace"), "default"),
    ),
    Case(
        "gke-critical-priority-quota",
        "quota without hard limits",
        lambda rs: drop(p(rs, ":ResourceQuota", "critical-pods"), ("spec", "hard")),
    ),
    Case("gke-critical-priority-quota", "critical workload of ours", lambda rs: _critical_deployment(rs, "inference")),
    Case(
        "gke-critical-priority-quota",
        "chart default left critical",
        lambda rs: _gke_gpu_operator(rs, {"operator": {"priorityClassName": ""}}),
    ),
    Case(
        "gke-critical-controller-pods-quota",
        "no quota where Fluid creates FUSE pods",
        lambda rs: remove(rs, ":ResourceQuota", "cache-critical-pods"),
    ),
    Case(
        "gke-critical-controller-pods-quota",
        "quota scoped to the other class",
        lambda rs: set_in(
            p(rs, ":ResourceQuota", "cache-critical-pods")["spec"]["scopeSelector"]["matchExpressions"][0],
            ("values",),
            ["system-cluster-critical"],
        ),
    ),
    Case(
        "gke-critical-controller-pods-quota",
        "runtime in a namespace without a quota",
        lambda rs: set_in(p(rs, ":AlluxioRuntime", "alluxio-runtime"), ("metadata", "namespace"), "default"),
    ),
]


def _critical_scope(rs) -> dict:
    return p(rs, ":ResourceQuota", "critical-pods")["spec"]["scopeSelector"]["matchExpressions"][0]


def _critical_deployment(rs, namespace: str) -> None:
    """Redis's Deployment, on the GKE cluster with system-cluster-critical pods."""
    props = copy.deepcopy(p(rs, ":Deployment", "redis"))
    props["metadata"]["namespace"] = namespace
    props["spec"]["template"]["spec"]["priorityClassName"] = "system-cluster-critical"
    added(rs, find(rs, ":Release", "volcano"), "critical-redis", props, type="kubernetes:apps/v1:Deployment")


def _gke_gpu_operator(rs, values: dict) -> None:
    """The GPU Operator's release, on the GKE cluster (no quota in gpu-operator) with these values."""
    props = {**copy.deepcopy(p(rs, ":Release", "gpu-operator")), "values": values}
    added(rs, find(rs, ":Release", "volcano"), "gke-gpu-operator", props)


# --- scanner depth: IAM, RBAC, network exposure, secrets (near-variants included) ---------------------


def _policy(rs, *statements):
    replace_json(rs, ":Policy", "model-read", {"Version": "2012-10-17", "Statement": list(statements)})


def _allow(action, resource, **extra):
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


def _trust_doc(rs, document):
    replace_json(rs, ":Role", "model-server", document, "assumeRolePolicy")


def _key_policy(rs, statement):
    p(rs, ":Key", "models-key")["policy"] = json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def _gcp_member(rs, member=None, role=None, name="models-reader"):
    props = p(rs, ":BucketIAMMember", name)
    if member is not None:
        props["member"] = member
    if role is not None:
        props["role"] = role


def _wi_member(rs, member):
    p(rs, "serviceaccount/iAMMember:IAMMember", "model-server-wi")["member"] = member


def _ingress(rs, cidrs, ipv6=()):
    p(rs, ":SecurityGroup", "efa")["ingress"].append(
        {"protocol": "tcp", "fromPort": 443, "toPort": 443, "cidrBlocks": list(cidrs), "ipv6CidrBlocks": list(ipv6)}
    )


def _role_rules(rs, rules, kind=":ClusterRole", name="auth-reviewer"):
    p(rs, kind, name)["rules"] = rules


def _bind(rs, role_name, kind=":ClusterRoleBinding", name="auth-reviewer"):
    p(rs, kind, name)["roleRef"]["name"] = role_name


def _env(rs, name, value):
    redis(rs).setdefault("env", []).append({"name": name, "value": value})


def _values(rs, values):
    p(rs, ":Release", "gpu-operator")["values"].update(values)


def _lb(rs, **spec):
    p(rs, "core/v1:Service", "api-external")["spec"].update(spec)


PUBLIC_SPLIT_V4 = ["0.0.0.0/1", "128.0.0.0/1"]
# Every public IPv4 block, listed without the private ones: still the whole internet.
PUBLIC_WITHOUT_PRIVATE = [
    "0.0.0.0/5",
    "8.0.0.0/7",
    "11.0.0.0/8",
    "12.0.0.0/6",
    "16.0.0.0/4",
    "32.0.0.0/3",
    "64.0.0.0/2",
    "128.0.0.0/3",
    "160.0.0.0/5",
    "168.0.0.0/6",
    "172.0.0.0/12",
    "172.32.0.0/11",
    "172.64.0.0/10",
    "172.128.0.0/9",
    "173.0.0.0/8",
    "174.0.0.0/7",
    "176.0.0.0/4",
    "192.0.0.0/9",
    "192.128.0.0/11",
    "192.160.0.0/13",
    "192.169.0.0/16",
    "192.170.0.0/15",
    "192.172.0.0/14",
    "192.176.0.0/12",
    "192.192.0.0/10",
    "193.0.0.0/8",
    "194.0.0.0/7",
    "196.0.0.0/6",
    "200.0.0.0/5",
    "208.0.0.0/4",
]
FAKE_AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"  # split so repository scanners do not flag the test itself
FAKE_GITHUB_TOKEN = "ghp_" + "x7Kq2mZ9vR4tY8wP1sN6bV3cL5hJ0dF2gA9e"
FAKE_PRIVATE_KEY = "-----BEGIN RSA PRIVATE" + " KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"

CASES += [
    # iam-policy-valid (parliament)
    Case("iam-policy-valid", "unknown action", lambda rs: _policy(rs, _allow("s3:GetObjekt", "arn:aws:s3:::fx/*"))),
    Case("iam-policy-valid", "unknown prefix", lambda rs: _policy(rs, _allow("s4:GetObject", "arn:aws:s3:::fx/*"))),
    Case(
        "iam-policy-valid",
        "resource of another type",
        lambda rs: _policy(rs, _allow("s3:GetObject", "arn:aws:kms:us-east-1:123456789012:key/k")),
    ),
    Case(
        "iam-policy-valid",
        "key policy without Resource",
        lambda rs: _key_policy(
            rs, {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:root"}, "Action": "kms:*"}
        ),
    ),
    # iam-no-risky-permissions (cloudsplaining)
    Case("iam-no-risky-permissions", "privilege escalation", lambda rs: _policy(rs, _allow("iam:*", "*"))),
    Case("iam-no-risky-permissions", "exfiltration", lambda rs: _policy(rs, _allow("s3:getobject", "*"))),
    Case(
        "iam-no-risky-permissions",
        "resource exposure, wildcarded",
        lambda rs: _policy(rs, _allow("s3:PutBucketPol*", "*")),
    ),
    Case(
        "iam-no-risky-permissions",
        "inline policy of the role",
        lambda rs: replace_json(
            rs, ":RolePolicy", "model-server-inline", {"Version": "2012-10-17", "Statement": [_allow("ec2:*", "*")]}
        ),
    ),
    # iam-trust-restricted
    Case(
        "iam-trust-restricted",
        "Principal *",
        lambda rs: _trust_doc(rs, {"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "sts:AssumeRole"}]}),
    ),
    Case(
        "iam-trust-restricted",
        "AWS every account",
        lambda rs: _trust_doc(
            rs,
            {"Statement": [{"Effect": "allow", "Principal": {"aws": ["arn:aws:iam::*:root"]}, "Action": "sts:*"}]},
        ),
    ),
    Case(
        "iam-trust-restricted",
        "federated without subject",
        lambda rs: _trust_doc(
            rs,
            {
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Federated": "accounts.google.com"},
                        "Action": "sts:AssumeRoleWithWebIdentity",
                    }
                ]
            },
        ),
    ),
    Case(
        "iam-trust-restricted",
        "federated, lower-case wildcard subject",
        lambda rs: _trust_doc(
            rs,
            {
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Federated": "arn:aws:iam::123456789012:oidc-provider/token.actions.example"},
                        "Action": "sts:assumerolewithwebidentity",
                        "Condition": {"stringlike": {"token.actions.example:sub": "repo:*"}},
                    }
                ]
            },
        ),
    ),
    # iam-passrole-scoped
    Case("iam-passrole-scoped", "PassRole on *", lambda rs: _policy(rs, _allow("iam:PassRole", "*"))),
    Case(
        "iam-passrole-scoped",
        "lower case on role/*",
        lambda rs: _policy(rs, _allow("iam:passrole", "arn:aws:iam::123456789012:role/*")),
    ),
    Case(
        "iam-passrole-scoped",
        "wildcard action",
        lambda rs: _policy(rs, _allow("iam:Pass*", "arn:aws:iam::*:role/model-*")),
    ),
    Case(
        "iam-passrole-scoped",
        "NotResource",
        lambda rs: _policy(rs, {"Effect": "Allow", "Action": "iam:PassRole", "NotResource": "arn:aws:iam::1:role/x"}),
    ),
    # iam-no-admin-managed-policies
    Case(
        "iam-no-admin-managed-policies",
        "IAMFullAccess",
        lambda rs: set_in(
            p(rs, ":RolePolicyAttachment", "node-worker"), ("policyArn",), "arn:aws:iam::aws:policy/IAMFullAccess"
        ),
    ),
    Case(
        "iam-no-admin-managed-policies",
        "other partition, lower case",
        lambda rs: set_in(
            p(rs, ":RolePolicyAttachment", "node-worker"),
            ("policyArn",),
            "arn:aws-us-gov:iam::aws:policy/administratoraccess",
        ),
    ),
    Case(
        "iam-no-admin-managed-policies",
        "managedPolicyArns on the role",
        lambda rs: set_in(
            p(rs, ":Role", "node"), ("managedPolicyArns",), ["arn:aws:iam::aws:policy/job-function/PowerUserAccess"]
        ),
    ),
    # kms-key-policy-not-public
    Case(
        "kms-key-policy-not-public",
        "Principal AWS *",
        lambda rs: _key_policy(
            rs, {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "kms:Decrypt", "Resource": "*"}
        ),
    ),
    Case(
        "s3-no-public-grants",
        "NotPrincipal",
        lambda rs: set_in(
            p(rs, ":BucketPolicy", "models"),
            ("policy",),
            json.dumps(
                {"Statement": [{"Effect": "Allow", "NotPrincipal": {"AWS": "arn:aws:iam::1:root"}, "Action": "s3:*"}]}
            ),
        ),
    ),
    Case(
        "kms-key-policy-not-public",
        "condition that does not pin the caller",
        lambda rs: _key_policy(
            rs,
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": "kms:Decrypt",
                "Resource": "*",
                "Condition": {"Bool": {"aws:SecureTransport": "true"}},
            },
        ),
    ),
    Case(
        "s3-no-public-grants",
        "list principal",
        lambda rs: set_in(
            p(rs, ":BucketPolicy", "models"),
            ("policy",),
            json.dumps(
                {
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"AWS": ["*"]},
                            "Action": "s3:GetObject",
                            "Resource": "arn:aws:s3:::fx/*",
                        }
                    ]
                }
            ),
        ),
    ),
    # GCP IAM
    Case("gcp-no-primitive-roles", "editor", lambda rs: _gcp_member(rs, role="roles/editor")),
    Case("gcp-no-primitive-roles", "owner, odd case", lambda rs: _gcp_member(rs, role="Roles/Owner")),
    Case(
        "gcp-no-primitive-roles",
        "viewer on the workload identity account",
        lambda rs: set_in(p(rs, "serviceaccount/iAMMember:IAMMember", "model-server-wi"), ("role",), "roles/viewer"),
    ),
    Case("gcp-iam-not-public", "allUsers on a bucket", lambda rs: _gcp_member(rs, member="allUsers")),
    Case("gcp-iam-not-public", "lower case", lambda rs: _gcp_member(rs, member="allauthenticatedusers")),
    Case(
        "gcp-iam-not-public",
        "on a service account",
        lambda rs: _wi_member(rs, "allAuthenticatedUsers"),
    ),
    Case(
        "gcp-workload-identity-one-ksa",
        "whole namespace",
        lambda rs: _wi_member(
            rs,
            "principalSet://iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/"
            "p.svc.id.goog/namespace/inference",
        ),
    ),
    Case(
        "gcp-workload-identity-one-ksa",
        "wildcard KSA",
        lambda rs: _wi_member(rs, "serviceAccount:p.svc.id.goog[inference/*]"),
    ),
    # Kubernetes RBAC
    Case("rbac-no-admin-for-workloads", "cluster-admin", lambda rs: _bind(rs, "cluster-admin")),
    Case(
        "rbac-no-admin-for-workloads",
        "edit through a RoleBinding",
        lambda rs: _bind(rs, "edit", kind=":RoleBinding", name="epp"),
    ),
    Case(
        "rbac-no-admin-for-workloads",
        "wildcard role",
        lambda rs: _role_rules(rs, [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]),
    ),
    Case(
        "rbac-no-wildcards",
        "verbs *",
        lambda rs: _role_rules(rs, [{"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]}], ":Role", "epp"),
    ),
    Case(
        "rbac-no-wildcards",
        "resources *",
        lambda rs: _role_rules(rs, [{"apiGroups": ["apps"], "resources": ["*"], "verbs": ["get"]}]),
    ),
    Case(
        "rbac-no-cluster-secret-read",
        "list secrets cluster-wide",
        lambda rs: _role_rules(rs, [{"apiGroups": [""], "resources": ["Secrets"], "verbs": ["list"]}]),
    ),
    Case("rbac-no-cluster-secret-read", "admin bound cluster-wide", lambda rs: _bind(rs, "admin")),
    # network-no-internet-ingress (address-space coverage)
    Case("network-no-internet-ingress", "0.0.0.0/0 on 443", lambda rs: _ingress(rs, ["0.0.0.0/0"])),
    Case("network-no-internet-ingress", "split /1 halves", lambda rs: _ingress(rs, PUBLIC_SPLIT_V4)),
    Case("network-no-internet-ingress", "host bits set", lambda rs: _ingress(rs, ["10.1.2.3/0"])),
    Case("network-no-internet-ingress", "every public block", lambda rs: _ingress(rs, PUBLIC_WITHOUT_PRIVATE)),
    Case("network-no-internet-ingress", "IPv6 global unicast", lambda rs: _ingress(rs, [], ["2000::/3"])),
    Case(
        "network-no-internet-ingress",
        "union across rules",
        lambda rs: (
            p(rs, ":SecurityGroupIngressRule", "https").update(cidrIpv4="0.0.0.0/1"),
            _ingress(rs, ["128.0.0.0/1"]),
        ),
    ),
    Case(
        "network-no-internet-ingress",
        "GCP firewall",
        lambda rs: set_in(p(rs, ":Firewall", "gvnic-internal"), ("sourceRanges",), ["0.0.0.0/0"]),
    ),
    # k8s-service-not-exposed
    Case("k8s-service-not-exposed", "no source ranges", lambda rs: _lb(rs, loadBalancerSourceRanges=[])),
    Case(
        "k8s-service-not-exposed",
        "source ranges cover the internet",
        lambda rs: _lb(rs, loadBalancerSourceRanges=PUBLIC_SPLIT_V4),
    ),
    Case("k8s-service-not-exposed", "NodePort", lambda rs: _lb(rs, type="NodePort")),
    Case(
        "k8s-service-not-exposed",
        "lower-case type",
        lambda rs: _lb(rs, type="loadbalancer", loadBalancerSourceRanges=["0.0.0.0/0"]),
    ),
    # k8s-no-host-port, gateway-no-plain-http, k8s-netpol-not-allow-all
    Case(
        "k8s-no-host-port",
        "hostPort",
        lambda rs: set_in(redis(rs), ("ports",), [{"containerPort": 6379, "hostPort": 6379}]),
    ),
    Case(
        "gateway-no-plain-http",
        "HTTP listener",
        lambda rs: p(rs, ":Gateway", "ai-gateway")["spec"]["listeners"].append(
            {"name": "http", "protocol": "HTTP", "port": 80}
        ),
    ),
    Case(
        "gateway-no-plain-http",
        "lower-case http",
        lambda rs: set_in(p(rs, ":Gateway", "ai-gateway"), ("spec", "listeners", 0, "protocol"), "http"),
    ),
    Case(
        "k8s-netpol-not-allow-all",
        "empty ingress rule",
        lambda rs: p(rs, ":NetworkPolicy", "redis")["spec"]["ingress"].append({}),
    ),
    Case(
        "k8s-netpol-not-allow-all",
        "ipBlock halves of the internet",
        lambda rs: p(rs, ":NetworkPolicy", "redis")["spec"]["ingress"].append(
            {"from": [{"ipBlock": {"cidr": c}} for c in PUBLIC_SPLIT_V4]}
        ),
    ),
    # GKE settings and GCS parity with S3
    Case("gke-cluster-hardening", "legacy ABAC", lambda rs: set_in(gke(rs), ("enableLegacyAbac",), True)),
    Case(
        "gke-cluster-hardening",
        "basic auth",
        lambda rs: set_in(gke(rs), ("masterAuth",), {"username": "admin", "password": "x"}),
    ),
    Case(
        "gke-cluster-hardening",
        "client certificate",
        lambda rs: set_in(gke(rs), ("masterAuth",), {"clientCertificateConfig": {"issueClientCertificate": True}}),
    ),
    Case("gke-cluster-hardening", "logging off", lambda rs: set_in(gke(rs), ("loggingService",), "none")),
    Case(
        "gke-cluster-hardening",
        "workload logs only",
        lambda rs: set_in(gke(rs), ("loggingConfig",), {"enableComponents": ["WORKLOADS"]}),
    ),
    Case(
        "gcs-cmek-and-versioning",
        "Google-managed key",
        lambda rs: drop(p(rs, ":Bucket", "models-gcs"), ("encryption",)),
    ),
    Case(
        "gcs-cmek-and-versioning",
        "unversioned",
        lambda rs: set_in(p(rs, ":Bucket", "models-gcs"), ("versioning",), {"enabled": False}),
    ),
    # Karmada: overrides apply, and what they make the member run is judged
    Case(
        "karmada-overrides-apply",
        "replace of a missing path",
        lambda rs: set_in(
            p(rs, ":OverridePolicy", "routing-eks"),
            ("spec", "overrideRules", 0, "overriders", "plaintext", 0, "path"),
            "/data/zone/name",
        ),
    ),
    # helm-values-hardened: any key shape
    Case(
        "helm-values-hardened",
        "image string latest",
        lambda rs: _values(rs, {"validator": {"image": "nvcr.io/v:latest"}}),
    ),
    Case("helm-values-hardened", "image without tag", lambda rs: _values(rs, {"sidecarImage": "docker.io/busybox"})),
    Case(
        "helm-values-hardened",
        "image map, upper-case LATEST",
        lambda rs: _values(rs, {"operator": {"image": {"repository": "nvidia/gpu-operator", "tag": "LATEST"}}}),
    ),
    Case(
        "helm-values-hardened",
        "image_tag_version main",
        lambda rs: _values(rs, {"basic": {"image_tag_version": "main"}}),
    ),
    Case("helm-values-hardened", "serviceType", lambda rs: _values(rs, {"apiServer": {"serviceType": "LoadBalancer"}})),
    Case("helm-values-hardened", "service.type nodeport", lambda rs: _values(rs, {"service": {"type": "nodeport"}})),
    Case(
        "helm-values-hardened",
        "hostNetwork outside the privileged namespaces",
        lambda rs: (
            set_in(p(rs, ":Release", "gpu-operator"), ("namespace",), "monitoring"),
            _values(rs, {"exporter": {"hostNetwork": True}}),
        ),
    ),
    Case(
        "helm-values-hardened",
        "Grafana anonymous",
        lambda rs: _values(rs, {"grafana": {"grafana.ini": {"auth.anonymous": {"enabled": "true"}}}}),
    ),
    Case(
        "helm-values-hardened",
        "Grafana default admin",
        lambda rs: _values(rs, {"grafana": {"adminPassword": "prom-operator"}}),
    ),
    # no-plaintext-secrets (detect-secrets)
    Case(
        "no-plaintext-secrets",
        "secret under a reference-like key",  # a reference is a Secret's name, not a token
        lambda rs: _env(rs, "EXISTING_SECRET", FAKE_GITHUB_TOKEN),
    ),
    Case("no-plaintext-secrets", "AWS key in env", lambda rs: _env(rs, "AWS_ACCESS_KEY_ID", FAKE_AWS_KEY)),
    Case("no-plaintext-secrets", "password env, lower case", lambda rs: _env(rs, "redis_password", "Xk29!mQ7zr")),
    Case(
        "no-plaintext-secrets",
        "credentials in a URL",
        lambda rs: set_in(
            p(rs, ":ScaledObject", "llama-70b-scaler"),
            ("spec", "triggers", 0, "metadata", "serverAddress"),
            "http://admin:Pr0mPassw0rd@prometheus:9090",
        ),
    ),
    Case(
        "no-plaintext-secrets",
        "token in Helm values",
        lambda rs: set_in(p(rs, ":Release", "gpu-operator"), ("values", "ngc", "apiKey"), FAKE_GITHUB_TOKEN),
    ),
    Case(
        "no-plaintext-secrets",
        "private key in a ConfigMap",
        lambda rs: set_in(p(rs, ":ConfigMap", "custom-mig-config"), ("data", "tls.key"), FAKE_PRIVATE_KEY),
    ),
    Case(
        "no-plaintext-secrets",
        "resource tag",
        lambda rs: set_in(p(rs, ":Bucket", "models"), ("tags",), {"deploy-token": FAKE_GITHUB_TOKEN}),
    ),
    # secrets-stay-secret
    Case(
        "secrets-stay-secret",
        "plain Secret payload",
        lambda rs: added(
            rs,
            find(rs, "core/v1:Service", "redis"),
            "redis-auth",
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "redis-auth", "namespace": GATEWAY_NS},
                "stringData": {"password": "plain"},
            },
            type="kubernetes:core/v1:Secret",
        ),
    ),
    Case(
        "secrets-stay-secret",
        "value computed from a private key",
        lambda rs: (
            added(
                rs,
                find(rs, ":Key", "models-key"),
                "tls-key",
                {"algorithm": "RSA"},
                type="tls:index/privateKey:PrivateKey",
            ),
            p(rs, ":ConfigMap", "custom-mig-config").update(data={"key": "-----BEGIN..."}),
            find(rs, ":ConfigMap", "custom-mig-config").deps.update(data=[find(rs, ":PrivateKey", "tls-key").urn]),
        ),
    ),
]


# --- issue 33: classes the pack did not see -----------------------------------------------------------------------
def redis_caps(rs, caps):
    set_in(redis(rs), ("securityContext", "capabilities", "add"), caps)


def prefill(rs):
    return pd(rs)["spec"]["prefill"]["template"]


def volcano_job(rs, container: dict, **pod):
    """A custom resource the pack has no table for, carrying a PodTemplateSpec (a Volcano Job)."""
    like = find(rs, ":InferenceService", "llama-70b")
    template = {"metadata": {"labels": {"app": "batch"}}, "spec": {"containers": [container], **pod}}
    added(
        rs,
        like,
        "batch-job",
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": "batch", "namespace": "inference"},
            "spec": {"tasks": [{"name": "main", "replicas": 1, "template": template}]},
        },
        type="kubernetes:batch.volcano.sh/v1alpha1:Job",
    )


def patch_of(rs, suffix, name, props, type_):
    """A server-side-apply patch (pulumi_kubernetes *Patch) of an object, named <name>-patch."""
    like = find(rs, suffix, name)
    return added(rs, like, f"{name}-patch", props, type=type_)


def redis_patch(rs, container: dict):
    patch_of(
        rs,
        ":Deployment",
        "redis",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "redis", "namespace": GATEWAY_NS},
            "spec": {"template": {"spec": {"containers": [{"name": "redis", **container}]}}},
        },
        "kubernetes:apps/v1:DeploymentPatch",
    )


def service_patch(rs, name, ranges, namespace=GATEWAY_NS):
    like = find(rs, ":Service", "api-external")
    added(
        rs,
        like,
        f"{name}-patch",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": namespace, "annotations": {"pulumi.com/patchForce": "true"}},
            "spec": {"loadBalancerSourceRanges": ranges},
        },
        type="kubernetes:core/v1:ServicePatch",
    )


def _peer(rs, peer, ports=(6379,)):
    rule_ = {"from": [peer], **({"ports": [{"port": x} for x in ports]} if ports else {})}
    p(rs, ":NetworkPolicy", "redis")["spec"]["ingress"].append(rule_)


def _random(rs, **props):
    like = find(rs, ":Bucket", "models")
    added(
        rs,
        like,
        "tenant-key",
        {"length": 48, "special": False, **props},
        type="random:index/randomPassword:RandomPassword",
    )


def _csr(rs):
    return p(rs, ":CertRequest", "agent-csr")


def _agent_rules(rs):
    return p(rs, ":ClusterRole", "agent")["rules"]


def _route_match(rs):
    return p(rs, ":AIGatewayRoute", "llm-route")["spec"]["rules"][0]["matches"][0]["headers"]


def _early_removed(rs):
    return p(rs, ":ClientTrafficPolicy", "client-traffic")["spec"]["headers"]["earlyRequestHeaders"]["remove"]


def _route_rules(rs):
    return p(rs, ":AIGatewayRoute", "llm-route")["spec"]["rules"]


def stand_in_rule(model: str, tenant: str, stand_in: str, model_match: bool = True) -> dict:
    """An AIGatewayRoute rule answering `model` for `tenant` from its direct backend, else `stand_in`'s."""
    headers = [{"type": "Exact", "name": "x-tenant-id", "value": tenant}]
    if model_match:
        headers.insert(0, {"type": "Exact", "name": "x-ai-eg-model", "value": model})
    return {
        "matches": [{"headers": headers}],
        "backendRefs": [
            {"name": f"{model}-direct", "priority": 0},
            {"name": f"{stand_in}-direct", "priority": 1, "modelNameOverride": stand_in},
        ],
    }


def _priority_lua(rs):
    return p(rs, ":EnvoyExtensionPolicy", "request-priority")["spec"]["lua"][0]


def _budget_selector(rs):
    rules = p(rs, ":BackendTrafficPolicy", "token-budgets")["spec"]["rateLimit"]["global"]["rules"]
    return rules[0]["clientSelectors"][0]["headers"][0]


def _probe_limit(rs):
    """The SLO gate tenant's request limit (the fixture's rolloutSloTenant, search)."""
    return p(rs, ":BackendTrafficPolicy", "token-budgets")["spec"]["rateLimit"]["global"]["rules"][1]


def _admit_probe(rs, *headers):
    p(rs, ":AIGatewayRoute", "llm-route")["spec"]["rules"][0]["matches"].append({"headers": list(headers)})


PROBE = {"type": "Exact", "name": "x-tenant-id", "value": "search"}
_PROBE_RULE = {"clientSelectors": [{"headers": [PROBE]}], "limit": {"requests": 600, "unit": "Minute"}}


CASES += [
    # pods in any custom resource, and patches judged as what they produce
    Case("k8s-no-privileged", "lower-case sys_admin", lambda rs: redis_caps(rs, ["sys_admin"])),
    Case("k8s-no-privileged", "CAP_SYS_MODULE", lambda rs: redis_caps(rs, ["CAP_SYS_MODULE"])),
    Case("k8s-no-privileged", "NET_RAW (beyond baseline)", lambda rs: redis_caps(rs, ["NET_BIND_SERVICE", "net_raw"])),
    Case(
        "k8s-no-privileged",
        "LLMInferenceService prefill pod",
        lambda rs: set_in(prefill(rs)["containers"][0], ("securityContext", "privileged"), True),
    ),
    Case(
        "k8s-no-privileged",
        "pod template inside an unknown custom resource",
        lambda rs: volcano_job(rs, {"name": "main", "image": VLLM_IMAGE, "securityContext": {"privileged": True}}),
    ),
    Case(
        "k8s-no-privileged",
        "DeploymentPatch that adds privileged",
        lambda rs: redis_patch(rs, {"securityContext": {"privileged": True}}),
    ),
    Case(
        "k8s-no-host-namespaces",
        "hostNetwork in an unknown custom resource",
        lambda rs: volcano_job(rs, {"name": "main", "image": VLLM_IMAGE}, hostNetwork=True),
    ),
    Case(
        "k8s-resources-set",
        "routing sidecar without resources (KServe's preset gives none)",
        lambda rs: drop(pd(rs)["spec"]["template"], ("initContainers",)),
    ),
    Case(
        "k8s-images-pinned",
        "DeploymentPatch to a latest image",
        lambda rs: redis_patch(rs, {"image": "redis:latest"}),
    ),
    Case(
        "k8s-no-unconfined-profiles",
        "pod seccomp Unconfined",
        lambda rs: set_in(redis_pod(rs), ("securityContext", "seccompProfile"), {"type": "Unconfined"}),
    ),
    Case(
        "k8s-no-unconfined-profiles",
        "container AppArmor unconfined (lower case)",
        lambda rs: set_in(redis(rs), ("securityContext", "appArmorProfile"), {"type": "unconfined"}),
    ),
    Case(
        "k8s-no-unconfined-profiles",
        "LLMInferenceService overrides KServe's RuntimeDefault",
        lambda rs: set_in(pd_main(prefill(rs)), ("securityContext", "seccompProfile"), {"type": "Unconfined"}),
    ),
    Case(
        "k8s-model-servers-no-token",
        "InferenceService pod mounts a token",
        lambda rs: set_in(isvc(rs), ("spec", "predictor", "automountServiceAccountToken"), True),
    ),
    Case(
        "k8s-model-servers-no-token",
        "ServiceAccount mounts by default",
        lambda rs: drop(p(rs, ":ServiceAccount", "model-server"), ("automountServiceAccountToken",)),
    ),
    Case(
        "k8s-model-servers-no-token",
        "prefill pod (no API client in it)",
        lambda rs: drop(prefill(rs), ("automountServiceAccountToken",)),
    ),
    # network peers that admit everyone
    Case("k8s-netpol-not-allow-all", "namespaceSelector {} on a port", lambda rs: _peer(rs, {"namespaceSelector": {}})),
    Case(
        "k8s-netpol-not-allow-all",
        "every namespace, a chosen pod label",
        lambda rs: _peer(rs, {"namespaceSelector": {"matchLabels": {}}, "podSelector": {"matchLabels": {"app": "x"}}}),
    ),
    Case(
        "k8s-netpol-not-allow-all",
        "Exists on kubernetes.io/metadata.name",
        lambda rs: _peer(
            rs,
            {"namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "Exists"}]}},
        ),
    ),
    Case(
        "k8s-netpol-not-allow-all",
        "internet ipBlock on a port",
        lambda rs: _peer(rs, {"ipBlock": {"cidr": "0.0.0.0/0"}}),
    ),
    Case("k8s-pods-ingress-isolated", "no default deny", lambda rs: remove(rs, ":NetworkPolicy", "default-deny")),
    Case(
        "k8s-service-not-exposed",
        "ServicePatch opening the load balancer",
        lambda rs: service_patch(rs, "api-external", ["0.0.0.0/1", "128.0.0.0/1"]),
    ),
    Case(
        "k8s-service-not-exposed",
        "ServicePatch of a Service in another stack",
        lambda rs: service_patch(rs, "karmada-apiserver-external", ["0.0.0.0/0"], namespace="karmada-system"),
    ),
    # secrets and auth detect-secrets misses
    Case(
        "no-plaintext-secrets",
        "Hugging Face token in env",
        lambda rs: _env(rs, "HF_TOKEN_X", "hf_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z"),
    ),
    Case(
        "no-plaintext-secrets",
        "--requirepass literal",
        lambda rs: set_in(redis(rs), ("args",), ["--requirepass", "correct-horse-battery"]),
    ),
    Case(
        "no-plaintext-secrets",
        "redis-cli -a in a shell line",
        lambda rs: set_in(
            redis(rs), ("livenessProbe",), {"exec": {"command": ["sh", "-c", "redis-cli -a s3cr3t ping"]}}
        ),
    ),
    Case("redis-requires-auth", "auth removed", lambda rs: drop(redis(rs), ("args",))),
    Case(
        "redis-requires-auth",
        "password from a plain env value",
        lambda rs: set_in(redis(rs), ("env",), [{"name": "REDIS_PASSWORD", "value": "x"}]),
    ),
    Case("random-secrets-entropy", "16 alphanumerics", lambda rs: _random(rs, length=16)),
    Case("random-secrets-entropy", "digits only", lambda rs: _random(rs, length=24, lower=False, upper=False)),
    Case(
        "no-plain-http-endpoints",
        "plain-HTTP chart repository",
        lambda rs: set_in(
            p(rs, ":Release", "gpu-operator"), ("repositoryOpts", "repo"), "http://helm.ngc.nvidia.com/nvidia"
        ),
    ),
    Case(
        "no-plain-http-endpoints",
        "autoscaler metrics from outside over HTTP",
        lambda rs: set_in(
            p(rs, ":ScaledObject", "llama-70b-scaler"),
            ("spec", "triggers", 0, "metadata", "serverAddress"),
            "http://prometheus.example.com:9090",
        ),
    ),
    Case(
        "no-plain-http-endpoints",
        "remote-write over HTTP",
        lambda rs: _values(
            rs, {"prometheus": {"prometheusSpec": {"remoteWrite": [{"url": "http://mimir.example.com/push"}]}}}
        ),
    ),
    # storage and nodes
    Case(
        "s3-encrypted-with-kms",
        "AWS-managed key by alias",
        lambda rs: set_in(
            p(rs, ":BucketServerSideEncryptionConfiguration", "models"),
            ("rules", 0, "applyServerSideEncryptionByDefault", "kmsMasterKeyId"),
            "alias/aws/s3",
        ),
    ),
    Case(
        "s3-encrypted-with-kms",
        "AWS-managed key by ARN",
        lambda rs: set_in(
            p(rs, ":BucketServerSideEncryptionConfiguration", "models"),
            ("rules", 0, "applyServerSideEncryptionByDefault", "kmsMasterKeyId"),
            "arn:aws:kms:us-east-1:123456789012:alias/aws/s3",
        ),
    ),
    Case(
        "s3-tls-only",
        "denial narrowed to GetObject",
        lambda rs: replace_json(rs, ":BucketPolicy", "models", _narrowed_tls(rs, Action="s3:GetObject")),
    ),
    Case(
        "s3-tls-only",
        "denial on another bucket",
        lambda rs: replace_json(
            rs, ":BucketPolicy", "models", _narrowed_tls(rs, Resource=["arn:aws:s3:::other", "arn:aws:s3:::other/*"])
        ),
    ),
    Case(
        "eks-node-groups-use-hardened-template",
        "no launch template",
        lambda rs: drop(node_group(rs), ("launchTemplate",)),
    ),
    # identity material
    Case(
        "karmada-agent-identity", "system:masters", lambda rs: _csr(rs)["subject"].update(organization="system:masters")
    ),
    Case(
        "karmada-agent-identity",
        "another member's name",
        lambda rs: _csr(rs)["subject"].update(commonName="system:karmada:agent:elsewhere"),
    ),
    Case(
        "karmada-agent-identity",
        "agent certificate is a CA",
        lambda rs: p(rs, ":LocallySignedCert", "agent-cert").update(isCaCertificate=True),
    ),
    Case(
        "karmada-agent-identity",
        "server auth",
        lambda rs: p(rs, ":LocallySignedCert", "agent-cert")["allowedUses"].append("server_auth"),
    ),
    Case("karmada-agent-identity", "RSA 2048", lambda rs: p(rs, ":PrivateKey", "agent-key").update(rsaBits=2048)),
    Case(
        "karmada-agent-rbac-scoped",
        "bound to every agent",
        lambda rs: p(rs, ":ClusterRoleBinding", "agent")["subjects"].append(
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:karmada:agents"}
        ),
    ),
    Case(
        "karmada-agent-rbac-scoped",
        "clusters without resourceNames",
        lambda rs: _agent_rules(rs)[0].pop("resourceNames"),
    ),
    Case(
        "karmada-agent-rbac-scoped",
        "CSR approval",
        lambda rs: _agent_rules(rs).append(
            {
                "apiGroups": ["certificates.k8s.io"],
                "resources": ["certificatesigningrequests/approval"],
                "verbs": ["update"],
            }
        ),
    ),
    Case(
        "karmada-agent-rbac-scoped",
        "Works cluster-wide",
        lambda rs: _agent_rules(rs).append(
            {"apiGroups": ["work.karmada.io"], "resources": ["works"], "verbs": ["list"]}
        ),
    ),
    Case(
        "search-reader-read-only",
        "writes",
        lambda rs: p(rs, ":ClusterRole", "clusterpedia-reader")["rules"][0]["verbs"].append("patch"),
    ),
    Case(
        "search-reader-read-only",
        "reads Secrets",
        lambda rs: p(rs, ":ClusterRole", "clusterpedia-reader")["rules"][0]["resources"].append("secrets"),
    ),
    Case(
        "search-reader-read-only",
        "wildcard group",
        lambda rs: p(rs, ":ClusterRole", "clusterpedia-reader")["rules"][1].update(apiGroups=["*"]),
    ),
    Case(
        "search-reader-read-only",
        "non-resource URLs",
        lambda rs: p(rs, ":ClusterRole", "clusterpedia-reader")["rules"].append(
            {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}
        ),
    ),
    Case(
        "search-reader-read-only",
        "bound to a role the stack does not define",
        lambda rs: p(rs, ":ClusterRoleBinding", "clusterpedia-reader")["roleRef"].update(name="cluster-admin"),
    ),
    Case(
        "search-credentials-in-secrets",
        "token in the spec",
        lambda rs: p(rs, "PediaCluster", "fx-eks")["spec"].update(tokenData="ZXlKaGJHY2lPaUpTVXpJMU5pSjk="),
    ),
    Case(
        "search-credentials-in-secrets",
        "no credentials Secret",
        lambda rs: p(rs, "PediaCluster", "fx-eks")["spec"].pop("authenticationFrom"),
    ),
    Case(
        "search-credentials-in-secrets",
        "indexes ConfigMaps",
        lambda rs: p(rs, "PediaCluster", "fx-eks")["spec"]["syncResources"][0]["resources"].append("configmaps"),
    ),
    Case(
        "search-credentials-in-secrets",
        "every custom resource",
        lambda rs: p(rs, "PediaCluster", "fx-eks")["spec"].update(syncAllCustomResources=True),
    ),
    Case(
        "search-store-secret",
        "password in DB_PASSWORD (the chart's)",
        lambda rs: _synchro_container(rs)["env"].append(
            {
                "name": "DB_PASSWORD",
                "valueFrom": {"secretKeyRef": {"name": "clusterpedia-internalstorage", "key": "password"}},
            }
        ),
    ),
    Case(
        "search-store-secret",
        "storage configuration from a ConfigMap (the chart's)",
        lambda rs: _storage_from_configmap(rs),
    ),
    Case(
        "search-index-least-privilege",
        "the chart's ClusterRole: every verb on everything",
        lambda rs: p(rs, ":ClusterRole", "clusterpedia-clustersynchro-manager")["rules"].__setitem__(
            0, {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
        ),
    ),
    Case(
        "search-index-least-privilege",
        "the chart's non-resource URLs",
        lambda rs: p(rs, ":ClusterRole", "clusterpedia-clustersynchro-manager")["rules"].append(
            {"nonResourceURLs": ["*"], "verbs": ["get"]}
        ),
    ),
    Case(
        "search-index-least-privilege",
        "the disabled controller manager's account bound (nobody creates it)",
        lambda rs: p(rs, ":ClusterRoleBinding", "clusterpedia-clustersynchro-manager")["subjects"].append(
            {"kind": "ServiceAccount", "name": "clusterpedia-controller-manager", "namespace": "clusterpedia-system"}
        ),
    ),
    Case(
        "search-index-least-privilege",
        "reads Secrets cluster-wide",
        lambda rs: p(rs, ":ClusterRole", "clusterpedia-clustersynchro-manager")["rules"].append(
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["list", "watch"]}
        ),
    ),
    Case(
        "search-index-least-privilege",
        "creates pods in its namespace",
        lambda rs: p(rs, ":Role", "clusterpedia-clustersynchro-manager")["rules"].append(
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}
        ),
    ),
    Case(
        "search-index-least-privilege",
        "bound to cluster-admin",
        lambda rs: p(rs, ":ClusterRoleBinding", "clusterpedia-apiserver-auth-delegator")["roleRef"].update(
            name="cluster-admin"
        ),
    ),
    Case(
        "search-index-least-privilege",
        "reads every object of kube-system (view)",
        lambda rs: p(rs, ":RoleBinding", "clusterpedia-apiserver-auth-reader")["roleRef"].update(
            kind="ClusterRole", name="view"
        ),
    ),
    Case(
        "search-api-verified",
        "the chart's APIService: TLS not verified",
        lambda rs: p(rs, ":APIService", "v1beta1.clusterpedia.io")["spec"].update(insecureSkipTLSVerify=True),
    ),
    Case(
        "search-api-verified",
        "no caBundle",
        lambda rs: p(rs, ":APIService", "v1beta1.clusterpedia.io")["spec"].pop("caBundle"),
    ),
    Case(
        "rbac-no-namespace-secret-read",
        "a reader of its namespace's Secrets that may exec into its pods",
        lambda rs: p(rs, ":Role", "clusterpedia-clustersynchro-manager")["rules"].append(
            {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]}
        ),
    ),
    Case(
        "search-store-secret",
        "volume unprotected in production",
        lambda rs: setattr(find(rs, ":PersistentVolumeClaim", "clusterpedia-postgres"), "protect", False),
    ),
    Case(
        "rbac-no-public-subjects",
        "system:authenticated",
        lambda rs: p(rs, ":RoleBinding", "epp")["subjects"].append({"kind": "Group", "name": "system:authenticated"}),
    ),
    Case(
        "rbac-no-public-subjects",
        "every service account",
        lambda rs: p(rs, ":ClusterRoleBinding", "auth-reviewer")["subjects"].append(
            {"kind": "Group", "name": "system:serviceaccounts"}
        ),
    ),
    Case(
        "workload-identity-pinned-to-its-user",
        "the role trusts another account of the namespace",
        lambda rs: p(rs, ":ServiceAccount", "model-server")["metadata"].update(name="model-server-2"),
    ),
    Case(
        "workload-identity-pinned-to-its-user",
        "the account moved namespace",
        lambda rs: p(rs, ":ServiceAccount", "model-server")["metadata"].update(namespace="default"),
    ),
    Case(
        "tls-material-bounded",
        "RSA 2048 CA key",
        lambda rs: p(rs, ":PrivateKey", "karmada-ca-key").update(rsaBits=2048),
    ),
    Case(
        "tls-material-bounded",
        "CA for 30 years",
        lambda rs: p(rs, ":SelfSignedCert", "karmada-ca").update(validityPeriodHours=30 * 8760),
    ),
    Case(
        "tls-material-bounded",
        "leaf that signs",
        lambda rs: p(rs, ":LocallySignedCert", "agent-cert")["allowedUses"].append("cert_signing"),
    ),
    Case(
        "iam-no-wildcard-resource-names",
        "every Auto Scaling group",
        lambda rs: _policy(
            rs,
            _allow(
                "autoscaling:SetDesiredCapacity",
                "arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:*:autoScalingGroupName/*",
            ),
        ),
    ),
    Case(
        "iam-no-wildcard-resource-names",
        "every EKS node group by prefix",
        lambda rs: _policy(
            rs, _allow("eks:UpdateNodegroupConfig", "arn:aws:eks:us-east-1:123456789012:nodegroup/fx-eks/*")
        ),
    ),
    # engine and routing
    Case(
        "vllm-no-runtime-lora-in-production",
        "runtime env True",
        lambda rs: (
            runtime_container(rs)
            .setdefault("env", [])
            .append({"name": "VLLM_ALLOW_RUNTIME_LORA_UPDATING", "value": "True"})
        ),
    ),
    Case(
        "vllm-no-runtime-lora-in-production",
        "LLMInferenceService env ' 1 '",
        lambda rs: (
            pd_main(prefill(rs))
            .setdefault("env", [])
            .append({"name": "VLLM_ALLOW_RUNTIME_LORA_UPDATING", "value": " 1 "})
        ),
    ),
    Case(
        "gateway-drops-picker-control-headers",
        "no header dropped on arrival",
        lambda rs: p(rs, ":ClientTrafficPolicy", "client-traffic")["spec"].pop("headers"),
    ),
    Case(
        "gateway-drops-picker-control-headers",
        "the model-name rewrite kept",
        lambda rs: _early_removed(rs).remove("x-gateway-model-name-rewrite"),
    ),
    Case(
        "gateway-drops-picker-control-headers",
        "the objective kept under its new name (read before the alias)",
        lambda rs: _early_removed(rs).remove("x-llm-d-inference-objective"),
    ),
    Case(
        "request-class-set-by-gateway",
        "another Lua on the Gateway",
        lambda rs: _priority_lua(rs).update(inline=_priority_lua(rs)["inline"].replace("x-tenant-id", "x-tenant")),
    ),
    Case(
        "request-class-set-by-gateway",
        "no Lua names the objective",
        lambda rs: p(rs, ":EnvoyExtensionPolicy", "request-priority")["spec"].update(lua=[]),
    ),
    Case(
        "request-class-set-by-gateway",
        "a routed tenant named no class",
        lambda rs: _priority_lua(rs)["filterContext"]["objectives"]["llama-70b"].pop("search"),
    ),
    Case(
        "request-class-set-by-gateway",
        "a tenant named another pool's objective",
        lambda rs: _priority_lua(rs)["filterContext"]["objectives"]["llama-70b"].update(search="llama-8b-interactive"),
    ),
    Case(
        "vllm-first-come-first-served",
        "--scheduling-policy priority",
        lambda rs: runtime_container(rs).setdefault("args", []).extend(["--scheduling-policy", "priority"]),
    ),
    Case(
        "vllm-first-come-first-served",
        "--scheduling-policy=priority",
        lambda rs: runtime_container(rs).setdefault("args", []).append("--scheduling-policy=priority"),
    ),
    Case(
        "gateway-stand-in-access",
        "a stand-in the tenant may not call",
        lambda rs: _route_rules(rs).append(stand_in_rule("llama-70b", "search", "llama-8b")),
    ),
    Case(
        "gateway-stand-in-access",
        "a stand-in whatever the model",
        lambda rs: _route_rules(rs).append(stand_in_rule("llama-70b", "search", "llama-70b", model_match=False)),
    ),
    Case(
        "gateway-stand-in-access",
        "admitted to the stand-in only through another stand-in",
        lambda rs: _route_rules(rs).extend(
            [stand_in_rule("mistral", "evals", "llama-8b"), stand_in_rule("llama-8b", "evals", "llama-70b")]
        ),
    ),
    Case("gateway-tenant-routes", "route without its tenant match", lambda rs: _route_match(rs).pop(1)),
    Case(
        "gateway-tenant-routes",
        "a tenant header the client sets",
        lambda rs: _route_match(rs).__setitem__(1, {"type": "Exact", "name": "x-tenant", "value": "search"}),
    ),
    Case(
        "gateway-tenant-routes",
        "tenant's budget removed",
        lambda rs: _budget_selector(rs).update(type="Exact", value="other"),
    ),
    # the SLO gate's tenant: only the tested models, every request charged
    Case(
        "rollout-slo-tenant-least-privilege",
        "admitted to a model the gate does not test",
        lambda rs: _admit_probe(rs, {"type": "Exact", "name": "x-ai-eg-model", "value": "llama-8b"}, PROBE),
    ),
    Case("rollout-slo-tenant-least-privilege", "admitted to any model", lambda rs: _admit_probe(rs, PROBE)),
    Case(
        "rollout-slo-tenant-least-privilege",
        "request limit removed",
        lambda rs: p(rs, ":BackendTrafficPolicy", "token-budgets")["spec"]["rateLimit"]["global"]["rules"].pop(1),
    ),
    Case(
        "rollout-slo-tenant-least-privilege",
        "request limit in shadow mode",
        lambda rs: _probe_limit(rs).update(shadowMode=True),
    ),
    Case(
        "rollout-slo-tenant-least-privilege",
        "requests cost nothing",
        lambda rs: _probe_limit(rs).update(cost={"request": {"from": "Number", "number": 0}}),
    ),
    Case(
        "rollout-slo-tenant-least-privilege",
        "request limit of another tenant",
        lambda rs: _probe_limit(rs)["clientSelectors"][0]["headers"][0].update(value="searchers"),
    ),
    # Helm values by each chart's own keys
    Case(
        "helm-values-hardened",
        "KEDA useHostNetwork",
        lambda rs: _volcano_values(rs, {"operator": {"useHostNetwork": True}}),
    ),
    Case(
        "helm-values-hardened",
        "host_network 'true'",
        lambda rs: _volcano_values(rs, {"agent": {"host_network": "true"}}),
    ),
    Case(
        "helm-values-hardened",
        "capabilities in values",
        lambda rs: _volcano_values(rs, {"securityContext": {"capabilities": {"add": ["sys_admin"]}}}),
    ),
]


# --- issue 33, review: the variants the first round let through --------------------------------------------------
PRIVILEGED = {"securityContext": {"privileged": True}}
RESOURCES = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
PLAIN = "http://collector.example.com:4318"


def isvc_spec(rs):
    return isvc(rs)["spec"]


def _llm_config(rs, spec, name="team-preset", namespace="inference"):
    """An LLMInferenceServiceConfig on the LLMInferenceService's cluster, and the service naming it in baseRefs."""
    like = find(rs, ":LLMInferenceService", "llama-70b-pd")
    props = {"apiVersion": like.props["apiVersion"], "kind": "LLMInferenceServiceConfig",
             "metadata": {"name": name, "namespace": namespace}, "spec": spec}  # fmt: skip
    added(rs, like, name, props, type="kubernetes:serving.kserve.io/v1alpha2:LLMInferenceServiceConfig")
    pd(rs)["spec"]["baseRefs"] = [{"name": name}]


def inference_graph(rs, **spec):
    like = find(rs, ":InferenceService", "llama-70b")
    props = {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "InferenceGraph",
             "metadata": {"name": "rag", "namespace": "inference"},
             "spec": {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceName": "llama-70b"}]}}, **spec}}  # fmt: skip
    added(rs, like, "rag-graph", props, type="kubernetes:serving.kserve.io/v1alpha1:InferenceGraph")


def _agent_binding_to(rs, kind, name):
    p(rs, ":ClusterRoleBinding", "agent")["roleRef"].update(kind=kind, name=name)


def _stray_agent_certificate(rs):
    """A client certificate of the Karmada CA that the control plane does not use: it can only be for a member."""
    csr = find(rs, ":CertRequest", "agent-csr")
    stray = added(rs, csr, "ops-csr", {**csr.props, "subject": {"commonName": "system:admin",
                                                             "organization": "system:masters"}})  # fmt: skip
    stray.deps = dict(csr.deps)
    cert = find(rs, ":LocallySignedCert", "agent-cert")
    signed = added(rs, cert, "ops-cert", dict(cert.props))
    signed.deps = {**cert.deps, "certRequestPem": [stray.urn]}


def _secret_reader(rs, rule_, kind="Role", name="epp"):
    if kind == "Role":
        p(rs, ":Role", "epp")["rules"].append(rule_)
    else:
        p(rs, ":RoleBinding", "epp")["roleRef"].update(kind=kind, name=name)


def _config_map(rs, name, data, namespace=SERVING):
    like = find(rs, ":Deployment", "redis")
    added(rs, like, f"cm-{name}", {"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": name, "namespace": namespace}, "data": data},
          type="kubernetes:core/v1:ConfigMap")  # fmt: skip


def _lora_env_from(rs, config_map="engine-env", data=None, **source):
    if data is not None:
        _config_map(rs, config_map, data)
    isvc(rs)["spec"]["predictor"]["model"]["envFrom"] = [{"configMapRef": {"name": config_map}, **source}]


def _random_into_secret(rs, type_, props):
    """A random value of `type_` that a Secret's stringData is computed from (a tenant's API key)."""
    like = find(rs, ":Bucket", "models")
    key = added(rs, like, "tenant-key-id", props, type=type_)
    secret = added(rs, find(rs, ":Deployment", "redis"), "tenant-keys", {"apiVersion": "v1", "kind": "Secret",
                   "metadata": {"name": "tenant-keys", "namespace": SERVING}, "stringData": {"search": "[secret]"}},
                   type="kubernetes:core/v1:Secret")  # fmt: skip
    secret.deps = {"stringData": [key.urn]}


def _literal_template(rs):
    """A node group naming a template by a literal id: a template made elsewhere (its own name unset, as Pulumi
    leaves it when it names the template)."""
    group = find(rs, ":NodeGroup", "h100")
    group.props["launchTemplate"] = {"id": "lt-0123456789abcdef0", "version": "1"}
    group.deps.pop("launchTemplate", None)


def _annotate_pods(pod_template, key, value):
    pod_template.setdefault("metadata", {}).setdefault("annotations", {})[key] = value


CASES += [
    # 2: pods in every place a KServe resource carries one
    Case(
        "k8s-no-privileged",
        "InferenceService transformer",
        lambda rs: isvc_spec(rs).update(transformer={"containers": [{"name": "t", "image": VLLM_IMAGE, **PRIVILEGED}]}),
    ),
    Case(
        "k8s-no-host-namespaces",
        "InferenceService explainer",
        lambda rs: isvc_spec(rs).update(
            explainer={"hostNetwork": True, "containers": [{"name": "e", "image": VLLM_IMAGE}]}
        ),
    ),
    Case(
        "k8s-no-privileged",
        "InferenceService multi-node worker",
        lambda rs: isvc_spec(rs)["predictor"].update(
            workerSpec={"containers": [{"name": "worker-container", **PRIVILEGED}]}
        ),
    ),
    Case(
        "k8s-no-privileged",
        "InferenceService predictor sidecar beside the model",
        lambda rs: isvc_spec(rs)["predictor"].update(containers=[{"name": "agent", "image": VLLM_IMAGE, **PRIVILEGED}]),
    ),
    Case(
        "k8s-resources-set",
        "InferenceGraph router limited in CPU only",
        lambda rs: inference_graph(rs, resources={"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}),
    ),
    Case(
        "k8s-no-privileged",
        "LLMInferenceService endpoint picker",
        lambda rs: pd(rs)["spec"]["router"]["scheduler"]["template"]["containers"][0].update(PRIVILEGED),
    ),
    Case(
        "k8s-no-host-path",
        "LLMInferenceService endpoint picker mounts the node",
        lambda rs: pd(rs)["spec"]["router"]["scheduler"]["template"].update(
            volumes=[{"name": "root", "hostPath": {"path": "/"}}]
        ),
    ),
    Case(
        "k8s-no-privileged",
        "LLMInferenceServiceConfig named by baseRefs",
        lambda rs: _llm_config(rs, {"prefill": {"template": {"containers": [{"name": "main", **PRIVILEGED}]}}}),
    ),
    Case(
        "k8s-pdb",
        "two endpoint pickers with no budget (the service's replicas are not the picker's)",
        lambda rs: pd(rs)["spec"]["router"]["scheduler"].update(replicas=2),
    ),
    # 3: a member's agent may do in Karmada only what register grants it, on its own objects
    Case(
        "karmada-agent-rbac-scoped",
        "clusters/proxy",
        lambda rs: _agent_rules(rs).append(
            {"apiGroups": ["cluster.karmada.io"], "resources": ["clusters/proxy"], "verbs": ["get", "create"]}
        ),
    ),
    Case(
        "karmada-agent-rbac-scoped",
        "propagation policies",
        lambda rs: _agent_rules(rs).append(
            {"apiGroups": ["policy.karmada.io"], "resources": ["propagationpolicies"], "verbs": ["create"]}
        ),
    ),
    Case(
        "karmada-agent-rbac-scoped",
        "bound to cluster-admin",
        lambda rs: _agent_binding_to(rs, "ClusterRole", "cluster-admin"),
    ),
    Case(
        "karmada-agent-rbac-scoped",
        "bound to a role the stack does not define",
        lambda rs: _agent_binding_to(rs, "ClusterRole", "team-agents"),
    ),
    # 4, 13: agent certificates by where they go, valid at most register's year
    Case(
        "karmada-agent-identity",
        "the agent's certificate with the control plane's identity",
        lambda rs: _csr(rs)["subject"].update(commonName="system:admin", organization="system:masters"),
    ),
    Case(
        "karmada-agent-identity",
        "a CA-signed client certificate the control plane does not use",
        _stray_agent_certificate,
    ),
    Case(
        "karmada-agent-identity",
        "valid five years",
        lambda rs: p(rs, ":LocallySignedCert", "agent-cert").update(validityPeriodHours=43800),
    ),
    Case(
        "karmada-agent-identity",
        "ECDSA P-224",
        lambda rs: p(rs, ":PrivateKey", "agent-key").update(algorithm="ECDSA", ecdsaCurve="P224", rsaBits=None),
    ),
    # 5: a node group's template is one of the stack's by its id or its own name, never by a missing one
    Case(
        "eks-node-groups-use-hardened-template",
        "a literal template id",
        _literal_template,
    ),
    # 6: one tenant's exact id
    Case(
        "gateway-tenant-routes",
        "tenant matched by a regular expression",
        lambda rs: _route_match(rs)[1].update(type="RegularExpression", value="search|legal"),
    ),
    Case("gateway-tenant-routes", "tenant matched by an empty value", lambda rs: _route_match(rs)[1].update(value="")),
    # 7: Roles that read their namespace's Secrets
    Case(
        "rbac-no-namespace-secret-read",
        "Role reads Secrets",
        lambda rs: _secret_reader(rs, {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}),
    ),
    Case(
        "rbac-no-namespace-secret-read",
        "Role execs into pods",
        lambda rs: _secret_reader(rs, {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]}),
    ),
    Case(
        "rbac-no-namespace-secret-read",
        "RoleBinding to edit",
        lambda rs: _secret_reader(rs, {}, kind="ClusterRole", name="edit"),
    ),
    # 8: hostPath in any form a chart takes it
    Case(
        "helm-values-hardened",
        "hostPath volume in a list",
        lambda rs: _volcano_values(rs, {"extraVolumes": [{"name": "root", "hostPath": {"path": "/"}}]}),
    ),
    # 9: every bucket's objects
    Case(
        "iam-no-wildcard-resource-names",
        "every bucket's objects",
        lambda rs: _policy(rs, _allow("s3:PutObject", "arn:aws:s3:::*/*")),
    ),
    # 11: the legacy profile annotations on pod templates
    Case(
        "k8s-no-unconfined-profiles",
        "AppArmor unconfined on a pod template",
        lambda rs: _annotate_pods(
            p(rs, ":Deployment", "redis")["spec"]["template"],
            "container.apparmor.security.beta.kubernetes.io/redis",
            "unconfined",
        ),
    ),
    Case(
        "k8s-no-unconfined-profiles",
        "seccomp unconfined on an InferenceService predictor",
        lambda rs: isvc_spec(rs)["predictor"].update(
            annotations={"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}
        ),
    ),
    # 12: peers anyone can be
    Case(
        "k8s-netpol-not-allow-all",
        "namespaceSelector NotIn",
        lambda rs: _peer(
            rs,
            {
                "namespaceSelector": {
                    "matchExpressions": [
                        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}
                    ]
                }
            },
        ),
    ),
    Case(
        "k8s-netpol-not-allow-all",
        "namespaceSelector DoesNotExist",
        lambda rs: _peer(
            rs, {"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}}
        ),
    ),
    Case(
        "k8s-netpol-not-allow-all",
        "the internet split over two rules",
        lambda rs: (_peer(rs, {"ipBlock": {"cidr": "0.0.0.0/1"}}), _peer(rs, {"ipBlock": {"cidr": "128.0.0.0/1"}})),
    ),
    # 14: runtime LoRA updating however the environment gets it
    Case(
        "vllm-no-runtime-lora-in-production",
        "envFrom a ConfigMap",
        lambda rs: _lora_env_from(rs, data={"VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true"}),
    ),
    Case(
        "vllm-no-runtime-lora-in-production",
        "envFrom a ConfigMap with a prefix",
        lambda rs: _lora_env_from(rs, data={"RUNTIME_LORA_UPDATING": "1"}, prefix="VLLM_ALLOW_"),
    ),
    Case(
        "vllm-no-runtime-lora-in-production",
        "in a shell line",
        lambda rs: runtime_container(rs).update(
            command=["bash", "-c", "VLLM_ALLOW_RUNTIME_LORA_UPDATING=1 exec vllm serve"]
        ),
    ),
    # 15: plain HTTP wherever a value is an endpoint
    Case(
        "no-plain-http-endpoints",
        "OTLP exporter env",
        lambda rs: model(rs).setdefault("env", []).append({"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": PLAIN}),
    ),
    Case(
        "no-plain-http-endpoints",
        "a flag's value",
        lambda rs: model(rs)["args"].append(f"--otlp-traces-endpoint={PLAIN}"),
    ),
    Case(
        "no-plain-http-endpoints",
        "a chart by plain-HTTP URL",
        lambda rs: p(rs, ":Release", "volcano").update(chart="http://charts.example.com/volcano-1.15.0.tgz"),
    ),
    # 16: any random value that becomes a secret
    Case(
        "random-secrets-entropy",
        "RandomId of 8 bytes as an API key",
        lambda rs: _random_into_secret(rs, "random:index/randomId:RandomId", {"byteLength": 8}),
    ),
]


def _volcano_values(rs, values):
    """Values of a chart outside the privileged namespaces (volcano-system)."""
    p(rs, ":Release", "volcano").setdefault("values", {}).update(values)


def _narrowed_tls(rs, **changes):
    document = statement(rs, ":BucketPolicy", "models")
    document["Statement"][0].update(changes)
    return document


def test_compliant_stack_passes_every_rule():
    evaluation = run(compliant())
    assert evaluation.findings == []
    assert all(evaluation.subjects[r.name] > 0 for r in ALL_RULES), "every rule must have a subject in the fixture"


def test_every_rule_has_a_failing_mutation():
    assert {c.rule for c in CASES} == RULE_NAMES
    assert len({(c.rule, c.path) for c in CASES}) == len(CASES)


@pytest.fixture(scope="module")
def compliant_baseline() -> PackBaseline:
    """The compliant stack's pack baseline: a case re-judges only what it changed (tests/harness.py PackBaseline)."""
    return PackBaseline.of(compliant(), SETTINGS)


# Cases on which judging only what a case changed is checked against the whole pack (removed and added resources too).
JUDGED_WHOLE = CASES[::16]


@pytest.mark.slow
@pytest.mark.parametrize("case", JUDGED_WHOLE, ids=lambda c: f"{c.rule}[{c.path}]")
def test_judging_what_a_case_changed_finds_what_the_whole_pack_finds(compliant_baseline, case: Case):
    resources = compliant()
    case.mutate(resources)
    whole = run(resources)
    partial = compliant_baseline.judge(resources)
    assert (partial.findings, partial.subjects, partial.levels) == (whole.findings, whole.subjects, whole.levels)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.rule}[{c.path}]")
def test_violation_path_is_caught(compliant_baseline, case: Case):
    resources = compliant()
    case.mutate(resources)
    evaluation = compliant_baseline.judge(resources)
    violations = evaluation.of(case.rule, "violation")
    assert violations, f"{case.rule} missed {case.path}: {[f.message for f in evaluation.findings]}"
    assert all(". Fix: " in v.message for v in violations)
    assert not evaluation.of(case.rule, "error")
    assert not [f for f in evaluation.findings if f.kind == "error"], [f.message for f in evaluation.findings]


def test_rule_metadata_is_complete():
    rules = {r.name for r in ALL_RULES}
    assert {"llm-model-fits-gpu", "stateful-resources-protected", "k8s-probes"} <= rules, "the pack's rules"
    for r in ALL_RULES:
        assert r.name == r.name.lower() and " " not in r.name, r.name
        assert r.description.endswith(".") and len(r.description) > 30, r.name
        assert r.severity in ("low", "medium", "high", "critical"), r.name
        assert r.enforcement in LEVELS and r.enforcement != "disabled", r.name
        assert r.remediation and not r.remediation.endswith("."), r.name
        assert r.applies_to and r.category in CATEGORIES, r.name
        assert set(r.config) <= set(CONFIG), r.name


def test_messages_name_the_resource_and_the_fix():
    resources = compliant()
    set_in(eks(resources), ("vpcConfig", "endpointPublicAccess"), True)
    [finding] = run(resources).of("eks-endpoint-not-public")
    assert finding.urn.endswith("::eks")
    assert finding.enforcement_level == "mandatory"
    assert finding.message == (
        "cluster eks: public endpoint with no publicAccessCidrs is open to 0.0.0.0/0. Fix: set "
        "vpcConfig.endpointPublicAccess=false, or list your office/VPN CIDRs in vpcConfig.publicAccessCidrs "
        "(regions[].apiAccess.publicCidrs)"
    )


# --- things that must not be violations -----------------------------------------------------------------


@pytest.mark.parametrize(
    "mutate",
    [
        lambda rs: _handoff(rs, bytes_per_prompt="312442880", gbps="10"),  # 1907 tokens: 249.95 ms
        lambda rs: _handoff(rs, prefill_gpu="H200-141GB"),  # Hopper both: FLASH_ATTN
        lambda rs: _kv_fp8(_handoff(rs, prefill_gpu="H200-141GB")),
        lambda rs: _handoff(rs, prefill_gpu="L40S"),  # 16-bit cache: FLASH_ATTN on Ada too
        lambda rs: [  # B200 prefill with the backend both run named on both
            pd_main(pod)["args"].append("--attention-backend=FLASHINFER")
            for pod in (pd(_handoff(rs, prefill_gpu="B200"))["spec"]["template"], pd(rs)["spec"]["prefill"]["template"])
        ],
    ],
    ids=["at-the-budget", "h200-prefill", "h200-prefill-fp8", "l40s-prefill-16-bit", "b200-pinned-backend"],
)
def test_hand_off_near_variants_pass(mutate):
    resources = compliant()
    mutate(resources)
    evaluation = run(resources)
    for rule in ("llm-pd-kv-handoff-within-budget", "llm-pd-one-attention-backend"):
        assert not evaluation.of(rule), [f.message for f in evaluation.of(rule)]


def test_hand_off_without_its_figures_cannot_be_checked():
    resources = compliant()
    del pd(resources)["metadata"]["annotations"]["inference-platform.io/ttft-objective-seconds"]
    del pd(resources)["metadata"]["annotations"]["inference-platform.io/prefill-gpu-product"]
    evaluation = run(resources)
    for rule in ("llm-pd-kv-handoff-within-budget", "llm-pd-one-attention-backend"):
        assert [f.kind for f in evaluation.of(rule)] == ["cannot-check"], rule


def test_privileged_pods_are_allowed_in_the_gpu_operator_namespace():
    resources = compliant()
    deployment = find(resources, ":Deployment", "redis")
    deployment.props["metadata"]["namespace"] = "gpu-operator"
    set_in(redis(resources), ("securityContext", "privileged"), True)
    set_in(redis_pod(resources), ("volumes",), [{"name": "dev", "hostPath": {"path": "/dev"}}])
    evaluation = run(resources)
    assert not evaluation.of("k8s-no-privileged") and not evaluation.of("k8s-no-host-path")


def test_routes_on_an_internal_gateway_need_no_auth_or_budget():
    resources = compliant()
    remove(resources, ":SecurityPolicy", "tenant-auth")
    remove(resources, ":BackendTrafficPolicy", "token-budgets")
    set_in(
        p(resources, ":Gateway", "ai-gateway"),
        ("spec", "infrastructure", "annotations"),
        {"service.beta.kubernetes.io/aws-load-balancer-scheme": "internal"},
    )
    evaluation = run(resources)
    assert not evaluation.of("gateway-route-authenticated") and not evaluation.of("gateway-route-token-budget")


def test_route_level_policy_with_auth_satisfies_the_route():
    resources = compliant()
    _security_policy(
        resources,
        {"targetRefs": [ROUTE_REF], "jwt": {"providers": [{"name": "idp", "remoteJWKS": {"uri": "https://idp/jwks"}}]}},
    )
    remove(resources, ":SecurityPolicy", "tenant-auth")
    assert not run(resources).of("gateway-route-authenticated")


def test_scale_to_zero_is_fine_outside_production():
    resources = compliant()
    set_in(isvc(resources), ("spec", "predictor", "minReplicas"), 0)
    find(resources, ":Bucket", "models").protect = False
    dev = PackSettings().merged({**FIXTURE_CONFIG, "production": False}, ALL_RULES)
    evaluation = run(resources, dev)
    assert evaluation.findings == []


def test_labels_are_matched_by_suffix_when_no_domain_is_configured():
    resources = compliant()
    for r in resources:
        if r.type.endswith(":NodeGroup"):
            r.props["labels"] = {
                k.replace("inference-platform.io/", "example.com/"): v for k, v in r.props["labels"].items()
            }
    no_domain = {k: v for k, v in FIXTURE_CONFIG.items() if k != "labelDomain"}
    assert run(resources, PackSettings().merged(no_domain, ALL_RULES)).findings == []
    violations = run(resources).of("gpu-pool-taint-and-labels")
    assert len(violations) == 6 and "lacks the label inference-platform.io/pool" in violations[0].message


def test_placement_group_label_is_checked_while_the_cluster_name_is_unknown():
    # the group's name embeds the cluster name; only whether a fabric pool has one is checked
    resources = compliant()
    node_group(resources)["clusterName"] = UNKNOWN
    assert run(resources).findings == []
    node_group(resources)["labels"]["inference-platform.io/placement-group"] = "none"
    [finding] = run(resources).of("gpu-pool-taint-and-labels")
    assert "fabric efa needs a placement group, but inference-platform.io/placement-group is 'none'" in finding.message


def test_time_slicing_pool_without_mig_passes():
    resources = compliant()
    group = node_group(resources)
    group["instanceTypes"] = ["g6e.xlarge"]
    del group["labels"]["nvidia.com/mig.config"]
    group["labels"].update({"inference-platform.io/gpu-product": "L40S", "inference-platform.io/gpu-memory-gib": "48"})
    group["labels"].update({"inference-platform.io/fabric": "none", "inference-platform.io/placement-group": "none"})
    group["labels"]["inference-platform.io/nvlink-domain"] = "none"
    assert run(resources).findings == []


# --- what the pack cannot know: reported, never passed, never a crash -------------------------------------


def test_missing_sizing_annotations_are_reported_as_cannot_check():
    resources = compliant()
    isvc(resources)["metadata"]["annotations"] = {}
    evaluation = run(resources)
    for name in ("llm-model-fits-gpu", "llm-startup-probe-budget", "llm-fp8-kv-cache-supported"):
        [finding] = evaluation.of(name)
        assert finding.kind == "cannot-check" and finding.enforcement_level == "advisory", name
        assert finding.message.startswith("cannot check: ") and "inference-platform.io/" in finding.message
    # TP comes from the engine flag when the annotation is missing.
    assert not evaluation.of("llm-shm-for-tensor-parallel")
    assert not evaluation.mandatory


def test_unknown_values_at_preview_are_cannot_check():
    resources = compliant()
    set_in(eks(resources), ("vpcConfig", "endpointPublicAccess"), UNKNOWN)
    set_in(p(resources, ":BucketPublicAccessBlock", "models"), ("blockPublicPolicy",), UNKNOWN)
    set_in(isvc(resources), ("metadata", "annotations", annotation("weights-gib")), UNKNOWN)
    evaluation = run(resources)
    for name, path in (
        ("eks-endpoint-not-public", "vpcConfig.endpointPublicAccess"),
        ("s3-public-access-blocked", "blockPublicPolicy"),
        ("llm-model-fits-gpu", "inference-platform.io/weights-gib"),
    ):
        [finding] = evaluation.of(name)
        assert finding.kind == "cannot-check" and finding.enforcement_level == "advisory", name
        assert path in finding.message and "`pulumi up`" in finding.message
    assert not evaluation.mandatory


def test_unknown_bucket_id_still_pairs_the_bucket_with_its_companions():
    """At preview the bucket's id is unknown in every companion; the dependency still pairs them."""
    resources = compliant()
    for r in resources:
        if "bucket" in r.deps:
            r.props["bucket"] = UNKNOWN
    assert run(resources).findings == []


def test_production_not_configured_is_cannot_check():
    resources = compliant()
    set_in(isvc(resources), ("spec", "predictor", "minReplicas"), 0)
    find(resources, ":Bucket", "models").protect = False
    evaluation = run(resources, PackSettings().merged({"labelDomain": "inference-platform.io"}, ALL_RULES))
    for name in ("no-scale-to-zero-in-production", "stateful-resources-protected"):
        [finding] = evaluation.of(name)
        assert finding.kind == "cannot-check" and "production" in finding.message, name


def test_runtime_outside_the_stack_is_cannot_check_not_pass():
    resources = compliant()
    remove(resources, ":ClusterServingRuntime", "vllm-runtime")
    drop(model(resources), ("startupProbe",))
    evaluation = run(resources)
    assert {f.policy for f in evaluation.findings} >= {
        "k8s-probes",
        "llm-startup-probe-budget",
        "llm-shm-for-tensor-parallel",
    }
    assert all(f.kind == "cannot-check" for f in evaluation.findings), [f.message for f in evaluation.findings]


def test_a_pod_spec_unknown_as_a_whole_is_cannot_check():
    """A spec built inside an apply is unknown at preview as a whole: every pod rule says so."""
    resources = compliant()
    isvc(resources)["spec"] = UNKNOWN
    p(resources, ":Deployment", "redis")["spec"]["template"] = UNKNOWN
    evaluation = run(resources)
    for name in ("k8s-no-privileged", "k8s-resources-set", "k8s-probes", "llm-model-fits-gpu"):
        findings = evaluation.of(name)
        assert findings and all(f.kind == "cannot-check" for f in findings), name
    assert not evaluation.mandatory


def test_gpu_products_are_recognized_by_their_feature_discovery_name():
    resources = compliant()
    sizing(resources, "fp8-capable", None)
    sizing(resources, "gpu-product", "NVIDIA-A100-SXM4-80GB")
    [finding] = run(resources).of("llm-fp8-kv-cache-supported")
    assert "on A100-80GB, which has no FP8" in finding.message


@pytest.mark.slow
def test_any_unknown_input_never_crashes_a_rule(compliant_baseline):
    """Every top-level input of every resource, in turn, unknown: no rule fails."""
    base = compliant()
    assert {r.type.split(":")[0] for r in base} >= {"aws", "gcp", "kubernetes"}, "both clouds and Kubernetes"
    tried = 0
    for i, resource in enumerate(base):
        for key in list(resource.props):
            resources = compliant()
            resources[i].props[key] = UNKNOWN
            errors = [f.message for f in compliant_baseline.judge(resources).findings if f.kind == "error"]
            assert not errors, f"{resource.type}.{key}: {errors}"
            tried += 1
    assert tried > len(base), "most resources have inputs to make unknown"


# --- pack configuration ---------------------------------------------------------------------------------


def test_enforcement_level_is_overridable():
    resources = compliant()
    remove(resources, ":BucketVersioning", "models")
    settings = PackSettings({**SETTINGS.raw, "s3-versioning": "advisory"})
    [finding] = run(resources, settings).of("s3-versioning")
    assert finding.enforcement_level == "advisory"
    disabled = PackSettings({**SETTINGS.raw, "s3-versioning": {"enforcementLevel": "disabled"}})
    assert not run(resources, disabled).of("s3-versioning")
    everything = PackSettings({**SETTINGS.raw, "all": "advisory"})
    assert not run(resources, everything).mandatory


def test_invalid_enforcement_level_is_an_error():
    with pytest.raises(ValueError, match="enforcement level 'blocking'"):
        run(compliant(), PackSettings({"s3-versioning": "blocking"}))


def test_privileged_namespaces_are_configurable():
    resources = compliant()
    set_in(redis(resources), ("securityContext", "privileged"), True)
    settings = SETTINGS.merged({"privilegedNamespaces": ["ai-gateway"]}, ALL_RULES)
    assert not run(resources, settings).of("k8s-no-privileged")


def test_critical_pods_need_no_quota_in_kube_system_on_eks_or_when_overridden():
    rs = compliant()
    kube_system = p(rs, ":Release", "volcano")
    kube_system["namespace"] = "kube-system"
    remove(rs, ":ResourceQuota", "critical-pods")
    assert not run(rs).of("gke-critical-priority-quota")
    rs = compliant()
    _gke_gpu_operator(rs, {k: {"priorityClassName": ""} for k in ("operator", "daemonsets", "node-feature-discovery")})
    _critical_deployment(rs, "volcano-system")  # admitted by volcano-system's quota
    assert not run(rs).of("gke-critical-priority-quota")
    # The GPU Operator's release on EKS keeps its critical defaults and needs no quota there.
    assert CHARTS["gpu-operator"].pods.priority_classes(p(rs, ":Release", "gpu-operator")["values"])
    assert run(rs).subjects["gke-critical-priority-quota"] >= 4


def test_a_pause_container_needs_no_probes_but_any_other_does():
    """A DaemonSet whose work is done by an init container keeps its pod with the pause image (NCCL installers)."""
    rs = compliant()
    drop(redis(rs), ("readinessProbe",))
    drop(redis(rs), ("livenessProbe",))
    redis(rs)["image"] = "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"
    assert not run(rs).of("k8s-probes")
    redis(rs)["image"] = "docker.io/library/pause-like:3.8"  # a repository merely named like it is not exempt
    assert run(rs).of("k8s-probes")


def test_node_agents_may_be_privileged_in_kube_system():
    rs = compliant()
    find(rs, ":Deployment", "redis").props["metadata"]["namespace"] = "kube-system"
    set_in(redis(rs), ("securityContext", "privileged"), True)
    set_in(redis_pod(rs), ("hostNetwork",), True)
    evaluation = run(rs)
    assert not evaluation.of("k8s-no-privileged") and not evaluation.of("k8s-no-host-namespaces")


def test_critical_pods_on_a_provider_outside_the_stack_cannot_be_checked():
    rs = compliant()
    volcano = find(rs, ":Release", "volcano")
    rs.remove(next(r for r in rs if r.urn == volcano.provider))
    assert [f.kind for f in run(rs).of("gke-critical-priority-quota")] == ["cannot-check"]


def test_cluster_managers_named_by_the_spec_may_hold_wildcard_roles():
    """Karmada's push controller needs `*` on members; the exemption is for exactly the accounts configured."""
    resources = compliant()
    _role_rules(resources, [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}])
    p(resources, ":ClusterRoleBinding", "auth-reviewer")["subjects"] = [
        {"kind": "ServiceAccount", "name": "karmada-controller-manager", "namespace": "karmada-cluster"}
    ]
    flagged = {f.policy for f in run(resources).findings}
    assert flagged == {"rbac-no-admin-for-workloads", "rbac-no-wildcards", "rbac-no-cluster-secret-read"}
    managers = {"clusterAdminServiceAccounts": ["karmada-cluster/karmada-controller-manager"]}
    assert run(resources, SETTINGS.merged(managers, ALL_RULES)).findings == []
    other = {"clusterAdminServiceAccounts": ["karmada-cluster/someone-else"]}
    assert {f.policy for f in run(resources, SETTINGS.merged(other, ALL_RULES)).findings} == flagged


def test_only_the_readers_the_spec_names_may_read_every_secret_of_their_namespace():
    """Clusterpedia's synchro manager lists its namespace's Secrets (an informer: no resourceNames); the spec names
    it (namespaceSecretReaders). Near variants: not named, or named but reading another namespace's Secrets."""
    assert not run(compliant()).of("rbac-no-namespace-secret-read")
    unnamed = {k: v for k, v in FIXTURE_CONFIG.items() if k != "namespaceSecretReaders"}
    (finding,) = run(compliant(), PackSettings().merged(unnamed, ALL_RULES)).of("rbac-no-namespace-secret-read")
    assert "clusterpedia-clustersynchro-manager" in finding.message
    elsewhere = compliant()
    p(elsewhere, ":RoleBinding", "clusterpedia-clustersynchro-manager")["subjects"][0]["namespace"] = "other"
    assert run(elsewhere).of("rbac-no-namespace-secret-read")


def test_search_rules_leave_other_namespaces_and_the_reader_alone():
    """Near variants that pass: an APIService of another namespace that skips verification is not Clusterpedia's
    (other rules' business), and the members' reader is judged by search-reader-read-only."""
    resources = compliant()
    p(resources, ":APIService", "v1beta1.clusterpedia.io")["spec"]["service"]["namespace"] = "keda"
    p(resources, ":APIService", "v1beta1.clusterpedia.io")["spec"]["insecureSkipTLSVerify"] = True
    assert not run(resources).of("search-api-verified")
    assert not run(compliant()).of("search-index-least-privilege")


def test_kserve_merges_the_predictor_onto_its_runtime_strategically():
    """A partial securityContext or env in the predictor adds to the runtime container; it does not replace it."""
    resources = compliant()
    model(resources)["securityContext"] = {"readOnlyRootFilesystem": True}
    model(resources)["env"] = [{"name": "VLLM_LOGGING_LEVEL", "value": "INFO"}]
    runtime_container(resources)["env"] = [{"name": "HF_HOME", "value": "/mnt/models"}]
    assert run(resources).findings == []
    [merged] = [c for c in workload(find(resources, ":InferenceService", "llama-70b"), Stack(resources)).containers]
    assert merged["securityContext"] == {"runAsNonRoot": True, "runAsUser": 1000, "allowPrivilegeEscalation": False,
                                         "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True}  # fmt: skip
    assert [e["name"] for e in merged["env"]] == ["HF_HOME", "VLLM_LOGGING_LEVEL"]
    assert merged["args"][:2] == ["--port=8080", "--model=/mnt/models"]  # runtime's first, then the predictor's
    model(resources)["securityContext"] = {"privileged": True}
    assert {f.policy for f in run(resources).findings} == {"k8s-no-privileged"}


def test_karmada_members_run_the_template_with_their_overrides():
    resources = compliant()
    stack = Stack(resources)
    [copy] = [r for r in stack.resources if r.propagated]
    assert (copy.cluster, copy.props["data"], copy.label) == (
        "fx-eks",
        {"region": "use1"},
        "ConfigMap inference/routing (propagated to fx-eks)",
    )
    assert find(resources, ":ConfigMap", "routing").props["data"] == {"region": "any"}  # the template is untouched
    rule = p(resources, ":OverridePolicy", "routing-eks")["spec"]["overrideRules"][0]
    rule["overriders"]["plaintext"].append(
        {"operator": "add", "path": "/data/token", "value": "ghp_" + "x7Kq2mZ9vR4tY8wP1sN6bV3cL5hJ0dF2gA9e"}
    )
    assert {f.policy for f in run(resources).findings} == {"no-plaintext-secrets"}
    rule["targetCluster"]["clusterNames"] = ["elsewhere"]  # not this member: its copy is the template
    assert next(r for r in Stack(resources).resources if r.propagated).props["data"] == {"region": "any"}


def test_helm_values_that_are_fine_pass():
    resources = compliant()
    _values(
        resources,
        {
            "validator": {"image": "nvcr.io/nvidia/validator@sha256:" + "a" * 64},
            "operator": {"image": {"repository": "nvidia/gpu-operator", "tag": "v26.7.0"}},
            "daemonsets": {"privileged": True, "hostPath": "/run/nvidia"},  # the GPU operator's namespace may
            "service": {"type": "LoadBalancer", "annotations": {"networking.gke.io/load-balancer-type": "Internal"}},
            "grafana": {"admin": {"existingSecret": "grafana-admin"}},
        },
    )
    assert run(resources).findings == []


def test_flex_start_pools_named_by_the_spec_need_not_auto_repair():
    resources = compliant()
    pool(resources)["management"]["autoRepair"] = False
    pool(resources)["nodeConfig"]["flexStart"] = True
    assert {f.policy for f in run(resources).findings} == {"node-auto-repair"}
    named = SETTINGS.merged({"noAutoRepairPools": ["h200"]}, ALL_RULES)
    assert run(resources, named).findings == []
    pool(resources)["nodeConfig"]["flexStart"] = False  # named, but not flex-start: repair is required
    assert {f.policy for f in run(resources, named).findings} == {"node-auto-repair"}


# --- issue 31: NVIDIA_VISIBLE_DEVICES and pods that controllers create -----------------------------------------


def test_visible_devices_that_expose_no_gpu_or_in_the_gpu_stack_pass():
    """void and none expose no device; the GPU stack's privileged namespaces may set it (their pods see all GPUs)."""
    for value in ("void", "none", "NONE"):
        rs = compliant()
        model(rs).setdefault("env", []).append({"name": "NVIDIA_VISIBLE_DEVICES", "value": value})
        assert not run(rs).of("gpu-visible-devices-from-the-device-plugin"), value
    rs = compliant()
    props = copy.deepcopy(p(rs, ":Deployment", "redis"))
    props["metadata"]["namespace"] = "gpu-operator"
    props["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]
    added(rs, find(rs, ":Deployment", "redis"), "gpu-stack-daemon", props)
    assert not run(rs).of("gpu-visible-devices-from-the-device-plugin")
    # a custom resource's env map (Fluid's runtimes) outside those namespaces is caught like an env list
    runtime = copy.deepcopy(p(rs, ":AlluxioRuntime", "alluxio-runtime"))
    runtime["metadata"]["namespace"] = "inference"
    runtime["spec"]["fuse"]["env"] = {"NVIDIA_VISIBLE_DEVICES": "all"}
    added(rs, find(rs, ":AlluxioRuntime", "alluxio-runtime"), "runtime-elsewhere", runtime)
    (finding,) = run(rs).of("gpu-visible-devices-from-the-device-plugin", "violation")
    assert "container fuse sets NVIDIA_VISIBLE_DEVICES='all'" in finding.message


def test_containers_on_gpu_nodes_without_a_gpu_set_void_or_pass_where_they_cannot_land():
    """Near variants of the failing cases: a GPU-node pod whose every non-GPU container says void passes, as do a
    container requesting a MIG profile (the device plugin sets the variable), the pod without the GPU toleration or
    with tolerations that do not match the GPU taint (another value, another effect: Kubernetes' ToleratesTaint), and a
    chart tolerating the GPU taint in the GPU stack's namespaces; tolerating every taint is tolerating the GPU's."""
    rule = "gpu-visible-devices-from-the-device-plugin"
    rs = compliant()
    _gpu_node_redis(rs)
    assert not run(rs).of(rule)
    rs = compliant()
    _gpu_node_redis(rs)["initContainers"][0]["env"] = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": " void "}]
    assert not run(rs).of(rule)
    rs = compliant()
    pod = _gpu_node_redis(rs)
    pod["initContainers"].append({"name": "mig", "resources": {"limits": {"nvidia.com/mig-3g.40gb": 1}}})
    assert not run(rs).of(rule)
    for tolerations in (
        None,
        [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "absent", "effect": "NoSchedule"}],
        [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}],
        [{"key": "dedicated", "operator": "Exists"}],
    ):
        rs = compliant()
        pod = _gpu_node_redis(rs)
        pod["initContainers"].append({"name": "warm-up"})
        if tolerations is None:
            del pod["tolerations"]
        else:
            pod["tolerations"] = tolerations
        assert not run(rs).of(rule), tolerations
    for tolerations in (
        [{"operator": "Exists"}],  # every taint, the GPU pools' included
        [{"operator": "Exists", "effect": "NoSchedule"}],
        [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        [{"key": "nvidia.com/gpu", "value": "present"}],  # an empty operator is Equal
    ):
        rs = compliant()
        pod = _gpu_node_redis(rs)
        pod["initContainers"].append({"name": "warm-up"})
        pod["tolerations"] = tolerations
        (finding,) = run(rs).of(rule, "violation")
        assert "container warm-up (spec.template.spec.initContainers) may run on a GPU node" in finding.message
        assert "does not set NVIDIA_VISIBLE_DEVICES=void" in finding.message
    rs = compliant()
    release = p(rs, ":Release", "volcano")
    release["values"]["scheduler"] = {"tolerations": gpu_tolerations(), "env": {"NVIDIA_VISIBLE_DEVICES": "void"}}
    (finding,) = run(rs).of(rule, "violation")  # the chart may not render that env: its values cannot say
    assert "values scheduler tolerate the GPU taint" in finding.message
    release["namespace"] = "gpu-operator"
    assert not run(rs).of(rule)


def test_controller_made_pods_need_no_quota_off_gke_or_when_not_critical():
    rs = compliant()
    remove(rs, ":ResourceQuota", "cache-critical-pods")
    set_in(p(rs, ":Release", "fluid"), ("values", "runtime", "criticalFusePod"), False)
    assert not run(rs).of("gke-critical-controller-pods-quota")
    # the same runtime on EKS needs none: GKE's admission rule is GKE's
    rs = compliant()
    eks_runtime = find(rs, ":AlluxioRuntime", "alluxio-runtime")
    eks_release = find(rs, ":Release", "fluid")
    eks_runtime.provider = eks_release.provider = find(rs, ":InferenceService", "llama-70b").provider
    remove(rs, ":ResourceQuota", "cache-critical-pods")
    assert not run(rs).of("gke-critical-controller-pods-quota")
    # without the release in the stack, whether the pods are critical is unseen
    rs = compliant()
    remove(rs, ":Release", "fluid")
    (finding,) = run(rs).of("gke-critical-controller-pods-quota")
    assert finding.kind == "cannot-check"


@pytest.mark.parametrize(
    "limit",
    [
        {"clientSelectors": [{"headers": [{"name": "x-tenant-id", "type": "Distinct"}]}], "limit": {"requests": 9}},
        {**_PROBE_RULE, "cost": {"request": {"from": "Number", "number": 1}}},
        {**_PROBE_RULE, "shadowMode": False},
    ],
    ids=["a bucket per tenant", "an explicit cost of 1", "shadow mode off"],
)
def test_the_slo_tenants_request_limit_may_take_other_forms(limit):
    resources = compliant()
    p(resources, ":BackendTrafficPolicy", "token-budgets")["spec"]["rateLimit"]["global"]["rules"][1] = limit
    assert not run(resources).of("rollout-slo-tenant-least-privilege")


def test_no_slo_tenant_no_finding():
    """Without rollout.slo (no rolloutSloTenant) the rule has nothing to judge, whatever the routes admit."""
    resources = compliant()
    _admit_probe(resources, PROBE)
    without = PackSettings().merged({"production": True, "labelDomain": FIXTURE_CONFIG["labelDomain"]}, ALL_RULES)
    assert not run(resources, without).of("rollout-slo-tenant-least-privilege")
    assert run(resources).of("rollout-slo-tenant-least-privilege")


def _rbac(kind: str, name: str, provider: str | None, **props: Any) -> Resource:
    return Resource(
        urn=f"urn:pulumi:s::p::kubernetes:rbac.authorization.k8s.io/v1:{kind}::{name}-{provider}",
        type=f"kubernetes:rbac.authorization.k8s.io/v1:{kind}",
        name=name,
        props={"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": {"name": name}, **props},
        provider=f"urn:pulumi:s::p::pulumi:providers:kubernetes::{provider}" if provider else None,
    )


@pytest.mark.parametrize(
    ("binding_cluster", "role_cluster", "found"),
    [("member-a", "member-a", True), ("member-a", "member-b", False), (None, "member-a", False), (None, None, True)],
)
def test_a_binding_grants_the_role_of_its_own_cluster_only(binding_cluster, role_cluster, found):
    """A role of the same name in another cluster (or in a cluster where the binding names none) is not the one the
    binding's API server resolves: what it grants is unknown."""
    from policies.framework import Context
    from policies.rules.federation import bound_rules

    role = _rbac(
        "ClusterRole", "reader", role_cluster, rules=[{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    )
    binding = _rbac("ClusterRoleBinding", "readers", binding_cluster, roleRef={"kind": "ClusterRole", "name": "reader"})
    with_stack = Context({}, Stack([role, binding]))
    _, rules = bound_rules(binding, with_stack)
    assert (rules is not None) is found


@pytest.mark.parametrize(
    ("asked", "expected"), [("member-a", ["member-a"]), (None, [None]), ("member-c", [])], ids=["a", "none", "other"]
)
def test_a_lookup_by_cluster_finds_that_cluster_s_objects_and_none_finds_only_objects_without_a_provider(
    asked, expected
):
    """An object's neighbours are looked up with its own cluster; one without a provider (None) is no wildcard."""
    roles = [_rbac("ClusterRole", "reader", cluster) for cluster in ("member-a", "member-b", None)]
    stack = Stack(roles)
    assert [r.cluster for r in stack.kubernetes("ClusterRole", "rbac.authorization.k8s.io", asked)] == expected
    assert sorted(map(str, (r.cluster for r in stack.kubernetes("ClusterRole", "rbac.authorization.k8s.io")))) == [
        "None",
        "member-a",
        "member-b",
    ]
