"""client -> gateway -> endpoint picker -> model server, checked against what the pinned upstream binaries accept.

Every argument of every engine and picker container must be a flag of the pinned version's own parser
(flag lists in the upstream data, named by the catalog), and the metric names the picker reads must be
exported by the engine version the pod runs.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

import pytest
import yaml

from components.catalog.engines import (
    ENGINE_FLAGS,
    TRITON_NGC_RELEASE,
    VLLM_FLAGS,
)
from tests.harness import SERVING_CLUSTERS, cluster_objects

EPP_IMAGE_PREFIX = "ghcr.io/llm-d/llm-d-router-endpoint-picker:"


# --- engine command lines ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Flag:
    """One option of an upstream parser: its value arity, and the values it accepts."""

    takes_value: bool
    many: bool  # nargs + / * / N: several values after the flag
    choices: tuple[str, ...] | None


def engine_parser(upstream, engine: str) -> dict[str, Flag]:
    """`--option` -> Flag, from the argparse dump of the catalog's pinned version of `engine`."""
    document = upstream.document(ENGINE_FLAGS[engine].flag_list)
    options: dict[str, Flag] = {}
    for arg in document.get("args") or document["flags"]:
        nargs = arg.get("nargs")
        takes_value = nargs != 0 and arg["action"] not in ("_StoreTrueAction", "store_true", "BooleanOptionalAction")
        choices = tuple(str(c) for c in arg["choices"]) if arg.get("choices") else None
        for option in arg["option_strings"]:
            options[option] = Flag(takes_value, nargs not in (None, "?", 0, 1), choices)
    return options


def parse_command_line(args: list[str], parser: dict[str, Flag]) -> list[str]:
    """Problems argparse would exit on, for `args` given to a parser of `parser`'s options."""
    problems = []
    i = 0
    while i < len(args) and not args[i].startswith("--"):
        i += 1  # the interpreter and script in front of the flags
    while i < len(args):
        token = args[i]
        i += 1
        if not token.startswith("--"):
            problems.append(f"{token!r}: a value without a flag")
            continue
        option, has_inline, inline = token.partition("=")
        flag = parser.get(option)
        if flag is None:
            problems.append(f"{option}: unrecognized argument")
            continue
        values = [inline] if has_inline else []
        while i < len(args) and not args[i].startswith("--") and (flag.many or not values) and flag.takes_value:
            values.append(args[i])
            i += 1
        if not flag.takes_value and values:
            problems.append(f"{option} takes no value (got {values[0]!r})")
        elif flag.takes_value and not values:
            problems.append(f"{option} expects a value")
        elif flag.choices and not all(v in flag.choices for v in values):
            problems.append(f"{option}: {values} not among {list(flag.choices)}")
    return problems


def engine_of(runtime_name: str) -> str:
    return "triton" if "triton" in runtime_name else "vllm"


def engine_command_lines(plan) -> list[tuple[str, str, list[str]]]:
    """(where, engine, args) of every model-server container: the runtimes', each InferenceService's and each
    LLMInferenceService pool's (vLLM behind KServe's templates)."""
    found = []
    for (cluster, name), runtime in cluster_objects(plan, "ClusterServingRuntime").items():
        spec = runtime["spec"]
        for container in [*spec["containers"], *spec.get("workerSpec", {}).get("containers", [])]:
            if "args" in container:
                found.append((f"{cluster}/{name}/{container['name']}", engine_of(name), container["args"]))
    for (cluster, name), isvc in cluster_objects(plan, "InferenceService").items():
        model = isvc["spec"]["predictor"]["model"]
        found.append((f"{cluster}/{name}", engine_of(model["runtime"]), model.get("args", [])))
    for (cluster, name), llmisvc in cluster_objects(plan, "LLMInferenceService").items():
        spec = llmisvc["spec"]
        for pool, pod in (("decode", spec["template"]), ("prefill", spec["prefill"]["template"])):
            # KServe's presets pass the args through the shell's `eval` (LLM_INFERENCE_SERVICE_PRESETS): what vLLM
            # receives is the args parsed again.
            found += [(f"{cluster}/{name}/{pool}", "vllm", shlex.split(" ".join(c["args"]))) for c in pod["containers"]]
    return found


@pytest.mark.parametrize("engine", sorted(ENGINE_FLAGS))
def test_catalog_flags_exist_in_the_pinned_engine(engine, upstream):
    """What a model may set, and what the platform derives, are flags of the pinned version, of the right kind."""
    flags, parser = ENGINE_FLAGS[engine], engine_parser(upstream, engine)
    assert flags.version in flags.flag_list  # the list follows the version
    missing = sorted(f for f in [*flags.tunable, *flags.derived] if f"--{f}" not in parser)
    assert missing == [], f"not flags of {flags.engine} {flags.version}: {missing}"
    wrong_kind = sorted(f for f, kind in flags.tunable.items() if parser[f"--{f}"].takes_value != (kind == "value"))
    assert wrong_kind == []


def test_command_line_check_rejects_what_the_engine_rejects(upstream):
    parser = engine_parser(upstream, "vllm")
    args = ["--swap-space=4", "--enforce-eager=yes", "--seed", "--prefix-caching-hash-algo=md5"]
    assert parse_command_line(args, parser) == [
        "--swap-space: unrecognized argument",
        "--enforce-eager takes no value (got 'yes')",
        "--seed expects a value",
        # vLLM v0.33.0's choices (generated-vllm-serve-args.json)
        "--prefix-caching-hash-algo: ['md5'] not among ['sha256', 'sha256_cbor', 'xxhash', 'xxhash_cbor']",
    ]
    assert parse_command_line(["--lora-modules", "a=/m/a", "b=/m/b", "--no-enforce-eager"], parser) == []


def test_every_rendered_engine_arg_is_a_flag_of_the_pinned_engine(env_plan, upstream):
    lines = engine_command_lines(env_plan)
    models = {(c, n) for c, n in cluster_objects(env_plan, "InferenceService")}
    assert len(lines) >= len(models) > 0
    problems = {
        where: found
        for where, engine, args in lines
        if (found := parse_command_line(args, engine_parser(upstream, engine)))
    }
    assert problems == {}


def test_overrides_of_every_kind_render_as_the_engine_parses_them(upstream):
    """Each tunable flag, set as its kind says, passes the pinned parser (value 1 for the ones taking one)."""
    from components.serving.engine import override_args

    assert {e: bool(f.tunable) for e, f in ENGINE_FLAGS.items()} == {"triton": True, "vllm": True}, "tunable flags"
    for engine, flags in ENGINE_FLAGS.items():
        parser = engine_parser(upstream, engine)
        for flag, kind in flags.tunable.items():
            choices = parser[f"--{flag}"].choices
            value = True if kind == "switch" else (choices[0] if choices else "1")
            assert parse_command_line(override_args({flag: value}), parser) == [], (engine, flag)


# --- endpoint picker --------------------------------------------------------------------------------


def pickers(plan) -> dict[tuple[str, str], dict]:
    """(cluster, deployment) -> the endpoint-picker container of each picker Deployment."""
    found = {}
    for (cluster, name), deployment in cluster_objects(plan, "Deployment").items():
        for container in deployment["spec"].get("template", {}).get("spec", {}).get("containers", []):
            if container.get("image", "").startswith(EPP_IMAGE_PREFIX):
                found[cluster, name] = container
    return found


def picker_flags(upstream, image: str) -> dict[str, dict]:
    version = image.removeprefix(EPP_IMAGE_PREFIX)
    document = upstream.document(f"llm-d-router/{version}/generated-epp-flags.json")
    return {f["name"]: f for f in document["flags"]}


def picker_problems(args: list[str], flags: dict[str, dict]) -> list[str]:
    """What the pinned picker's pflag parsing and Options.Validate() exit on, plus deprecated flags."""
    problems, given = [], []
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        name, has_inline, _ = token.removeprefix("--").partition("=")
        flag = flags.get(name)
        if not token.startswith("-") or flag is None:
            problems.append(f"{token}: unknown flag")
            continue
        given.append(name)
        if flag["type"] != "bool" and not has_inline:
            i += 1  # its value
        if flag.get("rejected_if_set"):
            problems.append(f"--{name}: rejected at startup ({flag['deprecated']})")
        elif flag.get("deprecated"):
            problems.append(f"--{name}: deprecated ({flag['deprecated']})")
    if ("pool-name" in given) == ("endpoint-selector" in given):
        problems.append("exactly one of --pool-name or --endpoint-selector must be set")
    if "config-file" in given and "config-text" in given:
        problems.append("--config-file and --config-text are mutually exclusive")
    return problems


def test_picker_check_rejects_what_the_picker_rejects(upstream):
    flags = picker_flags(upstream, EPP_IMAGE_PREFIX + "v0.9.0")
    problems = picker_problems(["--total-queued-requests-metric", "x", "--kubeconfig=/k", "--v=1"], flags)
    assert problems == [
        "--total-queued-requests-metric: rejected at startup (use engineConfigs in EndpointPickerConfig instead)",
        "--kubeconfig=/k: unknown flag",
        "exactly one of --pool-name or --endpoint-selector must be set",
    ]


def test_every_endpoint_picker_arg_is_a_flag_of_the_pinned_picker(env_plan, upstream):
    found = pickers(env_plan)
    pools = cluster_objects(env_plan, "InferencePool")
    assert len(found) == len(pools) > 0  # one picker per pool
    problems = {
        where: p for where, c in found.items() if (p := picker_problems(c["args"], picker_flags(upstream, c["image"])))
    }
    assert problems == {}


def test_the_picker_metrics_we_read_are_ones_the_pinned_picker_registers(env_plan, upstream):
    """Dashboards, alerts and autoscaling read the picker's metrics by the catalog's names: each is registered by the
    picker the plan runs, with its type (its generated metric list). v0.9.0 marks the ones we read deprecated, with
    successors of the same labels: named here, so a release that drops them is a known step
    (make upgrade-check lists them; docs/upstream.md)."""
    from components.catalog.metrics import METRIC_GROUPS

    ((image,),) = {(c["image"],) for c in pickers(env_plan).values()}
    version = image.removeprefix(EPP_IMAGE_PREFIX)
    registered = {
        m["name"]: m for m in upstream.document(f"llm-d-router/{version}/generated-epp-metrics.json")["metrics"]
    }
    (group,) = [g for g in METRIC_GROUPS if g.exporter == "endpoint-picker"]
    assert {m.name: m.kind for m in group.metrics} == {m.name: registered[m.name]["type"] for m in group.metrics}
    assert {m.name: registered[m.name].get("deprecated_for") for m in group.metrics} == {
        "inference_pool_average_kv_cache_utilization": "llm_d_epp_average_kv_cache_utilization",
        "inference_pool_average_queue_size": "llm_d_epp_average_queue_size",
        "inference_pool_ready_pods": "llm_d_epp_ready_endpoints",
        "inference_objective_request_total": "llm_d_epp_request_total",
        "inference_objective_request_error_total": "llm_d_epp_request_error_total",
        "inference_extension_flow_control_queue_size": "llm_d_epp_flow_control_queue_size",
        "inference_extension_flow_control_request_queue_duration_seconds": (
            "llm_d_epp_flow_control_request_queue_duration_seconds"
        ),
    }
    # each successor is registered beside it: moving to it is a rename
    assert all(registered[m.name]["deprecated_for"] in registered for m in group.metrics)


def _picker_config_mount(picker: dict) -> tuple[str, str]:
    """(volume, file name) of the EndpointPickerConfig the picker reads with --config-file."""
    path = picker["args"][picker["args"].index("--config-file") + 1]
    directory, file = path.rsplit("/", 1)
    (mount,) = [m for m in picker["volumeMounts"] if m["mountPath"] == directory]
    return mount["name"], file


def exported_metrics(upstream, engine: str) -> set[tuple[str, tuple[tuple[str, str], ...]]]:
    """(name, label pairs) the pinned engine exports: vLLM's registrations, TensorRT-LLM's documented samples."""
    if engine == "vllm":
        document = upstream.document(f"vllm/{VLLM_FLAGS.version}/generated-prometheus-metrics.json")
        return {(m["name"], ()) for m in document["metrics"]}
    text = (upstream.root / f"tensorrtllm_backend/r{TRITON_NGC_RELEASE}/README.md").read_text()
    samples = re.findall(r"^(nv_trt_llm_\w+)\{([^}]*)\}", text, flags=re.M)
    return {(name, tuple(sorted(re.findall(r'(\w+)="([^"]*)"', labels)))) for name, labels in samples}


def spec_is_exported(spec: str, exported: set) -> bool:
    """A picker metric spec `name{label=value,...}` matches an exported series with those labels."""
    name, _, labels = spec.partition("{")
    wanted = set(re.findall(r"(\w+)=([^,}]+)", labels))
    return any(n == name and wanted <= set(pairs) for n, pairs in exported)


def test_picker_reads_the_metric_names_its_pods_export(env_plan, upstream):
    """Pool selector -> pods of one InferenceService; their engine label -> a built-in mapping of the picker whose
    metric names that engine version exports."""
    deployments = cluster_objects(env_plan, "Deployment")
    config_maps = cluster_objects(env_plan, "ConfigMap")
    isvcs = cluster_objects(env_plan, "InferenceService")
    pools = cluster_objects(env_plan, "InferencePool")
    assert pools
    for (cluster, pool_name), pool in pools.items():
        picker_name = pool["spec"]["endpointPickerRef"]["name"]
        (picker,) = deployments[cluster, picker_name]["spec"]["template"]["spec"]["containers"]
        volume_name, file = _picker_config_mount(picker)
        volumes = {v["name"]: v for v in deployments[cluster, picker_name]["spec"]["template"]["spec"]["volumes"]}
        config = yaml.safe_load(config_maps[cluster, volumes[volume_name]["configMap"]["name"]]["data"][file])
        (extractor,) = [p for p in config["plugins"] if p["type"] == "core-metrics-extractor"]
        engines = upstream.document(
            f"llm-d-router/{picker['image'].removeprefix(EPP_IMAGE_PREFIX)}/generated-epp-flags.json"
        )["engine_metrics"]
        builtin = engines["builtin_engine_configs"]
        default_engine = extractor["parameters"]["defaultEngine"]
        assert default_engine in builtin
        # the label the picker reads the engine from: the one configured, else its default (factories.go)
        engine_label = extractor["parameters"].get("engineLabelKey", engines["label_keys"]["DefaultEngineTypeLabelKey"])
        # the pods the pool selects: the predictor pods of the model's InferenceService
        predictor = isvcs[cluster, pool_name]["spec"]["predictor"]
        selector = pool["spec"]["selector"]["matchLabels"]
        pod_labels = predictor["labels"]
        # besides the predictor's labels, a multi-node head's `app`, which KServe adds (upstream.KSERVE_POD_APP_LABEL)
        assert {k: v for k, v in selector.items() if k != "app"}.items() <= pod_labels.items()
        engine_type = pod_labels[engine_label]
        assert engine_type == default_engine
        runtime = engine_of(predictor["model"]["runtime"])
        exported = exported_metrics(upstream, runtime)
        specs = {k: v for k, v in builtin[engine_type].items() if k.endswith("Spec") and v}
        assert specs
        unexported = {k: v for k, v in specs.items() if not spec_is_exported(v, exported)}
        assert unexported == {}, (cluster, pool_name)
        # the picker scrapes the pool's target port, where the engine serves /metrics
        (source,) = [p for p in config["plugins"] if p["type"] == "metrics-data-source"]
        assert source["parameters"]["path"] == "/metrics"
        ports = {p["containerPort"] for c in _runtime_containers(env_plan, cluster, predictor) for p in c["ports"]}
        assert {p["number"] for p in pool["spec"]["targetPorts"]} <= ports


def _runtime_containers(plan, cluster: str, predictor: dict) -> list[dict]:
    runtimes = cluster_objects(plan, "ClusterServingRuntime")
    return runtimes[cluster, predictor["model"]["runtime"]]["spec"]["containers"]


# --- a request at zero replicas -------------------------------------------------------------------------

# How long Envoy waits for the picker's answer to one ext_proc message, fixed by the pinned AI Gateway
# [envoyproxy/ai-gateway@v1.1.0:internal/extensionserver/inferencepool.go, MessageTimeout 300 s].
AI_GATEWAY_EXT_PROC_SECONDS = 300


def _seconds(duration: str) -> int:
    assert duration.endswith("s"), duration
    return int(duration[:-1])


def test_a_request_at_zero_replicas_waits_in_the_pickers_queue_which_wakes_the_model(env_plan):
    """Scale-from-zero wakes on a signal that exists with no pod: the picker's flow-control queue, which holds the
    request until a replica is ready, within the gateway's timeouts; pools never at zero keep the default path,
    unless they order request classes (tests/test_priority_classes.py)."""
    scalers = cluster_objects(env_plan, "ScaledObject")
    pools = cluster_objects(env_plan, "InferencePool")
    deployments = cluster_objects(env_plan, "Deployment")
    config_maps = cluster_objects(env_plan, "ConfigMap")
    routes = [rule for r in cluster_objects(env_plan, "AIGatewayRoute").values() for rule in r["spec"]["rules"]]
    at_zero = {key for key, s in scalers.items() if s["spec"]["minReplicaCount"] == 0}
    if env_plan.environment == "dev":
        assert at_zero == {("dev-use1", "llama-3-1-8b"), ("dev-use1", "qwen2-5-7b")}
    for (cluster, pool_name), pool in pools.items():
        picker_name = pool["spec"]["endpointPickerRef"]["name"]
        (picker,) = deployments[cluster, picker_name]["spec"]["template"]["spec"]["containers"]
        volume_name, file = _picker_config_mount(picker)
        volumes = {v["name"]: v for v in deployments[cluster, picker_name]["spec"]["template"]["spec"]["volumes"]}
        config = yaml.safe_load(config_maps[cluster, volumes[volume_name]["configMap"]["name"]]["data"][file])
        if (cluster, pool_name) not in at_zero:
            classed = "priorityBands" in config.get("flowControl", {})
            assert ("flowControl" in config.get("featureGates", [])) is classed, (cluster, pool_name)
            continue
        assert config["featureGates"] == ["flowControl"]
        ttl = _seconds(config["flowControl"]["defaultRequestTTL"])
        served = [r for r in routes if any(b.get("name") == pool_name for b in r["backendRefs"])]
        assert served
        limits = [AI_GATEWAY_EXT_PROC_SECONDS]
        for rule in served:
            limits += [_seconds(rule["timeouts"]["request"]), _seconds(rule["streamIdleTimeout"])]
        assert 0 < ttl < min(limits)  # the picker answers 503 before Envoy gives up on it
        assert ttl <= 10  # and soon: a cold start is minutes, no client should hang on it
        # the wake-up trigger counts the requests this pool's picker could not place, by the pool name it reports
        # them under; a counter, so a request held less than a scrape interval still counts
        picker_pool = picker["args"][picker["args"].index("--pool-name") + 1]
        queued = [
            t
            for t in scalers[cluster, pool_name]["spec"]["triggers"]
            if "inference_extension_flow_control_request_queue_duration_seconds_count" in t["metadata"]["query"]
        ]
        assert [re.search(r'inference_pool="([^"]+)"', t["metadata"]["query"]).group(1) for t in queued] == [
            picker_pool
        ]
        assert [re.search(r'outcome!="([^"]+)"', t["metadata"]["query"]).group(1) for t in queued] == ["Dispatched"]
        assert "inference_objective_request_total" not in str(scalers[cluster, pool_name]["spec"]["triggers"])


# --- network policies: only the gateway's path reaches a model server ----------------------------------

SERVING_NS = "inference"
GATEWAY_NS = "envoy-gateway-system"
# Envoy Gateway v1.9.0 labels its proxies so [internal/infrastructure/kubernetes/proxy/resource.go EnvoyAppLabel,
# internal/gatewayapi/translator.go OwningGatewayNameLabel]; the platform's Gateway is `inference-gateway`.
ENVOY_POD = (
    GATEWAY_NS,
    {
        "app.kubernetes.io/name": "envoy",
        "app.kubernetes.io/component": "proxy",
        "app.kubernetes.io/managed-by": "envoy-gateway",
        "gateway.envoyproxy.io/owning-gateway-name": "inference-gateway",
    },
)
# kube-prometheus-stack's Prometheus, as the Prometheus Operator labels it, in the observability namespace.
PROMETHEUS_POD = ("monitoring", {"app.kubernetes.io/name": "prometheus", "prometheus": "kube-prometheus-stack"})
INTRUDERS = {
    "a pod in the serving namespace": (SERVING_NS, {"app": "notebook"}),
    "a pod in another namespace": ("default", {"app": "notebook"}),
    "a Grafana in the monitoring namespace": ("monitoring", {"app.kubernetes.io/name": "grafana"}),
    "another Gateway's Envoy": (GATEWAY_NS, {**ENVOY_POD[1], "gateway.envoyproxy.io/owning-gateway-name": "other"}),
}


def _matches(selector: dict, labels: dict[str, str]) -> bool:
    if not all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for e in selector.get("matchExpressions", []):
        present = labels.get(e["key"])
        holds = {
            "In": present in e.get("values", []),
            "NotIn": present not in e.get("values", []),
            "Exists": present is not None,
            "DoesNotExist": present is None,
        }
        if not holds[e["operator"]]:
            return False
    return True


def _peer_admits(peer: dict, policy_ns: str, source: tuple[str, dict]) -> bool:
    namespace, labels = source
    # Pods are never named by IP: an ipBlock is the internet or a managed control plane's range. (On EKS that range
    # is the VPC's, which pods' addresses are in too: the webhook's allowance cannot tell them apart.)
    assert "ipBlock" not in peer or peer["ipBlock"]["cidr"] in ("0.0.0.0/0", *CONTROL_PLANE_RANGES.values()), peer
    if "ipBlock" in peer:
        return False  # a client outside the cluster, not a pod
    if "namespaceSelector" in peer:
        if not _matches(peer["namespaceSelector"], {"kubernetes.io/metadata.name": namespace}):
            return False
    elif namespace != policy_ns:
        return False
    return _matches(peer.get("podSelector", {}), labels)


def ingress_allowed(policies: list[dict], source: tuple[str, dict], target: tuple[str, dict], port: int) -> bool:
    """Kubernetes NetworkPolicy semantics for ingress: isolated once selected, then the union of the rules."""
    namespace, labels = target
    selecting = [
        p
        for p in policies
        if p["metadata"]["namespace"] == namespace
        and "Ingress" in p["spec"]["policyTypes"]
        and _matches(p["spec"]["podSelector"], labels)
    ]
    if not selecting:
        return True
    for p in selecting:
        for rule in p["spec"].get("ingress", []):
            ports = [r["port"] for r in rule.get("ports", [])]
            if (not ports or port in ports) and any(
                _peer_admits(peer, namespace, source) for peer in rule.get("from", [])
            ):
                return True
    return False


def network_policies(plan) -> dict[str, list[dict]]:
    by_cluster: dict[str, list[dict]] = {}
    for r in plan.kubernetes_objects():
        if r.inputs["kind"] == "NetworkPolicy":
            by_cluster.setdefault(plan.cluster_of(r), []).append(r.inputs)
    return by_cluster


def test_network_policy_evaluator_isolates_selected_pods_only():
    deny = {"metadata": {"namespace": "a"}, "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": []}}
    allow = {
        "metadata": {"namespace": "a"},
        "spec": {
            "podSelector": {"matchLabels": {"app": "x"}},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "y"}}}], "ports": [{"port": 80}]}],
        },
    }
    assert ingress_allowed([], ("b", {}), ("a", {"app": "x"}), 80)
    assert not ingress_allowed([deny], ("a", {"app": "y"}), ("a", {"app": "x"}), 80)
    assert ingress_allowed([deny, allow], ("a", {"app": "y"}), ("a", {"app": "x"}), 80)
    assert not ingress_allowed([deny, allow], ("a", {"app": "y"}), ("a", {"app": "x"}), 81)
    assert not ingress_allowed([deny, allow], ("b", {"app": "y"}), ("a", {"app": "x"}), 80)


def test_only_the_gateway_path_and_prometheus_reach_model_servers(env_plan):
    """Envoy and the model's picker on the serving port, Prometheus on the metrics port; nobody else, on no port."""
    policies = network_policies(env_plan)
    pools = cluster_objects(env_plan, "InferencePool")
    deployments = cluster_objects(env_plan, "Deployment")
    isvcs = cluster_objects(env_plan, "InferenceService")
    assert isvcs
    for (cluster, model), isvc in isvcs.items():
        mine = policies[cluster]
        server = (SERVING_NS, isvc["spec"]["predictor"]["labels"])
        pool = pools.get((cluster, model))
        assert pool is not None  # every model here is served through its cluster's gateway
        port = pool["spec"]["targetPorts"][0]["number"]
        picker_name = pool["spec"]["endpointPickerRef"]["name"]
        picker = (SERVING_NS, deployments[cluster, picker_name]["spec"]["template"]["metadata"]["labels"])
        assert ingress_allowed(mine, ENVOY_POD, server, port), (cluster, model)
        assert ingress_allowed(mine, picker, server, port), (cluster, model)  # it scrapes /metrics there
        assert ingress_allowed(mine, PROMETHEUS_POD, server, port), (cluster, model)
        for who, intruder in INTRUDERS.items():
            for p in (port, 6379, 8000, 9000):
                assert not ingress_allowed(mine, intruder, server, p), (cluster, model, who, p)
        for (other_cluster, other), other_isvc in isvcs.items():
            if other_cluster == cluster and other != model:
                other_server = (SERVING_NS, other_isvc["spec"]["predictor"]["labels"])
                assert not ingress_allowed(mine, other_server, server, port), (cluster, model, other)
        assert not ingress_allowed(mine, ENVOY_POD, server, 9000)
        # the picker: Envoy calls it over ext_proc, Prometheus scrapes it, nobody else
        ext_proc = pool["spec"]["endpointPickerRef"]["port"]["number"]
        assert ingress_allowed(mine, ENVOY_POD, picker, ext_proc)
        assert ingress_allowed(mine, PROMETHEUS_POD, picker, 9090)
        for who, intruder in INTRUDERS.items():
            assert not ingress_allowed(mine, intruder, picker, ext_proc), (cluster, model, who)


def test_the_rate_limit_redis_takes_only_the_rate_limiter_despite_the_namespace_allowances(env_plan):
    ratelimit = (
        GATEWAY_NS,
        {"app.kubernetes.io/name": "envoy-ratelimit", "app.kubernetes.io/managed-by": "envoy-gateway"},
    )
    assert sorted(network_policies(env_plan)) == SERVING_CLUSTERS[env_plan.environment], "clusters with policies"
    for cluster, mine in network_policies(env_plan).items():
        redis = (
            GATEWAY_NS,
            {"app.kubernetes.io/name": "ratelimit-redis", "app.kubernetes.io/component": "ratelimit-backend"},
        )
        assert ingress_allowed(mine, ratelimit, redis, 6379), cluster
        for source in (ENVOY_POD, PROMETHEUS_POD, *INTRUDERS.values()):
            assert not ingress_allowed(mine, source, redis, 6379), (cluster, source)
        # clients reach the Envoy listener (443 on the Service is 10443 in the pod)
        assert any(
            rule["from"] == [{"ipBlock": {"cidr": "0.0.0.0/0"}}]
            and rule["ports"] == [{"protocol": "TCP", "port": 10443}]
            for p in mine
            if p["metadata"]["namespace"] == GATEWAY_NS and _matches(p["spec"]["podSelector"], ENVOY_POD[1])
            for rule in p["spec"]["ingress"]
        )


# Envoy Gateway's controller as its chart labels it, and its topology-injector webhook's port, which the API server
# calls on every Envoy pod's binding [envoyproxy/gateway@v1.9.0:charts/gateway-helm/templates/
# envoy-gateway-deployment.yaml, templates/envoy-proxy-topology-injector-webhook.yaml].
EG_CONTROLLER = (GATEWAY_NS, {"control-plane": "envoy-gateway", "app.kubernetes.io/name": "gateway-helm"})


def _admits_from(policies: list[dict], target: tuple[str, dict], port: int, cidr: str) -> bool:
    """A client outside the cluster's pods, at an address of `cidr` (a managed API server), reaches target:port."""
    namespace, labels = target
    selecting = [
        p
        for p in policies
        if p["metadata"]["namespace"] == namespace
        and "Ingress" in p["spec"]["policyTypes"]
        and _matches(p["spec"]["podSelector"], labels)
    ]
    return not selecting or any(
        {"ipBlock": {"cidr": cidr}} in rule.get("from", [])
        and (not rule.get("ports") or port in [r["port"] for r in rule["ports"]])
        for p in selecting
        for rule in p["spec"].get("ingress", [])
    )


# Where each cluster's API server calls webhooks from (MANAGED_CONTROL_PLANE_ADDRESSES): the EKS clusters' VPC
# ranges and the GKE cluster's control-plane range, as Pulumi.<env>.yaml gives them.
CONTROL_PLANE_RANGES = {
    "dev-use1": "10.10.0.0/16",
    "prod-use1": "10.20.0.0/16",
    "prod-usw2": "10.21.0.0/16",
    "prod-usc1": "172.16.0.0/28",
}


def test_the_api_server_reaches_the_envoy_gateway_webhook_and_nothing_else_of_the_controller(env_plan):
    """The namespace's default deny selects the controller: without an allowance every Envoy pod's binding waits
    out the webhook's timeout (failurePolicy Ignore) and gets no zone labels."""
    policies = network_policies(env_plan)
    assert sorted(policies) == SERVING_CLUSTERS[env_plan.environment], "clusters with policies"
    for cluster, mine in policies.items():
        assert _admits_from(mine, EG_CONTROLLER, 9443, CONTROL_PLANE_RANGES[cluster]), cluster
        assert not _admits_from(mine, EG_CONTROLLER, 9443, "0.0.0.0/0"), cluster  # not the internet
        assert not _admits_from(mine, EG_CONTROLLER, 18000, CONTROL_PLANE_RANGES[cluster]), cluster  # xDS stays
        for who, intruder in INTRUDERS.items():
            if intruder[0] != GATEWAY_NS:
                assert not ingress_allowed(mine, intruder, EG_CONTROLLER, 9443), (cluster, who)


def test_network_policies_are_enforced_on_every_cluster(env_plan):
    """EKS: the VPC CNI addon runs its network policy agent; GKE: Dataplane V2."""
    import json

    clusters = [r for r in env_plan.resources if r.type in ("aws:eks/cluster:Cluster", "gcp:container/cluster:Cluster")]
    assert clusters
    for cluster in clusters:
        if cluster.type == "gcp:container/cluster:Cluster":
            assert cluster.inputs["datapathProvider"] == "ADVANCED_DATAPATH", cluster.name
        else:
            region = cluster.name.removesuffix("-cluster")
            (cni,) = [
                r for r in env_plan.resources if r.type == "aws:eks/addon:Addon" and r.name == f"{region}-vpc-cni"
            ]
            assert json.loads(cni.inputs["configurationValues"])["enableNetworkPolicy"] == "true"


def test_vllm_keeps_its_compile_cache_on_a_pod_volume(env_plan):
    """torch.compile / CUDA-graph artefacts survive a container restart (a probe or OOM kill): they live on a pod
    volume on the node's disk, not in the container's filesystem, which starts empty at every restart."""
    runtimes = cluster_objects(env_plan, "ClusterServingRuntime")
    isvcs = cluster_objects(env_plan, "InferenceService")
    checked = 0
    for (cluster, name), isvc in isvcs.items():
        predictor = isvc["spec"]["predictor"]
        runtime = runtimes[cluster, predictor["model"]["runtime"]]["spec"]
        if engine_of(predictor["model"]["runtime"]) != "vllm":
            continue
        pods = [(runtime["containers"], predictor["volumes"])]
        if "workerSpec" in predictor:
            pods.append((runtime["workerSpec"]["containers"], predictor["workerSpec"]["volumes"]))
        for containers, volumes in pods:
            for container in containers:
                root = {e["name"]: e.get("value") for e in container["env"]}["VLLM_CACHE_ROOT"]
                (mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == root]
                (volume,) = [v for v in volumes if v["name"] == mount["name"]]
                assert "emptyDir" in volume and volume["emptyDir"].get("medium") != "Memory", (cluster, name)
                checked += 1
    assert checked


# --- every model, hop by hop -----------------------------------------------------------------------------------


def _port_flag(args: list[str], flag: str) -> int | None:
    values = [a.split("=", 1)[1] for a in args if a.startswith(f"{flag}=")]
    return int(values[0]) if values else None


def test_every_model_is_reachable_hop_by_hop(env_plan):
    """For every model on every cluster it is placed on: the Gateway's HTTPS listener takes the serving namespace's
    routes -> an AIGatewayRoute rule of that listener matches the model's name (x-ai-eg-model, which the AI Gateway
    sets from the request body's `model`) -> one InferencePool -> its endpoint picker (Service port, Deployment
    pods, `--pool-name` of that pool) -> the model's pods (the pool's selector, its target port) -> the engine,
    listening on that port and serving that name. A disaggregated model's pool and picker are KServe's
    (`<name>-inference-pool`, router.scheduler), over pods that serve `spec.model.name` on 8000."""
    gateways = cluster_objects(env_plan, "Gateway")
    routes = cluster_objects(env_plan, "AIGatewayRoute")
    pools = cluster_objects(env_plan, "InferencePool")
    services = cluster_objects(env_plan, "Service")
    deployments = cluster_objects(env_plan, "Deployment")
    isvcs = cluster_objects(env_plan, "InferenceService")
    llmisvcs = cluster_objects(env_plan, "LLMInferenceService")
    runtimes = {name: r for (_, name), r in cluster_objects(env_plan, "ClusterServingRuntime").items()}
    traced = []
    for model in env_plan.spec.models:
        for cluster in sorted({f"{env_plan.environment}-{p.region}" for p in model.placements}):
            gateway = gateways[cluster, "inference-gateway"]
            (listener,) = [x for x in gateway["spec"]["listeners"] if x["protocol"] == "HTTPS"]
            allowed = listener["allowedRoutes"]["namespaces"]["selector"]["matchLabels"]
            assert allowed == {"kubernetes.io/metadata.name": SERVING_NS}
            rules = [
                (route, rule)
                for (c, _), route in routes.items()
                if c == cluster
                for rule in route["spec"]["rules"]
                if any(
                    h == {"name": "x-ai-eg-model", "type": "Exact", "value": model.name}
                    for match in rule["matches"]
                    for h in match["headers"]
                )
            ]
            assert rules, (cluster, model.name)
            parent = {"name": "inference-gateway", "namespace": GATEWAY_NS, "sectionName": listener["name"]}
            for route, _ in rules:
                assert any(parent.items() <= ref.items() for ref in route["spec"]["parentRefs"]), (cluster, model.name)
            (backend,) = {(b["kind"], b["name"]) for _, rule in rules for b in rule["backendRefs"]}
            assert backend[0] == "InferencePool"
            if (cluster, model.name) in llmisvcs:
                spec = llmisvcs[cluster, model.name]["spec"]
                assert backend[1] == f"{model.name}-inference-pool" and set(spec["router"]) == {"scheduler"}
                assert spec["model"]["name"] == model.name  # the presets' --served-model-name
                traced.append((cluster, model.name, "disaggregated"))
                continue
            pool = pools[cluster, backend[1]]["spec"]
            picker_ref = pool["endpointPickerRef"]
            service = services[cluster, picker_ref["name"]]["spec"]
            (grpc,) = [p for p in service["ports"] if p["port"] == picker_ref["port"]["number"]]
            (picker,) = [
                d
                for (c, _), d in deployments.items()
                if c == cluster
                and _matches(
                    {"matchLabels": service["selector"]},
                    d["spec"].get("template", {}).get("metadata", {}).get("labels", {}),
                )
            ]
            (container,) = picker["spec"]["template"]["spec"]["containers"]
            assert grpc["targetPort"] in [p["containerPort"] for p in container["ports"]]
            assert container["args"][container["args"].index("--pool-name") + 1] == backend[1]
            predictor = isvcs[cluster, model.name]["spec"]["predictor"]
            assert _matches(pool["selector"], predictor["labels"]), (cluster, model.name)
            engine = predictor["model"]
            runtime = runtimes[engine["runtime"]]["spec"]["containers"][0]
            args = [*runtime.get("args", []), *engine.get("args", [])]
            listening = _port_flag(args, "--port") or _port_flag(args, "--openai-port")
            assert [p["number"] for p in pool["targetPorts"]] == [listening], (cluster, model.name)
            if model.runtime == "vllm":
                assert f"--served-model-name={model.name}" in args
            else:  # Triton's frontend serves the repository's models: the entry one is `<name>` (preflight checks it)
                assert engine["storageUri"].rstrip("/").endswith(model.weights_prefix.rstrip("/"))
            traced.append((cluster, model.name, "aggregated"))
    placed = {(f"{env_plan.environment}-{p.region}", m.name) for m in env_plan.spec.models for p in m.placements}
    assert {(c, m) for c, m, _ in traced} == placed
