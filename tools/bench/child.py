"""One measurement in a fresh interpreter; prints one JSON object on stdout for `tools.bench`.

    plan  (--env ENV | --regions N) --out DIR [--repeat K] [--floor-runs PATH]
        the plan as `python -m tools.plan` builds it (build_plan + check_policy + write_plan), K times in this
        process: run 1 is what a user pays (imports included), later runs are warm. --floor-runs: write the
        documents of its program runs (tools.bench.baseline.program_runs) there, for `floor`.
    floor --runs-json PATH [--typed]
        the SDK floor of those runs (tools.bench.baseline) under the same engine and mocks, one evaluation each.
    pair  (--env ENV | --regions N) --runs K
        warm and side by side in one process: after one warm-up of each, K rounds of the
        plan (config + evaluate), its plain SDK floor and its typed SDK floor (evaluate).
    profile  (--env ENV | --regions N)
        a warm plan under cProfile: the share of its time in the program, the plan's engine,
        the Pulumi SDK, the provider SDKs and the rest (the standard library's asyncio, protobuf...).

Phase times are {"wall": {phase: s}, "cpu": {phase: s}} (tools.plan.phases).
"""

from __future__ import annotations

import argparse
import gc
import json
from pathlib import Path
from typing import Any

from components.config.stackfile import StackConfig
from stacks.config import forget_validated_environments
from tools.plan import phases
from tools.plan.engine import evaluate, exit_skipping_final_collection, keep_heap_until_exit


def _times() -> dict[str, dict[str, float]]:
    return {"wall": dict(phases.WALL), "cpu": dict(phases.CPU)}


def _stack_config(args: argparse.Namespace) -> StackConfig:
    if args.regions:
        from tools.bench.synthetic import synthetic_stack

        return synthetic_stack(args.regions)
    from tools.plan.runner import PROJECT_DIR
    from tools.plan.stackfile import load_stack_config

    return load_stack_config(PROJECT_DIR, args.env)


def _plan(args: argparse.Namespace) -> dict[str, Any]:
    from tools.plan.artifacts import write_plan
    from tools.plan.runner import build_plan, check_policy

    stack_config = _stack_config(args)
    runs = []
    for _ in range(args.repeat):
        phases.reset()
        forget_validated_environments()
        plan = build_plan(stack_config)
        check_policy(plan)
        write_plan(plan, Path(args.out))
        runs.append(_times())
    from tools.bench.baseline import evaluated_runs, program_runs

    if args.floor_runs:
        Path(args.floor_runs).write_text(json.dumps(program_runs(plan)))
    evaluated = evaluated_runs(plan)
    return {
        "registrations": len(plan.resources),
        # What the runs evaluated: a region stack's network-first bootstrap is a second, smaller run of its program.
        "evaluated": sum(len(run.resources) for run in evaluated),
        "program_runs": len(evaluated),
        "custom": sum(r.custom for r in plan.resources),
        "runs": runs,
    }


def _floor_once(documents: list[dict[str, Any]], typed: bool) -> dict[str, Any]:
    """The floor of a plan's runs, each evaluated as its own program run, as the plan evaluates them: its phase
    times, and what it registered in how many runs (counted from the evaluations, for the bench to check)."""
    from tools.bench.baseline import baseline_program

    phases.reset()
    registered = 0
    for document in documents:
        with phases.phase("evaluate"):
            evaluation = evaluate(
                baseline_program(document, typed),
                project=document["project"],
                stack=document["environment"],
                config={},
            )
        if len(evaluation.resources) != len(document["resources"]):
            raise RuntimeError(f"the SDK floor of {document['environment']} did not register its plan's resources")
        registered += len(evaluation.resources)
    return {**_times(), "registered": registered, "program_runs": len(documents)}


def _floor(args: argparse.Namespace) -> dict[str, Any]:
    documents = json.loads(Path(args.runs_json).read_text())
    return {"runs": [_floor_once(documents, args.typed)]}


def _release_kept_heap() -> None:
    """Between two untimed rounds: collect what the kept evaluations left (keep_heap_until_exit), ~110 MiB a prod
    round, so the memory of many rounds stays that of one; then keep what is alive out of the scans again."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _pair(args: argparse.Namespace) -> dict[str, Any]:
    from tools.bench.baseline import program_runs
    from tools.plan.runner import build_plan

    stack_config = _stack_config(args)
    documents = program_runs(build_plan(stack_config))
    _floor_once(documents, typed=False)  # all three warmed up
    _floor_once(documents, typed=True)
    rounds = []
    for _ in range(args.runs):
        _release_kept_heap()
        phases.reset()
        forget_validated_environments()
        build_plan(stack_config)
        plan = _times()
        rounds.append(
            {"plan": plan, "plain": _floor_once(documents, typed=False), "typed": _floor_once(documents, typed=True)}
        )
    return {"rounds": rounds}


def _origin(filename: str) -> str:
    """Whose code a profiled function is: the program's, the plan engine's (its mocks included), the Pulumi SDK's, a
    provider SDK's, or the rest."""
    from tools.plan.runner import PROJECT_DIR

    if filename.startswith(str(PROJECT_DIR)) and "site-packages" not in filename:
        return "engine" if filename.startswith(str(PROJECT_DIR / "tools")) else "program"
    package = filename.partition("site-packages/")[2].split("/", 1)[0]
    if package == "pulumi":
        return "pulumi"
    return "providers" if package.startswith("pulumi_") else "other"


def _profile(args: argparse.Namespace) -> dict[str, Any]:
    """A warm plan (config + evaluate) under cProfile: the share of its own time (tottime) spent in each origin's
    code. The profiler slows every Python call alike, so shares, not seconds, are what it measures."""
    import cProfile
    import pstats

    from tools.plan.runner import build_plan

    stack_config = _stack_config(args)
    build_plan(stack_config)
    forget_validated_environments()
    profiler = cProfile.Profile()
    profiler.enable()
    build_plan(stack_config)
    profiler.disable()
    spent: dict[str, float] = {}
    for (filename, _, _), (_, _, own, _, _) in pstats.Stats(profiler).stats.items():  # type: ignore[attr-defined]  # typeshed omits Stats.stats
        origin = _origin(filename)
        spent[origin] = spent.get(origin, 0.0) + own
    total = sum(spent.values())
    return {"shares": {origin: seconds / total for origin, seconds in sorted(spent.items())}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools.bench.child")
    sub = parser.add_subparsers(dest="kind", required=True)
    plan = sub.add_parser("plan")
    pair = sub.add_parser("pair")
    profile = sub.add_parser("profile")
    for p in (plan, pair, profile):
        target = p.add_mutually_exclusive_group(required=True)
        target.add_argument("--env")
        target.add_argument("--regions", type=int)
    plan.add_argument("--out", required=True)
    plan.add_argument("--repeat", type=int, default=1)
    plan.add_argument("--floor-runs")
    pair.add_argument("--runs", type=int, default=5)
    floor = sub.add_parser("floor")
    floor.add_argument("--runs-json", required=True)
    floor.add_argument("--typed", action="store_true")
    args = parser.parse_args(argv)

    result = {"plan": _plan, "floor": _floor, "pair": _pair, "profile": _profile}[args.kind](args)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    keep_heap_until_exit()  # as `python -m tools.plan` does, for the plan and its floors alike
    exit_skipping_final_collection(main())
