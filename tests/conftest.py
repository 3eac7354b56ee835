from __future__ import annotations

import gc

import pytest

from tests.harness import plan_for
from tools.conformance import Upstream


@pytest.fixture(scope="session")
def dev_plan():
    return plan_for("dev")


@pytest.fixture(scope="session")
def prod_plan():
    return plan_for("prod")


@pytest.fixture(scope="session", params=["dev", "prod"])
def env_plan(request):
    return plan_for(request.param)


@pytest.fixture(scope="session")
def upstream() -> Upstream:
    """The vendored upstream facts (conformance/upstream/): part of the project, never skipped."""
    return Upstream()


def pytest_unconfigure(config):
    """The suite's heap holds every plan and the provider SDKs; skip walking it at interpreter exit."""
    gc.freeze()
