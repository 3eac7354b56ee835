from __future__ import annotations

import gc
import os

import pytest

from tests.harness import plan_for
from tools.conformance import UPSTREAM_ENV, Upstream, upstream_dir


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
    root = upstream_dir()
    if not root.is_dir():
        message = f"upstream data not found at {root}; set {UPSTREAM_ENV} to ../shared/upstream"
        if os.environ.get("INFERENCE_PLATFORM_REQUIRE_UPSTREAM"):
            pytest.fail(message)
        pytest.skip(message)
    return Upstream(root)


def pytest_unconfigure(config):
    """The suite's heap holds every plan and the provider SDKs; skip walking it at interpreter exit."""
    gc.freeze()
