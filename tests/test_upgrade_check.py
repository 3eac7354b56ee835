"""`make upgrade-check`: the diff between pinned facts and a new release, read from hand-made releases
(tests/fixtures/upgrade/) against hand-made pinned facts, and what --apply writes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tools import upstream_origins
from tools.upgrade import __main__ as upgrade
from tools.upgrade import diff, go_config, go_flags, go_metrics, sources, vllm_metrics
from tools.upgrade.components import COMPONENTS, Component

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "upgrade"


def line_of(path: str, text: str) -> str:
    """`path:line` of the one line of the project's file containing `text` (found by hand, not by the tool)."""
    (number,) = [n for n, line in enumerate((ROOT / path).read_text().splitlines(), 1) if text in line]
    return f"{path}:{number}"


def _arg(name: str, dest: str, action: str = "_StoreAction", kind: str | None = "int", choices=None) -> dict:
    return {
        "action": action,
        "choices": choices,
        "default": None,
        "dest": dest,
        "name": name,
        "nargs": 0 if action == "BooleanOptionalAction" else None,
        "option_strings": [f"--{name}"] + ([f"--no-{name}"] if action == "BooleanOptionalAction" else []),
        "type": kind,
    }


def pin(vendored: Path, files: dict[str, object], repo: str, select: dict[str, list[str]] | None = None) -> None:
    """Hand-made pinned facts: each file written under `vendored` with a MANIFEST entry."""
    entries = []
    for path, content in files.items():
        text = content if isinstance(content, str) else json.dumps(content, indent=1, sort_keys=True) + "\n"
        (vendored / path).parent.mkdir(parents=True, exist_ok=True)
        (vendored / path).write_text(text)
        source = Path(path).name.split(".", 1)[-1] if path.count("chart-") else Path(path).name
        entry = {"path": path, "repo": repo, "ref": path.split("/")[1], "source": source, "license": "Apache-2.0"}
        entries.append({**entry, **({"select": select[path]} if select and path in select else {})})
    (vendored / "MANIFEST.json").write_text(json.dumps({"files": entries}))


@pytest.fixture(autouse=True)
def _no_network(tmp_path, monkeypatch):
    """No test reaches a public source: git fetches go to a folder that does not exist, into a scratch cache."""
    monkeypatch.setenv("UPSTREAM_GIT_URL", f"file://{tmp_path}/no-remote/{{repo}}.git")
    monkeypatch.delenv("UPSTREAM_MIRRORS", raising=False)
    monkeypatch.setattr(upstream_origins, "GIT_CACHE", tmp_path / "cache")


@pytest.fixture
def vendored(tmp_path, monkeypatch):
    directory = tmp_path / "upstream"
    directory.mkdir()
    monkeypatch.setattr(upgrade, "VENDORED_DIR", directory)
    return directory


def run(capsys, *argv: str) -> tuple[int, str]:
    code = upgrade.main(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


VLLM_PINNED = {
    "vllm/v0.98.0/generated-vllm-serve-args.json": {
        "args": [
            {**_arg("model_tag", "model_tag", kind="str"), "option_strings": []},
            _arg("max-model-len", "max_model_len"),
            _arg("max-num-seqs", "max_num_seqs"),
            _arg("enforce-eager", "enforce_eager", "BooleanOptionalAction", None),
            _arg("dtype", "dtype", kind="str", choices=["auto", "bfloat16", "float16"]),
            _arg("enable-prefix-caching", "enable_prefix_caching", "BooleanOptionalAction", None),
        ]
    },
    "vllm/v0.98.0/generated-prometheus-metrics.json": {
        "metrics": [
            {"name": "vllm:num_requests_running", "type": "gauge"},
            {"name": "vllm:num_requests_waiting", "type": "gauge"},
        ]
    },
}


def test_vllm_release_diff_names_what_the_platform_renders(vendored, capsys):
    pin(vendored, VLLM_PINNED, "vllm-project/vllm")
    code, out = run(capsys, "vllm", "0.99.0", "--from", str(FIXTURES / "vllm-0.99.0"))
    assert code == 1, out
    assert "vllm: vllm-project/vllm@v0.98.0 -> vllm-project/vllm@v0.99.0" in out
    assert "  flags added (2):\n    --new-flag\n    --no-new-flag\n" in out
    assert "  flags removed (2):\n    --enforce-eager\n    --no-enforce-eager\n" in out
    assert (
        "  flags renamed (3):\n    --enable-prefix-caching -> --disable-prefix-caching, --prefix-caching\n"
        "    --max-num-seqs -> --max-sequences\n"
        "    --no-enable-prefix-caching -> --disable-prefix-caching, --prefix-caching\n"
    ) in out
    assert "    --dtype: choices -['float16'] +[]\n" in out
    assert "  metrics added (1):\n    vllm:admission_rejections\n" in out
    assert "  metrics removed (1):\n    vllm:num_requests_waiting\n" in out
    breaking = out.split("BREAKING (5): what the platform renders or reads that v0.99.0 changes:\n")[1].splitlines()
    assert breaking == [
        "  metric vllm:num_requests_waiting is removed by the new release; read at "
        + line_of("components/catalog/metrics.py", 'Metric("vllm:num_requests_waiting"'),
        # an option string of a kept destination gone: the one the platform renders
        "  --enable-prefix-caching is now --disable-prefix-caching, --prefix-caching; rendered at "
        + ", ".join(
            [
                line_of("components/catalog/engines.py", '"enable-prefix-caching": "nothing: prefix caching'),
                line_of("components/serving/engine.py", '"--enable-prefix-caching",'),
            ]
        ),
        # removed: offered to models as a switch (components/catalog/engines.py VLLM_FLAGS.tunable)
        "  --enforce-eager is removed by the new release; rendered at "
        + line_of("components/catalog/engines.py", '"enforce-eager": "switch"'),
        # renamed: derived from config and rendered on every vLLM command line
        "  --max-num-seqs is now --max-sequences; rendered at "
        + ", ".join(
            [
                line_of("components/catalog/engines.py", '"max-num-seqs": "maxNumSeqs"'),
                line_of("components/serving/engine.py", 'f"--max-num-seqs={request.max_num_seqs}"'),
            ]
        ),
        "  --dtype no longer takes 'float16'; rendered at "
        + line_of("components/serving/engine.py", '"fp16": ("--dtype", "float16")'),
        "nothing written (APPLY=1 re-vendors, re-pins and runs the tests)",
    ]


def test_a_release_with_nothing_the_platform_uses_removed_is_not_breaking(vendored, capsys):
    pinned = json.loads(json.dumps(VLLM_PINNED))
    args = pinned["vllm/v0.98.0/generated-vllm-serve-args.json"]["args"]
    args[2] = _arg("max-sequences", "max_num_seqs")
    args[3:] = [
        _arg("dtype", "dtype", kind="str", choices=["auto", "bfloat16"]),
        _arg("unused-flag", "unused"),
        {
            **_arg("prefix-caching", "enable_prefix_caching", "_StoreTrueAction", None),
            "option_strings": ["--prefix-caching"],
        },
    ]
    pinned["vllm/v0.98.0/generated-prometheus-metrics.json"]["metrics"][1]["name"] = "vllm:admission_rejections"
    pin(vendored, pinned, "vllm-project/vllm")
    code, out = run(capsys, "vllm", "v0.99.0", "--from", str(FIXTURES / "vllm-0.99.0"))
    assert code == 0, out
    assert "  flags removed (1):\n    --unused-flag\n" in out
    assert "BREAKING" not in out


PICKER_PINNED = {
    "gateway-api-inference-extension/v1.5.0/generated-epp-flags.json": {
        "flags": [
            {"name": "grpc-port", "type": "int", "default": 9002},
            {"name": "pool-name", "type": "string", "default": ""},
            {"name": "pool-group", "type": "string", "default": "inference.networking.k8s.io"},
            {"name": "metrics-port", "type": "int", "default": 9090},
            {"name": "tracing", "type": "bool", "default": True},
            {"name": "zap-devel", "type": "bool"},
            {"name": "zap-encoder", "type": "value"},
        ]
    },
    "gateway-api-inference-extension/v1.5.0/inference.networking.x-k8s.io_inferenceobjectives.yaml": """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: inferenceobjectives.inference.networking.x-k8s.io}
spec:
  group: inference.networking.x-k8s.io
  names: {kind: InferenceObjective, plural: inferenceobjectives}
  scope: Namespaced
  versions:
  - name: v1alpha2
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              priority: {type: integer}
              poolRef: {type: object, properties: {name: {type: string}, group: {type: string}}}
""",
}


def _picker_before_its_move() -> Component:
    """The picker as the Inference Extension's, with a home it moves to (the real one has moved: llm-d-router)."""
    moved = {
        "inference.networking.x-k8s.io_inferenceobjectives.yaml": "config/crd/bases/example.dev_inferenceobjectives.yaml"
    }
    return Component(
        **{
            **vars(COMPONENTS["endpoint-picker"]),
            "repo": "kubernetes-sigs/gateway-api-inference-extension",
            "directory": "gateway-api-inference-extension",
            "homes": {"example/router": ("router", moved)},
        }
    )


def test_picker_moving_home_diffs_its_go_flags_and_its_crd_by_schema_path(vendored, capsys, monkeypatch):
    pin(
        vendored,
        PICKER_PINNED,
        "kubernetes-sigs/gateway-api-inference-extension",
        {
            "gateway-api-inference-extension/v1.5.0/inference.networking.x-k8s.io_inferenceobjectives.yaml": [
                "inference.networking.x-k8s.io/v1alpha2/InferenceObjective"
            ]
        },
    )
    monkeypatch.setitem(COMPONENTS, "endpoint-picker", _picker_before_its_move())
    code, out = run(
        capsys,
        "endpoint-picker",
        "example/router@v9.9.0",
        "--from",
        str(FIXTURES / "picker-v9.9.0"),
        "--pinned-from",
        str(FIXTURES / "picker-v1.0.0"),
    )
    assert code == 1, out
    assert "endpoint-picker: kubernetes-sigs/gateway-api-inference-extension@v1.5.0 -> example/router@v9.9.0" in out
    assert "  flags added (1):\n    --grpc-max-recv-msg-size\n" in out
    assert "  flags removed (1):\n    --pool-group\n" in out
    assert "    --metrics-port: now refused when set\n" in out
    assert "    --tracing: now deprecated (configure tracing in the EndpointPickerConfig)\n" in out
    # the CRD: read at its new path, its kind found in the new group, compared by schema path (status ignored)
    assert "  InferenceObjective v1alpha2 fields added (1):\n    spec.poolRef.kind\n" in out
    assert "  InferenceObjective v1alpha2 fields removed (1):\n    spec.poolRef.group\n" in out
    rendered = "components/serving/inference_pool.py"
    assert "  --pool-group is removed by the new release; rendered at " + line_of(rendered, '"--pool-group",') in out
    assert "  --tracing" not in out.split("BREAKING")[1]  # deprecated, still accepted: not breaking
    assert (
        "  inference.networking.x-k8s.io/v1alpha2/InferenceObjective: the new release serves InferenceObjective in "
        "group example.dev, not inference.networking.x-k8s.io"
    ) in out
    # the EndpointPickerConfig, derived from both releases alike: its JSON paths and the plugin types registered
    config = out.split("EndpointPickerConfig (derived from v1.5.0 and v9.9.0 alike):\n")[1].split("BREAKING")[0]
    assert config.splitlines() == [
        "  api versions added (1):",
        "    example.dev/v1alpha1",
        "  api versions removed (1):",
        "    inference.networking.x-k8s.io/v1alpha1",
        "  config fields added (3):",
        "    flowControl.requestTTL",
        "    requestHandler",
        "    requestHandler.parsers[]",
        "  config fields removed (1):",
        "    flowControl.defaultRequestTTL",
        "  plugin types added (1):",
        "    load-aware-scorer",
        "  plugin types removed (1):",
        "    queue-scorer",
    ]
    rendered = "components/serving/inference_pool.py"
    assert (
        "  config field flowControl.defaultRequestTTL is removed by the new release; rendered at "
        + line_of(rendered, '"defaultRequestTTL"')
    ) in out
    assert (
        "  plugin type queue-scorer is removed by the new release; rendered at "
        + line_of(rendered, 'SCORER_WEIGHTS = {"queue-scorer"')
    ) in out
    assert "metrics-data-source" not in config  # registered by both
    assert (
        "  EndpointPickerConfig apiVersion inference.networking.x-k8s.io/v1alpha1 is not one the new release decodes "
        "(example.dev/v1alpha1); rendered at "
        + line_of(rendered, '"apiVersion": "inference.networking.x-k8s.io/v1alpha1"')
    ) in out


def test_apply_of_a_home_move_vendors_what_the_new_home_carries_and_keeps_the_rest(vendored, capsys, monkeypatch):
    """The files read at the new home go to its directory (a moved CRD named after its new file), their old copies
    go; a file the new home does not carry stays with the old repository; the pin (a new constant) is left to the
    hand that re-pins, and nothing of the project is written."""
    pool_crd = "gateway-api-inference-extension/v1.5.0/inference.networking.k8s.io_inferencepools.yaml"
    pin(
        vendored,
        {**PICKER_PINNED, pool_crd: "kind: CustomResourceDefinition\n"},
        "kubernetes-sigs/gateway-api-inference-extension",
        {
            "gateway-api-inference-extension/v1.5.0/inference.networking.x-k8s.io_inferenceobjectives.yaml": [
                "inference.networking.x-k8s.io/v1alpha2/InferenceObjective"
            ]
        },
    )
    monkeypatch.setitem(COMPONENTS, "endpoint-picker", Component(**{**vars(_picker_before_its_move()), "tests": ()}))
    monkeypatch.setattr(upgrade, "PROJECT_DIR", vendored / "no-project")
    argv = ["endpoint-picker", "example/router@v9.9.0", "--from", str(FIXTURES / "picker-v9.9.0")]
    code, out = run(capsys, *argv, "--pinned-from", str(FIXTURES / "picker-v1.0.0"), "--apply")
    assert code == 0, out
    entries = {e["path"]: e for e in json.loads((vendored / "MANIFEST.json").read_text())["files"]}
    assert sorted(entries) == [
        pool_crd,
        "router/v9.9.0/example.dev_inferenceobjectives.yaml",
        "router/v9.9.0/generated-epp-flags.json",
    ]
    assert sorted(str(p.relative_to(vendored)) for p in vendored.rglob("*") if p.is_file()) == [
        "MANIFEST.json",
        pool_crd,
        "router/v9.9.0/example.dev_inferenceobjectives.yaml",
        "router/v9.9.0/generated-epp-flags.json",
    ]
    crd = entries["router/v9.9.0/example.dev_inferenceobjectives.yaml"]
    assert (crd["repo"], crd["ref"], crd["generator"]) == ("example/router", "v9.9.0", "tools.upgrade")
    assert crd["select"] == ["example.dev/v1alpha2/InferenceObjective"]
    assert f"kept (not carried by example/router): {pool_crd}" in out
    assert "next, by hand: pin endpoint-picker to example/router@v9.9.0" in out
    assert not (vendored / "no-project").exists()


def test_chart_values_and_crd_fields(vendored, capsys):
    pin(
        vendored,
        {
            "widget/1.0.0/chart-widget.Chart.yaml": "apiVersion: v2\nname: widget\nversion: 1.0.0\nappVersion: v1.0.0\n",
            "widget/1.0.0/chart-widget.values.yaml": "replicas: 1\nimage: {repository: example.com/widget, tag: v1}\n"
            "podSecurityContext: {runAsNonRoot: true}\n",
            "widget/1.0.0/example.com_widgets.yaml": PICKER_PINNED[
                "gateway-api-inference-extension/v1.5.0/inference.networking.x-k8s.io_inferenceobjectives.yaml"
            ]
            .replace("inference.networking.x-k8s.io", "example.com")
            .replace("InferenceObjective", "Widget")
            .replace("inferenceobjectives", "widgets")
            .replace("v1alpha2", "v1"),
        },
        "example/widget",
        {"widget/1.0.0/example.com_widgets.yaml": ["example.com/v1/Widget"]},
    )
    manifest = json.loads((vendored / "MANIFEST.json").read_text())
    for entry, source in zip(
        manifest["files"],
        ("charts/widget/Chart.yaml", "charts/widget/values.yaml", "charts/widget/crds/example.com_widgets.yaml"),
        strict=True,
    ):
        entry["source"] = source
    (vendored / "MANIFEST.json").write_text(json.dumps(manifest))
    code, out = run(capsys, "widget", "2.0.0", "--from", str(FIXTURES / "chart-2.0.0"))
    assert code == 0, out
    assert "  version: 1.0.0 -> 2.0.0\n  appVersion: v1.0.0 -> v2.0.0\n" in out
    assert "  chart values added (2):\n    image.digest\n    resources\n" in out
    assert "  chart values removed (1):\n    podSecurityContext.runAsNonRoot\n" in out
    assert "  Widget v1 fields added (3):\n    spec.size\n    spec.zones\n    spec.zones[]\n" in out
    assert (
        "  Widget v1 fields removed (4):\n    spec.poolRef\n    spec.poolRef.group\n    spec.poolRef.name\n"
        "    spec.priority\n"
    ) in out


def test_apply_vendors_the_new_release_and_moves_the_pin(vendored, capsys, monkeypatch, tmp_path):
    pinned = json.loads(json.dumps(VLLM_PINNED))
    pinned["vllm/v0.98.0/generated-vllm-serve-args.json"]["args"] = [
        _arg("max-model-len", "max_model_len"),
        _arg("max-sequences", "max_num_seqs"),
    ]
    pinned["vllm/v0.98.0/generated-prometheus-metrics.json"]["metrics"] = []
    pin(vendored, pinned, "vllm-project/vllm")
    project = tmp_path / "project"
    (project / "components/catalog").mkdir(parents=True)
    (project / "components/catalog/engines.py").write_text('VLLM_VERSION = "v0.98.0"\n')
    monkeypatch.setattr(upgrade, "PROJECT_DIR", project)
    monkeypatch.setitem(COMPONENTS, "vllm", Component(**{**vars(COMPONENTS["vllm"]), "tests": ()}))
    code, out = run(capsys, "vllm", "0.99.0", "--from", str(FIXTURES / "vllm-0.99.0"), "--apply")
    assert code == 0, out
    assert (project / "components/catalog/engines.py").read_text() == 'VLLM_VERSION = "v0.99.0"\n'
    assert not (vendored / "vllm/v0.98.0").exists()
    entries = {e["path"]: e for e in json.loads((vendored / "MANIFEST.json").read_text())["files"]}
    assert sorted(entries) == [
        "vllm/v0.99.0/generated-prometheus-metrics.json",
        "vllm/v0.99.0/generated-vllm-serve-args.json",
    ]
    args = entries["vllm/v0.99.0/generated-vllm-serve-args.json"]
    assert (args["repo"], args["ref"], args["generator"]) == ("vllm-project/vllm", "v0.99.0", "tools.upgrade")
    dumped = json.loads((vendored / "vllm/v0.99.0/generated-vllm-serve-args.json").read_text())
    assert [a["name"] for a in dumped["args"]] == [
        "model_tag",
        "max-model-len",
        "max-sequences",
        "dtype",
        "new-flag",
        "prefix-caching",
    ]
    assert dumped["args"][4]["option_strings"] == ["--new-flag", "--no-new-flag"]
    # a host without a GPU: the dump tells the platform the image's device (vllm/config/device.py needs one)
    assert dumped["meta"]["platform_used"] == "UnspecifiedPlatform(device_type='cuda', forced)"


def test_bad_input_is_one_line_and_exit_2(vendored, capsys):
    pin(vendored, VLLM_PINNED, "vllm-project/vllm")
    assert run(capsys, "vlm", "1.0")[0] == 2
    code, out = run(capsys, "vllm", "0.99.0", "--from", str(FIXTURES / "missing"))
    assert (code, out.strip().splitlines()) == (2, [f"error: FROM={FIXTURES / 'missing'}: no such folder"])
    code, out = run(capsys, "vllm", "0.98.0", "--from", str(FIXTURES / "vllm-0.99.0"))
    assert (code, out.strip()) == (2, "error: TO=0.98.0: vllm is already pinned at v0.98.0")


# --- the generators -------------------------------------------------------------------------------------------


def test_go_flags_reads_registrations_defaults_deprecations_and_refusals():
    tree = FIXTURES / "picker-v9.9.0"
    files = {
        "options.go": (tree / "pkg/epp/server/options.go").read_text(),
        "zap.go": (tree / "vendor/sigs.k8s.io/controller-runtime/pkg/log/zap/zap.go").read_text(),
    }
    flags = {f["name"]: f for f in go_flags.generate(files)}
    assert sorted(flags) == [
        "grpc-max-recv-msg-size",
        "grpc-port",
        "metrics-port",
        "pool-name",
        "tracing",
        "zap-devel",
        "zap-encoder",
    ]
    assert flags["grpc-port"] | {"source": ""} == {
        "name": "grpc-port", "type": "int", "options_field": "GRPCPort", "default": 9002, "source": ""
    }  # fmt: skip
    assert flags["pool-name"]["default"] == ""  # not in NewOptions: Go's zero value
    # another package's constant: kept as written, and no `default` to compare
    assert flags["grpc-max-recv-msg-size"]["default_expression"] == "limits.DefaultRecvSize"
    assert "default" not in flags["grpc-max-recv-msg-size"]
    assert flags["metrics-port"]["rejected_if_set"] is True
    assert "rejected_if_set" not in flags["grpc-port"]
    assert flags["tracing"]["deprecated"] == "configure tracing in the EndpointPickerConfig"
    assert (flags["zap-encoder"]["type"], flags["zap-devel"]["type"]) == ("value", "bool")


GO_METRICS = """\
package metrics

const (
	poolComponent = "inference_pool"
	// PoolSubsystem is the legacy subsystem.
	PoolSubsystem = poolComponent
	newSubsystem  = "llm_d_epp"
)

var (
	// Deprecated: Use llm_d_epp_ready_endpoints instead.
	readyPods = prometheus.NewGaugeVec(
		prometheus.GaugeOpts{
			Subsystem: PoolSubsystem,
			Name:      "ready_pods",
			Help:      metricsutil.HelpMsgWithStability("[Deprecated: Use llm_d_epp_ready_endpoints] Ready pods.", ALPHA),
		},
		poolLabels,
	)
	readyEndpoints = prometheus.NewGaugeVec(
		prometheus.GaugeOpts{
			Subsystem: newSubsystem,
			Name:      "ready_endpoints",
			Help:      "Ready endpoints.",
		},
		poolLabels,
	)
	streams = prometheus.NewHistogram(
		prometheus.HistogramOpts{
			Namespace: "router",
			Name:      "stream_duration_seconds",
			Buckets: []float64{
				0.1, 1,
			},
		},
	)
	perEndpoint = prometheus.NewDesc("llm_d_epp_per_endpoint_queue_size", "help", []string{"name"}, nil)
)
"""


def test_plugin_types_include_default_producers_and_constants_set_to_another_packages():
    """Shapes of llm-d-router v0.9.0's runner (a hand-made fixture, its README): the producers registered
    with `RegisterAsDefaultProducer`, whose type constants are set to a constant of a `constants/` package, are plugin
    types. Our prefix-cache-scorer needs approx-prefix-cache-producer (the picker creates it when no config names
    it), which needs token-producer. Registrations of packages the fixture lacks resolve to nothing."""
    root = FIXTURES / "llm-d-router-v0.9.0"

    def package(directory: str) -> list[str]:
        return [p.read_text() for p in sorted((root / directory).glob("*.go"))]

    types = go_config.plugin_types(
        (root / "cmd/epp/runner/runner.go").read_text(), "github.com/llm-d/llm-d-router", package
    )
    assert types == [
        "approx-prefix-cache-producer",
        "inflight-load-producer",
        "predicted-latency-producer",
        "token-producer",
        "tokenizer",
    ]


def test_plugin_types_are_every_register_call_of_the_registry_and_nothing_else():
    """v0.10.0's forms (`RegisterDeprecated`, `RegisterWithPluginDependencies`, ...) are calls on the registry the
    runner calls `Register` on; another package's `Register*` (feature gates, gRPC servers) registers no type."""
    runner = """import (
\tfwkplugin "example.dev/r/pkg/plugin"
\t"example.dev/r/pkg/loader"
\t"example.dev/r/pkg/disagg"
)
\tfwkplugin.Register(disagg.A, fwkplugin.StabilityBeta, disagg.F)
\tfwkplugin.RegisterDeprecatedWithPluginDependencies(disagg.B, fwkplugin.StabilityBeta, disagg.F,
\t\tdisagg.P, "v0.7.0", "v0.9.0", disagg.A)
\tloader.RegisterFeatureGate(disagg.Gate, true)
"""
    constants = 'const (\n\tA = "a-handler"\n\tB = "b-handler"\n\tGate = "gate"\n)\n'
    types = go_config.plugin_types(runner, "example.dev/r", lambda d: [constants] if d == "pkg/disagg" else [])
    assert types == ["a-handler", "b-handler"]


def test_the_rendered_picker_config_api_version_is_one_v0_9_0_decodes():
    """llm-d-router v0.9.0 decodes the EndpointPickerConfig in its own group and, deprecated, in the Inference
    Extension's (pkg/epp/config/loader/configloader.go L50-64), which we render: not breaking; a release decoding
    only its own group would be."""
    root = FIXTURES / "llm-d-router-v0.9.0"
    files = [p.read_text() for d in ("apix/config/v1alpha1", "pkg/epp/config/loader") for p in (root / d).glob("*.go")]
    accepted = go_config.api_versions(files, "EndpointPickerConfig")
    assert accepted == ["inference.networking.x-k8s.io/v1alpha1", "llm-d.ai/v1alpha1"]
    rendered = ("components/serving/inference_pool.py",)
    report = diff.Report("EndpointPickerConfig")
    diff.api_versions("EndpointPickerConfig", accepted, rendered, report)
    assert report.breaking == []
    diff.api_versions("EndpointPickerConfig", ["llm-d.ai/v1alpha1"], rendered, report)
    assert report.breaking == [
        "EndpointPickerConfig apiVersion inference.networking.x-k8s.io/v1alpha1 is not one the new release decodes "
        "(llm-d.ai/v1alpha1); rendered at "
        + line_of(rendered[0], '"apiVersion": "inference.networking.x-k8s.io/v1alpha1"')
    ]
    with pytest.raises(ValueError, match="no AddKnownTypes of EndpointPickerConfig"):
        go_config.api_versions(files[:0], "EndpointPickerConfig")


def test_go_metrics_joins_names_through_constants_and_reads_deprecations():
    assert go_metrics.generate([GO_METRICS]) == [
        {"name": "inference_pool_ready_pods", "type": "gauge", "deprecated_for": "llm_d_epp_ready_endpoints"},
        {"name": "llm_d_epp_per_endpoint_queue_size", "type": "collector"},
        {"name": "llm_d_epp_ready_endpoints", "type": "gauge"},
        {"name": "router_stream_duration_seconds", "type": "histogram"},
    ]
    with pytest.raises(ValueError, match="unknownConst"):
        go_metrics.generate([GO_METRICS.replace("Subsystem: newSubsystem", "Subsystem: unknownConst")])


def test_metrics_diff_names_the_deprecated_ones_the_platform_reads():
    """A metric the catalog reads (components/catalog/metrics.py) newly deprecated is listed with its successor and
    where it is read, not breaking; removed, it is breaking."""
    old = {"metrics": [{"name": "inference_pool_ready_pods", "type": "gauge"}]}
    new = {"metrics": [{"name": "inference_pool_ready_pods", "type": "gauge", "deprecated_for": "llm_d_epp_ready"}]}
    report = diff.Report("m")
    diff.metrics(old, new, report)
    read_at = line_of("components/catalog/metrics.py", '"inference_pool_ready_pods"')
    assert report.lines == [
        "  metrics now deprecated (1):",
        "    inference_pool_ready_pods (use llm_d_epp_ready)",
        "  deprecated metrics the platform reads (not breaking yet) (1):",
        f"    inference_pool_ready_pods -> llm_d_epp_ready: read at {read_at}",
    ]
    assert report.breaking == []
    report = diff.Report("m")
    diff.metrics(old, {"metrics": []}, report)
    assert report.breaking == [f"metric inference_pool_ready_pods is removed by the new release; read at {read_at}"]


def test_vllm_metrics_walk_resolves_names_through_constants():
    metrics = vllm_metrics.generate(FIXTURES / "vllm-0.99.0")
    assert [(m["name"], m["type"], m["exposed_as"]) for m in metrics] == [
        ("vllm:admission_rejections", "counter", ["vllm:admission_rejections_total"]),
        ("vllm:num_requests_running", "gauge", ["vllm:num_requests_running"]),
    ]
    assert vllm_metrics.exposed_as("vllm:x_total", "counter") == ["vllm:x_total"]  # prometheus_client: not doubled


def test_apply_refuses_a_release_not_read_whole_and_writes_nothing(vendored, capsys, monkeypatch, tmp_path):
    """A pinned file the new release did not give (a copied file at a path the fixture lacks) stops --apply before
    anything is written: the pin, the vendored files and the manifest stay as they were."""
    pinned = {**VLLM_PINNED, "vllm/v0.98.0/docs-metrics.yaml": "metrics: [vllm:num_requests_running]\n"}
    pin(vendored, pinned, "vllm-project/vllm")
    manifest = (vendored / "MANIFEST.json").read_text()
    project = tmp_path / "project"
    (project / "components/catalog").mkdir(parents=True)
    (project / "components/catalog/engines.py").write_text('VLLM_VERSION = "v0.98.0"\n')
    monkeypatch.setattr(upgrade, "PROJECT_DIR", project)
    code, out = run(capsys, "vllm", "0.99.0", "--from", str(FIXTURES / "vllm-0.99.0"), "--apply")
    assert code == 2
    assert "note: docs-metrics.yaml: docs-metrics.yaml: not in the local folder" in out
    assert "error: --apply needs every file of v0.98.0 read at v0.99.0; not read: docs-metrics.yaml" in out
    assert (project / "components/catalog/engines.py").read_text() == 'VLLM_VERSION = "v0.98.0"\n'
    assert (vendored / "MANIFEST.json").read_text() == manifest
    assert not (vendored / "vllm/v0.99.0").exists()


# --- where a release is read from ----------------------------------------------------------------------------


def _bare_repo(where: Path, files: dict[str, str], tag: str) -> str:
    """A bare repository at `where` whose tag `tag` holds `files`; its commit."""
    work = where.with_suffix(".work")

    def git(*args: str, cwd: Path = work) -> str:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()

    work.mkdir(parents=True)
    git("init", "-q")
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", tag)
    git("tag", tag)
    git("init", "-q", "--bare", str(where), cwd=where.parent)
    git("push", "-q", str(where), f"refs/tags/{tag}")
    return git("rev-parse", f"{tag}^{{commit}}")


def test_a_go_module_is_read_from_the_module_proxy_first(tmp_path, monkeypatch):
    """A repository that is a Go module: `go mod download` (the user's GOPROXY) first; git only when it fails."""
    tried = []

    def proxy(module, version, timeout):
        tried.append(f"proxy {module}@{version}")
        if module.endswith("refused"):
            raise upstream_origins.OriginUnavailable(f"go mod download {module}@{version}: 403 Forbidden")
        return {"Dir": str(tmp_path), "Origin": {"Hash": "c0ffee"}}

    def git(repo, ref):
        tried.append(f"git {repo}@{ref}")
        raise upstream_origins.OriginUnavailable(f"git fetch https://example/{repo} {ref}: unreachable")

    monkeypatch.setattr(sources, "go_mod_download", proxy)
    monkeypatch.setattr(sources, "git_dir", git)
    tree = sources.repository("owner/name", "v1.0.0", "example.dev/name")
    assert (tree.root, tree.commit, tried) == (tmp_path, "c0ffee", ["proxy example.dev/name@v1.0.0"])
    tried.clear()
    with pytest.raises(sources.SourceError):
        sources.repository("owner/name", "v1.0.0", "example.dev/refused")
    assert tried == ["proxy example.dev/refused@v1.0.0", "git owner/name@v1.0.0"]
    tried.clear()
    with pytest.raises(sources.SourceError):
        sources.repository("owner/name", "v1.0.0")  # not a Go module: git only
    assert tried == ["git owner/name@v1.0.0"]


def test_a_repository_is_fetched_by_its_tag_into_the_cache_and_read_with_git(tmp_path, monkeypatch):
    """Not a Go module: the tag is fetched from the repository's URL (here a file:// one) into build/upgrade/mirrors/
    once; the next run reads the cache without the remote."""
    commit = _bare_repo(
        tmp_path / "remote" / "owner" / "name.git", {"go.mod": "module x\n", "d/a.go": "package d\n"}, "v1.0.0"
    )
    monkeypatch.setenv("UPSTREAM_GIT_URL", f"file://{tmp_path}/remote/{{repo}}.git")
    tree = sources.repository("owner/name", "v1.0.0")
    assert tree.mirror == tmp_path / "cache" / "owner+name.git"
    assert (tree.commit, tree.read("go.mod"), tree.files("d", ".go")) == (commit, "module x\n", ["d/a.go"])
    git_config = (tmp_path / "cache" / "owner+name.git" / "config").read_text()
    assert "promisor = true" in git_config and "partialclonefilter = blob:none" in git_config  # blobs when read
    monkeypatch.setenv("UPSTREAM_GIT_URL", f"file://{tmp_path}/gone/{{repo}}.git")
    assert sources.repository("owner/name", "v1.0.0").read("d/a.go") == "package d\n"  # from the cache
    with pytest.raises(
        sources.SourceError, match=r"v2\.0\.0 not read: git fetch file://.*/gone/owner/name\.git v2\.0\.0"
    ):
        sources.repository("owner/name", "v2.0.0")


def test_a_directory_of_pre_fetched_mirrors_is_read_when_named(tmp_path, monkeypatch):
    """UPSTREAM_MIRRORS (opt-in): `<owner>+<name>/repo` there is read, nothing fetched; a mirror without the tag
    falls through to the fetch."""
    commit = _bare_repo(tmp_path / "mirrors" / "owner+name" / "repo", {"go.mod": "module x\n"}, "v1.0.0")
    monkeypatch.setenv("UPSTREAM_MIRRORS", str(tmp_path / "mirrors"))
    tree = sources.repository("owner/name", "v1.0.0")
    assert (tree.mirror, tree.commit) == (tmp_path / "mirrors" / "owner+name" / "repo", commit)
    assert not (tmp_path / "cache").exists()
    with pytest.raises(sources.SourceError, match=r"UPSTREAM_MIRRORS: no v2.0.0 in .*owner\+name/repo; git fetch"):
        sources.repository("owner/name", "v2.0.0")


def test_a_release_no_source_has_is_one_line_naming_what_was_tried_and_the_offline_fix(vendored, capsys, monkeypatch):
    (vendored / "llm-d-router" / "v0.9.0").mkdir(parents=True)

    def refused(module, version, timeout):
        raise upstream_origins.OriginUnavailable(f"go mod download {module}@{version}: 403 Forbidden\nmore")

    monkeypatch.setattr(sources, "go_mod_download", refused)
    code, out = run(capsys, "endpoint-picker", "v9.9.0")
    tmp = upstream_origins.GIT_CACHE.parent
    assert code == 2
    assert out.strip().splitlines() == [
        "error: llm-d/llm-d-router@v9.9.0 not read: go mod download github.com/llm-d/llm-d-router@v9.9.0: 403 "
        f"Forbidden; git fetch file://{tmp}/no-remote/llm-d/llm-d-router.git v9.9.0: fatal: '{tmp}/no-remote/llm-d/"
        "llm-d-router.git' does not appear to be a git repository; offline: FROM=<a checkout of v9.9.0>"
    ]
