"""What a one-shot process (`make plan`, the bench's children, the suite's workers) does with an evaluation's heap:
tools.plan.engine.keep_heap_until_exit. In a fresh interpreter, since this suite's own workers keep theirs."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Three evaluations of the same small program: the first pays the imports; the second is collected as usual; the third
# runs after keep_heap_until_exit(). Each reports what the evaluation left frozen, and what the collections during
# and after it freed. Then a program that raises, with the heap kept.
SCRIPT = """
import gc, json
import pulumi_kubernetes as k8s
from tools.plan import engine

def program():
    for n in range(30):
        k8s.core.v1.ConfigMap(f"c{n}", data={"k": str(n)})

def collected():  # by every collection so far, the automatic ones included
    return sum(generation["collected"] for generation in gc.get_stats())

def run():
    gc.collect()
    frozen, before = gc.get_freeze_count(), collected()
    evaluation = engine.evaluate(program, project="p", stack="s", config={})
    assert len(evaluation.resources) == 30, len(evaluation.resources)
    gc.collect()
    return {"frozen": gc.get_freeze_count() - frozen, "collected": collected() - before}

run()
usual = run()
engine.keep_heap_until_exit()
kept = run()

def failing():
    k8s.core.v1.ConfigMap("c", data={"k": "v"})
    raise RuntimeError("a program that fails")

frozen = gc.get_freeze_count()
try:
    engine.evaluate(failing, project="p", stack="s", config={})
except Exception as error:
    raised = str(error)
print(json.dumps({"usual": usual, "kept": kept, "raised": raised, "frozen_after_raising": gc.get_freeze_count() - frozen}))
"""


@pytest.mark.slow
def test_a_process_that_keeps_its_heap_freezes_each_evaluations_garbage_instead_of_collecting_it():
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, check=True)
    report = json.loads(done.stdout)
    # As usual, an evaluation leaves cyclic garbage (the SDK's futures, tasks and Outputs) for the collector: ~165
    # objects a ConfigMap. Were there none, keeping the heap would save nothing.
    assert report["usual"]["frozen"] == 0
    assert report["usual"]["collected"] > 30 * 100
    # Kept: what the evaluation left, its garbage included, is frozen out of every scan, and a collection finds little.
    assert report["kept"]["frozen"] > report["usual"]["collected"]
    assert report["kept"]["collected"] < report["usual"]["collected"] / 20
    # An evaluation that raised is collected as usual: its traceback holds its caller's frames.
    assert report["raised"] == "a program that fails" and report["frozen_after_raising"] == 0


def _evaluating_entry_points() -> dict[str, ast.If]:
    """tools/ modules that import build_plan or evaluate at their top and run as a command: their `__main__` block."""
    found = {}
    for path in sorted((ROOT / "tools").rglob("*.py")):
        tree = ast.parse(path.read_text())
        imported = {
            alias.name
            for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.module in ("tools.plan.runner", "tools.plan.engine")
            for alias in node.names
        }
        blocks = [
            node
            for node in tree.body
            if isinstance(node, ast.If)
            and ast.unparse(node.test) in ("__name__ == '__main__'", '__name__ == "__main__"')
        ]
        if imported & {"build_plan", "evaluate"} and blocks:
            found[str(path.relative_to(ROOT))] = blocks[0]
    return found


def test_every_command_that_evaluates_keeps_its_heap_from_its_first_statement():
    entry_points = _evaluating_entry_points()
    # by hand: the plan, the rollout, the rehearsal and the bench's measuring child
    assert sorted(entry_points) == [
        "tools/bench/child.py",
        "tools/plan/__main__.py",
        "tools/rehearsal/__main__.py",
        "tools/rollout/__main__.py",
    ]
    for path, block in entry_points.items():
        assert ast.unparse(block.body[0]) == "keep_heap_until_exit()", path
