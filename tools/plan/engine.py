"""Evaluate a Pulumi program in-process under mocks and record what the engine would see."""

from __future__ import annotations

import asyncio
import gc
import hashlib
import heapq
import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NoReturn

import pulumi
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.stack import Stack, run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from components.config.stackfile import SECRET_MARKER
from tools.plan.mocks import STACK_REFERENCE, ComputedOutputs, PlausibleMocks, StackOutputs, reveal

SECRET = SECRET_MARKER
_SECRET_SIG = rpc._special_sig_key
_STACK_TYPE = "pulumi:pulumi:Stack"


@dataclass
class PlannedResource:
    """One registered resource, as plan.json records it."""

    urn: str
    type: str
    name: str
    parent: str | None
    provider: str | None
    custom: bool
    inputs: dict[str, Any]
    options: dict[str, Any]
    # Input property -> URNs of the resources its value came from (how the engine and CrossGuard
    # pair a bucket with its public-access block while the bucket's id is still unknown).
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    # Input path -> digest of a secret value the inputs show redacted: a PR's diff can say "changed" without it.
    secret_digests: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "provider": self.provider,
            "custom": self.custom,
            "inputs": self.inputs,
            "options": self.options,
            # What `make policy-check` needs to judge a saved plan as `make plan` did (stack rules pair by it).
            "propertyDependencies": {k: sorted(v) for k, v in sorted(self.property_dependencies.items())},
            "secretDigests": dict(sorted(self.secret_digests.items())),
        }


@dataclass
class Evaluation:
    resources: list[PlannedResource]
    outputs: dict[str, Any]
    stack_urn: str
    secret_values: set[str] = field(default_factory=set)
    # What other stacks of the environment read of this one (plain values: never written out).
    referenced: StackOutputs = field(default_factory=lambda: StackOutputs({}))
    reads_stacks: tuple[str, ...] = ()  # the stacks this one reads through StackReferences


def redact(value: Any, found: set[str] | None = None) -> Any:
    """Replace Pulumi secret values by a marker; collect their plain text (to prove it never leaks)."""
    if isinstance(value, dict):
        if value.get(_SECRET_SIG) == rpc._special_secret_sig:
            if found is not None:
                _collect_strings(value.get("value"), found)
            return SECRET
        return {k: redact(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, found) for v in value]
    return value


def with_nulls(struct: Any, value: Any) -> None:
    """Put back the nulls the SDK sends and its deserializer drops: a Helm value of None (`rollingUpdate: null`)
    reaches the provider as null and removes the chart's default, so the plan must show it."""
    if struct is None or not isinstance(value, dict):
        return
    for key, entry in struct.fields.items():
        kind = entry.WhichOneof("kind")
        if kind == "null_value":
            value.setdefault(key, None)
        elif kind == "struct_value":
            with_nulls(entry.struct_value, value.get(key))
        elif kind == "list_value" and isinstance(value.get(key), list):
            for item, element in zip(entry.list_value.values, value[key], strict=False):
                if item.WhichOneof("kind") == "struct_value":
                    with_nulls(item.struct_value, element)


def secret_digests(value: Any, path: str = "") -> dict[str, str]:
    """Input path -> a short digest of each secret value, for telling a changed secret from an unchanged one.

    An offline plan never decrypts `secure:` config (it reads the marker), so what is digested is a mock output
    or a marker, never a deployed secret; a 16-hex-digit SHA-256 prefix, salted with the path."""
    if isinstance(value, dict):
        if value.get(_SECRET_SIG) == rpc._special_secret_sig:
            plain = json.dumps(value.get("value"), sort_keys=True, default=_asset_content)
            return {path: hashlib.sha256(f"{path}\0{plain}".encode()).hexdigest()[:16]}
        found: dict[str, str] = {}
        for k, v in value.items():
            found.update(secret_digests(v, f"{path}.{k}" if path else k))
        return found
    if isinstance(value, list):
        found = {}
        for i, v in enumerate(value):
            found.update(secret_digests(v, f"{path}[{i}]"))
        return found
    return {}


def _asset_content(value: Any) -> Any:
    """What an asset or archive holds (its text, path, URI or members), not its object identity."""
    for attribute in ("text", "path", "uri", "assets"):
        if hasattr(value, attribute):
            return {attribute: getattr(value, attribute)}
    return repr(value)


def integral_numbers(value: Any) -> Any:
    """Integral floats as ints: the wire format (protobuf Struct) carries every number as a double,
    while the providers emit JSON in which `port: 8080` stays an integer (a server rejects 8080.0
    where its schema says int32)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: integral_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [integral_numbers(v) for v in value]
    return value


def _collect_strings(value: Any, found: set[str]) -> None:
    # SECRET itself is what an offline plan reads for a `secure:` config value: the marker, not a secret.
    if isinstance(value, str) and len(value) >= 8 and value != SECRET:
        found.add(value)
    elif isinstance(value, dict):
        for v in value.values():
            _collect_strings(v, found)
    elif isinstance(value, list):
        for v in value:
            _collect_strings(v, found)


class RecordingMonitor(mocks.MockMonitor):
    """A MockMonitor that keeps each registration request with engine-accurate URNs."""

    def __init__(
        self,
        on_register: Callable[[PlannedResource], None] | None = None,
        stack_outputs: Mapping[str, StackOutputs] | None = None,
        computed: Mapping[str, ComputedOutputs] | None = None,
        plain_secrets: bool = False,
    ):
        self.provider_regions: dict[str, str] = {}
        super().__init__(PlausibleMocks(self._region_of, stack_outputs, computed))
        self._plain_secrets = plain_secrets
        self.planned: list[PlannedResource] = []
        self.secret_values: set[str] = set()
        self.stack_urn = ""
        self._on_register = on_register
        # Reads (StackReferences, an existing object looked up by name) are not the stack's resources.
        self.read_urns: set[str] = set()
        self.read_stacks: list[str] = []

    def _region_of(self, provider_ref: str | None) -> str:
        return self.provider_regions.get((provider_ref or "").rsplit("::", 1)[0], "us-east-1")

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        # The engine chains every ancestor type except the stack's (the SDK mock keeps only one).
        if parent and parent != self.stack_urn:
            type_ = parent.split("::")[2] + "$" + type_
        return "urn:pulumi:" + "::".join([pulumi.get_stack(), pulumi.get_project(), type_, name])

    def RegisterResource(self, request):
        if request.type == _STACK_TYPE:
            self.stack_urn = self.make_urn("", request.type, request.name)
            return super().RegisterResource(request)

        asyncio_loop_guard()
        raw = integral_numbers(rpc.deserialize_properties(request.object, keep_unknowns=True) if request.object else {})
        with_nulls(request.object, raw)
        inputs = reveal(raw) if self._plain_secrets else redact(raw, self.secret_values)
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type == "pulumi:providers:aws":
            self.provider_regions[urn] = str(raw.get("region", "us-east-1"))

        by_property = {
            key: urns
            for key, deps in request.propertyDependencies.items()
            if (urns := [u for u in deps.urns if u not in self.read_urns])
        }
        property_deps = {u for urns in by_property.values() for u in urns}
        explicit_deps = sorted(  # SDK order varies
            u for u in request.dependencies if u not in property_deps and u not in self.read_urns
        )
        timeouts = request.customTimeouts
        planned = PlannedResource(
            urn=urn,
            type=request.type,
            name=request.name,
            parent=request.parent or None,
            provider=request.provider.rsplit("::", 1)[0] if request.provider else None,
            custom=bool(request.custom),
            inputs=inputs,
            options={
                "protect": bool(request.protect),
                "retainOnDelete": bool(request.retainOnDelete),
                "dependsOn": explicit_deps,
                "ignoreChanges": list(request.ignoreChanges),
                "deleteBeforeReplace": bool(request.deleteBeforeReplace),
                "replaceOnChanges": list(request.replaceOnChanges),
                "customTimeouts": {
                    k: getattr(timeouts, k) for k in ("create", "update", "delete") if getattr(timeouts, k)
                },
            },
            property_dependencies=by_property,
            secret_digests=secret_digests(raw),
        )
        self.planned.append(planned)
        if self._on_register is not None:
            self._on_register(planned)

        return super().RegisterResource(request)

    def ReadResource(self, request):
        self.read_urns.add(self.make_urn(request.parent, request.type, request.name))
        if request.type == STACK_REFERENCE:
            self.read_stacks.append(request.name.rsplit("/", 1)[-1])
        return super().ReadResource(request)


def asyncio_loop_guard() -> None:
    """Deserialising resource references needs an event loop on the calling thread."""
    try:
        asyncio.get_event_loop()
    except RuntimeError:
        asyncio.set_event_loop(asyncio.new_event_loop())


def evaluate(
    program: Callable[[], None],
    *,
    project: str,
    stack: str,
    config: dict[str, str],
    secret_keys: list[str] | None = None,
    on_register: Callable[[PlannedResource], None] | None = None,
    stack_outputs: Mapping[str, StackOutputs] | None = None,
    computed: Mapping[str, ComputedOutputs] | None = None,
    plain_secrets: bool = False,
) -> Evaluation:
    """Run `program` as `pulumi up` would, against a recording mock engine; `stack_outputs` answer its
    StackReferences, `computed` replaces a provider package's mock outputs, `plain_secrets` keeps secret inputs
    in plain text (for the rehearsal, which writes no plan)."""
    settings.reset_options(project=project, stack=stack)
    monitor = RecordingMonitor(on_register, stack_outputs, computed, plain_secrets)
    mocks.set_mocks(monitor.mocks, project=project, stack=stack, preview=False, monitor=monitor)
    pulumi.runtime.set_all_config(config, secret_keys or [])
    with cycle_collector_paused(), stack_walk_skipped():
        _sync_await(run_pulumi_func(program))
        root = settings.get_root_resource()
        if not isinstance(root, Stack):
            raise RuntimeError("the program ran without its root stack resource")
        outputs, referenced = _resolve_outputs(root.outputs, monitor.secret_values)
    return Evaluation(
        in_dependency_order(monitor.planned),
        outputs,
        monitor.stack_urn,
        monitor.secret_values,
        referenced,
        tuple(sorted(monitor.read_stacks)),
    )


def in_dependency_order(resources: list[PlannedResource]) -> list[PlannedResource]:
    """Every resource after its parent, provider and dependencies, ties broken by URN.

    Registration order is whatever asyncio resolves first, so it differs between runs; this order does not,
    and keeps what the engine guarantees (a parent is registered before its children).
    """
    by_urn = {r.urn: r for r in resources}
    waits_on: dict[str, set[str]] = {}
    for r in resources:
        deps = {r.parent, r.provider, *r.options.get("dependsOn", ())}
        deps.update(u for urns in r.property_dependencies.values() for u in urns)
        waits_on[r.urn] = {d for d in deps if d in by_urn and d != r.urn}
    dependents: dict[str, list[str]] = {u: [] for u in by_urn}
    for urn, deps in waits_on.items():
        for dep in deps:
            dependents[dep].append(urn)
    ready = [u for u, deps in waits_on.items() if not deps]
    heapq.heapify(ready)
    ordered: list[PlannedResource] = []
    while ready:
        urn = heapq.heappop(ready)
        ordered.append(by_urn[urn])
        for dependent in dependents[urn]:
            waits_on[dependent].discard(urn)
            if not waits_on[dependent]:
                heapq.heappush(ready, dependent)
    if len(ordered) != len(resources):  # a cycle cannot be registered; keep the rest in URN order regardless
        placed = {r.urn for r in ordered}
        ordered += sorted((r for r in resources if r.urn not in placed), key=lambda r: r.urn)
    return ordered


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a program is evaluated.

    The provider SDKs leave a heap of a few hundred thousand objects; every full collection
    walks it, and an evaluation allocates enough to trigger several, more the more resources
    it declares (`make bench`, warm: 1.38 -> 2.13 ms per resource from 1 to 8 regions with
    collection, a flat ~1.5 without; a fresh prod plan spends 0.6 s less). The cycles an
    evaluation leaves behind are collected as usual once it returns, unless the process keeps
    its heap until exit (`keep_heap_until_exit`: then never); reference counting frees
    everything else meanwhile. Those cycles are the SDK's finished tasks and futures: prod's
    hold no file descriptor, thread or unretrieved exception (fds and threads stay flat across
    plans), so nothing the program does waits on them being freed.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        # Only an evaluation that returned: one that raised is collected as usual (its traceback holds its caller's
        # frames).
        if _heap_kept_until_exit:
            gc.freeze()
    finally:
        if enabled:
            gc.enable()


def _no_stack_trace() -> source_pb2.StackTrace:
    return source_pb2.StackTrace()


@contextmanager
def stack_walk_skipped() -> Iterator[None]:
    """No walk of the Python call stack per registration while a program is evaluated.

    The SDK extracts the whole call stack of every resource it registers (each frame's source line, a file URI)
    for the engine's source positions (upstream.PULUMI_SDK_WALKS_THE_STACK_PER_REGISTRATION); the recording
    monitor never reads them. The cost grows with the depth a resource is declared at (components within
    components): a warm prod plan evaluates ~9 % faster without it. The SDK floors of `make bench` run under the
    same engine, so they skip it too.
    """
    original = sdk_resource._get_stack_trace
    sdk_resource._get_stack_trace = _no_stack_trace
    try:
        yield
    finally:
        sdk_resource._get_stack_trace = original


_heap_kept_until_exit = False


def keep_heap_until_exit() -> None:
    """In a process that exits after its evaluations (a command line, a bench child, a test suite's worker): from
    now on, each evaluation's heap, its cyclic garbage included, lives until exit, out of every collector scan. The
    command lines that evaluate declare it first thing (tests/test_engine_heap.py holds them to it).

    An evaluation's garbage is cycles of the SDK's futures, tasks and Outputs: ~352 k objects per prod plan (0.42 s
    to collect in one go). Frozen instead of collected after each run, a warm prod plan took 6-14 % less CPU (min and
    median of 5-7 rounds, alternating with and without in one process) for ~45 MB more memory per plan (a one-shot
    `make plan ENV=prod`: 376 -> 408 MiB at its peak), which the OS reclaims at exit. What is alive now (the
    program's modules, an earlier plan) is frozen too, so a full collection after a prod plan (~0.3 s) does not land
    on what runs next."""
    global _heap_kept_until_exit
    _heap_kept_until_exit = True
    gc.freeze()


def exit_skipping_final_collection(code: int) -> NoReturn:
    """Exit after evaluating: the cycle collection Python runs at shutdown walks the provider
    SDKs' whole heap (0.9 s of CPU after a prod plan) to free memory the OS reclaims anyway."""
    gc.freeze()
    sys.exit(code)


def _resolve_outputs(exported: dict[str, Any], secrets: set[str]) -> tuple[dict[str, Any], StackOutputs]:
    """The outputs as written (secrets redacted), and as another stack's reference reads them."""

    async def resolve() -> tuple[dict[str, Any], StackOutputs]:
        out, plain, secret_names = {}, {}, set()
        for key, value in exported.items():
            output = pulumi.Output.from_input(value)
            resolved = integral_numbers(await output.future())
            plain[key] = resolved
            if await output.is_secret():
                _collect_strings(resolved, secrets)
                out[key] = SECRET
                secret_names.add(key)
            else:
                out[key] = resolved
        return out, StackOutputs(plain, frozenset(secret_names))

    return _sync_await(resolve())
