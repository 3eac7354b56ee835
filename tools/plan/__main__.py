"""`python -m tools.plan [ENV]`: what would `pulumi up` create, and does it pass policy?"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from components.checks.gpu_pool_checks import unused_pools
from components.config.base import ConfigError
from components.config.stackfile import PlanInputError
from policies.offline import load_settings, verdict_table
from stacks.config import inherited_bootstrap
from tools.plan.artifacts import OutputDirError, owned_files, plan_document, withdraw_plan, write_plan
from tools.plan.changes import changes_markdown, compare
from tools.plan.cost_diff import cost_diff_markdown
from tools.plan.crd_check import uninstalled_kinds
from tools.plan.engine import exit_skipping_final_collection, keep_heap_until_exit
from tools.plan.phases import phase
from tools.plan.report import summary_tree
from tools.plan.runner import PROJECT_DIR, build_plan, check_policy
from tools.plan.stackfile import input_error_lines, load_stack_config
from tools.rollout.gates import bring_up

EXIT_POLICY_VIOLATION = 1  # also: a custom resource whose kind its cluster does not serve
EXIT_INVALID_INPUT = 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="plan", description=__doc__)
    parser.add_argument("env", nargs="?", default="dev", help="environment: reads Pulumi.<env>.yaml (default dev)")
    parser.add_argument("--project-dir", type=Path, default=PROJECT_DIR)
    parser.add_argument("--out", type=Path, default=None, help="output directory (default build/<env>)")
    parser.add_argument("--quiet", action="store_true", help="no progress display or summary tree")
    parser.add_argument(
        "--policy-config",
        type=Path,
        default=None,
        help="policy pack settings in the `pulumi preview --policy-pack-config` format (e.g. enforcement overrides)",
    )
    parser.add_argument(
        "--compare",
        type=Path,
        default=None,
        help="a base plan.json: print what changes against it, per stack: resources created, updated, replaced and "
        "deleted, and the monthly cost (changes.md, at the top of plan.md; changes.json; cost-diff.md)",
    )
    args = parser.parse_args(argv)
    console = Console(stderr=True, quiet=args.quiet)
    out_dir = args.out or args.project_dir / "build" / args.env
    if inherited := inherited_bootstrap():
        print(f"error: {inherited}", file=sys.stderr)
        return EXIT_INVALID_INPUT

    try:
        settings = load_settings(args.policy_config)
        owned_files(out_dir)  # refuse a directory no plan wrote before planning, not after
        base = json.loads(args.compare.read_text()) if args.compare else None
    except (ValueError, OutputDirError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID_INPUT
    try:
        stack_config = load_stack_config(args.project_dir, args.env)
        with Progress(
            SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=True
        ) as progress:
            task = progress.add_task(f"planning {args.env}", total=None)
            count = 0

            def on_register(resource) -> None:
                nonlocal count
                count += 1
                progress.update(task, description=f"planning {args.env}: {count} resources ({resource.type})")

            plan = build_plan(stack_config, args.project_dir, on_register)
    except (PlanInputError, ConfigError) as exc:
        for line in input_error_lines(exc, args.env):
            print(line, file=sys.stderr)
        if withdraw_plan(out_dir):
            print(f"removed the previous plan from {out_dir}: it does not describe Pulumi.{args.env}.yaml as it is now")
        return EXIT_INVALID_INPUT

    for issue in unused_pools(plan.spec):
        print(f"warning: Pulumi.{args.env}.yaml: {issue}", file=sys.stderr)
    evaluation = check_policy(plan, settings)
    with phase("bring-up"):
        plan.bring_up = bring_up(args.project_dir, plan.spec, args.env, plan.stacks or {args.env: plan})
    extra = {}
    if base is not None:
        head = plan_document(plan)
        changes = compare(base, head)
        extra["cost-diff.md"] = cost_diff_markdown(base=base, head=head, environment=args.env)
        extra["changes.md"] = changes_markdown(changes) + "\n" + extra["cost-diff.md"]
        extra["changes.json"] = json.dumps(changes.to_json(), indent=1, sort_keys=True) + "\n"
        print(extra["changes.md"])
    write_plan(plan, out_dir, extra=extra)
    console.print(summary_tree(plan))
    console.print(verdict_table(plan.policy_verdicts))
    console.print(f"wrote {out_dir.relative_to(Path.cwd()) if out_dir.is_relative_to(Path.cwd()) else out_dir}")
    for finding in evaluation.mandatory:
        print(f"error: policy {finding.policy}: {finding.urn}: {finding.message}", file=sys.stderr)
    # A kind its cluster does not serve fails `pulumi up` at that object: a plan error like a mandatory finding.
    uninstalled = uninstalled_kinds(plan)
    for line in uninstalled:
        print(f"error: {line}", file=sys.stderr)
    for violation in plan.bring_up.violations:
        print(f"error: bring-up: {violation.line()}", file=sys.stderr)
    return EXIT_POLICY_VIOLATION if evaluation.mandatory or uninstalled or plan.bring_up.violations else 0


if __name__ == "__main__":
    keep_heap_until_exit()  # a one-shot process: each program run's heap lives until exit
    exit_skipping_final_collection(main())
