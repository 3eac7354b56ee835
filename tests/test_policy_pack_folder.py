"""The policy pack as a folder of its own (`make policy-pack`, tools/policy_pack.py): what it holds, that it runs its
rules with nothing of the checkout on the path, that its requirements are the virtualenv's pins and cover every import,
and what `pulumi policy publish` would upload of it. The pack under the engine's gRPC protocol, from this folder, is
tests/test_policy_pack.py's `analyzer`."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from components.catalog.charts import CHARTS
from platform_catalog.pod_priorities import CHART_PODS
from tools.policy_pack import EXIT_REFUSED, OWNED, ROOT, assemble, ignored_by_git, main

PACKAGES = ("policies", "platform_catalog")  # what the pack imports of this checkout, by hand
PROGRAM = ("components", "stacks", "tools")  # what it must never import

# Runs in a fresh interpreter whose path is the folder (PYTHONPATH), the standard library and the virtualenv's
# site-packages: where each module of the pack comes from, whether the program is importable, and one rule of the
# pack that reads the shared catalog (platform_catalog.address_space) on a GCP firewall open to the internet in two
# halves, and on the same firewall open to 10.0.0.0/8 only.
DRIVER = """
import importlib.util, json, sys
from policies.framework import PackSettings, evaluate_stack
from policies.model import Resource
from policies.rules import ALL_RULES

def firewall(ranges):
    props = {"name": "fw", "network": "default", "direction": "INGRESS",
             "allows": [{"protocol": "tcp", "ports": ["22"]}], "sourceRanges": ranges}
    return Resource(urn="urn:pulumi:s::p::gcp:compute/firewall:Firewall::fw", type="gcp:compute/firewall:Firewall",
                    name="fw", props=props)

def findings(ranges):
    evaluation = evaluate_stack(ALL_RULES, [firewall(ranges)], PackSettings())
    return [[f.policy, f.enforcement_level, f.kind] for f in evaluation.findings]

print(json.dumps({
    "path": sys.path,
    "modules": {n: m.__file__ for n, m in sys.modules.items() if n.split(".")[0] in ("policies", "platform_catalog")},
    "program": {n: importlib.util.find_spec(n) is not None for n in ("components", "stacks", "tools")},
    "open": findings(["0.0.0.0/1", "128.0.0.0/1"]),
    "private": findings(["10.0.0.0/8"]),
}))
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pack") / "inference-platform-pack"
    assemble(out)
    return out


def _isolated(folder: Path, code: str, *, cwd: Path) -> subprocess.CompletedProcess:
    """`python -s -P -c code` with the folder as the only PYTHONPATH entry: no user site, no working directory."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), "PYTHONPATH": str(folder)}
    return subprocess.run(
        [sys.executable, "-s", "-P", "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def test_the_folder_holds_the_pack_and_the_shared_catalog_only(folder):
    top = sorted(p.name for p in folder.iterdir())
    assert top == sorted(
        [".gitignore", OWNED, "PulumiPolicy.yaml", "__main__.py", "platform_catalog", "policies", "requirements.txt"]
    )
    modules = {p.relative_to(folder).as_posix() for p in folder.rglob("*.py")}
    sources = {p.relative_to(ROOT).as_posix() for package in PACKAGES for p in (ROOT / package).rglob("*.py")}
    assert modules == sources | {"__main__.py"}
    assert (folder / "__main__.py").read_text() == (ROOT / "policies" / "__main__.py").read_text()
    assert _sys_path_uses(sorted(folder.rglob("*.py"))) == []


def _sys_path_uses(files: list[Path]) -> list[str]:
    """`sys.path` in the code of the modules (docstrings may say what the CLI does with it)."""
    return [
        f"{path.name}:{node.lineno}"
        for path in files
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", "") == "sys"
    ]


def test_a_sys_path_edit_is_found(tmp_path):
    module = tmp_path / "entry.py"
    module.write_text('"""Runs with the folder on sys.path."""\nimport sys\nsys.path.insert(0, "..")\n')
    assert _sys_path_uses([module]) == ["entry.py:3"]


@pytest.mark.slow
def test_the_folder_runs_its_rules_without_the_checkout(folder, tmp_path):
    result = _isolated(folder, DRIVER, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    assert run["program"] == {"components": False, "stacks": False, "tools": False}
    # The folder, then only the interpreter's standard library and the virtualenv: the checkout is not on the path.
    assert run["path"][0] == str(folder)
    assert [entry for entry in run["path"][1:] if not entry.startswith((sys.base_prefix, sys.prefix))] == []
    assert str(ROOT) not in run["path"]
    assert {"policies.rules.network", "platform_catalog.address_space"} <= set(run["modules"])
    assert all(path.startswith(str(folder)) for path in run["modules"].values()), run["modules"]
    assert run["open"] == [["network-no-internet-ingress", "mandatory", "violation"]]
    assert run["private"] == []


def test_a_pack_module_importing_the_program_fails_the_isolated_run(folder, tmp_path):
    """The failing side: the same isolated interpreter cannot import what a rule would take from components/."""
    result = _isolated(folder, "import components.catalog.charts", cwd=tmp_path)
    assert result.returncode == 1
    assert "No module named 'components'" in result.stderr


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-r"):
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def test_the_pack_requirements_are_pinned_as_the_virtualenv_has_them():
    pack = _pins(ROOT / "policies" / "requirements.txt")
    project = _pins(ROOT / "requirements.txt") | _pins(ROOT / "requirements-dev.txt")
    # pulumi-policy at the version the offline plan runs the rules with, read by hand from requirements-dev.txt.
    assert pack["pulumi-policy"] == "1.21.0"
    assert {name: project.get(name) for name in pack} == pack
    assert {name: importlib.metadata.version(name) for name in pack} == pack
    assert "pydantic" not in pack  # the pack reads no typed environment spec


def _imports(path: Path) -> set[str]:
    """Top-level names of the absolute imports of a module, those inside functions included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def foreign_imports(files: list[Path], requirements: Path) -> dict[str, set[str]]:
    """Module -> the imports that are neither the standard library, the folder's packages, nor a requirement."""
    required = set(_pins(requirements))
    providers = importlib.metadata.packages_distributions()
    allowed = set(sys.stdlib_module_names) | set(PACKAGES) | {"__future__"}
    foreign = {}
    for path in files:
        names = {
            name
            for name in _imports(path) - allowed
            if not {re.sub(r"[-_.]+", "-", d).lower() for d in providers.get(name, [])} & required
        }
        if names:
            foreign[path.name] = names
    return foreign


def test_every_import_of_the_folder_is_the_standard_library_the_folder_or_a_requirement(folder):
    files = sorted(folder.rglob("*.py"))
    assert len(files) > 35  # 39 modules today
    assert foreign_imports(files, folder / "requirements.txt") == {}


def test_an_import_of_the_program_or_an_unlisted_library_is_foreign(tmp_path):
    module = tmp_path / "rule.py"
    module.write_text("import boto3\nfrom components.catalog import charts\nimport yaml\nfrom policies import model\n")
    assert foreign_imports([module], ROOT / "policies" / "requirements.txt") == {"rule.py": {"boto3", "components"}}


def test_the_project_file_names_the_folders_own_virtualenv_and_the_projects_version(folder):
    project = yaml.safe_load((folder / "PulumiPolicy.yaml").read_text())
    assert project["runtime"] == {"name": "python", "options": {"toolchain": "pip", "virtualenv": "venv"}}
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert project["version"] == version


def _git_ignored(folder: Path, *paths: str) -> set[str]:
    """What git (whose .gitignore rules pulumi's archive follows) ignores of `paths` in a repository at the folder."""
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    result = subprocess.run(
        ["git", "-C", str(folder), "check-ignore", "--no-index", *paths], capture_output=True, text=True, check=False
    )
    return set(result.stdout.split())


def test_publish_leaves_out_the_virtualenv_and_caches_only(folder, tmp_path):
    copy = tmp_path / "pack"
    assemble(copy)
    ignored = _git_ignored(
        copy, "venv/bin/python", "policies/__pycache__/model.cpython-311.pyc", "__main__.py", "platform_catalog/gpus.py"
    )
    assert ignored == {"venv/bin/python", "policies/__pycache__/model.cpython-311.pyc"}


def test_a_folder_under_the_checkouts_build_is_reported_as_unpublishable(tmp_path):
    assert ignored_by_git(ROOT / "build" / "policy-pack") is True  # .gitignore: build/
    assert ignored_by_git(tmp_path / "pack") is False  # outside the checkout


def test_assembling_again_replaces_its_own_files_and_keeps_the_virtualenv(tmp_path):
    out = tmp_path / "pack"
    assemble(out)
    (out / "venv").mkdir()
    (out / "venv" / "marker").write_text("kept")
    stale = out / "policies" / "removed_since.py"
    stale.write_text("GONE = True\n")
    (out / OWNED).write_text((out / OWNED).read_text() + "policies/removed_since.py\n")
    assemble(out)
    assert not stale.exists()
    assert (out / "venv" / "marker").read_text() == "kept"
    assert "policies/removed_since.py" not in (out / OWNED).read_text().split()


def test_a_folder_it_did_not_write_is_refused_untouched(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    assert main(["--out", str(out)]) == EXIT_REFUSED
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert "holds no pack this tool assembled" in capsys.readouterr().err


def test_the_pack_knows_the_pod_priorities_of_every_chart_the_platform_pins():
    """A chart missing here would be one whose pods' classes the pack cannot know (gke-critical-priority-quota)."""
    assert len(CHARTS) == 18  # counted by hand in components/catalog/charts.py (Clusterpedia is rendered, no chart)
    assert set(CHART_PODS) == set(CHARTS)


def test_the_makefile_target_assembles_and_installs_into_the_folders_virtualenv():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\npolicy-pack:", 1)[1].split("\n\n", 1)[0]
    assert "-m tools.policy_pack --out $(PACK_OUT)" in recipe
    assert "-m venv $(PACK_OUT)/venv" in recipe
    assert "$(PACK_OUT)/venv/bin/python -m pip install" in recipe and "-r $(PACK_OUT)/requirements.txt" in recipe
    assert "\nPACK_OUT ?= build/policy-pack\n" in makefile


def test_the_documented_config_example_is_one_the_pack_accepts(tmp_path):
    """docs/policy.md's example config, as `--policy-pack-config`, `pulumi policy enable --config` and
    `make plan PLAN_FLAGS=--policy-config` read it; a level the pack does not know is refused."""
    from policies.offline import load_settings
    from policies.rules import ALL_RULES

    doc = (ROOT / "docs" / "policy.md").read_text()
    (example,) = re.findall(r"```json\n(.*?)```", doc, re.S)
    config = tmp_path / "config.json"
    config.write_text(example)
    settings = load_settings(config)
    levels = {r.name: settings.level(r) for r in ALL_RULES}
    assert levels["s3-no-public-grants"] == "mandatory"
    assert levels["gke-critical-priority-quota"] == "disabled"
    assert levels["network-no-internet-ingress"] == "advisory"  # from "all"
    config.write_text('{"all": "strict"}')
    with pytest.raises(ValueError):
        load_settings(config)
