"""Push members' Karmada objects with the values `pulumi up` would give them.

In push mode the program hands Karmada, for each member, its API endpoint (a Push Cluster's `apiEndpoint`) and a
Secret with its CA (`caBundle`) and a service-account token of the member (`token`): the cluster's outputs and the
token Secret's once the member's token controller has filled it (components/federation/member.py). The offline plan
takes all three from the mocks (tools/plan/mocks.py), which point at nothing; the rehearsal's member clusters have
their own. So, as the rehearsal puts back the live kube-system UID a read returns (runner.py `_resolve_reads`), a
push member's Cluster and Secret are applied with its live endpoint, CA and token, read when they are applied. The
host's Cluster names its in-cluster API (`https://kubernetes.default.svc`), which the rehearsal's pods reach as
they are: it is left as it is. Not modelled: the public endpoint's allowlist between the host's NAT and the member
(the bring-up check holds that against the plan: KARMADA_PUSH_MEMBER_READY)."""

from __future__ import annotations

import base64
import copy
from typing import TYPE_CHECKING, Any

from components.federation.member import IN_CLUSTER_API
from platform_catalog.names import KARMADA_CLUSTER_NAMESPACE
from tools.plan.mocks import service_account_token
from tools.rehearsal.kube import ApiError

if TYPE_CHECKING:
    from tools.rehearsal.runner import Rehearsal, Target

CLUSTER_API = "cluster.karmada.io/v1alpha1"
TOKEN_SECRET = "kubernetes.io/service-account-token"


def live_push_values(rehearsal: Rehearsal, obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` (bound for Karmada's API) with a push member's live endpoint, CA and token in place of the mocks'."""
    meta = obj.get("metadata") or {}
    member = rehearsal.targets.get(meta.get("name", ""))
    if member is None or member.region is None:
        return obj
    if obj.get("apiVersion") == CLUSTER_API and obj.get("kind") == "Cluster":
        spec = obj.get("spec") or {}
        if spec.get("syncMode") != "Push" or spec.get("apiEndpoint") in (None, IN_CLUSTER_API):
            return obj
        live = copy.deepcopy(obj)
        live["spec"]["apiEndpoint"] = member.plane.server
        return live
    data = obj.get("data") or {}
    if obj.get("kind") == "Secret" and meta.get("namespace") == KARMADA_CLUSTER_NAMESPACE and "token" in data:
        live = copy.deepcopy(obj)
        live["data"]["caBundle"] = base64.b64encode((member.plane.pki / "ca.crt").read_bytes()).decode()
        token = _live_token(rehearsal, member, data["token"])
        if token is not None:
            live["data"]["token"] = token
        return live
    return obj


def _live_token(rehearsal: Rehearsal, member: Target, mocked: str) -> str | None:
    """The token the member's token controller put in the token Secret whose mock `mocked` is; None when the plan
    has no such Secret on the member or it is not filled yet (Karmada then gets a 401, which its Cluster says)."""
    for resource in rehearsal.plan.resources:
        inputs = resource.inputs
        if (
            resource.type == "kubernetes:core/v1:Secret"
            and inputs.get("type") == TOKEN_SECRET
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
