"""`python -m tools.rehearsal.build [--env ENV]`: build the rehearsal's pinned upstream binaries
(tools/rehearsal/binaries.py) into the cache outside git (tools/rehearsal/cache.py), one upstream at a time.

A binary is rebuilt only when what it is built from changed: its module's go.mod and go.sum, its package, the
-ldflags and the Go toolchain (the key recorded in versions.json). Builds are static (CGO_ENABLED=0, as every
upstream's release build) and -trimpath, so the same pins give the same bytes on every machine. `--env` builds
only what that environment's rehearsal runs (the charts and images its offline plan deploys); `--fresh` measures a
build from nothing (empty module and build caches, in a temporary directory, the cache left alone).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from components.config.base import ConfigError
from components.config.stackfile import PlanInputError
from tools.plan.model import Plan
from tools.plan.stackfile import input_error_lines
from tools.rehearsal.binaries import UPSTREAMS, Binary, Upstream, by_binary, ldflags, module_problems, needed
from tools.rehearsal.cache import bin_dir, cache_dir

EXIT_BUILD_FAILED = 1
EXIT_INVALID_INPUT = 2
VERSIONS_FILE = "versions.json"
# Changes when the way binaries are built changes (flags, environment), so every recorded key goes stale.
RECIPE = "go build -trimpath -ldflags=-s -w CGO_ENABLED=0 GOWORK=off"
# No symbol table and no DWARF, as the release builds link (k8s.io/kubernetes@v1.33.13:hack/lib/golang.sh L918-L924
# `-s -w` unless DBG=1; helm.sh/helm/v3@v3.20.2:Makefile L25): smaller binaries, a shorter link.
STRIP = "-s -w"
VERSION_TIMEOUT_SECONDS = 30


class BuildInputError(Exception):
    """Something the build cannot start with (an unknown name, no Go, a Go too old): one line, exit code 2."""


@dataclass
class Built:
    """One binary's outcome: what versions.json records for it, and whether this run built it."""

    name: str
    record: dict[str, Any]
    built: bool


def versions_path() -> Path:
    return cache_dir() / "rehearsal" / VERSIONS_FILE


def go_environment(overrides: dict[str, str] | None = None) -> dict[str, str]:
    environment = dict(os.environ, CGO_ENABLED="0", GOWORK="off", GOTOOLCHAIN="local")
    return environment | (overrides or {})


def go_version(environment: dict[str, str]) -> str:
    """The toolchain's version (go1.26.8), or a BuildInputError when there is no `go`."""
    if shutil.which("go", path=environment.get("PATH")) is None:
        raise BuildInputError("no `go` on PATH: install Go (1.26 or newer) to build the rehearsal's binaries")
    return subprocess.run(
        ["go", "env", "GOVERSION"], env=environment, capture_output=True, text=True, check=True
    ).stdout.strip()


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def required_go(upstream: Upstream) -> str:
    """The `go` line of the upstream's module: the oldest toolchain that builds it."""
    match = re.search(r"^go (\S+)", (upstream.path / "go.mod").read_text(), re.M)
    if match is None:
        raise BuildInputError(f"{upstream.path / 'go.mod'} has no go line")
    return match.group(1)


def check_modules(upstreams: Iterable[Upstream]) -> None:
    """Every go.mod and go.sum agrees with the table, before anything is built."""
    problems = []
    for upstream in upstreams:
        go_sum = upstream.path / "go.sum"
        problems += module_problems(
            upstream, (upstream.path / "go.mod").read_text(), go_sum.read_text() if go_sum.exists() else ""
        )
    if problems:
        raise BuildInputError("\n".join(problems))


def check_toolchain(upstreams: Iterable[Upstream], toolchain: str) -> None:
    for upstream in upstreams:
        wanted = required_go(upstream)
        if _release(toolchain.removeprefix("go")) < _release(wanted):
            raise BuildInputError(
                f"tools/rehearsal/modules/{upstream.module_dir}/go.mod needs Go {wanted} or newer (found "
                f"{toolchain}): install a newer Go"
            )


def build_key(upstream: Upstream, binary: Binary, toolchain: str) -> str:
    """What the binary is built from; equal keys build the same bytes."""
    digest = hashlib.sha256()
    for part in (RECIPE, toolchain, binary.package, " ".join(upstream.ldflags), upstream.version):
        digest.update(part.encode() + b"\0")
    for path in (upstream.path / "go.mod", upstream.path / "go.sum", *upstream.sources(binary)):
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def children_cpu_seconds() -> float:
    """User + system CPU time of every finished child process (go build's compilers and linker included): the
    cost of a build whatever else the machine runs, where wall time depends on the load."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load_versions() -> dict[str, dict[str, Any]]:
    path = versions_path()
    return json.loads(path.read_text()) if path.exists() else {}


def write_versions(versions: dict[str, dict[str, Any]]) -> None:
    """Atomically: a reader never sees half a file."""
    path = versions_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(dict(sorted(versions.items())), indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def is_current(record: dict[str, Any] | None, key: str, path: Path) -> bool:
    """Whether `path` is the binary `record` says was built with `key`."""
    return (
        record is not None and record.get("key") == key and path.is_file() and sha256_of(path) == record.get("sha256")
    )


def module_time(upstream: Upstream, environment: dict[str, str]) -> str:
    """The upstream module's commit time as the module proxy records it: the build date stamped into binaries
    whose release build stamps one (a fixed value, so builds stay reproducible)."""
    result = subprocess.run(
        ["go", "list", "-m", "-json", upstream.module],
        cwd=upstream.path,
        env=environment,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise BuildError(f"go list -m {upstream.module}: {last_lines(result.stderr)}")
    module = json.loads(result.stdout)
    if module.get("Version") != upstream.version:
        raise BuildError(
            f"tools/rehearsal/modules/{upstream.module_dir}/go.mod resolves {upstream.module} to "
            f"{module.get('Version')}, not the table's {upstream.version}: fix the require line"
        )
    return module.get("Time", "")


def download_modules(upstream: Upstream, environment: dict[str, str]) -> None:
    """Every module the upstream's binaries import, fetched before compiling (time apart from the build's)."""
    packages = [binary.package for binary in upstream.binaries]
    result = subprocess.run(
        ["go", "list", "-deps", "-f", "{{.ImportPath}}", *packages],
        cwd=upstream.path,
        env=environment,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise BuildError(f"go list -deps: {last_lines(result.stderr)}")


def download_sources(environment: dict[str, str]) -> list[str]:
    """The modules whose files the rehearsal reads (tools/rehearsal/charts.py module_sources), into the module
    cache; each failure as a line."""
    from tools.rehearsal.charts import module_sources

    wanted = sorted({f"{files.module}@{files.version}" for files in module_sources()})
    result = subprocess.run(
        ["go", "mod", "download", "-json", *wanted],
        cwd=tempfile.gettempdir(),  # outside any module: each is fetched at its own version
        env=environment | {"GOFLAGS": "-mod=mod"},
        capture_output=True,
        text=True,
    )
    errors = [
        f"go mod download {module['Path']}@{module['Version']}: {module['Error']}"
        for module in _json_stream(result.stdout)
        if module.get("Error")
    ]
    if result.returncode != 0 and not errors:
        errors.append(f"go mod download: {last_lines(result.stderr)}")
    return errors


def _json_stream(text: str) -> list[dict[str, Any]]:
    """`go mod download -json` prints one JSON object after another."""
    decoder, objects, index = json.JSONDecoder(), [], 0
    while index < len(text):
        if text[index].isspace():
            index += 1
            continue
        value, index = decoder.raw_decode(text, index)
        objects.append(value)
    return objects


class BuildError(Exception):
    """A build that failed: the binary keeps its previous file, the run goes on with the next upstream."""


def last_lines(text: str, count: int = 12) -> str:
    return "\n".join(text.strip().splitlines()[-count:])


def linked_versions(path: Path, environment: dict[str, str]) -> tuple[str, dict[str, str]]:
    """(Go version, module -> version) as the binary's build information records them (`go version -m`)."""
    output = subprocess.run(
        ["go", "version", "-m", str(path)], env=environment, capture_output=True, text=True, check=True
    ).stdout
    return parse_build_info(output)


def parse_build_info(output: str) -> tuple[str, dict[str, str]]:
    """`go version -m` output -> (Go version, module -> the version linked, a replacement's when replaced)."""
    lines = output.splitlines()
    toolchain = lines[0].rsplit(" ", 1)[-1] if lines else ""
    modules: dict[str, str] = {}
    last = None
    for line in lines[1:]:
        fields = line.split()
        if len(fields) >= 3 and fields[0] in ("mod", "dep"):  # mod: the module of the main package
            last = fields[1]
            modules[last] = fields[2]
        elif len(fields) >= 3 and fields[0] == "=>" and last is not None:
            modules[last] = fields[2]
    return toolchain, modules


def version_output(path: Path, args: tuple[str, ...]) -> str:
    """The first line the binary prints for its version flag ("" when it has none)."""
    if not args:
        return ""
    try:
        result = subprocess.run(
            [str(path), *args],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_SECONDS,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return f"(no answer to {' '.join(args)} in {VERSION_TIMEOUT_SECONDS}s)"
    lines = [line.strip() for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    return lines[0] if lines else ""


def go_build(
    upstream: Upstream,
    binary: Binary,
    output: Path,
    flags: str,
    environment: dict[str, str],
    on_line: Callable[[str], None],
) -> None:
    """`go build -trimpath` of one main package into `output`, each stderr line (a package compiled, a module
    downloaded) passed to `on_line`."""
    command = ["go", "build", "-trimpath", "-v", "-ldflags", f"{STRIP} {flags}", "-o", str(output), binary.package]
    process = subprocess.Popen(
        command, cwd=upstream.path, env=environment, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    assert process.stderr is not None
    lines = []
    for line in process.stderr:
        lines.append(line)
        on_line(line.strip())
    if process.wait() != 0:
        raise BuildError(f"go build {binary.package} failed:\n{last_lines(''.join(lines))}")


def build_upstream(
    upstream: Upstream,
    *,
    out_dir: Path,
    previous: dict[str, dict[str, Any]],
    toolchain: str,
    environment: dict[str, str],
    force: bool,
    progress: Callable[[str], None],
    announce: Callable[[str], None],
) -> list[Built]:
    """Each binary of `upstream` into `out_dir`, unless its recorded key and file say it is already there."""
    results = []
    date = None
    for binary in upstream.binaries:
        target = out_dir / binary.name
        key = build_key(upstream, binary, toolchain)
        record = previous.get(binary.name)
        if not force and record is not None and is_current(record, key, target):
            if record.get("version_args") != list(binary.version_args):  # asked another way since it was built
                record = record | {
                    "version_args": list(binary.version_args),
                    "version_output": version_output(target, binary.version_args),
                }
            results.append(Built(binary.name, record, built=False))
            continue
        if date is None:
            progress(f"{upstream.module}@{upstream.version}: downloading its modules")
            started = time.monotonic()
            date = module_time(upstream, environment)
            download_modules(upstream, environment)
            announce(f"{upstream.module_dir}: modules ready in {time.monotonic() - started:.0f}s")
        compiled = 0

        def on_line(line: str, name: str = binary.name) -> None:
            nonlocal compiled
            if line.startswith("go: downloading"):
                progress(f"{name}: {line.removeprefix('go: ')}")
            elif line and not line.startswith("#"):
                compiled += 1
                progress(f"{name}: compiled {compiled} packages ({line})")

        out_dir.mkdir(parents=True, exist_ok=True)
        partial = out_dir / f".{binary.name}.partial"
        started, cpu_started = time.monotonic(), children_cpu_seconds()
        announce(f"building {binary.name} ({binary.package} of {upstream.module}@{upstream.version})")
        try:
            go_build(upstream, binary, partial, ldflags(upstream, date), environment, on_line)
            seconds = round(time.monotonic() - started, 1)
            cpu_seconds = round(children_cpu_seconds() - cpu_started, 1)
            linked_go, modules = linked_versions(partial, environment)
            if modules.get(upstream.module) != upstream.version:
                raise BuildError(
                    f"{binary.name} links {upstream.module} {modules.get(upstream.module)}, not {upstream.version}"
                )
            record = {
                "module": upstream.module,
                "version": upstream.version,
                "stand_in": bool(upstream.stand_in),
                "package": binary.package,
                "go": linked_go,
                "build_seconds": seconds,
                "cpu_seconds": cpu_seconds,
                "packages_compiled": compiled,
                "sha256": sha256_of(partial),
                "version_args": list(binary.version_args),
                "version_output": version_output(partial, binary.version_args),
                "key": key,
            }
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        results.append(Built(binary.name, record, built=True))
    return results


def selected_upstreams(env: str | None, only: list[str], project_dir: Path) -> list[Upstream]:
    """The upstreams to build: those of the named binaries, else those `env`'s plan needs, else all."""
    if only:
        table = by_binary()
        unknown = [name for name in only if name not in table]
        if unknown:
            raise BuildInputError(
                f"--only: no binary named {', '.join(unknown)}; the binaries are {', '.join(sorted(table))}"
            )
        wanted = {table[name].module_dir for name in only}
        return [upstream for upstream in UPSTREAMS if upstream.module_dir in wanted]
    if env is None:
        return list(UPSTREAMS)
    charts, images = planned_charts_and_images(env, project_dir)
    return [upstream for upstream in UPSTREAMS if needed(upstream, charts, images)]


def planned_charts_and_images(env: str, project_dir: Path) -> tuple[set[str], set[str]]:
    from tools.plan.runner import build_plan  # the Pulumi SDK's mocks: only when an environment is named
    from tools.plan.stackfile import load_stack_config

    return charts_and_images(build_plan(load_stack_config(project_dir, env), project_dir))


def charts_and_images(plan: Plan) -> tuple[set[str], set[str]]:
    """The chart names of the Helm releases a plan installs, and the container images its objects run."""
    charts = {str(release.inputs.get("chart", "")).rsplit("/", 1)[-1] for release in plan.helm_releases()}
    images: set[str] = set()
    for planned in plan.kubernetes_objects():
        images.update(_images(planned.inputs))
    return charts, images


def _images(value: Any) -> Iterable[str]:
    """Every container image named anywhere in an object's inputs."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "image" and isinstance(item, str):
                yield item
            else:
                yield from _images(item)
    elif isinstance(value, list):
        for item in value:
            yield from _images(item)


def summary_table(results: list[tuple[Upstream, Built]], title: str) -> Table:
    table = Table(title=title)
    for column in ("binary", "module@version", "reports", "seconds", "CPU s", ""):
        table.add_column(column, justify="right" if column in ("seconds", "CPU s") else "left")
    for upstream, result in results:
        record = result.record
        pinned = f"{upstream.module}@{upstream.version}" + (" (stand-in)" if upstream.stand_in else "")
        reports = record.get("version_output") or f"(no version flag; build info: {upstream.version})"
        state = "built" if result.built else "cached"
        cpu = record.get("cpu_seconds")
        cpu_text = "" if cpu is None else f"{cpu:.1f}"
        table.add_row(result.name, pinned, reports, f"{record['build_seconds']:.1f}", cpu_text, state)
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools.rehearsal.build", description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", help="build only what this environment's rehearsal runs (Pulumi.<env>.yaml)")
    parser.add_argument("--only", nargs="+", default=[], metavar="BINARY", help="build these binaries' upstreams")
    parser.add_argument("--force", action="store_true", help="rebuild even what the cache already holds")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="measure a build from nothing: empty module and build caches and output in a temporary directory "
        "(the cache and versions.json are left alone)",
    )
    parser.add_argument("--project-dir", type=Path, default=Path(__file__).resolve().parents[2])
    args = parser.parse_args(argv)
    console = Console(stderr=True)
    out = Console(width=None if sys.stdout.isatty() else 160)

    scratch = Path(tempfile.mkdtemp(prefix="rehearsal-fresh-")) if args.fresh else None
    overrides = {}
    if scratch is not None:
        overrides = {"GOCACHE": str(scratch / "go-build"), "GOMODCACHE": str(scratch / "go-mod")}
    environment = go_environment(overrides)
    try:
        try:
            toolchain = go_version(environment)
            upstreams = selected_upstreams(args.env, args.only, args.project_dir)
            check_modules(upstreams)
            check_toolchain(upstreams, toolchain)
        except BuildInputError as exc:
            for line in str(exc).splitlines():
                print(f"error: {line}", file=sys.stderr)
            return EXIT_INVALID_INPUT
        except (PlanInputError, ConfigError) as exc:  # a missing or invalid Pulumi.<env>.yaml
            for line in input_error_lines(exc, args.env):
                print(line, file=sys.stderr)
            return EXIT_INVALID_INPUT
        return run(upstreams, args, scratch, toolchain, environment, console, out)
    finally:
        if scratch is not None:
            subprocess.run(["go", "clean", "-modcache"], env=environment, capture_output=True)
            shutil.rmtree(scratch, ignore_errors=True)


def run(
    upstreams: list[Upstream],
    args: argparse.Namespace,
    scratch: Path | None,
    toolchain: str,
    environment: dict[str, str],
    console: Console,
    out: Console,
) -> int:
    out_dir = scratch / "bin" if scratch is not None else bin_dir()
    versions = {} if scratch is not None else load_versions()
    names = ", ".join(upstream.module_dir for upstream in upstreams)
    scope = f"for {args.env}" if args.env else "all"
    console.print(f"rehearsal binaries ({scope}): {names}; {toolchain}; into {out_dir}")
    if scratch is None:
        gocache, gomodcache = subprocess.run(
            ["go", "env", "GOCACHE", "GOMODCACHE"], env=environment, capture_output=True, text=True, check=True
        ).stdout.split()
        console.print(f"Go caches: GOCACHE={gocache} GOMODCACHE={gomodcache}")
    results: list[tuple[Upstream, Built]] = []
    failures = []
    started = time.monotonic()
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=True
    ) as progress:
        for upstream in upstreams:
            task = progress.add_task(upstream.module_dir, total=None)

            def report(text: str, task=task, module_dir=upstream.module_dir) -> None:
                progress.update(task, description=f"{module_dir}: {text[:110]}")

            try:
                built = build_upstream(
                    upstream,
                    out_dir=out_dir,
                    previous=versions,
                    toolchain=toolchain,
                    environment=environment,
                    force=args.force or scratch is not None,
                    progress=report,
                    announce=console.print,
                )
            except BuildError as exc:
                failures.append(f"{upstream.module_dir} ({upstream.module}@{upstream.version}): {exc}")
                progress.remove_task(task)
                continue
            progress.remove_task(task)
            for result in built:
                results.append((upstream, result))
                if result.built:
                    console.print(f"built {result.name} in {result.record['build_seconds']:.1f}s")
                if scratch is None:
                    versions[result.name] = result.record
                    write_versions(versions)
    sources_started = time.monotonic()
    with console.status("the charts' and manifests' modules: go mod download"):
        failures += download_sources(environment)
    console.print(f"chart and manifest modules ready in {time.monotonic() - sources_started:.0f}s")
    total = time.monotonic() - started
    records = [result.record for _, result in results if result.built]
    built_seconds = sum(record["build_seconds"] for record in records)
    cpu_seconds = sum(record.get("cpu_seconds", 0.0) for record in records)
    kind = "fresh (empty module and build caches)" if scratch is not None else "cache"
    title = (
        f"rehearsal binaries, {kind}: {total:.0f}s, {len(records)} built in {built_seconds:.0f}s "
        f"({cpu_seconds:.0f} CPU s; load average {os.getloadavg()[0]:.1f})"
    )
    out.print(summary_table(results, title))
    for upstream in upstreams:
        if upstream.stand_in:
            out.print(f"[yellow]stand-in[/]: {upstream.module}@{upstream.version} for {upstream.stands_for}: ")
            out.print(f"  {upstream.stand_in}")
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    return EXIT_BUILD_FAILED if failures else 0


if __name__ == "__main__":
    sys.exit(main())
