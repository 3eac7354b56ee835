"""Model servers: the rendered pod must match the sizing the InferenceService was computed with.

The KServe capability annotates each InferenceService with its sizing
(`inference-platform.io/*`, platform_catalog/names.annotation). These rules check the
rendered pod against it; a missing annotation is reported as "cannot check", never a pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from platform_catalog.gpus import GPUS, GpuModel
from platform_catalog.names import annotation
from policies.framework import CannotCheck, Context, Violation, rule
from policies.model import UNKNOWN, Resource, Stack, as_list, get, number, peek
from policies.pods import (
    WORKLOAD_KINDS,
    Workload,
    command_line,
    flag,
    is_model_server,
    is_workload,
    workload,
    workloads,
)
from policies.upstream import RUNTIME_LORA_ENV

GPU_PRODUCT = annotation("gpu-product")
GPU_MEMORY = annotation("gpu-memory-gib")
TENSOR_PARALLEL = annotation("tensor-parallel")
PIPELINE_PARALLEL = annotation("pipeline-parallel")
WEIGHTS = annotation("weights-gib")
KV_CACHE = annotation("kv-cache-gib")
LOAD_SECONDS = annotation("estimated-load-seconds")
FP8_CAPABLE = annotation("fp8-capable")
SIZING = (GPU_PRODUCT, GPU_MEMORY, TENSOR_PARALLEL, PIPELINE_PARALLEL, WEIGHTS, KV_CACHE, LOAD_SECONDS, FP8_CAPABLE)

# Kubernetes probe defaults.
PROBE_PERIOD_SECONDS = 10
PROBE_FAILURE_THRESHOLD = 3
SHM_PATH = "/dev/shm"
ISVC = ("kubernetes:serving.kserve.io/v1beta1:InferenceService",)


def catalog_gpu(product: object) -> GpuModel | None:
    """The catalog GPU for a product name: the catalog's own (H100-80GB) or GFD's (NVIDIA-H100-80GB-HBM3)."""
    return GPUS.get(str(product)) or next((g for g in GPUS.values() if g.gfd_product == product), None)


def gpu_limit(container: dict) -> float:
    """GPUs (whole or MIG slices) a container is given."""
    limits = get(container, "resources", "limits") or {}
    return sum(
        number(v) or 0 for k, v in limits.items() if k == "nvidia.com/gpu" or str(k).startswith("nvidia.com/mig-")
    )


@dataclass
class Served:
    """A model server with its sizing annotations and rendered pod."""

    resource: Resource
    pod: Workload
    annotations: dict

    def value(self, key: str) -> float | None:
        return number(get(self.annotations, key))

    def missing(self, *keys: str) -> list[str]:
        return [k for k in keys if self.value(k) is None]

    def malformed(self, *keys: str) -> list[str]:
        return [k for k in keys if k in self.annotations and self.value(k) is None]

    @property
    def tokens(self) -> list[str]:
        return command_line(self.pod.main)

    def tensor_parallel(self) -> float | None:
        value = self.value(TENSOR_PARALLEL)
        return value if value is not None else number(flag(self.tokens, "--tensor-parallel-size"))


def served(r: Resource, ctx: Context) -> Served | None:
    """The model server, or None when it neither requests GPUs nor carries sizing (a CPU model)."""
    w = workload(r, ctx.require_stack())
    if w is None:
        return None
    annotations = {k: v for k, v in r.annotations.items() if k in SIZING}
    if not annotations and not any(gpu_limit(c) for c in w.containers):
        return None
    return Served(r, w, annotations)


def _cannot(s: Served, keys: list[str], what: str) -> CannotCheck:
    return CannotCheck(
        f"{s.resource.label}: {what} without the annotation(s) {', '.join(keys)}",
        fix="the model deployment must annotate its InferenceService with its sizing (inference-platform.io/*)",
    )


def _malformed(s: Served, keys: list[str]) -> Violation:
    shown = ", ".join(f"{k}={s.annotations[k]!r}" for k in keys)
    return Violation(f"{s.resource.label}: annotation(s) {shown} are not numbers", fix="write plain numbers")


@rule(
    name="llm-model-fits-gpu",
    description="A model's GPUs hold its weights and KV cache: tensor-parallel x pipeline-parallel x GPU memory >= "
    "weights + KV cache, the pod gets at least tensor-parallel GPUs, and its engine flags match the sizing.",
    severity="critical",
    remediation="raise tensor/pipeline parallelism, use a larger GPU, quantize the weights or lower maxModelLen x "
    "maxNumSeqs; render the engine flags and GPU limits from the same sizing",
    applies_to=ISVC,
    subject=is_model_server,
    scope="stack",
)
def model_fits_gpu(r: Resource, ctx: Context) -> Iterator[Violation]:
    s = served(r, ctx)
    if s is None:
        return
    needed = (GPU_MEMORY, TENSOR_PARALLEL, WEIGHTS, KV_CACHE)
    if s.malformed(*needed, PIPELINE_PARALLEL):
        yield _malformed(s, s.malformed(*needed, PIPELINE_PARALLEL))
        return
    if s.missing(*needed):
        yield _cannot(s, s.missing(*needed), "the memory fit cannot be checked")
        return
    memory, tp, weights, kv = (s.value(k) or 0 for k in needed)
    pp = s.value(PIPELINE_PARALLEL) or 1
    gpu = catalog_gpu(s.annotations.get(GPU_PRODUCT))
    if gpu is not None and memory > gpu.device_memory_gib:
        yield Violation(
            f"{r.label}: sized for {memory:g} GiB per GPU, but a {gpu.name} reports {gpu.device_memory_gib:.2f} GiB"
        )
    if tp * pp * memory < weights + kv:
        yield Violation(
            f"{r.label}: {tp:g} x {pp:g} GPU(s) x {memory:g} GiB = {tp * pp * memory:g} GiB < weights {weights:g} GiB "
            f"+ KV cache {kv:g} GiB = {weights + kv:g} GiB: the model does not fit"
        )
    tokens = s.tokens
    for key, engine_flag, value in (
        (TENSOR_PARALLEL, "--tensor-parallel-size", tp),
        (PIPELINE_PARALLEL, "--pipeline-parallel-size", pp),
    ):
        rendered = number(flag(tokens, engine_flag))
        if rendered is not None and rendered != value:
            yield Violation(f"{r.label}: engine runs {engine_flag} {rendered:g} but is sized for {key}={value:g}")
    gpus = gpu_limit(s.pod.main)
    if gpus and gpus < tp:
        yield Violation(f"{r.label}: the pod gets {gpus:g} GPU(s) but is sized for tensor-parallel {tp:g}")
    elif not gpus:
        yield (
            CannotCheck(f"{r.label}: no GPU limit on the pod and {s.pod.missing}")
            if not s.pod.complete
            else Violation(f"{r.label}: sized for {tp:g} GPU(s) but the pod requests none")
        )


@rule(
    name="llm-startup-probe-budget",
    description="A model server's startup probe waits at least its estimated start-up: weight load, engine start "
    "and compilation (initialDelaySeconds + periodSeconds x failureThreshold >= inference-platform.io/estimated-load-seconds).",
    severity="high",
    remediation="add a startupProbe on the serving port (e.g. GET /v1/models) with failureThreshold x periodSeconds "
    "above the estimated load time, with margin",
    applies_to=ISVC,
    subject=is_model_server,
    scope="stack",
)
def startup_probe_budget(r: Resource, ctx: Context) -> Iterator[Violation]:
    s = served(r, ctx)
    if s is None:
        return
    if s.malformed(LOAD_SECONDS):
        yield _malformed(s, [LOAD_SECONDS])
        return
    load = s.value(LOAD_SECONDS)
    if load is None:
        yield _cannot(s, [LOAD_SECONDS], "the startup budget cannot be checked")
        return
    probe = get(s.pod.main, "startupProbe")
    if not probe:
        yield (
            CannotCheck(f"{r.label}: no startupProbe on the InferenceService and {s.pod.missing}")
            if not s.pod.complete
            else Violation(f"{r.label} has no startupProbe: liveness checks kill it during its {load:g}s load")
        )
        return
    period = number(get(probe, "periodSeconds")) or PROBE_PERIOD_SECONDS
    failures = number(get(probe, "failureThreshold")) or PROBE_FAILURE_THRESHOLD
    budget = (number(get(probe, "initialDelaySeconds")) or 0) + period * failures
    if budget < load:
        yield Violation(
            f"{r.label}: startup probe allows {budget:g}s ({period:g}s x {failures:g}), less than the estimated "
            f"{load:g}s load"
        )


def _shm_volume(pod: dict, container: dict) -> tuple[dict | None, bool]:
    mounts = {m.get("name"): m.get("mountPath") for m in as_list(get(container, "volumeMounts")) if isinstance(m, dict)}
    for volume in as_list(get(pod, "volumes")):
        if isinstance(volume, dict) and mounts.get(volume.get("name")) == SHM_PATH:
            return volume, True
    return None, False


@rule(
    name="llm-shm-for-tensor-parallel",
    description="Tensor-parallel model servers (TP > 1) mount a memory-backed emptyDir at /dev/shm for NCCL.",
    severity="high",
    remediation="add a volume {name: dshm, emptyDir: {medium: Memory, sizeLimit: <GiB>}} mounted at /dev/shm in the "
    "serving container",
    applies_to=ISVC,
    subject=is_model_server,
    scope="stack",
)
def shm_for_tensor_parallel(r: Resource, ctx: Context) -> Iterator[Violation]:
    s = served(r, ctx)
    if s is None:
        return
    tp = s.tensor_parallel()
    if tp is None:
        yield _cannot(s, [TENSOR_PARALLEL], "the /dev/shm need cannot be checked (no --tensor-parallel-size either)")
        return
    if tp <= 1:
        return
    volume, mounted = _shm_volume(s.pod.pod, s.pod.main)
    if not mounted:
        yield (
            CannotCheck(f"{r.label}: no /dev/shm mount on the InferenceService and {s.pod.missing}")
            if not s.pod.complete
            else Violation(f"{r.label}: tensor-parallel {tp:g} without /dev/shm (the container default is 64 MiB)")
        )
    elif volume is not None and get(volume, "emptyDir", "medium") != "Memory":
        yield Violation(f"{r.label}: /dev/shm volume {volume.get('name')} is not an emptyDir with medium Memory")


@rule(
    name="llm-fp8-kv-cache-supported",
    description="--kv-cache-dtype fp8 is used only on GPUs with FP8 (inference-platform.io/fp8-capable, or the "
    "catalog's GPU for inference-platform.io/gpu-product).",
    severity="high",
    remediation="drop --kv-cache-dtype fp8 on GPUs without FP8 (A100, A10G) and size the KV cache for 16-bit",
    applies_to=ISVC,
    subject=is_model_server,
    scope="stack",
)
def fp8_kv_cache_supported(r: Resource, ctx: Context) -> Iterator[Violation]:
    s = served(r, ctx)
    if s is None:
        return
    dtype = flag(s.tokens, "--kv-cache-dtype")
    if dtype is None:
        if not s.pod.complete:
            yield CannotCheck(f"{r.label}: the engine flags are partly the runtime's and {s.pod.missing}")
        return
    if not dtype.startswith("fp8"):
        return
    declared = s.annotations.get(FP8_CAPABLE)
    gpu = catalog_gpu(s.annotations.get(GPU_PRODUCT))
    if declared is not None and str(declared).lower() not in ("true", "false"):
        yield _malformed(s, [FP8_CAPABLE])
    elif str(declared).lower() == "false":
        yield Violation(f"{r.label}: --kv-cache-dtype {dtype} on a GPU without FP8 ({FP8_CAPABLE}=false)")
    elif gpu is not None and not gpu.fp8:
        yield Violation(f"{r.label}: --kv-cache-dtype {dtype} on {gpu.name}, which has no FP8")
    elif declared is None and gpu is None:
        yield _cannot(s, [FP8_CAPABLE, GPU_PRODUCT], "FP8 support cannot be checked")


def _env_true(value: object) -> bool:
    """How vLLM reads VLLM_ALLOW_RUNTIME_LORA_UPDATING: `.strip().lower() in ("1", "true")` (vllm/envs.py)."""
    return isinstance(value, str | bool | int) and str(value).strip().lower() in ("1", "true")


# `VAR=value` in a shell line (`bash -c "VLLM_ALLOW_RUNTIME_LORA_UPDATING=1 exec vllm serve"`, `export VAR=1;`,
# `env VAR=1 python ...`): the process the shell starts inherits it.
_SHELL_ASSIGNMENT = re.compile(rf"(?<![A-Za-z0-9_]){RUNTIME_LORA_ENV}=(\S*)")


def _runs_vllm(c: dict) -> bool:
    text = " ".join(str(t) for t in [c.get("image"), *as_list(c.get("command")), *as_list(c.get("args"))])
    return "vllm" in text.lower()


def _value(stack: Stack, kind: str, cluster: str | None, namespace: str | None, name: object, key: str) -> object:
    """The value of `key` in the ConfigMap or Secret a container reads: None when absent, UNKNOWN when the stack does
    not define the object (or its data is secret, or the namespace is any, as for a cluster runtime)."""
    if namespace is None:
        return UNKNOWN
    for r in stack.kubernetes(kind, "", cluster):
        if r.namespace == namespace and r.k8s_name == name:
            values = [peek(r.props, field, key) for field in ("stringData", "data")]
            return next((v for v in values if v is not None), None)
    return UNKNOWN


def runtime_lora_settings(c: dict, namespace: str | None, cluster: str | None, stack: Stack) -> Iterator[Violation]:
    """Where a container turns runtime LoRA updating on: its env (a value, or a key of a ConfigMap or Secret), its
    envFrom (every key of a ConfigMap or Secret, with its prefix), or a shell line in its command. A source the stack
    does not define (or whose value is secret) cannot be checked for a vLLM container."""
    name = c.get("name")
    for e in as_list(c.get("env")):
        if not isinstance(e, dict) or e.get("name") != RUNTIME_LORA_ENV:
            continue
        for kind, ref in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
            source = peek(e, "valueFrom", ref)
            if isinstance(source, dict):
                value = _value(stack, kind, cluster, namespace, source.get("name"), str(source.get("key")))
                if value is UNKNOWN:
                    yield CannotCheck(f"container {name}: {RUNTIME_LORA_ENV} comes from {kind} {source.get('name')}")
                elif _env_true(value):
                    yield Violation(
                        f"container {name} sets {RUNTIME_LORA_ENV}={value} from {kind} {source.get('name')}"
                    )
        if _env_true(e.get("value")):
            yield Violation(f"container {name} sets {RUNTIME_LORA_ENV}={e.get('value')}")
    for source in as_list(c.get("envFrom")):
        if not isinstance(source, dict):
            continue
        prefix = str(source.get("prefix") or "")
        for kind, ref in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            target = source.get(ref)
            if not isinstance(target, dict):
                continue
            if not RUNTIME_LORA_ENV.startswith(prefix):
                continue  # every variable it sets starts with the prefix
            value = _value(stack, kind, cluster, namespace, target.get("name"), RUNTIME_LORA_ENV.removeprefix(prefix))
            if value is UNKNOWN and _runs_vllm(c):
                yield CannotCheck(f"container {name} takes its environment from {kind} {target.get('name')}")
            elif value is not UNKNOWN and _env_true(value):
                yield Violation(f"container {name} sets {RUNTIME_LORA_ENV}={value} through envFrom {kind} "
                                f"{target.get('name')}")  # fmt: skip
    for item in [*as_list(c.get("command")), *as_list(c.get("args"))]:
        for value in _SHELL_ASSIGNMENT.findall(str(item)):
            if _env_true(value.strip("'\";")):
                yield Violation(f"container {name} sets {RUNTIME_LORA_ENV}={value} in its command line")


RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")


def _is_runtime(r: Resource) -> bool:
    return r.is_kubernetes and r.kind in RUNTIME_KINDS and r.api_group == "serving.kserve.io"


@rule(
    name="vllm-no-runtime-lora-in-production",
    description="In production no pod runs vLLM with VLLM_ALLOW_RUNTIME_LORA_UPDATING on (as an env value, from a "
    "ConfigMap or Secret by key or envFrom, or in a shell line), nor does a serving runtime any InferenceService may "
    "name: it opens /v1/load_lora_adapter and /v1/unload_lora_adapter, so whoever reaches a server loads any adapter "
    "from any path (or unloads a tenant's).",
    severity="critical",
    remediation="drop VLLM_ALLOW_RUNTIME_LORA_UPDATING; declare adapters in config (tenants[].loras, "
    "--lora-modules) so they load at start",
    applies_to=(*WORKLOAD_KINDS, *RUNTIME_KINDS),
    subject=lambda r: is_workload(r) or _is_runtime(r),
    scope="stack",
    config=("production",),
)
def vllm_no_runtime_lora(r: Resource, ctx: Context) -> Iterator[Violation]:
    stack = ctx.require_stack()
    if _is_runtime(r):
        spec = get(r.props, "spec") or {}
        containers = [("", c) for c in as_list(spec.get("containers"))]
        containers += [("workerSpec ", c) for c in as_list(peek(spec, "workerSpec", "containers"))]
        namespace = r.namespace if r.kind == "ServingRuntime" else None  # a cluster runtime's pods: any namespace
        found = [(f"{r.label} {where}".rstrip(), v) for where, c in containers if isinstance(c, dict)
                 for v in runtime_lora_settings(c, namespace, r.cluster, stack)]  # fmt: skip
    else:
        found = [
            (w.label, v)
            for w in workloads(r, stack)
            for c in w.all_containers()
            for v in runtime_lora_settings(c, w.namespace, r.cluster, stack)
        ]
    for where, finding in found:
        if isinstance(finding, CannotCheck):
            yield CannotCheck(f"{where}: {finding.message}")
        elif ctx.production is None:
            yield CannotCheck(f"{where} enables runtime LoRA updating; production is not configured")
        elif ctx.production:
            yield Violation(f"{where}: {finding.message}")


RULES = [vllm_no_runtime_lora, model_fits_gpu, startup_probe_budget, shm_for_tensor_parallel, fp8_kv_cache_supported]
