"""What a one-shot process (`make plan`, the bench's children, the suite's workers) does with an evaluation's heap:
tools.plan.engine.keep_heap_until_exit. In a fresh interpreter, since this suite's own workers keep theirs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Three evaluations of the same small program: the first pays the imports; the second is collected as usual; the third
# runs after keep_heap_until_exit(). Each reports what the evaluation left frozen, and what the collections during
# and after it freed.
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
print(json.dumps({"usual": usual, "kept": kept}))
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
