"""`python -m tools.vendor_upstream [--from DIR] [--check] [--add PATH ...] [--crd API_VERSION/KIND ...]`

Refresh `conformance/upstream/`: the subset of an upstream data checkout (today ../shared/upstream) that the
conformance checks read, so a bare clone passes its tests. Only facts are kept: CRDs reduced to the kinds and
served versions we render, with every schema `description` dropped; chart values and other YAML re-dumped without
their comments; Chart.yaml reduced to its identity; Helm indexes reduced to the charts we install; generated flag
lists without their usage text; from a prose file only the lines matching declared patterns (facts such as
metric samples). Each file is listed in `MANIFEST.json` with its source repository, tag, path and
commit (from the checkout's SOURCES.md), the sha256 of the upstream file and of the vendored one.

What to vendor is the manifest itself (its paths, and the CRD kinds each CRD file keeps) plus every file a pinned
catalog entry names (`catalog_paths`), so moving a pin without vendoring its data fails here and in the tests.
`--check` rewrites nothing: it fails when the vendored files differ from what a refresh would write.

Facts the checkout lacks are read from the upstream repository itself (`tools/upstream_origins.py`: chart files
through the Go module proxy or a local mirror, and each pinned chart's CRD list derived from its files); when
that repository is not at hand the vendored file is kept as it is and the run says it was not re-derived.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

PROJECT_DIR = Path(__file__).resolve().parents[1]
VENDORED_DIR = PROJECT_DIR / "conformance" / "upstream"
MANIFEST = "MANIFEST.json"
DEFAULT_SOURCE = PROJECT_DIR.parent / "shared" / "upstream"

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_SOURCE_LINE = re.compile(r"^- `(?P<path>[^`]+)` \| (?P<rest>.*)$")
# Keys of a JSON Schema node whose values are schemas (or lists / maps of them).
_SCHEMA_KEYS = ("items", "additionalProperties", "not")
_SCHEMA_LIST_KEYS = ("allOf", "anyOf", "oneOf")
_SCHEMA_MAP_KEYS = ("properties", "patternProperties", "definitions")
# Prose fields of the generated flag and metric lists.
_PROSE_KEYS = {"description", "usage", "help", "documentation"}


class VendorError(Exception):
    """The source checkout cannot provide what the project needs."""


def catalog_paths() -> set[str]:
    """Every upstream file a pinned catalog entry names: the conformance checks read each of them."""
    from components.catalog.charts import CHARTS
    from tools.upstream_origins import CHART_CRDS

    paths: set[str] = {c.path for c in CHART_CRDS.values()}
    for chart in CHARTS.values():
        paths.update((chart.upstream_chart, chart.upstream_values, *chart.subcharts.values(), *chart.documented_values))
    return paths


def strip_schema(node: Any) -> Any:
    """A JSON Schema (OpenAPI v3 or swagger) without `description`s; property names called "description" stay."""
    if isinstance(node, list):
        return [strip_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("description", "example", "externalDocs"):
            continue
        if key in _SCHEMA_MAP_KEYS and isinstance(value, dict):
            out[key] = {name: strip_schema(sub) for name, sub in value.items()}
        elif key in _SCHEMA_KEYS or key in _SCHEMA_LIST_KEYS:
            out[key] = strip_schema(value)
        else:
            out[key] = value
    return out


def _strip_prose(node: Any) -> Any:
    if isinstance(node, list):
        return [_strip_prose(n) for n in node]
    if isinstance(node, dict):
        return {k: _strip_prose(v) for k, v in node.items() if k not in _PROSE_KEYS}
    return node


def _crd_key(doc: dict) -> str:
    return f"{doc['spec']['group']}/{doc['spec']['names']['kind']}"


def _reduce_crds(text: str, crds: list[str]) -> list[dict]:
    """The CRD documents of `crds` ("group/version/Kind" each), with only those served versions, no prose."""
    wanted: dict[str, set[str]] = {}
    for entry in crds:
        group, version, kind = entry.rsplit("/", 2)
        wanted.setdefault(f"{group}/{kind}", set()).add(version)
    docs = [d for d in yaml.load_all(text, Loader=_Loader) if isinstance(d, dict)]
    kept = []
    for doc in docs:
        if doc.get("kind") != "CustomResourceDefinition" or _crd_key(doc) not in wanted:
            continue
        versions = wanted.pop(_crd_key(doc))
        served = [v for v in doc["spec"]["versions"] if v["name"] in versions]
        missing = versions - {v["name"] for v in served}
        if missing:
            raise VendorError(f"{_crd_key(doc)}: no served version {sorted(missing)} in the upstream CRD")
        kept.append(
            {
                "apiVersion": doc["apiVersion"],
                "kind": doc["kind"],
                "metadata": {"name": doc["metadata"]["name"]},
                "spec": {
                    "group": doc["spec"]["group"],
                    "names": doc["spec"]["names"],
                    "scope": doc["spec"]["scope"],
                    "versions": [_reduce_version(version) for version in served],
                },
            }
        )
    if wanted:
        raise VendorError(f"no CRD for {sorted(wanted)} in the upstream file")
    return kept


def _reduce_version(version: dict) -> dict:
    """A served version's schema without prose and without `status`, which servers write and we never render."""
    out = {k: v for k, v in version.items() if k != "schema"}
    schema = (version.get("schema") or {}).get("openAPIV3Schema")
    if schema:
        schema = strip_schema(schema)
        schema.get("properties", {}).pop("status", None)
        out["schema"] = {"openAPIV3Schema": schema}
    return out


def _reduce_chart_yaml(chart: dict) -> dict:
    keep = ("apiVersion", "name", "version", "appVersion", "kubeVersion", "type")
    out = {k: chart[k] for k in keep if k in chart}
    if chart.get("dependencies"):
        out["dependencies"] = [
            {k: d[k] for k in ("name", "version", "repository", "condition", "alias") if k in d}
            for d in chart["dependencies"]
        ]
    return out


def _reduce_helm_index(index: dict, charts: list[str]) -> dict:
    entries = index.get("entries") or {}
    missing = [c for c in charts if c not in entries]
    if missing:
        raise VendorError(f"no chart {missing} in the index")
    keep = ("name", "version", "appVersion", "urls", "created", "digest")
    return {
        "apiVersion": index.get("apiVersion"),
        "generated": index.get("generated"),
        "entries": {c: [{k: e[k] for k in keep if k in e} for e in entries[c]] for c in charts},
    }


def vendored_text(relative: str, raw: str, select: list[str]) -> str:
    """What `conformance/upstream/<relative>` holds for the upstream file's text `raw`."""
    name = Path(relative).name
    if name.endswith(".json"):
        data = json.loads(raw)
        data = (
            {"swagger": data["swagger"], "definitions": {n: strip_schema(d) for n, d in data["definitions"].items()}}
            if "swagger" in data
            else _strip_prose(data)
        )
        return json.dumps(data, indent=1, sort_keys=True) + "\n"
    if not name.endswith((".yaml", ".yml")):
        if not select:
            raise VendorError(
                "only YAML and JSON are vendored whole; from a prose file keep the lines of facts with "
                "--crd PATH=<regex> (e.g. metric samples), or put what it says in the catalog"
            )
        patterns = [re.compile(p) for p in select]
        return "".join(line + "\n" for line in raw.splitlines() if any(p.search(line) for p in patterns))
    if "kind: CustomResourceDefinition" in raw:
        if not select:
            raise VendorError("a CRD file needs the kinds to keep: --crd group/version/Kind")
        docs: list[Any] = _reduce_crds(raw, select)
    elif relative.startswith("helm-index/"):
        docs = [_reduce_helm_index(yaml.load(raw, Loader=_Loader), select)]
    elif name.endswith(".Chart.yaml") or name == "Chart.yaml":
        docs = [_reduce_chart_yaml(yaml.load(raw, Loader=_Loader))]
    else:
        docs = list(yaml.load_all(raw, Loader=_Loader))  # values and examples: their comments are prose
    return yaml.dump_all(docs, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120)


def provenance(source: Path) -> dict[str, dict[str, str]]:
    """local path -> {repo, ref, source, commit, license}, from the checkout's SOURCES.md."""
    out: dict[str, dict[str, str]] = {}
    sources = source / "SOURCES.md"
    if not sources.is_file():
        raise VendorError(f"{sources} not found: the upstream checkout lists each file's provenance there")
    for line in sources.read_text().splitlines():
        match = _SOURCE_LINE.match(line)
        if not match:
            continue
        fields = [f.strip() for f in match["rest"].split(" | ")]
        if len(fields) < 5:
            continue
        repo, ref, path_in_repo, commit, license_ = fields[0], fields[1], fields[2], fields[-2], fields[-1]
        out[match["path"]] = {
            "repo": repo,
            "ref": ref,
            "source": path_in_repo.strip("`"),
            "commit": commit,
            "license": license_,
        }
    return out


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_manifest(vendored: Path = VENDORED_DIR) -> dict[str, dict]:
    path = vendored / MANIFEST
    if not path.is_file():
        return {}
    return {e["path"]: e for e in json.loads(path.read_text())["files"]}


def build(
    source: Path, wanted: dict[str, list[str]], kept: dict[str, dict] | None = None
) -> tuple[dict[str, str], list[dict], list[str]]:
    """(relative path -> vendored text, manifest entries, notes) for every wanted path (path -> CRD/chart
    selection). A fact read from an upstream repository that is not at hand keeps its `kept` manifest entry and
    vendored file (a note says so); without one it is a problem."""
    from tools import upstream_origins

    known = provenance(source)
    origins = upstream_origins.origin_entries()
    texts: dict[str, str] = {}
    entries: list[dict] = []
    problems: list[str] = []
    notes: list[str] = []
    for relative in sorted(wanted):
        select = sorted(set(wanted[relative]))
        upstream_hash = None
        if relative in origins:
            try:
                raw, found, upstream_hash = upstream_origins.raw(relative)
            except (upstream_origins.OriginUnavailable, OSError, ValueError) as exc:
                previous = (kept or {}).get(relative)
                if previous is None or not (VENDORED_DIR / relative).is_file():
                    problems.append(f"{relative}: {exc}")
                    continue
                notes.append(f"{relative}: not re-derived ({exc}); kept as vendored")
                texts[relative] = (VENDORED_DIR / relative).read_text()
                entries.append(previous)
                continue
        else:
            upstream_file = source / relative
            if not upstream_file.is_file():
                problems.append(f"{relative}: not in {source} (a pinned catalog entry or the manifest names it)")
                continue
            if relative not in known:
                problems.append(f"{relative}: no provenance line in {source / 'SOURCES.md'}")
                continue
            raw, found = upstream_file.read_bytes(), known[relative]
        try:
            text = vendored_text(relative, raw.decode(), select)
        except VendorError as exc:
            problems.append(f"{relative}: {exc}")
            continue
        texts[relative] = text
        entry: dict[str, Any] = {
            "path": relative,
            **found,
            "upstream_sha256": upstream_hash or _sha256(raw),
            "sha256": _sha256(text.encode()),
        }
        if select:
            entry["select"] = select
        entries.append(entry)
    if problems:
        raise VendorError("\n".join(problems))
    return texts, entries, notes


def manifest_text(entries: list[dict]) -> str:
    doc = {
        "about": "Upstream facts the conformance checks read, vendored by `python -m tools.vendor_upstream`; "
        "`select` keeps CRD kinds (group/version/Kind), Helm index charts, or (text files) the lines matching "
        "these regular expressions.",
        "files": entries,
    }
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def wanted_paths(manifest: dict[str, dict], add: Iterable[str], crds: Iterable[str]) -> dict[str, list[str]]:
    wanted: dict[str, list[str]] = {path: list(e.get("select", [])) for path, e in manifest.items()}
    for path in catalog_paths():
        wanted.setdefault(path, [])
    for path in add:
        wanted.setdefault(path, [])
    for spec in crds:  # PATH=group/version/Kind
        path, _, crd = spec.partition("=")
        wanted.setdefault(path, []).append(crd)
    return wanted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vendor_upstream", description=__doc__.split("\n\n")[1])
    parser.add_argument("--from", dest="source", type=Path, default=DEFAULT_SOURCE, help="upstream data checkout")
    parser.add_argument("--check", action="store_true", help="fail when the vendored files are not up to date")
    parser.add_argument("--add", action="append", default=[], metavar="PATH", help="vendor one more file")
    parser.add_argument(
        "--crd", action="append", default=[], metavar="PATH=GROUP/VERSION/KIND", help="keep one more CRD kind"
    )
    args = parser.parse_args(argv)
    if not args.source.is_dir():
        print(f"error: upstream checkout {args.source} not found; pass --from DIR", file=sys.stderr)
        return 2
    manifest = load_manifest(VENDORED_DIR)
    # Files a generator of their own writes (its `generator` entry says which) are kept as they are.
    generated = {path: e for path, e in manifest.items() if e.get("generator")}
    try:
        texts, entries, notes = build(
            args.source,
            wanted_paths({p: e for p, e in manifest.items() if p not in generated}, args.add, args.crd),
            manifest,
        )
        texts.update({path: (VENDORED_DIR / path).read_text() for path in generated})
        entries = sorted([*entries, *generated.values()], key=lambda e: e["path"])
    except VendorError as exc:
        for line in str(exc).splitlines():
            print(f"error: {line}", file=sys.stderr)
        return 1
    for note in notes:
        print(f"note: {note}")
    expected = {**texts, MANIFEST: manifest_text(entries)}
    on_disk = (
        {p.relative_to(VENDORED_DIR).as_posix() for p in VENDORED_DIR.rglob("*") if p.is_file()}
        if VENDORED_DIR.is_dir()
        else set()
    )
    stale = sorted(
        p for p, t in expected.items() if not (VENDORED_DIR / p).is_file() or (VENDORED_DIR / p).read_text() != t
    )
    extra = sorted(on_disk - set(expected))
    if args.check:
        for path in stale:
            print(
                f"error: conformance/upstream/{path} is not what {args.source} gives; run make vendor", file=sys.stderr
            )
        for path in extra:
            print(f"error: conformance/upstream/{path} is in no manifest entry; remove it", file=sys.stderr)
        if not stale and not extra:
            print(f"conformance/upstream: {len(texts)} files match {args.source}")
        return 1 if stale or extra else 0
    for path in extra:
        (VENDORED_DIR / path).unlink()
    for path in stale:
        target = VENDORED_DIR / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(expected[path])
    size = sum(len(t) for t in texts.values())
    print(f"conformance/upstream: {len(texts)} files, {size / 1e6:.1f} MB; {len(stale)} written, {len(extra)} removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
