"""The rehearsal's processes: each started in its own session with its log under build/<env>/rehearsal/, and
every one stopped when the run ends, fails or is interrupted (SIGINT, SIGTERM), by its own process group."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

STOP_GRACE_SECONDS = 5.0
STORE_PROGRAM = "etcd"  # stopped last: what the other processes write their last state to


class ProcessFailed(Exception):
    """A process exited, or did not become ready in time: the message names it and the tail of its log."""


_SEEN_ERRORS: set[str] = set()
# What a controller's next round gets past: 404 and 409 (the object went or changed between its list and its write),
# 429 (a CRD's storage (re)initializing, priority and fairness) and 503 (an aggregated API not available yet).
TRANSIENT_STATUSES = (404, 409, 429, 503)


class ReconcileLoop:
    """A controller's loop (a stand-in's, the rehearsal's kubelet): `reconcile()` every `period` seconds on a daemon
    thread of its own until stopped; a failed round is reported (background_error) and the next one runs, as a
    controller's does."""

    period = 1.0
    stop_seconds = 5.0  # how long `stop` waits for a round in progress

    def __init__(self, what: str, cluster: str, *, label: str | None = None):
        """`label`: how a failed round names the loop (default "<what> stand-in")."""
        self._label = label or f"{what} stand-in"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"{what}-{cluster}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self.stop_seconds)

    def reconcile(self) -> None:
        raise NotImplementedError

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            try:
                self.reconcile()
            except Exception as exc:  # a background loop outlives one bad round
                background_error(self._label, exc)


def background_error(loop: str, exc: BaseException) -> None:
    """A background loop's failed round, printed once per distinct error (the loop goes on: the API server it
    polls may be starting or stopping)."""
    import sys
    import traceback

    status = getattr(exc, "status", None)  # an API server's answer (tools.rehearsal.kube.ApiError)
    if status in TRANSIENT_STATUSES:
        return  # the next round asks again, as a controller's informer would
    key = f"{loop}: {type(exc).__name__}: {exc}"
    if key not in _SEEN_ERRORS:
        _SEEN_ERRORS.add(key)
        print(f"background {key}", file=sys.stderr)
        if status is None:  # not the server's answer: the loop's own fault, with where
            traceback.print_exception(exc, file=sys.stderr)


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (the kernel's pick; another process may take it before we bind)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def log_tail(path: Path, lines: int = 12) -> str:
    if not path.exists():
        return "(no log)"
    text = path.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:])


@dataclass
class Process:
    name: str
    argv: list[str]
    log: Path
    popen: subprocess.Popen

    def running(self) -> bool:
        return self.popen.poll() is None

    def describe_exit(self) -> str:
        return f"{self.name} exited with {self.popen.returncode}; last lines of {self.log}:\n{log_tail(self.log)}"

    @property
    def program(self) -> str:
        """The program it runs: a pod's binary (under /rehearsal/bin in its root), else its executable's name."""
        found = re.search(r"/rehearsal/bin/([\w.-]+)", " ".join(self.argv))
        return found.group(1) if found else Path(self.argv[0]).name

    def entered(self) -> bool:
        """The process runs its container's program: it has changed root into the pod's (a container the runtime
        reports running is its program already, not the rehearsal's setup of namespaces and mounts before it)."""
        with contextlib.suppress(OSError):
            root = os.readlink(f"/proc/{self.popen.pid}/root")
            exe = Path(os.readlink(f"/proc/{self.popen.pid}/exe")).name
            return root != "/" and exe not in ("chroot", "env")
        return False

    def cpu_seconds(self) -> float:
        """User and system CPU of the process and the children it waited for, while it still runs."""
        try:
            fields = Path(f"/proc/{self.popen.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime


@dataclass
class Supervisor:
    """Starts processes and stops all of them on `close()` (also from the signal handlers it installs)."""

    log_dir: Path
    processes: list[Process] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)  # program -> CPU seconds of its processes, once stopped
    _previous_handlers: dict[int, object] = field(default_factory=dict)
    _closing: bool = False

    def __enter__(self) -> Supervisor:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous_handlers[sig] = signal.signal(sig, self._interrupted)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
        for sig, handler in self._previous_handlers.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]

    def _interrupted(self, signum: int, _frame: object) -> None:
        if self._closing:  # a second signal (a process group's kill also reaches `timeout`, which forwards it)
            return
        self.close()
        raise KeyboardInterrupt(f"signal {signum}")

    def start(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        log_name: str | None = None,
    ) -> Process:
        log = self.log_dir / f"{log_name or name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        handle = log.open("ab")
        handle.write(f"$ {' '.join(argv)}\n".encode())
        handle.flush()
        popen = subprocess.Popen(
            list(argv),
            stdout=handle,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            cwd=cwd,
            start_new_session=True,  # its own process group: stopped as one, untouched by our terminal's ^C
        )
        handle.close()
        process = Process(name, list(argv), log, popen)
        self.processes.append(process)
        return process

    def _account(self, process: Process) -> None:
        self.cpu[process.program] = self.cpu.get(process.program, 0.0) + process.cpu_seconds()

    def stop(self, process: Process) -> None:
        if process.running():
            self._account(process)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.popen.pid, signal.SIGTERM)
            try:
                process.popen.wait(STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.popen.pid, signal.SIGKILL)
                process.popen.wait()
        if process in self.processes:
            self.processes.remove(process)

    def close(self) -> None:
        """Every process we started: first all but the stores, then the stores (etcd). An API server stopping
        removes its own endpoint lease from etcd (kube-apiserver's lease reconciler): with etcd stopped beside it,
        that write waits out the grace and the kill."""
        self._closing = True
        running = [p for p in reversed(self.processes) if p.running()]
        self._terminate([p for p in running if p.program != STORE_PROGRAM])
        self._terminate([p for p in running if p.program == STORE_PROGRAM])
        self.processes.clear()
        self._closing = False

    def _terminate(self, processes: list[Process]) -> None:
        """SIGTERM to each process group at once; whichever has not exited after the grace gets SIGKILL."""
        for process in processes:
            self._account(process)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.popen.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for process in processes:
            try:
                process.popen.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.popen.pid, signal.SIGKILL)
                process.popen.wait()


def wait_until(
    what: str,
    ready: Callable[[], bool],
    *,
    timeout: float,
    watch: Sequence[Process] = (),
    interval: float = 0.25,
) -> None:
    """Poll `ready` until it holds; a watched process that exits, or the deadline, raises ProcessFailed."""
    deadline = time.monotonic() + timeout
    while True:
        for process in watch:
            if not process.running():
                raise ProcessFailed(f"waiting for {what}: {process.describe_exit()}")
        with contextlib.suppress(Exception):
            if ready():
                return
        if time.monotonic() >= deadline:
            logs = "".join(f"\n{p.name}: last lines of {p.log}:\n{log_tail(p.log)}" for p in watch)
            raise ProcessFailed(f"{what}: not ready after {timeout:.0f} s{logs}")
        time.sleep(interval)
