"""The environments shipped beside the program, whichever they are: our examples (dev, prod) on a fresh clone, a
team's own once it keeps its environments there. Each plans as `make plan ENV=<env>` plans it: exit 0, no error
line (no mandatory policy finding, no kind its cluster does not serve, no bring-up violation).

The only module that reads them (tests/environment_guard.py fails any other test that does): the other tests count
what their own fixture environments declare (tests/fixtures/environments/, a frozen copy of the examples), so a
team's edits change no expected number. The fixtures are the reference those numbers are about; a change to an
example that the tests should count goes into the fixture with the tests (CONTRIBUTING.md).
"""

from __future__ import annotations

import pytest

from tools.plan.__main__ import main as plan_main
from tools.plan.runner import PROJECT_DIR
from tools.rollout.ci import environments


@pytest.mark.plan
def test_example_environments_plan_cleanly(tmp_path, capsys):
    """What `make plan ENV=<env>` says of each: exit 0 and no `error:` line; every environment's errors at once."""
    found = environments(PROJECT_DIR)  # Pulumi.<env>.yaml with regions: not a stack's own file
    assert found, f"no Pulumi.<env>.yaml with `inference-platform:regions` in {PROJECT_DIR}: a project keeps one"
    failed = {}
    for env in found:
        code = plan_main([env, "--out", str(tmp_path / env), "--quiet"])
        errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
        if code != 0 or errors:
            failed[env] = (code, errors)
    assert failed == {}
