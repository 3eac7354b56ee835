"""Names the program renders and the policy pack recognises: namespaces, identities, annotations.

The program names its objects with these; the pack tells by them which namespaces may run privileged pods,
which annotations carry a model server's sizing and which identity is Clusterpedia's or Karmada's.
"""

from __future__ import annotations

# Model servers (KServe InferenceServices) run here.
SERVING_NAMESPACE = "inference"

# Platform annotations on rendered objects (independent of the node-label domain), read by
# the policy pack: e.g. the sizing an InferenceService was computed with.
ANNOTATION_PREFIX = "inference-platform.io"


def annotation(key: str) -> str:
    return f"{ANNOTATION_PREFIX}/{key}"


# The only namespaces whose Pod Security level is `privileged`: the GPU Operator (drivers,
# toolkit, MIG manager, device plugins incl. EFA), the cache's FUSE daemons (Fluid's CSI
# plugin, the Alluxio runtime's FUSE DaemonSet) and the DCGM exporter of GKE-managed GPU
# pools (all of a node's GPUs and GKE's driver directory), and kube-system, where the cloud's own node
# agents run.
# The policy pack exempts exactly these.
GPU_OPERATOR_NAMESPACE = "gpu-operator"
FLUID_NAMESPACE = "fluid-system"
MODEL_CACHE_NAMESPACE = "model-cache"
DCGM_EXPORTER_NAMESPACE = "dcgm-exporter"
SYSTEM_NAMESPACE = "kube-system"
PRIVILEGED_NAMESPACES = (
    GPU_OPERATOR_NAMESPACE,
    FLUID_NAMESPACE,
    MODEL_CACHE_NAMESPACE,
    DCGM_EXPORTER_NAMESPACE,
    SYSTEM_NAMESPACE,
)

# Multi-cluster search (Clusterpedia, on the federation host): its namespace, the identity it reads each member
# with (service account, ClusterRole and binding on every search member), and its database (StatefulSet, Service
# and volume claim).
SEARCH_NAMESPACE = "clusterpedia-system"
SEARCH_READER = "clusterpedia-reader"
SEARCH_STORE = "clusterpedia-postgres"

# Karmada: the namespace of its API server where members' credentials live (created by the chart), and the
# service account its controllers act on a push member with (karmadactl join's, cluster-wide).
KARMADA_CLUSTER_NAMESPACE = "karmada-cluster"
KARMADA_PUSH_SERVICE_ACCOUNT = "karmada-controller-manager"
