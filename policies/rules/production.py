"""Production-only rules. Whether a stack is production is not visible on its resources: it comes from
the pack config (`production`), which the offline plan takes from the environment spec.
"""

from __future__ import annotations

from collections.abc import Iterator

from platform_catalog.names import SERVING_NAMESPACE
from policies.framework import CannotCheck, Context, Violation, rule
from policies.model import Resource, get, number
from policies.pods import is_model_server

STATEFUL = (
    "aws:s3/bucket:Bucket",
    "aws:s3/bucketV2:BucketV2",
    "aws:kms/key:Key",
    "aws:eks/cluster:Cluster",
    "gcp:storage/bucket:Bucket",
    "gcp:kms/cryptoKey:CryptoKey",
    "gcp:kms/keyRing:KeyRing",
    "gcp:container/cluster:Cluster",
)
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
KNATIVE_MIN_SCALE = "autoscaling.knative.dev/min-scale"


def _production_unknown(what: str) -> CannotCheck:
    return CannotCheck(
        f"{what}, and the pack does not know whether this stack is production",
        fix='set {"production": true|false} in the policy pack config (plan writes build/<env>/policy-config.json)',
    )


@rule(
    name="stateful-resources-protected",
    description="In production, model buckets, KMS keys and clusters are protect=true and retainOnDelete=true "
    "(retainOnDelete is checked offline; CrossGuard does not expose it).",
    severity="high",
    remediation="pass protect=env.production and retain_on_delete=env.production in the resource options",
    applies_to=STATEFUL,
    config=("production",),
)
def stateful_resources_protected(r: Resource, ctx: Context) -> Iterator[Violation]:
    if ctx.production is False:
        return
    missing = [o for o, on in (("protect", r.protect), ("retainOnDelete", r.retain_on_delete)) if on is False]
    if not missing:
        return
    if ctx.production is None:
        yield _production_unknown(f"{r.name} is not {' / '.join(missing)}")
    else:
        yield Violation(f"{r.name} is stateful but not {' / '.join(missing)} in production")


def _scales_to_zero(r: Resource) -> bool:
    """Whether the object lets the autoscaler take the model to zero replicas.

    (An LLMInferenceService cannot: its CRD sets scaling.minReplicas >= 1.)
    """
    if is_model_server(r):
        minimum = number(get(r.props, "spec", "predictor", "minReplicas"))
        knative = number(get(r.props, "metadata", "annotations", KNATIVE_MIN_SCALE))
        return 0 in (minimum, knative)
    if r.namespace != SERVING_NAMESPACE:
        return False
    minimum = get(r.props, "spec", "minReplicaCount")
    return minimum is None or number(minimum) == 0  # KEDA's default is 0


@rule(
    name="no-scale-to-zero-in-production",
    description="In production, model servers never scale to zero (a cold start reloads the weights for minutes).",
    severity="high",
    remediation="set minReplicas >= 1 for production placements (InferenceService predictor.minReplicas, KEDA "
    "minReplicaCount); scale to zero only in dev",
    applies_to=("InferenceService", SCALED_OBJECT),
    subject=lambda r: is_model_server(r) or r.type == SCALED_OBJECT,
    scope="stack",  # judges each Karmada member's copy, with its overrides
    config=("production",),
)
def no_scale_to_zero(r: Resource, ctx: Context) -> Iterator[Violation]:
    if ctx.production is False or not _scales_to_zero(r):
        return
    if ctx.production is None:
        yield _production_unknown(f"{r.label} may scale to zero")
    else:
        yield Violation(f"{r.label} scales to zero in production")


RULES = [stateful_resources_protected, no_scale_to_zero]
