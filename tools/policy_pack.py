"""`python -m tools.policy_pack [--out DIR]` (`make policy-pack`): the policy pack as a folder of its own, the one the
Pulumi CLI runs (`pulumi preview --policy-pack DIR`) and publishes (`pulumi policy publish` in DIR).

The CLI runs the folder's `__main__.py` with the folder first on sys.path and uploads the folder and nothing around it
(components/catalog/upstream.py PULUMI_POLICY_PACK_RUNS_FROM_ITS_FOLDER, PULUMI_POLICY_PUBLISH_UPLOADS_THE_FOLDER), so
the folder holds all the pack imports besides its requirements: PulumiPolicy.yaml, requirements.txt and __main__.py
from policies/ at its root, the `policies` package and the `platform_catalog` package it shares with the program
(modules only), and a .gitignore that keeps the folder's virtualenv and caches out of the upload.

Assembling again replaces exactly what an earlier run wrote (listed in `.pack-files`) and keeps the folder's
virtualenv (`venv/`, which `make policy-pack` installs requirements.txt into); a non-empty folder this tool did not
write is refused, exit 2.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACK_SOURCE = ROOT / "policies"
# The packages the folder carries, as the pack imports them; `platform_catalog` is the one it shares with the program.
PACKAGES = ("policies", "platform_catalog")
# The pack's own files, at the folder's root.
PACK_FILES = ("PulumiPolicy.yaml", "requirements.txt", "__main__.py")
# `pulumi policy publish` leaves out what a .gitignore ignores: the folder's virtualenv and Python's caches.
GITIGNORE = "# Left out of `pulumi policy publish`, which honours .gitignore files.\nvenv/\n__pycache__/\n*.pyc\n"
OWNED = ".pack-files"
# Where `make policy-pack` puts it in a checkout, and where the rollout runs it from.
PACK_DIR = Path("build", "policy-pack")
DEFAULT_OUT = ROOT / PACK_DIR
EXIT_REFUSED = 2


class PackFolderError(Exception):
    """The output folder holds files this tool did not write."""


def _owned(out: Path) -> list[str]:
    """What an earlier run wrote into `out`; refuses a non-empty folder it did not write."""
    if not out.exists():
        return []
    listing = out / OWNED
    if listing.is_file():
        return listing.read_text().split()
    if any(out.iterdir()):
        raise PackFolderError(f"{out} is not empty and holds no pack this tool assembled; choose an empty folder")
    return []


def _modules(package: str) -> list[Path]:
    """The package's modules and type marker, as files relative to the checkout (no caches, no data files)."""
    files = [p for p in (ROOT / package).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return sorted(p.relative_to(ROOT) for p in files if p.suffix == ".py" or p.name == "py.typed")


def assemble(out: Path) -> list[str]:
    """Write the pack folder into `out`; returns the entries written (relative paths of files)."""
    for entry in _owned(out):
        target = out / entry
        if target.is_file():
            target.unlink()
    for package in PACKAGES:
        shutil.rmtree(out / package, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    for name in PACK_FILES:
        shutil.copyfile(PACK_SOURCE / name, out / name)
        written.append(name)
    for package in PACKAGES:
        for module in _modules(package):
            (out / module).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / module, out / module)
            written.append(module.as_posix())
    (out / ".gitignore").write_text(GITIGNORE)
    written += [".gitignore", OWNED]
    (out / OWNED).write_text("\n".join(sorted(written)) + "\n")
    return sorted(written)


def missing_pack(folder: Path) -> str | None:
    """Why `pulumi preview --policy-pack <folder>` cannot run the pack (it installs nothing itself:
    PULUMI_POLICY_PACK_RUNS_FROM_ITS_FOLDER), or None."""
    if not (folder / PACK_FILES[2]).is_file():
        return f"{folder}: no policy pack folder; run `make policy-pack` first"
    if not (folder / "venv" / "bin" / "python").is_file():
        return f"{folder}: the pack's virtualenv venv/ is missing; run `make policy-pack` first"
    return None


def ignored_by_git(out: Path) -> bool:
    """Whether a .gitignore of the checkout ignores the folder, which `pulumi policy publish` would upload empty."""
    try:
        result = subprocess.run(
            ["git", "-C", str(ROOT), "check-ignore", "-q", str(out / PACK_FILES[0])], capture_output=True, check=False
        )
    except OSError:  # no git: not a checkout's folder
        return False
    return result.returncode == 0  # 1: not ignored; 128: outside the checkout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="policy-pack", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the pack folder (default: build/policy-pack)")
    args = parser.parse_args(argv)
    out = args.out
    try:
        written = assemble(out.resolve())
    except PackFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    modules = sum(entry.endswith(".py") for entry in written)
    print(f"wrote {out}: the pack, {', '.join(PACKAGES)} ({modules} modules), {', '.join(PACK_FILES[:2])}")
    print(f"  run it:     pulumi preview --policy-pack {out} --policy-pack-config build/<env>/policy-config.json")
    if ignored_by_git(out.resolve()):
        print(
            f"  publish it: {out} is inside a folder the checkout's .gitignore ignores, and `pulumi policy publish` "
            "uploads nothing a .gitignore above it ignores: assemble it outside the checkout "
            "(make policy-pack PACK_OUT=../inference-platform-pack), then `pulumi policy publish <org>` there"
        )
    else:
        print(f"  publish it: cd {out} && pulumi policy publish <org>")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
