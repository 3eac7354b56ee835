from __future__ import annotations

import gc
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from tests import plan_store

# The guard that no test reads the environments shipped beside the program (its hooks, registered by being here).
from tests.environment_guard import (  # noqa: F401
    pytest_fixture_setup,
    pytest_make_collect_report,
    pytest_runtest_makereport,
    pytest_runtest_protocol,
)
from tests.harness import plan_config, plan_for, project_with_environments
from tools.conformance import Upstream
from tools.plan.engine import keep_heap_until_exit


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
def fixture_project(tmp_path_factory) -> Path:
    """The program with the fixture environments, for a command line's `--project-dir` (with its own `--out`:
    nothing may write into it)."""
    return project_with_environments(tmp_path_factory.mktemp("fixture-project"))


@pytest.fixture(scope="session")
def plan_command_output(tmp_path_factory, fixture_project) -> Callable[[str], Path]:
    """`python -m tools.plan ENV --project-dir <the fixture project> --out DIR` of a fixture environment, run once per
    session (tests/plan_store.py): DIR, which the tests only read (plan.json, plan.md, manifests/, policy.json)."""
    from tools.plan.__main__ import main as plan_main

    def output(env: str) -> Path:
        plan_store.asked(f"asked for the plan command's output of {env}")

        def write(out: Path) -> None:
            assert plan_main([env, "--project-dir", str(fixture_project), "--out", str(out), "--quiet"]) == 0

        return plan_store.shared_output(("plan-command", env), write, lambda: tmp_path_factory.mktemp(f"plan-{env}"))

    return output


def _variant_configs() -> dict[str, tuple[str, Callable[[], dict]]]:
    """Variants other tests build that reach objects dev and prod do not: a multi-node model (KServe
    workerSpec, PodGroups), the extra GPU pools (reservations, spot, MIG, time-slicing, GPUDirect), Knative
    serving, and search over every member (PediaClusters from the global stack)."""
    from tests.harness import environment_config, ns
    from tests.test_gpu_pools import AWS_EXTRA, GCP_EXTRA
    from tests.test_search import search_everywhere
    from tests.test_serving_config import _multi_node_prod

    def gpu_pools() -> dict:
        config = environment_config("prod")
        config[ns("regions")][0]["gpuPools"] += AWS_EXTRA
        config[ns("regions")][2]["gpuPools"] += GCP_EXTRA
        return config

    def knative() -> dict:
        config = environment_config("dev")
        config[ns("regions")][0]["serving"] = {"deploymentMode": "Knative"}
        return config

    # The stacks those tests plan them as (tests/test_gateway.py, test_gpu_pools.py, test_kserve.py, test_search.py,
    # test_policy_variants.py): the plan store shares a plan between them only when config and stack are the same.
    return {
        "multi-node": ("test", _multi_node_prod),
        "gpu-pools": ("test", gpu_pools),
        "knative": ("test", knative),
        "search": ("search", search_everywhere),
    }


@pytest.fixture(scope="session", params=["dev", "prod", "multi-node", "gpu-pools", "knative", "search"])
def checked_plan(request):
    """dev, prod and the variants: what the server-side checks (built-in kinds, CEL rules, provider
    schemas) run over."""
    if request.param in ("dev", "prod"):
        return plan_for(request.param)
    stack, config = _variant_configs()[request.param]
    return plan_config(config(), stack=stack)


class _SessionUpstream(Upstream):
    """The vendored upstream, each CRD file parsed once per session and shared by the xdist workers
    (tests/plan_store.py): libyaml takes ~2 s of CPU for KServe's and Envoy Gateway's CRDs, which most workers read,
    and unpickling them ~20 times less."""

    @cache  # noqa: B019 - one per session
    def crd_documents(self, path: Path) -> tuple[dict, ...]:
        return plan_store.shared(("crd documents", str(path)), lambda: Upstream.crd_documents(self, path))


@pytest.fixture(scope="session")
def upstream() -> Upstream:
    """The vendored upstream facts (conformance/upstream/): part of the project, never skipped."""
    return _SessionUpstream()


def pytest_configure(config: pytest.Config) -> None:
    """Plans shared by the session's xdist workers, and the guard that only tests marked `plan` ask for one."""
    config.pluginmanager.register(plan_store, "plan_store")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    plan_store.mark_plan_fixtures(items)
    # What collection made (modules, items) lives as long as the session: out of every scan (tests/__init__.py). So
    # does each program run's heap, as in the command lines (tools.plan.engine.keep_heap_until_exit): its garbage is
    # not collected, for ~45 MB of memory per prod plan.
    keep_heap_until_exit()


@pytest.fixture(scope="session", autouse=True)
def _plans_shared_by_workers(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Under xdist, each worker's basetemp is a directory of the session's own: plans are shared there."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        plan_store.share_in(tmp_path_factory.getbasetemp().parent / "plans")


def pytest_unconfigure(config):
    """The suite's heap holds every plan and the provider SDKs; skip walking it at interpreter exit."""
    gc.freeze()
