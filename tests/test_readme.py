"""README: the two set-up commands, and generated reference blocks that are up to date."""

from __future__ import annotations

import re

from tools.readme import README, render


def test_readme_states_the_two_setup_commands():
    text = README.read_text()
    assert "make plan" in text and "make test" in text


def test_generated_blocks_are_up_to_date():
    text = README.read_text()
    assert render(text) == text, "README.md is stale: run `make docs`"


def test_ci_runs_the_readme_test_command():
    """Once in the clone, once in a copy with no ../shared beside it."""
    ci = (README.parent / ".ci" / "run").read_text()
    assert len(re.findall(r"(?:^|&& )make test\b", ci, re.M)) == 2
