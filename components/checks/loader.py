"""Turn raw config into an EnvironmentSpec, or into one clear line per problem."""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from components.checks.environment_checks import SEMANTIC_CHECKS
from components.config.base import ConfigError, Issue, KeyPath, join_path
from components.config.environment import EnvironmentSpec
from components.config.model_catalog import CATALOG_FILE, CATALOG_FILES_CONTEXT, CATALOG_KEY, ModelCardSpec
from components.config.region import RegionBase, RegionSpec
from components.config.workloads import ModelSpec, TenantSpec

PROJECT = "inference-platform"
# Providers the program creates explicitly, per region; their namespaces configure only default providers.
PROVIDER_NAMESPACES = ("aws", "gcp", "kubernetes", "random", "tls")


def config_key_issues(keys: Iterable[str], project: str = PROJECT) -> list[Issue]:
    """Keys outside what the program reads: a misspelled project namespace would otherwise drop silently
    (`inference-platfrom:production: true` planning an unprotected prod)."""
    issues = []
    for key in sorted(keys):
        namespace, _, name = key.partition(":")
        if namespace in (project, "pulumi"):
            continue
        if namespace in PROVIDER_NAMESPACES:
            issues.append(
                Issue(
                    key,
                    "provider configuration is never read: every resource uses the provider the program creates "
                    f"for its region (default providers are disabled); remove it and set {project}:regions instead",
                )
            )
            continue
        close = difflib.get_close_matches(namespace, [project, "pulumi"], n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}:{name}'? " if close else ""
        issues.append(
            Issue(
                key,
                f"the program reads no '{namespace}' namespace; {hint}its keys are {project}:<key> and pulumi:<key>",
            )
        )
    return issues


def load_environment(
    raw: dict[str, Any],
    *,
    secret_keys: Collection[str] | None = None,
    catalog_files: Mapping[str, Any] | None = None,
) -> EnvironmentSpec:
    """Validate structure (pydantic), then cross-references and catalog facts.

    `secret_keys`: the top-level keys the engine marks secret; given, a credential in plain text is an error.
    `catalog_files`: the project's `models/*.yaml` documents by file (model_catalog.read_model_catalog), whose
    entries this environment's models may name.
    """
    if not raw:
        raise ConfigError(
            [
                Issue(
                    "",
                    f"no {PROJECT}: keys in the stack's config; describe the environment (start from Pulumi.dev.yaml)",
                )
            ]
        )
    cards, file_issues = _catalog_files(catalog_files or {})
    snake = _python_names(raw, EnvironmentSpec, ())
    if snake:
        raise ConfigError(file_issues + snake)
    try:
        env = EnvironmentSpec.model_validate(raw, context={CATALOG_FILES_CONTEXT: cards})
    except ValidationError as exc:
        raise ConfigError(file_issues + [issue for err in exc.errors() for issue in _issues(err)]) from None
    if file_issues:
        raise ConfigError(file_issues)
    issues = semantic_issues(env)
    if secret_keys is not None:
        issues += [
            Issue(
                path,
                "a credential in plain text; store it encrypted with "
                f"`pulumi config set --secret --path '{path}' <value>` (the file then holds a `secure:` value)",
            )
            for path in _credential_paths(env)
            if path.split(".")[0].split("[")[0] not in secret_keys
        ]
    if issues:
        raise ConfigError(issues)
    return env


def _catalog_files(files: Mapping[str, Any]) -> tuple[dict[str, dict[str, ModelCardSpec]], list[Issue]]:
    """Each `models/*.yaml` validated as a `modelCatalog` mapping; its issues name the file, then the key."""
    cards: dict[str, dict[str, ModelCardSpec]] = {}
    issues: list[Issue] = []

    def in_file(file: str, issue: Issue) -> Issue:
        return Issue(f"{file}: {issue.path.removeprefix(CATALOG_KEY + '.')}", issue.message)

    for file, document in files.items():
        if document is None:
            continue  # an empty file declares nothing
        if not isinstance(document, dict):
            issues.append(Issue(file, "expected a mapping of model names to their entries, as under modelCatalog"))
            continue
        snake = _python_names({CATALOG_KEY: document}, EnvironmentSpec, ())
        try:
            cards[file] = CATALOG_FILE.validate_python(document)
        except ValidationError as exc:
            snake += [_issue({**err, "loc": (CATALOG_KEY, *err["loc"])}) for err in exc.errors()]
        issues += [in_file(file, issue) for issue in snake]
    return cards, issues


def semantic_issues(env: EnvironmentSpec) -> list[Issue]:
    """Every stage's issues in one run. A later stage's checks assume what earlier ones check (a model's pool
    exists, and offers the profile it asks for, before it is sized): after a mistake, a check that cannot run is
    skipped, and a later issue about an object the mistake is in, or about one that uses it (a placement on a pool
    with a wrong MIG config), is dropped as its consequence. Each mistake is reported once, all of them at once."""
    issues: list[Issue] = []
    tainted: set[ConfigObject] = set()
    for stage in SEMANTIC_CHECKS:
        found: list[Issue] = []
        for check in stage:
            try:
                found += list(check(env))
            except Exception:
                if not issues:
                    raise  # no earlier mistake explains it: a bug, shown as one
        found = [i for i in found if not (_objects_of(env, i.path) & tainted)] if tainted else found
        issues += found
        for issue in found:
            tainted |= _objects_of(env, issue.path, own=True)
    return issues


ConfigObject = tuple[str, ...]
"""An object of the config an issue can be about: `("pool", region, pool)`, `("model", name)`, `("federation",)`."""

_INDEXED = re.compile(r"^(regions|models|tenants)\[(\d+)\](?:\.(gpuPools|placements|gpuQuotas)\[(\d+)\])?")


def _objects_of(env: EnvironmentSpec, path: str, own: bool = False) -> set[ConfigObject]:
    """The config objects an issue at `path` is about (`own`), or also the ones it uses: a placement uses its
    region, pool and prefill pool; a tenant its models and quota regions; a model its placements' pools."""
    if path.startswith("federation"):
        return {("federation",)}
    if own and ".engineArgs" in path:
        return set()  # an engine flag goes to the engine only: no later check reads it
    declared: set[ConfigObject] = {
        ("preset", m.name) for m in env.declared_models if path == m.path() or path.startswith(m.path() + ".")
    }
    if declared:
        return declared
    match = _INDEXED.match(path)
    if match is None:
        return set()
    kind, index, part, sub = match.group(1), int(match.group(2)), match.group(3), match.group(4)
    collections: dict[str, Sequence[RegionSpec | ModelSpec | TenantSpec]] = {
        "regions": env.regions,
        "models": env.models,
        "tenants": env.tenants,
    }
    collection = collections[kind]
    if index >= len(collection):
        return set()
    item = collection[index]
    found: set[ConfigObject]
    if isinstance(item, RegionBase):
        pools = item.gpu_pools if part != "gpuPools" else item.gpu_pools[int(sub) : int(sub) + 1]
        found = {("pool", item.name, pool.name) for pool in pools}
        return found | ({("region", item.name)} if part is None else set())
    if isinstance(item, TenantSpec):
        found = {("tenant", item.name)}
        if not own:  # a quota is measured against every pool of its region
            regions = {r.name: r for r in env.regions}
            found |= {("model", m) for m in item.models} | {("region", q.region) for q in item.gpu_quotas}
            found |= {
                ("pool", q.region, pool.name)
                for q in item.gpu_quotas
                for pool in getattr(regions.get(q.region), "gpu_pools", [])
            }
        return found
    found = {("model", item.name)}
    if not own and item.federated:
        found.add(("federation",))
    if not own:  # a model uses its presets
        drafts = [item.speculative_decoding.draft_preset] if item.speculative_decoding else []
        found |= {("preset", preset) for preset in (item.preset, *drafts) if preset}
    if not own:
        placements = item.placements if part != "placements" else item.placements[int(sub) : int(sub) + 1]
        for placement in placements:
            found |= {("region", placement.region), ("pool", placement.region, placement.pool)}
            if placement.prefill is not None:
                found.add(("pool", placement.region, placement.prefill.pool))
    return found


def _python_names(raw: Any, model: Any, path: KeyPath) -> list[Issue]:
    """Keys spelled as the Python field (max_size) rather than the documented camelCase alias (maxSize).

    The models accept both so components can build them by name; a stack file must use the alias, or the
    same key could be given twice under two spellings.
    """
    if isinstance(raw, list):
        return [issue for i, item in enumerate(raw) for issue in _python_names(item, model, (*path, i))]
    if isinstance(model, _Tagged) and isinstance(raw, dict):
        tag = raw.get(model.key)  # any YAML value: a list or mapping is refused as the tag, and is no dict key
        model = model.models.get(tag) if isinstance(tag, str) else None
    if not isinstance(raw, dict) or not _is_model(model):
        return []
    issues = []
    for key, value in raw.items():
        field = model.model_fields.get(key)
        if field is not None and field.alias and field.alias != key:
            issues.append(
                Issue(join_path(*path, key), f"unknown key; did you mean {field.alias!r}? keys are camelCase")
            )
            continue
        name = _field_name(model, key)
        if name is None:
            continue
        keyed, inner = _field_model(model, name)
        if keyed and isinstance(value, dict):  # modelCatalog: entries under their names
            for entry, item in value.items():
                issues += _python_names(item, inner, (*path, key, entry))
        else:
            issues += _python_names(value, inner, (*path, key))
    return issues


@cache
def _field_model(model: type[BaseModel], name: str) -> tuple[bool, Any]:
    """Whether a field maps names to models, and the model inside it: asked for each key of every config loaded."""
    annotation = model.model_fields[name].annotation
    return _keyed_by_name(annotation), _inner_model(annotation)


def _keyed_by_name(annotation: Any) -> bool:
    """A mapping of names to models (dict[str, X]): its keys are names, not keys of X."""
    return typing.get_origin(annotation) is dict and _inner_model(annotation) is not None


def _credential_paths(model: BaseModel, prefix: KeyPath = ()) -> list[str]:
    """Key paths of every credential (SecretStr) the config sets."""
    found = []
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        key = (*prefix, field.alias or name)
        items = (
            value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list | tuple) else ()
        )
        if isinstance(value, SecretStr):
            found.append(join_path(*key))
        elif isinstance(value, BaseModel):
            found += _credential_paths(value, key)
        for index, item in items:
            if isinstance(item, BaseModel):
                found += _credential_paths(item, (*key, index))
    return found


_KIND = {
    "int": "a whole number",
    "bool": "true or false",
    "string": "a string (quote it)",
    "list": "a list",
    "dict": "a mapping of keys to values",
    "model": "a mapping of keys to values",
    "float": "a number",
}


def _issues(err: ErrorDetails) -> list[Issue]:
    """The error's issue; for an entry without a valid value of the key that chooses its per-cloud model (a region
    entry's `cloud` missing, blank, or no cloud's), also its mistakes that do not depend on the cloud, so that one
    run reports them all."""
    issue = _issue(err)
    if err["type"] not in ("union_tag_not_found", "union_tag_invalid") or not isinstance(err["input"], dict):
        return [issue]
    return [issue, *_untagged_issues(tuple(err["loc"]), err["input"])]


def _untagged_issues(loc: KeyPath, entry: dict[str, Any]) -> list[Issue]:
    """The mistakes of the entry at `loc` that every per-cloud model reports (same key, same kind): whichever
    `cloud` it is given, they stay. An unknown key lists the keys valid on either cloud."""
    _, tagged = _walk(loc)
    assert isinstance(tagged, _Tagged)
    by_tag = {tag: _errors(model, {**entry, tagged.key: tag}) for tag, model in tagged.models.items()}
    issues = []
    for err in next(iter(by_tag.values())):
        same = [_matching(err, errors) for errors in by_tag.values()]
        if any(e is None for e in same):
            continue  # a mistake on one cloud only: the entry's `cloud` decides
        rendered = [_issue({**e, "loc": (*loc, tag, *e["loc"])}) for tag, e in zip(by_tag, same, strict=True) if e]
        if err["type"] == "extra_forbidden" and len(set(rendered)) > 1:
            keys = (_allowed_keys((*loc, tag, *err["loc"][:-1])) for tag in by_tag)
            rendered = [_unknown_key(rendered[0].path, str(err["loc"][-1]), sorted(set().union(*keys)))]
        issues.append(rendered[0])
    return issues


def _errors(model: type[BaseModel], data: dict[str, Any]) -> list[ErrorDetails]:
    try:
        model.model_validate(data)
    except ValidationError as exc:
        return exc.errors()
    return []


def _matching(err: ErrorDetails, errors: list[ErrorDetails]) -> ErrorDetails | None:
    return next((e for e in errors if e["loc"] == err["loc"] and e["type"] == err["type"]), None)


def _unknown_key(path: str, key: str, allowed: list[str]) -> Issue:
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return Issue(path, f"unknown key; {hint}valid keys here: {', '.join(allowed)}")


def _issue(err: ErrorDetails) -> Issue:
    raw_loc = tuple(err["loc"])
    loc, _ = _walk(raw_loc)
    kind, got = err["type"], err.get("input")
    if kind.startswith("union_tag_"):  # the discriminator of a per-cloud model: as if it were a plain key
        key = err["ctx"]["discriminator"].strip("'")
        loc, kind = (*loc, key), "missing"
        if err["type"] == "union_tag_invalid":
            tags = [repr(tag.strip("'")) for tag in err["ctx"]["expected_tags"].split(", ")]
            got = got.get(key) if isinstance(got, dict) else err["ctx"]["tag"]
            return Issue(join_path(*loc), f"{got!r} is not allowed; use one of {' or '.join(tags)}")
    path = join_path(*loc)
    if kind == "missing":
        return Issue(path, f"required key is missing; add `{loc[-1]}` (see docs/configuration.md)")
    if kind == "extra_forbidden":
        _, model = _walk(raw_loc[:-1])
        other_cloud = getattr(model, "OTHER_CLOUD_KEYS", {}).get(str(loc[-1]))
        if other_cloud is not None:  # a key of the other cloud's model: say whose, and what to do instead
            return Issue(path, f"unknown key: {other_cloud}")
        return _unknown_key(path, str(loc[-1]), _allowed_keys(raw_loc[:-1]))
    if kind == "literal_error":
        return Issue(path, f"{got!r} is not allowed; use one of {err['ctx']['expected']}")
    if kind in {"too_short", "too_long"}:
        return Issue(path, f"{err['msg']}; fix the list length")
    if kind.startswith("ip_v4"):
        return Issue(path, f"{got!r} is not an IPv4 network in CIDR form; write it like 10.0.0.0/16")
    if kind.startswith(("greater_than", "less_than")):
        return Issue(path, f"{err['msg'].lower()} (got {got!r}); change the value")
    for prefix, expected in _KIND.items():
        if kind.startswith(prefix + "_"):
            return Issue(path, f"expected {expected}, got {got!r} ({type(got).__name__}); fix the value")
    msg = err["msg"].removeprefix("Value error, ")
    return Issue(path, msg if kind == "value_error" else f"{msg} (got {got!r})")


def _allowed_keys(loc: KeyPath) -> list[str]:
    """camelCase keys accepted by the model found at pydantic's error location `loc`."""
    _, model = _walk(loc)
    if not _is_model(model):
        return []
    return sorted(f.alias or name for name, f in model.model_fields.items())


def _walk(loc: KeyPath) -> tuple[KeyPath, Any]:
    """Follow pydantic's error location `loc` from the EnvironmentSpec: the key path it names, without the tags of
    the per-cloud models it passes (`regions.0.gcp.network` is `regions[0].network`), and the model found there
    (None past a key no model has)."""
    model: Any = EnvironmentSpec
    path: list[str | int] = []
    named = False  # the next part is a name of a mapping's entry (modelCatalog.<name>)
    for part in loc:
        if isinstance(model, _Tagged) and part in model.models:
            model = model.models[part]
            continue
        path.append(part)
        if isinstance(part, int) or named:
            named = False
            continue
        field = model.model_fields.get(_field_name(model, str(part))) if _is_model(model) else None
        named = field is not None and _keyed_by_name(field.annotation)
        model = None if field is None else _inner_model(field.annotation)
    return tuple(path), model


@dataclass(frozen=True)
class _Tagged:
    """A union of models told apart by one key's value (a region entry's `cloud`): the key, the models by value."""

    key: str
    models: dict[Any, type[BaseModel]]


def _field_name(model: type[BaseModel], alias: str) -> str | None:
    return _field_names(model).get(alias)


@cache
def _field_names(model: type[BaseModel]) -> dict[str, str]:
    """A model's field names by the key a stack file spells (alias, else name; the first field wins): do not mutate."""
    names: dict[str, str] = {}
    for name, field in model.model_fields.items():
        names.setdefault(field.alias or name, name)
    return names


def _inner_model(annotation: Any) -> Any:
    """The model inside list[X] / X | None / dict[str, X], or the _Tagged union of models there."""
    if _is_model(annotation):
        return annotation
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        union, *metadata = typing.get_args(annotation)
        key = next((m.discriminator for m in metadata if isinstance(m, FieldInfo) and m.discriminator), None)
        if isinstance(key, str):
            models = typing.get_args(union)
            return _Tagged(key, {typing.get_args(m.model_fields[key].annotation)[0]: m for m in models})
        return _inner_model(union)
    if origin in (list, dict, typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _inner_model(arg)
            if found is not None:
                return found
    return None


def _is_model(obj: Any) -> bool:
    return isinstance(obj, type) and issubclass(obj, BaseModel)
