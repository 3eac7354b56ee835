"""Disaggregated serving, sized: the KV cache a prompt hands from prefill to decode, how long that takes over
the pools' fabric, and whether to disaggregate at all. Pure functions, unit-tested by hand.

Transfer model (vLLM's NixlConnector, NIXL_HETEROGENEOUS_TP): each tensor-parallel rank of the decode pod
pulls its KV heads of every layer from the prefill rank(s) holding them, every read issued at once: with
decode's TP the larger each decode rank reads from one prefill rank, with prefill's the larger each reads
from several. So the transfer runs over max(prefill TP, decode TP) rank-to-rank paths:
- EFA (both pools on EFA in one zone, NIXL's LIBFABRIC backend): each side's ranks share their GPUs' part of
  the instance's EFA bandwidth (`machines.EFA_GBPS` / GPUs), and the side with less of it bounds the total;
- TCP otherwise: each path is one TCP flow, which AWS caps per flow (`machines.AWS_TCP_FLOW_GBPS*`).
The KV travels in the cache's dtype: an FP8 cache halves every transfer.

Decision rule for `servingMode: auto` (seed 5.7.5): disaggregate a model that is large, gets long prompts
and high concurrency, and whose transfer is cheap against its first-token objective; stay aggregated for
small, short-prompt, low-traffic or latency-critical ones, where the transfer costs more than the
interference it removes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from components.catalog.machines import AWS_TCP_FLOW_GBPS, AWS_TCP_FLOW_GBPS_PLACEMENT_GROUP, EFA_GBPS
from components.catalog.models import ModelArchitecture
from components.config.base import KvDtype
from components.domain.sizing import kv_bytes_per_token
from platform_catalog.disaggregation import MAX_TRANSFER_SHARE_OF_TTFT
from platform_catalog.machines import MACHINES

Transport = Literal["efa", "tcp"]

# The decision rule's thresholds.
LARGE_MODEL_BILLION_PARAMS = 30  # below it one GPU group prefills and decodes without starving either
LONG_PROMPT_TOKENS = 2048  # shorter prompts prefill in one engine step: little interference to remove
HIGH_CONCURRENCY = 64  # sequences in flight (maxNumSeqs x maxReplicas) where prefills stall many decodes


def prompt_kv_bytes(model: ModelArchitecture, kv_dtype: KvDtype, prompt_tokens: int) -> int:
    """The KV cache of one prompt: layers x KV heads x head dim x 2 (K, V) x bytes per element x tokens."""
    return kv_bytes_per_token(model, kv_dtype) * prompt_tokens


@dataclass(frozen=True)
class KvTransfer:
    transport: Transport
    paths: int  # parallel rank-to-rank transfers
    gbps_per_path: float
    bytes_per_prompt: int

    @property
    def gbps(self) -> float:
        return self.paths * self.gbps_per_path

    @property
    def seconds(self) -> float:
        return self.bytes_per_prompt * 8 / (self.gbps * 1e9)


def efa_gbps_per_gpu(machine_type: str) -> float | None:
    """A GPU's share of its instance's EFA bandwidth; None for a type without a figure in the catalog."""
    total = EFA_GBPS.get(machine_type)
    return None if total is None else total / MACHINES[machine_type].gpus


def _efa_share(machine_type: str) -> float:
    share = efa_gbps_per_gpu(machine_type)
    if share is None:
        raise LookupError(f"no EFA bandwidth figure for {machine_type}: the config checks did not run")
    return share


def kv_transfer(
    *,
    bytes_per_prompt: int,
    prefill_tp: int,
    decode_tp: int,
    efa_machines: tuple[str, str] | None,
    same_placement_group: bool,
) -> KvTransfer:
    """The hand-off of one prompt: over EFA between `efa_machines` (prefill, decode types), else TCP flows."""
    paths = max(prefill_tp, decode_tp)
    if efa_machines is not None:
        prefill_share, decode_share = (_efa_share(m) for m in efa_machines)
        total = min(prefill_tp * prefill_share, decode_tp * decode_share)
        return KvTransfer("efa", paths, total / paths, bytes_per_prompt)
    flow = AWS_TCP_FLOW_GBPS_PLACEMENT_GROUP if same_placement_group else AWS_TCP_FLOW_GBPS
    return KvTransfer("tcp", paths, flow, bytes_per_prompt)


@dataclass(frozen=True)
class ModeDecision:
    disaggregate: bool
    reasons: tuple[str, ...]  # every criterion with its figure, for plan.md


def decide_mode(
    *,
    params_billion: float,
    prompt_tokens: int,
    concurrency: int,
    transfer_seconds: float,
    ttft_objective_seconds: float,
) -> ModeDecision:
    """`servingMode: auto`: disaggregate only when every criterion of the module docstring holds."""
    budget = MAX_TRANSFER_SHARE_OF_TTFT * ttft_objective_seconds
    checks = [
        (
            params_billion >= LARGE_MODEL_BILLION_PARAMS,
            f"{params_billion:g}B params (large: >= {LARGE_MODEL_BILLION_PARAMS}B)",
        ),
        (prompt_tokens >= LONG_PROMPT_TOKENS, f"{prompt_tokens}-token prompts (long: >= {LONG_PROMPT_TOKENS})"),
        (concurrency >= HIGH_CONCURRENCY, f"{concurrency} sequences in flight (high: >= {HIGH_CONCURRENCY})"),
        (
            transfer_seconds <= budget,
            f"KV hand-off {transfer_seconds * 1000:.1f} ms (cheap: <= {budget * 1000:.0f} ms, "
            f"{MAX_TRANSFER_SHARE_OF_TTFT:.0%} of TTFT {ttft_objective_seconds:g}s)",
        ),
    ]
    return ModeDecision(all(ok for ok, _ in checks), tuple(("yes: " if ok else "no: ") + why for ok, why in checks))


def efa_interfaces_for(machine_type: str, gpus: int) -> int:
    """EFA interfaces a pod using `gpus` of the instance requests: its GPUs' share, at least one."""
    machine = MACHINES[machine_type]
    return max(1, math.floor(machine.efa_interfaces * gpus / machine.gpus))
