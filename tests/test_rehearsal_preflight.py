"""The rehearsal's pre-flight (tools/rehearsal/preflight.py): what a machine lacks is reported all at once, with the
fix, before a run or CI's hour-long build starts."""

from __future__ import annotations

import subprocess

from tools.rehearsal import preflight

ALL_CAPS = "CapInh:\t0000000000000000\nCapEff:\t000001fffeffffff\n"
# CAP_NET_ADMIN (bit 12) and CAP_SYS_ADMIN (bit 21) dropped, CAP_SYS_CHROOT (18) kept: 0x...ffdfefff
NO_NET_OR_SYS_ADMIN = "CapEff:\t000001fffedfefff\n"
MEMINFO = "MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n"


def _problems(**overrides):
    args = {
        "uid": 0,
        "status": ALL_CAPS,
        "meminfo": MEMINFO,
        "disk_free_gib": 60.0,
        "built": False,
        "which": lambda name: f"/usr/bin/{name}",
        "namespaces": lambda: None,
    }
    args.update(overrides)
    return [(p.what, p.fix) for p in preflight.problems(**args)]


def test_a_machine_with_everything_passes():
    assert _problems() == []


def test_every_lack_is_reported_at_once_with_its_fix():
    found = _problems(
        uid=1000,
        status=NO_NET_OR_SYS_ADMIN,
        meminfo="MemAvailable:    2097152 kB\n",
        disk_free_gib=10.0,
        which=lambda name: None if name in ("ip", "openssl") else f"/usr/bin/{name}",
    )
    assert found == [
        ("not root", "run as root (the rehearsal makes network namespaces, a bridge and mounts)"),
        (
            "missing capabilities CAP_NET_ADMIN, CAP_SYS_ADMIN",
            "run with them (a privileged container, or `--cap-add NET_ADMIN --cap-add SYS_ADMIN --cap-add SYS_CHROOT`)",
        ),
        ("commands not found: ip, openssl", "apt-get install iproute2 openssl"),
        ("2.0 GiB of memory available", "free at least 4 GiB"),
        (
            f"10.0 GiB free for the caches ({preflight.cache.cache_dir()})",
            "free at least 25 GiB there (the binaries are not built yet), or move the caches with "
            "INFERENCE_PLATFORM_CACHE",
        ),
    ]


def test_built_binaries_need_little_disk():
    assert _problems(disk_free_gib=10.0, built=True) == []
    assert _problems(disk_free_gib=1.0, built=True)[0][1].startswith("free at least 2 GiB there, or move")


def test_the_namespace_probe_runs_only_where_the_rest_holds_and_its_failure_is_reported():
    calls = []

    def probe():
        calls.append(1)
        return "`ip netns add` failed: mount --make-shared /run/netns failed: Operation not permitted"

    assert _problems(uid=1000, namespaces=probe)[0][0] == "not root" and calls == []
    assert _problems(namespaces=probe) == [
        (
            "`ip netns add` failed: mount --make-shared /run/netns failed: Operation not permitted",
            "run where namespaces and mounts are allowed (not a nested unprivileged sandbox)",
        )
    ]


def test_the_probe_makes_a_namespace_mounts_inside_it_and_always_removes_it():
    ran = []

    def run(argv, fail_at="unshare"):
        ran.append(argv)
        failed = fail_at in argv
        return subprocess.CompletedProcess(argv, 1 if failed else 0, "", "unshare: Operation not permitted")

    assert preflight.probe_namespaces(run) == (
        "`unshare --mount` with a bind mount in a network namespace failed: unshare: Operation not permitted"
    )
    assert [a[:3] for a in ran] == [["ip", "netns", "add"], ["ip", "netns", "exec"], ["ip", "netns", "delete"]]
    assert ran[0][3] == ran[1][3] == ran[2][3]  # the same namespace, removed


def test_capability_bits_are_read_from_the_effective_set():
    assert preflight.missing_capabilities(preflight.effective_capabilities(ALL_CAPS)) == []
    assert preflight.missing_capabilities(preflight.effective_capabilities("CapEff:\t0000000000000000\n")) == [
        "CAP_NET_ADMIN",
        "CAP_SYS_CHROOT",
        "CAP_SYS_ADMIN",
    ]
