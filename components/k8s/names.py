"""Names several capabilities agree on: namespaces, service accounts, buckets, annotations."""

from __future__ import annotations

# Model servers (KServe InferenceServices) run here under this service account; the model
# store grants it read access (IRSA / Workload Identity) and the cache mounts into it.
SERVING_NAMESPACE = "inference"
MODEL_SERVER_SERVICE_ACCOUNT = "model-server"

# Weights live under this prefix of every model bucket; read access (IRSA / Workload Identity)
# and the cache's mount are limited to it.
MODELS_PREFIX = "models/"

# Platform annotations on rendered objects (independent of the node-label domain), read by
# the policy pack: e.g. the sizing an InferenceService was computed with.
ANNOTATION_PREFIX = "inference-platform.io"


def annotation(key: str) -> str:
    return f"{ANNOTATION_PREFIX}/{key}"


def model_bucket_name(prefix: str, stack: str, region_name: str) -> str:
    """Globally unique enough per account: the configured prefix, environment and region entry."""
    return f"{prefix}-{stack}-{region_name}-models"
