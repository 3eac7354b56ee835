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
        disk_free_gib=8.0,
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
            f"8.0 GiB free for the caches ({preflight.cache.cache_dir()}, Go's build and module caches)",
            "free at least 10 GiB there (the binaries are not built yet), or move the caches with "
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


def test_the_probe_does_what_a_pods_start_does_and_always_removes_it():
    ran = []

    def run(argv):
        ran.append(argv)
        failed = "unshare" in argv
        return subprocess.CompletedProcess(argv, 1 if failed else 0, "", "unshare: Operation not permitted")

    assert preflight.probe_namespaces(run) == (
        "a private mount namespace with a bind mount and /proc, inside the network namespace failed: "
        "unshare: Operation not permitted"
    )
    made = [a[:4] for a in ran[:5]]
    assert [m[:3] for m in made] == [["ip", "link", "add"], ["ip", "netns", "add"], ["ip", "link", "add"]] + [
        ["ip", "link", "set"]
    ] * 2
    assert "mount -t proc proc" in ran[5][-1] and "mount --bind /usr" in ran[5][-1]
    bridge, netns, veth = ran[0][3], ran[1][3], ran[2][3]
    assert ran[-3:] == [
        ["ip", "link", "delete", veth],
        ["ip", "netns", "delete", netns],
        ["ip", "link", "delete", bridge],
    ]


def test_a_sandbox_without_bridges_fails_the_probe_at_its_first_step_and_is_cleaned_up():
    ran = []

    def run(argv):
        ran.append(argv)
        bridge = argv[-2:] == ["type", "bridge"]
        return subprocess.CompletedProcess(argv, 2 if bridge else 0, "", "Error: Unknown device type.")

    assert preflight.probe_namespaces(run) == (
        "a bridge (`ip link add ... type bridge`) failed: Error: Unknown device type."
    )
    assert [a[:3] for a in ran[1:]] == [["ip", "link", "delete"], ["ip", "netns", "delete"], ["ip", "link", "delete"]]


def test_capability_bits_are_read_from_the_effective_set():
    assert preflight.missing_capabilities(preflight.effective_capabilities(ALL_CAPS)) == []
    assert preflight.missing_capabilities(preflight.effective_capabilities("CapEff:\t0000000000000000\n")) == [
        "CAP_NET_ADMIN",
        "CAP_SYS_CHROOT",
        "CAP_SYS_ADMIN",
    ]
