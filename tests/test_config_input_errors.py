"""Mistakes in the stack file itself: keys outside what the program reads, duplicate keys, empty files,
credentials in plain text, system-pool machine types. Each: its exact line, exit code 2, nothing written."""

from __future__ import annotations

import shutil

import pytest
import yaml

from components.checks.loader import load_environment
from components.config.stackfile import PlanInputError
from tests.harness import apply_ops, config_errors, environment_config, raw_environment
from tools.plan.__main__ import main as plan_main
from tools.plan.runner import PROJECT_DIR, build_plan
from tools.plan.stackfile import input_error_lines, load_stack_config


def _project(tmp_path, text: str):
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "Pulumi.t.yaml").write_text(text)
    return tmp_path


def stack_file_errors(tmp_path, text: str) -> list[str]:
    """The lines `plan` prints for a stack file (read from tmp_path, planned with this project's program)."""
    from components.config.base import ConfigError

    try:
        build_plan(load_stack_config(_project(tmp_path, text), "t"))
    except (PlanInputError, ConfigError) as exc:
        return input_error_lines(exc, "t")
    pytest.fail("the stack file was accepted")


def _dev_with(**extra) -> str:
    config = environment_config("dev")
    config.update(extra)
    return yaml.safe_dump({"config": config}, sort_keys=False)


# --- the stack file ----------------------------------------------------------------------------------------


def test_a_duplicate_key_names_both_lines(tmp_path):
    text = (
        "config:\n"
        "  inference-platform:production: true\n"
        "  inference-platform:labelDomain: example.com\n"
        "  inference-platform:production: false\n"
    )
    assert stack_file_errors(tmp_path, text) == [
        "error: Pulumi.t.yaml:4: duplicate key 'inference-platform:production' (first at line 2); keep one of them"
    ]


def test_a_duplicate_key_deep_inside_a_value(tmp_path):
    lines = _dev_with().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.strip() == "minSize: 0")
    lines.insert(first + 1, lines[first].replace("minSize: 0", "minSize: 1"))
    assert stack_file_errors(tmp_path, "".join(lines)) == [
        f"error: Pulumi.t.yaml:{first + 2}: duplicate key 'minSize' (first at line {first + 1}); keep one of them"
    ]


def test_a_misspelled_top_level_key(tmp_path):
    assert stack_file_errors(tmp_path, "configs:\n  inference-platform:production: true\n") == [
        "error: Pulumi.t.yaml: configs: not a stack file key; did you mean 'config'? "
        "the file's keys are config, encryptedkey, encryptionsalt, environment, secretsprovider"
    ]


@pytest.mark.parametrize("text", ["", "config: {}\n", "config:\n"], ids=["empty", "empty-mapping", "null"])
def test_an_empty_file_says_so(tmp_path, text):
    assert stack_file_errors(tmp_path, text) == [
        "error: Pulumi.t.yaml: no `config:` entries; describe the environment there (start from Pulumi.dev.yaml)"
    ]


# --- namespaces ---------------------------------------------------------------------------------------------


def test_a_misspelled_project_namespace_is_not_dropped(tmp_path):
    """The worst case: prod planned with production off, every stateful resource unprotected."""
    text = _dev_with(**{"inference-platfrom:production": True})
    assert stack_file_errors(tmp_path, text) == [
        "error: Pulumi.t.yaml: inference-platfrom:production: the program reads no 'inference-platfrom' namespace; "
        "did you mean 'inference-platform:production'? its keys are inference-platform:<key> and pulumi:<key>"
    ]


def test_provider_namespaces_are_never_read(tmp_path):
    assert stack_file_errors(tmp_path, _dev_with(**{"aws:region": "us-west-2"})) == [
        "error: Pulumi.t.yaml: aws:region: provider configuration is never read: every resource uses the provider "
        "the program creates for its region (default providers are disabled); remove it and set "
        "inference-platform:regions instead"
    ]


def test_an_unrelated_namespace(tmp_path):
    assert stack_file_errors(tmp_path, _dev_with(**{"datadog:apiUrl": "x"})) == [
        "error: Pulumi.t.yaml: datadog:apiUrl: the program reads no 'datadog' namespace; "
        "its keys are inference-platform:<key> and pulumi:<key>"
    ]


def test_only_foreign_keys_report_them_not_missing_regions(tmp_path):
    text = "config:\n  inference-platfrom:regions: []\n  pulumi:disable-default-providers: ['*']\n"
    assert stack_file_errors(tmp_path, text) == [
        "error: Pulumi.t.yaml: inference-platfrom:regions: the program reads no 'inference-platfrom' namespace; "
        "did you mean 'inference-platform:regions'? its keys are inference-platform:<key> and pulumi:<key>"
    ]


def test_pulumi_keys_alone_say_the_environment_is_missing(tmp_path):
    assert stack_file_errors(tmp_path, "config:\n  pulumi:disable-default-providers: ['*']\n") == [
        "error: Pulumi.t.yaml: no inference-platform: keys in the stack's config; describe the environment "
        "(start from Pulumi.dev.yaml)"
    ]


# --- credentials --------------------------------------------------------------------------------------------


def _with_openai(api_key) -> str:
    config = environment_config("dev")
    gateway = config["inference-platform:gateway"]
    gateway["externalProviders"] = [{"name": "openai", "type": "openai", "models": ["gpt-4o-mini"], "apiKey": api_key}]
    config["inference-platform:tenants"][0]["models"].append("gpt-4o-mini")
    return yaml.safe_dump({"config": config}, sort_keys=False)


def test_a_plaintext_credential_is_refused_with_the_command_that_encrypts_it(tmp_path):
    assert stack_file_errors(tmp_path, _with_openai("sk-live-0123456789abcdef")) == [
        "error: Pulumi.t.yaml: gateway.externalProviders[0].apiKey: a credential in plain text; store it "
        "encrypted with `pulumi config set --secret --path 'gateway.externalProviders[0].apiKey' <value>` "
        "(the file then holds a `secure:` value)"
    ]


@pytest.mark.plan
def test_an_encrypted_credential_plans(tmp_path):
    project = _project(tmp_path, _with_openai({"secure": "v1:ciphertext"}))
    plan = build_plan(load_stack_config(project, "t"))
    assert any(r.inputs.get("metadata", {}).get("name") == "openai-credentials" for r in plan.kubernetes_objects())


def test_a_refused_stack_file_writes_nothing(tmp_path, capsys):
    project = _project(tmp_path, _dev_with(**{"inference-platfrom:production": True}))
    shutil.copy(PROJECT_DIR / "__main__.py", project / "__main__.py")
    out = tmp_path / "out"
    assert plan_main(["t", "--project-dir", str(project), "--out", str(out), "--quiet"]) == 2
    assert not out.exists()
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.plan
def test_a_refused_stack_file_withdraws_the_previous_plan_and_keeps_other_files(tmp_path, capsys):
    """A failed plan must not leave yesterday's plan.md looking like the plan of today's config."""
    project = _project(tmp_path, _dev_with())
    shutil.copy(PROJECT_DIR / "__main__.py", project / "__main__.py")
    out = tmp_path / "out"
    assert plan_main(["t", "--project-dir", str(project), "--out", str(out), "--quiet"]) == 0
    assert (out / "plan.md").is_file() and (out / "manifests").is_dir()
    (out / "my-notes.txt").write_text("not the plan's")
    (project / "Pulumi.t.yaml").write_text(_dev_with(**{"inference-platfrom:production": True}))
    assert plan_main(["t", "--project-dir", str(project), "--out", str(out), "--quiet"]) == 2
    assert sorted(p.name for p in out.rglob("*")) == ["my-notes.txt"]
    captured = capsys.readouterr()
    assert f"removed the previous plan from {out}" in captured.out
    assert "Traceback" not in captured.err


# --- the system pool's machine type --------------------------------------------------------------------------

_AWS_FAMILIES = "use an AWS type of c6i, c7i, m5, m6a, m6i, m7a, m7i, r6i, r7i (.large to .16xlarge)"


@pytest.mark.parametrize(
    ("env", "region", "machine_type", "message"),
    [
        (
            "dev",
            0,
            "m7i.xlargee",
            "'m7i.xlargee' is not a known aws system-pool machine type; did you mean 'm7i.xlarge'? " + _AWS_FAMILIES,
        ),
        (
            "dev",
            0,
            "n2-standard-8",
            "'n2-standard-8' is a GCP machine type and this region is on aws; " + _AWS_FAMILIES,
        ),
        (
            "dev",
            0,
            "p5.48xlarge",
            "'p5.48xlarge' is a GPU machine type; the system pool runs controllers and add-ons on CPU nodes; "
            + _AWS_FAMILIES,
        ),
        (
            "prod",
            2,
            "m7i.xlarge",
            "'m7i.xlarge' is an AWS machine type and this region is on gcp; use a GCP type of c3-standard, "
            "e2-standard, n2-highmem, n2-standard, n2d-standard, n4-standard (-<vCPUs>)",
        ),
        ("dev", 0, "t3.micro", "'t3.micro' is not a known aws system-pool machine type; " + _AWS_FAMILIES),
    ],
    ids=["typo", "other-cloud", "gpu-type", "aws-type-on-gcp", "unknown"],
)
def test_system_pool_machine_type_is_checked_against_the_catalog(env, region, machine_type, message):
    raw = raw_environment(env)
    raw["regions"][region]["systemPool"]["machineType"] = machine_type
    assert config_errors(raw) == [f"regions[{region}].systemPool.machineType: {message}"]


# --- combinations that mean nothing ---------------------------------------------------------------------------


def _errors(env: str, *ops) -> list[str]:
    return config_errors(apply_ops(raw_environment(env), ops))


def test_snake_case_keys_are_not_a_second_spelling():
    assert _errors("dev", ("rename", "regions[0].gpuPools[0].maxSize", "max_size")) == [
        "regions[0].gpuPools[0].max_size: unknown key; did you mean 'maxSize'? keys are camelCase"
    ]


@pytest.mark.parametrize(
    "domain", ["Inference-Platform.io", "inference platform.io", "-x.io", "a..b", "x" * 64 + ".io"]
)
def test_label_domain_must_be_a_dns_subdomain(domain):
    assert _errors("dev", ("set", "labelDomain", domain)) == [
        f"labelDomain: {domain!r} is not a DNS subdomain, which Kubernetes requires of a label key's prefix; use "
        "lowercase letters, digits, '-' and '.', e.g. inference-platform.example.com"
    ]


def test_a_model_listed_twice_for_a_tenant():
    assert _errors("dev", ("append", "tenants[0].models", "llama-3-1-8b")) == [
        "tenants[0].models[2]: 'llama-3-1-8b' is listed twice (also at index 0); remove one"
    ]


def test_a_budget_without_limits():
    assert _errors("dev", ("set", "tenants[0].budget", {})) == [
        "tenants[0].budget: sets no limit; add inputTokens, outputTokens, totalTokens or requests, or remove budget"
    ]


def test_a_gateway_no_tenant_may_call():
    ops = (("set", "tenants", []), ("del", "models[0].tenant"), ("del", "models[1].tenant"))
    assert _errors("dev", *ops) == [
        "tenants: the gateway serves llama-3-1-8b, qwen2-5-7b but no tenant has a key, so it refuses every "
        "request; add a tenant with the models it may call"
    ]


@pytest.mark.parametrize("key", ["podsCidr", "controlPlaneCidr", "acceleratorCidr"])
def test_gcp_only_network_keys_on_aws(key):
    """An AWS region's network is the AWS model: a GKE range is no key of it."""
    assert _errors("dev", ("set", f"regions[0].network.{key}", "10.99.0.0/16")) == [
        f"regions[0].network.{key}: unknown key: GCP only: an EKS cluster takes pod addresses from the VPC (VPC CNI); "
        "remove it"
    ]


def test_split_ranges_covering_the_internet_open_the_api():
    assert _errors("dev", ("set", "regions[0].apiAccess.publicCidrs", ["0.0.0.0/1", "128.0.0.0/1"])) == [
        "regions[0].apiAccess.publicCidrs: 0.0.0.0/1, 128.0.0.0/1 cover the whole internet, opening the Kubernetes "
        "API to it; list your office/VPN or peer CIDRs instead"
    ]


def test_the_public_space_without_reserved_ranges_is_the_internet_too():
    """As the policy pack judges it: 224.0.0.0/3 (multicast, reserved) is no part of the internet."""
    cidrs = ["0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3"]
    assert _errors("dev", ("set", "regions[0].apiAccess.publicCidrs", cidrs)) == [
        f"regions[0].apiAccess.publicCidrs: {', '.join(cidrs)} cover the whole internet, opening the Kubernetes "
        "API to it; list your office/VPN or peer CIDRs instead"
    ]


def test_ranges_short_of_the_internet_pass():
    raw = raw_environment("dev")
    raw["regions"][0]["apiAccess"]["publicCidrs"] = ["0.0.0.0/1", "128.0.0.0/2"]
    load_environment(raw)


def test_karmada_api_open_to_the_internet():
    assert _errors("prod", ("set", "federation.apiServer", {"allowedCidrs": ["0.0.0.0/0"]})) == [
        "federation.apiServer.allowedCidrs: 0.0.0.0/0 cover the whole internet, opening the Karmada API to it; "
        "list your office/VPN or peer CIDRs instead"
    ]


def test_production_needs_two_system_nodes():
    assert _errors("prod", ("set", "regions[1].systemPool.minSize", 1)) == [
        "regions[1].systemPool.minSize: production runs controllers and webhooks on at least 2 system nodes (one "
        "node's loss stops admission of Volcano queues, PodGroups and jobs, and of KServe's model-server pods, all "
        "fail-closed webhooks); set minSize to 2 or more"
    ]


def test_a_draft_of_another_vocabulary():
    op = ("set", "models[0].speculativeDecoding", {"method": "draft", "draftPreset": "mistral-7b"})
    errors = _errors("prod", ("set", "models[0].preset", "llama-3.1-70b"), op)
    assert "models[0].speculativeDecoding.draftPreset: 'mistral-7b' has a 32768-token vocabulary and " in errors[0]
    assert errors[0].endswith(
        "'llama-3.1-70b' 128256: a draft must share its target's tokenizer; pick a draft of the same family or use "
        "method ngram"
    )


def test_spot_capacity_for_a_tier_that_must_not_be_preempted_in_production():
    assert _errors("prod", ("set", "regions[0].gpuPools[1].capacity", {"type": "spot"})) == [
        "models[1].placements[0].pool: 'l40s' runs on spot capacity, which the cloud reclaims at short notice, and "
        "tier 'realtime' must not be preempted in production; place the model on an onDemand, reservation or "
        "capacityBlock pool, or give it a preemptible tier"
    ]


def test_spot_capacity_is_fine_outside_production():
    raw = raw_environment("dev")
    raw["regions"][0]["gpuPools"][0]["capacity"] = {"type": "spot"}
    load_environment(raw)
