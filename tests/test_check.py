"""`make check ENV=<env>` (tools/check.py): a team's own environment, one this project has never seen, planned with
the policy pack and the bring-up check, its manifests scanned by Checkov, the rehearsal when built; one summary.

Checkov runs in its own virtualenv (`make check` installs it; CI runs it on dev and prod): here a stand-in script
records how it is called and answers with a chosen exit code, since the runner, not Checkov, is under test.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import tools.check
from tests.harness import project_with_environments
from tests.team_environments import staging
from tools.check import FAIL, NOT_RUN, PASS, Step, check, checkov_step, main, plan_steps, rehearsal_step, summary
from tools.plan.runner import PROJECT_DIR


def _checkov(tmp_path: Path, code: int) -> Path:
    """A stand-in for checkov: writes its arguments to checkov.args beside it, exits `code`."""
    script = tmp_path / "bin" / "checkov"
    script.parent.mkdir()
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "$(dirname "$0")/checkov.args"\nexit {code}\n')
    script.chmod(0o755)
    return script


def _project(tmp_path: Path, staging_text: str) -> Path:
    (tmp_path / "project").mkdir()
    project = project_with_environments(tmp_path / "project")
    (project / "Pulumi.staging.yaml").write_text(staging_text)
    return project


def test_make_check_runs_the_check_with_the_checkov_it_installs():
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run(
        # -W: as if the Checkov pins had just changed, whatever this checkout has built already
        ["make", "-n", "-W", "requirements-checkov.txt", "check", "ENV=staging"],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    last = done.stdout.strip().splitlines()[-1]
    assert last == ".venv/bin/python -m tools.check staging --checkov build/checkov-venv/bin/checkov"
    assert "requirements-checkov.txt" in done.stdout  # the checkov virtualenv is (re)built first


@pytest.fixture(scope="module")
def staging_checked(tmp_path_factory):
    """`check` of a staging the project has never seen, with a Checkov that passes; the plan command's exit code and
    stderr lines recorded (its child process is the run's dearest part: ~2 s)."""
    tmp_path = tmp_path_factory.mktemp("staging")
    project = _project(tmp_path, staging())
    checkov = _checkov(tmp_path, 0)
    plans, run = [], tools.check.run

    def recording(command):
        result = run(command)
        if command[1:3] == ["-m", "tools.plan"]:
            plans.append(([*command], result))
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tools.check, "run", recording)
        code, steps = check("staging", project, checkov, rehearsal=lambda: "not built here")
    (plan,) = plans
    return project, checkov, code, steps, plan


@pytest.mark.slow
def test_a_staging_the_project_has_never_seen_passes_every_check(staging_checked):
    project, checkov, code, steps, _plan = staging_checked
    assert (code, steps) == (
        0,
        [
            Step("plan", PASS, "build/staging/"),
            Step("policy pack", PASS, "0 mandatory, 0 advisory finding(s)"),
            Step("bring-up", PASS, ""),
            Step("checkov", PASS, "scanned build/checkov-staging/"),
            Step("rehearsal", NOT_RUN, "not built here"),
        ],
    )
    scanned = project / "build" / "checkov-staging"
    called = (checkov.parent / "checkov.args").read_text().split()
    assert called == ["-d", str(scanned), "--framework", "kubernetes", "--compact", "--quiet", "--skip-download"]
    # what Checkov read: the staging's manifests (its cluster staging-usw2) and the pods KServe would make of its
    # two models' InferenceServices
    assert (scanned / "manifests" / "staging-usw2").is_dir()
    assert len(list((scanned / "kserve-pods").rglob("Pod-*.yaml"))) == 2


@pytest.mark.slow
def test_a_broken_environment_fails_with_its_config_error_and_exit_2(tmp_path, capsys):
    project = _project(tmp_path, staging().replace("cloud: aws", "cloud: azure"))
    checkov = _checkov(tmp_path, 0)
    assert main(["staging", "--project-dir", str(project), "--checkov", str(checkov)]) == 2
    captured = capsys.readouterr()
    assert [line for line in captured.err.splitlines() if line.startswith("error:")] == [
        "error: Pulumi.staging.yaml: regions[0].cloud: 'azure' is not allowed; use one of 'aws' or 'gcp'"
    ]
    assert "Traceback" not in captured.err
    assert captured.out.splitlines()[-7:] == [
        "check of Pulumi.staging.yaml:",
        "  plan         FAIL     Pulumi.staging.yaml refused: 1 error line(s) above",
        "  policy pack  not run  no plan",
        "  bring-up     not run  no plan",
        "  checkov      not run  no plan",
        "  rehearsal    not run  no plan",
        "invalid input (exit 2)",
    ]
    assert not (checkov.parent / "checkov.args").exists()
    assert not (project / "build" / "staging").exists()


@pytest.mark.slow
def test_a_failed_checkov_fails_the_check_and_the_others_still_report(staging_checked, tmp_path, monkeypatch):
    """The same staging: its plan command's run (the test above's: the same command on the same project, whose
    build/staging/ it wrote) answers again; the rest of the check runs anew, with a Checkov that fails."""
    project, _checkov_passing, _code, _steps, (plan_command, plan_result) = staging_checked
    run = tools.check.run
    monkeypatch.setattr(tools.check, "run", lambda command: plan_result if command == plan_command else run(command))
    code, steps = check("staging", project, _checkov(tmp_path, 1), rehearsal=lambda: "not built here")
    assert code == 1
    assert [(s.name, s.status) for s in steps] == [
        ("plan", PASS),
        ("policy pack", PASS),
        ("bring-up", PASS),
        ("checkov", FAIL),
        ("rehearsal", NOT_RUN),
    ]
    assert summary("staging", code, steps).splitlines()[-1] == "FAILED (exit 1)"


# --- each verdict from the plan's own lines (tools/plan/__main__.py prints them) -----------------------------------


def test_the_plans_error_lines_fail_the_check_they_belong_to(tmp_path):
    (tmp_path / "policy.json").write_text(
        json.dumps([{"enforcementLevel": "mandatory"}, {"enforcementLevel": "advisory"}])
    )
    errors = [
        "error: policy s3-tls-only: urn:pulumi:x::p::aws:s3/bucket:Bucket::b: the bucket allows plain HTTP",
        "error: bring-up: dev: gate health: use1 gateway needs a DNS record for use1.x; no stack creates it [f]",
        "error: dev-use1: Widget w (example.com/v1): no release or manifest of cluster dev-use1 installs "
        "Widget.example.com; install the CRD that serves it, or drop the object",
    ]
    assert plan_steps(errors, tmp_path) == [
        Step("plan", FAIL, "1 error(s) above"),
        Step("policy pack", FAIL, "1 mandatory, 1 advisory finding(s)"),
        Step("bring-up", FAIL, "1 violation(s) above"),
    ]
    (tmp_path / "policy.json").write_text("[]")
    assert [s.status for s in plan_steps([], tmp_path)] == [PASS, PASS, PASS]


def test_checkov_not_installed_is_a_failure_that_says_how_to_install_it(tmp_path):
    missing = tmp_path / "nowhere" / "checkov"
    assert checkov_step(tmp_path / "build" / "dev", missing) == Step(
        "checkov", FAIL, f"{missing} is not installed: `make check` builds it (requirements-checkov.txt)"
    )


def test_the_rehearsal_not_run_says_why_and_fails_nothing(tmp_path):
    step = rehearsal_step("dev", tmp_path, lambda: "binaries not built (etcd): run `make rehearsal-tools`")
    assert step == Step("rehearsal", NOT_RUN, "binaries not built (etcd): run `make rehearsal-tools`")
