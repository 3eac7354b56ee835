"""Fresh processes, their wall time and peak memory, and the statistics `make bench` reports."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.plan.runner import PROJECT_DIR


class BenchError(Exception):
    pass


@dataclass(frozen=True)
class ProcessRun:
    stdout: str
    exit_code: int
    wall_s: float
    cpu_s: float
    peak_rss_mib: float


# Linux keeps a process's peak RSS across fork + exec, so a child forked by this (larger)
# process would report at least our size. A tiny launcher forks it instead and reports the
# child's getrusage and wall time.
_LAUNCHER = """
import json, os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(sys.argv[1], "w") as out:
    json.dump({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "maxrss_kib": usage.ru_maxrss}, out)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_process(argv: list[str], cwd: Path = PROJECT_DIR, check: bool = True) -> ProcessRun:
    """Run a command in a fresh process: its stdout, exit code, wall and CPU time, peak RSS (getrusage)."""
    with tempfile.TemporaryDirectory() as tmp:
        usage_file = Path(tmp) / "usage.json"
        err_file = Path(tmp) / "stderr"
        with err_file.open("wb") as err:
            proc = subprocess.run(
                [sys.executable, "-S", "-c", _LAUNCHER, str(usage_file), *argv],
                cwd=cwd,
                stdout=subprocess.PIPE,
                stderr=err,
                check=False,
            )
        if check and proc.returncode != 0:
            tail = err_file.read_text(errors="replace").strip().splitlines()[-15:]
            raise BenchError(f"{' '.join(argv)} exited {proc.returncode}:\n" + "\n".join(tail))
        usage = json.loads(usage_file.read_text())
    return ProcessRun(proc.stdout.decode(), proc.returncode, usage["wall"], usage["cpu"], usage["maxrss_kib"] / 1024)


def run_child(*args: str) -> tuple[dict[str, Any], ProcessRun]:
    """A `tools.bench.child` measurement in a fresh interpreter: its JSON result and the process figures."""
    run = run_process([sys.executable, "-m", "tools.bench.child", *args])
    return json.loads(run.stdout.strip().splitlines()[-1]), run


def stats(values: list[float]) -> dict[str, Any]:
    return {"min": min(values), "median": statistics.median(values), "runs": values}
