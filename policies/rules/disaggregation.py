"""Disaggregated serving: the KV hand-off between a model's prefill and decode pods runs on the fabric its sizing
assumed, within its share of the first-token objective, between engines that can exchange caches. The model
deployment annotates each LLMInferenceService with its sizing (`inference-platform.io/kv-transfer`: efa or tcp,
the bytes per prompt, the Gbps, the TTFT objective, each side's GPU; components/serving/llm_inference_service.py);
a missing annotation is "cannot check", never a pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from platform_catalog.disaggregation import MAX_TRANSFER_SHARE_OF_TTFT, vllm_attention_backend
from platform_catalog.gpus import COMPUTE_CAPABILITY
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


def _pools(r: Resource) -> tuple[tuple[str, object], tuple[str, object]]:
    """(role, pod template) of the decode and the prefill pool."""
    return ("decode", get(r.props, "spec", "template")), ("prefill", get(r.props, "spec", "prefill", "template"))


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
    for pool, pod in _pools(r):
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


def _numbers(r: Resource, *keys: str) -> list[float] | CannotCheck:
    values = [number(r.annotations.get(annotation(k))) for k in keys]
    if any(v is None or v <= 0 for v in values):
        return CannotCheck(
            f"{r.label}: no positive {', '.join(annotation(k) for k in keys)} annotations to check the hand-off with",
            fix="the model deployment must annotate its LLMInferenceService with its sizing (inference-platform.io/*)",
        )
    return [v for v in values if v is not None]


@rule(
    name="llm-pd-kv-handoff-within-budget",
    description="A disaggregated model moves each prompt's KV cache to decode within "
    f"{MAX_TRANSFER_SHARE_OF_TTFT:.0%} of its TTFT objective (bytes per prompt x 8 / the fabric's Gbps); a slower "
    "hand-off costs more first-token time than the prefill interference it removes.",
    severity="high",
    remediation="serve the model aggregated, put both pools in one placement group or on EFA, or shorten the "
    "prompts the sizing assumes",
    applies_to=LLMISVC,
)
def kv_handoff_within_budget(r: Resource, ctx: Context) -> Iterator[Violation | CannotCheck]:
    figures = _numbers(r, "kv-transfer-bytes-per-prompt", "kv-transfer-gbps", "ttft-objective-seconds")
    if isinstance(figures, CannotCheck):
        yield figures
    elif (seconds := figures[0] * 8 / (figures[1] * 1e9)) > (budget := MAX_TRANSFER_SHARE_OF_TTFT * figures[2]):
        size, gbps, ttft = figures
        yield Violation(
            f"{r.label}: each prompt's {size:,.0f}-byte KV cache takes {seconds * 1000:.1f} ms at {gbps:g} Gbps, over "
            f"the {budget * 1000:.0f} ms budget ({MAX_TRANSFER_SHARE_OF_TTFT:.0%} of its {ttft:g}s TTFT objective)",
            fix="serve it aggregated, or give the hand-off a faster fabric",
        )


def _side(pod: object, gpu: object) -> tuple[str, str] | None:
    """(the attention backend the side's vLLM runs, how it was chosen); None when it cannot be told."""
    main = _main(pod)
    if main is None:
        return None
    args = {
        a.split("=", 1)[0]: a.split("=", 1)[1] for a in as_list(get(main, "args")) if isinstance(a, str) and "=" in a
    }
    if "--attention-backend" in args:
        return args["--attention-backend"], "--attention-backend"
    if gpu not in COMPUTE_CAPABILITY:
        return None
    kv = args.get("--kv-cache-dtype", "auto")
    return vllm_attention_backend(str(gpu), kv), f"vLLM's default on {gpu} with {kv} KV"


@rule(
    name="llm-pd-one-attention-backend",
    description="A disaggregated model's prefill and decode engines run one attention backend: vLLM's NixlConnector "
    "hashes it into its handshake and refuses a hand-off between two, so every request would fail at decode.",
    severity="high",
    remediation="set the same --attention-backend on both pools (e.g. FLASHINFER), or put prefill and decode on GPUs "
    "of one generation",
    applies_to=LLMISVC,
)
def one_attention_backend(r: Resource, ctx: Context) -> Iterator[Violation | CannotCheck]:
    gpus = {"decode": "gpu-product", "prefill": "prefill-gpu-product"}
    sides = [_side(pod, r.annotations.get(annotation(gpus[role]))) for role, pod in _pools(r)]
    if sides[0] is None or sides[1] is None:
        yield CannotCheck(
            f"{r.label}: cannot tell both pools' attention backends (main containers, gpu-product and "
            "prefill-gpu-product annotations of a catalog GPU)",
            fix="the model deployment must annotate its LLMInferenceService with both pools' GPUs",
        )
    elif sides[0][0] != sides[1][0]:
        (decode, why_decode), (prefill, why_prefill) = sides[0], sides[1]
        yield Violation(
            f"{r.label}: decode attends with {decode} ({why_decode}), prefill with {prefill} ({why_prefill})",
            fix="pass one --attention-backend to both (the model's engineArgs)",
        )


RULES = [kv_fabric, efa_wired, kv_handoff_within_budget, one_attention_backend]
