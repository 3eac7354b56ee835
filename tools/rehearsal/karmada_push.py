"""Push members' Karmada Secrets with the values `pulumi up` would give them.

In push mode the program hands Karmada, for each member, its API endpoint (a Push Cluster's `apiEndpoint`) and a
Secret with its CA (`caBundle`) and a service-account token of the member (`token`): the cluster's outputs and the
token Secret's once the member's token controller has filled it (components/federation/member.py). The offline plan
takes all three from the mocks (tools/plan/mocks.py), which point at nothing; the rehearsal's member clusters have
their own. The endpoint is put back by value with the other reads (runner.py `_resolve_reads`: each cluster's mock
endpoint -> its server), so a Cluster naming another member's endpoint dials that member. Here, when a Secret of
Karmada's cluster namespace is applied: a `token` that is the mock of a token Secret on the member it is named after
becomes that Secret's live token (another member's mock stays as it is, and is refused); a `caBundle` that is the
mocks' CA becomes the member's live CA. Every mock cluster has the same fake CA, so which member's CA the program
wired in cannot be told offline: the one limit of the substitution. Not modelled either: the public endpoint's
allowlist between the host's NAT and the member (the bring-up check holds that against the plan). The token
Secret's own 5 s await, in the member's wave, is pulumi_k8s.py's."""

from __future__ import annotations

import base64
import copy
from typing import TYPE_CHECKING, Any

from platform_catalog.names import KARMADA_CLUSTER_NAMESPACE
from tools.plan.mocks import FAKE_CA_DATA, service_account_token
from tools.rehearsal.kube import ApiError
from tools.rehearsal.pulumi_k8s import TOKEN_SECRET_TYPE

if TYPE_CHECKING:
    from tools.rehearsal.runner import Rehearsal, Target


def live_push_values(rehearsal: Rehearsal, obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` (bound for Karmada's API) with a push member's live CA and token in place of the mocks'."""
    meta = obj.get("metadata") or {}
    member = rehearsal.targets.get(meta.get("name", ""))
    data = obj.get("data") or {}
    if (
        member is None
        or member.region is None
        or obj.get("kind") != "Secret"
        or meta.get("namespace") != KARMADA_CLUSTER_NAMESPACE
        or "token" not in data
    ):
        return obj
    live = copy.deepcopy(obj)
    if data.get("caBundle") == FAKE_CA_DATA:
        live["data"]["caBundle"] = base64.b64encode((member.plane.pki / "ca.crt").read_bytes()).decode()
    token = _live_token(rehearsal, member, data["token"])
    if token is not None:
        live["data"]["token"] = token
    return live


def _live_token(rehearsal: Rehearsal, member: Target, mocked: str) -> str | None:
    """The token the member's token controller put in the token Secret whose mock `mocked` is; None when the plan
    has no such Secret on the member or it is not filled yet (Karmada then gets a 401, which its Cluster says)."""
    for resource in rehearsal.plan.resources:
        inputs = resource.inputs
        if (
            resource.type == "kubernetes:core/v1:Secret"
            and inputs.get("type") == TOKEN_SECRET_TYPE
            and rehearsal.plan.cluster_of(resource) == member.name
            and service_account_token(resource.name) == mocked
        ):
            meta = inputs.get("metadata") or {}
            try:
                secret = member.kube.get("v1", "Secret", meta.get("name", ""), meta.get("namespace"))
            except ApiError:
                return None
            token = ((secret or {}).get("data") or {}).get("token")
            return str(token) if token else None
    return None
