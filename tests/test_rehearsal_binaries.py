"""The rehearsal's upstream binaries: each pinned once (tools/rehearsal/binaries.py) at the catalog's pin or as a
declared stand-in, each Go module agreeing with its table entry, and the build driver's cache and selection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from components.catalog import charts
from tests.harness import ENVIRONMENTS_DIR, cluster_objects, plan_for
from tests.test_serving_path import picker_flags, picker_problems, pickers
from tools.rehearsal import binaries, build, cache
from tools.rehearsal.binaries import UPSTREAMS, Binary, Upstream, ldflags, module_problems, needed, pin_problems

PROJECT_DIR = Path(__file__).resolve().parents[1]
# The etcd kubeadm pairs with each Kubernetes minor, by hand from
# k8s.io/kubernetes@v1.33.13:cmd/kubeadm/app/constants/constants.go:506 (SupportedEtcdVersion, 33: "3.5.24-0").
KUBEADM_ETCD = {"1.33": "3.5.24-0"}
# The upstreams whose pin is not served by the Go module proxy, so that another version stands in (README,
# "Rehearsal tools"): Volcano (volcano.sh/apis v1.15.0 refused), the endpoint picker (github.com/llm-d/llm-d-router
# refused; the Inference Extension's v1.5.0 picker, whose code moved there). The AI Gateway's v1.1.0 is refused too,
# and no served aigw can translate (tools/rehearsal/gateway.py): it is not built.
STAND_INS = {"volcano": "v1.14.1", "gateway-api-inference-extension": "v1.5.0"}


def kubernetes_minors() -> set[str]:
    minors = set()
    for env in ("dev", "prod"):
        config = yaml.safe_load((ENVIRONMENTS_DIR / f"Pulumi.{env}.yaml").read_text())["config"]
        minors |= {region["kubernetesVersion"] for region in config["inference-platform:regions"]}
    return minors


def catalog_pins(upstream_files) -> dict[str, str]:
    """Every pin the table's `stands_for` names, read from the catalog, the stack files and the vendored charts."""
    (minor,) = kubernetes_minors()
    karmada_values = yaml.safe_load((upstream_files.root / charts.CHARTS["karmada"].upstream_values).read_text())
    return {
        "kubernetesVersion": minor,
        "etcd": KUBEADM_ETCD[minor],
        "KARMADA_VERSION": charts.KARMADA_VERSION,
        "karmada apiServer.image.tag": karmada_values["apiServer"]["image"]["tag"],
        "karmada etcd.internal.image.tag": karmada_values["etcd"]["internal"]["image"]["tag"],
        "VOLCANO_IMAGE_TAG": charts.VOLCANO_IMAGE_TAG,
        "kserve-resources chart": charts.CHARTS["kserve-resources"].version,
        "ENDPOINT_PICKER_VERSION": charts.ENDPOINT_PICKER_VERSION,
        "ENVOY_GATEWAY_VERSION": charts.ENVOY_GATEWAY_VERSION,
        "KARMADA_KUBECTL_IMAGE": charts.KARMADA_KUBECTL_IMAGE["tag"],
    }


def test_every_pin_is_the_catalogs_or_a_declared_stand_in(upstream):
    pins = catalog_pins(upstream)
    assert kubernetes_minors() == {"1.33"}
    assert pin_problems(UPSTREAMS, pins) == []
    # Every catalog pin is stood for by some build, and only the rehearsal's own tools stand for none.
    assert {u.stands_for for u in UPSTREAMS} - {None} == set(pins)
    # kwok, helm: the rehearsal's own tools; llm-d-inference-sim: the endpoint the rollout SLO gate's test loads
    assert {u.module_dir for u in UPSTREAMS if u.stands_for is None} == {"kwok", "helm", "llm-d-inference-sim"}


def test_the_stand_ins_are_the_ones_the_module_proxy_forces(upstream):
    pins = catalog_pins(upstream)
    declared = {u.module_dir: u.version for u in UPSTREAMS if u.stand_in}
    assert declared == STAND_INS
    assert {u.module_dir: pins[u.stands_for] for u in UPSTREAMS if u.stand_in} == {
        "volcano": "v1.15.1",
        "gateway-api-inference-extension": "v0.9.0",
    }


@pytest.mark.plan
def test_the_pickers_stand_in_accepts_what_we_render_as_the_pin_does(upstream):
    """The v1.5.0 picker stands in for llm-d-router v0.9.0 (binaries.py stand_in) only because what we render is
    accepted by both: each picker's flags are flags of both releases (their generated flag lists), and its
    EndpointPickerConfig is in the apiVersion both decode: the only one v1.5.0 registers (gateway-api-inference-
    extension@v1.5.0:apix/config/v1alpha1), which v0.9.0 decodes as deprecated (llm-d/llm-d-router@v0.9.0:
    pkg/epp/config/loader/configloader.go L50-68)."""
    (stand_in,) = [u for u in UPSTREAMS if u.stands_for == "ENDPOINT_PICKER_VERSION"]
    both = {
        "pin": picker_flags(upstream, charts.EPP_IMAGE),
        "stand-in": {
            f["name"]: f
            for f in upstream.document(f"gateway-api-inference-extension/{stand_in.version}/generated-epp-flags.json")[
                "flags"
            ]
        },
    }
    for env in ("dev", "prod"):
        plan = plan_for(env)
        found = pickers(plan)
        assert found
        config_maps = cluster_objects(plan, "ConfigMap")
        for (cluster, name), container in found.items():
            assert {k: picker_problems(container["args"], f) for k, f in both.items()} == {
                "pin": [],
                "stand-in": [],
            }, (cluster, name)
            config = yaml.safe_load(config_maps[cluster, name]["data"]["default-plugins.yaml"])
            assert config["apiVersion"] == "inference.networking.x-k8s.io/v1alpha1", (cluster, name)
    # near variant: a flag only v0.9.0 has is refused by the stand-in
    assert picker_problems(["--pool-name", "p", "--grpc-max-recv-msg-size=1"], both["stand-in"]) == [
        "--grpc-max-recv-msg-size=1: unknown flag"
    ]
    assert picker_problems(["--pool-name", "p", "--grpc-max-recv-msg-size=1"], both["pin"]) == []


def test_karmadas_api_server_and_controller_manager_are_one_kubernetes():
    """One module builds the two, so the chart (charts/karmada/values.yaml) must pin them together."""
    values = yaml.safe_load(
        (PROJECT_DIR / "conformance/upstream" / charts.CHARTS["karmada"].upstream_values).read_text()
    )
    assert values["apiServer"]["image"]["tag"] == values["kubeControllerManager"]["image"]["tag"] == "v1.35.2"


def test_the_hooks_kubectl_is_the_one_of_their_image():
    """The karmada chart's hooks run in KARMADA_KUBECTL_IMAGE, alpine/k8s 1.34.1 (kubectl v1.34.1: README fact
    alpine-k8s-image-has-bash-and-kubectl): the rehearsal's kubectl is built at that version, by digest too."""
    assert charts.KARMADA_KUBECTL_IMAGE["repository"] == "alpine/k8s"
    assert charts.KARMADA_KUBECTL_IMAGE["tag"].startswith("1.34.1@sha256:")
    assert binaries.by_binary()["kubectl"].version == "v1.34.1"
    assert pin_problems([binaries.by_binary()["kubectl"]], {"KARMADA_KUBECTL_IMAGE": "1.35.0@sha256:" + "0" * 64})


PINS = {
    "KARMADA_VERSION": "v1.18.2",
    "kubernetesVersion": "1.33",
    "etcd": "3.5.24-0",
    "gie": "1.5.0",
    "kubectl": "1.34.1@sha256:" + "e" * 64,
}


def entry(module_dir="karmada", version="v1.18.2", stands_for="KARMADA_VERSION", stand_in="") -> Upstream:
    return Upstream(
        module_dir=module_dir,
        module=f"example.com/{module_dir}",
        version=version,
        stands_for=stands_for,
        binaries=(Binary(module_dir, f"example.com/{module_dir}/cmd"),),
        stand_in=stand_in,
    )


@pytest.mark.parametrize(
    "upstream",
    [
        entry(),
        entry("kubernetes", "v1.33.13", "kubernetesVersion"),  # any patch of the clusters' minor
        entry("etcd", "v3.5.24", "etcd"),  # an image tag's -0 build suffix is not part of the release
        entry("gie", "v1.5.0", "gie"),  # a chart appVersion without its v
        entry("kubectl", "v1.34.1", "kubectl"),  # an image tag pinned by its digest
        entry(version="v1.17.0", stand_in="v1.18.2 is not served"),  # a declared stand-in
        entry("kwok", "v0.8.0", None),  # the rehearsal's own tool: no catalog pin
    ],
    ids=lambda u: f"{u.module_dir}@{u.version}",
)
def test_a_build_at_its_pin_or_a_declared_stand_in_passes(upstream):
    assert pin_problems([upstream], PINS) == []


@pytest.mark.parametrize(
    ("upstream", "problem"),
    [
        (entry(version="v1.18.1"), "builds example.com/karmada@v1.18.1 but KARMADA_VERSION is v1.18.2"),
        (entry("kubernetes", "v1.34.1", "kubernetesVersion"), "but kubernetesVersion is 1.33"),
        (entry("kubernetes", "v1.3.3", "kubernetesVersion"), "but kubernetesVersion is 1.33"),
        (entry("etcd", "v3.5.25", "etcd"), "but etcd is 3.5.24-0"),
        (entry(stand_in="v1.18.2 is not served"), "declares a stand-in but builds KARMADA_VERSION's v1.18.2"),
        (entry(stands_for="KARMADA"), "stands for 'KARMADA', which no catalog pin names"),
    ],
    ids=["patch", "minor", "prefix-minor", "etcd", "stand-in-at-pin", "unknown-pin"],
)
def test_a_build_off_its_pin_without_a_stand_in_fails(upstream, problem):
    (found,) = pin_problems([upstream], PINS)
    assert problem in found


def test_every_module_agrees_with_its_table_entry_and_commits_nothing_upstream():
    module_dirs = {path.name for path in binaries.MODULES_DIR.iterdir() if path.is_dir()}
    assert module_dirs == {u.module_dir for u in UPSTREAMS}
    # keda's went (no chart source to run it with), ai-gateway's (no served aigw translates), kubectl's came, and
    # llm-d-inference-sim's (issue 36)
    assert len(UPSTREAMS) == 13
    for upstream in UPSTREAMS:
        files = {path.relative_to(upstream.path) for path in upstream.path.rglob("*") if path.is_file()}
        own = {path.relative_to(upstream.path) for binary in upstream.binaries for path in upstream.sources(binary)}
        # only the pins, and the files the table names of the project's own programs (helm's readycheck)
        assert files == {Path("go.mod"), Path("go.sum"), *own}, f"{upstream.module_dir}: only the pins are committed"
        for binary in upstream.binaries:
            # an own program is a main package of the module, in the directory of its files
            directories = {str(Path(name).parent) for name in binary.sources}
            packages = {f"inference-platform/rehearsal/{upstream.module_dir}/{d}" for d in directories}
            assert packages == ({binary.package} if binary.own else set()), binary.name
        go_mod, go_sum = (upstream.path / "go.mod").read_text(), (upstream.path / "go.sum").read_text()
        assert module_problems(upstream, go_mod, go_sum) == [], upstream.module_dir


def test_only_the_projects_own_programs_name_their_sources():
    with pytest.raises(ValueError, match="name their source files"):
        Binary("oracle", "inference-platform/rehearsal/helm/oracle")
    with pytest.raises(ValueError, match="name their source files"):
        Binary("helm", "helm.sh/helm/v3/cmd/helm", sources=("main.go",))


def test_the_binary_names_are_the_runners_interface():
    """The names tools/rehearsal/cache.binary_path() is asked for (issue 32's list), by hand."""
    assert sorted(binaries.by_binary()) == sorted(
        [
            *("kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd", "kwok", "helm", "helm-readycheck"),
            *("karmada-aggregated-apiserver", "karmada-controller-manager", "karmada-scheduler", "karmada-webhook"),
            *("karmada-agent", "karmada-apiserver", "karmada-kube-controller-manager", "karmada-etcd", "kubectl"),
            *("volcano-scheduler", "volcano-controller-manager", "volcano-webhook-manager"),
            *("kserve-manager", "kserve-llmisvc", "epp", "egctl", "envoy-gateway"),
            "llm-d-inference-sim",  # the rollout SLO gate's endpoint in the rehearsal tier (issue 36)
        ]
    )


KARMADA_GO_MOD = (binaries.MODULES_DIR / "karmada" / "go.mod").read_text()
KARMADA_GO_SUM = (binaries.MODULES_DIR / "karmada" / "go.sum").read_text()
KARMADA = next(u for u in UPSTREAMS if u.module_dir == "karmada")


@pytest.mark.parametrize(
    ("go_mod", "go_sum", "problem"),
    [
        (
            KARMADA_GO_MOD.replace("karmada v1.18.2", "karmada v1.18.1"),
            KARMADA_GO_SUM,
            "requires github.com/karmada-io/karmada v1.18.1; the table (tools/rehearsal/binaries.py) builds v1.18.2",
        ),
        (
            KARMADA_GO_MOD.replace("\tgithub.com/karmada-io/karmada/cmd/webhook\n", ""),
            KARMADA_GO_SUM,
            "no `tool github.com/karmada-io/karmada/cmd/webhook` directive",
        ),
        (
            KARMADA_GO_MOD.replace(
                "\tgithub.com/karmada-io/karmada/cmd/webhook\n",
                "\tgithub.com/karmada-io/karmada/cmd/webhook\n\tgithub.com/karmada-io/karmada/cmd/karmadactl\n",
            ),
            KARMADA_GO_SUM,
            "`tool github.com/karmada-io/karmada/cmd/karmadactl` builds no binary of the table",
        ),
        (
            KARMADA_GO_MOD + "\nreplace k8s.io/api => ./staging/src/k8s.io/api\n",
            KARMADA_GO_SUM,
            "replaces a module with the directory ./staging/src/k8s.io/api",
        ),
        (
            KARMADA_GO_MOD.replace("module inference-platform/rehearsal/karmada", "module example.com/karmada"),
            KARMADA_GO_SUM,
            "the module must be inference-platform/rehearsal/karmada",
        ),
        (
            KARMADA_GO_MOD,
            KARMADA_GO_SUM.replace(
                "github.com/karmada-io/karmada v1.18.2 h1:", "github.com/karmada-io/karmada v1.18.1 h1:"
            ),
            "go.sum has no checksum of github.com/karmada-io/karmada v1.18.2",
        ),
    ],
    ids=["version", "missing-tool", "extra-tool", "directory-replace", "module-name", "go.sum"],
)
def test_a_module_off_its_table_entry_is_named(go_mod, go_sum, problem):
    assert module_problems(KARMADA, KARMADA_GO_MOD, KARMADA_GO_SUM) == []
    (found,) = module_problems(KARMADA, go_mod, go_sum)
    assert problem in found


def test_a_comment_naming_a_directory_is_not_a_replace():
    """volcano's go.mod explains the upstream's `=> ./staging/...` it does not use."""
    volcano = next(u for u in UPSTREAMS if u.module_dir == "volcano")
    go_mod = (volcano.path / "go.mod").read_text()
    assert "./staging/src/volcano.sh/apis" in go_mod
    assert "volcano.sh/apis => volcano.sh/apis v1.14.0" in go_mod
    assert module_problems(volcano, go_mod, (volcano.path / "go.sum").read_text()) == []


def test_ldflags_stamp_versions_as_the_upstream_release_builds():
    kubernetes = next(u for u in UPSTREAMS if u.module_dir == "kubernetes")
    flags = ldflags(kubernetes, "2026-06-11T16:59:07Z").split(" ")
    # k8s.io/kubernetes@v1.33.13:hack/lib/version.sh: both version packages, gitVersion/gitMajor/gitMinor/buildDate
    for package in ("k8s.io/client-go/pkg/version", "k8s.io/component-base/version"):
        assert f"{package}.gitVersion=v1.33.13" in flags
        assert f"{package}.gitMajor=1" in flags
        assert f"{package}.gitMinor=33" in flags
        assert f"{package}.buildDate=2026-06-11T16:59:07Z" in flags
    kubectl = next(u for u in UPSTREAMS if u.module_dir == "kubectl")
    assert "-X k8s.io/component-base/version.gitVersion=v1.34.1" in ldflags(kubectl, "")
    etcd = next(u for u in UPSTREAMS if u.module_dir == "etcd")
    assert ldflags(etcd, "") == ""  # etcd's version is a constant of go.etcd.io/etcd/api/v3/version


# What each environment's rehearsal needs, by hand from Pulumi.<env>.yaml: dev has no federation, so no Karmada;
# prod federates (its hooks run kubectl). Both serve models on GPU pools (Volcano, KServe: serving.deploymentMode
# Standard) behind a gateway (Envoy Gateway, an endpoint picker per model); Volcano's admission-init hook runs a
# kubectl script, so both need kubectl.
ALL_MODULES = {u.module_dir for u in UPSTREAMS}
KARMADA_MODULES = {"karmada", "karmada-kubernetes", "karmada-etcd"}
NEEDED = {"dev": ALL_MODULES - KARMADA_MODULES, "prod": ALL_MODULES}


@pytest.mark.plan
@pytest.mark.parametrize("env", ["dev", "prod"])
def test_an_environment_builds_what_its_plan_deploys(env):
    charts_deployed, images = build.charts_and_images(plan_for(env))
    assert {u.module_dir for u in UPSTREAMS if needed(u, charts_deployed, images)} == NEEDED[env]


def test_need_is_by_chart_name_and_image_repository():
    karmada, epp = (
        next(u for u in UPSTREAMS if u.module_dir == name) for name in ("karmada", "gateway-api-inference-extension")
    )
    kubernetes = next(u for u in UPSTREAMS if u.module_dir == "kubernetes")
    assert needed(karmada, {"karmada"}, set())
    assert not needed(karmada, {"karmada-operator"}, set())
    assert needed(epp, set(), {"ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0"})
    assert not needed(epp, set(), {"ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.9.0"})
    assert needed(kubernetes, set(), set())  # the clusters themselves: every environment


GO_VERSION_M = """\
/cache/kube-apiserver: go1.26.8
\tpath\tk8s.io/kubernetes/cmd/kube-apiserver
\tmod\tk8s.io/kubernetes\tv1.33.13\th1:def=
\tdep\tk8s.io/api\tv0.0.0
\t=>\tk8s.io/api\tv0.33.13\th1:abc=
\tdep\tk8s.io/klog/v2\tv2.130.1\th1:ghi=
\tbuild\t-trimpath=true
"""


def test_build_info_names_the_versions_linked_replacements_included():
    toolchain, modules = build.parse_build_info(GO_VERSION_M)
    assert toolchain == "go1.26.8"
    # mod: the module of the main package (a tool built from a dependency); =>: the replacement actually linked
    assert modules == {"k8s.io/kubernetes": "v1.33.13", "k8s.io/api": "v0.33.13", "k8s.io/klog/v2": "v2.130.1"}


@pytest.fixture
def module_copy(tmp_path, monkeypatch) -> Upstream:
    """The etcd module's pins in a scratch directory, the table pointed at it."""
    modules = tmp_path / "modules"
    (modules / "etcd").mkdir(parents=True)
    for name in ("go.mod", "go.sum"):
        (modules / "etcd" / name).write_bytes((binaries.MODULES_DIR / "etcd" / name).read_bytes())
    monkeypatch.setattr(binaries, "MODULES_DIR", modules)
    return next(u for u in UPSTREAMS if u.module_dir == "etcd")


def test_a_binary_is_reused_only_while_its_pins_file_and_toolchain_are_unchanged(module_copy, tmp_path):
    (etcd,) = module_copy.binaries
    binary = tmp_path / "etcd"
    binary.write_bytes(b"etcd v3.5.24")
    key = build.build_key(module_copy, etcd, "go1.26.8")
    record = {"key": key, "sha256": build.sha256_of(binary)}
    assert build.is_current(record, key, binary)
    assert not build.is_current(None, key, binary)
    assert build.build_key(module_copy, etcd, "go1.26.9") != key  # another toolchain
    binary.write_bytes(b"etcd, changed by hand")
    assert not build.is_current(record, key, binary)  # the file is not what was built
    binary.write_bytes(b"etcd v3.5.24")
    go_sum = module_copy.path / "go.sum"
    go_sum.write_text(go_sum.read_text() + "example.com/x v1.0.0 h1:x=\n")
    assert build.build_key(module_copy, etcd, "go1.26.8") != key  # the pins changed
    assert not build.is_current(record, build.build_key(module_copy, etcd, "go1.26.8"), binary)


def test_versions_json_is_what_the_runner_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("INFERENCE_PLATFORM_CACHE", str(tmp_path))
    assert cache.built_versions() == {}
    record = {"module": "go.etcd.io/etcd/server/v3", "version": "v3.5.24", "go": "go1.26.8", "build_seconds": 7.6}
    build.write_versions({"etcd": record | {"sha256": "00"}})
    assert cache.built_versions() == {"etcd": record | {"sha256": "00"}}
    assert build.versions_path() == tmp_path / "rehearsal" / "versions.json"
    assert json.loads(build.versions_path().read_text())["etcd"]["version"] == "v3.5.24"
    assert [p.name for p in (tmp_path / "rehearsal").iterdir()] == ["versions.json"]  # no temporary file left


def test_a_toolchain_older_than_a_modules_go_line_is_refused():
    envoy_gateway = next(u for u in UPSTREAMS if u.module_dir == "envoy-gateway")
    build.check_toolchain([envoy_gateway], "go1.26.8")
    with pytest.raises(
        build.BuildInputError, match=r"envoy-gateway/go.mod needs Go 1.26.6 or newer \(found go1.26.5\)"
    ):
        build.check_toolchain([envoy_gateway], "go1.26.5")


def test_an_unknown_binary_is_one_line_and_exit_2(capsys):
    assert build.main(["--only", "kube-apiserverr"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: --only: no binary named kube-apiserverr; the binaries are egctl, envoy-gateway, epp")


def test_an_unknown_environment_is_named_and_exit_2(capsys):
    assert build.main(["--env", "no-such-environment"]) == 2  # a name no team keeps (a staging, say, it may)
    err = capsys.readouterr().err
    assert "Pulumi.no-such-environment.yaml" in err
    assert "Traceback" not in err


def test_only_selects_the_named_binaries_upstreams():
    selected = build.selected_upstreams(None, ["kube-apiserver", "karmada-agent", "etcd"], PROJECT_DIR)
    assert [u.module_dir for u in selected] == ["kubernetes", "etcd", "karmada"]
    assert [u.module_dir for u in build.selected_upstreams(None, [], PROJECT_DIR)] == [u.module_dir for u in UPSTREAMS]
