"""What a Go binary's configuration file accepts, read from its source: the JSON paths of a config struct (its
`json:"..."` tags, following the struct types of the same files), the apiVersions its scheme decodes a kind as
(`AddKnownTypes`), and the plugin type names a runner registers
(`Register(pkg.TypeConst, factory)` and the registry's other `Register*` calls, each constant resolved in the
imported package's directory, through constants set to another package's). Nothing is built
or run."""

from __future__ import annotations

import re
from collections.abc import Callable

_STRUCT = re.compile(r"^type\s+(\w+)\s+struct\s*\{(.*?)^\}", re.M | re.S)
_FIELD = re.compile(r"^\s*(?:\w+\s+)?(?P<type>[\w.*\[\]]+)\s+`[^`]*json:\"(?P<name>[^\",]*)[^`]*`", re.M)
_IMPORT = re.compile(r"^\s*(?:(?P<alias>\w+)\s+)?\"(?P<path>[^\"]+)\"", re.M)
_IMPORTS = re.compile(r"^import\s*(?:\((?P<block>.*?)^\)|(?P<one>[^\n]+))", re.M | re.S)
# The plugin registry is the package the runner calls `Register(pkg.Type, factory)` on; each of its `Register*` calls
# registers a type: `RegisterAsDefaultProducer` (a request data producer the picker also creates by itself when a
# plugin consumes its data), v0.10.0's `RegisterDeprecated`, `RegisterWithPluginDependencies`, ...
_REGISTRY = re.compile(r"\b(?P<registry>\w+)\.Register\(\s*\w+\.\w+\s*,")


def config_paths(files: list[str], root: str) -> list[str]:
    """Every JSON path of `root` (`flowControl.priorityBands[].priority`); a field of a type the files do not
    define (metav1.Duration, json.RawMessage) ends its path."""
    structs = {m[1]: m[2] for text in files for m in _STRUCT.finditer(text)}
    if root not in structs:
        raise ValueError(f"no `type {root} struct` in the files")
    paths: set[str] = set()

    def walk(name: str, prefix: str, seen: tuple[str, ...]) -> None:
        for field in _FIELD.finditer(structs[name]):
            kind, json_name = field["type"], field["name"]
            if json_name in ("", "-"):
                continue
            path = f"{prefix}.{json_name}" if prefix else json_name
            many = "[]" in kind
            path += "[]" if many else ""
            paths.add(path)
            base = kind.replace("[]", "").lstrip("*")
            if base in structs and base not in seen:
                walk(base, path, (*seen, base))

    walk(root, "", (root,))
    return sorted(paths)


def _imports(text: str) -> dict[str, str]:
    """A Go file's imports: the name each package is used by -> its import path."""
    imports = {}
    for block in _IMPORTS.finditer(text):
        for match in _IMPORT.finditer(block["block"] or block["one"]):
            imports[match["alias"] or match["path"].rsplit("/", 1)[-1]] = match["path"]
    return imports


def plugin_types(runner: str, module: str, package_files: Callable[[str], list[str]]) -> list[str]:
    """The plugin type names `runner` registers: each `registry.Register*(alias.Const, ...)`, the constant's string
    read in the directory of the package `alias` imports (`package_files(directory)` -> its Go sources), through
    constants set to another constant."""
    imports = _imports(runner)
    registries = "|".join(sorted({m["registry"] for m in _REGISTRY.finditer(runner)}))
    calls = re.finditer(rf"\b(?:{registries})\.Register\w*\(\s*(?P<pkg>\w+)\.(?P<const>\w+)\s*,", runner)
    names = {_constant(imports.get(m["pkg"], ""), m["const"], module, package_files) for m in calls}
    return sorted(names - {""})


def _constant(path: str, name: str, module: str, package_files: Callable[[str], list[str]], depth: int = 0) -> str:
    """The string constant `name` of the package at import `path` ("" when not of `module` or not a string): its
    literal, or that of the constant it is set to (`X = otherpkg.Y`, `X = Y`)."""
    if not path.startswith(module + "/") or depth > 4:
        return ""  # a package of another module: not in this tree
    declaration = re.compile(
        rf"^\s*(?:const\s+)?{re.escape(name)}\s*(?:string\s*)?=\s*"
        r"(?:\"(?P<value>[^\"]+)\"|(?:(?P<pkg>\w+)\.)?(?P<const>\w+)\s*(?:$|//))",
        re.M,
    )
    for text in package_files(path.removeprefix(module + "/")):
        match = declaration.search(text)
        if match is None:
            continue
        if match["value"] is not None:
            return match["value"]
        where = _imports(text).get(match["pkg"], "") if match["pkg"] else path
        return _constant(where, match["const"], module, package_files, depth + 1)
    return ""


_KNOWN_TYPES = re.compile(r"\bAddKnownTypes\(\s*(?P<gv>\w+)\s*,(?P<types>[^)]*)\)", re.S)


def api_versions(files: list[str], kind: str) -> list[str]:
    """The apiVersions (group/version) the schemes of `files` decode `kind` as: each `AddKnownTypes(gv, ...&Kind{}...)`,
    `gv` a `schema.GroupVersion{Group: ..., Version: "..."}` of the files, its group a literal or a string constant."""
    text = "\n".join(files)
    found = set()
    for known in _KNOWN_TYPES.finditer(text):
        if not re.search(rf"\b{re.escape(kind)}\{{\}}", known["types"]):
            continue
        gv = re.search(
            rf"^\s*(?:var\s+)?{re.escape(known['gv'])}\s*=\s*\w+\.GroupVersion\{{\s*"
            r"Group:\s*(?:\"(?P<literal>[^\"]*)\"|(?P<constant>\w+))\s*,\s*Version:\s*\"(?P<version>[^\"]+)\"",
            text,
            re.M,
        )
        group = gv and (gv["literal"] if gv["literal"] is not None else _string_constant(text, gv["constant"]))
        if gv is None or group is None:
            raise ValueError(f"AddKnownTypes({known['gv']}, ...{kind}...): its group and version are not in the files")
        found.add(f"{group}/{gv['version']}")
    if not found:
        raise ValueError(f"no AddKnownTypes of {kind} in the files")
    return sorted(found)


def _string_constant(text: str, name: str) -> str | None:
    match = re.search(rf"^\s*(?:const\s+)?{re.escape(name)}\s*(?:string\s*)?=\s*\"([^\"]*)\"", text, re.M)
    return match[1] if match else None


_TAGGED = re.compile(r"^\s*(?P<field>\w+)\s+[\w.*\[\]]+\s+`[^`]*json:\"(?P<name>[^\",]+)", re.M)
_STRING_CONST = re.compile(r"^\s*(?P<name>\w+)\s*=\s*\"(?P<value>[^\"]*)\"", re.M)


def engine_metrics(factories: str, constants: str) -> dict[str, object]:
    """The picker's `core-metrics-extractor` built-ins: each engine's metric mapping (`defaultEngineConfigs`, keyed by
    name, fields by their JSON tags) and the Pod label keys it reads the engine from (its string constants)."""
    struct = re.search(r"engineConfigParams\s+struct\s*\{(.*?)\n\t\}", factories, re.S)
    block = re.search(r"var defaultEngineConfigs = \[\]engineConfigParams\{\n(.*?)\n\}", factories, re.S)
    if struct is None or block is None:
        raise ValueError("no engineConfigParams struct or defaultEngineConfigs literal")
    tags = {m["field"]: m["name"] for m in _TAGGED.finditer(struct[1])}
    configs: dict[str, dict[str, str]] = {}
    for entry in re.findall(r"^\t\{\n(.*?)^\t\},?$", block[1], re.M | re.S):
        fields = dict(re.findall(r"^\s*(\w+):\s*\"([^\"]*)\",", entry, re.M))
        name = fields.pop("Name")
        configs[name] = {tags[f]: v for f, v in fields.items()}
    return {
        "builtin_engine_configs": dict(sorted(configs.items())),
        "label_keys": {m["name"]: m["value"] for m in _STRING_CONST.finditer(constants) if "LabelKey" in m["name"]},
    }
