"""Build a Plan: validate config, then evaluate the real `__main__.py` under recording mocks."""

from __future__ import annotations

import runpy
import sys
from collections.abc import Callable
from pathlib import Path

import pulumi

from tools.plan.engine import PlannedResource, evaluate
from tools.plan.model import Plan
from tools.plan.phases import phase
from tools.plan.stackfile import StackConfig

PROJECT_DIR = Path(__file__).resolve().parents[2]


def build_plan(
    stack_config: StackConfig,
    project_dir: Path = PROJECT_DIR,
    on_register: Callable[[PlannedResource], None] | None = None,
) -> Plan:
    """Raises ConfigError before any resource is registered when the config is invalid."""
    if str(project_dir) not in sys.path:
        sys.path.insert(0, str(project_dir))
    from stacks.config import read_environment

    with phase("config"):
        pulumi.runtime.set_all_config(stack_config.config, stack_config.secret_keys)
        spec = read_environment()

    main = str(project_dir / "__main__.py")
    with phase("evaluate"):
        evaluation = evaluate(
            lambda: runpy.run_path(main, run_name="__main__"),
            project=stack_config.project,
            stack=stack_config.stack,
            config=stack_config.config,
            secret_keys=stack_config.secret_keys,
            on_register=on_register,
        )
    return Plan(environment=stack_config.stack, project=stack_config.project, evaluation=evaluation, spec=spec)


def check_policy(plan: Plan, settings=None):
    """Run the policy pack in-process on the plan; fills plan.policy* and returns the pack's evaluation."""
    from policies.offline import evaluate_plan, plan_settings, verdicts

    with phase("policy"):
        evaluation = evaluate_plan(plan, settings)
        plan.policy = [f.to_json() for f in evaluation.findings]
        plan.policy_verdicts = verdicts(evaluation)
        plan.policy_config = plan_settings(plan.spec, settings).raw
    return evaluation
