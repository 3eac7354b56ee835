"""`python -m tools.bench` (`make bench`): how fast the plan and the policy run, and how they grow.

Every figure comes from fresh interpreters (`tools.bench.child`), several runs, min and
median of wall time and of CPU time; `build/bench.json` keeps every run. Targets are judged
on the CPU median, which other load on a shared machine barely moves (wall time is what a
user waits for on an idle one). Nothing here asserts: a missed target is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from components.config.base import ConfigError
from tools.bench.measure import BenchError, run_child, run_process, stats
from tools.bench.synthetic import synthetic_config, validated
from tools.plan.runner import PROJECT_DIR, STACK_PHASE

ENVS = ("dev", "prod")
OVERHEAD_TARGET = 1.2
GROWTH_TARGET = 1.2
POLICY_SHARE_TARGET = 0.10
# make target -> wall-time target (issue 35): the whole suite on 2 cores, and the tier run while working.
TEST_TARGETS_S = {"test": 60.0, "test-fast": 15.0}
REHEARSAL_TARGET_S = 300.0  # issue 32: a rehearsal of prod on a warm machine, under 5 minutes (wall)
POLICY_PHASE = "policy"
CLOCKS = ("wall", "cpu")
FLOORS = {"plain": (), "typed": ("--typed",)}  # tools.bench.baseline flavours -> child arguments


def _program_s(times: dict[str, dict[str, float]], clock: str) -> float:
    """Config reading + evaluation: the part of a plan that is our program (write and policy are plan-only)."""
    return times[clock]["config"] + times[clock]["evaluate"]


def _figure(pairs: list[tuple[float, ...]]) -> dict[str, Any]:
    """(wall, cpu) per run -> {"wall": stats, "cpu": stats}."""
    return {clock: stats([p[i] for p in pairs]) for i, clock in enumerate(CLOCKS)}


def _ratios(plan: list[tuple[float, ...]], floor: list[tuple[float, ...]]) -> dict[str, Any]:
    return _figure([tuple(p[i] / f[i] for i in range(len(CLOCKS))) for p, f in zip(plan, floor, strict=True)])


def bench_env(env: str, runs: int, work: Path, step: Callable[[str], None]) -> dict[str, Any]:
    """A checked-in environment: plan and both SDK floors alternated in fresh processes, then warm rounds."""
    plans: list[tuple[dict[str, Any], Any]] = []
    floors: dict[str, list[tuple[dict[str, Any], Any]]] = {kind: [] for kind in FLOORS}
    for i in range(runs):
        step(f"plan {env}: fresh run {i + 1}/{runs} (plan, then its plain and typed SDK floors)")
        out = work / env
        runs_json = work / f"{env}.floor-runs.json"
        plans.append(run_child("plan", "--env", env, "--out", str(out), "--floor-runs", str(runs_json)))
        for kind in FLOORS:
            floors[kind].append(run_child("floor", "--runs-json", str(runs_json), *FLOORS[kind]))
    step(f"plan {env}: {runs} warm rounds in one process")
    warm, _ = run_child("pair", "--env", env, "--runs", str(runs))
    step(f"plan {env}: a warm plan profiled (whose code its time is spent in)")
    profiled, _ = run_child("profile", "--env", env)

    evaluated, program_runs = plans[0][0]["evaluated"], plans[0][0]["program_runs"]
    floor_runs = [result["runs"][0] for results in floors.values() for result, _ in results]
    floor_runs += [r[kind] for r in warm["rounds"] for kind in FLOORS]
    if any((f["registered"], f["program_runs"]) != (evaluated, program_runs) for f in floor_runs):
        raise BenchError(
            f"the SDK floors of {env} did not register the {evaluated} resources of its plan's {program_runs} runs"
        )
    times = [result["runs"][0] for result, _ in plans]
    plan_s = [tuple(_program_s(t, c) for c in CLOCKS) for t in times]
    warm_plan = [tuple(_program_s(r["plan"], c) for c in CLOCKS) for r in warm["rounds"]]
    fresh: dict[str, Any] = {"plan_s": _figure(plan_s)}
    warm_figures: dict[str, Any] = {"plan_s": _figure(warm_plan)}
    for kind, results in floors.items():
        floor_times = [result["runs"][0] for result, _ in results]
        floor_s = [tuple(t[c]["evaluate"] for c in CLOCKS) for t in floor_times]
        fresh[kind] = {
            "floor_s": _figure(floor_s),
            "sdk_imports_s": _figure([tuple(t[c]["sdk_imports"] for c in CLOCKS) for t in floor_times]),
            "ratio": _ratios(plan_s, floor_s),
        }
        warm_floor = [tuple(r[kind][c]["evaluate"] for c in CLOCKS) for r in warm["rounds"]]
        warm_figures[kind] = {"floor_s": _figure(warm_floor), "ratio": _ratios(warm_plan, warm_floor)}
    return {
        "registrations": plans[0][0]["registrations"],
        "evaluated": evaluated,  # registrations of every run: its stacks' and their network-first bootstraps'
        "custom": plans[0][0]["custom"],
        "process_s": _figure([(run.wall_s, run.cpu_s) for _, run in plans]),
        "peak_rss_mib": stats([run.peak_rss_mib for _, run in plans]),
        "phases_s": {name: _figure([(t["wall"][name], t["cpu"][name]) for t in times]) for name in times[0]["wall"]},
        "policy_available": all(POLICY_PHASE in t["wall"] for t in times),
        "overhead_fresh": fresh,
        "overhead_warm": warm_figures,
        "profile_shares": profiled["shares"],
        "_times": times,
    }


def bench_scaling(sizes: list[int], runs: int, work: Path, step: Callable[[str], None]) -> list[dict[str, Any]]:
    """Synthetic environments: time per registration of a process's first plan (fresh) and second (warm), counting
    the registrations of region stacks' network-first bootstraps, which the plan also evaluates (1 region: none)."""
    rows = []
    for n in sizes:
        try:
            validated(synthetic_config(n))
        except ConfigError as exc:
            raise BenchError(
                f"the synthetic {n}-region environment is invalid; update tools/bench/synthetic.py\n{exc}"
            ) from None
        fresh, warm, registrations = [], [], 0
        for i in range(runs):
            step(f"synthetic {n}-region environment: run {i + 1}/{runs}")
            result, _ = run_child("plan", "--regions", str(n), "--out", str(work / f"scale-{n}"), "--repeat", "2")
            registrations = result["evaluated"]  # per resource registered, bootstrap runs included
            first, second = result["runs"]
            fresh.append(tuple(_program_s(first, c) / registrations * 1000 for c in CLOCKS))
            warm.append(tuple(_program_s(second, c) / registrations * 1000 for c in CLOCKS))
        rows.append(
            {"regions": n, "registrations": registrations, "fresh_ms": _figure(fresh), "warm_ms": _figure(warm)}
        )
    return rows


def growth(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """Time per resource at the largest size over that at the smallest (min over min, median over median)."""
    small, large = rows[0][key], rows[-1][key]
    return {clock: {s: large[clock][s] / small[clock][s] for s in ("min", "median")} for clock in CLOCKS}


def policy_figures(plans: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if not all(p["policy_available"] for p in plans.values()):
        return {
            "available": False,
            "reason": f"`plan` records no {POLICY_PHASE!r} phase yet; the offline policy run, once it "
            f"exists, is timed by wrapping it in tools.plan.phases.phase({POLICY_PHASE!r})",
        }
    figures: dict[str, Any] = {"available": True}
    for env, p in plans.items():
        figures[env] = {
            "ms_per_resource": _figure(
                [tuple(t[c][POLICY_PHASE] / p["registrations"] * 1000 for c in CLOCKS) for t in p["_times"]]
            ),
            "share_of_plan": _figure(
                [tuple(t[c][POLICY_PHASE] / sum(t[c].values()) for c in CLOCKS) for t in p["_times"]]
            ),
        }
    return figures


def bench_tests(target: str, runs: int) -> dict[str, Any]:
    """`make TARGET` as a developer runs it (its xdist workers' CPU included: they are its children)."""
    results = [run_process(["make", "--no-print-directory", "-s", target], check=False) for _ in range(runs)]
    lines = results[-1].stdout.strip().splitlines()
    programs = [line for line in lines if line.startswith("program runs")]
    return {
        "process_s": _figure([(r.wall_s, r.cpu_s) for r in results]),
        # The largest process's (an xdist worker's): each keeps its program runs' heaps (tools.plan.engine).
        "peak_rss_mib": stats([r.peak_rss_mib for r in results]),
        "exit_codes": [r.exit_code for r in results],
        "summary": lines[-1].strip("= ") if lines else "",
        "program_runs": programs[-1].rpartition(" ")[2] if programs else "",
    }


def bench_rehearsal(env: str, runs: int) -> dict[str, Any]:
    """`python -m tools.rehearsal ENV` (a warm machine: the built binaries and module cache in place), wall and
    CPU time of it and every process it starts; its own verdict is reported, not judged here."""
    from tools.rehearsal import cache
    from tools.rehearsal.cache import REQUIRED

    missing = [n for n in REQUIRED if not cache.binary_path(n).is_file()]
    if missing:
        return {"available": False, "reason": f"{', '.join(missing)} not built: run `make rehearsal-tools`"}
    results = [run_process([sys.executable, "-m", "tools.rehearsal", env], check=False) for _ in range(runs)]
    document = json.loads((PROJECT_DIR / "build" / env / "rehearsal.json").read_text())
    return {
        "available": True,
        "env": env,
        "process_s": _figure([(r.wall_s, r.cpu_s) for r in results]),
        "exit_codes": [r.exit_code for r in results],
        "summary": document["summary"],
    }


def targets(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each target, judged on the CPU median (the test suite: on wall time, which is what CI waits for)."""
    found: dict[str, dict[str, Any]] = {}

    def judge(name: str, figure: dict[str, Any], limit: float, clock: str = "cpu") -> None:
        measured = figure[clock]["median"]
        found[name] = {"measured": measured, "limit": limit, "clock": clock, "met": measured <= limit}

    for env, p in report["plan"].items():
        for when in ("fresh", "warm"):
            for kind in FLOORS:
                judge(f"overhead {env} {when} {kind}", p[f"overhead_{when}"][kind]["ratio"], OVERHEAD_TARGET)
    if report["scaling"]:
        for kind in ("fresh", "warm"):
            g = report["growth"][kind]
            found[f"growth {kind}"] = {
                "measured": g["cpu"]["median"],
                "limit": GROWTH_TARGET,
                "clock": "cpu",
                "met": g["cpu"]["median"] <= GROWTH_TARGET,
            }
    if report["policy"]["available"]:
        for env in report["plan"]:
            judge(f"policy {env}", report["policy"][env]["share_of_plan"], POLICY_SHARE_TARGET)
    for target, figures in (report["tests"] or {}).items():
        judge(f"make {target}", figures["process_s"], TEST_TARGETS_S[target], clock="wall")
    if (report.get("rehearsal") or {}).get("available"):
        judge("rehearsal", report["rehearsal"]["process_s"], REHEARSAL_TARGET_S, clock="wall")
    return found


def _fmt(value: float, unit: str) -> str:
    if unit == "%":
        return f"{value * 100:.1f} %"
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:.3f} {unit}" if value < 10 else f"{value:.1f} {unit}"


def render(report: dict[str, Any]) -> Table:
    table = Table(title="make bench: min / median over fresh processes (build/bench.json)", title_justify="left")
    table.add_column("measurement")
    for column in ("wall min", "wall median", "CPU min", "CPU median", "target"):
        table.add_column(column, justify="right")
    verdicts = report["targets"]

    def row(name: str, figure: dict[str, Any], unit: str, target: str | None = None, limit: str = "") -> None:
        cells = [_fmt(figure[c][s], unit) for c in CLOCKS for s in ("min", "median")]
        verdict = verdicts.get(target or "")
        mark = "" if verdict is None else (" [green]met[/]" if verdict["met"] else " [red]missed[/]")
        table.add_row(name, *cells, limit + mark)

    def memory_row(name: str, rss: dict[str, Any]) -> None:
        table.add_row(name, _fmt(rss["min"], "MiB"), _fmt(rss["median"], "MiB"), "", "", "")

    for env, p in report["plan"].items():
        row(f"plan {env} ({p['registrations']} registrations): process", p["process_s"], "s")
        memory_row(f"plan {env}: peak RSS", p["peak_rss_mib"])
        stacks = {k: v for k, v in p["phases_s"].items() if k.startswith(STACK_PHASE)}
        for name, figure in stacks.items():
            row(f"  evaluate of stack {name.removeprefix(STACK_PHASE)}", figure, "s")
        if len(stacks) > 1:
            row(f"  evaluate of its {len(stacks)} stacks, total", p["phases_s"]["evaluate"], "s")
    for env, p in report["plan"].items():
        table.add_section()
        for when in ("fresh", "warm"):
            figures = p[f"overhead_{when}"]
            process = "fresh process" if when == "fresh" else "warm, same process"
            row(f"plan {env}: config + evaluate, {process}", figures["plan_s"], "s")
            for kind in FLOORS:
                runs = f"{p['evaluated']} registrations in the plan's runs"
                row(f"{kind} SDK floor {env} ({runs}): evaluate, {process}", figures[kind]["floor_s"], "s")
                if when == "fresh":
                    row("  of which provider SDK imports", figures[kind]["sdk_imports_s"], "s")
            for kind in FLOORS:
                name = f"overhead {env} {when} {kind}"
                row(f"overhead ratio {env} vs {kind} floor, {when}", figures[kind]["ratio"], "x", name, "≤ 1.20x")
        shares = ", ".join(f"{origin} {_fmt(share, '%')}" for origin, share in p["profile_shares"].items())
        table.add_row(f"plan {env}, warm, profiled: own time in {shares}", "", "", "", "", "")
    if report["scaling"]:
        table.add_section()
        for r in report["scaling"]:
            label = f"{r['regions']} region(s), {r['registrations']} registrations: ms/resource"
            row(f"{label}, fresh", r["fresh_ms"], "ms")
            row(f"{label}, warm", r["warm_ms"], "ms")
        for kind in ("fresh", "warm"):
            row(
                f"growth of ms/resource, {kind} (largest / smallest)",
                report["growth"][kind],
                "x",
                f"growth {kind}",
                "≤ 1.20x",
            )
    table.add_section()
    policy = report["policy"]
    if policy["available"]:
        for env in report["plan"]:
            row(f"policy {env}: time per resource", policy[env]["ms_per_resource"], "ms")
            row(f"policy {env}: share of plan time", policy[env]["share_of_plan"], "%", f"policy {env}", "≤ 10 %")
    else:
        table.add_row("policy evaluation per resource", "not available yet", "", "", "", "≤ 10 % of plan")
    for target, tests in (report["tests"] or {}).items():
        name = f"make {target} ({tests['summary']}; {tests['program_runs']} program runs)"
        row(name, tests["process_s"], "s", f"make {target}", f"< {TEST_TARGETS_S[target]:g} s (wall)")
        memory_row(f"make {target}: largest process's peak RSS", tests["peak_rss_mib"])
    rehearsal = report.get("rehearsal")
    if rehearsal and rehearsal["available"]:
        row(
            f"rehearsal of {rehearsal['env']} (exit {rehearsal['exit_codes'][-1]})",
            rehearsal["process_s"],
            "s",
            "rehearsal",
            "< 300 s (wall)",
        )
    elif rehearsal:
        table.add_row("rehearsal", rehearsal["reason"], "", "", "", "< 300 s (wall)")
    return table


def machine() -> dict[str, Any]:
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}


def measure(report: dict[str, Any], args: argparse.Namespace, console: Console) -> None:
    started = time.monotonic()

    def step(message: str) -> None:
        """One line per measurement, so a log (CI, a pipe) shows progress too, not only a terminal."""
        console.print(f"[{time.monotonic() - started:5.0f} s] {message}", highlight=False)

    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        work = Path(tmp)
        report["plan"] = {}
        for env in ENVS:
            report["plan"][env] = bench_env(env, args.runs, work, step)
        report["scaling"] = bench_scaling(sorted(args.regions), args.scaling_runs, work, step) if args.regions else []
        if report["scaling"]:
            report["growth"] = {k: growth(report["scaling"], f"{k}_ms") for k in ("fresh", "warm")}
        report["policy"] = policy_figures(report["plan"])
        report["tests"] = {}
        for target in TEST_TARGETS_S if args.test_runs else ():
            step(f"make {target}: {args.test_runs} run(s)")
            report["tests"][target] = bench_tests(target, args.test_runs)
        if args.rehearsal_runs:
            step(f"rehearsal of prod: {args.rehearsal_runs} run(s)")
        report["rehearsal"] = bench_rehearsal("prod", args.rehearsal_runs) if args.rehearsal_runs else None
        step("done")
    report["duration_s"] = time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh-process runs per environment (default 5)")
    parser.add_argument("--scaling-runs", type=int, default=3, help="runs per synthetic size (default 3)")
    parser.add_argument(
        "--regions", type=int, nargs="*", default=[1, 2, 4, 8], help="synthetic sizes (default 1 2 4 8)"
    )
    parser.add_argument(
        "--test-runs", type=int, default=1, help="runs of make test and of make test-fast; 0 skips them (default 1)"
    )
    parser.add_argument(
        "--rehearsal-runs", type=int, default=1, help="rehearsals of prod (make rehearse); 0 skips it (default 1)"
    )
    parser.add_argument("--out", type=Path, default=PROJECT_DIR / "build" / "bench.json")
    args = parser.parse_args(argv)
    console = Console(stderr=True)

    report: dict[str, Any] = {
        "machine": {**machine(), "load_average_before": os.getloadavg()},
        "runs": {
            "plan": args.runs,
            "scaling": args.scaling_runs,
            "tests": args.test_runs,
            "rehearsal": args.rehearsal_runs,
        },
    }
    try:
        measure(report, args, console)
    except BenchError as exc:
        console.print(f"[red]error:[/] {exc}")
        return 1
    report["machine"]["load_average_after"] = os.getloadavg()
    report["targets"] = targets(report)
    for p in report["plan"].values():
        del p["_times"]

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    Console(width=max(Console().width, 150)).print(render(report))
    m = report["machine"]
    console.print(
        f"wrote {args.out}; {m['cpus']} CPUs, load average {m['load_average_before'][0]:.1f} before, "
        f"{m['load_average_after'][0]:.1f} after (figures are noisier when it exceeds the CPU count)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
