"""Upstream behaviour the pack's rules rely on, each fact with its source at the pinned version.

The pack carries these itself (it is meant to be published apart from the platform); the platform's own
catalog states the same facts, and tests/test_policy_upstream.py compares both with the vendored upstream
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


def _probe(port: int, **timing: int) -> dict:
    return {"httpGet": {"path": "/health", "port": port}, **timing}


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


KSERVE_LLM_PRESET_SOURCE = (
    "kserve/kserve@v0.20.0:config/llmisvcconfig/config-llm-{template,decode-template,prefill-template}.yaml; "
    "pkg/controller/v1alpha2/llmisvc/config_merge.go L228-262, L779-829"
)

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
KARMADA_CA_VALIDITY_HOURS = 3650 * 24
KARMADA_SOURCE = "karmada-io/karmada@v1.18.2:pkg/karmadactl/register/register.go; charts/karmada/values.yaml L136-155"

# --- Kubernetes RBAC (v1.33) -----------------------------------------------------------------------------------
# The ClusterRoles Kubernetes itself binds to system:authenticated / system:unauthenticated, which grant only
# discovery and self-review (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go, ClusterRoleBindings).
PUBLIC_DISCOVERY_ROLES = frozenset({"system:discovery", "system:basic-user", "system:public-info-viewer"})

# --- vLLM (v0.27.1) --------------------------------------------------------------------------------------------
# vllm/envs.py: VLLM_ALLOW_RUNTIME_LORA_UPDATING is read as `.strip().lower() in ("1", "true")`; when on, the
# OpenAI server mounts POST /v1/load_lora_adapter and /v1/unload_lora_adapter (vllm/entrypoints/serve/lora),
# which load an adapter from any path or Hugging Face name the caller gives.
RUNTIME_LORA_ENV = "VLLM_ALLOW_RUNTIME_LORA_UPDATING"
