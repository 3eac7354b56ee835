"""Resources as the rules see them: the same plain data under the Pulumi engine and offline.

Values the engine does not know yet (outputs of resources not created at preview) are the
single marker `UNKNOWN`. Reading one through `get` raises `NotKnown`, which the framework
turns into a "cannot check" finding for that resource: an unknown never passes silently
and never crashes a rule.
"""

from __future__ import annotations

import json
import shlex
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache, wraps
from typing import Any, TypeVar

# The engine's unknown sentinels (pulumi_policy.proxy, pulumi.runtime.rpc.UNKNOWN), and the
# marker the offline plan writes for a secret: neither can be checked.
_SENTINELS = frozenset(
    {
        "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",  # boolean
        "3eeb2bf0-c639-47a8-9e75-3b44932eb421",  # number
        "04da6b54-80e4-46f7-96ec-b56ff0331ba9",  # string (also rpc.UNKNOWN)
        "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",  # array
        "030794c1-ac77-496b-92df-f27374a8bd58",  # asset
        "e48ece36-62e2-4504-bad9-02848725956a",  # archive
        "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",  # object
    }
)
OFFLINE_SECRET = "[secret]"
_SENTINEL_MAX_LEN = max(len(s) for s in (*_SENTINELS, OFFLINE_SECRET))


class _Unknown:
    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<unknown>"

    def __deepcopy__(self, memo: dict) -> _Unknown:
        return self


UNKNOWN = _Unknown()


class NotKnown(Exception):
    """A value a rule needs is not known (yet); carries the property path for the message."""

    def __init__(self, path: str):
        super().__init__(path)
        self.path = path


def normalize(value: Any) -> Any:
    """Plain dicts/lists with every unknown sentinel (and offline secret marker) replaced by UNKNOWN."""
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalize(v) for v in value]
    # Sentinels are short: do not hash long strings (dashboards, kubeconfigs) to look them up.
    if isinstance(value, str) and len(value) <= _SENTINEL_MAX_LEN and (value in _SENTINELS or value == OFFLINE_SECRET):
        return UNKNOWN
    return value


def contains_unknown(value: Any) -> bool:
    """Whether `value` is, or holds at any depth, an unknown. A walk with its own stack: every `get` asks it of
    what it returns, whole pod specs included."""
    if value is UNKNOWN:
        return True
    pending = [value]
    while pending:
        current = pending.pop()
        if isinstance(current, dict):
            current = current.values()
        elif not isinstance(current, list):
            continue
        for v in current:
            if v is UNKNOWN:
                return True
            if isinstance(v, dict | list):
                pending.append(v)
    return False


def _path(parts: Iterable[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def get(value: Any, *path: str | int, default: Any = None) -> Any:
    """The value at `path` (None/default when absent). Raises NotKnown when it is, or holds, an unknown."""
    current = value
    for i, key in enumerate(path):
        if current is UNKNOWN:
            raise NotKnown(_path(path[:i]))
        if isinstance(key, int):
            current = current[key] if isinstance(current, list) and -len(current) <= key < len(current) else None
        else:
            current = current.get(key) if isinstance(current, dict) else None
        if current is None:
            return default
    if contains_unknown(current):
        raise NotKnown(_path(path))
    return current


def peek(value: Any, *path: str | int) -> Any:
    """Like `get` but returns UNKNOWN instead of raising: for matching, where unknown just means no match."""
    try:
        return get(value, *path)
    except NotKnown:
        return UNKNOWN


_CACHED_LINE_CHARS = 4096  # longer texts (a script, a config file in a list) are split each time, not kept


def shell_words(line: str) -> tuple[str, ...] | None:
    """A command line's words as a POSIX shell splits them; None when its quotes do not close. Split once per text:
    every pass of the pack meets the same command lines (a plan's, and each mutation test's)."""
    return _cached_words(line) if len(line) <= _CACHED_LINE_CHARS else _words(line)


def _words(line: str) -> tuple[str, ...] | None:
    try:
        return tuple(shlex.split(line))
    except ValueError:
        return None


_cached_words = lru_cache(maxsize=16384)(_words)


def as_list(value: Any) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def truthy(value: Any) -> bool:
    """Provider booleans arrive as bool or as "true"/"false" strings (e.g. launch template EBS flags)."""
    return value is True or (isinstance(value, str) and value.lower() == "true")


def number(value: Any) -> float | None:
    """Provider numbers arrive as int, float (mocks) or numeric strings (annotations)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        return None


def json_document(value: Any, what: str) -> dict:
    """An IAM-style JSON document given as a string or a mapping; NotKnown when unknown."""
    if value is UNKNOWN or contains_unknown(value):
        raise NotKnown(what)
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


@dataclass
class Resource:
    """One resource: engine type token, inputs (camelCase), options and where its inputs came from."""

    urn: str
    type: str
    name: str
    props: dict[str, Any]
    protect: bool = False
    retain_on_delete: bool | None = None  # None: not visible (CrossGuard does not pass it to policies)
    parent: str | None = None
    provider: str | None = None  # provider URN
    deps: dict[str, list[str]] = field(default_factory=dict)  # input property -> URNs it was computed from
    propagated: str | None = None  # a Karmada template's copy as this member cluster runs it
    override_error: str = ""  # why an OverridePolicy did not apply to that copy
    patch_of: str | None = None  # a *Patch judged as the object it produces: the URN of the object it patches

    # --- Kubernetes objects ------------------------------------------------------------------------
    @property
    def is_kubernetes(self) -> bool:
        return self.type.startswith("kubernetes:") and isinstance(self.props.get("kind"), str)

    @property
    def kind(self) -> str:
        kind = self.props.get("kind")
        return kind if isinstance(kind, str) else ""

    @property
    def api_group(self) -> str:
        api_version = self.props.get("apiVersion")
        return api_version.split("/")[0] if isinstance(api_version, str) and "/" in api_version else ""

    @property
    def metadata(self) -> dict:
        meta = self.props.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def k8s_name(self) -> str:
        name = self.metadata.get("name")
        return name if isinstance(name, str) else self.name

    @property
    def namespace(self) -> str:
        """The object's namespace; the provider's default ("default") when unset."""
        ns = self.metadata.get("namespace")
        return ns if isinstance(ns, str) else "default"

    @property
    def labels(self) -> dict:
        labels = self.metadata.get("labels")
        return labels if isinstance(labels, dict) else {}

    @property
    def annotations(self) -> dict:
        annotations = self.metadata.get("annotations")
        return annotations if isinstance(annotations, dict) else {}

    @property
    def cluster(self) -> str | None:
        """Kubernetes objects: the cluster they go to (the project names each provider after its cluster)."""
        return self.provider.rsplit("::", 1)[-1] if self.provider else None

    @property
    def label(self) -> str:
        """Short human reference for messages."""
        if not self.is_kubernetes:
            return self.name
        where = f" (propagated to {self.propagated})" if self.propagated else ""
        return f"{self.kind} {self.namespace}/{self.k8s_name}{where}"


class AnyCluster:
    """`Stack.kubernetes`' default: objects of every cluster (None is a cluster value: no provider)."""


ANY_CLUSTER = AnyCluster()

T = TypeVar("T")

# What one pass of the pack (framework.evaluate_stack) derived from a resource: (function, resource id) -> (resource,
# value), the resource kept so its id is not reused; None outside a pass, where each call computes afresh (a resource
# may change between two calls).
_pass_memo: ContextVar[dict[tuple[Callable[..., Any], int], tuple[Resource, Any]] | None] = ContextVar(
    "_pass_memo", default=None
)


@contextmanager
def one_pass() -> Iterator[None]:
    """Within it, functions marked `once_per_pass` compute once per resource: no resource changes during a pass."""
    token = _pass_memo.set({})
    try:
        yield
    finally:
        _pass_memo.reset(token)


def once_per_pass(derive: Callable[[Resource], T]) -> Callable[[Resource], T]:
    """`derive(resource)` once per resource within a pass (many rules ask whether a resource runs pods)."""

    @wraps(derive)
    def memoized(r: Resource) -> T:
        memo = _pass_memo.get()
        if memo is None:
            return derive(r)
        key = (derive, id(r))
        found = memo.get(key)
        if found is None:
            found = memo[key] = (r, derive(r))  # holding the resource keeps its id from being reused in the pass
        return found[1]

    return memoized


class Stack:
    """All resources of one stack, with the lookups multi-resource rules need.

    `declared` is what the program registers; `resources` is what runs: a Karmada template is
    replaced by its members' overridden copies (policies/propagation.py), which stack rules judge.
    """

    def __init__(self, resources: Iterable[Resource], *, previewed_alone: bool = False):
        from policies.propagation import member_copies

        # True: one stack as `pulumi preview` of it sees it (CrossGuard), maybe one of an environment's several;
        # False: the whole environment (the offline plan), every object of every member known.
        self.previewed_alone = previewed_alone
        self.declared = list(resources)
        self.resources = patched(member_copies(self.declared))
        self.workload_cache: dict[int, list] = {}
        self.memo: dict[str, Any] = {}  # what a rule computes once per stack (e.g. which credentials are agents')

    @cached_property
    def by_urn(self) -> dict[str, Resource]:
        return {r.urn: r for r in self.declared}

    @cached_property
    def _by_type(self) -> dict[str, list[Resource]]:
        index: dict[str, list[Resource]] = defaultdict(list)
        for r in self.resources:
            index[r.type].append(r)
        return index

    @cached_property
    def _declared_namespaces(self) -> frozenset[tuple[str | None, str]]:
        return frozenset((r.cluster, r.namespace) for r in self.declared if r.is_kubernetes)

    def runs_beside_unseen(self, r: Resource) -> bool:
        """A Karmada template's copy, in a stack previewed alone that declares nothing in the copy's member namespace
        (a per-region environment's global stack: the members' namespaces are the region stacks'). What the copy's
        neighbours there (NetworkPolicies, its ServiceAccount) decide cannot be checked from this stack."""
        return (
            self.previewed_alone
            and r.propagated is not None
            and (r.cluster, r.namespace) not in self._declared_namespaces
        )

    def of_type(self, *types: str) -> list[Resource]:
        return [r for t in types for r in self._by_type.get(t, [])]

    @cached_property
    def _by_kind(self) -> dict[str, list[Resource]]:
        index: dict[str, list[Resource]] = defaultdict(list)
        for r in self.resources:
            if r.is_kubernetes:
                index[r.kind].append(r)
        return index

    def kubernetes(
        self, kind: str, group: str | None = None, cluster: str | AnyCluster | None = ANY_CLUSTER
    ) -> Iterator[Resource]:
        """The stack's Kubernetes objects of `kind` (of `group`, when given) on `cluster`: pass an object's own
        `cluster` for its neighbours (None, an object without a provider, matches only others without one)."""
        for r in self._by_kind.get(kind, ()):
            if (group is None or r.api_group == group) and (cluster is ANY_CLUSTER or r.cluster == cluster):
                yield r

    def sources(self, resource: Resource, prop: str) -> list[Resource]:
        """The resources the value of `resource.<prop>` was computed from."""
        return [self.by_urn[u] for u in resource.deps.get(prop, []) if u in self.by_urn]

    def attached(self, target: Resource, types: tuple[str, ...], prop: str, name_keys: tuple[str, ...] = ()) -> list:
        """Resources of `types` whose `prop` refers to `target`: by dependency, or by a literal name.

        The dependency is what works at preview (the target's id is still unknown); the literal
        match covers references written as plain names.
        """
        names = {n for n in (target.props.get(k) for k in name_keys) if isinstance(n, str)}
        found = []
        for r in self.of_type(*types):
            if target.urn in r.deps.get(prop, []) or (names and r.props.get(prop) in names):
                found.append(r)
        return found


def _target_key(r: Resource) -> tuple:
    return (r.cluster, r.api_group, r.kind, r.namespace, r.k8s_name)


def patched(resources: list[Resource]) -> list[Resource]:
    """Each `*Patch` replaced by the object it produces: its fields applied onto the object it patches when that
    object is in the stack (server-side apply: the patch's fields win, lists keyed by name or port merge, other
    lists are replaced, like a strategic merge). A patch of an object outside the stack stays as it is."""
    from policies.pods import merge_pod, strategic_merge

    targets = {_target_key(r): r for r in resources if r.is_kubernetes and not r.type.endswith("Patch")}
    out = []
    for r in resources:
        target = targets.get(_target_key(r)) if r.is_kubernetes and r.type.endswith("Patch") else None
        if target is None:
            out.append(r)
            continue
        props = strategic_merge(target.props, r.props)
        pod_path = _pod_template_path(target)
        if pod_path and isinstance(props, dict):
            base_pod, patch_pod = peek(target.props, *pod_path), peek(r.props, *pod_path)
            if isinstance(base_pod, dict) and isinstance(patch_pod, dict):
                _set(props, pod_path, merge_pod(base_pod, patch_pod))
        out.append(replace(r, props=props if isinstance(props, dict) else r.props, patch_of=target.urn))
    return out


def _pod_template_path(r: Resource) -> tuple[str, ...]:
    from policies.pods import _POD_PATHS

    return _POD_PATHS.get(r.kind, ()) if r.api_group in ("", "apps", "batch") else ()


def _set(obj: dict, path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        obj = obj.setdefault(key, {})
    obj[path[-1]] = value
