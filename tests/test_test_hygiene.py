"""The tests themselves: none may pass on empty input, and none reads the environments beside the program.

A test whose every assertion sits inside a loop over data (a plan's objects, a catalog), or is an `all(...)` /
"no offenders" check over it, passes when the data is empty: a wrong selector or an empty plan looks green. Such a
test needs one assertion outside the loop that states what must exist (an exact count by hand, or the names). Loops
over a literal (`for env in ("dev", "prod")`, or a module constant spelled out as a non-empty literal) are not data.
"""

from __future__ import annotations

import ast
import contextlib
import json
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import environment_guard, plan_store
from tests.harness import ENVIRONMENTS_DIR
from tools.plan.artifacts import plan_document

TESTS = Path(__file__).parent
LOOPS = (ast.For, ast.AsyncFor, ast.While)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _literal_constants(tree: ast.Module) -> set[str]:
    """Module-level names bound once to a non-empty literal list, tuple, set or dict."""
    bound: dict[str, int] = {}
    literal: set[str] = set()
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        for target in targets:
            if isinstance(target, ast.Name):
                bound[target.id] = bound.get(target.id, 0) + 1
                if _non_empty_literal(node.value, set()):
                    literal.add(target.id)
    return {name for name in literal if bound[name] == 1}


def _non_empty_literal(node: ast.AST | None, constants: set[str]) -> bool:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(not isinstance(e, ast.Starred) for e in node.elts)
    if isinstance(node, ast.Dict):
        return any(k is not None for k in node.keys)
    if isinstance(node, ast.Name):
        return node.id in constants
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
        # CONSTANT.items() / .values() / .keys()
        return node.func.attr in ("items", "values", "keys") and _non_empty_literal(node.func.value, constants)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("enumerate", "sorted"):
        return bool(node.args) and _non_empty_literal(node.args[0], constants)
    return False


def _asserts(func: ast.FunctionDef, constants: set[str]) -> list[tuple[ast.stmt, bool]]:
    """(assertion, inside a loop over data) for every assert and `pytest.raises` block of a test."""
    found: list[tuple[ast.stmt, bool]] = []

    def visit(node: ast.AST, in_data_loop: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, SCOPES):
                continue
            inside = in_data_loop
            if isinstance(node, LOOPS) and any(child is s for s in node.body):
                iterable = node.iter if isinstance(node, (ast.For, ast.AsyncFor)) else None
                inside = in_data_loop or not _non_empty_literal(iterable, constants)
            if isinstance(child, ast.Assert) or (isinstance(child, ast.With) and _raises(child)):
                found.append((child, inside))
            visit(child, inside)

    visit(func, False)
    return found


def _raises(node: ast.With) -> bool:
    return any(
        isinstance(item.context_expr, ast.Call)
        and isinstance(item.context_expr.func, ast.Attribute)
        and item.context_expr.func.attr in ("raises", "warns")
        for item in node.items
    )


def _holds_on_empty(test: ast.expr) -> bool:
    """`all(...)`, `not any(...)`, `not [x for ...]`: true of an empty collection."""
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "all":
        return True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        operand = test.operand
        return isinstance(operand, COMPREHENSIONS) or (
            isinstance(operand, ast.Call) and isinstance(operand.func, ast.Name) and operand.func.id == "any"
        )
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return all(_holds_on_empty(v) for v in test.values)
    return False


def vacuous_tests(source: str) -> list[str]:
    """The test functions of a module whose every assertion holds on empty data."""
    tree = ast.parse(source)
    constants = _literal_constants(tree)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        functions += [n for n in cls.body if isinstance(n, ast.FunctionDef)]
    offenders = []
    for func in functions:
        if not func.name.startswith("test"):
            continue
        found = _asserts(func, constants)
        if found and all(
            in_loop or (isinstance(node, ast.Assert) and _holds_on_empty(node.test)) for node, in_loop in found
        ):
            offenders.append(f"{func.name} (line {func.lineno})")
    return offenders


def test_no_test_passes_on_empty_data():
    offenders = {
        path.name: found for path in sorted(TESTS.glob("test_*.py")) if (found := vacuous_tests(path.read_text()))
    }
    assert offenders == {}, "assert what must exist outside the loop (a count by hand, or the names)"


def test_the_scan_finds_a_loop_only_test_and_accepts_its_guarded_form():
    loop_only = """
def test_every_pool_is_tainted(plan):
    for pool in plan.pools:
        assert pool.taints, pool.name
"""
    all_only = """
def test_every_pool_is_tainted(plan):
    assert all(pool.taints for pool in plan.pools)
"""
    absence_only = """
def test_nothing_privileged(plan):
    assert not [p for p in plan.pods if p.privileged]
"""
    guarded = """
def test_every_pool_is_tainted(plan):
    assert len(plan.pools) == 3, "h100, l40s and a100"
    for pool in plan.pools:
        assert pool.taints, pool.name
"""
    literal = """
ENVS = ("dev", "prod")

def test_each_environment(plans):
    for env in ENVS:
        assert plans[env].ok, env
    for kind in ("a", "b"):
        assert kind
"""
    nested = """
def test_each_environment(dev, prod):
    for plan in (dev, prod):
        for pool in plan.pools:
            assert pool.taints
"""
    assert vacuous_tests(loop_only) == ["test_every_pool_is_tainted (line 2)"]
    assert vacuous_tests(all_only) == ["test_every_pool_is_tainted (line 2)"]
    assert vacuous_tests(absence_only) == ["test_nothing_privileged (line 2)"]
    assert vacuous_tests(nested) == ["test_each_environment (line 2)"]
    assert vacuous_tests(guarded) == []
    assert vacuous_tests(literal) == []


# --- the environments beside the program are a team's: tests/environment_guard.py -------------------------------

PROBE = "Pulumi.guard-probe.yaml"  # a name no project keeps: opening it is seen even when it does not exist


def _open(path: Path | str) -> None:
    with contextlib.suppress(FileNotFoundError):
        Path(path).read_bytes()


def test_the_guard_sees_every_open_of_an_environment_file_beside_the_program(tmp_path, monkeypatch):
    project = Path(environment_guard.PROJECT_DIR)
    with environment_guard.reads() as found:
        _open(project / PROBE)
        _open(project / "Pulumi.guard-probe.use1.yaml")  # a stack's own file
        monkeypatch.chdir(project)
        _open(PROBE)  # relative to the directory the test runs in
        _open(project / "Pulumi.yaml")  # the project file: the program's
        _open(ENVIRONMENTS_DIR / "Pulumi.dev.yaml")  # the tests' own
        _open(tmp_path / PROBE)  # another directory
    assert found == [str(project / PROBE), str(project / "Pulumi.guard-probe.use1.yaml"), str(project / PROBE)]


@pytest.mark.slow
def test_a_test_reading_an_environment_beside_the_program_fails_naming_it(tmp_path):
    """The guard's hooks in a pytest run of their own: a test, and a module at collection, that open one."""
    probe = Path(environment_guard.PROJECT_DIR) / PROBE
    opens = f"from pathlib import Path\n\ntry:\n    Path({str(probe)!r}).read_bytes()\nexcept OSError:\n    pass\n"
    (tmp_path / "test_reads.py").write_text(
        "def test_reads():\n" + textwrap.indent(opens, "    ") + "\n\ndef test_reads_nothing():\n    pass\n"
    )
    (tmp_path / "test_collected.py").write_text(opens)
    pytest = [sys.executable, "-m", "pytest", "-p", "tests.environment_guard", "-p", "no:cacheprovider"]
    pytest += ["-o", "addopts=", "--rootdir", str(tmp_path), "-q"]

    def run(name: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*pytest, str(tmp_path / name)], cwd=environment_guard.PROJECT_DIR, capture_output=True, text=True
        )

    reads = run("test_reads.py")
    assert reads.returncode == 1, reads.stdout
    assert reads.stdout.splitlines()[-1].startswith("2 passed, 1 error")  # test_reads fails at teardown
    assert f"test_reads.py::test_reads read {PROBE} of the project's directory" in reads.stdout
    collected = run("test_collected.py")
    assert collected.returncode == 2, collected.stdout  # a collection error
    assert f"collecting test_collected.py read {PROBE} of the project's directory" in collected.stdout


# --- whole plans only in tests marked `plan`, each built once per session: tests/plan_store.py --------------------


@pytest.mark.slow
def test_a_test_asking_for_a_plan_or_running_the_program_unmarked_fails_naming_the_mark(tmp_path):
    """The guard's hooks in a pytest run of their own; the program is a stand-in (a `__main__.py` beside a
    `Pulumi.yaml`), so nothing is planned."""
    program = tmp_path / "program"
    program.mkdir()
    (program / "Pulumi.yaml").write_text("name: stand-in\n")
    (program / "__main__.py").write_text("ran = True\n")
    (tmp_path / "test_asks.py").write_text(
        textwrap.dedent(f"""\
            import runpy

            import pytest

            from tests import plan_store


            def test_asks():
                plan_store.asked("asked for plan_for('dev')")


            def test_runs_the_program():
                assert runpy.run_path({str(program / "__main__.py")!r})["ran"]


            @pytest.mark.plan
            def test_marked():
                plan_store.asked("asked for plan_for('dev')")
                runpy.run_path({str(program / "__main__.py")!r})


            def test_runs_other_code():
                runpy.run_path({str(tmp_path / "test_asks.py")!r}, run_name="not_main")


            @pytest.fixture(scope="module")
            def module_plan():
                plan_store.asked("asked for plan_for('prod')")


            @pytest.fixture(scope="module")
            def module_value():
                return "no plan"


            @pytest.mark.plan
            def test_marked_builds_the_module_plan(module_plan):
                pass


            def test_reuses_the_module_plan(module_plan):
                pass


            def test_reuses_a_module_fixture_that_asked_for_none(module_value):
                pass
            """)
    )
    command = [sys.executable, "-m", "pytest", "-p", "tests.plan_store", "-p", "no:cacheprovider", "-o", "addopts="]
    command += ["--rootdir", str(tmp_path), "-q", "-W", "ignore::pytest.PytestUnknownMarkWarning"]
    run = subprocess.run(
        [*command, str(tmp_path / "test_asks.py")], cwd=environment_guard.PROJECT_DIR, capture_output=True, text=True
    )
    assert run.returncode == 1, run.stdout
    lines = run.stdout.splitlines()
    assert lines[-1].startswith("7 passed, 3 errors in ")
    assert "program runs (one per stack evaluated): 2" in lines
    # built for a marked test, a module's plan is still a plan for the next test using it (make test-fast runs it alone)
    assert "test_asks.py::test_reuses_the_module_plan is not marked `plan` but asked for plan_for('prod')" in run.stdout
    assert "test_asks.py::test_asks is not marked `plan` but asked for plan_for('dev'): mark it" in run.stdout
    assert f"test_asks.py::test_runs_the_program is not marked `plan` but ran the program {program}" in run.stdout


def test_a_shared_plan_is_built_once_and_read_back_by_the_other_workers(tmp_path, monkeypatch):
    builds: list[str] = []

    def build() -> dict:
        builds.append("built")
        return {"resources": ["a", "b"]}

    monkeypatch.setattr(plan_store, "_directory", None)
    assert plan_store.shared(("env", "dev"), build) == {"resources": ["a", "b"]}  # no xdist: this process only
    plan_store.share_in(tmp_path / "plans")
    first = plan_store.shared(("env", "dev"), build)
    again = plan_store.shared(("env", "dev"), build)  # as another worker: the pickle, not a second build
    other = plan_store.shared(("env", "prod"), build)
    assert builds == ["built"] * 3 and first == again == other == {"resources": ["a", "b"]}
    assert len(list((tmp_path / "plans").glob("*.pickle"))) == 2


def test_a_commands_output_is_written_once_and_read_by_the_other_workers(tmp_path, monkeypatch):
    writes: list[Path] = []

    def write(out: Path) -> None:
        writes.append(out)
        out.mkdir()
        (out / "plan.json").write_text("{}")

    monkeypatch.setattr(plan_store, "_directory", None)
    monkeypatch.setattr(plan_store, "_outputs", {})
    local = tmp_path / "local"
    here = plan_store.shared_output(("plan-command", "dev"), write, lambda: local)
    assert here == local and plan_store.shared_output(("plan-command", "dev"), write, lambda: tmp_path / "x") == local
    plan_store.share_in(tmp_path / "plans")
    first = plan_store.shared_output(("plan-command", "dev"), write, lambda: tmp_path / "unused")
    again = plan_store.shared_output(("plan-command", "dev"), write, lambda: tmp_path / "unused")  # another worker
    other = plan_store.shared_output(("plan-command", "prod"), write, lambda: tmp_path / "unused")
    assert len(writes) == 3 and first == again != other
    assert (first / "plan.json").read_text() == "{}" and first.parent == tmp_path / "plans"
    assert not list((tmp_path / "plans").glob("*.partial")) and not (tmp_path / "unused").exists()


@pytest.mark.plan
def test_a_plan_read_back_from_its_pickle_is_the_plan_it_was(dev_plan):
    again = pickle.loads(pickle.dumps(dev_plan, protocol=pickle.HIGHEST_PROTOCOL))
    assert json.dumps(plan_document(again), sort_keys=True) == json.dumps(plan_document(dev_plan), sort_keys=True)
    assert [r.urn for r in again.resources] == [r.urn for r in dev_plan.resources]
    assert len(again.resources) > 200
