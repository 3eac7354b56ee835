"""`make policy-check PLAN=...` re-judges a saved plan with exactly the verdict `make plan` gave, both ways."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest

from policies.check import check_saved_plan, main
from tests.harness import plan_for
from tools.plan.artifacts import write_plan
from tools.plan.runner import check_policy

ROOT = Path(__file__).resolve().parents[1]


def _written(plan, out: Path) -> tuple[Path, int]:
    """What `make plan` does after planning: judge, write, exit 1 on a mandatory violation."""
    evaluation = check_policy(plan)
    write_plan(plan, out)
    return out / "plan.json", (1 if evaluation.mandatory else 0)  # README: exits 1 on a mandatory violation


def _open_default_sg(plan) -> None:
    [sg] = [r for r in plan.resources if r.name == "use1-default-sg"]
    sg.inputs["ingress"] = [{"protocol": "-1", "fromPort": 0, "toPort": 0, "cidrBlocks": ["0.0.0.0/1", "128.0.0.0/1"]}]


@pytest.mark.plan
@pytest.mark.parametrize(("env", "insecure"), [("dev", False), ("prod", False), ("dev", True), ("prod", True)])
def test_saved_plan_gets_the_verdict_make_plan_gave(tmp_path, env, insecure):
    plan = copy.deepcopy(plan_for(env))
    if insecure:
        _open_default_sg(plan)
    plan_json, plan_exit = _written(plan, tmp_path)
    assert plan_exit == (1 if insecure else 0)
    saved = json.loads((tmp_path / "policy.json").read_text())

    # The same findings (the saved plan lists resources in dependency order, the live one in registration order).
    def key(finding: dict) -> tuple:
        return finding["policy"], finding["urn"], finding["message"]

    assert sorted((f.to_json() for f in check_saved_plan(plan_json).findings), key=key) == sorted(saved, key=key)
    assert main([str(plan_json)]) == plan_exit


@pytest.mark.plan
def test_the_command_exits_like_the_plan_and_make_fails_like_make_plan(tmp_path, capsys):
    plan = copy.deepcopy(plan_for("dev"))
    _open_default_sg(plan)
    plan_json, plan_exit = _written(plan, tmp_path)
    assert main([str(plan_json)]) == plan_exit == 1
    assert "error: policy network-no-internet-ingress:" in capsys.readouterr().err
    # make runs the command (`python -m policies.check`), which fails with its error: make reports a failed recipe as
    # 2, as it does for `make plan`; it passes what passes.
    target = ["make", "--no-print-directory", "policy-check", f"PLAN={plan_json}"]
    made = subprocess.run(target, cwd=ROOT, capture_output=True, text=True, check=False)
    assert made.returncode == 2, made.stderr
    # the command's own code, as make names it: 1, a mandatory violation
    assert "policy-check] Error 1" in made.stderr, made.stderr
    assert "error: policy network-no-internet-ingress:" in made.stderr
    clean_json, clean_exit = _written(copy.deepcopy(plan_for("dev")), tmp_path / "clean")
    assert clean_exit == 0
    clean = ["make", "--no-print-directory", "policy-check", f"PLAN={clean_json}"]
    assert subprocess.run(clean, cwd=ROOT, capture_output=True, check=False).returncode == 0


def test_invalid_input_exits_2(tmp_path):
    assert main([str(tmp_path / "missing.json")]) == 2  # README: 2 on invalid input
    (tmp_path / "plan.json").write_text(json.dumps({"resources": [{"urn": "u", "custom": True}]}))
    (tmp_path / "policy-config.json").write_text("{}")
    assert main([str(tmp_path / "plan.json")]) == 2  # written before property dependencies
