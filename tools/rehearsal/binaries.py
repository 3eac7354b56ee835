"""The upstream binaries the rehearsal runs, each pinned once here: which Go module, at which version, stamped as
the upstream's release build stamps it, and which catalog pin it stands for.

Each upstream is its own project-written Go module under `tools/rehearsal/modules/<module_dir>/` (go.mod + go.sum
committed, nothing upstream): one module per upstream, because minimal version selection over a single module would
force one k8s.io/client-go on all of them. A binary's name is the interface with the runner
(`tools.rehearsal.cache.binary_path(name)`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

MODULES_DIR = Path(__file__).parent / "modules"


# The Go module path prefix of the modules under MODULES_DIR: a main package under it is the project's own program
# (an oracle that runs an upstream's code on the tests' cases), its source beside the module's go.mod.
OWN_MODULES = "inference-platform/rehearsal/"


@dataclass(frozen=True)
class Binary:
    name: str  # the file under tools.rehearsal.cache.bin_dir(): what the runner starts
    package: str  # the Go main package
    version_args: tuple[str, ...] = ("--version",)  # () when the binary has no version flag or subcommand
    # The project's own program: its files, relative to the module's directory (each named here, so that nothing
    # else is committed beside the pins); () for an upstream's.
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.own != bool(self.sources):
            raise ValueError(f"{self.name}: the project's own programs (and only they) name their source files")

    @property
    def own(self) -> bool:
        """Whether the program is the project's own (built from its source here), not the upstream's."""
        return self.package.startswith(OWN_MODULES)


@dataclass(frozen=True)
class Upstream:
    module_dir: str  # tools/rehearsal/modules/<module_dir>
    module: str  # the upstream Go module
    version: str  # the version built (what go.mod requires)
    # The catalog pin this build is for (a key of the pins the tests read from the catalog and stack files); None
    # for the rehearsal's own tools, which the platform does not deploy.
    stands_for: str | None
    binaries: tuple[Binary, ...]
    # -X flags as the upstream's release build sets them; {version}, {major}, {minor} (of `version`) and {date}
    # (the module's commit time from the module proxy) are filled in. The proxy gives no commit hash, so the
    # upstreams' gitCommit-like variables stay at their defaults.
    ldflags: tuple[str, ...] = ()
    # Why `version` is not the pin it stands for, with the evidence; "" when it is the pin.
    stand_in: str = ""
    # When the rehearsal of an environment needs it: the chart names of its Helm releases, or the image
    # repositories its objects run; neither: every environment (the clusters themselves, the SLO gate's simulator).
    charts: tuple[str, ...] = ()
    images: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return MODULES_DIR / self.module_dir

    def sources(self, binary: Binary) -> list[Path]:
        """The files of one of the project's own programs (none for an upstream's)."""
        return [self.path / name for name in binary.sources]


def _kubernetes_ldflags() -> tuple[str, ...]:
    """k8s.io/kubernetes@v1.33.13:hack/lib/version.sh kube::version::ldflags (the same at v1.35.2)."""
    values = {"gitVersion": "{version}", "gitMajor": "{major}", "gitMinor": "{minor}", "buildDate": "{date}"}
    values["gitTreeState"] = "clean"
    return tuple(
        f"-X {package}.{key}={value}"
        for key, value in values.items()
        for package in ("k8s.io/client-go/pkg/version", "k8s.io/component-base/version")
    )


KARMADA = "github.com/karmada-io/karmada"
VERSION_COMMAND = ("version",)  # a `version` subcommand (karmada@v1.18.2:pkg/version/sharedcommand)
UPSTREAMS: tuple[Upstream, ...] = (
    Upstream(
        module_dir="kubernetes",
        module="k8s.io/kubernetes",
        version="v1.33.13",
        stands_for="kubernetesVersion",
        binaries=(
            Binary("kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver"),
            Binary("kube-controller-manager", "k8s.io/kubernetes/cmd/kube-controller-manager"),
            Binary("kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler"),
        ),
        ldflags=_kubernetes_ldflags(),
    ),
    Upstream(
        module_dir="etcd",
        module="go.etcd.io/etcd/server/v3",
        version="v3.5.24",
        stands_for="etcd",
        binaries=(Binary("etcd", "go.etcd.io/etcd/server/v3"),),  # its version is compiled in (api/v3/version)
    ),
    Upstream(
        module_dir="kwok",
        module="sigs.k8s.io/kwok",
        version="v0.8.0",
        stands_for=None,  # simulated nodes: the newest kwok the module proxy serves
        binaries=(Binary("kwok", "sigs.k8s.io/kwok/cmd/kwok"),),
        ldflags=("-X sigs.k8s.io/kwok/pkg/consts.Version={version}",),  # kwok@v0.8.0:hack/releases.sh
    ),
    Upstream(
        module_dir="helm",
        module="helm.sh/helm/v3",
        version="v3.20.2",
        stands_for=None,  # renders the pinned charts as the Pulumi Kubernetes provider would
        binaries=(
            Binary("helm", "helm.sh/helm/v3/cmd/helm", ("version", "--short")),
            # Helm's own ReadyChecker on the cases of tests/helm_wait_cases.py (make rehearsal-test).
            Binary("helm-readycheck", f"{OWN_MODULES}helm/readycheck", (), sources=("readycheck/main.go",)),
        ),
        # helm@v3.20.2:Makefile LDFLAGS; the default kube version of `helm template` is the client-go it is built
        # with (k8s.io/client-go v0.35.1: 1.35), as its release build stamps it.
        ldflags=(
            "-X helm.sh/helm/v3/internal/version.version={version}",
            "-X helm.sh/helm/v3/internal/version.metadata=",
            "-X helm.sh/helm/v3/internal/version.gitTreeState=clean",
            "-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1",
            "-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=35",
            "-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1",
            "-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=35",
        ),
    ),
    Upstream(
        module_dir="karmada",
        module=KARMADA,
        version="v1.18.2",
        stands_for="KARMADA_VERSION",
        binaries=(
            Binary("karmada-aggregated-apiserver", f"{KARMADA}/cmd/aggregated-apiserver", VERSION_COMMAND),
            Binary("karmada-controller-manager", f"{KARMADA}/cmd/controller-manager", VERSION_COMMAND),
            Binary("karmada-scheduler", f"{KARMADA}/cmd/scheduler", VERSION_COMMAND),
            Binary("karmada-webhook", f"{KARMADA}/cmd/webhook", VERSION_COMMAND),
            Binary("karmada-agent", f"{KARMADA}/cmd/agent", VERSION_COMMAND),
        ),
        # karmada@v1.18.2:hack/util.sh util::version_ldflags
        ldflags=(
            f"-X {KARMADA}/pkg/version.gitVersion={{version}}",
            f"-X {KARMADA}/pkg/version.gitTreeState=clean",
            f"-X {KARMADA}/pkg/version.buildDate={{date}}",
        ),
        charts=("karmada",),
    ),
    Upstream(
        module_dir="karmada-kubernetes",
        module="k8s.io/kubernetes",
        version="v1.35.2",
        stands_for="karmada apiServer.image.tag",
        binaries=(
            Binary("karmada-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver"),
            Binary("karmada-kube-controller-manager", "k8s.io/kubernetes/cmd/kube-controller-manager"),
        ),
        ldflags=_kubernetes_ldflags(),
        charts=("karmada",),
    ),
    Upstream(
        module_dir="kubectl",
        module="k8s.io/kubernetes",
        version="v1.34.1",
        # The karmada chart's hook and init containers run kubectl scripts in KARMADA_KUBECTL_IMAGE
        # (docker.io/alpine/k8s:1.34.1, whose kubectl is v1.34.1); the volcano chart's admission-init hook Job runs
        # its image's gen-admission-secret.sh, which calls kubectl (tools/rehearsal/kubelet.py IMAGE_SCRIPTS).
        stands_for="KARMADA_KUBECTL_IMAGE",
        binaries=(Binary("kubectl", "k8s.io/kubernetes/cmd/kubectl", ("version", "--client")),),
        ldflags=_kubernetes_ldflags(),
        charts=("karmada", "volcano"),
    ),
    Upstream(
        module_dir="karmada-etcd",
        module="go.etcd.io/etcd/server/v3",
        version="v3.6.6",
        stands_for="karmada etcd.internal.image.tag",
        binaries=(Binary("karmada-etcd", "go.etcd.io/etcd/server/v3"),),
        charts=("karmada",),
    ),
    Upstream(
        module_dir="volcano",
        module="volcano.sh/volcano",
        version="v1.14.1",
        stands_for="VOLCANO_IMAGE_TAG",
        binaries=(
            Binary("volcano-scheduler", "volcano.sh/volcano/cmd/scheduler"),
            Binary("volcano-controller-manager", "volcano.sh/volcano/cmd/controller-manager"),
            Binary("volcano-webhook-manager", "volcano.sh/volcano/cmd/webhook-manager"),
        ),
        # volcano@v1.14.1:Makefile.def LD_FLAGS
        ldflags=(
            "-X volcano.sh/volcano/pkg/version.Version={version}",
            "-X volcano.sh/volcano/pkg/version.Built={date}",
        ),
        stand_in=(
            "v1.15.1 cannot be built from the module proxy: volcano.sh/volcano@v1.15.1 takes its CRD types from "
            "`volcano.sh/apis => ./staging/src/volcano.sh/apis`, a nested module its zip does not carry, and the "
            "published volcano.sh/apis with that tree (v1.15.0: go.mod 5e64e44c, pkg/ 928e5827, the blobs of "
            "volcano-sh/volcano@v1.15.1:staging/src/volcano.sh/apis) is refused (403), as are v1.14.1-v1.14.3. "
            "v1.14.1 is the newest Volcano whose types are served: its staging tree is volcano.sh/apis v1.14.0's."
        ),
        charts=("volcano",),
    ),
    Upstream(
        module_dir="kserve",
        module="github.com/kserve/kserve",
        version="v0.20.0",
        stands_for="kserve-resources chart",
        binaries=(
            # No version flag and no version variable (kserve@v0.20.0:Makefile builds with plain `go build`).
            Binary("kserve-manager", "github.com/kserve/kserve/cmd/manager", ()),
            Binary("kserve-llmisvc", "github.com/kserve/kserve/cmd/llmisvc", ()),
        ),
        charts=("kserve-resources",),
    ),
    Upstream(
        module_dir="gateway-api-inference-extension",
        module="sigs.k8s.io/gateway-api-inference-extension",
        version="v1.5.0",
        stands_for="ENDPOINT_PICKER_VERSION",
        # No version flag; the build ref is logged at start (gateway-api-inference-extension@v1.5.0:Dockerfile).
        binaries=(Binary("epp", "sigs.k8s.io/gateway-api-inference-extension/cmd/epp", ()),),
        ldflags=("-X sigs.k8s.io/gateway-api-inference-extension/version.BuildRef={version}",),
        stand_in=(
            "llm-d-router v0.9.0 cannot be built from the module proxy: github.com/llm-d/llm-d-router (the module "
            "its go.mod declares at v0.9.0, the only path) and its dependency github.com/llm-d/llm-d-kv-cache are "
            "refused (403). The Inference Extension's v1.5.0 picker, the code v0.9.0 was moved from, stands in for "
            "what both accept: every flag we render is a flag of both (tests/test_rehearsal_binaries.py), and the "
            "EndpointPickerConfig we render is in the apiVersion both decode (inference.networking.x-k8s.io/"
            "v1alpha1, deprecated but decoded by v0.9.0: llm-d/llm-d-router@v0.9.0:pkg/epp/config/loader/"
            "configloader.go L50-68), with plugin types and fields of both (make upgrade-check, docs/upstream.md). "
            "It does not read the objectives (llm-d.ai's; v1.5.0 reads only inference.networking.x-k8s.io's) and "
            "runs none of v0.9.0's own code; KServe's LLMInferenceService picker, whose config names v0.9.0-only "
            "plugins, is not run by it (tools/rehearsal/kubelet.py STAND_IN_CONTAINERS)."
        ),
        images=("ghcr.io/llm-d/llm-d-router-endpoint-picker",),
    ),
    Upstream(
        module_dir="envoy-gateway",
        module="github.com/envoyproxy/gateway",
        version="v1.9.0",
        stands_for="ENVOY_GATEWAY_VERSION",
        binaries=(
            Binary("egctl", "github.com/envoyproxy/gateway/cmd/egctl", ("version", "--remote=false")),
            # The chart's certgen hook Job runs `envoy-gateway certgen` (charts/gateway-helm/templates/certgen.yaml):
            # the Secrets it makes are mounted by the controller's pods.
            Binary("envoy-gateway", "github.com/envoyproxy/gateway/cmd/envoy-gateway", ("version",)),
        ),
        # envoyproxy/gateway@v1.9.0:tools/make/golang.mk GO_LDFLAGS
        ldflags=("-X github.com/envoyproxy/gateway/internal/cmd/version.envoyGatewayVersion={version}",),
        charts=("gateway-helm",),
    ),
    Upstream(
        module_dir="llm-d-inference-sim",
        module="github.com/llm-d/llm-d-inference-sim",
        version="v0.10.2",
        # Not deployed: the OpenAI-compatible endpoint (vLLM's API, set latencies) the rollout SLO gate's load test is
        # run against in the rehearsal tier (tests/test_rollout_slo_simulator.py); every environment's tier runs it.
        stands_for=None,
        # No version flag or variable (llm-d-inference-sim@v0.10.2:Makefile L75: `CGO_ENABLED=0 go build`, no -ldflags).
        binaries=(Binary("llm-d-inference-sim", "github.com/llm-d/llm-d-inference-sim/cmd/llm-d-inference-sim", ()),),
    ),
)


def by_binary() -> dict[str, Upstream]:
    return {binary.name: upstream for upstream in UPSTREAMS for binary in upstream.binaries}


def ldflags(upstream: Upstream, date: str) -> str:
    """The -ldflags value for `upstream`, its version and commit time filled in."""
    match = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)", upstream.version)
    if match is None:
        raise ValueError(f"{upstream.module_dir}: not a release version: {upstream.version!r}")
    major, minor, patch = match.groups()
    fields = {"version": upstream.version, "major": major, "minor": minor, "patch": patch, "date": date}
    return " ".join(flag.format(**fields) for flag in upstream.ldflags)


def needed(upstream: Upstream, charts: Iterable[str], images: Iterable[str]) -> bool:
    """Whether an environment whose plan installs `charts` (chart names) and runs `images` needs `upstream`."""
    if not upstream.charts and not upstream.images:
        return True
    repositories = {image.rsplit(":", 1)[0] for image in images}
    return bool(set(upstream.charts) & set(charts)) or bool(set(upstream.images) & repositories)


def _release(version: str) -> tuple[int, ...]:
    """v1.33.13 / 1.33 / 3.5.24-0 (an image tag's build suffix) / 1.34.1@sha256:... (a tag with its digest) ->
    (1, 33, 13) / (1, 33) / (3, 5, 24) / (1, 34, 1)."""
    match = re.fullmatch(r"v?(\d+(?:\.\d+)*)(?:-\d+)?(?:@sha256:[0-9a-f]{64})?", version)
    if match is None:
        raise ValueError(f"not a release version: {version!r}")
    return tuple(int(part) for part in match.group(1).split("."))


def pin_problems(upstreams: Iterable[Upstream], pins: Mapping[str, str]) -> list[str]:
    """Where the table disagrees with the catalog: a build that is not its pin without saying why, a stand-in
    declared for a build that is its pin, or a pin nobody reads. A pin given as major.minor (the regions'
    kubernetesVersion) is met by any patch of that minor."""
    problems = []
    for upstream in upstreams:
        if upstream.stands_for is None:
            continue
        if upstream.stands_for not in pins:
            problems.append(f"{upstream.module_dir}: stands for {upstream.stands_for!r}, which no catalog pin names")
            continue
        pin = _release(pins[upstream.stands_for])
        is_pin = _release(upstream.version)[: len(pin)] == pin
        if not is_pin and not upstream.stand_in:
            problems.append(
                f"{upstream.module_dir}: builds {upstream.module}@{upstream.version} but {upstream.stands_for} is "
                f"{pins[upstream.stands_for]}; build the pin or declare why a stand-in is built (stand_in)"
            )
        if is_pin and upstream.stand_in:
            problems.append(
                f"{upstream.module_dir}: declares a stand-in but builds {upstream.stands_for}'s "
                f"{pins[upstream.stands_for]}; drop stand_in"
            )
    return problems


def module_problems(upstream: Upstream, go_mod: str, go_sum: str) -> list[str]:
    """Where a module's go.mod / go.sum disagree with its table entry, or would commit upstream code."""
    where = f"tools/rehearsal/modules/{upstream.module_dir}"
    problems = []
    go_mod = re.sub(r"[ \t]*//.*", "", go_mod)  # comments (module paths never hold //)
    declared = re.search(r"^module (\S+)$", go_mod, re.M)
    if declared is None or declared.group(1) != f"inference-platform/rehearsal/{upstream.module_dir}":
        problems.append(f"{where}/go.mod: the module must be inference-platform/rehearsal/{upstream.module_dir}")
    requires = dict(re.findall(r"^(?:require\s+|\t)(\S+) (v\S+)$", go_mod, re.M))
    if requires.get(upstream.module) != upstream.version:
        problems.append(
            f"{where}/go.mod requires {upstream.module} {requires.get(upstream.module, '(nothing)')}; the table "
            f"(tools/rehearsal/binaries.py) builds {upstream.version}: make them one"
        )
    tools = set(re.findall(r"^tool ([^\s(]+)$", go_mod, re.M))
    block = re.search(r"^tool \(\n(.*?)^\)", go_mod, re.M | re.S)
    if block:
        tools.update(line.strip() for line in block.group(1).splitlines() if line.strip())
    packages = {binary.package for binary in upstream.binaries if not binary.own}
    for package in sorted(packages - tools):
        problems.append(f"{where}/go.mod: no `tool {package}` directive for the binary the table builds from it")
    for package in sorted(tools - packages):
        problems.append(f"{where}/go.mod: `tool {package}` builds no binary of the table; remove it")
    for local in re.findall(r"=>\s*(\.\.?/\S*)", go_mod):
        problems.append(
            f"{where}/go.mod replaces a module with the directory {local}: nothing upstream is committed, "
            "replace it with a published version"
        )
    if f"{upstream.module} {upstream.version} h1:" not in go_sum:
        problems.append(f"{where}/go.sum has no checksum of {upstream.module} {upstream.version}: run go mod tidy")
    return problems
