"""`python -m tools.check ENV` (`make check ENV=<env>`): what can be checked of `Pulumi.<ENV>.yaml` without a cloud
account, in one run with one summary at the end: the plan (`make plan`: the program under the mocks, the policy
pack, the kinds each cluster serves, the bring-up check), Checkov on its manifests (`make checkov`), and the
rehearsal once its binaries are built (`make rehearsal-tools`). Any environment file works, one this project has
never seen included.

Exit 0: every check ran and passed; 1: a check failed; 2: the environment file is invalid (the plan's error lines
name the key; nothing else can run)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tools.plan.runner import PROJECT_DIR

EXIT_FAILED = 1
EXIT_INVALID_INPUT = 2
# `make checkov`'s scan (Makefile): Kubernetes checks only, no download of Bridgecrew's policies.
CHECKOV_ARGS = ("--framework", "kubernetes", "--compact", "--quiet", "--skip-download")
PASS, FAIL, NOT_RUN = "pass", "FAIL", "not run"


@dataclass(frozen=True)
class Step:
    name: str
    status: str  # PASS, FAIL or NOT_RUN
    detail: str = ""


def run(command: Sequence[str | Path]) -> tuple[int, list[str]]:
    """Run a tool with this checkout's code, its output passed through as it comes; its exit code and stderr lines."""
    process = subprocess.Popen(
        [str(part) for part in command], cwd=PROJECT_DIR, stderr=subprocess.PIPE, text=True, bufsize=1
    )
    assert process.stderr is not None
    lines = []
    for line in process.stderr:
        sys.stderr.write(line)
        lines.append(line.rstrip("\n"))
    return process.wait(), lines


def _shown(directory: Path) -> str:
    """build/<name>/, as the project's directory has it."""
    return f"{directory.parent.name}/{directory.name}/"


def plan_steps(errors: list[str], out_dir: Path) -> list[Step]:
    """The verdicts of a plan that ran, from its `error:` lines (tools/plan/__main__.py) and its policy.json."""
    policy = [e for e in errors if e.startswith("error: policy ")]
    bring_up = [e for e in errors if e.startswith("error: bring-up: ")]
    unserved = [e for e in errors if e not in policy and e not in bring_up]  # kinds their cluster does not serve
    findings = json.loads((out_dir / "policy.json").read_text())
    advisory = sum(f["enforcementLevel"] == "advisory" for f in findings)
    return [
        Step("plan", FAIL if unserved else PASS, f"{len(unserved)} error(s) above" if unserved else _shown(out_dir)),
        Step("policy pack", FAIL if policy else PASS, f"{len(policy)} mandatory, {advisory} advisory finding(s)"),
        Step("bring-up", FAIL if bring_up else PASS, f"{len(bring_up)} violation(s) above" if bring_up else ""),
    ]


def checkov_step(out_dir: Path, checkov: Path) -> Step:
    if not checkov.is_file():
        return Step("checkov", FAIL, f"{checkov} is not installed: `make check` builds it (requirements-checkov.txt)")
    scanned = out_dir.parent / f"checkov-{out_dir.name}"
    code, _ = run([sys.executable, "-m", "tools.checkov_input", out_dir, scanned])
    if code != 0:
        return Step("checkov", FAIL, f"tools.checkov_input exit {code}")
    code, _ = run([checkov, "-d", scanned, *CHECKOV_ARGS])
    return Step(
        "checkov", PASS if code == 0 else FAIL, f"scanned {_shown(scanned)}" if code == 0 else "failed checks above"
    )


def rehearsal_unavailable() -> str | None:
    """Why the rehearsal cannot run here, or None: it needs its module (tools/rehearsal/__main__.py, issue 32) and
    the pinned upstream binaries `make rehearsal-tools` builds into the machine's cache."""
    if importlib.util.find_spec("tools.rehearsal.__main__") is None:
        return "this checkout has no rehearsal (tools/rehearsal/__main__.py)"
    from tools.rehearsal.cache import REQUIRED, binary_path

    missing = [name for name in REQUIRED if not binary_path(name).is_file()]
    return f"binaries not built ({', '.join(missing)}): run `make rehearsal-tools`" if missing else None


def rehearsal_step(env: str, project_dir: Path, unavailable: Callable[[], str | None]) -> Step:
    reason = unavailable()
    if reason is not None:
        return Step("rehearsal", NOT_RUN, reason)
    code, _ = run([sys.executable, "-m", "tools.rehearsal", env, "--project-dir", project_dir])
    return Step(
        "rehearsal", PASS if code == 0 else FAIL, f"build/{env}/rehearsal.json" if code == 0 else f"exit {code}"
    )


def check(
    env: str, project_dir: Path, checkov: Path, rehearsal: Callable[[], str | None] = rehearsal_unavailable
) -> tuple[int, list[Step]]:
    out_dir = project_dir / "build" / env
    code, stderr = run([sys.executable, "-m", "tools.plan", env, "--project-dir", project_dir])
    errors = [line for line in stderr if line.startswith("error: ")]
    later = ("policy pack", "bring-up", "checkov", "rehearsal")
    if code == EXIT_INVALID_INPUT:
        steps = [Step("plan", FAIL, f"Pulumi.{env}.yaml refused: {len(errors)} error line(s) above")]
        return EXIT_INVALID_INPUT, steps + [Step(name, NOT_RUN, "no plan") for name in later]
    if code not in (0, EXIT_FAILED) or "Traceback (most recent call last):" in stderr:
        steps = [Step("plan", FAIL, f"crashed (exit {code}): see its output above")]
        return EXIT_FAILED, steps + [Step(name, NOT_RUN, "no plan") for name in later]
    steps = [*plan_steps(errors, out_dir), checkov_step(out_dir, checkov), rehearsal_step(env, project_dir, rehearsal)]
    return (EXIT_FAILED if any(s.status == FAIL for s in steps) else 0), steps


def summary(env: str, code: int, steps: list[Step]) -> str:
    width = max(len(s.name) for s in steps)
    lines = [f"check of Pulumi.{env}.yaml:"]
    lines += [f"  {s.name:<{width}}  {s.status:<7}  {s.detail}".rstrip() for s in steps]
    verdict = {0: "passed", EXIT_FAILED: "FAILED", EXIT_INVALID_INPUT: "invalid input"}[code]
    lines.append(f"{verdict} (exit {code})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="check", description=__doc__)
    parser.add_argument("env", help="environment: reads Pulumi.<env>.yaml")
    parser.add_argument("--project-dir", type=Path, default=PROJECT_DIR)
    parser.add_argument(
        "--checkov",
        type=Path,
        default=None,
        help="the checkov executable (default build/checkov-venv/bin/checkov, what `make check` installs)",
    )
    args = parser.parse_args(argv)
    project_dir = args.project_dir.resolve()
    checkov = args.checkov or project_dir / "build" / "checkov-venv" / "bin" / "checkov"
    code, steps = check(args.env, project_dir, checkov.absolute())
    print(summary(args.env, code, steps))
    return code


if __name__ == "__main__":
    sys.exit(main())
