"""Build a Plan: validate config, then evaluate the real `__main__.py` under recording mocks."""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pulumi
from pulumi.runtime import settings

from components.checks.stack_checks import stack_name_issues
from components.config.base import ConfigError
from components.config.stackfile import StackConfig, shared_secret_issues
from components.domain.stack_split import environment_stacks
from tools.plan.engine import Evaluation, PlannedResource, evaluate
from tools.plan.mocks import ComputedOutputs
from tools.plan.model import Plan
from tools.plan.phases import phase
from tools.plan.stackfile import stack_own_config, with_stack_files
from tools.rollout.bootstrap import needs_network_bootstrap

PROJECT_DIR = Path(__file__).resolve().parents[2]
STACK_PHASE = "evaluate stack "  # + a stack name: each stack's share of "evaluate" (make bench)


def build_plan(
    stack_config: StackConfig,
    project_dir: Path = PROJECT_DIR,
    on_register: Callable[[PlannedResource], None] | None = None,
    computed: Mapping[str, ComputedOutputs] | None = None,
    plain_secrets: bool = False,
) -> Plan:
    """Raises ConfigError before any resource is registered when the config is invalid. `computed`: provider
    packages whose outputs are computed for real instead of mocked, `plain_secrets`: secret inputs kept in plain
    text (both for the rehearsal, which applies the plan to local clusters and writes none of it)."""
    project_dir = project_dir.resolve()
    if str(project_dir) not in sys.path:
        sys.path.insert(0, str(project_dir))
    # The CLI runs the program in the directory of its stack files, where it reads the project's models/*.yaml.
    with _working_directory(stack_config.path.parent):
        return _build_plan(stack_config, project_dir, on_register, computed, plain_secrets)


@contextmanager
def _working_directory(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _build_plan(
    stack_config: StackConfig,
    project_dir: Path,
    on_register: Callable[[PlannedResource], None] | None,
    computed: Mapping[str, ComputedOutputs] | None,
    plain_secrets: bool,
) -> Plan:
    from stacks.config import BOOTSTRAP_VARIABLE, read_environment

    with phase("config"):
        # As the engine would run it: this stack's name (not an earlier evaluation's) and its config.
        together = with_stack_files(stack_config)
        settings.reset_options(project=stack_config.project, stack=stack_config.stack)
        pulumi.runtime.set_all_config(together.config, together.secret_keys)
        spec = read_environment()
        names = stack_name_issues(spec, stack_config.stack)
        if spec.stack_layout() == "perRegion" and stack_config.secret_keys:
            first = environment_stacks(spec, stack_config.stack)[0].name
            names += shared_secret_issues(stack_config.stack, stack_config.secret_keys, first)
        if names:
            raise ConfigError(names)

    main = str(project_dir / "__main__.py")

    def program() -> None:
        runpy.run_path(main, run_name="__main__")

    stacks = environment_stacks(spec, stack_config.stack)
    evaluations: dict[str, Evaluation] = {}
    bootstraps: dict[str, Evaluation] = {}
    for piece in stacks:
        own = stack_own_config(stack_config, piece.name)
        with phase("evaluate"), phase(f"{STACK_PHASE}{piece.name}"):
            evaluations[piece.name] = evaluate(
                program,
                project=stack_config.project,
                stack=piece.name,
                config=own.config,
                secret_keys=own.secret_keys,
                on_register=on_register,
                stack_outputs={name: e.referenced for name, e in evaluations.items()},
                computed=computed,
                plain_secrets=plain_secrets,
            )
            if needs_network_bootstrap(spec, piece):
                # The program as `make rollout BOOTSTRAP=1` runs it: what its targeted `up` registers.
                with _environment(BOOTSTRAP_VARIABLE, "network"):
                    bootstraps[piece.name] = evaluate(
                        program,
                        project=stack_config.project,
                        stack=piece.name,
                        config=own.config,
                        secret_keys=own.secret_keys,
                    )
    if len(stacks) == 1:
        return Plan(
            environment=stack_config.stack,
            project=stack_config.project,
            evaluation=evaluations[stacks[0].name],
            spec=spec,
        )
    per_stack = {
        name: Plan(
            environment=name,
            project=stack_config.project,
            evaluation=e,
            spec=spec,
            bootstrap=(
                Plan(environment=name, project=stack_config.project, evaluation=bootstraps[name], spec=spec)
                if name in bootstraps
                else None
            ),
        )
        for name, e in evaluations.items()
    }
    return Plan(
        environment=stack_config.stack,
        project=stack_config.project,
        evaluation=merged_evaluation(list(evaluations.values())),
        spec=spec,
        stacks=per_stack,
    )


@contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


def merged_evaluation(evaluations: list[Evaluation]) -> Evaluation:
    """The environment as one view: every stack's resources, outputs merged key by key (later stacks add)."""
    outputs: dict = {}
    for e in evaluations:
        outputs = _merge(outputs, e.outputs)
    return Evaluation(
        resources=[r for e in evaluations for r in e.resources],
        outputs=outputs,
        stack_urn="",
        secret_values=set().union(*(e.secret_values for e in evaluations)),
    )


def _merge(base: dict, more: dict) -> dict:
    out = dict(base)
    for key, value in more.items():
        out[key] = _merge(out[key], value) if isinstance(out.get(key), dict) and isinstance(value, dict) else value
    return out


def check_policy(plan: Plan, settings=None):
    """Run the policy pack in-process on the plan; fills plan.policy* and returns the pack's evaluation."""
    from policies.offline import judge_plan, verdicts

    with phase("policy"):
        evaluation, pack = judge_plan(plan, settings)
        plan.policy = [f.to_json() for f in evaluation.findings]
        plan.policy_verdicts = verdicts(evaluation)
        plan.policy_config = pack.raw
    for name, part in plan.stacks.items():  # each stack's share, for its section and its rollout gate
        part.policy = [f for f in plan.policy if f["urn"].startswith(f"urn:pulumi:{name}::")]
        part.policy_verdicts, part.policy_config = plan.policy_verdicts, plan.policy_config
    return evaluation
