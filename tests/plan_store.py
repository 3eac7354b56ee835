"""Whole plans in the test suite: each built once per session and shared by pytest-xdist's workers, and the guard
that only tests marked `plan` ask for one, so `make test-fast` (`-m "not plan and not slow"`) never evaluates an
environment.

A plan is the suite's dearest fixture (prod: ~4 s of CPU, 7 runs of the program). `tests.harness.plan_for` and
`plan_config` cache theirs in the process; under xdist (`make test`) the first worker to ask builds it under a file
lock in the session's shared temporary directory and the others load its pickle. The key is what the plan is built
from (a fixture environment's name, or a config mapping and its stack); the program and the fixture files do not
change during a session.

The guard, registered by tests/conftest.py: a test not marked `plan` that asks `plan_for` / `plan_config` for a plan,
or runs a Pulumi program (a `__main__.py` beside a `Pulumi.yaml`: the CLI's plan, an example) in this process, or
uses a fixture that did (a module's plan first built for a marked test), fails at teardown naming the mark. An audit hook (PEP 578) sees every program run (`exec` of its code), whoever starts it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pickle
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import CodeType
from typing import Any, TypeVar

import pytest

from tests.environment_guard import charged_to_tests

MARK = "plan"
# The conftest fixtures that hand out a plan: a test using one is marked `plan` at collection.
PLAN_FIXTURES = frozenset({"dev_plan", "prod_plan", "env_plan", "checked_plan", "plan_command_output"})

T = TypeVar("T")

_directory: Path | None = None  # the session's shared directory under xdist; None: this process only
_asked: list[str] = []  # plans asked for and programs run, since the process started (the guard reads slices)
evaluations: list[str] = []  # every program run of this process (one per stack evaluated), for the summary line
_programs: dict[str, bool] = {}  # a code object's file -> whether it is a Pulumi program's __main__.py


def share_in(directory: Path) -> None:
    """Share plans with the other workers of this session through `directory` (created when missing)."""
    global _directory
    directory.mkdir(parents=True, exist_ok=True)
    _directory = directory


def asked(what: str) -> None:
    """A test (or a fixture it uses) asked for a whole plan."""
    _asked.append(what)


def _digest(key: tuple[Any, ...]) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]


@contextmanager
def _locked(digest: str, directory: Path) -> Iterator[None]:
    """The key's file lock in the session's shared directory: one worker at a time builds what the key names."""
    with open(directory / f"{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def shared(key: tuple[Any, ...], build: Callable[[], T]) -> T:
    """`build()` once per session: in this process when no directory is shared, else under the key's file lock
    (the first worker builds and pickles it, the others load it)."""
    if _directory is None:
        return build()
    digest = _digest(key)
    path = _directory / f"{digest}.pickle"
    with _locked(digest, _directory):
        if path.exists():
            return pickle.loads(path.read_bytes())
        value = build()
        partial = path.with_suffix(".partial")
        partial.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        partial.replace(path)
        return value


_outputs: dict[str, Path] = {}  # this process's directories written by `shared_output`, when no directory is shared


def shared_output(key: tuple[Any, ...], write: Callable[[Path], None], local: Callable[[], Path]) -> Path:
    """A directory `write(directory)` fills once per session, which the tests asking for it only read (a command
    line's output): under xdist in the shared directory, under the key's lock (written aside, then renamed whole);
    else in `local()`, once per process."""
    digest = _digest(key)
    if _directory is None:
        if digest not in _outputs:
            directory = local()
            write(directory)
            _outputs[digest] = directory
        return _outputs[digest]
    out = _directory / f"{digest}.out"
    with _locked(digest, _directory):
        if not out.is_dir():
            partial = _directory / f"{digest}.partial"
            write(partial)
            partial.replace(out)
        return out


def _is_program(filename: str) -> bool:
    found = _programs.get(filename)
    if found is None:
        directory, name = os.path.split(filename)
        found = _programs[filename] = name == "__main__.py" and os.path.isfile(os.path.join(directory, "Pulumi.yaml"))
    return found


def _audit(event: str, args: tuple) -> None:
    if event == "exec" and type(args[0]) is CodeType and _is_program(args[0].co_filename):
        evaluations.append(args[0].co_filename)
        _asked.append(f"ran the program {args[0].co_filename}")


sys.addaudithook(_audit)


def mark_plan_fixtures(items: list[pytest.Item]) -> None:
    """Mark `plan` every test that uses a conftest plan fixture."""
    for item in items:
        if PLAN_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(MARK)


def _message(found: list[str], nodeid: str) -> str:
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return (
        f"{nodeid} is not marked `{MARK}` but {found[0]}{more}: mark it @pytest.mark.{MARK} (or its module: "
        "pytestmark), so `make test-fast` leaves it out"
    )


pytest_runtest_protocol, pytest_runtest_makereport, pytest_fixture_setup = charged_to_tests(
    _asked, lambda item: item.get_closest_marker(MARK) is not None, _message
)


# --- the count of program runs, on the line above the result line ----------------------------------------------------

_RUNS = "program_runs"
_workers_runs: list[int] = []


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: its count goes to the controller
        workeroutput[_RUNS] = len(evaluations)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    _workers_runs.append(getattr(node, "workeroutput", {}).get(_RUNS, 0))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    runs = sum(_workers_runs) + len(evaluations)
    terminalreporter.write_line(f"program runs (one per stack evaluated): {runs}")
