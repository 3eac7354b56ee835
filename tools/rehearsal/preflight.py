"""Can this machine rehearse? Everything the rehearsal needs of its host besides the built binaries, checked in
seconds before a run (and by CI before it builds for an hour): every missing piece reported at once, with the fix.

The rehearsal runs each cluster's pods in network namespaces joined by a bridge (tools/rehearsal/network.py: `ip`,
CAP_NET_ADMIN) and each container under a private root (tools/rehearsal/kubelet.py: `unshare --mount`, bind mounts,
`chroot`: CAP_SYS_ADMIN, CAP_SYS_CHROOT); chart scripts it runs call the host's bash, openssl and curl. The probe runs
the same calls once, in a namespace of its own that it removes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools.rehearsal import cache

# Capability numbers (linux/capability.h).
CAPABILITIES = {"CAP_NET_ADMIN": 12, "CAP_SYS_CHROOT": 18, "CAP_SYS_ADMIN": 21}
# Commands the rehearsal runs on the host -> the Debian package that has them.
COMMANDS = {
    "ip": "iproute2",
    "unshare": "util-linux",
    "mount": "mount",
    "chroot": "coreutils",
    "bash": "bash",
    "openssl": "openssl",
    "curl": "curl",
}
# About 4 GB for prod's run (docs/verification.md). Disk: a fresh build's Go modules and build cache, bounded above by
# what this machine held on 2026-12-02 after several sessions' builds of several versions (6.7 GiB of modules, 18 GiB
# of build cache); below 10 GiB the modules alone leave no room for the build, so the check refuses only that much (a
# machine between the two may still run out, and the build then says so).
MIN_MEMORY_GIB = 4
MIN_DISK_GIB_TO_BUILD = 10
MIN_DISK_GIB_BUILT = 2


@dataclass(frozen=True)
class Problem:
    what: str
    fix: str


def effective_capabilities(status: str) -> int:
    """CapEff of a /proc/<pid>/status text."""
    for line in status.splitlines():
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0


def missing_capabilities(mask: int) -> list[str]:
    return [name for name, bit in CAPABILITIES.items() if not mask >> bit & 1]


def mem_available_gib(meminfo: str) -> float:
    for line in meminfo.splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024**2
    return 0.0


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)


def probe_namespaces(run: Callable[[list[str]], subprocess.CompletedProcess[str]] = _run) -> str | None:
    """What a pod's start does, once: a bridge, a veth pair with one end in a new network namespace, and in that
    namespace a private mount namespace with a bind mount and /proc mounted; all removed. What failed, or None."""
    tag = uuid.uuid4().hex[:6]
    netns, bridge, veth = f"rh-pf-{tag}", f"rhpf{tag}", f"rhpfv{tag}"
    steps = [
        (["ip", "link", "add", bridge, "type", "bridge"], "a bridge (`ip link add ... type bridge`)"),
        (["ip", "netns", "add", netns], "a network namespace (`ip netns add`)"),
        (["ip", "link", "add", veth, "type", "veth", "peer", "name", f"{veth}p"], "a veth pair"),
        (["ip", "link", "set", f"{veth}p", "netns", netns], "moving a veth end into the namespace"),
        (["ip", "link", "set", veth, "master", bridge], "attaching a veth end to the bridge"),
        (
            [
                *("ip", "netns", "exec", netns, "unshare", "--mount", "--propagation", "private", "sh", "-c"),
                'd=$(mktemp -d); mount --bind /usr "$d"; test -x "$d/bin/env"; mkdir "$d.proc"; '
                'mount -t proc proc "$d.proc"; umount "$d.proc" "$d"; rmdir "$d.proc" "$d"',
            ],
            "a private mount namespace with a bind mount and /proc, inside the network namespace",
        ),
    ]
    try:
        for argv, what in steps:
            done = run(argv)
            if done.returncode != 0:
                return f"{what} failed: {done.stderr.strip() or f'exit {done.returncode}'}"
    finally:
        run(["ip", "link", "delete", veth])
        run(["ip", "netns", "delete", netns])
        run(["ip", "link", "delete", bridge])
    return None


def problems(
    *,
    uid: int,
    status: str,
    meminfo: str,
    disk_free_gib: float,
    built: bool,
    which: Callable[[str], str | None] = shutil.which,
    namespaces: Callable[[], str | None] = probe_namespaces,
) -> list[Problem]:
    """Everything missing, in one list (empty: the machine can rehearse)."""
    found: list[Problem] = []
    if sys.platform != "linux":
        return [Problem(f"the rehearsal runs on Linux only (this is {sys.platform})", "run it on a Linux machine")]
    if uid != 0:
        found.append(Problem("not root", "run as root (the rehearsal makes network namespaces, a bridge and mounts)"))
    caps = missing_capabilities(effective_capabilities(status))
    if caps:
        found.append(
            Problem(
                f"missing capabilities {', '.join(caps)}",
                "run with them (a privileged container, or `--cap-add NET_ADMIN --cap-add SYS_ADMIN "
                "--cap-add SYS_CHROOT`)",
            )
        )
    absent = {name: package for name, package in COMMANDS.items() if which(name) is None}
    if absent:
        found.append(
            Problem(
                f"commands not found: {', '.join(absent)}",
                f"apt-get install {' '.join(sorted(set(absent.values())))}",
            )
        )
    memory = mem_available_gib(meminfo)
    if memory < MIN_MEMORY_GIB:
        found.append(Problem(f"{memory:.1f} GiB of memory available", f"free at least {MIN_MEMORY_GIB} GiB"))
    need = MIN_DISK_GIB_BUILT if built else MIN_DISK_GIB_TO_BUILD
    if disk_free_gib < need:
        found.append(
            Problem(
                f"{disk_free_gib:.1f} GiB free for the caches ({cache.cache_dir()}, Go's build and module caches)",
                f"free at least {need} GiB there{'' if built else ' (the binaries are not built yet)'}, or move "
                "the caches with INFERENCE_PLATFORM_CACHE",
            )
        )
    if not found:  # the probe needs the above; it would only repeat their failure
        failed = namespaces()
        if failed:
            found.append(
                Problem(failed, "run where namespaces and mounts are allowed (not a nested unprivileged sandbox)")
            )
    return found


def _go_caches() -> list[Path]:
    """Go's build and module caches, where the build writes most (none when Go is not installed)."""
    if shutil.which("go") is None:
        return []
    found = _run(["go", "env", "GOCACHE", "GOMODCACHE"])
    return [Path(line) for line in found.stdout.split() if line]


def _disk_free_gib(path: Path) -> float:
    while not path.exists():
        path = path.parent
    return shutil.disk_usage(path).free / 1024**3


def main() -> int:
    found = problems(
        uid=os.geteuid(),
        status=Path("/proc/self/status").read_text(),
        meminfo=Path("/proc/meminfo").read_text(),
        disk_free_gib=min(_disk_free_gib(path) for path in (cache.cache_dir(), *_go_caches())),
        built=all(cache.binary_path(name).is_file() for name in cache.REQUIRED),
    )
    for problem in found:
        print(f"error: rehearsal pre-flight: {problem.what}: {problem.fix}", file=sys.stderr)
    if not found:
        print("rehearsal pre-flight: root, capabilities, commands, memory, disk and namespaces are in place")
    return 2 if found else 0


if __name__ == "__main__":
    sys.exit(main())
