"""Every kind of invalid config: one line naming the key path and the fix, exit code 2, nothing planned."""

from __future__ import annotations

import copy

import pytest
import yaml

from components.checks.loader import load_environment
from tests.harness import config_errors, environment_config, raw_environment
from tools.plan.__main__ import main as plan_main


def test_checked_in_environments_are_valid():
    for env in ("dev", "prod"):
        load_environment(raw_environment(env))


def test_unknown_key_suggests_the_closest_valid_one():
    raw = raw_environment()
    raw["regions"][0]["zonez"] = raw["regions"][0].pop("zones")
    errors = config_errors(raw)
    assert "regions[0].zonez: unknown key; did you mean 'zones'?" in errors[-1]
    assert "regions[0].zones: required key is missing" in errors[0]


def test_unknown_top_level_key():
    raw = raw_environment()
    raw["tenant"] = raw.pop("tenants")
    assert any(e.startswith("tenant: unknown key; did you mean 'tenants'?") for e in config_errors(raw))


def test_wrong_type_names_expected_kind_and_value():
    raw = raw_environment()
    raw["regions"][0]["systemPool"]["maxSize"] = "four"
    assert config_errors(raw) == [
        "regions[0].systemPool.maxSize: expected a whole number, got 'four' (str); fix the value"
    ]


def test_unquoted_kubernetes_version_is_a_type_error():
    raw = raw_environment()
    raw["regions"][0]["kubernetesVersion"] = 1.33
    assert config_errors(raw) == [
        "regions[0].kubernetesVersion: expected a string (quote it), got 1.33 (float); fix the value"
    ]


def test_unknown_cloud_lists_the_supported_ones():
    raw = raw_environment()
    raw["regions"][0]["cloud"] = "azure"
    assert config_errors(raw) == ["regions[0].cloud: 'azure' is not allowed; use one of 'aws' or 'gcp'"]


def test_a_region_without_cloud_is_told_so_alone_when_nothing_else_is_wrong():
    raw = raw_environment()
    del raw["regions"][0]["cloud"]
    assert config_errors(raw) == ["regions[0].cloud: required key is missing; add `cloud` (see docs/configuration.md)"]
    # a key of one cloud only (GCP's project) is a mistake only once the cloud is known
    raw["regions"][0]["project"] = "acme-inference"
    assert config_errors(raw) == ["regions[0].cloud: required key is missing; add `cloud` (see docs/configuration.md)"]


def test_a_region_without_cloud_also_reports_what_no_cloud_accepts():
    raw = raw_environment()
    region = raw["regions"][0]
    del region["cloud"]
    region["zones"] = "us-east-1a"
    region["network"]["cidrs"] = region["network"].pop("cidr")
    assert config_errors(raw) == [
        "regions[0].cloud: required key is missing; add `cloud` (see docs/configuration.md)",
        "regions[0].zones: expected a list, got 'us-east-1a' (str); fix the value",
        "regions[0].network.cidr: required key is missing; add `cidr` (see docs/configuration.md)",
        # the keys of either cloud's network: the entry's cloud is not known
        "regions[0].network.cidrs: unknown key; did you mean 'cidr'? valid keys here: acceleratorCidr, cidr, "
        "controlPlaneCidr, nat, podsCidr, servicesCidr",
    ]


@pytest.mark.parametrize(("cloud", "shown"), [(None, "None"), ("azure", "'azure'"), (["aws"], "['aws']")])
def test_a_region_with_no_clouds_cloud_also_reports_what_no_cloud_accepts(cloud, shown):
    raw = raw_environment()
    raw["regions"][0]["cloud"] = cloud  # blank (`cloud:`), another cloud, a list: as good as missing
    raw["regions"][0]["zones"] = "us-east-1a"
    assert config_errors(raw) == [
        f"regions[0].cloud: {shown} is not allowed; use one of 'aws' or 'gcp'",
        "regions[0].zones: expected a list, got 'us-east-1a' (str); fix the value",
    ]


def test_unknown_region_and_zone():
    raw = raw_environment()
    raw["regions"][0]["region"] = "us-east-9"
    errors = config_errors(raw)
    assert errors[0].startswith("regions[0].region: 'us-east-9' is not a known aws region; use one of us-east-1,")
    raw = raw_environment()
    raw["regions"][0]["zones"][1] = "us-east-1z"
    assert config_errors(raw)[0].startswith("regions[0].zones[1]: 'us-east-1z' is not a zone of us-east-1; use one of")


def test_gpu_pool_zone_outside_region_zones():
    raw = raw_environment("prod")
    raw["regions"][0]["gpuPools"][0]["zones"] = ["us-east-1f"]
    assert config_errors(raw)[0].startswith("regions[0].gpuPools[0].zones[0]: 'us-east-1f' is not one of this region's")


def test_unsupported_kubernetes_version():
    raw = raw_environment()
    raw["regions"][0]["kubernetesVersion"] = "1.20"
    assert config_errors(raw) == ["regions[0].kubernetesVersion: '1.20' is not supported on aws; use one of 1.33, 1.34"]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (("systemPool",), "regions[0].systemPool.minSize: minSize 5 is greater than maxSize 4"),
        (("gpuPools", 0), "regions[0].gpuPools[0].minSize: minSize 5 is greater than maxSize 2"),
    ],
)
def test_min_greater_than_max(path, message):
    raw = raw_environment()
    target = raw["regions"][0]
    for part in path:
        target = target[part]
    target["minSize"] = 5
    assert config_errors(raw)[0].startswith(message)


def test_replicas_min_greater_than_max():
    raw = raw_environment()
    raw["models"][0]["placements"][0].update(minReplicas=3, maxReplicas=2)
    # The queue's capacity check, a later stage, would count those 3 replicas: a consequence, not reported.
    assert config_errors(raw) == [
        "models[0].placements[0].minReplicas: minReplicas 3 is greater than maxReplicas 2; "
        "lower minReplicas or raise maxReplicas"
    ]


@pytest.mark.parametrize(
    ("collection", "expected"),
    [
        ("regions", "regions[1]: duplicate region name 'use1' (also at index 0)"),
        ("models", "models[2]: duplicate model name 'llama-3-1-8b' (also at index 0)"),
        ("tenants", "tenants[1]: duplicate tenant name 'research' (also at index 0)"),
    ],
)
def test_duplicate_names(collection, expected):
    raw = raw_environment()
    raw[collection].append(copy.deepcopy(raw[collection][0]))
    assert expected in config_errors(raw)[0]


def test_duplicate_gpu_pool_names():
    raw = raw_environment()
    raw["regions"][0]["gpuPools"].append(copy.deepcopy(raw["regions"][0]["gpuPools"][0]))
    assert config_errors(raw)[0].startswith("regions[0].gpuPools[2]: duplicate pool name 'l40s'")


def test_dangling_references():
    raw = raw_environment()
    raw["models"][0]["placements"][0]["region"] = "euw1"
    raw["tenants"][0]["models"] = ["gpt-5"]
    raw["federation"] = {"enabled": False, "host": "euw1"}
    assert config_errors(raw) == [
        "models[0].placements[0].region: no region named 'euw1'; use one of use1",
        "tenants[0].models[0]: no model named 'gpt-5'; use one of llama-3-1-8b, qwen2-5-7b",
        "federation.host: no region named 'euw1'; use one of use1",
    ]


def test_placement_on_unknown_pool():
    raw = raw_environment()
    raw["models"][0]["placements"][0]["pool"] = "h100"
    assert config_errors(raw) == [
        "models[0].placements[0].pool: region 'use1' has no GPU pool 'h100' (pools: l40s, a100-mig); "
        "add the pool to the region or fix the name"
    ]


def test_missing_required_key():
    raw = raw_environment()
    del raw["regions"][0]["systemPool"]["machineType"]
    assert config_errors(raw) == [
        "regions[0].systemPool.machineType: required key is missing; add `machineType` (see docs/configuration.md)"
    ]


def test_gcp_region_requires_project_and_ranges():
    raw = raw_environment("prod")
    gcp = raw["regions"][2]
    del gcp["project"]
    del gcp["network"]["podsCidr"]
    errors = config_errors(raw)
    assert "regions[2].project: required on GCP; set the project id to deploy into" in errors
    assert "regions[2].network.podsCidr: required on GCP; add a CIDR range" in errors


def test_network_ranges_must_not_overlap_and_fit():
    raw = raw_environment("prod")
    raw["regions"][2]["network"]["servicesCidr"] = "10.64.0.0/20"
    assert config_errors(raw) == [
        "regions[2].network.servicesCidr: 10.64.0.0/20 overlaps podsCidr 10.64.0.0/14; choose non-overlapping ranges"
    ]
    raw = raw_environment()
    raw["regions"][0]["network"]["cidr"] = "10.10.0.0/24"
    assert config_errors(raw) == [
        "regions[0].network.cidr: 10.10.0.0/24 is too small for 2 zones (private subnets would be /26); "
        "use a /22 or larger"
    ]


def test_world_open_api_endpoint_is_rejected():
    raw = raw_environment()
    raw["regions"][0]["apiAccess"]["publicCidrs"] = ["0.0.0.0/0"]
    assert config_errors(raw)[0].startswith(
        "regions[0].apiAccess.publicCidrs[0]: opens the Kubernetes API to the whole"
    )


def test_invalid_name():
    raw = raw_environment()
    raw["regions"][0]["name"] = "US_East"
    assert config_errors(raw)[0].startswith("regions[0].name: 'US_East' is not a valid name; use 1-40 lowercase")


def test_federation_needs_two_clusters():
    raw = raw_environment()
    raw["federation"] = {"enabled": True, "host": "use1"}
    assert config_errors(raw) == [
        "federation.enabled: federation needs at least two clusters; add a region or disable it"
    ]


# --- the command line: exit code 2, no traceback, nothing written ------------------------------------


@pytest.fixture
def project(tmp_path):
    """A project directory with this repo's program and a stack file the test writes."""
    from tools.plan.runner import PROJECT_DIR

    for name in ("Pulumi.yaml", "__main__.py"):
        (tmp_path / name).write_text((PROJECT_DIR / name).read_text())
    return tmp_path


def _write_env(project, name: str, config: dict) -> None:
    (project / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": config}))


def test_cli_invalid_config_exits_2_with_one_line_per_problem(project, capsys):
    config = environment_config("dev")
    config["inference-platform:regions"][0]["cloud"] = "azure"
    config["inference-platform:tenants"][0]["models"] = ["nope"]
    _write_env(project, "broken", config)
    code = plan_main(["broken", "--project-dir", str(project), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines() == [
        "error: Pulumi.broken.yaml: regions[0].cloud: 'azure' is not allowed; use one of 'aws' or 'gcp'",
    ]
    assert "Traceback" not in err
    assert not (project / "build").exists()


def test_cli_semantic_errors_are_all_reported(project, capsys):
    config = environment_config("dev")
    config["inference-platform:regions"][0]["zones"] = ["us-east-1a", "us-east-1q"]
    config["inference-platform:tenants"][0]["models"] = ["nope"]
    _write_env(project, "broken", config)
    assert plan_main(["broken", "--project-dir", str(project), "--quiet"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("error: Pulumi.broken.yaml: regions[0].zones[1]: 'us-east-1q' is not a zone")
    # the MIG pool lived in us-east-1b, which the region no longer lists
    assert lines[1].startswith("error: Pulumi.broken.yaml: regions[0].gpuPools[1].zones[0]: 'us-east-1b' is not one")
    assert lines[2] == (
        "error: Pulumi.broken.yaml: tenants[0].models[0]: no model named 'nope'; use one of llama-3-1-8b, qwen2-5-7b"
    )


def test_cli_yaml_syntax_error_names_line_and_column(project, capsys):
    (project / "Pulumi.broken.yaml").write_text(
        "config:\n  inference-platform:regions:\n    - name: a\n   cloud: aws\n"
    )
    assert plan_main(["broken", "--project-dir", str(project), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Pulumi.broken.yaml:4:4: YAML syntax error:")
    assert "Traceback" not in err


def test_cli_missing_stack_file_lists_known_environments(project, capsys):
    _write_env(project, "dev", environment_config("dev"))
    assert plan_main(["staging", "--project-dir", str(project), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: Pulumi.staging.yaml not found; create it (start from Pulumi.dev.yaml) or use ENV=dev"
    )


@pytest.mark.plan
def test_cli_plans_an_environment_it_has_never_seen(project, capsys):
    config = environment_config("dev")
    config["inference-platform:regions"][0]["name"] = "euw1"
    config["inference-platform:regions"][0]["region"] = "eu-west-1"
    config["inference-platform:regions"][0]["zones"] = ["eu-west-1a", "eu-west-1b"]
    for pool in config["inference-platform:regions"][0]["gpuPools"]:
        pool.pop("zones", None)
    for model in config["inference-platform:models"]:
        model["placements"][0]["region"] = "euw1"
    config["inference-platform:tenants"][0]["gpuQuotas"][0]["region"] = "euw1"
    _write_env(project, "staging", config)
    assert plan_main(["staging", "--project-dir", str(project), "--quiet"]) == 0
    plan_json = project / "build" / "staging" / "plan.json"
    assert plan_json.exists()
    assert '"staging-euw1"' in plan_json.read_text()


def test_mistakes_of_every_stage_come_in_one_run():
    """A pricing mistake (checked first), a rollout wave naming no region (second stage) and a minimum that does not
    fit its pool (capacity, last): one run names all three."""
    raw = raw_environment()
    raw["pricing"] = {"discountPercent": 10}
    raw["rollout"] = {"confirmBefore": ["no-such-wave"]}
    raw["models"][0]["placements"][0].update(minReplicas=40, maxReplicas=40)
    paths = [line.split(":")[0] for line in config_errors(raw)]
    assert "pricing.discountSource" in paths or "pricing" in paths, paths
    assert any(p.startswith("rollout") for p in paths), paths
    assert any(p.startswith("regions[0].gpuPools") for p in paths), paths


def test_an_engine_flag_mistake_comes_with_a_mistake_in_the_pool_the_model_runs_on():
    """engineArgs are the model's own (no later check reads them): a wrong machine type on the model's pool does not
    hide them until the next run."""
    raw = raw_environment()
    raw["regions"][0]["gpuPools"][0]["machineType"] = "p5.nonexistent"
    raw["models"][0]["engineArgs"] = {"max-num-batched-tokens": "8k"}
    paths = [line.split(":")[0] for line in config_errors(raw)]
    assert "regions[0].gpuPools[0].machineType" in paths, paths
    assert "models[0].engineArgs['max-num-batched-tokens']" in paths, paths


def test_cli_refuses_a_secure_value_in_a_shared_environment_file_as_pulumi_up_would(project, capsys):
    """A perRegion environment has no stack `<env>` that could decrypt a `secure:` value in its file: every region
    stack's `pulumi up` refuses it (stacks/config.py), and so does `make plan`, with the same line."""
    config = environment_config("prod")
    config["inference-platform:gateway"]["externalProviders"] = [
        {"name": "openai", "type": "openai", "models": ["gpt-4o"], "apiKey": {"secure": "AAABAJ1x"}}
    ]
    _write_env(project, "shared", config)
    assert plan_main(["shared", "--project-dir", str(project), "--quiet"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "error: Pulumi.shared.yaml: inference-platform:gateway: Pulumi.shared.yaml holds a `secure:` value, which only "
        "stack 'shared' could decrypt; set it on the stack that uses it: pulumi config set --secret --path "
        "-s shared.use1 'inference-platform:gateway' <value>"
    ]
    assert not (project / "build").exists()


def test_cli_refuses_stack_names_pulumi_would_not_create(project, capsys):
    config = environment_config("prod")
    _write_env(project, "prod.eu", config)  # a perRegion environment named with '.'
    assert plan_main(["prod.eu", "--project-dir", str(project), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "environment name 'prod.eu' holds '.'" in err and "Traceback" not in err
