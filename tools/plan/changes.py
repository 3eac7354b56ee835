"""What `pulumi up` would do to go from the base plan to this one, per stack: create, update, replace, delete.

Both plans are plan.json documents (DESIGN.md §3). Resources pair by URN. An update lists the inputs that changed;
a replacement is predicted when a changed input is one the provider replaces on (tools/plan/replacement.py, from the
providers' source at their pins) or one the resource's `replaceOnChanges` option names, or comes from a resource that
is itself replaced (its id changes; upstream.PULUMI_REPLACES_ON_CHANGES_AS_TOLD). Secret inputs
are compared by the digest the plan records, and shown only as changed. Options that change what happens are
shown with the action: `protect` (the engine refuses to delete or replace), `retainOnDelete` (the old object stays
in the cloud), `deleteBeforeReplace` (and the Kubernetes provider's own delete-first for named objects), and
`ignoreChanges` (those inputs are not compared, as the engine does).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from components.catalog.upstream import FLUID_APPLIES_A_CACHES_SPEC_ONCE, FLUID_DATASET_DELETION_WAITS_FOR_ITS_READERS
from tools.plan.engine import SECRET
from tools.plan.replacement import Rule, forcing, normalized, rule, under

ACTIONS = ("create", "update", "replace", "delete")
_BEHAVIOUR_OPTIONS = ("protect", "retainOnDelete", "deleteBeforeReplace", "ignoreChanges", "replaceOnChanges")
_RECORDED_SINCE: dict[str, Any] = {
    "replaceOnChanges": []
}  # options plan.json records since issue 31, with their default
_REPLACE_ON_CHANGES = "its replaceOnChanges option"
_RUNBOOK = "docs/capacity.md: Replacing the model cache"
# What deleting an object of these kinds waits for, or takes from running pods (a replacement deletes it too).
_DELETION_NOTES = {
    "kubernetes:data.fluid.io/v1alpha1:Dataset": (
        "Fluid holds its deletion while a pod mounts its PVC or another Dataset refers to it "
        f"({FLUID_DATASET_DELETION_WAITS_FOR_ITS_READERS.name}): stop the cluster's model servers first ({_RUNBOOK})"
    ),
    "kubernetes:data.fluid.io/v1alpha1:AlluxioRuntime": (
        "its deletion uninstalls the cache, FUSE daemons under running model servers included "
        f"({FLUID_APPLIES_A_CACHES_SPEC_ONCE.name}): stop the cluster's model servers first ({_RUNBOOK})"
    ),
}
_MISSING = object()


@dataclass(frozen=True)
class InputChange:
    path: str
    before: Any
    after: Any
    secret: bool = False
    computed_from: str | None = None  # URN of a replaced or updated resource this input is computed from
    ignored: bool = False  # under the resource's ignoreChanges: not applied


@dataclass
class ResourceChange:
    urn: str
    type: str
    name: str
    stack: str
    action: str  # create | update | replace | delete
    inputs: list[InputChange] = field(default_factory=list)
    options: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # option -> (before, after)
    replaced_by: list[str] = field(default_factory=list)  # the input paths that force the replacement
    replacement_source: str = ""
    delete_first: str = ""  # why the old one is deleted before the new one is created, if it is
    notes: list[str] = field(default_factory=list)
    may_change: bool = False  # an update only because inputs come from updated resources (values not known yet)

    def to_json(self) -> dict[str, Any]:
        return {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "stack": self.stack,
            "action": self.action,
            "inputs": [
                {
                    "path": c.path,
                    **(
                        {"secret": True}
                        if c.secret
                        else {"before": _json_value(c.before), "after": _json_value(c.after)}
                    ),
                    **({"computedFrom": c.computed_from} if c.computed_from else {}),
                    **({"ignored": True} if c.ignored else {}),
                }
                for c in self.inputs
            ],
            "options": {k: {"before": b, "after": a} for k, (b, a) in self.options.items()},
            "replacedBy": self.replaced_by,
            "replacementSource": self.replacement_source,
            "deleteFirst": self.delete_first,
            "notes": self.notes,
            "mayChange": self.may_change,
        }


def _json_value(value: Any) -> Any:
    return None if value is _MISSING else value


def stack_of(urn: str) -> str:
    return urn.split("::", 2)[0].removeprefix("urn:pulumi:")


def _leaf_changes(before: Any, after: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """(path, before, after) of every differing leaf; a value missing on one side is one change at its node."""
    if isinstance(before, dict) and isinstance(after, dict):
        out = []
        for key in sorted(before.keys() | after.keys()):
            sub = f"{path}.{key}" if path else key
            out += _leaf_changes(before.get(key, _MISSING), after.get(key, _MISSING), sub)
        return out
    if isinstance(before, list) and isinstance(after, list):
        out = []
        for i in range(max(len(before), len(after))):
            out += _leaf_changes(
                before[i] if i < len(before) else _MISSING, after[i] if i < len(after) else _MISSING, f"{path}[{i}]"
            )
        return out
    return [] if before == after else [(path, before, after)]


def _secret_changes(base: dict, head: dict) -> dict[str, bool]:
    """Input path -> changed?, for inputs the plan redacted on either side (digests compared where recorded)."""
    before, after = base.get("secretDigests", {}), head.get("secretDigests", {})
    return {path: before.get(path) != after.get(path) for path in before.keys() | after.keys()}


def _ignored(path: str, ignore: list[str]) -> bool:
    return any(under(normalized(path), normalized(i)) for i in ignore)


def _input_changes(base: dict, head: dict) -> list[InputChange]:
    ignore = head["options"].get("ignoreChanges") or []
    changes = []
    secret_paths = _secret_changes(base, head)
    for path, before, after in _leaf_changes(base["inputs"], head["inputs"]):
        secret = before == SECRET or after == SECRET or path in secret_paths
        changes.append(InputChange(path, before, after, secret=secret, ignored=_ignored(path, ignore)))
    seen = {c.path for c in changes}
    for path, changed in sorted(secret_paths.items()):
        if changed and path not in seen:  # same marker on both sides, another digest: the secret changed
            changes.append(InputChange(path, SECRET, SECRET, secret=True, ignored=_ignored(path, ignore)))
    return changes


def _option_changes(base: dict, head: dict) -> dict[str, tuple[Any, Any]]:
    out = {}
    for key in (*_BEHAVIOUR_OPTIONS, "dependsOn", "customTimeouts"):
        # An option a plan of an older commit did not record had its default.
        b, a = base["options"].get(key, _RECORDED_SINCE.get(key)), head["options"].get(key, _RECORDED_SINCE.get(key))
        if b != a:
            out[key] = (b, a)
    if base.get("provider") != head.get("provider"):
        out["provider"] = (base.get("provider"), head.get("provider"))
    return out


def _on_changes(path: str, paths: list[str] | None) -> bool:
    """A change the engine turns into a replacement: at or below a `replaceOnChanges` path, or of a whole value that
    holds one."""
    plain = normalized(path)
    return any(under(plain, p) or p.startswith(plain + ".") for p in paths or [])


def _delete_first(resource: dict, replacement: Rule) -> str:
    if resource["options"].get("deleteBeforeReplace"):
        return "deleteBeforeReplace is set"
    if resource["type"].startswith("kubernetes:") and not resource["type"].startswith("kubernetes:helm.sh/"):
        meta = resource["inputs"].get("metadata") or {}
        if meta.get("name"):  # pulumi-kubernetes Diff: a named object must be deleted before its replacement
            return "the Kubernetes provider deletes a named object before creating its replacement"
    return ""


@dataclass
class PlanChanges:
    environment: str
    stacks: list[str]
    resources: list[ResourceChange]

    def counts(self, stack: str | None = None) -> Counter:
        return Counter(r.action for r in self.resources if stack is None or r.stack == stack)

    def to_json(self) -> dict[str, Any]:
        return {
            "environment": self.environment,
            "stacks": self.stacks,
            "counts": {s: {a: self.counts(s)[a] for a in ACTIONS} for s in self.stacks},
            "resources": [r.to_json() for r in self.resources],
        }


def _providers(doc: dict) -> dict[str, dict]:
    return {r["urn"]: r.get("inputs") or {} for r in doc["resources"] if r["type"].startswith("pulumi:providers:")}


def compare(base: dict[str, Any], head: dict[str, Any]) -> PlanChanges:
    """The changes from base to head, in head's dependency order (deletions last, in base's reverse order)."""
    before = {r["urn"]: r for r in base["resources"] if r.get("custom", True)}
    after = {r["urn"]: r for r in head["resources"] if r.get("custom", True)}
    providers = _providers(head)
    changes: dict[str, ResourceChange] = {}
    for urn, res in after.items():  # head's dependency order: a dependency is decided before its dependents
        common = dict(urn=urn, type=res["type"], name=res["name"], stack=stack_of(urn))
        old = before.get(urn)
        if old is None:
            changes[urn] = ResourceChange(action="create", **common)
            continue
        inputs = _input_changes(old, res)
        for key, urns in sorted((res.get("propertyDependencies") or {}).items()):
            # A replaced resource's outputs are all new; an updated one's may be (its own inputs changed: one level,
            # not through resources that only may change).
            upstream = [
                changes[u]
                for u in urns
                if u in changes
                and (changes[u].action == "replace" or (changes[u].action == "update" and not changes[u].may_change))
            ]
            if not upstream or any(c.path == key or c.path.startswith(key + ".") for c in inputs):
                continue
            source = next((u for u in upstream if u.action == "replace"), upstream[0])
            inputs.append(InputChange(key, None, None, computed_from=source.urn))
        options = _option_changes(old, res)
        applied = [c for c in inputs if not c.ignored]
        if not applied and not options:
            continue
        replacement = rule(res["type"], res["inputs"], providers.get(res.get("provider") or "", {}))
        from_replaced = {c.path for c in applied if c.computed_from and changes[c.computed_from].action == "replace"}
        candidates = [c.path for c in applied if not c.computed_from or c.path in from_replaced]
        forced = forcing(candidates, replacement)
        told = [p for p in candidates if p not in forced and _on_changes(p, res["options"].get("replaceOnChanges"))]
        change = ResourceChange(inputs=inputs, options=options, **common, action="update")
        if forced or told:
            change.action = "replace"
            change.replaced_by = forced + told
            change.replacement_source = "; ".join(
                ([replacement.source] if forced else []) + ([_REPLACE_ON_CHANGES] if told else [])
            )
            change.delete_first = _delete_first(res, replacement)
        elif not replacement.known and applied:
            change.notes.append(f"replacement not predicted: {replacement.source}")
        change.may_change = all(c.computed_from for c in applied) and not options and not forced
        _behaviour_notes(change, old, res)
        changes[urn] = change
    for urn in reversed(list(before)):
        if urn not in after:
            old = before[urn]
            change = ResourceChange(urn=urn, type=old["type"], name=old["name"], stack=stack_of(urn), action="delete")
            _behaviour_notes(change, old, None)
            changes[urn] = change
    stacks = list(dict.fromkeys([*(head.get("stacks") or []), *(base.get("stacks") or [])]))
    stacks = stacks or sorted({c.stack for c in changes.values()}) or [head.get("environment", "")]
    return PlanChanges(head.get("environment", ""), stacks, list(changes.values()))


def _behaviour_notes(change: ResourceChange, old: dict, new: dict | None) -> None:
    """What protect and retainOnDelete do to this action (the old resource's options govern its deletion)."""
    if change.action in ("delete", "replace"):
        if old["options"].get("protect") and (new is None or new["options"].get("protect")):
            change.notes.append(
                "protected: `pulumi up` refuses to delete it; unprotect it first (`pulumi state unprotect`)"
            )
        if old["options"].get("retainOnDelete"):
            change.notes.append("retainOnDelete: the old one is left in the cloud, only dropped from the stack's state")
    if change.action == "replace" and change.delete_first:
        change.notes.append(f"deleted before its replacement is created ({change.delete_first}): a gap in service")
    if change.action in ("delete", "replace") and change.type in _DELETION_NOTES:
        change.notes.append(_DELETION_NOTES[change.type])


# --- Markdown -------------------------------------------------------------------------------------------------------

_LIST_LIMIT = 40  # resources listed per action and stack before "and N more" (the PR comment has a size limit)
_INPUT_LIMIT = 8  # inputs listed per resource


def _short(value: Any) -> str:
    if value is _MISSING or value is None:
        return "(none)"
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


def _input_line(c: InputChange) -> str:
    if c.computed_from:
        return f"`{c.path}`: known after apply (computed from `{c.computed_from.rsplit('::', 1)[-1]}`)"
    if c.secret:
        text = f"`{c.path}`: changed (secret, value not shown)"
    elif c.before is _MISSING:
        text = f"`{c.path}`: added {_short(c.after)}"
    elif c.after is _MISSING:
        text = f"`{c.path}`: removed (was {_short(c.before)})"
    else:
        text = f"`{c.path}`: {_short(c.before)} -> {_short(c.after)}"
    return text + (" (in ignoreChanges: not applied)" if c.ignored else "")


def _resource_lines(r: ResourceChange) -> list[str]:
    head = f"- `{r.type}` **{r.name}**"
    if r.action == "replace":
        head += f": replaced because {', '.join(f'`{p}`' for p in r.replaced_by)} changed ({r.replacement_source})"
    elif r.may_change:
        head += ": may update (inputs computed from changed resources)"
    lines = [head]
    for c in r.inputs[:_INPUT_LIMIT]:
        lines.append(f"  - {_input_line(c)}")
    if len(r.inputs) > _INPUT_LIMIT:
        lines.append(f"  - ... and {len(r.inputs) - _INPUT_LIMIT} more inputs (changes.json)")
    for key, (b, a) in r.options.items():
        lines.append(f"  - option `{key}`: {_short(b)} -> {_short(a)}")
    lines += [
        f"  - **{note}**" if note.startswith(("protected", "deleted before")) else f"  - {note}" for note in r.notes
    ]
    return lines


_TITLES = {"replace": "Replaced", "delete": "Deleted", "update": "Updated", "create": "Created"}


def changes_markdown(changes: PlanChanges) -> str:
    lines = [
        f"## Changes: `{changes.environment}` (this change against its base)\n",
        "| stack | create | update | replace | delete |",
        "|---|---:|---:|---:|---:|",
    ]
    for stack in changes.stacks:
        n = changes.counts(stack)
        lines.append(f"| {stack} | {n['create']} | {n['update']} | **{n['replace']}** | **{n['delete']}** |")
    if not changes.resources:
        return "\n".join([*lines, "", "No resource changes.\n"])
    lines += [
        "",
        "Replacement is predicted from the providers' force-new fields at their pins "
        "(conformance/upstream/pulumi-providers/replacement.json) and the resources' replaceOnChanges options; "
        "values computed by the cloud show as known after apply. Secret inputs are shown only as changed.",
    ]
    for stack in changes.stacks:
        in_stack = [r for r in changes.resources if r.stack == stack]
        if not in_stack:
            continue
        lines += ["", f"### `{stack}`"]
        for action in ("replace", "delete", "update", "create"):
            of_action = [r for r in in_stack if r.action == action]
            if not of_action:
                continue
            lines += ["", f"**{_TITLES[action]}** ({len(of_action)})", ""]
            for r in of_action[:_LIST_LIMIT]:
                lines += _resource_lines(r) if action in ("replace", "update", "delete") else [f"- `{r.type}` {r.name}"]
            if len(of_action) > _LIST_LIMIT:
                lines.append(f"- ... and {len(of_action) - _LIST_LIMIT} more (changes.json)")
    return "\n".join(lines) + "\n"
