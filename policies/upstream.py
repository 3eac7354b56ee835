"""Upstream behaviour the pack's rules rely on, each fact with its source at the pinned version.

The pack carries these itself (it is meant to be published apart from the platform); the platform's own
catalog states the same facts, and tests/test_policy_classes.py compares both with the vendored upstream
files in conformance/upstream/.
"""

from __future__ import annotations

# --- KServe LLMInferenceService (v0.20.0) ------------------------------------------------------------------
# KServe merges each LLMInferenceService onto well-known LLMInferenceServiceConfig presets by a strategic merge
# (kserve/kserve@v0.20.0:pkg/controller/v1alpha2/llmisvc/config_merge.go, combineBaseRefsConfig L228-262 picks
# the preset, mergeSpecs L779-829 merges): config-llm-template without prefill, config-llm-decode-template and
# config-llm-prefill-template with it. Below, the pod fields of those presets the pod rules judge
# (config/llmisvcconfig/*.yaml at v0.20.0; command, env and probe details dropped).
_KSERVE_MAIN_SECURITY = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": False,
    "runAsNonRoot": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def _probe(port: int, path: str = "/health", **timing: int) -> dict:
    return {"httpGet": {"path": path, "port": port}, **timing}


def _kserve_main(port: int) -> dict:
    return {
        "name": "main",
        "image": "ghcr.io/llm-d/llm-d-cuda:v0.8.0",
        "ports": [{"containerPort": port, "protocol": "TCP"}],
        "securityContext": dict(_KSERVE_MAIN_SECURITY),
        "livenessProbe": _probe(port, periodSeconds=10, timeoutSeconds=1, failureThreshold=10),
        "readinessProbe": _probe(port, periodSeconds=1, timeoutSeconds=1, failureThreshold=2),
        "startupProbe": _probe(port, failureThreshold=60, periodSeconds=10),
    }


_KSERVE_VOLUMES = [
    {"name": "home", "emptyDir": {}},
    {"name": "tmp-dir", "emptyDir": {}},
    {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
    {"name": "model-cache", "emptyDir": {}},
    {"name": "tls-certs", "secret": {}},
]
KSERVE_ROUTING_SIDECAR = "llm-d-routing-sidecar"
# The decode preset's routing sidecar runs with `--inference-pool=<ns/name>` and trusts the ServiceAccount's CA
# (SSL_CERT_DIR .../serviceaccount): a Kubernetes API client, the one container of a model pod that needs a token.
KSERVE_API_CLIENT_CONTAINERS = frozenset({KSERVE_ROUTING_SIDECAR})
KSERVE_LLM_PRESETS: dict[str, dict] = {
    "kserve-config-llm-template": {"containers": [_kserve_main(8000)], "volumes": _KSERVE_VOLUMES},
    "kserve-config-llm-decode-template": {
        "containers": [_kserve_main(8001)],
        "initContainers": [
            {
                "name": KSERVE_ROUTING_SIDECAR,
                "image": "ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.9.0",
                "restartPolicy": "Always",
                "ports": [{"containerPort": 8000, "protocol": "TCP"}],
                "resources": {},
                "securityContext": {k: v for k, v in _KSERVE_MAIN_SECURITY.items() if k != "seccompProfile"},
                "livenessProbe": _probe(
                    8000, initialDelaySeconds=10, periodSeconds=10, timeoutSeconds=10, failureThreshold=3
                ),
                "readinessProbe": _probe(
                    8000, initialDelaySeconds=10, periodSeconds=10, timeoutSeconds=5, failureThreshold=10
                ),
            }
        ],
        "volumes": _KSERVE_VOLUMES,
    },
    "kserve-config-llm-prefill-template": {"containers": [_kserve_main(8000)], "volumes": _KSERVE_VOLUMES},
}
# The router's endpoint picker: KServe runs it when spec.router.scheduler is set without a pool ref, merging the
# spec onto config-llm-scheduler (config_merge.go L212-214), as a Deployment of `spec.router.scheduler.template`
# labelled SchedulerLabels and annotated with `scheduler.annotations` (scheduler.go L355-470, L1623-1629).
KSERVE_LLM_SCHEDULER_PRESET = "kserve-config-llm-scheduler"
_KSERVE_SCHEDULER_SECURITY = {**_KSERVE_MAIN_SECURITY, "readOnlyRootFilesystem": True}
KSERVE_LLM_PRESETS[KSERVE_LLM_SCHEDULER_PRESET] = {
    "containers": [
        {
            "name": "main",
            "image": "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0",
            "ports": [
                {"containerPort": 9002, "name": "grpc", "protocol": "TCP"},
                {"containerPort": 9003, "name": "grpc-health", "protocol": "TCP"},
                {"containerPort": 9090, "name": "metrics", "protocol": "TCP"},
                {"containerPort": 5557, "name": "zmq", "protocol": "TCP"},
            ],
            "resources": {"limits": {"cpu": 6, "memory": "16Gi"}, "requests": {"cpu": 1, "memory": "2Gi"}},
            "securityContext": dict(_KSERVE_SCHEDULER_SECURITY),
            "livenessProbe": {
                "failureThreshold": 3,
                "grpc": {"port": 9003, "service": "liveness"},
                "initialDelaySeconds": 5,
                "periodSeconds": 10,
                "successThreshold": 1,
                "timeoutSeconds": 1,
            },
            "readinessProbe": {
                "failureThreshold": 3,
                "grpc": {"port": 9003, "service": "readiness"},
                "initialDelaySeconds": 30,
                "periodSeconds": 10,
                "successThreshold": 1,
                "timeoutSeconds": 1,
            },
        },
        {
            "name": "tokenizer",
            "image": "ghcr.io/llm-d/llm-d-uds-tokenizer:vllm-v0.19.1",
            "ports": [{"containerPort": 8082, "name": "health", "protocol": "TCP"}],
            "resources": {"requests": {"cpu": "256m", "memory": "500Mi"}},
            "securityContext": dict(_KSERVE_SCHEDULER_SECURITY),
            "livenessProbe": _probe(8082, periodSeconds=15, timeoutSeconds=5, failureThreshold=3, path="/healthz"),
            "readinessProbe": _probe(8082, periodSeconds=10, timeoutSeconds=5, failureThreshold=3, path="/healthz"),
            "startupProbe": _probe(
                8082, periodSeconds=10, initialDelaySeconds=5, timeoutSeconds=5, failureThreshold=60, path="/healthz"
            ),
        },
    ],
    "volumes": [
        {"name": "tls-certs", "secret": {}},
        {"name": "tokenizer-uds", "emptyDir": {}},
        {"name": "tokenizer-tmp", "emptyDir": {}},
        {"name": "tokenizer-cache", "emptyDir": {}},
    ],
}
KSERVE_LLM_SCHEDULER_ANNOTATIONS = {"app.kubernetes.io/version": "0.9.0"}
# Where KServe looks up an LLMInferenceServiceConfig a spec.baseRefs names: the service's namespace, then KServe's
# own (config_merge.go getConfig L741-757; pkg/constants KServeNamespace).
KSERVE_NAMESPACE = "kserve"


# The labels KServe gives each pool's pods, by the pool's role (workload_single_node.go L95-97 and L222-229;
# pkg/constants/constants.go L417-447): the decode pods are `decode` with prefill, `both` without.
def kserve_llm_pod_labels(name: str, prefill: bool, disaggregated: bool) -> dict[str, str]:
    return {
        "app.kubernetes.io/component": "llminferenceservice-workload" + ("-prefill" if prefill else ""),
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/part-of": "llminferenceservice",
        "kserve.io/component": "workload",
        "llm-d.ai/role": "prefill" if prefill else ("decode" if disaggregated else "both"),
    }


def kserve_llm_scheduler_labels(name: str) -> dict[str, str]:
    """SchedulerLabels (scheduler.go L1623-1629; constants.go LLMComponentRouterScheduler)."""
    return {
        "app.kubernetes.io/component": "llminferenceservice-router-scheduler",
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/part-of": "llminferenceservice",
    }


KSERVE_LLM_PRESET_SOURCE = (
    "kserve/kserve@v0.20.0:config/llmisvcconfig/config-llm-{template,decode-template,prefill-template,scheduler}.yaml;"
    " pkg/controller/v1alpha2/llmisvc/config_merge.go L212-262, L779-829; scheduler.go L355-470"
)

# The router pod KServe runs for an InferenceGraph: one container named after the graph, its image (and, unless
# spec.resources is set, its resources) from KServe's inferenceservice-config `router`; the pod takes the graph's
# affinity, tolerations, nodeSelector, nodeName and serviceAccountName, and mounts no token (kserve/kserve@v0.20.0
# pkg/controller/v1alpha1/inferencegraph/raw_ig.go createInferenceGraphPodSpec L50-101, constructForRawDeployment
# L106-126; knative_reconciler.go constructResourceRequirements L260-281; pkg/constants/constants.go L69-71, L933-953).
KSERVE_GRAPH_ROUTER_POD_FIELDS = ("affinity", "tolerations", "nodeSelector", "nodeName", "serviceAccountName")
KSERVE_GRAPH_ROUTER_CONTAINER = {
    "readinessProbe": {
        "httpGet": {"path": "/readyz", "port": 8080, "scheme": "HTTP"},
        "initialDelaySeconds": 5,
        "timeoutSeconds": 2,
        "periodSeconds": 5,
        "successThreshold": 1,
        "failureThreshold": 3,
    },
    "securityContext": {
        "privileged": False,
        "runAsNonRoot": True,
        "readOnlyRootFilesystem": True,
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
    },
}
KSERVE_GRAPH_LABEL = "serving.kserve.io/inferencegraph"

# --- Kubernetes Pod Security Standards (k8s.io/pod-security-admission v0.33.13) -----------------------------
# The only capabilities baseline lets a container add (policy/check_capabilities_baseline.go L62-76); every
# other one (SYS_ADMIN, SYS_MODULE, NET_ADMIN, NET_RAW, ALL, ...) is privilege. Admission compares exact strings;
# the pack reads a capability in any case, with or without CAP_, so no spelling of one is a way past the rule.
PSS_BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
PSS_SOURCE = "kubernetes/pod-security-admission@v0.33.13:policy/check_capabilities_baseline.go L62-76"

# --- pulumi-random (v4.21.4) ----------------------------------------------------------------------------------
# The special characters RandomPassword/RandomString draw from unless overrideSpecial says otherwise
# (pulumi_random/random_password.py, `special` docstring: "These are `!@#$%&*()-_=+[]{}<>:?`").
RANDOM_DEFAULT_SPECIAL = "!@#$%&*()-_=+[]{}<>:?"

# --- Karmada (v1.18.2) -----------------------------------------------------------------------------------------
# What `karmadactl register` issues a pull member's karmada-agent (pkg/karmadactl/register/register.go):
# a client certificate CN=system:karmada:agent:<cluster>, O=system:karmada:agents (L88-90, generateAgentUserName
# L1372-1374, L900), an RSA 3072 key (generateKeyAndCSR L1097-1112), usages digital signature, key encipherment,
# client auth (L846-857); and RBAC bound to that user only (GenerateClusterRoleBinding L707-727): its own Cluster
# and cluster status by resourceNames (L643-671), its own Secrets by resourceNames (L729-745), Works only in
# namespace karmada-es-<cluster> (L779-800). The chart's own certificates: leaf expiry 43800h, root CA 3650 days,
# RSA 3072 (charts/karmada/values.yaml L136-155).
KARMADA_AGENT_USER_PREFIX = "system:karmada:agent:"
KARMADA_AGENT_GROUP = "system:karmada:agents"
KARMADA_AGENT_USES = frozenset({"digital_signature", "key_encipherment", "client_auth"})
KARMADA_EXECUTION_NAMESPACE_PREFIX = "karmada-es-"
KARMADA_RSA_BITS = 3072
KARMADA_LEAF_VALIDITY_HOURS = 43800
# register asks for the agent's certificate for a year (DefaultCertExpirationSeconds = 86400 * 365, L112-113;
# the CSR's ExpirationSeconds, L852).
KARMADA_AGENT_VALIDITY_HOURS = 365 * 24
# What register grants an agent in Karmada (GenerateClusterRole L641-700, GenerateSecretAccessRole L729-750,
# GenerateWorkAccessRole L779-800): (API group, resource) -> (verbs on the member's own objects by resourceNames,
# verbs without resourceNames). Names are the member's: its Cluster, and its Secrets <member>, <member>-impersonator.
# Works and their status only in karmada-es-<member>. The platform also lets an agent update and patch its own
# Cluster by name (it does not create it: components/federation/member.py agent_rules).
KARMADA_AGENT_GRANTS: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {
    ("cluster.karmada.io", "clusters"): (frozenset({"get", "update", "patch", "delete"}), frozenset({"create", "list", "watch"})),
    ("cluster.karmada.io", "clusters/status"): (frozenset({"update"}), frozenset()),
    ("", "secrets"): (frozenset({"get", "patch"}), frozenset({"create"})),
    ("config.karmada.io", "resourceinterpreterwebhookconfigurations"): (frozenset(), frozenset({"get", "list", "watch"})),
    ("config.karmada.io", "resourceinterpretercustomizations"): (frozenset(), frozenset({"get", "list", "watch"})),
    ("", "namespaces"): (frozenset(), frozenset({"get"})),
    ("coordination.k8s.io", "leases"): (frozenset(), frozenset({"get", "create", "update"})),
    ("certificates.k8s.io", "certificatesigningrequests"): (frozenset(), frozenset({"get", "create"})),
    ("", "services"): (frozenset(), frozenset({"list", "watch"})),
    ("", "events"): (frozenset(), frozenset({"patch", "create", "update"})),
    ("work.karmada.io", "works"): (frozenset(), frozenset({"get", "create", "list", "watch", "update", "delete"})),
    ("work.karmada.io", "works/status"): (frozenset(), frozenset({"patch", "update"})),
}  # fmt: skip
KARMADA_AGENT_WORK_RESOURCES = frozenset({("work.karmada.io", "works"), ("work.karmada.io", "works/status")})
KARMADA_CA_VALIDITY_HOURS = 3650 * 24
KARMADA_SOURCE = "karmada-io/karmada@v1.18.2:pkg/karmadactl/register/register.go; charts/karmada/values.yaml L136-155"

# --- Kubernetes RBAC (v1.33) -----------------------------------------------------------------------------------
# The ClusterRoles Kubernetes itself binds to system:authenticated / system:unauthenticated, which grant only
# discovery and self-review (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go, ClusterRoleBindings).
PUBLIC_DISCOVERY_ROLES = frozenset({"system:discovery", "system:basic-user", "system:public-info-viewer"})
# The API server's own ClusterRoles beyond the discovery ones (Karmada's is a kube-apiserver; k8s.io/kubernetes@v1.33.13
# plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go ClusterRoles): cluster-admin grants everything; admin
# and edit read and write the namespaced resources, Secrets included, and impersonate service accounts; view reads
# them, Secrets excepted. admin, edit and view are aggregated from many rules: stated here as `*` resources, more
# than view reads, but each of them reaches far beyond what an agent may (policies/rules/federation.py), which is
# all the rules read of them.
_EVERY = ["*"]
_READ = ["get", "list", "watch"]
_WRITE = [*_READ, "create", "update", "patch", "delete", "deletecollection"]
BUILTIN_CLUSTER_ROLES: dict[str, list[dict]] = {
    "cluster-admin": [{"apiGroups": _EVERY, "resources": _EVERY, "verbs": _EVERY}],
    "admin": [{"apiGroups": _EVERY, "resources": _EVERY, "verbs": [*_WRITE, "impersonate"]}],
    "edit": [{"apiGroups": _EVERY, "resources": _EVERY, "verbs": [*_WRITE, "impersonate"]}],
    "view": [{"apiGroups": _EVERY, "resources": _EVERY, "verbs": _READ}],
}

# --- vLLM (v0.33.0) --------------------------------------------------------------------------------------------
# vllm/envs.py: VLLM_ALLOW_RUNTIME_LORA_UPDATING is read as `.strip().lower() in ("1", "true")`; when on, the
# OpenAI server mounts POST /v1/load_lora_adapter and /v1/unload_lora_adapter (vllm/entrypoints/serve/lora),
# which load an adapter from any path or Hugging Face name the caller gives.
RUNTIME_LORA_ENV = "VLLM_ALLOW_RUNTIME_LORA_UPDATING"
