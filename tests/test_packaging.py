"""The installable package: `make wheel` builds it, and a Pulumi program outside the checkout uses it.

The wheel is built from a copy of the checkout (setuptools writes build/ and *.egg-info beside the sources, and
the checkout's build/ is the plan's), then installed into a fresh virtualenv whose dependencies are this one's, the
pinned requirements.txt: nothing is downloaded but the build backend pyproject.toml pins. There the example program,
copied out of the checkout, runs under the Pulumi SDK's mocks on the installed components.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from tools.plan.runner import PROJECT_DIR

EXAMPLE = PROJECT_DIR / "examples" / "existing-eks-gpu-pool"
PACKAGES = ("components", "stacks", "platform_catalog")  # pyproject.toml [tool.setuptools.packages.find]
# A module a previous build staged in build/lib and the sources no longer have.
STALE = "components/removed_since_the_last_build.py"

# Runs in the fresh virtualenv: the example under the mocks, and where each of the platform's modules came from.
DRIVER = """
import json, runpy, sys
from pathlib import Path

checkout, program = Path(sys.argv[1]), Path(sys.argv[2])
sys.path.append(str(checkout))  # the mock engine (tools/) is not shipped; appended, after the installed packages
from tools.plan.engine import evaluate
from tools.plan.stackfile import load_stack_config

config = load_stack_config(program, "dev")
evaluation = evaluate(
    lambda: runpy.run_path(str(program / "__main__.py"), run_name="__main__"),
    project=config.project, stack=config.stack, config=config.config, secret_keys=config.secret_keys,
)
platform = {n: m.__file__ for n, m in sys.modules.items() if n.split(".")[0] in ("components", "stacks", "platform_catalog")}
types = sorted(r.type for r in evaluation.resources)
print(json.dumps({"modules": platform, "types": types, "outputs": evaluation.outputs}))
"""


def _run(args: list, **kwargs) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(args, capture_output=True, text=True, env=env, **kwargs)
    assert result.returncode == 0, f"{args}: {result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """`make wheel` in a copy of the checkout whose build/lib still holds a module of an earlier build."""
    source = tmp_path_factory.mktemp("checkout") / "inference-platform"
    ignored = (".venv", "build", "dist", ".git", "*.egg-info", "__pycache__", ".pytest_cache", ".ruff_cache")
    ignored += ("Pulumi.*.yaml",)  # the team's environments: no part of the package
    shutil.copytree(PROJECT_DIR, source, ignore=shutil.ignore_patterns(*ignored))
    stale = source / "build" / "lib" / STALE
    stale.parent.mkdir(parents=True)
    stale.write_text("GONE = True\n")
    # The shared virtualenv's interpreter; -o: the copy has no .venv of its own and needs none.
    bin_dir = Path(sys.executable).parent
    _run(["make", "-C", str(source), "wheel", f"BIN={bin_dir}", "-o", ".venv/.requirements.stamp"])
    (built,) = (source / "dist").glob("*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv with the wheel installed, its dependencies those of this virtualenv."""
    venv = tmp_path_factory.mktemp("venv") / "team"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    (site / "pinned-requirements.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)])
    return venv


def _names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


@pytest.mark.slow
def test_the_wheel_ships_exactly_the_packages_modules_and_their_type_marker(wheel):
    shipped = {n for n in _names(wheel) if not n.split("/")[0].endswith(".dist-info")}
    sources = {
        str(path.relative_to(PROJECT_DIR))
        for package in PACKAGES
        for path in (PROJECT_DIR / package).rglob("*")
        if path.suffix == ".py" and "__pycache__" not in path.parts
    }
    assert len(sources) > 100  # a guard against an empty glob (137 modules today)
    assert shipped == sources | {f"{package}/py.typed" for package in PACKAGES}
    assert STALE not in shipped  # make wheel empties setuptools' staging first


@pytest.mark.slow  # `make wheel` in a child process: seconds
def test_the_wheel_requires_the_pinned_runtime(wheel):
    (metadata,) = [n for n in _names(wheel) if n.endswith(".dist-info/METADATA")]
    with zipfile.ZipFile(wheel) as archive:
        headers = archive.read(metadata).decode().split("\n\n", 1)[0].splitlines()
    requires = sorted(line.split(": ", 1)[1] for line in headers if line.startswith("Requires-Dist: "))
    lines = (line.split("#", 1)[0].strip() for line in (PROJECT_DIR / "requirements.txt").read_text().splitlines())
    pinned = sorted(line for line in lines if line)
    assert requires == pinned
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.]*", r) for r in requires), requires
    project = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())["project"]
    assert f"Version: {project['version']}" in headers
    assert "License-Expression: Apache-2.0" in headers


@pytest.mark.slow
def test_a_program_outside_the_checkout_runs_on_the_installed_components(installed, tmp_path):
    program = tmp_path / "team-program"
    shutil.copytree(EXAMPLE, program)
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    result = _run([installed / "bin" / "python", driver, PROJECT_DIR, program], cwd=tmp_path)
    run = json.loads(result.stdout.splitlines()[-1])
    site = str(installed / "lib")
    assert {
        "components.aws.gpu_node_group",
        "components.serving.model_deployment",
        "stacks.config",
        "platform_catalog.machines",
    } <= set(run["modules"])
    outside = {name: path for name, path in run["modules"].items() if not path.startswith(site)}
    assert outside == {}
    assert "aws:eks/nodeGroup:NodeGroup" in run["types"]
    assert "kubernetes:serving.kserve.io/v1beta1:InferenceService" in run["types"]
    assert run["outputs"]["url"] == "http://llama-3-1-8b-predictor.inference.svc.cluster.local/v1"
