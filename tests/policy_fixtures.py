"""A compliant stack for the policy tests, built with the real provider SDKs under the plan's mocks.

Cloud resources go through pulumi_aws / pulumi_gcp / pulumi_kubernetes, so their inputs are
recorded exactly as the engine (and CrossGuard) sees them, property dependencies included;
custom resources use the upstream CRD shapes (tests/test_policy_rules.py validates them
against conformance/upstream). Every rule passes on this stack; each test mutates one thing.
"""

from __future__ import annotations

import base64
import json
import pickle
import warnings
from collections.abc import Callable
from functools import cache

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import pulumi_random as random
import pulumi_tls as tls
import yaml

from components.aws.eks import CONTROL_PLANE_LOG_TYPES
from components.aws.irsa import IrsaRoleArgs, irsa_role
from components.aws.policy_docs import service_trust
from components.config.region import (
    AwsGpuPoolSpec,
    GcpGpuPoolSpec,
    GpuPoolSpec,
)
from components.federation.search_index import synchro_manager_pod
from components.k8s.names import MODEL_SERVER_SERVICE_ACCOUNT
from components.k8s.topology import gpu_pool_labels, gpu_tolerations, pool_selector
from platform_catalog.machines import MACHINES
from platform_catalog.names import SERVING_NAMESPACE, annotation
from platform_catalog.request_priority import PRIORITY_LUA
from platform_catalog.topology import GPU_TAINT
from policies.model import Resource, normalize
from policies.offline import plan_resources
from tests import plan_store
from tests.harness import evaluate_program

EKS = "fx-eks"
GKE = "fx-gke"
KARMADA = "fx-karmada"
DOMAIN = "inference-platform.io"
GATEWAY_NS = "ai-gateway"
# The SLO gate's tenant (rollout.slo.tenant) and what it tests: search, admitted to llama-70b alone, request-limited.
CONFIG = {
    "production": True,
    "labelDomain": DOMAIN,
    "rolloutSloTenant": "search",
    "rolloutSloModels": ["llama-70b"],
    "namespaceSecretReaders": ["clusterpedia-system/clusterpedia-clustersynchro-manager"],
}
TAINT = [{"key": GPU_TAINT.key, "value": GPU_TAINT.value, "effect": "NO_SCHEDULE"}]
PROTECTED = pulumi.ResourceOptions(protect=True, retain_on_delete=True)
VLLM_IMAGE = "vllm/vllm-openai:v0.11.0"
TOKENIZER = {"requests": {"cpu": "256m", "memory": "500Mi"}, "limits": {"cpu": "1", "memory": "2Gi"}}
MIG_PARTED = {
    "version": "v1",
    "mig-configs": {
        "custom-mixed": [
            {"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}}
        ]
    },
}
SIZING = {
    "gpu-product": "H100-80GB",
    "gpu-memory-gib": "79.64",  # what an H100 80GB reports: 81559 MiB
    "tensor-parallel": "4",
    "pipeline-parallel": "1",
    "weights-gib": "140",
    "kv-cache-gib": "100",
    "estimated-load-seconds": "600",
    "fp8-capable": "true",
}


PD_SIZING = {
    "kv-transfer": "efa",
    "prefill-gpu-product": "H100-80GB",
    "kv-transfer-bytes-per-prompt": "671088640",
    "kv-transfer-gbps": "1600",
    "ttft-objective-seconds": "2.5",
}


def _labels(cluster: str, name: str, machine_type: str) -> dict[str, str]:
    """The labels of a pool that uses its machine's fabric (EFA / GPUDirect) where it has one."""
    machine = MACHINES[machine_type]
    pool: GpuPoolSpec
    if machine.cloud == "aws":
        pool = AwsGpuPoolSpec(name=name, machine_type=machine_type, max_size=4, efa=bool(machine.efa_interfaces))
    else:
        pool = GcpGpuPoolSpec(name=name, machine_type=machine_type, max_size=4, gpu_direct=machine.gpudirect != "none")
    return gpu_pool_labels(DOMAIN, cluster, pool)


def _tls_only(arn: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "DenyPlainHttp",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": [arn, f"{arn}/*"],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ],
        }
    )


def _read_models(arn: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": f"{arn}/models/*"},
                {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": arn},
                {"Effect": "Allow", "Action": ["ec2:DescribeInstances"], "Resource": "*"},
            ],
        }
    )


def _aws(group: pulumi.Resource) -> aws.iam.Role:
    key = aws.kms.Key("models-key", enable_key_rotation=True, deletion_window_in_days=30, opts=PROTECTED)
    bucket = aws.s3.Bucket("models", bucket="fx-models", opts=PROTECTED)
    aws.s3.BucketPublicAccessBlock(
        "models",
        bucket=bucket.id,
        block_public_acls=True,
        block_public_policy=True,
        ignore_public_acls=True,
        restrict_public_buckets=True,
    )
    aws.s3.BucketServerSideEncryptionConfiguration(
        "models",
        bucket=bucket.id,
        rules=[
            {
                "apply_server_side_encryption_by_default": {"sse_algorithm": "aws:kms", "kms_master_key_id": key.arn},
                "bucket_key_enabled": True,
            }
        ],
    )
    aws.s3.BucketVersioning("models", bucket=bucket.id, versioning_configuration={"status": "Enabled"})
    aws.s3.BucketOwnershipControls("models", bucket=bucket.id, rule={"object_ownership": "BucketOwnerEnforced"})
    aws.s3.BucketPolicy("models", bucket=bucket.id, policy=bucket.arn.apply(_tls_only))

    cluster = aws.eks.Cluster(
        "eks",
        name=EKS,
        role_arn="arn:aws:iam::123456789012:role/eks",
        vpc_config={
            "subnet_ids": ["subnet-a", "subnet-b"],
            "endpoint_private_access": True,
            "endpoint_public_access": False,
        },
        encryption_config={"provider": {"key_arn": key.arn}, "resources": ["secrets"]},
        enabled_cluster_log_types=list(CONTROL_PLANE_LOG_TYPES),
        opts=PROTECTED,
    )
    issuer = cluster.identities.apply(lambda ids: ids[0]["oidcs"][0]["issuer"])
    oidc = aws.iam.OpenIdConnectProvider("oidc", url=issuer, client_id_lists=["sts.amazonaws.com"])
    node_role = aws.iam.Role("node", assume_role_policy=service_trust("ec2.amazonaws.com"))
    aws.iam.RolePolicyAttachment(
        "node-worker", role=node_role.name, policy_arn="arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"
    )
    aws.iam.Policy("model-read", policy=bucket.arn.apply(_read_models))
    model_server = irsa_role(
        "model-server",
        IrsaRoleArgs(
            oidc_provider_arn=oidc.arn,
            oidc_issuer_url=issuer,
            namespace=SERVING_NAMESPACE,
            service_account=MODEL_SERVER_SERVICE_ACCOUNT,
            inline_policy=bucket.arn.apply(_read_models),
        ),
        parent=group,
    )

    efa = aws.ec2.SecurityGroup(
        "efa",
        vpc_id="vpc-1",
        ingress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "self": True}],
        egress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "cidr_blocks": ["0.0.0.0/0"]}],
    )
    aws.vpc.SecurityGroupIngressRule(
        "https", security_group_id=efa.id, cidr_ipv4="10.0.0.0/16", from_port=443, to_port=443, ip_protocol="tcp"
    )
    zone_a = aws.ec2.Subnet(
        "gpu-a", vpc_id="vpc-1", cidr_block="10.0.0.0/20", availability_zone="us-east-1a", map_public_ip_on_launch=False
    )
    aws.ec2.Subnet("gpu-b", vpc_id="vpc-1", cidr_block="10.0.16.0/20", availability_zone="us-east-1b")
    group_h100 = aws.ec2.PlacementGroup("h100", name=f"{EKS}-h100", strategy="cluster")
    template = aws.ec2.LaunchTemplate(
        "h100",
        user_data=base64.b64encode(NODE_USER_DATA.encode()).decode(),
        metadata_options={"http_endpoint": "enabled", "http_tokens": "required", "http_put_response_hop_limit": 1},
        block_device_mappings=[
            {"device_name": "/dev/xvda", "ebs": {"volume_size": 200, "volume_type": "gp3", "encrypted": "true"}}
        ],
        placement={"group_name": group_h100.name},
        network_interfaces=[
            {"network_card_index": 0, "device_index": 0, "interface_type": "interface", "security_groups": [efa.id]},
            {"network_card_index": 0, "device_index": 1, "interface_type": "efa-only", "security_groups": [efa.id]},
        ],
    )
    aws.eks.NodeGroup(
        "h100",
        cluster_name=cluster.name,
        node_role_arn=node_role.arn,
        subnet_ids=[zone_a.id],
        instance_types=["p5.48xlarge"],
        ami_type="AL2023_x86_64_NVIDIA",
        release_version="1.33.13-20260714",
        scaling_config={"min_size": 1, "max_size": 4, "desired_size": 1},
        taints=TAINT,
        labels={**_labels(EKS, "h100", "p5.48xlarge"), "nvidia.com/mig.config": "all-3g.40gb"},
        launch_template={"id": template.id, "version": template.latest_version.apply(str)},
        node_repair_config={"enabled": True},
    )

    return model_server


# nodeadm's NodeConfig as EKS's launch template user data carries it (amazon-eks-ami nodeadm/doc/examples.md): the
# instance-store RAID0 array and parallel image pulls.
NODE_USER_DATA = """MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="BOUNDARY"

--BOUNDARY
Content-Type: application/node.eks.aws

---
apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  instance:
    localStorage:
      strategy: RAID0
  featureGates:
    FastImagePull: true

--BOUNDARY--
"""


def _node_config(account: pulumi.Output[str]) -> dict:
    return {
        "service_account": account,
        "oauth_scopes": ["https://www.googleapis.com/auth/cloud-platform"],
        "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
        "workload_metadata_config": {"mode": "GKE_METADATA"},
    }


def _gcp() -> gcp.container.Cluster:
    account = gcp.serviceaccount.Account("nodes", account_id="fx-nodes", project="p").email
    cluster = gcp.container.Cluster(
        "gke",
        name=GKE,
        project="p",
        location="us-central1",
        private_cluster_config={
            "enable_private_nodes": True,
            "enable_private_endpoint": True,
            "master_ipv4_cidr_block": "172.16.0.0/28",
        },
        master_authorized_networks_config={"cidr_blocks": [{"cidr_block": "10.30.0.0/20", "display_name": "nodes"}]},
        workload_identity_config={"workload_pool": "p.svc.id.goog"},
        enable_shielded_nodes=True,
        remove_default_node_pool=True,
        initial_node_count=1,
        node_config=_node_config(account),
        deletion_protection=True,
        opts=PROTECTED,
    )
    for name, machine_type, accelerator, extra in (
        ("h200", "a3-ultragpu-8g", {"type": "nvidia-h200-141gb", "count": 8}, {}),
        (
            "a100-mig",
            "a2-ultragpu-1g",
            {"type": "nvidia-a100-80gb", "count": 1},
            {"nvidia.com/mig.config": "custom-mixed"},
        ),
    ):
        fabric = name == "h200"
        gcp.container.NodePool(
            name,
            name=name,
            project="p",
            location="us-central1",
            cluster=cluster.name,
            node_locations=["us-central1-b"] if fabric else ["us-central1-a", "us-central1-b"],
            placement_policy={"type": "COMPACT"} if fabric else None,
            management={"auto_repair": True, "auto_upgrade": True},
            node_config={
                **_node_config(account),
                "machine_type": machine_type,
                "guest_accelerators": [accelerator],
                "labels": {**_labels(GKE, name, machine_type), **extra},
                "taints": TAINT,
            },
        )
    bucket = gcp.storage.Bucket(
        "models-gcs",
        name="fx-models",
        location="US-CENTRAL1",
        uniform_bucket_level_access=True,
        public_access_prevention="enforced",
        versioning={"enabled": True},
        encryption={"default_kms_key_name": "projects/p/locations/us-central1/keyRings/fx/cryptoKeys/models"},
        opts=PROTECTED,
    )
    gcp.storage.BucketIAMMember(
        "models-reader",
        bucket=bucket.name,
        role="roles/storage.objectViewer",
        member="serviceAccount:ms@p.iam.gserviceaccount.com",
    )
    server = gcp.serviceaccount.Account("model-server", account_id="fx-model-server", project="p")
    gcp.serviceaccount.IAMMember(
        "model-server-wi",
        service_account_id=server.name,
        role="roles/iam.workloadIdentityUser",
        member=f"serviceAccount:p.svc.id.goog[{SERVING_NAMESPACE}/{MODEL_SERVER_SERVICE_ACCOUNT}]",
    )
    gcp.compute.Firewall(
        "gvnic-internal",
        network="projects/p/networks/gvnic0",
        direction="INGRESS",
        source_ranges=["192.168.0.0/16"],
        allows=[{"protocol": "tcp"}, {"protocol": "udp"}],
    )
    ring = gcp.kms.KeyRing("ring", name="fx", location="us-central1", project="p", opts=PROTECTED)
    gcp.kms.CryptoKey("models", name="models", key_ring=ring.id, rotation_period="7776000s", opts=PROTECTED)
    return cluster


def _critical_quota(name: str, namespace: str, classes: list[str], opts: pulumi.ResourceOptions) -> None:
    """The quota GKE needs in `namespace` to admit pods of these priority classes."""
    k8s.core.v1.ResourceQuota(
        name,
        metadata={"name": "critical-pods", "namespace": namespace},
        spec={
            "hard": {"pods": "1G"},
            "scopeSelector": {
                "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": classes}]
            },
        },
        opts=opts,
    )


def _gke_critical_pods(gke: k8s.Provider) -> None:
    """Volcano on GKE: its templates run system-cluster-critical pods, admitted by the namespace's quota."""
    opts = pulumi.ResourceOptions(provider=gke)
    k8s.core.v1.Namespace(
        "ns-volcano-system",
        metadata={"name": "volcano-system", "labels": {"pod-security.kubernetes.io/enforce": "baseline"}},
        opts=opts,
    )
    _critical_quota("critical-pods", "volcano-system", ["system-node-critical", "system-cluster-critical"], opts)
    k8s.helm.v3.Release(
        "volcano",
        name="volcano",
        chart="volcano",
        version="1.15.0",
        namespace="volcano-system",
        repository_opts={"repo": "https://volcano-sh.github.io/helm-charts"},
        values={"basic": {"image_tag_version": "v1.15.1"}},
        opts=opts,
    )


_SECURE = {
    "runAsNonRoot": True,
    "runAsUser": 1000,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
}


def _cr(name: str, api_version: str, kind: str, metadata: dict, spec: dict, provider: k8s.Provider):
    return k8s.apiextensions.CustomResource(
        name,
        api_version=api_version,
        kind=kind,
        metadata=metadata,
        spec=spec,
        opts=pulumi.ResourceOptions(provider=provider),
    )


def _serving(eks: k8s.Provider) -> None:
    opts = pulumi.ResourceOptions(provider=eks)
    for ns, level in ((SERVING_NAMESPACE, "baseline"), ("gpu-operator", "privileged"), (GATEWAY_NS, "restricted")):
        k8s.core.v1.Namespace(
            f"ns-{ns}",
            metadata={"name": ns, "labels": {"pod-security.kubernetes.io/enforce": level}},
            opts=opts,
        )
    _cr(
        "vllm-runtime",
        "serving.kserve.io/v1alpha1",
        "ClusterServingRuntime",
        {"name": "vllm-runtime"},
        {
            "supportedModelFormats": [{"name": "vLLM", "version": "1", "autoSelect": True}],
            "containers": [
                {
                    "name": "kserve-container",
                    "image": VLLM_IMAGE,
                    "command": ["python", "-m", "vllm.entrypoints.openai.api_server"],
                    "args": ["--port=8080", "--model=/mnt/models"],
                    "securityContext": _SECURE,
                    "resources": {"requests": {"cpu": "4", "memory": "32Gi"}, "limits": {"cpu": "8", "memory": "64Gi"}},
                    "readinessProbe": {"httpGet": {"path": "/v1/models", "port": 8080}, "periodSeconds": 10},
                    "livenessProbe": {"httpGet": {"path": "/health", "port": 8080}, "periodSeconds": 30},
                    "startupProbe": {"httpGet": {"path": "/health", "port": 8080}, "failureThreshold": 30},
                    "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
                }
            ],
            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}],
        },
        eks,
    )
    _cr(
        "llama-70b",
        "serving.kserve.io/v1beta1",
        "InferenceService",
        {
            "name": "llama-70b",
            "namespace": SERVING_NAMESPACE,
            "annotations": {annotation(k): v for k, v in SIZING.items()},
        },
        {
            "predictor": {
                "minReplicas": 1,
                "maxReplicas": 4,
                "serviceAccountName": MODEL_SERVER_SERVICE_ACCOUNT,
                "nodeSelector": pool_selector(DOMAIN, "h100"),
                "tolerations": gpu_tolerations(),
                "model": {
                    "modelFormat": {"name": "vLLM"},
                    "runtime": "vllm-runtime",
                    "storageUri": "s3://fx-models/models/llama-70b/",
                    "args": ["--tensor-parallel-size=4", "--kv-cache-dtype=fp8"],
                    "resources": {
                        "requests": {"cpu": "16", "memory": "256Gi", "nvidia.com/gpu": "4"},
                        "limits": {"cpu": "32", "memory": "512Gi", "nvidia.com/gpu": "4"},
                    },
                    "startupProbe": {
                        "httpGet": {"path": "/health", "port": 8080},
                        "periodSeconds": 10,
                        "failureThreshold": 90,
                    },
                },
            }
        },
        eks,
    )

    def pd_pool(role: str) -> dict:  # decode (kv_consumer) pods carry KServe's routing sidecar
        kv = {
            "kv_connector": "NixlConnector",
            "kv_role": role,
            "kv_connector_extra_config": {"backends": ["LIBFABRIC"]},
        }
        amounts = {"cpu": "16", "memory": "256Gi", "nvidia.com/gpu": "4", "vpc.amazonaws.com/efa": "16"}
        sidecar = {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "250m", "memory": "256Mi"}}
        void = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}]  # no GPU of its own on a GPU node
        return {
            "nodeSelector": pool_selector(DOMAIN, "h100"),
            "tolerations": gpu_tolerations(),
            **(
                {"initContainers": [{"name": "llm-d-routing-sidecar", "resources": sidecar, "env": void}]}
                if role == "kv_consumer"
                else {"automountServiceAccountToken": False}
            ),
            "containers": [
                {
                    "name": "main",
                    "args": ["--tensor-parallel-size=4", "--kv-transfer-config=" + json.dumps(kv)],
                    "resources": {"requests": amounts, "limits": dict(amounts)},
                }
            ],
        }

    _cr(
        "llama-70b-pd",
        "serving.kserve.io/v1alpha2",
        "LLMInferenceService",
        {
            "name": "llama-70b-pd",
            "namespace": SERVING_NAMESPACE,
            # 70B at TP 4 on both H100 pools over EFA: a 4k-token FP8 prompt (671,088,640 B) at 4 x 400 Gbps, 3.4 ms
            # of a 2.5 s TTFT objective.
            "annotations": {
                **{annotation(k): v for k, v in SIZING.items()},
                **{annotation(k): v for k, v in PD_SIZING.items()},
            },
        },
        {
            "model": {"uri": "pvc://models/models/llama-70b-pd", "name": "llama-70b-pd"},
            "replicas": 1,
            "template": pd_pool("kv_consumer"),
            "prefill": {"replicas": 1, "template": pd_pool("kv_producer")},
            # KServe's scheduler preset gives its tokenizer sidecar requests only: the template bounds it.
            "router": {"scheduler": {"template": {"containers": [{"name": "tokenizer", "resources": TOKENIZER}]}}},
        },
        eks,
    )
    k8s.policy.v1.PodDisruptionBudget(
        "llama-70b",
        metadata={"name": "llama-70b", "namespace": SERVING_NAMESPACE},
        spec={"maxUnavailable": 1, "selector": {"matchLabels": {"serving.kserve.io/inferenceservice": "llama-70b"}}},
        opts=opts,
    )
    _cr(
        "llama-70b-scaler",
        "keda.sh/v1alpha1",
        "ScaledObject",
        {"name": "llama-70b", "namespace": SERVING_NAMESPACE},
        {
            "scaleTargetRef": {"name": "llama-70b-predictor"},
            "minReplicaCount": 1,
            "maxReplicaCount": 4,
            "triggers": [
                {
                    "type": "prometheus",
                    "metadata": {
                        "serverAddress": "http://prometheus:9090",
                        "query": "vllm:num_requests_waiting",
                        "threshold": "5",
                    },
                }
            ],
        },
        eks,
    )
    labels = {"app": "redis"}
    k8s.apps.v1.Deployment(
        "redis",
        metadata={"name": "redis", "namespace": GATEWAY_NS},
        spec={
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 999},
                    "containers": [
                        {
                            "name": "redis",
                            "image": "redis:7.4.1",
                            "command": ["redis-server"],
                            "args": ["--requirepass", "$(REDIS_PASSWORD)"],
                            "env": [
                                {
                                    "name": "REDIS_PASSWORD",
                                    "valueFrom": {"secretKeyRef": {"name": "redis-auth", "key": "password"}},
                                }
                            ],
                            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                            "resources": {
                                "requests": {"cpu": "100m", "memory": "256Mi"},
                                "limits": {"cpu": "1", "memory": "512Mi"},
                            },
                            "readinessProbe": {"tcpSocket": {"port": 6379}},
                            "livenessProbe": {"exec": {"command": ["redis-cli", "ping"]}, "periodSeconds": 20},
                        }
                    ],
                },
            },
        },
        opts=opts,
    )
    k8s.policy.v1.PodDisruptionBudget(
        "redis",
        metadata={"name": "redis", "namespace": GATEWAY_NS},
        spec={"maxUnavailable": 1, "selector": {"matchLabels": labels}},
        opts=opts,
    )
    k8s.helm.v3.Release(
        "gpu-operator",
        name="gpu-operator",
        chart="gpu-operator",
        version="v26.7.0",
        namespace="gpu-operator",
        repository_opts={"repo": "https://helm.ngc.nvidia.com/nvidia"},
        values={"driver": {"enabled": False}, "toolkit": {"enabled": False}},
        opts=opts,
    )
    _access(eks)
    _gateway(eks)


def _access(eks: k8s.Provider) -> None:
    """RBAC, NetworkPolicy and Services as the platform writes them: least privilege, named callers."""
    opts = pulumi.ResourceOptions(provider=eks)
    rbac = "rbac.authorization.k8s.io"
    subjects = [{"kind": "ServiceAccount", "name": "epp", "namespace": SERVING_NAMESPACE}]
    k8s.rbac.v1.Role(
        "epp",
        metadata={"name": "epp", "namespace": SERVING_NAMESPACE},
        rules=[{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}],
        opts=opts,
    )
    k8s.rbac.v1.RoleBinding(
        "epp",
        metadata={"name": "epp", "namespace": SERVING_NAMESPACE},
        role_ref={"apiGroup": rbac, "kind": "Role", "name": "epp"},
        subjects=subjects,
        opts=opts,
    )
    k8s.rbac.v1.ClusterRole(
        "auth-reviewer",
        metadata={"name": "auth-reviewer"},
        rules=[{"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]}],
        opts=opts,
    )
    k8s.rbac.v1.ClusterRoleBinding(
        "auth-reviewer",
        metadata={"name": "auth-reviewer"},
        role_ref={"apiGroup": rbac, "kind": "ClusterRole", "name": "auth-reviewer"},
        subjects=subjects,
        opts=opts,
    )
    k8s.networking.v1.NetworkPolicy(
        "redis",
        metadata={"name": "redis", "namespace": GATEWAY_NS},
        spec={
            "podSelector": {"matchLabels": {"app": "redis"}},
            "policyTypes": ["Ingress"],
            "ingress": [
                {"from": [{"podSelector": {"matchLabels": {"app": "envoy"}}}], "ports": [{"port": 6379}]},
            ],
        },
        opts=opts,
    )
    k8s.core.v1.Service(
        "redis",
        metadata={"name": "redis", "namespace": GATEWAY_NS},
        spec={"selector": {"app": "redis"}, "ports": [{"port": 6379}]},
        opts=opts,
    )
    k8s.core.v1.Service(
        "api-external",
        metadata={"name": "api-external", "namespace": GATEWAY_NS},
        spec={
            "type": "LoadBalancer",
            "selector": {"app": "api"},
            "ports": [{"port": 443}],
            "loadBalancerSourceRanges": ["203.0.113.0/24", "198.51.100.7/32"],
        },
        opts=opts,
    )


def _gateway(eks: k8s.Provider) -> None:
    gateway_ref = {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "ai-gateway"}
    meta = {"namespace": GATEWAY_NS}
    _cr(
        "ai-gateway",
        "gateway.networking.k8s.io/v1",
        "Gateway",
        {**meta, "name": "ai-gateway"},
        {
            "gatewayClassName": "envoy-ai-gateway",
            "listeners": [
                {
                    "name": "https",
                    "protocol": "HTTPS",
                    "port": 443,
                    "tls": {"mode": "Terminate", "certificateRefs": [{"name": "gateway-tls"}]},
                }
            ],
        },
        eks,
    )
    _cr(
        "llm-route",
        "aigateway.envoyproxy.io/v1beta1",
        "AIGatewayRoute",
        {**meta, "name": "llm"},
        {
            "parentRefs": [gateway_ref],
            "rules": [
                {
                    "matches": [
                        {
                            "headers": [
                                {"type": "Exact", "name": "x-ai-eg-model", "value": "llama-70b"},
                                {"type": "Exact", "name": "x-tenant-id", "value": "search"},
                            ]
                        }
                    ],
                    "backendRefs": [
                        {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "llama-70b"}
                    ],
                }
            ],
            "llmRequestCosts": [{"metadataKey": "llm_total_token", "type": "TotalToken"}],
        },
        eks,
    )
    _cr(
        "tenant-auth",
        "gateway.envoyproxy.io/v1alpha1",
        "SecurityPolicy",
        {**meta, "name": "tenant-auth"},
        {
            "targetRefs": [gateway_ref],
            "apiKeyAuth": {
                "credentialRefs": [{"name": "tenant-keys"}],
                "extractFrom": [{"headers": ["x-api-key"]}],
                "forwardClientIDHeader": "x-tenant-id",
            },
        },
        eks,
    )
    _request_classes(eks, gateway_ref, meta)
    _cr(
        "token-budgets",
        "gateway.envoyproxy.io/v1alpha1",
        "BackendTrafficPolicy",
        {**meta, "name": "token-budgets"},
        {
            "targetRefs": [gateway_ref],
            "rateLimit": {
                "type": "Global",
                "global": {
                    "rules": [
                        {
                            "clientSelectors": [{"headers": [{"name": "x-tenant-id", "type": "Distinct"}]}],
                            "limit": {"requests": 1000000, "unit": "Hour"},
                            "cost": {
                                "request": {"from": "Number", "number": 0},
                                "response": {
                                    "from": "Metadata",
                                    "metadata": {"namespace": "io.envoy.ai_gateway", "key": "llm_total_token"},
                                },
                            },
                        },
                        {  # requests of the SLO gate's tenant: no request cost, 1 each
                            "clientSelectors": [
                                {"headers": [{"name": "x-tenant-id", "type": "Exact", "value": "search"}]}
                            ],
                            "limit": {"requests": 600, "unit": "Minute"},
                        },
                    ]
                },
            },
        },
        eks,
    )


def _request_classes(eks: k8s.Provider, gateway_ref: dict, meta: dict) -> None:
    """The Gateway drops the picker's control headers a client sends; the platform's Lua names the route's tenant's
    objective of the pool (components/serving/priority_classes.py)."""
    _cr(
        "client-traffic",
        "gateway.envoyproxy.io/v1alpha1",
        "ClientTrafficPolicy",
        {**meta, "name": "client-traffic"},
        {
            "targetRefs": [gateway_ref],
            # the picker's input control headers, each and its deprecated alias (llm-d/llm-d-router@v0.9.0:
            # pkg/epp/metadata/consts.go L33-44), by hand
            "headers": {
                "earlyRequestHeaders": {
                    "remove": [
                        "x-llm-d-inference-objective",
                        "x-gateway-inference-objective",
                        "x-llm-d-inference-fairness-id",
                        "x-gateway-inference-fairness-id",
                        "x-llm-d-model-name-rewrite",
                        "x-gateway-model-name-rewrite",
                    ]
                }
            },
        },
        eks,
    )
    _cr(
        "interactive-objective",
        "llm-d.ai/v1alpha2",
        "InferenceObjective",
        {**meta, "name": "llama-70b-interactive"},
        {"priority": 1, "poolRef": {"group": "inference.networking.k8s.io", "name": "llama-70b"}},
        eks,
    )
    _cr(
        "request-priority",
        "gateway.envoyproxy.io/v1alpha1",
        "EnvoyExtensionPolicy",
        {**meta, "name": "request-priority"},
        {
            "targetRefs": [gateway_ref],
            "lua": [
                {
                    "type": "Inline",
                    "inline": PRIORITY_LUA,
                    "filterContext": {"objectives": {"llama-70b": {"search": "llama-70b-interactive"}}},
                }
            ],
        },
        eks,
    )


def _federation(karmada: k8s.Provider) -> None:
    """A template in a Karmada control plane, placed on the EKS cluster with a per-member override."""
    meta = {"namespace": SERVING_NAMESPACE}
    k8s.core.v1.ConfigMap(
        "routing",
        metadata={**meta, "name": "routing"},
        data={"region": "any"},
        opts=pulumi.ResourceOptions(provider=karmada),
    )
    selector = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "routing"}]
    _cr(
        "routing-placement",
        "policy.karmada.io/v1alpha1",
        "PropagationPolicy",
        {**meta, "name": "routing"},
        {"resourceSelectors": selector, "placement": {"clusterAffinity": {"clusterNames": [EKS]}}},
        karmada,
    )
    _cr(
        "routing-eks",
        "policy.karmada.io/v1alpha1",
        "OverridePolicy",
        {**meta, "name": "routing-eks"},
        {
            "resourceSelectors": selector,
            "overrideRules": [
                {
                    "targetCluster": {"clusterNames": [EKS]},
                    "overriders": {"plaintext": [{"operator": "replace", "path": "/data/region", "value": "use1"}]},
                }
            ],
        },
        karmada,
    )


def _gke_cache(gke: k8s.Provider) -> None:
    """Fluid on GKE: its controller creates each AlluxioRuntime's system-node-critical FUSE pods in the runtime's
    namespace, admitted by that namespace's quota."""
    opts = pulumi.ResourceOptions(provider=gke)
    k8s.core.v1.Namespace(
        "ns-model-cache",
        metadata={"name": "model-cache", "labels": {"pod-security.kubernetes.io/enforce": "privileged"}},
        opts=opts,
    )
    _critical_quota("cache-critical-pods", "model-cache", ["system-node-critical"], opts)
    k8s.helm.v3.Release(
        "fluid",
        name="fluid",
        chart="fluid",
        version="1.0.8",
        namespace="fluid-system",
        repository_opts={"repo": "https://fluid-cloudnative.github.io/charts"},
        values={"runtime": {"alluxio": {"enabled": True}, "mountRoot": "/var/lib/docker/runtime-mnt"}},
        opts=opts,
    )
    k8s.apiextensions.CustomResource(
        "alluxio-runtime",
        api_version="data.fluid.io/v1alpha1",
        kind="AlluxioRuntime",
        metadata={"name": "models", "namespace": "model-cache"},
        spec={
            "replicas": 1,
            "master": {"networkMode": "ContainerNetwork"},
            "worker": {"networkMode": "ContainerNetwork"},
            "fuse": {"networkMode": "ContainerNetwork"},
            "tieredstore": {"levels": [{"mediumtype": "MEM", "path": "/dev/shm", "quota": "1Gi"}]},
        },
        opts=opts,
    )


def _isolation(eks: k8s.Provider, model_server_role: aws.iam.Role) -> None:
    """Model servers' identity and network isolation as the platform renders them, and a tenant's API key."""
    opts = pulumi.ResourceOptions(provider=eks)
    random.RandomPassword("tenant-key-search", length=48, special=False)
    k8s.core.v1.ServiceAccount(
        "model-server",
        metadata={
            "name": MODEL_SERVER_SERVICE_ACCOUNT,
            "namespace": SERVING_NAMESPACE,
            "annotations": {"eks.amazonaws.com/role-arn": model_server_role.arn},
        },
        automount_service_account_token=False,
        opts=opts,
    )
    k8s.networking.v1.NetworkPolicy(
        "default-deny",
        metadata={"name": "default-deny-ingress", "namespace": SERVING_NAMESPACE},
        spec={"podSelector": {}, "policyTypes": ["Ingress"], "ingress": []},
        opts=opts,
    )


AGENT = "fx-eks"  # the member whose karmada-agent the fixture certifies


KARMADA_CHART = {"chart": "oci://docker.io/karmada/karmada", "version": "v1.18.2", "namespace": "karmada-system"}


def _karmada_agent(karmada: k8s.Provider, host: k8s.Provider, member: k8s.Provider) -> None:
    """A pull member's agent: its certificate and its RBAC in Karmada, as karmadactl register issues them; the
    control plane's release with its own (CA-signed) server certificate, and the agent's release on its member."""
    opts = pulumi.ResourceOptions(provider=karmada)
    ca_key = tls.PrivateKey("karmada-ca-key", algorithm="RSA", rsa_bits=3072)
    ca = tls.SelfSignedCert(
        "karmada-ca",
        private_key_pem=ca_key.private_key_pem,
        subject={"common_name": "karmada-ca"},
        is_ca_certificate=True,
        validity_period_hours=87600,
        allowed_uses=["cert_signing", "crl_signing", "digital_signature", "key_encipherment"],
    )
    key = tls.PrivateKey("agent-key", algorithm="RSA", rsa_bits=3072)
    csr = tls.CertRequest(
        "agent-csr",
        private_key_pem=key.private_key_pem,
        subject={"common_name": f"system:karmada:agent:{AGENT}", "organization": "system:karmada:agents"},
    )
    server_key = tls.PrivateKey("karmada-server-key", algorithm="RSA", rsa_bits=3072)
    server = tls.LocallySignedCert(
        "karmada-server",
        cert_request_pem=tls.CertRequest(
            "karmada-server-csr",
            private_key_pem=server_key.private_key_pem,
            subject={"common_name": "system:admin", "organization": "system:masters"},
        ).cert_request_pem,
        ca_private_key_pem=ca_key.private_key_pem,
        ca_cert_pem=ca.cert_pem,
        validity_period_hours=43800,
        allowed_uses=["digital_signature", "key_encipherment", "server_auth", "client_auth"],
    )
    k8s.helm.v3.Release(
        "karmada",
        name="karmada",
        **KARMADA_CHART,
        values={"certs": {"mode": "custom", "custom": {"caCrt": ca.cert_pem, "crt": server.cert_pem}}},
        opts=pulumi.ResourceOptions(provider=host),
    )
    cert = tls.LocallySignedCert(
        "agent-cert",
        cert_request_pem=csr.cert_request_pem,
        ca_private_key_pem=ca_key.private_key_pem,
        ca_cert_pem=ca.cert_pem,
        validity_period_hours=8760,  # the year karmadactl register asks for (register.go L112-113)
        early_renewal_hours=2160,
        allowed_uses=["digital_signature", "key_encipherment", "client_auth"],
    )
    k8s.helm.v3.Release(
        "karmada-agent",
        name="karmada-agent",
        **KARMADA_CHART,
        values={"installMode": "agent", "agent": {"clusterName": AGENT, "kubeconfig": {"crt": cert.cert_pem}}},
        opts=pulumi.ResourceOptions(provider=member),
    )
    user = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": f"system:karmada:agent:{AGENT}"}]
    name = f"system:karmada:{AGENT}:agent"
    k8s.rbac.v1.ClusterRole(
        "agent",
        metadata={"name": name},
        rules=[
            {
                "apiGroups": ["cluster.karmada.io"],
                "resources": ["clusters"],
                "resourceNames": [AGENT],
                "verbs": ["get", "update", "delete"],
            },
            {"apiGroups": ["cluster.karmada.io"], "resources": ["clusters"], "verbs": ["create", "list", "watch"]},
            {
                "apiGroups": ["certificates.k8s.io"],
                "resources": ["certificatesigningrequests"],
                "verbs": ["get", "create"],
            },
        ],
        opts=opts,
    )
    k8s.rbac.v1.ClusterRoleBinding(
        "agent",
        metadata={"name": name},
        role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        subjects=user,
        opts=opts,
    )
    work = f"system:karmada:{AGENT}:agent-work"
    namespace = f"karmada-es-{AGENT}"
    k8s.rbac.v1.Role(
        "agent-work",
        metadata={"name": work, "namespace": namespace},
        rules=[{"apiGroups": ["work.karmada.io"], "resources": ["works"], "verbs": ["get", "list", "watch", "update"]}],
        opts=opts,
    )
    k8s.rbac.v1.RoleBinding(
        "agent-work",
        metadata={"name": work, "namespace": namespace},
        role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": work},
        subjects=user,
        opts=opts,
    )


def _search(eks: k8s.Provider) -> None:
    """Clusterpedia as the platform installs it: a list/watch reader, a PediaCluster naming its credentials Secret,
    the synchro manager with only what it calls (its storage configuration, password included, from a Secret file),
    the API server's delegated authentication, its APIService verified, the database volume protected."""
    opts = pulumi.ResourceOptions(provider=eks)
    rbac = "rbac.authorization.k8s.io"
    ns = "clusterpedia-system"
    k8s.core.v1.Namespace(
        ns, metadata={"name": ns, "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}, opts=opts
    )
    k8s.rbac.v1.ClusterRole(
        "clusterpedia-reader",
        metadata={"name": "clusterpedia-reader"},
        rules=[
            {"apiGroups": [""], "resources": ["pods", "nodes"], "verbs": ["list", "watch"]},
            {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["list"]},
        ],
        opts=opts,
    )
    k8s.rbac.v1.ClusterRoleBinding(
        "clusterpedia-reader",
        metadata={"name": "clusterpedia-reader"},
        role_ref={"apiGroup": rbac, "kind": "ClusterRole", "name": "clusterpedia-reader"},
        subjects=[{"kind": "ServiceAccount", "name": "clusterpedia-reader", "namespace": ns}],
        opts=opts,
    )
    synchro = "clusterpedia-clustersynchro-manager"
    apiserver = "clusterpedia-apiserver"
    for account in (synchro, apiserver):
        k8s.core.v1.ServiceAccount(account, metadata={"name": account, "namespace": ns}, opts=opts)
    k8s.rbac.v1.ClusterRole(
        synchro,
        metadata={"name": synchro},
        rules=[
            {
                "apiGroups": ["cluster.clusterpedia.io"],
                "resources": ["pediaclusters"],
                "verbs": ["list", "watch", "update"],
            },
            {"apiGroups": ["cluster.clusterpedia.io"], "resources": ["pediaclusters/status"], "verbs": ["update"]},
        ],
        opts=opts,
    )
    k8s.rbac.v1.ClusterRoleBinding(
        synchro,
        metadata={"name": synchro},
        role_ref={"apiGroup": rbac, "kind": "ClusterRole", "name": synchro},
        subjects=[{"kind": "ServiceAccount", "name": synchro, "namespace": ns}],
        opts=opts,
    )
    k8s.rbac.v1.Role(
        synchro,
        metadata={"name": synchro, "namespace": ns},
        rules=[
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["list", "watch"]},
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        ],
        opts=opts,
    )
    k8s.rbac.v1.RoleBinding(
        synchro,
        metadata={"name": synchro, "namespace": ns},
        role_ref={"apiGroup": rbac, "kind": "Role", "name": synchro},
        subjects=[{"kind": "ServiceAccount", "name": synchro, "namespace": ns}],
        opts=opts,
    )
    k8s.rbac.v1.ClusterRoleBinding(
        "clusterpedia-apiserver-auth-delegator",
        metadata={"name": "clusterpedia-apiserver-auth-delegator"},
        role_ref={"apiGroup": rbac, "kind": "ClusterRole", "name": "system:auth-delegator"},
        subjects=[{"kind": "ServiceAccount", "name": apiserver, "namespace": ns}],
        opts=opts,
    )
    k8s.rbac.v1.RoleBinding(
        "clusterpedia-apiserver-auth-reader",
        metadata={"name": "clusterpedia-apiserver-auth-reader", "namespace": "kube-system"},
        role_ref={"apiGroup": rbac, "kind": "Role", "name": "extension-apiserver-authentication-reader"},
        subjects=[{"kind": "ServiceAccount", "name": apiserver, "namespace": ns}],
        opts=opts,
    )
    k8s.apps.v1.Deployment(
        synchro,
        metadata={"name": synchro, "namespace": ns, "labels": {"app": synchro}},
        spec=synchro_manager_pod(DOMAIN),
        opts=opts,
    )
    k8s.networking.v1.NetworkPolicy(
        "clusterpedia-default-deny",
        metadata={"name": "default-deny-ingress", "namespace": ns},
        spec={"podSelector": {}, "policyTypes": ["Ingress"], "ingress": []},
        opts=opts,
    )
    k8s.apiregistration.v1.APIService(
        "v1beta1.clusterpedia.io",
        metadata={"name": "v1beta1.clusterpedia.io"},
        spec={
            "group": "clusterpedia.io",
            "version": "v1beta1",
            "groupPriorityMinimum": 1000,
            "versionPriority": 100,
            "service": {"name": apiserver, "namespace": ns, "port": 443},
            "caBundle": base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").decode(),
            "insecureSkipTLSVerify": False,
        },
        opts=opts,
    )
    _cr(
        "fx-eks",
        "cluster.clusterpedia.io/v1alpha2",
        "PediaCluster",
        {"name": "fx-eks"},
        {
            "apiserver": "https://kubernetes.default.svc",
            "authenticationFrom": {
                "token": {"name": "clusterpedia-reader-token", "key": "token"},
                "ca": {"name": "clusterpedia-reader-token", "key": "ca.crt"},
            },
            "syncResources": [{"group": "", "resources": ["pods", "nodes"]}],
        },
        eks,
    )
    k8s.core.v1.PersistentVolumeClaim(
        "clusterpedia-postgres",
        metadata={"name": "clusterpedia-postgres", "namespace": ns},
        spec={"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "20Gi"}}},
        opts=pulumi.ResourceOptions.merge(opts, PROTECTED),
    )


def _program() -> None:
    group = pulumi.ComponentResource("fixture:index:Group", "fixtures")
    model_server_role = _aws(group)
    cluster = _gcp()
    eks = k8s.Provider(EKS, kubeconfig="{}")
    gke = k8s.Provider(GKE, kubeconfig=cluster.endpoint.apply(lambda _: "{}"))  # configured from the cluster
    _serving(eks)
    _isolation(eks, model_server_role)
    _gke_critical_pods(gke)
    _gke_cache(gke)
    _search(eks)
    _federation(k8s.Provider(KARMADA, kubeconfig="{}"))
    karmada = k8s.Provider(KARMADA, kubeconfig="{}")
    _federation(karmada)
    _karmada_agent(karmada, eks, eks)
    k8s.core.v1.ConfigMap(
        "custom-mig-config",
        metadata={"name": "custom-mig-config", "namespace": "gpu-operator"},
        data={"config.yaml": yaml.safe_dump(MIG_PARTED)},
        opts=pulumi.ResourceOptions(provider=gke),
    )


@cache
def _recorded() -> bytes:
    """The stack's resources, pickled: unpickling makes a fresh copy 20 times faster than copy.deepcopy (0.8 ms
    against 16 ms), and the policy tests take one ~500 times. Evaluated once per session (tests/plan_store.py)."""
    return plan_store.shared(("policy fixtures",), _evaluated)


def _evaluated() -> bytes:
    with warnings.catch_warnings():
        # The SDKs warn about deprecated aliases (s3.BucketV2, ...) when their modules load; we use none.
        warnings.simplefilter("ignore", DeprecationWarning)
        resources = plan_resources(evaluate_program(_program, stack="fixtures"))
    return pickle.dumps(resources, protocol=pickle.HIGHEST_PROTOCOL)


def compliant() -> list[Resource]:
    """A fresh (deep-copied) compliant stack."""
    return pickle.loads(_recorded())


def find(resources: list[Resource], type_suffix: str, name: str) -> Resource:
    """The resource whose type ends with `type_suffix` (e.g. ":Bucket", "InferenceService") named `name`."""
    found = [r for r in resources if r.type.endswith(type_suffix) and r.name == name]
    assert len(found) == 1, f"{len(found)} resources {type_suffix} {name}"
    return found[0]


def added(resources: list[Resource], like: Resource, name: str, props: dict, **fields) -> Resource:
    """A new resource of the same type, provider and parent as `like` (e.g. a second policy)."""
    r = Resource(
        urn=like.urn.rsplit("::", 1)[0] + "::" + name,
        type=fields.pop("type", like.type),
        name=name,
        props=normalize(props),
        provider=like.provider,
        **fields,
    )
    resources.append(r)
    return r


Mutation = Callable[[list[Resource]], object]
