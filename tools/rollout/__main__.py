"""`python -m tools.rollout ENV`: deploy an environment's stacks wave by wave with the Automation API, gated
by policy, health and operator confirmation; `--dry-run` shows it all from the offline plan."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rich.console import Console

from components.checks.loader import load_environment
from components.config.base import ConfigError
from components.config.environment import EnvironmentSpec
from components.config.model_catalog import read_model_catalog
from components.config.stackfile import PlanInputError
from components.domain.waves import rollout_waves
from stacks.config import inherited_bootstrap, namespace_values
from tools.plan.artifacts import OutputDirError, write_plan
from tools.plan.engine import keep_heap_until_exit
from tools.plan.model import Plan
from tools.plan.runner import PROJECT_DIR, build_plan, check_policy
from tools.plan.stackfile import input_error_lines, load_stack_config
from tools.policy_pack import PACK_DIR, missing_pack
from tools.rollout.bringup import Report
from tools.rollout.ci import environments, mixed_runners, stack_matrix
from tools.rollout.driver import Rollout, RolloutInputError, first_wave, run_bootstrap, run_rollout
from tools.rollout.dry_run import mandatory_findings, print_dry_run
from tools.rollout.gates import bring_up, offline_gates, offline_slo_gate, slo_gate, stack_health
from tools.rollout.health import ClusterProbe, HttpGet, KubernetesProbe, requests_get
from tools.rollout.loadtest import Sample, run_load_test
from tools.rollout.state import STATE_FILE, identity_of
from tools.rollout.workspace import PulumiWorkspace, Workspace

EXIT_INVALID_INPUT = 2


def offline_plans(
    project_dir: Path, env_name: str, *, out_dir: Path | None, config_dir: Path | None = None
) -> tuple[EnvironmentSpec, dict[str, Plan]]:
    """Every stack's offline plan, its policy evaluated (and the environment's artifacts written to `out_dir`
    when given: `policy-config.json` is what the previews run the pack with). `config_dir`: where the stack files
    are, by default the project's directory."""
    plan = build_plan(load_stack_config(project_dir, env_name, config_dir), project_dir)
    check_policy(plan)
    if out_dir is not None:
        write_plan(plan, out_dir)
    return plan.spec, plan.stacks or {env_name: plan}


def load_spec(project_dir: Path, env_name: str) -> EnvironmentSpec:
    """The validated environment without planning it: enough to list its stacks and waves."""
    stack_config = load_stack_config(project_dir, env_name)
    return load_environment(
        namespace_values(stack_config.project, stack_config.config), catalog_files=read_model_catalog(project_dir)
    )


def read_confirmation(prompt: str) -> bool:
    """stdin: only `y` or `yes` confirms; no terminal (EOF) declines."""
    try:
        return input(prompt).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def main(
    argv: list[str] | None = None,
    *,
    console: Console | None = None,
    workspace: Workspace | None = None,
    plans: Callable[..., tuple[EnvironmentSpec, Mapping[str, Plan]]] = offline_plans,
    cluster_probe: Callable[[Any], ClusterProbe] = KubernetesProbe,
    http_get: HttpGet = requests_get,
    confirm: Callable[[str], bool] = read_confirmation,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    bring_up_check: Callable[[Path, EnvironmentSpec, str, Mapping[str, Plan]], Report] = bring_up,
    load_test: Callable[..., tuple[list[Sample], float]] = run_load_test,
) -> int:
    """Keyword arguments: what tests replace (the Automation API workspace, planning, the bring-up check of the
    plans, clients, the SLO gate's load test, stdin, time)."""
    parser = argparse.ArgumentParser(prog="rollout", description=__doc__)
    parser.add_argument("env", nargs="?", help="environment: reads Pulumi.<env>.yaml")
    parser.add_argument("--project-dir", type=Path, default=PROJECT_DIR)
    parser.add_argument("--dry-run", action="store_true", help="print waves, plans and gates; no credentials needed")
    parser.add_argument("--resume", action="store_true", help="skip the waves the last run of this commit finished")
    parser.add_argument("--from-wave", metavar="NAME", help="start at this wave")
    parser.add_argument(
        "--wave", metavar="NAME", help="deploy this wave only (a job on the runner that reaches its stacks)"
    )
    parser.add_argument("--yes", action="store_true", help="confirm every wave listed in rollout.confirmBefore")
    parser.add_argument(
        "--bootstrap",
        action="store_true",
        help="first time only: create the network of each stack whose runner lives in it (cloud APIs only)",
    )
    parser.add_argument("--list-stacks", action="store_true", help="the stacks with their runner labels (CI)")
    parser.add_argument("--list-environments", action="store_true", help="the environments in the project (CI)")
    parser.add_argument("--json", action="store_true", help="--list-*: JSON on one line, for GitHub's fromJSON")
    args = parser.parse_args(argv)
    console = console or Console(highlight=False)
    if inherited := inherited_bootstrap():
        print(f"error: {inherited}", file=sys.stderr)
        return EXIT_INVALID_INPUT

    if args.list_environments:
        found = environments(args.project_dir)
        print(json.dumps(found) if args.json else "\n".join(found))
        return 0
    if not args.env:
        parser.error("ENV is required (e.g. `python -m tools.rollout prod --dry-run`)")
    try:
        if args.list_stacks:
            rows = stack_matrix(load_spec(args.project_dir, args.env), args.env)
            print(json.dumps(rows) if args.json else "\n".join(f"{r['stack']}\t{r['runsOn']}" for r in rows))
            return 0
        out_dir = args.project_dir / "build" / args.env
        env, stack_plans = plans(args.project_dir, args.env, out_dir=None if args.dry_run else out_dir)
        waves = rollout_waves(env, args.env)
        start = first_wave(waves, args.wave or args.from_wave)
        if args.wave and (mixed := mixed_runners(env, args.env, waves[start].stacks)):
            raise RolloutInputError(
                f"--wave {args.wave}: {mixed}, and one job runs on one; run it on each runner with a wave of its "
                "own (rollout.waves), or `make rollout` without WAVE from a host that reaches them all"
            )
    except (PlanInputError, ConfigError) as exc:
        for line in input_error_lines(exc, args.env):
            print(line, file=sys.stderr)
        return EXIT_INVALID_INPUT
    except (RolloutInputError, OutputDirError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID_INPUT

    report = bring_up_check(args.project_dir, env, args.env, stack_plans)
    if args.dry_run:
        return print_dry_run(
            env=env,
            env_name=args.env,
            waves=waves,
            plans=stack_plans,
            health_checks=offline_gates(env, args.env, stack_plans),
            health_timeout_minutes=env.rollout.health_timeout_minutes,
            console=console,
            bring_up=report,
            slo_gate=offline_slo_gate(env, args.env, stack_plans),
        )
    if workspace is None:
        # Every preview and update runs the policy pack from its folder, with its own virtualenv.
        problem = missing_pack(args.project_dir / PACK_DIR)
        if problem:
            print(f"error: {problem} (the previews and updates run it)", file=sys.stderr)
            return EXIT_INVALID_INPUT
        workspace = PulumiWorkspace(
            project_dir=args.project_dir,
            policy_config=out_dir / "policy-config.json",
            on_output=lambda line: console.print(line, markup=False, highlight=False),
        )
    health = stack_health(
        env=env,
        env_name=args.env,
        cluster_probe=cluster_probe,
        http_get=http_get,
        outputs_of=lambda stack: workspace.select_stack(stack).outputs(),
    )
    if args.bootstrap:
        runs_on = {row["stack"]: row["runsOn"] for row in stack_matrix(env, args.env)}
        return run_bootstrap(
            Rollout(env_name=args.env, waves=waves, violations={}, health_timeout_seconds=0),
            workspace=workspace,
            bootstraps=report.bootstraps,
            runner_of=lambda stack: str(runs_on[stack]),
            only_wave=args.wave,
            console=console,
            clock=clock,
        )
    rollout = Rollout(
        env_name=args.env,
        waves=waves,
        violations={name: mandatory_findings(plan) for name, plan in stack_plans.items()},
        health_timeout_seconds=env.rollout.health_timeout_minutes * 60,
        bring_up={name: [v.line() for v in report.of(name)] for name in stack_plans},
    )
    return run_rollout(
        rollout,
        workspace=workspace,
        health_checks=health,
        confirm=confirm,
        state_path=out_dir / STATE_FILE,
        identity=identity_of(args.project_dir, args.env),
        resume=args.resume,
        from_wave=args.from_wave,
        only_wave=args.wave,
        yes=args.yes,
        console=console,
        clock=clock,
        sleep=sleep,
        slo_gate=slo_gate(
            env=env,
            env_name=args.env,
            outputs_of=lambda stack: workspace.select_stack(stack).outputs(),
            load_test=load_test,
        ),
    )


if __name__ == "__main__":
    keep_heap_until_exit()  # a one-shot process, as `python -m tools.plan`: each program run's heap lives until exit
    sys.exit(main())
