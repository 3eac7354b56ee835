"""The passing side of the classes issue 33 closed: the near-variants a rule must let through (each failing
variant is a Case in tests/test_policy_rules.py), and the facts the pack carries against the vendored upstream."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from components.catalog.upstream import KARMADA_AGENT_IDENTITY, KSERVE_LLM_PRESETS_MERGE, VLLM_RUNTIME_LORA_ENV
from policies.model import Stack
from policies.pods import workloads
from policies.rules.helm import HOST_SETTINGS, setting
from policies.rules.secrets import entropy_bits
from policies.upstream import (
    KARMADA_AGENT_GROUP,
    KARMADA_AGENT_USER_PREFIX,
    KARMADA_CA_VALIDITY_HOURS,
    KARMADA_LEAF_VALIDITY_HOURS,
    KARMADA_RSA_BITS,
    KSERVE_LLM_PRESETS,
    PSS_BASELINE_CAPABILITIES,
    RUNTIME_LORA_ENV,
)
from tests.policy_fixtures import VLLM_IMAGE, added, compliant, find
from tests.test_policy_rules import (
    RESOURCES,
    _agent_binding_to,
    _allow,
    _annotate_pods,
    _config_map,
    _llm_config,
    _lora_env_from,
    _peer,
    _policy,
    _priority_lua,
    _random,
    _random_into_secret,
    _route_match,
    _route_rules,
    _secret_reader,
    _volcano_values,
    inference_graph,
    isvc,
    model,
    p,
    pd,
    prefill,
    redis,
    redis_caps,
    redis_patch,
    run,
    runtime_container,
    service_patch,
    set_in,
    stand_in_rule,
    volcano_job,
)


def _multi_node_worker(rs):
    """The runtime's worker (KServe merges the predictor's workerSpec onto it) with a liveness probe only."""
    main = runtime_container(rs)
    worker = {k: v for k, v in main.items() if k not in ("readinessProbe", "startupProbe", "command", "args")}
    worker |= {"name": "worker-container", "command": ["ray", "start", "--block"]}
    worker["livenessProbe"] = {"exec": {"command": ["ray", "health-check"]}, "periodSeconds": 30}
    p(rs, ":ClusterServingRuntime", "vllm-runtime")["spec"]["workerSpec"] = {"containers": [worker]}
    # KServe builds the worker's pod from the two workerSpecs alone (predictor.go multiNodeProcess L556-604): the
    # predictor's service account and token settings do not reach it
    isvc(rs)["spec"]["predictor"]["workerSpec"] = {"pipelineParallelSize": 2, "automountServiceAccountToken": False}


def _stand_in_admitted(rs) -> None:
    """evals may call llama-70b (its own rule, with a request class), and mistral, which llama-70b stands in for."""
    pool = {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "llama-70b"}
    model = {"type": "Exact", "name": "x-ai-eg-model", "value": "llama-70b"}
    tenant = {"type": "Exact", "name": "x-tenant-id", "value": "evals"}
    _route_rules(rs).append({"matches": [{"headers": [model, tenant]}], "backendRefs": [pool]})
    _route_rules(rs).append(stand_in_rule("mistral", "evals", "llama-70b"))
    _priority_lua(rs)["filterContext"]["objectives"]["llama-70b"]["evals"] = "llama-70b-interactive"


PASSES: dict[str, tuple[str, Callable]] = {
    "baseline capabilities in any spelling": (
        "k8s-no-privileged",
        lambda rs: redis_caps(rs, ["NET_BIND_SERVICE", "chown", "CAP_KILL"]),
    ),
    "RuntimeDefault and Localhost profiles": (
        "k8s-no-unconfined-profiles",
        lambda rs: (
            set_in(redis(rs), ("securityContext", "seccompProfile"), {"type": "RuntimeDefault"}),
            set_in(redis(rs), ("securityContext", "appArmorProfile"), {"type": "Localhost", "localhostProfile": "x"}),
        ),
    ),
    "a compliant pod template in an unknown custom resource": (
        "k8s-no-privileged",
        lambda rs: volcano_job(
            rs,
            {
                "name": "main",
                "image": VLLM_IMAGE,
                "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True},
                "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
            },
        ),
    ),
    "a DeploymentPatch that only adds an argument": (
        "k8s-no-privilege-escalation",
        lambda rs: redis_patch(rs, {"args": ["--requirepass", "$(REDIS_PASSWORD)", "--appendonly", "yes"]}),
    ),
    "a ServicePatch narrowing the source ranges": (
        "k8s-service-not-exposed",
        lambda rs: service_patch(rs, "api-external", ["203.0.113.0/24"]),
    ),
    "a namespace named by kubernetes.io/metadata.name": (
        "k8s-netpol-not-allow-all",
        lambda rs: _peer(
            rs, {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}, "podSelector": {}}
        ),
    ),
    "48 alphanumerics": ("random-secrets-entropy", lambda rs: _random(rs, length=48)),
    "plain HTTP to a cluster Service": (
        "no-plain-http-endpoints",
        lambda rs: set_in(
            p(rs, ":ScaledObject", "llama-70b-scaler"),
            ("spec", "triggers", 0, "metadata", "serverAddress"),
            "http://kube-prometheus-stack-prometheus.monitoring.svc:9090",
        ),
    ),
    "--requirepass from a Secret-fed variable, ${VAR} form": (
        "no-plaintext-secrets",
        lambda rs: set_in(redis(rs), ("args",), ["--requirepass=${REDIS_PASSWORD}"]),
    ),
    "runtime LoRA updating off": (
        "vllm-no-runtime-lora-in-production",
        lambda rs: (
            runtime_container(rs)
            .setdefault("env", [])
            .append({"name": "VLLM_ALLOW_RUNTIME_LORA_UPDATING", "value": "False"})
        ),
    ),
    "useHostNetwork false": ("helm-values-hardened", lambda rs: _volcano_values(rs, {"useHostNetwork": False})),
    "prefill pod with its token off, decode pod with the routing sidecar": (
        "k8s-model-servers-no-token",
        lambda rs: set_in(prefill(rs), ("automountServiceAccountToken",), False),
    ),
    # issue 33, review: the near-variants of each class that must pass
    "a hardened LLMInferenceServiceConfig named by baseRefs": (
        "k8s-no-privileged",
        lambda rs: _llm_config(
            rs,
            {
                "prefill": {
                    "template": {
                        "containers": [{"name": "main", "securityContext": {"allowPrivilegeEscalation": False}}]
                    }
                }
            },
        ),
    ),
    "an agent key stronger than RSA 3072 (ECDSA P-384)": (
        "karmada-agent-identity",
        lambda rs: p(rs, ":PrivateKey", "agent-key").update(algorithm="ECDSA", ecdsaCurve="P384", rsaBits=None),
    ),
    "an agent bound to a role every authenticated user holds": (
        "karmada-agent-rbac-scoped",
        lambda rs: _agent_binding_to(rs, "ClusterRole", "system:basic-user"),
    ),
    "the tenant header in another case": (
        "gateway-tenant-routes",
        lambda rs: _route_match(rs)[1].update(name="X-Tenant-Id"),
    ),
    "a Role reading one named Secret": (
        "rbac-no-namespace-secret-read",
        lambda rs: _secret_reader(
            rs, {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["epp-tls"], "verbs": ["get"]}
        ),
    ),
    "a chart's hostPath left empty": (
        "helm-values-hardened",
        lambda rs: _volcano_values(
            rs, {"persistence": {"hostPath": ""}, "extraVolumes": [{"name": "d", "emptyDir": {}}]}
        ),
    ),
    "one bucket's objects": (
        "iam-no-wildcard-resource-names",
        lambda rs: _policy(rs, _allow("s3:PutObject", "arn:aws:s3:::fx-models/*")),
    ),
    "the runtime's default seccomp profile by annotation": (
        "k8s-no-unconfined-profiles",
        lambda rs: _annotate_pods(
            p(rs, ":Deployment", "redis")["spec"]["template"],
            "seccomp.security.alpha.kubernetes.io/pod",
            "runtime/default",
        ),
    ),
    "namespaces named In, and two private ranges over two rules": (
        "k8s-netpol-not-allow-all",
        lambda rs: (
            _peer(
                rs,
                {
                    "namespaceSelector": {
                        "matchExpressions": [
                            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["monitoring"]}
                        ]
                    }
                },
            ),
            _peer(rs, {"ipBlock": {"cidr": "10.0.0.0/16"}}),
            _peer(rs, {"ipBlock": {"cidr": "10.1.0.0/16"}}),
        ),
    ),
    "envFrom a ConfigMap that does not set the variable, or by a prefix that cannot spell it": (
        "vllm-no-runtime-lora-in-production",
        lambda rs: (
            _lora_env_from(rs, data={"VLLM_LOGGING_LEVEL": "INFO"}),
            _config_map(rs, "other-env", {"VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true"}),
            model(rs)["envFrom"].append({"configMapRef": {"name": "other-env"}, "prefix": "APP_"}),
        ),
    ),
    "plain HTTP to <service>.<namespace>, and a link in a dashboard": (
        "no-plain-http-endpoints",
        lambda rs: (
            model(rs)["args"].append("--otlp-traces-endpoint=http://otel-collector.monitoring:4318"),
            _config_map(
                rs,
                "dashboards",
                {
                    "llm.json": '{"title": "LLM - latency", "links": [{"url2": "x"}], '
                    '"description": "see http://grafana.example.com/d/llm"}'
                },
            ),
        ),
    ),
    "a short RandomId as a name, a 16-byte one as a key": (
        "random-secrets-entropy",
        lambda rs: (
            added(
                rs,
                find(rs, ":Bucket", "models"),
                "name-suffix",
                {"byteLength": 4},
                type="random:index/randomId:RandomId",
            ),
            _random_into_secret(rs, "random:index/randomId:RandomId", {"byteLength": 16}),
        ),
    ),
    "a multi-node worker, which takes no traffic, probed for liveness only": ("k8s-probes", _multi_node_worker),
    "a stand-in its tenant may call by name": ("gateway-stand-in-access", _stand_in_admitted),
}


@pytest.mark.parametrize("case", sorted(PASSES))
def test_near_variant_passes(case: str):
    rule_name, change = PASSES[case]
    resources = compliant()
    change(resources)
    evaluation = run(resources)
    assert evaluation.subjects[rule_name] > 0
    assert evaluation.findings == [], [f.message for f in evaluation.findings]


def test_llm_inference_service_pods_are_its_templates_over_kserve_presets():
    """Decode runs KServe's decode preset (vLLM on 8001, the routing sidecar) under our template; prefill its own."""
    resources = compliant()
    llm = find(resources, ":LLMInferenceService", "llama-70b-pd")
    decode, prefill_pod, picker = workloads(llm, Stack(resources))
    assert (decode.where, prefill_pod.where) == ("spec.template", "spec.prefill.template")
    # router.scheduler without a pool ref: KServe runs the endpoint picker, config-llm-scheduler.yaml under ours
    assert picker.where == "spec.router.scheduler.template"
    assert [c["name"] for c in picker.containers] == ["main", "tokenizer"]
    assert picker.containers[0]["image"] == "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0"
    assert picker.containers[1]["resources"]["limits"] == {"cpu": "1", "memory": "2Gi"}  # ours; the preset sets none
    assert picker.labels["app.kubernetes.io/component"] == "llminferenceservice-router-scheduler"
    main = decode.main
    # kserve/kserve@v0.20.0 config/llmisvcconfig/config-llm-decode-template.yaml: image, port and security context
    assert main["image"] == "ghcr.io/llm-d/llm-d-cuda:v0.8.0" and main["ports"][0]["containerPort"] == 8001
    assert main["securityContext"]["allowPrivilegeEscalation"] is False
    assert main["args"][0] == "--tensor-parallel-size=4"  # ours, merged onto the preset's container by name
    [sidecar] = decode.init_containers
    assert sidecar["name"] == "llm-d-routing-sidecar" and sidecar["restartPolicy"] == "Always"
    assert sidecar["resources"]["limits"] == {"cpu": "250m", "memory": "256Mi"}  # ours; the preset has {}
    assert decode.labels["llm-d.ai/role"] == "decode" and prefill_pod.labels["llm-d.ai/role"] == "prefill"
    assert pd(resources)["spec"]["prefill"]["template"]["containers"][0]["name"] == "main"


def test_a_patch_of_an_object_in_the_stack_is_judged_merged_and_one_outside_as_what_it_sets():
    resources = compliant()
    redis_patch(resources, {"args": ["--appendonly", "yes"]})  # replaces args (an atomic list): auth is gone
    stack = Stack(resources)
    merged = next(r for r in stack.resources if r.name == "redis-patch")
    assert merged.patch_of is not None
    assert merged.props["spec"]["template"]["spec"]["containers"][0]["image"] == "redis:7.4.1"
    assert {f.policy for f in run(resources).findings} == {"redis-requires-auth"}


@pytest.mark.parametrize(
    ("props", "bits"),
    [
        # hand-computed: length x log2(characters)
        ({"length": 48, "special": False}, 48 * 5.954196310386876),  # 62 alphanumerics
        ({"length": 20}, 20 * 6.375039431346925),  # 62 + the provider's 21 specials = 83 (pulumi_random 4.21.4)
        ({"length": 32, "lower": False, "upper": False, "special": False}, 32 * 3.321928094887362),  # digits
        ({"length": 16, "special": True, "overrideSpecial": "-_"}, 16 * 6.0),  # 62 + 2 = 64
    ],
)
def test_entropy_of_generated_secrets(props, bits):
    assert entropy_bits(props) == pytest.approx(bits)


UPSTREAM = Path(__file__).resolve().parents[1] / "conformance" / "upstream"


@pytest.mark.parametrize(
    ("preset", "path"),
    [
        ("kserve-config-llm-template", ("template",)),
        ("kserve-config-llm-decode-template", ("template",)),
        ("kserve-config-llm-prefill-template", ("prefill", "template")),
    ],
)
def test_the_packs_kserve_presets_are_the_vendored_ones(preset, path):
    """Every field the pack states of a preset pod is what the vendored preset says (probe schemes are templated)."""
    document = yaml.safe_load(
        (UPSTREAM / "kserve/v0.20.0" / f"llmisvcconfig-{preset.removeprefix('kserve-')}.yaml").read_text()
    )
    assert document["metadata"]["name"] == preset
    pod = document["spec"]
    for key in path:
        pod = pod[key]
    ours = KSERVE_LLM_PRESETS[preset]
    for kind in ("containers", "initContainers"):
        upstream = {c["name"]: c for c in pod.get(kind, [])}
        assert {c["name"] for c in ours.get(kind, [])} == set(upstream), (preset, kind)
        for container in ours.get(kind, []):
            theirs = upstream[container["name"]]
            for field, value in container.items():
                if field.endswith("Probe"):
                    theirs_probe = {k: v for k, v in theirs[field].items() if k != "httpGet"}
                    assert {k: v for k, v in value.items() if k != "httpGet"} == theirs_probe, (preset, field)
                    assert value["httpGet"] == {k: v for k, v in theirs[field]["httpGet"].items() if k != "scheme"}
                else:
                    assert theirs.get(field) == value, (preset, container["name"], field)
    assert sorted(v["name"] for v in ours["volumes"]) == sorted(v["name"] for v in pod["volumes"])


def test_the_packs_certificate_bounds_are_karmadas_chart_defaults():
    values = yaml.safe_load((UPSTREAM / "karmada/v1.18.2/chart-karmada.values.yaml").read_text())
    auto = values["certs"]["auto"]
    assert auto["expiry"] == f"{KARMADA_LEAF_VALIDITY_HOURS}h"
    assert auto["rootCAExpiryDays"] * 24 == KARMADA_CA_VALIDITY_HOURS
    assert auto["rsaSize"] == KARMADA_RSA_BITS


def test_the_packs_facts_are_the_catalogs():
    """The pack (to be published alone) and the platform's catalog state the same upstream facts."""
    statement = KARMADA_AGENT_IDENTITY.statement
    assert f"`{KARMADA_AGENT_USER_PREFIX}<cluster>`" in statement and f"`{KARMADA_AGENT_GROUP}`" in statement
    assert f"{KARMADA_LEAF_VALIDITY_HOURS}h" in statement and f"RSA {KARMADA_RSA_BITS}" in statement
    assert RUNTIME_LORA_ENV in VLLM_RUNTIME_LORA_ENV.statement
    assert all(name in KSERVE_LLM_PRESETS_MERGE.statement for name in KSERVE_LLM_PRESETS)
    # Pod Security baseline's allowed capabilities, by hand from k8s.io/pod-security-admission@v0.33.13
    # policy/check_capabilities_baseline.go L62-76
    assert set(PSS_BASELINE_CAPABILITIES) == {
        "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP",
        "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
    }  # fmt: skip


HOST_WORDS = ("hostnetwork", "hostpid", "hostipc", "privileged", "hostpath", "privilegeescalation")


def _keys(value: object):
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


@pytest.mark.slow
def test_every_pinned_charts_own_spelling_of_a_host_setting_is_read(upstream):
    """Each vendored chart's values (conformance/upstream) spell host settings their own way (KEDA useHostNetwork,
    the GPU Operator's hostPaths): helm-values-hardened reads every key that names one."""
    spellings = set()
    for values in UPSTREAM.glob("*/*/chart-*values*.yaml"):
        for key in _keys(upstream.chart_values(str(values.relative_to(UPSTREAM)))):  # libyaml: 8 times faster
            if any(word in key.lower().replace("_", "") for word in HOST_WORDS):
                spellings.add(key)
    assert {"useHostNetwork", "hostNetwork", "hostPID", "hostIPC", "hostPath", "hostPaths", "privileged"} <= spellings
    unread = [key for key in spellings if setting(key) not in (*HOST_SETTINGS, "hostpath")]
    assert not unread, unread


def test_a_node_group_may_name_the_stacks_template_by_its_own_name():
    """A template named by its `name` input, no output flowing: still the stack's (and no missing name matches)."""
    resources = compliant()
    find(resources, ":LaunchTemplate", "h100").props["name"] = "fx-gpu-h100"
    group = find(resources, ":NodeGroup", "h100")
    group.props["launchTemplate"] = {"name": "fx-gpu-h100", "version": "1"}
    group.deps.pop("launchTemplate")
    evaluation = run(resources)
    assert evaluation.subjects["eks-node-groups-use-hardened-template"] == 1
    assert evaluation.of("eks-node-groups-use-hardened-template") == []


def test_a_config_the_stack_does_not_define_makes_an_llm_service_pods_unknown():
    """spec.baseRefs names an LLMInferenceServiceConfig KServe looks up in the service's namespace, then its own
    (config_merge.go getConfig L741-757): absent from the stack, it could set anything, so the pods cannot be judged."""
    resources = compliant()
    pd(resources)["spec"]["baseRefs"] = [{"name": "team-preset"}]
    evaluation = run(resources)
    assert not evaluation.mandatory, [f.message for f in evaluation.mandatory]
    unknown = evaluation.of("k8s-no-privileged", "cannot-check")
    assert unknown and all("team-preset" in f.message for f in unknown), [f.message for f in unknown]
    # the same config in KServe's namespace is found, and judged
    _llm_config(resources, {"template": {"containers": [{"name": "main", "securityContext": {"privileged": True}}]}},
                namespace="kserve")  # fmt: skip
    assert run(resources).of("k8s-no-privileged", "violation")


def test_an_inference_graph_runs_kserves_router_pod():
    """KServe's router for an InferenceGraph (raw_ig.go createInferenceGraphPodSpec): its own security context and no
    token; the graph's resources when it sets them; the image from KServe's configuration, which the pack cannot see."""
    resources = compliant()
    inference_graph(resources, resources=RESOURCES, nodeSelector={"pool": "system"})
    [router] = workloads(find(resources, ":InferenceGraph", "rag-graph"), Stack(resources))
    assert router.containers[0]["securityContext"]["runAsNonRoot"] is True
    assert router.pod == {"nodeSelector": {"pool": "system"}, "automountServiceAccountToken": False}
    assert router.labels["serving.kserve.io/inferencegraph"] == "rag" and not router.complete
    evaluation = run(resources)
    assert not evaluation.mandatory, [f.message for f in evaluation.mandatory]
    assert evaluation.of("k8s-images-pinned", "cannot-check")


def test_runtime_lora_from_a_configmap_the_stack_does_not_define_cannot_be_checked():
    resources = compliant()
    _lora_env_from(resources, config_map="team-env")
    evaluation = run(resources)
    assert not evaluation.mandatory
    [finding] = evaluation.of("vllm-no-runtime-lora-in-production")
    assert finding.kind == "cannot-check" and "team-env" in finding.message
