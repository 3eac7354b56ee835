"""What `make checkov` scans: the plan's manifests and the pods KServe would create, each skip with its reason.

Checkov itself runs in CI (`.ci/run`, `make checkov`: its own virtualenv, its boto3 pin conflicts with ours)."""

from __future__ import annotations

import re

import pytest
import yaml

from tools.checkov_input import write

pytestmark = pytest.mark.plan

SKIP = re.compile(r"^CKV2?_K8S_\d+=[^=]{20,}$")


def test_kserve_pods_and_manifests_are_scanned_with_their_skips(tmp_path, plan_command_output):
    plan = plan_command_output("prod")
    scanned = tmp_path / "checkov"
    # 5 InferenceService pods (3 federated copies), mistral, and P/D's decode, prefill and endpoint picker
    assert write(plan, scanned) == 9
    files = list((scanned / "kserve-pods").rglob("Pod-*.yaml"))
    assert len(files) == 9  # one file per pod: no pod of an object overwrites another's
    pods = {p.name: yaml.safe_load(p.read_text()) for p in files}
    picker = pods["Pod-llama-3-1-70b-rag-llminferenceservice-router-scheduler.yaml"]
    # config-llm-scheduler.yaml@v0.20.0: the endpoint picker and its tokenizer sidecar
    assert [c["name"] for c in picker["spec"]["containers"]] == ["main", "tokenizer"]
    assert picker["metadata"]["annotations"]["app.kubernetes.io/version"] == "0.9.0"  # the preset's pod annotation
    prefill = pods["Pod-llama-3-1-70b-rag-llminferenceservice-prefill.yaml"]
    # our pinned engine over KServe's preset image (ghcr.io/llm-d/llm-d-cuda:v0.8.0)
    assert prefill["spec"]["containers"][0]["image"] == "vllm/vllm-openai:v0.33.0"
    assert prefill["spec"]["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert prefill["spec"]["automountServiceAccountToken"] is False
    for name, pod in pods.items():
        skips = {k: v for k, v in pod["metadata"]["annotations"].items() if k.startswith("checkov.io/skip")}
        assert skips and all(SKIP.match(v) for v in skips.values()), name
    assert len(list((scanned / "manifests").rglob("*.yaml"))) == len(list((plan / "manifests").rglob("*.yaml")))


def test_every_skip_on_a_rendered_object_names_a_check_and_says_why(plan_command_output):
    skipped = set()
    for env in ("dev", "prod"):
        for manifest in (plan_command_output(env) / "manifests").rglob("*.yaml"):
            annotations = (yaml.safe_load(manifest.read_text()).get("metadata") or {}).get("annotations") or {}
            for key, value in annotations.items():
                if key.startswith("checkov.io/skip"):
                    assert SKIP.match(value), (manifest.name, value)
                    skipped.add(manifest.name.removesuffix(".yaml"))
    # by hand: the objects that fail Checkov by design (picker, Redis, cache account, Karmada's flag patches, model
    # servers, ExternalDNS's API token)
    assert {
        "Deployment-llama-3-1-8b-epp",
        "Deployment-ratelimit-redis",
        "ServiceAccount-default.patch",
        "Deployment-karmada-webhook.patch",
        "Deployment-karmada-agent.patch",
        "Deployment-external-dns",
        "InferenceService-llama-3-1-8b",
        "LLMInferenceService-llama-3-1-70b-rag",
    } <= skipped


def test_a_skip_on_a_chart_deployments_patch_says_what_the_patch_is(plan_command_output):
    """The reason on Karmada's flag patches (the patch sets container args only; the rest is the chart's) holds: each
    skipped patch of a Deployment sets nothing but its containers' names and args."""
    patches = 0
    for manifest in (plan_command_output("prod") / "manifests").rglob("Deployment-*.patch.yaml"):
        patch = yaml.safe_load(manifest.read_text())
        reasons = [v for k, v in patch["metadata"]["annotations"].items() if k.startswith("checkov.io/skip")]
        if not any("setting only container args" in r for r in reasons):
            continue
        patches += 1
        assert set(patch["spec"]) == {"template"} and set(patch["spec"]["template"]) == {"spec"}, manifest.name
        assert set(patch["spec"]["template"]["spec"]) == {"containers"}, manifest.name
        assert all(set(c) == {"name", "args"} for c in patch["spec"]["template"]["spec"]["containers"]), manifest.name
    assert patches == 4  # karmada-webhook on the host, karmada-agent on each of the three pull members


def test_external_dns_reads_the_api_with_the_token_its_skip_names(plan_command_output):
    manifests = plan_command_output("dev") / "manifests"
    [deployment] = manifests.rglob("external-dns/Deployment-external-dns.yaml")
    spec = yaml.safe_load(deployment.read_text())
    reasons = [v for k, v in spec["metadata"]["annotations"].items() if k.startswith("checkov.io/skip")]
    assert [r.split("=")[0] for r in reasons] == ["CKV_K8S_38"]
    account = spec["spec"]["template"]["spec"]["serviceAccountName"]
    [binding] = manifests.rglob("ClusterRoleBinding-external-dns.yaml")
    binding = yaml.safe_load(binding.read_text())
    assert {"kind": "ServiceAccount", "name": account, "namespace": "external-dns"} in binding["subjects"]
    [role] = manifests.rglob(f"ClusterRole-{binding['roleRef']['name']}.yaml")
    # what the gateway-httproute source reads (kubernetes-sigs/external-dns@v0.15.1 docs/sources/gateway-api.md)
    resources = {r for rule in yaml.safe_load(role.read_text())["rules"] for r in rule["resources"]}
    assert {"gateways", "httproutes", "namespaces"} <= resources
