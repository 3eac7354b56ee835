"""Checks of model deployments that need the catalog and the sizing: they run in the last stage, once
references resolve and every pool's machine type and GPU partitioning are valid (sizing reads them).

Rules, and why:
- A preset (and a draft preset) must be in the environment's model catalog: sizing needs its architecture. A
  preset declared with its checkpoint's format is served in that precision.
- maxModelLen stays within the model's context (and its draft's).
- Each placement requests one GPU resource of its pool; pools offering several (mixed MIG
  profiles) need the choice spelled out. One placement per model and region: the model's
  InferenceService in a cluster is named after it.
- FP8 KV cache (and FP8 engines under Triton) only on GPUs with FP8: A100 and A10G have none.
- Weights + KV cache for maxNumSeqs x maxModelLen must fit the placement's GPUs at the smallest
  tensor-parallel size, else pipeline-parallel across nodes, else the model is rejected with the
  numbers. A replica on more than one node must run vLLM in Standard mode from the cache's
  pvc:// (KServe's multi-node serving accepts no other storage and no autoscaler).
- A node of the pool holds at least one server with the CPU and memory its engine needs.
- engineArgs: flags of the pinned engine only (the catalog's list, checked against the engine's own
  parser by the tests), switches as true, values as values; flags the platform derives name the key
  to change instead.
- vLLM-only features (speculative decoding, LoRA) are rejected under Triton, whose TensorRT-LLM
  engine builds them in; LoRA adapters load from a local directory, so they need the cache.
- Production never scales to zero; autoscaling on metrics needs a Prometheus URL.
- Karmada's application failover toleration outlasts every federated replica's start-up budget.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator

from components.catalog.engines import (
    ENGINE_FLAGS,
    ENGINE_HOST_NEEDS,
    VLLM_MINIMUMS,
    VLLM_VALUES,
    VLLM_VERSION,
)
from components.catalog.models import ModelArchitecture
from components.checks.endpoint_checks import url_issue
from components.config.base import Issue, KeyPath, join_path
from components.config.environment import EnvironmentSpec
from components.config.region import GpuPoolSpec, RegionSpec
from components.config.workloads import ModelSpec, PlacementSpec
from components.domain.disaggregation import efa_path, prefill_side
from components.domain.fit import Fit, placement_fit, prefill_fit, startup_seconds
from components.domain.gpu_resources import schedulable_resources
from components.domain.host import pod_host_resources
from components.domain.kv_transfer import efa_gbps_per_gpu
from components.domain.objectives import ttft_objectives
from components.domain.sizing import DoesNotFit, GpuSlot, kv_bytes_per_token, startup_budget_seconds
from components.domain.slots import gpu_slot, multi_node_capable, placement_resource
from platform_catalog.disaggregation import MAX_TRANSFER_SHARE_OF_TTFT, vllm_attention_backend
from platform_catalog.machines import MACHINES


def check_serving(env: EnvironmentSpec) -> Iterator[Issue]:
    regions = {r.name: r for r in env.regions}
    autoscaled: dict[str, list[str]] = {}  # region -> models autoscaled on metrics there
    for i, model in enumerate(env.models):
        path = ("models", i)
        unsizable = list(_check_presets(env, model, path))
        yield from unsizable
        if unsizable:
            continue
        seen: dict[str, str] = {}
        for j, placement in enumerate(model.placements):
            region = regions[placement.region]
            pool = region.pool(placement.pool)
            at = (*path, "placements", j)
            if placement.region in seen:
                yield Issue(
                    join_path(*at, "region"),
                    f"{model.name} already runs in region {placement.region!r} (pool {seen[placement.region]!r}); "
                    "its InferenceService there is named after the model: keep one placement per region",
                )
                continue
            seen[placement.region] = placement.pool
            if pool is None:
                continue
            yield from _check_placement(env, model, region, pool, placement, path, at, autoscaled)
    for region_name, models in autoscaled.items():
        yield from _check_prometheus(env, regions[region_name], models)
    yield from _check_tenant_loras(env)
    yield from _check_failover_toleration(env)


def _check_failover_toleration(env: EnvironmentSpec) -> Iterator[Issue]:
    """Karmada moves a federated model off a member once it is unhealthy for the toleration; a replica is
    unhealthy while it starts, so the toleration must outlast the longest start-up its probe allows."""
    if not env.federation.enabled:
        return
    longest: tuple[int, str] | None = None
    for model in env.models:
        if not model.federated or model.preset not in env.architectures:
            continue
        for placement in model.placements:
            region = env.region(placement.region)
            pool = region.pool(placement.pool)
            resource = placement_resource(pool, placement.resource) if pool is not None else None
            if pool is None or resource is None:
                continue
            try:
                fit = placement_fit(model, pool, resource)
            except DoesNotFit:
                continue  # reported with the placement
            budget = startup_budget_seconds(startup_seconds(region, model, fit.sizing))
            if longest is None or budget > longest[0]:
                longest = (budget, f"{model.name} in {region.name}")
    toleration = env.federation.failover.application_toleration_seconds
    if longest is not None and toleration <= longest[0]:
        yield Issue(
            "federation.failover.applicationTolerationSeconds",
            f"{toleration}s is not longer than the start-up budget of {longest[1]} ({longest[0]}s: weights, engine "
            f"start and compilation, twice, at least 5 minutes), so Karmada would move replicas that are still "
            f"loading; set it above {longest[0]}",
        )


def _unknown_preset(env: EnvironmentSpec, preset: str) -> str:
    return (
        f"{preset!r} is not a model preset; use one of {', '.join(env.architectures)}, or declare it in "
        "modelCatalog or models/*.yaml (docs/serving.md, Models of your own)"
    )


def _check_presets(env: EnvironmentSpec, model: ModelSpec, path: KeyPath) -> Iterator[Issue]:
    """What sizing needs: presets in the catalog, a context they support, the precision of a declared checkpoint."""
    arch = env.architectures.get(model.preset)
    if arch is None:
        yield Issue(join_path(*path, "preset"), _unknown_preset(env, model.preset))
        return
    if arch.weights_format is not None and model.precision != arch.weights_format:
        yield Issue(
            join_path(*path, "precision"),
            f"{model.precision} is not the format of {arch.preset}'s declared checkpoint ({arch.weights_format}); "
            f"set precision: {arch.weights_format}",
        )
    if model.max_model_len > arch.max_context:
        yield Issue(
            join_path(*path, "maxModelLen"),
            f"{model.max_model_len} exceeds {arch.preset}'s context of {arch.max_context} tokens; "
            f"lower it to at most {arch.max_context}",
        )
    spec = model.speculative_decoding
    if spec is None:
        return
    at = (*path, "speculativeDecoding", "draftPreset")
    if spec.method == "draft" and spec.draft_preset is None:
        yield Issue(join_path(*at), "required for method draft; name the draft's preset, e.g. llama-3.1-8b")
    elif spec.method == "ngram" and spec.draft_preset is not None:
        yield Issue(join_path(*at), "only used by method draft; remove it for ngram")
    elif spec.draft_preset is not None:
        draft = env.architectures.get(spec.draft_preset)
        if draft is None:
            yield Issue(join_path(*at), _unknown_preset(env, spec.draft_preset))
        elif draft.params >= arch.params:
            yield Issue(
                join_path(*at),
                f"{draft.preset} ({draft.params_billion:g}B) is not smaller than {arch.preset} "
                f"({arch.params_billion:g}B); a draft must be a smaller model of the same family",
            )
        else:
            yield from _check_draft_fits(model, arch, draft, path)


def _check_draft_fits(
    model: ModelSpec, arch: ModelArchitecture, draft: ModelArchitecture, path: KeyPath
) -> Iterator[Issue]:
    """A draft proposes token ids of its target's vocabulary, within its own context."""
    if draft.vocab_size != arch.vocab_size:
        yield Issue(
            join_path(*path, "speculativeDecoding", "draftPreset"),
            f"{draft.preset!r} has a {draft.vocab_size}-token vocabulary and {arch.preset!r} {arch.vocab_size}: "
            "a draft must share its target's tokenizer; pick a draft of the same family or use method ngram",
        )
    if model.max_model_len > draft.max_context:
        yield Issue(
            join_path(*path, "maxModelLen"),
            f"{model.max_model_len} exceeds the draft {draft.preset}'s context of {draft.max_context} tokens; "
            f"lower it to at most {draft.max_context}",
        )


def _check_tenant_loras(env: EnvironmentSpec) -> Iterator[Issue]:
    """A tenant's adapter: on a vLLM base model, under a name no model or other adapter has."""
    taken = {m.name for m in env.models} | {a.name for m in env.models for a in m.lora_adapters}
    runtimes = {m.name: m.runtime for m in env.models}
    for i, tenant in enumerate(env.tenants):
        for j, lora in enumerate(tenant.loras):
            if runtimes[lora.base_model] != "vllm":
                yield Issue(
                    join_path("tenants", i, "loras", j, "baseModel"),
                    f"{lora.base_model} runs Triton, whose TensorRT-LLM engine is built with its adapters; use a "
                    "vLLM model",
                )
            if lora.name in taken:
                yield Issue(
                    join_path("tenants", i, "loras", j, "name"),
                    f"{lora.name!r} is already a model or adapter name; clients select adapters by name",
                )
            taken.add(lora.name)


def check_engine_options(env: EnvironmentSpec) -> Iterator[Issue]:
    """Each model's engine options: they read the model alone and the engine's catalog, so they run in the first
    stage, whatever else the environment gets wrong (components/checks/loader.py semantic_issues)."""
    for i, model in enumerate(env.models):
        yield from _check_engine_options(env, model, ("models", i))


def _check_engine_options(env: EnvironmentSpec, model: ModelSpec, path: KeyPath) -> Iterator[Issue]:
    if model.max_output_tokens is not None:
        at = join_path(*path, "maxOutputTokens")
        if model.runtime != "triton":
            yield Issue(at, "applies to Triton only; vLLM answers up to maxModelLen minus the prompt. Remove it")
        elif model.max_output_tokens >= model.max_model_len:
            yield Issue(
                at, f"{model.max_output_tokens} leaves no room for a prompt within maxModelLen {model.max_model_len}"
            )
    if model.runtime == "triton":
        for key, given in (
            ("speculativeDecoding", model.speculative_decoding is not None),
            ("loraAdapters", bool(model.lora_adapters)),
        ):
            if given:
                yield Issue(
                    join_path(*path, key),
                    "applies to vLLM only; under Triton the TensorRT-LLM engine is built with it. Remove it, or "
                    "use runtime: vllm",
                )
    names = {m.name for m in env.models}
    seen: set[str] = set()
    for k, adapter in enumerate(model.lora_adapters):
        at = join_path(*path, "loraAdapters", k, "name")
        if adapter.name in names or adapter.name in seen:
            yield Issue(at, f"{adapter.name!r} is already a model or adapter name; clients select adapters by name")
        seen.add(adapter.name)
    flags = ENGINE_FLAGS[model.runtime]
    for flag, value in model.engine_args.items():
        at = join_path(*path, "engineArgs") + f"[{flag!r}]"
        if flag.startswith("-"):
            yield Issue(at, f"write the flag without leading dashes: {flag.lstrip('-')!r}")
        elif flag in flags.derived:
            yield Issue(at, f"set by the platform; change {flags.derived[flag]} instead")
        elif flag not in flags.tunable:
            close = difflib.get_close_matches(flag, sorted(flags.tunable), n=3)
            hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
            yield Issue(
                at,
                f"not a flag of {flags.engine} {flags.version} a model may set; {hint}the flags are listed in "
                "components/catalog/engines.py",
            )
        elif value is False:
            yield Issue(at, "false is not passed to the engine; remove the flag to keep the engine's default")
        elif flags.tunable[flag] == "switch" and value is not True:
            yield Issue(at, f"{flags.engine} takes --{flag} without a value; set it to true, or remove it")
        elif flags.tunable[flag] == "value" and value is True:
            yield Issue(at, f"{flags.engine} --{flag} takes a value; set it to one, not true")
        elif model.runtime == "vllm" and flag in VLLM_VALUES:
            problem = engine_value_issue(VLLM_VALUES[flag], value, VLLM_MINIMUMS.get(flag))
            if problem:
                yield Issue(at, f"vLLM {VLLM_VERSION} --{flag} {problem}")
            elif flag == "otlp-traces-endpoint":
                problem = url_issue(str(value).strip())
                if problem:
                    yield Issue(at, f"the engine exports its traces to it: {problem}")
    if model.runtime == "vllm":
        yield from _engine_relations(model, path)


def engine_value_issue(kind: str | tuple[str, ...], value: object, minimum: int | None = None) -> str | None:
    """Why vLLM would refuse `value` for a flag of this kind (components/catalog/engines.py VLLM_VALUES), a number
    below its least value (VLLM_MINIMUMS) included."""
    text = str(value).strip()
    if isinstance(kind, tuple):
        return None if text in kind else f"takes one of {', '.join(kind)}, not {value!r}"
    if kind == "json":
        try:
            parsed = json.loads(text) if isinstance(value, str) else value
        except json.JSONDecodeError as exc:
            return f"takes a JSON object, and {value!r} is not JSON ({exc.msg})"
        return None if isinstance(parsed, dict) else f"takes a JSON object, not {value!r}"
    if kind in ("int", "tokens"):
        whole = (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, str) and re.fullmatch(r"-?\d+", text) is not None
        )
        if not whole:
            hint = " (write the number of tokens, e.g. 8192)" if kind == "tokens" else ""
            return f"takes a whole number, not {value!r}{hint}"
        number = float(text)
    elif kind == "float":
        try:
            number = float(text)
        except ValueError:
            return f"takes a number, not {value!r}"
    else:
        return None
    return f"takes a number at least {minimum}, not {value!r}" if minimum is not None and number < minimum else None


def _engine_relations(model: ModelSpec, path: KeyPath) -> Iterator[Issue]:
    """What vLLM checks across flags at start (vllm/config/scheduler.py)."""
    threshold = model.engine_args.get("long-prefill-token-threshold")
    valid = threshold is not None and engine_value_issue("int", threshold) is None
    if valid and int(str(threshold).strip()) > model.max_model_len:
        yield Issue(
            join_path(*path, "engineArgs") + "['long-prefill-token-threshold']",
            f"{threshold} is more than maxModelLen {model.max_model_len}; vLLM refuses to start "
            "(long_prefill_token_threshold cannot be greater than the max_model_len): lower it",
        )
    tokens = model.engine_args.get("max-num-batched-tokens")
    valid = tokens is not None and engine_value_issue("tokens", tokens) is None
    if valid and int(str(tokens).strip()) < model.max_num_seqs:
        yield Issue(
            join_path(*path, "engineArgs") + "['max-num-batched-tokens']",
            f"{tokens} is fewer than maxNumSeqs {model.max_num_seqs}; vLLM refuses to start "
            "(max_num_batched_tokens must be >= max_num_seqs): raise it or lower maxNumSeqs",
        )


def _check_placement(
    env: EnvironmentSpec,
    model: ModelSpec,
    region: RegionSpec,
    pool: GpuPoolSpec,
    placement: PlacementSpec,
    path: KeyPath,
    at: KeyPath,
    autoscaled: dict[str, list[str]],
) -> Iterator[Issue]:
    offered = schedulable_resources(pool)
    if placement.resource is not None and placement.resource not in offered:
        yield Issue(
            join_path(*at, "resource"),
            f"{placement.resource!r} is not offered by pool {pool.name!r} (offered: {', '.join(offered)}); "
            "use one of them",
        )
        return
    resource = placement_resource(pool, placement.resource)
    if resource is None:
        yield Issue(
            join_path(*at, "resource"),
            f"pool {pool.name!r} offers several GPU resources ({', '.join(offered)}); choose the one each "
            "replica requests",
        )
        return
    slot = gpu_slot(pool, resource)
    where = f"placement {region.name}/{pool.name} runs on {slot.name}, which has none"
    if model.kv_cache_dtype == "fp8" and not slot.fp8:
        yield Issue(join_path(*path, "kvCacheDtype"), f"an FP8 KV cache needs a GPU with FP8; {where}: use auto")
        return
    if model.runtime == "triton" and model.precision == "fp8" and not slot.fp8:
        yield Issue(join_path(*path, "precision"), f"TensorRT-LLM FP8 engines need a GPU with FP8; {where}")
        return
    try:
        fit = placement_fit(model, pool, resource)
    except DoesNotFit as problem:
        yield Issue(join_path(*at), str(problem) + _multi_node_hint(slot, pool))
        return
    yield from _check_host_memory(region, pool, fit, model.runtime, at)
    if placement.serving_mode != "aggregated" or placement.prefill is not None:
        yield from _check_disaggregation(env, model, region, placement, fit, at)
    if fit.sizing.pipeline_parallel > 1:
        yield from _check_multi_node(model, region, placement, fit, at)
    elif model.served_adapters and not region.model_cache.enabled:
        yield Issue(
            join_path(*path, "loraAdapters"),
            f"vLLM loads LoRA adapters from a local directory, and region {region.name!r} has no model cache "
            "(pvc://) to mount them from; enable its modelCache or remove the adapters",
        )
    if placement.min_replicas == 0 and env.production:
        yield Issue(
            join_path(*at, "minReplicas"),
            f"production models never scale to zero: a cold start reloads {fit.sizing.weights_gib:g} GiB of "
            f"weights and starts the engine (about {startup_seconds(region, model, fit.sizing)}s); set minReplicas "
            "to at least 1",
        )
    elif (
        region.serving.deployment_mode == "Standard"
        and placement.min_replicas != placement.max_replicas
        and fit.sizing.pipeline_parallel == 1
    ):
        autoscaled.setdefault(region.name, []).append(model.name)


def _disaggregation_blockers(env: EnvironmentSpec, model: ModelSpec, region: RegionSpec, at: KeyPath) -> list[Issue]:
    """What rules out a disaggregated placement of `model` in `region`, before any sizing."""
    model_at, mode_at = at[:2], join_path(*at, "servingMode")
    blockers = []
    if model.runtime != "vllm":
        why = "disaggregated serving hands KV caches over vLLM's NixlConnector; use runtime: vllm"
        blockers.append(Issue(join_path(*model_at, "runtime"), why))
    if model.federated and env.federation.enabled:
        why = "Karmada propagates InferenceServices, not LLMInferenceServices; set federated: false"
        blockers.append(Issue(join_path(*model_at, "federated"), why))
    if not region.kv_transfer_wired:
        why = (
            f"region {region.name!r} is on GCP, where the RDMA pod networking NIXL needs is not wired yet; "
            "place it in an AWS region or use servingMode: aggregated"
        )
        blockers.append(Issue(mode_at, why))
    if not region.model_cache.enabled:
        why = (
            f"KServe's LLMInferenceService mounts the weights from the cache's pvc://, and region {region.name!r} "
            "has no model cache; enable its modelCache"
        )
        blockers.append(Issue(mode_at, why))
    if region.serving.deployment_mode != "Standard":
        why = "an LLMInferenceService runs plain Deployments; set the region's serving.deploymentMode: Standard"
        blockers.append(Issue(mode_at, why))
    return blockers


def _check_disaggregation(
    env: EnvironmentSpec, model: ModelSpec, region: RegionSpec, placement: PlacementSpec, decode: Fit, at: KeyPath
) -> Iterator[Issue]:
    """A prefill pool that exists, fits the model, and a hand-off the catalog can size; see the module docstring."""
    spec = placement.prefill
    if placement.serving_mode == "aggregated":
        yield Issue(join_path(*at, "prefill"), "only used with servingMode disaggregated or auto; remove it")
        return
    if spec is None:
        yield Issue(
            join_path(*at, "servingMode"),
            f"servingMode {placement.serving_mode} needs the prefill pool, e.g. prefill: {{pool: {placement.pool}}}",
        )
        return
    blockers = _disaggregation_blockers(env, model, region, at)
    if blockers:
        yield from blockers
        return
    if placement.min_replicas != placement.max_replicas:
        yield Issue(
            join_path(*at, "maxReplicas"),
            f"a disaggregated placement runs fixed replicas (KServe's autoscaling needs its workload-variant "
            f"autoscaler); set minReplicas = maxReplicas (now {placement.min_replicas}-{placement.max_replicas})",
        )
    if spec.prompt_tokens >= model.max_model_len:
        yield Issue(
            join_path(*at, "prefill", "promptTokens"),
            f"{spec.prompt_tokens} tokens leave no room for output within maxModelLen {model.max_model_len}; lower it",
        )
    at_pool = join_path(*at, "prefill", "pool")
    pool = region.pool(spec.pool)
    if pool is None:
        pools = ", ".join(p.name for p in region.gpu_pools)
        yield Issue(at_pool, f"region {region.name!r} has no GPU pool {spec.pool!r} (pools: {pools}); fix the name")
        return
    resource = placement_resource(pool, None)
    if resource is None:
        yield Issue(at_pool, f"pool {pool.name!r} offers several GPU resources; use a pool with one for prefill")
        return
    slot = gpu_slot(pool, resource)
    if model.kv_cache_dtype == "fp8" and not slot.fp8:
        yield Issue(
            join_path(*at[:2], "kvCacheDtype"),
            f"the prefill pool {region.name}/{pool.name} runs on {slot.name}, which has no FP8, and the KV cache "
            "travels in its dtype; use auto or a prefill pool with FP8",
        )
        return
    try:
        fit = prefill_fit(model, pool, resource, spec.max_num_seqs)
    except DoesNotFit as problem:
        yield Issue(join_path(*at, "prefill"), f"prefill pool {pool.name!r}: {problem}")
        return
    for side, sizing in (("prefill", fit.sizing), ("decode", decode.sizing)):
        if sizing.pipeline_parallel > 1:
            yield Issue(
                join_path(*at, "prefill" if side == "prefill" else "pool"),
                f"the {side} pods need {sizing.pipeline_parallel} nodes per replica; disaggregated pools are "
                "single-node: use larger GPUs or keep servingMode: aggregated",
            )
    yield from _check_host_memory(region, pool, fit, model.runtime, (*at, "prefill"))
    decode_pool = region.pool(placement.pool)
    assert decode_pool is not None
    unsized = efa_path(region, pool, decode_pool) and [
        p for p in (pool, decode_pool) if efa_gbps_per_gpu(p.machine_type) is None
    ]
    for p in unsized or ():
        yield Issue(
            at_pool,
            f"no EFA bandwidth figure for {p.machine_type} in the catalog (machines.EFA_GBPS) to size the KV "
            "hand-off with; add it with its source",
        )
    yield from _check_kv_layouts(model, pool, decode_pool, at_pool)
    yield from _check_one_zone(region, pool, decode_pool, at_pool)
    if placement.serving_mode == "disaggregated" and not unsized:
        yield from _check_hand_off(env, model, region, placement, decode, at_pool)


def _check_kv_layouts(
    model: ModelSpec, prefill_pool: GpuPoolSpec, decode_pool: GpuPoolSpec, at: str
) -> Iterator[Issue]:
    """Beyond one model, dtype and KV dtype (one model's keys), vLLM's NixlConnector hands caches only between sides
    of one attention backend (NIXL_HANDSHAKE_COMPAT); their TP sizes may differ (NIXL_HETEROGENEOUS_TP)."""
    if "attention-backend" not in model.engine_args:
        gpus = [MACHINES[p.machine_type].gpu for p in (prefill_pool, decode_pool)]
        backends = [vllm_attention_backend(gpu, model.kv_cache_dtype) for gpu in gpus]
        if backends[0] != backends[1]:
            yield Issue(
                at,
                f"vLLM attends with {backends[0]} on the prefill pool's {gpus[0]} and {backends[1]} on the decode "
                f"pool's {gpus[1]} ({model.kv_cache_dtype} KV), and NIXL refuses to hand a cache between two "
                "backends (its compatibility hash differs); set the model's engineArgs to one backend both run, "
                "e.g. attention-backend: FLASHINFER, or use pools of one GPU generation",
            )


def _check_one_zone(region: RegionSpec, prefill: GpuPoolSpec, decode: GpuPoolSpec, at: str) -> Iterator[Issue]:
    """KServe's picker pairs any prefill pod with any decode pod: both pools in one zone, or hand-offs cross zones."""
    zones = sorted(set(region.pool_zones(prefill)) | set(region.pool_zones(decode)))
    if len(zones) > 1:
        pools = prefill.name if prefill.name == decode.name else f"{prefill.name} and {decode.name}"
        yield Issue(
            at,
            f"KServe's picker pairs any prefill pod with any decode pod, and {pools} span {', '.join(zones)}: "
            "hand-offs would cross zones, off any placement group or EFA and at AWS's inter-zone transfer price; "
            "put both pools in one zone (gpuPools[].zones)",
        )


def _check_hand_off(
    env: EnvironmentSpec, model: ModelSpec, region: RegionSpec, placement: PlacementSpec, decode: Fit, at: str
) -> Iterator[Issue]:
    """Disaggregated only where the fabric carries a prompt's KV cache within the auto rule's share of the TTFT
    objective (platform_catalog.disaggregation); auto placements fall back to aggregated instead."""
    side = prefill_side(model, region, placement, decode)
    ttft = ttft_objectives(env, region).get(model.name, region.observability.thresholds.ttft_p95_seconds)
    budget, t = MAX_TRANSFER_SHARE_OF_TTFT * ttft, side.transfer
    if t.seconds <= budget:
        return
    per_token = kv_bytes_per_token(model.architecture, model.kv_cache_dtype)
    fixes = "put prefill and decode in one pool (one placement group: 10 Gbps per flow), lower promptTokens"
    if model.kv_cache_dtype != "fp8" and side.fit.slot.fp8 and decode.slot.fp8:
        fixes += ", set kvCacheDtype: fp8 (half the bytes)"
    yield Issue(
        at,
        f"each prompt hands {side.spec.prompt_tokens} tokens x {per_token:,} bytes of {model.kv_cache_dtype} KV = "
        f"{t.bytes_per_prompt / 2**20:,.0f} MiB to decode over {t.transport.upper()}, {t.paths} x "
        f"{t.gbps_per_path:g} Gbps (one path per rank of the larger tensor-parallel size): "
        f"{t.seconds * 1000:.2f} ms, over the {budget * 1000:.0f} ms a hand-off may take "
        f"({MAX_TRANSFER_SHARE_OF_TTFT:.0%} of the {ttft:g}s TTFT objective); {fixes}, or use servingMode: auto",
    )


def _multi_node_hint(slot: GpuSlot, pool: GpuPoolSpec) -> str:
    if slot.splittable and not multi_node_capable(pool):
        return " (replicas span nodes only on EFA pools)"
    return ""


def _check_host_memory(region: RegionSpec, pool: GpuPoolSpec, fit: Fit, runtime: str, at: KeyPath) -> Iterator[Issue]:
    """A node must hold one server with what its engine needs (catalog ENGINE_HOST_NEEDS)."""
    host = pod_host_resources(region, pool, fit.sizing.tensor_parallel, runtime=runtime)
    if host.servers_per_node < 1:
        processes = ENGINE_HOST_NEEDS[runtime].processes(fit.sizing.tensor_parallel)
        yield Issue(
            join_path(*at, "pool"),
            f"a {pool.machine_type} node leaves {host.node_cpu:.1f} vCPU and {host.node_memory_gib:.0f} GiB "
            f"for model servers (after system and cache reservations), and one {runtime} server needs "
            f"{host.need_cpu} vCPU ({processes} busy processes, a core each) and {host.need_memory_gib} GiB; "
            "use a larger machine type",
        )


def _check_multi_node(
    model: ModelSpec, region: RegionSpec, placement: PlacementSpec, fit: Fit, at: KeyPath
) -> Iterator[Issue]:
    nodes = fit.sizing.pipeline_parallel
    needs = (
        f"one replica needs {nodes} nodes (pipeline parallel {nodes} x tensor parallel {fit.sizing.tensor_parallel})"
    )
    if model.runtime != "vllm":
        yield Issue(join_path(*at), f"{needs}, and only vLLM replicas span nodes; use runtime: vllm or a larger GPU")
    elif region.serving.deployment_mode != "Standard":
        yield Issue(
            join_path(*at),
            f"{needs}, and KServe runs multi-node replicas only in Standard mode (region {region.name!r})",
        )
    elif not region.model_cache.enabled:
        yield Issue(
            join_path(*at),
            f"{needs}, and KServe serves multi-node replicas only from pvc:// storage; enable the modelCache of "
            f"region {region.name!r}",
        )
    if placement.min_replicas != placement.max_replicas:
        yield Issue(
            join_path(*at, "minReplicas"),
            f"{needs}, and KServe's multi-node replicas take no autoscaler; set minReplicas = maxReplicas",
        )


def _check_prometheus(env: EnvironmentSpec, region: RegionSpec, models: list[str]) -> Iterator[Issue]:
    obs = region.observability
    if region.serving.prometheus_url is not None or (obs.enabled and obs.existing_prometheus is None):
        return
    i = env.regions.index(region)
    reason = (
        "observability is off"
        if not obs.enabled
        else "observability uses an existing Prometheus whose URL the platform does not know"
    )
    yield Issue(
        join_path("regions", i, "serving", "prometheusUrl"),
        f"{', '.join(models)} autoscale(s) on queue depth and latency in this region, but {reason}; set "
        "prometheusUrl to a Prometheus that scrapes the model servers, or pin their minReplicas = maxReplicas",
    )
