"""Where the rehearsal finds each pinned chart and manifest: inside the upstream Go modules at their tags, as the
module proxy serves them (`make rehearsal-tools` downloads them; nothing upstream is committed).

A chart the proxy does not serve at its pin is listed with the reason; its release is then reported as not
rehearsed, and the CRDs it installs come from the project's vendored copy (`conformance/upstream/`, reduced to
the kinds we render), so the objects of later releases still meet a real schema."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components.catalog.charts import CLUSTERPEDIA_CRDS, CLUSTERPEDIA_VERSION
from tools.plan.runner import PROJECT_DIR
from tools.rehearsal import cache

VENDORED = PROJECT_DIR / "conformance" / "upstream"
PARSED_CACHE_MIN_BYTES = 256 * 1024  # texts above this are parsed once and kept (load_all)


def module_cache() -> Path:
    if os.environ.get("GOMODCACHE"):
        return Path(os.environ["GOMODCACHE"])
    try:
        found = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        found = ""
    return Path(found) if found else Path(os.environ.get("GOPATH") or Path.home() / "go") / "pkg" / "mod"


def _escape(module: str) -> str:
    """The module cache's spelling of a path: an upper-case letter becomes `!` and its lower case."""
    return "".join(f"!{c.lower()}" if c.isupper() else c for c in module)


@dataclass(frozen=True)
class ModuleFiles:
    """A directory (or one file) of a Go module at a tag, in the module cache."""

    module: str
    version: str
    path: str

    @property
    def directory(self) -> Path:
        return module_cache() / f"{_escape(self.module)}@{self.version}" / self.path

    @property
    def source(self) -> str:
        return f"{self.module}@{self.version}:{self.path}"

    def missing(self) -> str | None:
        if self.directory.exists():
            return None
        return (
            f"{self.source} is not in the module cache ({module_cache()}): `make rehearsal-tools` downloads it "
            f"(or `go mod download {self.module}@{self.version}`)"
        )


@dataclass(frozen=True)
class ChartSource:
    """A pinned chart: its files in a Go module, or why there are none and which vendored CRDs stand in."""

    files: ModuleFiles | None
    unavailable: str = ""  # why no module holds the chart at its pin
    vendored_crds: tuple[str, ...] = ()  # conformance/upstream paths, for a chart without files
    crd_files: ModuleFiles | None = None  # where the chart's CRDs come from when its templates are elsewhere
    note: str = ""
    stands_in: str = ""  # for a chart without files: what takes the place of its controllers, or what goes unchecked


_K = "github.com/kserve/kserve"
_KSERVE = "v0.20.0"

# (chart name, pinned version) -> source. Chart names as the releases name them (the last path segment of an
# OCI reference).
CHART_SOURCES: dict[tuple[str, str], ChartSource] = {
    ("karmada", "v1.18.2"): ChartSource(ModuleFiles("github.com/karmada-io/karmada", "v1.18.2", "charts/karmada")),
    # components/catalog/charts.py: chart 1.15.0 with the v1.15.1 images is the v1.15.1 chart (only Chart.yaml
    # and the image tag differ), so the v1.15.1 tag's files are the chart.
    ("volcano", "1.15.0"): ChartSource(
        ModuleFiles("volcano.sh/volcano", "v1.15.1", "installer/helm/chart/volcano"),
        note="chart 1.15.0 is the v1.15.1 chart with the v1.15.1 images (components/catalog/charts.py)",
    ),
    ("kserve-crd", _KSERVE): ChartSource(ModuleFiles(_K, _KSERVE, "charts/kserve-crd")),
    ("kserve-resources", _KSERVE): ChartSource(ModuleFiles(_K, _KSERVE, "charts/kserve-resources")),
    ("kserve-llmisvc-crd", _KSERVE): ChartSource(ModuleFiles(_K, _KSERVE, "charts/kserve-llmisvc-crd")),
    ("kserve-llmisvc-resources", _KSERVE): ChartSource(ModuleFiles(_K, _KSERVE, "charts/kserve-llmisvc-resources")),
    ("kserve-runtime-configs", _KSERVE): ChartSource(ModuleFiles(_K, _KSERVE, "charts/kserve-runtime-configs")),
    ("gateway-helm", "v1.9.0"): ChartSource(
        ModuleFiles("github.com/envoyproxy/gateway", "v1.9.0", "charts/gateway-helm")
    ),
    ("cert-manager", "v1.21.1"): ChartSource(
        ModuleFiles("github.com/cert-manager/cert-manager", "v1.21.1", "deploy/charts/cert-manager")
    ),
    ("fluid", "1.0.8"): ChartSource(ModuleFiles("github.com/fluid-cloudnative/fluid", "v1.0.8", "charts/fluid/fluid")),
    ("ai-gateway-crds-helm", "v1.1.0"): ChartSource(
        None,
        unavailable="the module proxy refuses github.com/envoyproxy/ai-gateway@v1.1.0 (403)",
        stands_in="the AI Gateway objects are checked against these schemas only",
        vendored_crds=(
            "ai-gateway/v1.1.0/aigateway.envoyproxy.io_aigatewayroutes.yaml",
            "ai-gateway/v1.1.0/aigateway.envoyproxy.io_aiservicebackends.yaml",
            "ai-gateway/v1.1.0/aigateway.envoyproxy.io_backendsecuritypolicies.yaml",
        ),
    ),
    ("ai-gateway-helm", "v1.1.0"): ChartSource(
        None,
        unavailable="the module proxy refuses github.com/envoyproxy/ai-gateway@v1.1.0 (403)",
        stands_in="no AI Gateway controller runs: AIGatewayRoutes are not translated (egctl translates the Envoy "
        "Gateway objects)",
    ),
    ("gpu-operator", "v26.7.0"): ChartSource(
        None,
        unavailable="github.com/NVIDIA/gpu-operator has no module version v26.7.0 (the proxy answers 403: a major "
        "version above 1 needs a /v26 module path, which the repository does not declare)",
        vendored_crds=("gpu-operator/v26.7.0/nvidia.com_clusterpolicies.yaml",),
        stands_in="its operands' work is stood in for by the kwok nodes: GPU pools advertise the device plugin's "
        "resources (whole GPUs, MIG slices, time-slice shares) and the feature-discovery labels "
        "(tools/rehearsal/nodes.py); its operands' DaemonSet pods are not on the nodes, and at the pin they request "
        "nothing (every operand's `resources: {}`, conformance/upstream/gpu-operator/v26.7.0/"
        "chart-gpu-operator.values.yaml), so they take no room the scheduler counts",
    ),
    # kedacore/charts is not a Go module; the chart's CRDs are keda's own at the chart's appVersion.
    ("keda", "2.20.2"): ChartSource(
        None,
        unavailable="the keda chart lives in kedacore/charts, which is not a Go module",
        crd_files=ModuleFiles("github.com/kedacore/keda/v2", "v2.20.2", "config/crd/bases"),
        stands_in="no KEDA operator or metrics server runs: ScaledObjects are checked against their schema, "
        "nothing scales",
    ),
    # prometheus-community/helm-charts is not a Go module; its crds subchart carries the operator's CRDs at the
    # chart's appVersion (v0.93.1: conformance/upstream/kube-prometheus-stack/*/Chart.yaml).
    ("kube-prometheus-stack", "88.5.3"): ChartSource(
        None,
        unavailable="prometheus-community/helm-charts is not a Go module",
        crd_files=ModuleFiles(
            "github.com/prometheus-operator/prometheus-operator", "v0.93.1", "example/prometheus-operator-crd"
        ),
        stands_in="no Prometheus, operator or Grafana runs: monitors and rules are checked against their schemas; "
        "its node exporter's DaemonSet pods are not on the nodes (their requests at the pin are not vendored)",
    ),
    ("cluster-autoscaler", "9.59.0"): ChartSource(
        None,
        unavailable="the chart is in kubernetes/autoscaler's charts/, outside the cluster-autoscaler module",
        stands_in="every pool's nodes are there at its maxSize from the start, as kwok nodes (tools/rehearsal/"
        "nodes.py): what the autoscaler could reach, not when",
    ),
    ("aws-efa-k8s-device-plugin", "v0.5.30"): ChartSource(
        None,
        unavailable="aws/eks-charts is not a Go module",
        stands_in="the kwok nodes of EFA pools advertise vpc.amazonaws.com/efa as the plugin counts interfaces "
        "(tools/rehearsal/nodes.py); the plugin's DaemonSet pods are not on the nodes: each requests 10m CPU and "
        "20Mi at the pin (conformance/upstream/aws-efa-k8s-device-plugin/v0.0.242/"
        "chart-aws-efa-k8s-device-plugin.values.yaml `resources`), room the scheduled check does not take",
    ),
    ("dcgm-exporter", "4.8.2"): ChartSource(
        None,
        unavailable="NVIDIA/dcgm-exporter's tags (4.5.3-4.8.2) are not module versions",
        stands_in="nothing: no GPU metrics are exported (there is no GPU to read); its DaemonSet pods are not on the "
        "nodes: each requests 100m CPU and 128Mi at the pin (conformance/upstream/dcgm-exporter/4.5.3-4.8.2/"
        "chart-dcgm-exporter.values.yaml `resources`), room the scheduled check does not take",
    ),
}

# kubernetes:yaml/v2:ConfigFile URLs (no Go module serves them at their tag) -> (the vendored, reduced copy in
# conformance/upstream that stands in, why): the run declares each as a limit.
VENDORED_CONFIG_FILES: dict[str, tuple[str, str]] = {
    url: (
        f"clusterpedia/{CLUSTERPEDIA_VERSION}/{url.rsplit('/', 1)[1]}",
        f"the module proxy refuses github.com/clusterpedia-io/clusterpedia@{CLUSTERPEDIA_VERSION} (403)",
    )
    for url in CLUSTERPEDIA_CRDS
}


# CRDs a cloud installs in its clusters: GKE serves networking.gke.io's multi-networking kinds on clusters with
# enableMultiNetworking (its API is GoogleCloudPlatform/gke-networking-api; the version our vendored schemas
# were taken at).
CLOUD_CRDS: dict[str, ModuleFiles] = {
    "gke-multi-networking": ModuleFiles("github.com/GoogleCloudPlatform/gke-networking-api", "v0.2.0", "config/crds"),
}


def chart_key(chart: str, version: str) -> tuple[str, str]:
    """A release's `chart` (a name in a repository, or an OCI reference) and version -> CHART_SOURCES' key."""
    return chart.rstrip("/").rsplit("/", 1)[-1], version


def yaml_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml"))


# libyaml's loader where PyYAML was built with it: CRDs run to megabytes.
class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]  # a base chosen at run time
    """YAML 1.1's `=` (the `value` type, which PyYAML's safe loader refuses) is a plain string to Kubernetes:
    prometheus-operator's CRDs list it among enum values."""


_Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))


def load_all(text: str) -> list[dict[str, Any]]:
    """Every object of a multi-document manifest (empty documents and lists' `items` flattened). A large text (CRDs
    run to megabytes, whose objects PyYAML builds in Python even with libyaml) is parsed once per machine: its
    objects are kept as JSON in the cache, named by the text's digest."""
    if len(text) < PARSED_CACHE_MIN_BYTES:
        return _load_all(text)
    path = cache.cache_dir() / "rehearsal" / "parsed" / f"{hashlib.sha256(text.encode()).hexdigest()}.json"
    with contextlib.suppress(OSError, ValueError):
        return json.loads(path.read_text())
    docs = _load_all(text)
    with contextlib.suppress(OSError, TypeError, ValueError):  # a value JSON cannot hold (a YAML date) is not kept
        encoded = json.dumps(docs)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        partial.write_text(encoded)
        partial.replace(path)
    return docs


def _load_all(text: str) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for doc in yaml.load_all(text, Loader=_Loader):
        if isinstance(doc, dict) and doc.get("kind", "").endswith("List") and "items" in doc:
            docs += [d for d in doc["items"] if isinstance(d, dict)]
        elif isinstance(doc, dict) and doc.get("kind"):
            docs.append(doc)
    return docs


def load_files(path: Path) -> list[dict[str, Any]]:
    """The objects of a file, or of every YAML file of a directory."""
    paths = [path] if path.is_file() else yaml_files(path)
    return [doc for file in paths for doc in load_all(file.read_text())]


def module_sources() -> list[ModuleFiles]:
    """Every module file set the rehearsal reads (charts, CRDs, manifests, scripts, kwok's stages): what `make rehearsal-tools`
    downloads into the module cache beside the binaries' modules."""
    from tools.rehearsal.kubelet import IMAGE_SCRIPTS  # the kubelet and kwok import this module
    from tools.rehearsal.kwok import STAGES

    found = [f for source in CHART_SOURCES.values() for f in (source.files, source.crd_files) if f is not None]
    found += list(CLOUD_CRDS.values())
    found += [files for scripts in IMAGE_SCRIPTS.values() for files, _tools in scripts.values()]
    found += STAGES
    return found
