"""Disaggregated serving: the KV hand-off between a model's prefill and decode pods runs on the fabric its sizing
assumed. The model deployment annotates each LLMInferenceService with the transport it sized
(`inference-platform.io/kv-transfer`: efa or tcp; components/serving/llm_inference_service.py); a missing
annotation is "cannot check", never a pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from platform_catalog.names import annotation
from policies.framework import CannotCheck, Context, Violation, rule
from policies.model import Resource, as_list, get, number

LLMISVC = ("kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService",)
KV_TRANSFER = annotation("kv-transfer")
EFA_RESOURCE = "vpc.amazonaws.com/efa"
KV_FLAG = "--kv-transfer-config="


def _transport(r: Resource) -> str | CannotCheck:
    value = r.annotations.get(KV_TRANSFER)
    if not isinstance(value, str):
        return CannotCheck(
            f"{r.label}: no {KV_TRANSFER} annotation naming the KV hand-off's transport",
            fix="the model deployment must annotate its LLMInferenceService with its sizing (inference-platform.io/*)",
        )
    return value


@rule(
    name="llm-pd-kv-fabric",
    description="A disaggregated model hands each prompt's KV cache from prefill to decode over EFA; over TCP every "
    "hand-off takes tens to hundreds of milliseconds of the first-token budget.",
    severity="medium",
    enforcement="advisory",
    remediation="put the prefill and decode pools on EFA in one zone, or serve the model aggregated",
    applies_to=LLMISVC,
)
def kv_fabric(r: Resource, ctx: Context) -> Iterator[Violation | CannotCheck]:
    transport = _transport(r)
    if isinstance(transport, CannotCheck):
        yield transport
    elif transport != "efa":
        yield Violation(
            f"{r.label}: hands its KV cache to decode over {transport}",
            fix="place both pools on EFA pools sharing a zone (placements[].pool, prefill.pool), with an engine "
            "image whose NIXL has the LIBFABRIC backend (components/catalog/engines.py PD_NIXL_BACKENDS)",
        )


def _main(pod: object) -> dict | None:
    return next((c for c in as_list(get(pod, "containers")) if get(c, "name") == "main"), None)


def _backends(container: dict) -> list | None:
    """NIXL backends of the container's --kv-transfer-config; None when the flag or its JSON is unreadable."""
    values = [
        a[len(KV_FLAG) :] for a in as_list(get(container, "args")) if isinstance(a, str) and a.startswith(KV_FLAG)
    ]
    if len(values) != 1:
        return None
    try:
        config = json.loads(values[0])
    except ValueError:
        return None
    return get(config, "kv_connector_extra_config", "backends") if isinstance(config, dict) else None


@rule(
    name="llm-pd-efa-wired",
    description="A disaggregated model sized for an EFA hand-off gives its prefill and its decode pods EFA "
    "interfaces and NIXL's LIBFABRIC backend; without either the transfer falls back to TCP.",
    severity="high",
    remediation="request vpc.amazonaws.com/efa on both pools' main containers and set "
    'kv_connector_extra_config {"backends": ["LIBFABRIC"]} in their --kv-transfer-config',
    applies_to=LLMISVC,
)
def efa_wired(r: Resource, ctx: Context) -> Iterator[Violation | CannotCheck]:
    transport = _transport(r)
    if isinstance(transport, CannotCheck):
        yield transport
        return
    if transport != "efa":
        return
    for pool, pod in (
        ("decode", get(r.props, "spec", "template")),
        ("prefill", get(r.props, "spec", "prefill", "template")),
    ):
        main = _main(pod)
        if main is None:
            yield CannotCheck(f"{r.label}: no main container in the {pool} pool", fix="render both pools' templates")
            continue
        if (number(get(main, "resources", "requests", EFA_RESOURCE)) or 0) < 1:
            yield Violation(
                f"{r.label}: the {pool} pods request no {EFA_RESOURCE}",
                fix="request the GPUs' share of the node's EFA interfaces",
            )
        if _backends(main) != ["LIBFABRIC"]:
            yield Violation(
                f"{r.label}: the {pool} pods' --kv-transfer-config does not select NIXL's LIBFABRIC backend",
                fix='add "kv_connector_extra_config": {"backends": ["LIBFABRIC"]}',
            )


RULES = [kv_fabric, efa_wired]
