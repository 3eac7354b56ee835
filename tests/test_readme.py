"""README: the commands it documents run, and its generated reference blocks are up to date.

Every `make TARGET [VAR=value]` the README shows (code blocks and inline code) is a target of the Makefile that a
dry run (`make -n`, nothing executed) resolves; every module it runs, the README's `python -m MODULE` and the
Makefile recipes of those targets, exists, and the command-line ones answer `--help`.
"""

from __future__ import annotations

import importlib.util
import os
import re
import runpy
import shlex
import subprocess
import sys

import pytest

from tools.readme import README, documentation, documents, render

ROOT = README.parent
# `python -m policies` is the CrossGuard pack the Pulumi engine runs: it serves the engine over gRPC and has no
# command line, so it is only checked to exist. `tools.readme` rewrites README.md whatever its arguments.
NO_COMMAND_LINE = {"policies", "tools.readme"}


def _code() -> list[str]:
    """Fenced code block lines and inline code spans of the README and docs/, outside their generated tables."""
    text = documentation()
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)
    lines = [line.split("#", 1)[0] for block in fenced for line in block.splitlines()]
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.M | re.S)
    return lines + [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", prose)]


def documented_make_commands() -> dict[str, list[str]]:
    """target -> the variables one README example sets (VAR=value), for every `make ...` it shows."""
    commands: dict[str, list[str]] = {}
    for code in _code():
        for command in re.findall(r"(?:^|&&\s*)(make\s[^`|;&]+)", code.strip()):
            words = shlex.split(re.sub(r"<[^>]*>", "PLACEHOLDER", command))[1:]
            targets = [w for w in words if "=" not in w and not w.startswith("-")]
            for target in targets:
                commands.setdefault(target, [w for w in words if "=" in w])
    return commands


def documented_modules() -> set[str]:
    return {m for code in _code() for m in re.findall(r"\bpython -m ([A-Za-z_][\w.]*)", code)}


def _dry_run(target: str, variables: list[str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return subprocess.run(
        ["make", "-n", "--no-print-directory", target, *variables],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_the_readme_documents_the_setup_and_everyday_targets():
    assert {"plan", "test", "policy-check", "preflight", "docs", "lint", "vendor"} <= documented_make_commands().keys()
    assert {"tools.plan", "policies.check", "tools.preflight"} <= documented_modules()


def test_every_documented_make_command_is_a_target_the_makefile_resolves():
    recipe_modules = set()
    for target, variables in documented_make_commands().items():
        result = _dry_run(target, variables)
        assert result.returncode == 0, f"make -n {target} {' '.join(variables)}: {result.stderr.strip()}"
        recipe_modules |= set(re.findall(r"/python -m ([\w.]+)", result.stdout))
    # the Makefile's recipes run our tools through these modules (and pytest)
    assert {"tools.plan", "policies.check", "tools.preflight", "tools.readme", "pytest"} <= recipe_modules
    missing = sorted(m for m in recipe_modules | documented_modules() if importlib.util.find_spec(m) is None)
    assert missing == [], f"modules the README or its make targets run do not exist: {missing}"


def test_a_make_dry_run_fails_on_a_target_the_makefile_lacks():
    """The check above can fail: make refuses a target it has no rule for."""
    assert _dry_run("no-such-target", []).returncode != 0


@pytest.mark.parametrize("module", sorted(documented_modules() - NO_COMMAND_LINE))
def test_every_documented_python_module_answers_help(module, monkeypatch, capsys):
    """`python -m MODULE --help`, run in-process (runpy, as -m does): the session has imported its dependencies."""
    monkeypatch.setattr(sys, "argv", [module, "--help"])
    for name in (module, f"{module}.__main__"):  # run afresh, as `-m` does (and runpy warns otherwise)
        monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(SystemExit) as exited:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    assert (exited.value.code, "usage:" in capsys.readouterr().out) == (0, True), module


def test_generated_blocks_are_up_to_date():
    stale = [path.name for path in documents() if render(path.read_text()) != path.read_text()]
    assert len(documents()) >= 9 and stale == [], f"{stale} stale: run `make docs`"


def test_every_generated_block_is_in_exactly_one_document():
    from tools.readme import BLOCKS

    held = sorted(name for name in BLOCKS for path in documents() if f"<!-- {name}:start -->" in path.read_text())
    assert held == sorted(BLOCKS)


def test_the_readme_is_short_and_links_every_document():
    """A newcomer finishes the README (issue 34): at most 250 lines, and every docs/ page is one link away."""
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    assert [p.name for p in documents()[1:] if f"(docs/{p.name})" not in text] == []


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", "")).replace(" ", "-")


def test_every_link_between_documents_resolves():
    anchors = {
        path.resolve(): {_anchor(h) for h in re.findall(r"^#{1,6} (.+)$", path.read_text(), re.M)}
        for path in documents()
    }
    broken = []
    for path in documents():
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
            if re.match(r"^[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            resolved = (path.parent / file).resolve() if file else path.resolve()
            if not resolved.exists() or (anchor and resolved in anchors and anchor not in anchors[resolved]):
                broken.append(f"{path.name}: {target}")
    assert len(anchors) >= 10 and broken == []


def test_ci_runs_the_readme_test_command():
    """Once, in a copy of the checkout with no ../shared beside it (no test reads ../shared)."""
    ci = (README.parent / ".ci" / "run").read_text()
    assert re.findall(r"(?:^|&& )make test\b.*$", ci, re.M) == ["&& make test 2>&1 | no_skips)"]
    assert 'test ! -e "$bare/shared"' in ci


def test_ci_rehearses_dev_and_prod_after_a_preflight_with_binaries_built_from_the_start():
    """The binaries build in the background while lint, the suite and the plans run; the rehearsals come last."""
    ci = (README.parent / ".ci" / "run").read_text()
    steps = [
        line.strip()
        for line in ci.splitlines()
        if re.match(
            r"^\s*(setsid .*exec nice -n 19 )?make (rehearsal-preflight|rehearsal-tools|rehearse|lint|test|plan)\b",
            line,
        )
        or "make test" in line
    ]
    assert steps[:3] == [
        "make rehearsal-preflight",
        # Its session's scheduling group lowered too (sched(7), autogroups): nice alone leaves it half the CPU.
        "setsid sh -c '{ echo 19 >/proc/self/autogroup; } 2>/dev/null; exec nice -n 19 make rehearsal-tools ENV=prod' \\",
        "make lint",
    ]
    assert steps[-2:] == ["make rehearse ENV=dev", "make rehearse ENV=prod"]
    assert ci.index('wait "$tools_pid"') < ci.index("make rehearse ENV=dev")
    assert 'kill -- -"$tools_pid"' in ci  # a failing step stops the build too


def test_ci_fails_when_two_plans_differ():
    """The diff is a command of its own: under `set -e` a failing left side of `&&` does not stop the script."""
    ci = (README.parent / ".ci" / "run").read_text()
    (line,) = [line for line in ci.splitlines() if line.startswith("diff ")]
    assert line == 'diff -r -x rehearsal -x rehearsal.json "$bare/prod-first" build/prod'
    assert "set -euo pipefail" in ci
