"""The suite's guard that no test depends on the environments shipped beside the program (a team's own, once it
keeps its environments there): a test, a fixture it uses, or a test module being collected that opens a
`Pulumi.<env>.yaml` of the project's directory fails, naming the file. Only tests/test_example_environments.py,
which is about those files, may read them; the others read tests/fixtures/environments/ (tests/harness.py).

An audit hook (PEP 578) sees every `open` of the process, whatever opens it: `Path.read_text`, the plan's own
reading, `shutil.copy`. Registered by tests/conftest.py, which imports these hooks.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

PROJECT_DIR = str(Path(__file__).resolve().parents[1])
EXAMPLE_TESTS = "test_example_environments.py"

_reads: list[str] = []


def shipped_environment(path: object) -> str | None:
    """`path` when it names a `Pulumi.<env>.yaml` (or a stack's `Pulumi.<env>.<stack>.yaml`) of the project's own
    directory; `Pulumi.yaml`, the project file, is the program's."""
    if not isinstance(path, (str, os.PathLike)):
        return None  # a file descriptor, or bytes the project never uses
    full = os.path.join(os.getcwd(), os.fspath(path))  # an absolute path stays as it is
    directory, name = os.path.split(os.path.normpath(full))
    if directory == PROJECT_DIR and name.startswith("Pulumi.") and name.endswith(".yaml") and name != "Pulumi.yaml":
        return full
    return None


def _audit(event: str, args: tuple) -> None:
    if event == "open" and (found := shipped_environment(args[0])) is not None:
        _reads.append(found)


sys.addaudithook(_audit)


@contextmanager
def reads() -> Iterator[list[str]]:
    """The shipped environment files opened inside the block (not charged to the running test)."""
    start = len(_reads)
    found: list[str] = []
    try:
        yield found
    finally:
        found += _reads[start:]
        del _reads[start:]


def _message(paths: list[str], who: str) -> str:
    names = ", ".join(sorted({Path(p).name for p in paths}))
    return (
        f"{who} read {names} of the project's directory: a team's own environments live there. Read the fixture "
        "environments (tests/harness.py: plan_for, environment_config, ENVIRONMENTS_DIR; fixture_project for a "
        f"command line's --project-dir), or move a test about the shipped examples to tests/{EXAMPLE_TESTS}"
    )


def charged_to_tests(
    events: list[str], exempt: Callable[[pytest.Item], bool], message: Callable[[list[str], str], str]
) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
    """The three hooks of a guard (`pytest_runtest_protocol`, `pytest_runtest_makereport`, `pytest_fixture_setup`):
    a test that is not `exempt` fails at teardown with `message(those events, its node id)` when `events` grew
    during it (its fixtures' setup included), or when it uses a fixture whose setup made them, under whichever test
    that fixture was first set up (a module fixture built for a marked test is the same plan for the next test
    using it). tests/plan_store.py's guard is the other one."""
    start = pytest.StashKey[int]()
    by_fixture: dict[object, list[str]] = {}  # a FixtureDef -> the events of its setup, for every test using it

    @pytest.hookimpl(hookwrapper=True)
    def protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
        item.stash[start] = len(events)
        yield

    @pytest.hookimpl(hookwrapper=True)
    def fixture_setup(fixturedef: Any, request: pytest.FixtureRequest) -> Iterator[None]:
        begin = len(events)
        yield
        if len(events) > begin:
            by_fixture[fixturedef] = events[begin:]

    def of_fixtures(item: pytest.Item) -> list[str]:
        """The events of the fixtures `item` uses, whoever set them up (the closest definition of each name)."""
        definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        used = [definitions[name][-1] for name in getattr(item, "fixturenames", ()) if definitions.get(name)]
        return [event for fixturedef in used for event in by_fixture.get(fixturedef, ())]

    @pytest.hookimpl(hookwrapper=True)
    def makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
        outcome = yield
        report = outcome.get_result()
        if call.when != "teardown" or exempt(item):
            return
        found = events[item.stash.get(start, len(events)) :] or of_fixtures(item)
        if found and report.passed:
            report.outcome = "failed"
            report.longrepr = message(found, item.nodeid)

    return protocol, makereport, fixture_setup


pytest_runtest_protocol, pytest_runtest_makereport, pytest_fixture_setup = charged_to_tests(
    _reads, lambda item: item.path.name == EXAMPLE_TESTS, _message
)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    start = len(_reads)
    outcome = yield
    report = outcome.get_result()
    read = _reads[start:]
    if read and isinstance(collector, pytest.Module) and collector.path.name != EXAMPLE_TESTS and report.passed:
        report.outcome = "failed"
        report.longrepr = _message(read, f"collecting {collector.nodeid}")
