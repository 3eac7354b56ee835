"""CI fans out from discovery, not from lists: the environments found, each stack on a runner that reaches it;
the workflow stays valid against GitHub's workflow schema."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from components.checks.loader import load_environment
from tests.harness import ENVIRONMENTS_DIR, raw_environment
from tools.plan.runner import PROJECT_DIR
from tools.rollout.__main__ import main
from tools.rollout.ci import environments, stack_matrix

WORKFLOW = PROJECT_DIR / ".github" / "workflows" / "plan.yml"


def test_the_workflow_is_valid_against_the_github_workflow_schema():
    checker = Path(sys.executable).with_name("check-jsonschema")
    done = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_plan_and_preview_matrices_come_from_discovery():
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    assert jobs["plan"]["strategy"]["matrix"] == {"env": "${{ fromJSON(needs.discover.outputs.environments) }}"}
    assert jobs["preview"]["strategy"]["matrix"] == {"include": "${{ fromJSON(needs.discover.outputs.stacks) }}"}
    discovery = "\n".join(step.get("run", "") for step in jobs["discover"]["steps"])
    assert "python -m tools.rollout --list-environments --json" in discovery
    assert 'python -m tools.rollout "$env" --list-stacks --json' in discovery


def test_a_pull_request_previews_as_its_own_read_only_identity_on_a_hosted_runner():
    """Branch code never runs on a runner inside a prod network nor with the deploy identity's secrets."""
    text = WORKFLOW.read_text()
    preview = yaml.safe_load(text)["jobs"]["preview"]
    assert preview["runs-on"] == "ubuntu-24.04" and preview["environment"] == "preview"
    assert "github.event.pull_request.head.repo.full_name == github.repository" in preview["if"]
    for deploy_secret in ("secrets.PULUMI_ACCESS_TOKEN", "secrets.AWS_ROLE_ARN", "secrets.GCP_SERVICE_ACCOUNT"):
        assert deploy_secret not in text, deploy_secret
    steps = preview["steps"]
    # The kubeconfigs exec `aws eks get-token` and gke-gcloud-auth-plugin: both are installed before the preview.
    names = [s.get("name") or s.get("uses") for s in steps]
    assert names.index("AWS CLI (EKS kubeconfigs)") < names.index("pulumi/actions@v6")
    (gcloud,) = [s for s in steps if s.get("uses") == "google-github-actions/setup-gcloud@v2"]
    assert gcloud["with"]["install_components"] == "gke-gcloud-auth-plugin"
    assert names.index("google-github-actions/setup-gcloud@v2") < names.index("pulumi/actions@v6")


def test_the_preview_runs_the_pack_folder_it_assembles_first():
    """`--policy-pack policies` no longer runs (the pack imports itself and platform_catalog from its own folder)."""
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["preview"]["steps"]
    runs = [s.get("run") for s in steps]
    (pulumi,) = [s for s in steps if s.get("uses") == "pulumi/actions@v6"]
    assert pulumi["with"]["policyPacks"] == "build/policy-pack"
    assert runs.index("make policy-pack") < steps.index(pulumi)
    assert runs.index("make plan ENV=${{ matrix.env }}") < runs.index("make policy-pack")


def test_environments_are_the_stack_files_that_describe_one(tmp_path):
    assert environments(ENVIRONMENTS_DIR) == ["dev", "prod"]  # not prod's stack files
    shutil.copy(ENVIRONMENTS_DIR / "Pulumi.prod.yaml", tmp_path / "Pulumi.prod.yaml")
    (tmp_path / "Pulumi.prod.use1.yaml").write_text("secretsprovider: awskms://alias/pulumi\n")
    (tmp_path / "Pulumi.scratch.yaml").write_text("config: {}\n")
    assert environments(tmp_path) == ["prod"]
    (tmp_path / "Pulumi.broken.yaml").write_text("config:\n  inference-platform:regions: [\n")
    assert environments(tmp_path) == ["broken", "prod"]  # its plan job says what is wrong


def test_region_stacks_run_inside_their_vpc_and_global_where_the_host_is():
    """prod's endpoints are private (deployer vpcRunner by default); global patches the host's Karmada service."""
    rows = stack_matrix(load_environment(raw_environment("prod")), "prod")
    assert [(r["stack"], r["clouds"], r["runsOn"]) for r in rows] == [
        ("prod.use1", ["aws"], ["self-hosted", "inference-platform", "prod-use1"]),
        ("prod.usw2", ["aws"], ["self-hosted", "inference-platform", "prod-usw2"]),
        ("prod.usc1", ["gcp"], ["self-hosted", "inference-platform", "prod-usc1"]),
        ("prod.global", ["aws", "gcp"], ["self-hosted", "inference-platform", "prod-use1"]),
    ]


def test_declared_runner_labels_and_an_unfederated_global_stack():
    raw = raw_environment("prod")
    raw["regions"][1]["deployer"] = {"kind": "vpcRunner", "runnerLabel": "usw2-runner"}
    raw["federation"] = {"enabled": False}
    for model in raw["models"]:
        model.pop("federated", None)
    rows = {r["stack"]: r["runsOn"] for r in stack_matrix(load_environment(raw), "prod")}
    assert rows["prod.usw2"] == "usw2-runner"
    assert rows["prod.global"] == "ubuntu-24.04"  # only cloud APIs to call: bucket replication


def test_list_stacks_prints_one_json_line_for_from_json(capsys, fixture_project):
    assert main(["dev", "--project-dir", str(fixture_project), "--list-stacks", "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert json.loads(out) == [
        {
            "env": "dev",
            "stack": "dev",
            "kind": "environment",
            "regions": ["use1"],
            "clouds": ["aws"],
            "cloudRegions": ["us-east-1"],
            "runsOn": ["self-hosted", "inference-platform", "dev-use1"],
        }
    ]


def test_every_stacks_preview_can_decrypt_with_the_secrets_key():
    """A KMS secrets provider is opened with kms:Decrypt for any preview (KMS_SECRETS_PROVIDER_DECRYPTS_ON_EVERY_READ):
    the AWS preview identity (the secrets key's) is configured for every stack, a GCP-only one (prod.usc1) too, and the
    workflow says what decrypting exposes."""
    text = WORKFLOW.read_text()
    steps = yaml.safe_load(text)["jobs"]["preview"]["steps"]
    (aws,) = [s for s in steps if s.get("uses") == "aws-actions/configure-aws-credentials@v4"]
    assert aws["if"] == "steps.clouds.outputs.ready == 'true'"
    assert "us-east-1" in aws["with"]["aws-region"]  # a GCP stack's first region is no AWS region
    assert "no kms:Decrypt" not in text
    assert "kms:Decrypt" in text and "every" in text and "secret of the stacks" in text
