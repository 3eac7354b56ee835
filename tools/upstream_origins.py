"""Upstream facts the shared data checkout does not hold, read straight from the upstream repository at its tag.

Two kinds, both vendored by `tools/vendor_upstream.py` into `conformance/upstream/` with a MANIFEST entry:
- `COPIES`: a file of a repository at a tag (a chart's Chart.yaml or values.yaml), reduced like the checkout's;
- `CHART_CRDS`: which CRDs a pinned chart installs, derived from the chart's files at the tag
  (`generated-chart-crds.<chart>.json`). What a chart renders is read from how its templates use its files
  (each `CrdFiles` names the template and the text that renders them, which the generator checks is there), and
  every CRD document in the chart's directory must be accounted for: installed (with the values that gate it) or
  ignored with the reason. `components/catalog/chart_crds.py` states the result and a test compares it.

A repository is read from the Go module proxy (`go mod download`, which gives the tag's commit) when upstream
publishes it as a Go module, else from git (`git_dir`): a directory of pre-fetched mirrors when UPSTREAM_MIRRORS
names one, else the one ref fetched from its public repository into build/upgrade/mirrors/. Without either at hand
a file cannot be re-derived; `--check` says so.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

# Opt-in: a directory of pre-fetched bare mirrors, `<owner>+<name>/repo` each (offline machines, CI caches).
MIRRORS_ENV = "UPSTREAM_MIRRORS"
# Where a repository is fetched from; UPSTREAM_GIT_URL overrides it (an internal mirror), `{repo}` = owner/name.
GIT_URL_ENV, GIT_URL = "UPSTREAM_GIT_URL", "https://github.com/{repo}"
GIT_CACHE = Path(__file__).resolve().parents[1] / "build" / "upgrade" / "mirrors"
LICENSE = "Apache-2.0"  # every repository below: its root LICENSE is the Apache License 2.0


class OriginUnavailable(Exception):
    """The repository at that tag is not at hand (no module proxy, no mirror)."""


def go_mod_download(module: str, version: str, *, timeout: int) -> dict[str, Any]:
    """`go mod download -json module@version`: the module's `Dir` and `Origin` (the tag's commit), or
    OriginUnavailable with the proxy's reason (a refused version is a 403 here)."""
    try:
        out = subprocess.run(
            ["go", "mod", "download", "-json", f"{module}@{version}"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OriginUnavailable(f"go mod download {module}@{version}: {exc}") from exc
    info: dict[str, Any] = json.loads(out.stdout or "{}")
    if "Dir" not in info:
        reason = (info.get("Error") or out.stderr).strip() or "no answer"
        raise OriginUnavailable(f"go mod download {module}@{version}: {reason}")
    return info


def _git_has(git_dir: Path, ref: str) -> bool:
    if not git_dir.is_dir():
        return False
    out = subprocess.run(
        ["git", "-C", str(git_dir), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return out.returncode == 0


def git_url(repo: str) -> str:
    return os.environ.get(GIT_URL_ENV, GIT_URL).format(repo=repo)


def git_dir(repo: str, ref: str) -> Path:
    """A git directory holding `ref` (a tag or branch) of `repo`: the pre-fetched mirror UPSTREAM_MIRRORS names
    when it has the ref, else a partial clone (blobs fetched when read) under build/upgrade/mirrors/, the ref fetched
    once from the repository's public URL. OriginUnavailable names what was tried."""
    tried = []
    if mirrors := os.environ.get(MIRRORS_ENV):
        mirror = Path(mirrors) / repo.replace("/", "+") / "repo"
        if _git_has(mirror, ref):
            return mirror
        tried.append(f"{MIRRORS_ENV}: no {ref} in {mirror}")
    cache = GIT_CACHE / f"{repo.replace('/', '+')}.git"
    if _git_has(cache, ref):
        return cache
    url = git_url(repo)
    steps = (
        []
        if cache.is_dir()
        else [
            ["git", "init", "--quiet", "--bare", str(cache)],
            ["git", "-C", str(cache), "remote", "add", "origin", url],
            ["git", "-C", str(cache), "config", "remote.origin.promisor", "true"],
            ["git", "-C", str(cache), "config", "remote.origin.partialclonefilter", "blob:none"],
        ]
    )
    # The one ref (a tag or a branch, with its history), kept under its own name: `git show REF:PATH` reads it.
    fetch = ["git", "-C", str(cache), "fetch", "--quiet", "--no-tags", "--filter=blob:none", "origin"]
    steps.append([*fetch, f"+{ref}:refs/tags/{ref}"])
    for step in steps:
        try:
            out = subprocess.run(step, capture_output=True, text=True, timeout=900, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise OriginUnavailable("; ".join([*tried, f"git fetch {url} {ref}: {exc}"])) from exc
        if out.returncode != 0:
            lines = (out.stderr or out.stdout).strip().splitlines()
            fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
            reason = (fatal or lines or ["failed"])[0].rstrip(".")
            raise OriginUnavailable("; ".join([*tried, f"git fetch {url} {ref}: {reason}"]))
    return cache


@dataclass(frozen=True)
class Repo:
    """A repository at a tag: `module` is its Go module path when the proxy serves it."""

    repo: str  # owner/name on GitHub
    ref: str  # tag, or the branch a Helm repository's index is served from
    module: str | None = None
    # The tag's commit where the module proxy records none (the shared checkout's SOURCES.md gives it); from a
    # mirror, the commit read of a branch that moves on (it must be on the branch).
    tag_commit: str = ""

    @cache  # noqa: B019 - a few repositories, each read many times in one run
    def _module_dir(self, module: str) -> tuple[Path, str]:
        info = go_mod_download(module, self.ref, timeout=600)
        return Path(info["Dir"]), info.get("Origin", {}).get("Hash", "")

    def _mirror(self) -> Path:
        return git_dir(self.repo, self.ref)

    def _git(self, *args: str) -> bytes:
        return subprocess.run(["git", "-C", str(self._mirror()), *args], capture_output=True, check=True).stdout

    @cache  # noqa: B019 - one check per repository and run
    def _mirror_rev(self) -> str:
        """What a mirror is read at: the stated commit, when it is on `ref`, else the tag itself."""
        if not self.tag_commit:
            return self.ref
        on_ref = subprocess.run(
            ["git", "-C", str(self._mirror()), "merge-base", "--is-ancestor", self.tag_commit, self.ref],
            capture_output=True,
            check=False,
        )
        if on_ref.returncode != 0:
            raise ValueError(f"{self.repo}: {self.tag_commit} is not on {self.ref} in {self._mirror()}")
        return self.tag_commit

    def commit(self) -> str:
        if self.module:
            recorded = self._module_dir(self.module)[1]
            if recorded and self.tag_commit and recorded != self.tag_commit:
                raise ValueError(f"{self.repo}@{self.ref}: the proxy says {recorded}, not {self.tag_commit}")
            if not (recorded or self.tag_commit):
                raise ValueError(f"{self.repo}@{self.ref}: the module proxy records no commit; state tag_commit")
            return recorded or self.tag_commit
        return self._git("rev-parse", f"{self._mirror_rev()}^{{commit}}").decode().strip()

    def read(self, path: str) -> bytes:
        if self.module:
            return (self._module_dir(self.module)[0] / path).read_bytes()
        return self._git("show", f"{self._mirror_rev()}:{path}")

    def files(self, directory: str) -> list[str]:
        """Every file under `directory` (repository paths, sorted)."""
        if self.module:
            root = self._module_dir(self.module)[0]
            return sorted(p.relative_to(root).as_posix() for p in (root / directory).rglob("*") if p.is_file())
        out = self._git("ls-tree", "-r", "--name-only", self._mirror_rev(), "--", directory).decode()
        return sorted(line for line in out.splitlines() if line)


KSERVE = Repo("kserve/kserve", "v0.20.0", "github.com/kserve/kserve")
ENVOY_GATEWAY = Repo(
    "envoyproxy/gateway", "v1.9.0", "github.com/envoyproxy/gateway", "39763b1c07ec30a5526fe70434a2cfe4181de642"
)
AI_GATEWAY = Repo("envoyproxy/ai-gateway", "v1.1.0")  # the proxy refuses v1.1.0
VOLCANO = Repo("volcano-sh/volcano", "v1.15.1", "volcano.sh/volcano")
FLUID = Repo("fluid-cloudnative/fluid", "v1.0.8", "github.com/fluid-cloudnative/fluid")
CERT_MANAGER = Repo(
    "cert-manager/cert-manager",
    "v1.21.1",
    "github.com/cert-manager/cert-manager",
    "24e33194fb39488eff2bbf10c6dc640f407cad44",
)
KARMADA = Repo("karmada-io/karmada", "v1.18.2", "github.com/karmada-io/karmada")
KEDA_CHARTS = Repo("kedacore/charts", "v2.20.2")
PROMETHEUS_CHARTS = Repo("prometheus-community/helm-charts", "kube-prometheus-stack-88.5.3")
CLUSTERPEDIA = Repo("clusterpedia-io/clusterpedia", "v0.9.0")  # the proxy refuses v0.9.0
CLUSTERPEDIA_CHARTS = Repo("clusterpedia-io/clusterpedia-helm", "clusterpedia-2.6.0")
# The Helm repository's index, as gh-pages served it when the chart pin was chosen.
CLUSTERPEDIA_CHART_INDEX = Repo(
    "clusterpedia-io/clusterpedia-helm", "gh-pages", tag_commit="9fd940c01c21b42b2a0c46483f824be2109c9630"
)


@dataclass(frozen=True)
class Copy:
    """A repository file vendored as `conformance/upstream/<path>`."""

    repo: Repo
    source: str


COPIES: dict[str, Copy] = {
    **{
        f"kserve/v0.20.0/chart-{chart}.{name}": Copy(KSERVE, f"charts/{chart}/{name}")
        for chart in ("kserve-llmisvc-crd", "kserve-llmisvc-resources")
        for name in ("Chart.yaml", "values.yaml")
    },
    **{
        f"clusterpedia-helm/clusterpedia-2.6.0/chart-clusterpedia.{name.replace('/', '.')}": Copy(
            CLUSTERPEDIA_CHARTS, f"charts/clusterpedia/{name}"
        )
        for name in ("Chart.yaml", "values.yaml", "_crds/cluster.clusterpedia.io_pediaclusters.yaml")
    },
    **{
        f"clusterpedia/v0.9.0/cluster.clusterpedia.io_{name}.yaml": Copy(
            CLUSTERPEDIA, f"kustomize/crds/cluster.clusterpedia.io_{name}.yaml"
        )
        for name in ("pediaclusters", "clustersyncresources")
    },
    "helm-index/clusterpedia-io.github.io/clusterpedia-helm/index.yaml": Copy(CLUSTERPEDIA_CHART_INDEX, "index.yaml"),
}


@dataclass(frozen=True)
class Condition:
    """A chart value that gates what a template renders: `path` truthy, or equal to `equals`."""

    path: str
    equals: str | bool = True


@dataclass(frozen=True)
class CrdFiles:
    """Chart files whose CRD documents a release installs, and how.

    `rendered_by` is the chart file (a template, or Chart.yaml for a subchart's `crds/`) that makes the release
    apply them, and `marker` text it must contain for that (a `.Files.Get` of the file, the `if` that gates it;
    `{name}` and `{dir}` stand for the CRD file's name and its directory's).
    `when`: any of these conditions installs them (none: always). `names`: only these CRDs of the files.
    `unless_owned`: the template skips a CRD another release already owns (it looks it up first).
    """

    glob: str
    rendered_by: str
    marker: str
    when: tuple[Condition, ...] = ()
    names: tuple[str, ...] = ()
    unless_owned: bool = False


@dataclass(frozen=True)
class ServedApi:
    """Kinds an aggregated API server of the chart serves (an APIService, not a CRD), e.g. Karmada's Cluster."""

    group: str
    version: str
    kinds: tuple[str, ...]
    rendered_by: str  # the template with the APIService
    types_file: str  # the Go file declaring the kinds (each `type <Kind> struct` must be there)
    when: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class ChartCrds:
    chart: str
    version: str
    repo: Repo
    directory: str  # the chart's directory at the tag
    vendored_dir: str  # conformance/upstream/<vendored_dir>/generated-chart-crds.<chart>.json
    installs: tuple[CrdFiles, ...] = ()
    ignored: dict[str, str] = field(default_factory=dict)  # glob -> why its CRD documents are not installed
    served: tuple[ServedApi, ...] = ()
    # Where the CRDs go: the release's own cluster, or (Karmada's host mode) the Karmada API server it runs.
    target: str = "cluster"

    @property
    def path(self) -> str:
        return f"{self.vendored_dir}/generated-chart-crds.{self.chart}.json"


# KServe's kserve-*-crd charts: each CRD is a template of its own.
_KSERVE_CRD_TEMPLATES = CrdFiles(
    "templates/serving.kserve.io_*.yaml", rendered_by="templates/*", marker="CustomResourceDefinition"
)


_LLMISVC_GIE_CRDS = (
    "inferencemodelrewrites.llm-d.ai",
    "inferenceobjectives.llm-d.ai",
    "inferencepools.inference.networking.k8s.io",
    "inferencepools.inference.networking.x-k8s.io",
)
_STORAGE_CONTAINERS = CrdFiles(
    "files/serving.kserve.io_clusterstoragecontainers.yaml",
    rendered_by="templates/serving.kserve.io_clusterstoragecontainers.yaml",
    marker='.Files.Get "files/serving.kserve.io_clusterstoragecontainers.yaml"',
    unless_owned=True,
)
_KARMADA_HOST = (Condition("installMode", "host"),)

CHART_CRDS: dict[str, ChartCrds] = {
    c.chart: c
    for c in (
        ChartCrds(
            "kserve-crd",
            "v0.20.0",
            KSERVE,
            "charts/kserve-crd",
            "kserve/v0.20.0",
            installs=(_KSERVE_CRD_TEMPLATES, _STORAGE_CONTAINERS),
        ),
        ChartCrds(
            "kserve-llmisvc-crd",
            "v0.20.0",
            KSERVE,
            "charts/kserve-llmisvc-crd",
            "kserve/v0.20.0",
            installs=(_KSERVE_CRD_TEMPLATES, _STORAGE_CONTAINERS),
        ),
        ChartCrds(
            "kserve-llmisvc-resources",
            "v0.20.0",
            KSERVE,
            "charts/kserve-llmisvc-resources",
            "kserve/v0.20.0",
            installs=(
                CrdFiles(
                    "files/llmisvc/resources.yaml",
                    rendered_by="templates/llmisvc/resources.yaml",
                    marker="if .Values.kserve.llmisvc.createGIECRDs",
                    when=(Condition("kserve.llmisvc.createGIECRDs"),),
                    names=_LLMISVC_GIE_CRDS,
                ),
            ),
        ),
        ChartCrds("kserve-resources", "v0.20.0", KSERVE, "charts/kserve-resources", "kserve/v0.20.0"),
        ChartCrds("kserve-runtime-configs", "v0.20.0", KSERVE, "charts/kserve-runtime-configs", "kserve/v0.20.0"),
        ChartCrds(
            "gateway-helm",
            "v1.9.0",
            ENVOY_GATEWAY,
            "charts/gateway-helm",
            "envoy-gateway/v1.9.0",
            # Helm applies a subchart's crds/ directory with the subchart, enabled by its dependency condition.
            installs=(
                CrdFiles(
                    "charts/crds/crds/**",
                    rendered_by="Chart.yaml",
                    marker="condition: crds.enabled",
                    when=(Condition("crds.enabled"),),
                ),
            ),
        ),
        ChartCrds(
            "ai-gateway-crds-helm",
            "v1.1.0",
            AI_GATEWAY,
            "manifests/charts/ai-gateway-crds-helm",
            "ai-gateway/v1.1.0",
            installs=(CrdFiles("templates/*.yaml", rendered_by="templates/*", marker="CustomResourceDefinition"),),
        ),
        ChartCrds("ai-gateway-helm", "v1.1.0", AI_GATEWAY, "manifests/charts/ai-gateway-helm", "ai-gateway/v1.1.0"),
        ChartCrds(
            "volcano",
            "1.15.1",
            VOLCANO,
            "installer/helm/chart/volcano",
            "volcano/v1.15.1",
            # templates/<group>_<version>_<kind>.yaml: `tpl ($.Files.Get (printf "crd/%s/<file>" (include
            # "crd_version" .)))`, and crd_version is `bases` on every server with apiextensions.k8s.io/v1.
            installs=(
                CrdFiles("crd/bases/*.yaml", rendered_by="templates/*", marker='printf "crd/%s/{name}"'),
                CrdFiles(
                    "charts/jobflow/crd/bases/*.yaml",
                    rendered_by="charts/jobflow/templates/*",
                    marker='printf "crd/%s/{name}"',
                ),
            ),
            ignored={
                "crd/v1beta1/*.yaml": "apiextensions.k8s.io/v1beta1 copies, rendered only where the server lacks v1",
                "charts/jobflow/crd/v1beta1/*.yaml": "apiextensions.k8s.io/v1beta1 copies (as above)",
            },
        ),
        ChartCrds(
            "fluid",
            "1.0.8",
            FLUID,
            "charts/fluid/fluid",
            "fluid/v1.0.8",
            installs=(CrdFiles("crds/*.yaml", rendered_by="Chart.yaml", marker="name: fluid"),),
        ),
        ChartCrds(
            "cert-manager",
            "v1.21.1",
            CERT_MANAGER,
            "deploy/charts/cert-manager",
            "cert-manager/v1.21.1",
            installs=(
                CrdFiles(
                    "templates/crd-*.yaml",
                    rendered_by="templates/crd-*",
                    marker="if or .Values.crds.enabled .Values.installCRDs",
                    when=(Condition("crds.enabled"), Condition("installCRDs")),
                ),
            ),
        ),
        ChartCrds(
            "keda",
            "2.20.2",
            KEDA_CHARTS,
            "keda",
            "keda/v2.20.2",
            installs=(
                CrdFiles(
                    "templates/crds/*.yaml",
                    rendered_by="templates/crds/*",
                    marker="if .Values.crds.install",
                    when=(Condition("crds.install"),),
                ),
            ),
        ),
        ChartCrds(
            "kube-prometheus-stack",
            "88.5.3",
            PROMETHEUS_CHARTS,
            "charts/kube-prometheus-stack",
            "kube-prometheus-stack/kube-prometheus-stack-88.5.3",
            installs=(
                CrdFiles(
                    "charts/crds/crds/*.yaml",
                    rendered_by="Chart.yaml",
                    marker="condition: crds.enabled",
                    when=(Condition("crds.enabled"),),
                ),
            ),
        ),
        ChartCrds(
            "karmada",
            "v1.18.2",
            KARMADA,
            "charts/karmada",
            "karmada/v1.18.2",
            # templates/pre-install-job.yaml (`if eq .Values.installMode "host"`) puts _crds/bases/** in a
            # ConfigMap its job applies to the Karmada API server.
            installs=(
                CrdFiles(
                    "_crds/bases/**",
                    rendered_by="templates/pre-install-job.yaml",
                    marker='.Files.Glob (printf "_crds/bases/{dir}/**")',
                    when=_KARMADA_HOST,
                ),
            ),
            ignored={
                "_crds/patches/*.yaml": "kustomize patches of two CRDs above (conversion webhook), not CRDs",
                "templates/_patch_webhook_in_*.tpl": "the same patches as templates",
            },
            served=(
                ServedApi(
                    "cluster.karmada.io",
                    "v1alpha1",
                    ("Cluster",),
                    rendered_by="templates/_karmada_apiservice.tpl",
                    types_file="pkg/apis/cluster/v1alpha1/types.go",
                    when=_KARMADA_HOST,
                ),
            ),
            target="karmada-api",
        ),
    )
}


_ACTION = re.compile(r"\{\{.*?\}\}")


class _Loader(yaml.SafeLoader):
    """YAML 1.1's `=` (the "value" type) as a plain string: a CRD may have `=` as an enum value."""


def _value_as_str(loader: _Loader, node: yaml.Node) -> str:
    return loader.construct_yaml_str(node)


_Loader.add_constructor("tag:yaml.org,2002:value", _value_as_str)


def _crd_documents(text: str) -> list[dict]:
    """The CRD documents of a chart file: template-only lines dropped, inline actions made plain strings."""
    if "kind: CustomResourceDefinition" not in text:
        return []
    plain = "\n".join(
        _ACTION.sub("templated", line) for line in text.splitlines() if not line.lstrip().startswith("{{")
    )
    docs = list(yaml.load_all(plain, Loader=_Loader))
    return [d for d in docs if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"]


def _matches(path: str, pattern: str) -> bool:
    if pattern.endswith("/**"):
        return path.startswith(pattern[:-2])
    return fnmatch.fnmatchcase(path, pattern) and path.count("/") == pattern.count("/")


def generate(spec: ChartCrds) -> tuple[str, str]:
    """(the vendored JSON text, the sha256 of the chart's file listing with each file's sha256)."""
    repo = spec.repo
    files = [PurePosixPath(f).relative_to(spec.directory).as_posix() for f in repo.files(spec.directory)]
    if "Chart.yaml" not in files:
        raise ValueError(f"{repo.repo}@{repo.ref}: no chart at {spec.directory}")
    text = {f: repo.read(f"{spec.directory}/{f}") for f in files}
    listing = "".join(f"{hashlib.sha256(text[f]).hexdigest()}  {f}\n" for f in files)
    crds, accounted = [], set()
    for rule in spec.installs:
        for f in (f for f in files if _matches(f, rule.glob)):
            docs = _crd_documents(text[f].decode(errors="replace"))
            marker = rule.marker.replace("{name}", PurePosixPath(f).name).replace("{dir}", PurePosixPath(f).parent.name)
            renderers = [g for g in files if _matches(g, rule.rendered_by) and marker in text[g].decode()]
            if docs and not renderers:
                raise ValueError(f"{spec.chart}: no {rule.rendered_by} renders {f} (looked for {marker!r})")
            for doc in docs:
                name = doc["metadata"]["name"]
                if rule.names and name not in rule.names:
                    continue
                accounted.add((f, name))
                crds.append(
                    {
                        "group": doc["spec"]["group"],
                        "kind": doc["spec"]["names"]["kind"],
                        "name": name,
                        "versions": [v["name"] for v in doc["spec"]["versions"] if v.get("served", True)],
                        "file": f,
                        "rendered_by": renderers[0],
                        "when": [{"path": c.path, "equals": c.equals} for c in rule.when],
                        "unless_owned_by_another_release": rule.unless_owned,
                    }
                )
    stray = [
        f"{f}: {d['metadata']['name']}"
        for f in files
        if not any(_matches(f, g) for g in spec.ignored)
        for d in _crd_documents(text[f].decode(errors="replace"))
        if (f, d["metadata"]["name"]) not in accounted
    ]
    if stray:
        raise ValueError(f"{spec.chart}: CRDs neither installed nor ignored by the spec: {stray}")
    served: list[dict[str, Any]] = []
    for api in spec.served:
        template, types = text[api.rendered_by].decode(), repo.read(api.types_file).decode()
        if f"{api.version}.{api.group}" not in template or "kind: APIService" not in template:
            raise ValueError(f"{spec.chart}: {api.rendered_by} has no APIService {api.version}.{api.group}")
        missing = [k for k in api.kinds if not re.search(rf"^type {k} struct", types, re.M)]
        if missing:
            raise ValueError(f"{spec.chart}: {api.types_file} declares no {missing}")
        served.extend(
            {
                "group": api.group,
                "kind": kind,
                "versions": [api.version],
                "rendered_by": api.rendered_by,
                "declared_in": api.types_file,
                "when": [{"path": c.path, "equals": c.equals} for c in api.when],
            }
            for kind in api.kinds
        )
    doc = {
        "description": f"The CRDs (and aggregated APIs) the {spec.chart} chart installs at {repo.repo}@{repo.ref}, "
        "derived from the chart's files by tools/upstream_origins.py (not an upstream file).",
        "chart": spec.chart,
        "version": spec.version,
        "directory": spec.directory,
        "target": spec.target,
        "crds": sorted(crds, key=lambda c: (c["group"], c["kind"])),
        "served": served,
        "ignored": spec.ignored,
    }
    return json.dumps(doc, indent=1, sort_keys=True) + "\n", hashlib.sha256(listing.encode()).hexdigest()


def provenance(repo: Repo, source: str) -> dict[str, str]:
    return {"repo": repo.repo, "ref": repo.ref, "source": source, "commit": repo.commit(), "license": LICENSE}


def origin_entries() -> dict[str, tuple[Repo, str]]:
    """Vendored path -> (repository, path in it) of every fact read from a repository, not the checkout."""
    out = {path: (c.repo, c.source) for path, c in COPIES.items()}
    out.update({c.path: (c.repo, c.directory) for c in CHART_CRDS.values()})
    return out


def raw(path: str) -> tuple[bytes, dict[str, str], str | None]:
    """(what to reduce, the provenance, the upstream sha256 when it is not that of the bytes) of a vendored path."""
    if path in COPIES:
        copy = COPIES[path]
        return copy.repo.read(copy.source), provenance(copy.repo, copy.source), None
    spec = next(c for c in CHART_CRDS.values() if c.path == path)
    text, listing = generate(spec)
    return text.encode(), provenance(spec.repo, spec.directory), listing
