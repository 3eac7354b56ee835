"""The command-line flags a Go binary registers with pflag / the standard `flag` package, read from its source.

Parses the registration calls of the listed files (`fs.IntVar(&opts.Port, "port", opts.Port, "usage")`,
`fs.IntVarP(..., "v", "v", ...)`, `fs.Var(&value, "zap-encoder", ...)`), `fs.MarkDeprecated("name", "why")`, the
defaults `NewOptions()` (or any `Options{...}` literal) gives each options field, and the flags a `Validate()`
refuses whenever they are set (a list of names ranged over by a loop whose error says "cannot be used"). Nothing
is built or run.
"""

from __future__ import annotations

import re
from typing import Any

_TYPES = {
    "Bool": "bool",
    "Int": "int",
    "Int32": "int32",
    "Int64": "int64",
    "Uint": "uint",
    "Float64": "float64",
    "String": "string",
    "Duration": "duration",
    "IntSlice": "intSlice",
    "StringSlice": "stringSlice",
    "StringArray": "stringArray",
    "StringToString": "stringToString",
    "": "value",
}
_ZERO: dict[str, Any] = {
    "bool": False,
    "string": "",
    "duration": "0s",
    "intSlice": [],
    "stringSlice": [],
    "stringArray": [],
}
_ZERO.update(dict.fromkeys(("int", "int32", "int64", "uint", "float64"), 0))
_REGISTRATION = re.compile(
    r"\b\w+\.(?P<kind>Bool|Int|Int32|Int64|Uint|Float64|String|Duration|IntSlice|StringSlice|StringArray|"
    r"StringToString|)Var(?P<short>P?)\(\s*&?(?P<target>[\w.]+)\s*,\s*\"(?P<name>[^\"]+)\"\s*,"
    r"(?:\s*\"(?P<shorthand>[^\"]*)\"\s*,)?(?P<rest>[^\n]*)"
)
_DEPRECATED = re.compile(r"\.MarkDeprecated\(\s*\"(?P<name>[^\"]+)\"\s*,\s*\"(?P<why>(?:[^\"\\]|\\.)*)\"")
_RANGE = re.compile(r"for\s+\w+(?:\s*,\s*\w+)?\s*:=\s*range\s+(?P<ident>\w+)\s*\{(?P<body>.{0,400})", re.S)
_FIELD = re.compile(r"^\s*(?P<field>[A-Z]\w*)\s*:\s*(?P<value>.+?),?\s*(?://.*)?$", re.M)


class _Expression(str):
    """A default written as an expression the files do not resolve (kept as written)."""


def _literal(text: str, constants: dict[str, str]) -> Any:
    text = text.strip().rstrip(",")
    text = constants.get(text, text)
    if re.fullmatch(r"\[\]\w+\{\}", text):
        return []
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"\"(?:[^\"\\]|\\.)*\"", text):
        return text[1:-1]
    duration = re.fullmatch(r"(\d+)\s*\*\s*time\.(Millisecond|Second|Minute)", text)
    if duration:
        return duration[1] + {"Millisecond": "ms", "Second": "s", "Minute": "m"}[duration[2]]
    return _Expression(text)


def _constants(texts: list[str]) -> dict[str, str]:
    """Simple `Name = literal` constants of the files (a default is often one of them)."""
    found: dict[str, str] = {}
    for text in texts:
        for match in re.finditer(r"^\s*(\w+)\s*(?:\w+\s*)?=\s*(\"[^\"\n]*\"|-?\d+|true|false)\s*$", text, re.M):
            found.setdefault(match[1], match[2])
            found.setdefault(f"{_package(text)}.{match[1]}", match[2])
    return found


def _package(text: str) -> str:
    match = re.search(r"^package\s+(\w+)", text, re.M)
    return match[1] if match else ""


def _defaults(texts: list[str], constants: dict[str, str]) -> dict[str, Any]:
    """options field -> its default, from the struct literal `NewOptions()` returns."""
    out: dict[str, Any] = {}
    for text in texts:
        for body in re.findall(r"func\s+NewOptions\(\)[^{]*\{(.*?)\n\}", text, re.S):
            for match in _FIELD.finditer(body):
                out.setdefault(match["field"], _literal(match["value"], constants))
    return out


def _rejected(text: str) -> set[str]:
    """Names in a list or set that a loop ranges over to refuse each one set ("cannot be used")."""
    names: set[str] = set()
    for loop in _RANGE.finditer(text):
        if "cannot be used" not in loop["body"]:
            continue
        literal = re.search(
            rf"\b{loop['ident']}\s*:?=\s*(?:\[\]string|map\[string\]struct\{{\}})\s*\{{(?P<items>.*?)\n\s*\}}",
            text,
            re.S,
        )
        if literal:
            names.update(re.findall(r"\"([^\"]+)\"", literal["items"]))
    return names


def generate(files: dict[str, str]) -> list[dict[str, Any]]:
    """Every flag the files register: path -> text in, flags (sorted by name) out."""
    texts = list(files.values())
    constants = _constants(texts)
    defaults = _defaults(texts, constants)
    flags: dict[str, dict[str, Any]] = {}
    deprecated: dict[str, str] = {}
    rejected: set[str] = set()
    for path, text in files.items():
        for match in _REGISTRATION.finditer(text):
            field = match["target"].rsplit(".", 1)[-1]
            flag: dict[str, Any] = {
                "name": match["name"],
                "type": _TYPES[match["kind"]],
                "source": f"{path}:{text.count(chr(10), 0, match.start()) + 1}",
            }
            if match["target"].startswith("opts."):
                flag["options_field"] = field
                default = defaults.get(field, _ZERO.get(flag["type"]))  # unset: Go's zero value
                if isinstance(default, _Expression):
                    flag["default_expression"] = str(default)  # another package's constant: not resolved here
                else:
                    flag["default"] = default
            if match["short"] and match["shorthand"]:
                flag["shorthand"] = match["shorthand"]
            flags.setdefault(match["name"], flag)
        deprecated.update({m["name"]: m["why"] for m in _DEPRECATED.finditer(text)})
        rejected |= _rejected(text)
    for name, why in deprecated.items():
        if name in flags:
            flags[name]["deprecated"] = why
    for name in rejected & flags.keys():
        flags[name]["rejected_if_set"] = True
    return sorted(flags.values(), key=lambda f: f["name"])
