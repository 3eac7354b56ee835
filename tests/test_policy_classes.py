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
from tests.policy_fixtures import VLLM_IMAGE, compliant, find
from tests.test_policy_rules import (
    _peer,
    _random,
    _volcano_values,
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
    volcano_job,
)

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
    decode, prefill_pod = workloads(llm, Stack(resources))
    assert (decode.where, prefill_pod.where) == ("spec.template", "spec.prefill.template")
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


def test_every_pinned_charts_own_spelling_of_a_host_setting_is_read():
    """Each vendored chart's values (conformance/upstream) spell host settings their own way (KEDA useHostNetwork,
    the GPU Operator's hostPaths): helm-values-hardened reads every key that names one."""
    spellings = set()
    for values in UPSTREAM.glob("*/*/chart-*values*.yaml"):
        for key in _keys(yaml.safe_load(values.read_text())):
            if any(word in key.lower().replace("_", "") for word in HOST_WORDS):
                spellings.add(key)
    assert {"useHostNetwork", "hostNetwork", "hostPID", "hostIPC", "hostPath", "hostPaths", "privileged"} <= spellings
    unread = [key for key in spellings if setting(key) not in (*HOST_SETTINGS, "hostpath")]
    assert not unread, unread
