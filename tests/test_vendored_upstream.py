"""The vendored upstream facts (conformance/upstream/) are complete, intact, traceable and free of prose."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from components.catalog.charts import CHARTS
from tools import vendor_upstream
from tools.vendor_upstream import MANIFEST, VENDORED_DIR, strip_schema, vendored_text

ENTRIES = json.loads((VENDORED_DIR / MANIFEST).read_text())["files"]


def test_manifest_lists_files():
    assert len(ENTRIES) >= 50
    assert [e["path"] for e in ENTRIES] == sorted({e["path"] for e in ENTRIES})


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["path"])
def test_each_file_matches_its_manifest_entry(entry):
    data = (VENDORED_DIR / entry["path"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == entry["sha256"], "edited by hand? run make vendor"
    for key in ("repo", "ref", "source", "commit", "license", "upstream_sha256"):
        assert entry[key].strip(), f"{entry['path']}: no {key}"
    assert "/" in entry["repo"], entry["repo"]
    assert len(entry["upstream_sha256"]) == 64


def test_no_file_outside_the_manifest():
    on_disk = {p.relative_to(VENDORED_DIR).as_posix() for p in VENDORED_DIR.rglob("*") if p.is_file()}
    assert on_disk - {MANIFEST} == {e["path"] for e in ENTRIES}


@pytest.mark.parametrize("chart", sorted(CHARTS.values(), key=lambda c: c.name), ids=lambda c: c.name)
def test_every_pinned_chart_has_its_vendored_files(chart):
    """Moving a pin in the catalog without vendoring its chart data fails here (and `make vendor` refuses it);
    tests/test_conformance.py checks that the vendored Chart.yaml carries the pinned version."""
    listed = {e["path"] for e in ENTRIES}
    for path in (chart.upstream_chart, chart.upstream_values, *chart.subcharts.values(), *chart.documented_values):
        assert path in listed, f"{chart.name} {chart.version}: {path} is not vendored; run make vendor"


def _descriptions(node, path=""):
    """Paths of `description` schema keywords (not properties named description)."""
    if isinstance(node, list):
        return [p for i, n in enumerate(node) for p in _descriptions(n, f"{path}[{i}]")]
    if not isinstance(node, dict):
        return []
    found = [path] if isinstance(node.get("description"), str) else []
    for key, value in node.items():
        if key in ("properties", "definitions", "patternProperties") and isinstance(value, dict):
            found += [p for name, sub in value.items() for p in _descriptions(sub, f"{path}.{name}")]
        elif key not in ("description",):
            found += _descriptions(value, f"{path}.{key}")
    return found


def _crd_files():
    return [e for e in ENTRIES if any(s.count("/") >= 2 for s in e.get("select", []))]


def test_crds_keep_only_the_selected_kinds_and_versions_without_prose(upstream):
    files = _crd_files()
    assert len(files) >= 25
    assert upstream.root == VENDORED_DIR
    for entry in files:
        # every document of the file, as the session's conformance checks read it (parsed once per session)
        docs = upstream.crd_documents(VENDORED_DIR / entry["path"])
        kept = sorted(
            f"{d['spec']['group']}/{v['name']}/{d['spec']['names']['kind']}"
            for d in docs
            for v in d["spec"]["versions"]
        )
        assert kept == entry["select"], entry["path"]
        for doc in docs:
            for version in doc["spec"]["versions"]:
                schema = version["schema"]["openAPIV3Schema"]
                assert _descriptions(schema) == [], entry["path"]
                assert "status" not in schema.get("properties", {})


def test_no_prose_is_vendored():
    """Text files keep only the lines that match their declared fact patterns (e.g. metric samples)."""
    text_files = [e for e in ENTRIES if Path(e["path"]).suffix not in (".yaml", ".yml", ".json")]
    assert text_files, "the check below would pass on nothing"
    for entry in text_files:
        patterns = [re.compile(p) for p in entry["select"]]
        lines = (VENDORED_DIR / entry["path"]).read_text().splitlines()
        assert lines and all(any(p.search(line) for p in patterns) for line in lines), entry["path"]


# --- the reducer itself ---------------------------------------------------------------------------------------

_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations: {controller-gen.kubebuilder.io/version: v0.16.0}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object}}
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        description: A widget.
        type: object
        properties:
          spec:
            description: What the widget is.
            type: object
            x-kubernetes-validations: [{rule: "self.size > 0", message: size must be positive}]
            properties:
              description: {type: string, description: the widget's own description field}
              size: {type: integer}
          status: {type: object}
"""


def test_reducer_keeps_the_selected_version_its_rules_and_fields_named_description():
    [crd] = yaml.safe_load_all(vendored_text("x/widgets.yaml", _CRD, ["example.com/v1/Widget"]))
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v1"]
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert schema == {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [{"rule": "self.size > 0", "message": "size must be positive"}],
                "properties": {"description": {"type": "string"}, "size": {"type": "integer"}},
            }
        },
    }
    assert "annotations" not in crd["metadata"]


def test_reducer_refuses_a_kind_or_version_the_file_lacks():
    with pytest.raises(vendor_upstream.VendorError, match="no CRD for"):
        vendored_text("x/widgets.yaml", _CRD, ["example.com/v1/Gadget"])
    with pytest.raises(vendor_upstream.VendorError, match="no served version"):
        vendored_text("x/widgets.yaml", _CRD, ["example.com/v2/Widget"])
    with pytest.raises(vendor_upstream.VendorError, match="needs the kinds"):
        vendored_text("x/widgets.yaml", _CRD, [])


def test_reducer_drops_comments_of_values_and_refuses_prose():
    assert yaml.safe_load(vendored_text("c/values.yaml", "# the replica count\nreplicas: 2\n", [])) == {"replicas": 2}
    with pytest.raises(vendor_upstream.VendorError, match="prose"):
        vendored_text("c/README.md", "# Hello", [])
    text = 'Some prose about metrics.\nnv_x{a="1"} 2\nMore prose.\n'
    assert vendored_text("c/README.md", text, [r"^nv_\w+\{"]) == 'nv_x{a="1"} 2\n'


def test_strip_schema_walks_combinators_and_items():
    schema = {"anyOf": [{"description": "a", "type": "string"}], "items": {"description": "b", "type": "integer"}}
    assert strip_schema(schema) == {"anyOf": [{"type": "string"}], "items": {"type": "integer"}}


def test_check_mode_reports_a_stale_file(tmp_path, monkeypatch):
    """`--check` against a source whose file changed says which vendored file is stale, and rewrites nothing."""
    source = tmp_path / "upstream"
    entry = next(e for e in ENTRIES if e["path"].endswith("chart-keda.values.yaml"))
    (source / entry["path"]).parent.mkdir(parents=True)
    (source / entry["path"]).write_text("replicaCount: 3\n")
    line = " | ".join((entry["repo"], entry["ref"], f"`{entry['source']}`", entry["commit"], entry["license"]))
    (source / "SOURCES.md").write_text(f"- `{entry['path']}` | {line}\n")
    vendored = tmp_path / "vendored"
    (vendored / entry["path"]).parent.mkdir(parents=True)
    (vendored / entry["path"]).write_text("replicaCount: 1\n")
    (vendored / MANIFEST).write_text(json.dumps({"files": [{**entry, "select": []}]}))
    monkeypatch.setattr(vendor_upstream, "VENDORED_DIR", vendored)
    monkeypatch.setattr(vendor_upstream, "catalog_paths", lambda: {entry["path"]})
    assert vendor_upstream.main(["--from", str(source), "--check"]) == 1
    assert (vendored / entry["path"]).read_text() == "replicaCount: 1\n"
    assert vendor_upstream.main(["--from", str(source)]) == 0
    assert yaml.safe_load((vendored / entry["path"]).read_text()) == {"replicaCount": 3}


def test_a_branch_of_a_mirror_is_read_at_its_stated_commit(tmp_path, monkeypatch):
    """A Helm repository's gh-pages moves on: its index is read at the commit stated with it, which must be on the
    branch; the provenance records that commit."""
    from tools import upstream_origins

    repo_dir = tmp_path / "owner+charts" / "repo"

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo_dir), *args], capture_output=True, text=True, check=True).stdout

    repo_dir.mkdir(parents=True)
    git("init", "-q", "-b", "gh-pages")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    commits = []
    for version in ("1.0.0", "2.0.0"):
        (repo_dir / "index.yaml").write_text(f"entries: {{c: [{{version: {version}}}]}}\n")
        git("add", "index.yaml")
        git("commit", "-q", "-m", version)
        commits.append(git("rev-parse", "HEAD").strip())
    git("checkout", "-q", "-b", "other", commits[0])
    (repo_dir / "index.yaml").write_text("entries: {c: [{version: 9.9.9}]}\n")
    git("commit", "-q", "-am", "off the branch")
    off_branch = git("rev-parse", "HEAD").strip()
    monkeypatch.setenv("UPSTREAM_MIRRORS", str(tmp_path))  # a directory of pre-fetched mirrors: nothing fetched
    monkeypatch.setattr(upstream_origins, "GIT_CACHE", tmp_path / "cache")

    pinned = upstream_origins.Repo("owner/charts", "gh-pages", tag_commit=commits[0])
    assert pinned.read("index.yaml") == b"entries: {c: [{version: 1.0.0}]}\n"
    assert upstream_origins.provenance(pinned, "index.yaml")["commit"] == commits[0]
    assert upstream_origins.Repo("owner/charts", "gh-pages").read("index.yaml").endswith(b"2.0.0}]}\n")
    with pytest.raises(ValueError, match="is not on gh-pages"):
        upstream_origins.Repo("owner/charts", "gh-pages", tag_commit=off_branch).read("index.yaml")


def test_clusterpedia_files_come_from_their_repositories_not_the_checkout():
    """The shared checkout holds no Clusterpedia file: each is a copy of its repository at the pin, and the index
    at the gh-pages commit it was read at."""
    from tools.upstream_origins import COPIES

    by_path = {e["path"]: e for e in ENTRIES}
    expected = {
        "clusterpedia-helm/clusterpedia-2.6.0/chart-clusterpedia.Chart.yaml": ("clusterpedia-2.6.0", None),
        "clusterpedia-helm/clusterpedia-2.6.0/chart-clusterpedia.values.yaml": ("clusterpedia-2.6.0", None),
        "clusterpedia-helm/clusterpedia-2.6.0/chart-clusterpedia._crds.cluster.clusterpedia.io_pediaclusters.yaml": (
            "clusterpedia-2.6.0",
            None,
        ),
        "clusterpedia/v0.9.0/cluster.clusterpedia.io_pediaclusters.yaml": ("v0.9.0", None),
        "helm-index/clusterpedia-io.github.io/clusterpedia-helm/index.yaml": (
            "gh-pages",
            "9fd940c01c21b42b2a0c46483f824be2109c9630",  # SOURCES-36a.md of the overlay the index was first read from
        ),
    }
    assert set(expected) <= set(COPIES)
    for path, (ref, commit) in expected.items():
        assert COPIES[path].repo.ref == by_path[path]["ref"] == ref
        if commit:
            assert COPIES[path].repo.tag_commit == by_path[path]["commit"] == commit
