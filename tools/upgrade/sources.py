"""Where the files of a component's new version are read: the public source a release is published to, or a local
folder laid out like it (tests, offline work).

- PyPI: `pip download --no-deps --only-binary :all: NAME==VERSION` (the wheel: its Python source, its version
  record); a scratch virtualenv with the wheel and its dependencies when a generator must import the package.
- A repository (`repository`): first the Go module proxy when it is a Go module, `go mod download -json
  MODULE@VERSION` under the user's GOPROXY (the module's files at the tag and the tag's commit); else git: the tag
  fetched from its public repository into build/upgrade/mirrors/ (or found in the pre-fetched mirrors
  UPSTREAM_MIRRORS names), read with `git show TAG:PATH`.
- FROM=DIR: the release's files at their paths in the repository (or, for a PyPI package, the unpacked package).
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tools.upstream_origins import OriginUnavailable, git_dir, go_mod_download

WORK_DIR = Path(__file__).resolve().parents[2] / "build" / "upgrade"


_PIP_DOWNLOAD = (sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--quiet")


class SourceError(Exception):
    """The new version's files cannot be had from that source."""


@dataclass
class Tree:
    """The files of one release: read(path) -> text, plus what identifies the release."""

    description: str
    commit: str
    root: Path | None = None  # a directory holding the files at their repository paths
    mirror: Path | None = None  # or a git directory and the revision to read
    revision: str = ""
    python: str = ""  # an interpreter that imports the package (PyPI releases, local package trees)
    pythonpath: str = ""
    local: bool = False  # a folder given with FROM: it may hold several repositories' files

    def read(self, path: str) -> str:
        if self.root is not None:
            file = self.root / path
            if not file.is_file():
                raise SourceError(f"{path}: not in {self.description}")
            return file.read_text(errors="replace")
        assert self.mirror is not None
        out = subprocess.run(
            ["git", "-C", str(self.mirror), "show", f"{self.revision}:{path}"], capture_output=True, check=False
        )
        if out.returncode != 0:
            raise SourceError(f"{path}: not in {self.description}")
        return out.stdout.decode(errors="replace")

    def files(self, directory: str, suffix: str = "") -> list[str]:
        """The files directly in `directory` (repository paths) whose names end with `suffix`."""
        if self.root is not None:
            folder = self.root / directory
            found = (
                [p.relative_to(self.root).as_posix() for p in folder.iterdir() if p.is_file()]
                if folder.is_dir()
                else []
            )
        else:
            out = subprocess.run(
                ["git", "-C", str(self.mirror), "ls-tree", "--name-only", self.revision, f"{directory}/"],
                capture_output=True,
                text=True,
                check=False,
            )
            found = out.stdout.split()
        return sorted(f for f in found if f.endswith(suffix))

    def exists(self, path: str) -> bool:
        try:
            self.read(path)
        except SourceError:
            return False
        return True


def local(folder: Path, *, package: bool = False) -> Tree:
    """A local folder; `package`: it holds an importable Python package, run with this interpreter."""
    if not folder.is_dir():
        raise SourceError(f"FROM={folder}: no such folder")
    tree = Tree(f"the local folder {folder}", commit=f"local folder {folder.name}", root=folder, local=True)
    if package:
        tree.python, tree.pythonpath = sys.executable, str(folder)
    return tree


def go_module(module: str, version: str) -> Tree:
    try:
        info = go_mod_download(module, version, timeout=900)
    except OriginUnavailable as exc:
        raise SourceError(str(exc).splitlines()[0]) from exc
    return Tree(
        f"the Go module {module}@{version}", commit=info.get("Origin", {}).get("Hash", ""), root=Path(info["Dir"])
    )


def git(repo: str, tag: str) -> Tree:
    try:
        directory = git_dir(repo, tag)
    except OriginUnavailable as exc:
        raise SourceError(str(exc)) from exc
    out = subprocess.run(
        ["git", "-C", str(directory), "rev-parse", f"{tag}^{{commit}}"], capture_output=True, text=True, check=True
    )
    return Tree(f"{repo}@{tag} (git)", commit=out.stdout.strip(), mirror=directory, revision=tag)


def repository(repo: str, tag: str, module: str = "") -> Tree:
    """`repo` at `tag`: the Go module proxy first when `module` is its module path, else git; the error names
    every source tried and the offline fix."""
    tried = []
    for source in (lambda: go_module(module, tag), lambda: git(repo, tag)) if module else (lambda: git(repo, tag),):
        try:
            return source()
        except SourceError as exc:
            tried.append(str(exc))
    raise SourceError(f"{repo}@{tag} not read: {'; '.join(tried)}; offline: FROM=<a checkout of {tag}>")


def pypi(package: str, version: str, *, importable: bool) -> Tree:
    """The wheel of `package==version`, its Python files unpacked; `importable`: also a scratch virtualenv with the
    wheel and its dependencies (for a generator that builds the package's own parser; large for vLLM)."""
    where = WORK_DIR / f"{package}-{version}"
    wheels = where / "wheel"
    wheel = next(iter(sorted(wheels.glob("*.whl"))), None) if wheels.is_dir() else None
    if wheel is None:
        _run(
            [*_PIP_DOWNLOAD, "-d", str(wheels), f"{package}=={version}"],
            f"pip download {package}=={version}",
        )
        wheel = next(iter(sorted(wheels.glob("*.whl"))))
    source = where / "src"
    if not source.is_dir():
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(source, [n for n in archive.namelist() if n.endswith((".py", "METADATA"))])
    digest = subprocess.run(["sha256sum", str(wheel)], capture_output=True, text=True, check=True).stdout.split()[0]
    commit = _wheel_commit(source, package)
    tree = Tree(f"PyPI wheel {wheel.name} (sha256 {digest})", commit=commit, root=source)
    if importable:
        venv = where / "venv"
        python = venv / "bin" / "python"
        if not (venv / ".installed").is_file():
            print(f"installing {wheel.name} and its dependencies into {venv} (several GB for vLLM: minutes)")
            _run([sys.executable, "-m", "venv", str(venv)], "python -m venv")
            _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)], "pip")
            (venv / ".installed").touch()
        tree.python = str(python)
    return tree


def _wheel_commit(source: Path, package: str) -> str:
    version_file = source / package / "_version.py"
    if version_file.is_file():
        match = re.search(r"__commit_id__\s*=\s*(?:commit_id\s*=\s*)?['\"]([^'\"]+)['\"]", version_file.read_text())
        if match:
            return f"wheel `__commit_id__` {match[1]}"
    return "wheel (no commit recorded)"


def _run(command: list[str], what: str) -> None:
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        lines = (out.stderr or out.stdout).strip().splitlines()
        raise SourceError(f"{what}: {lines[-1] if lines else 'failed'}")
