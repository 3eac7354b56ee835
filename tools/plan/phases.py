"""Wall and CPU time of each phase of a plan (config, evaluate, policy, write), for `make bench`.

A phase that runs several times in one process (the test suite builds many plans) adds up;
`make bench` reads the totals of a fresh process that built one plan.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

WALL: dict[str, float] = {}
CPU: dict[str, float] = {}  # this process, all threads: barely moved by other load on the machine


@contextmanager
def phase(name: str) -> Iterator[None]:
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        WALL[name] = WALL.get(name, 0.0) + time.perf_counter() - wall
        CPU[name] = CPU.get(name, 0.0) + time.process_time() - cpu


def reset() -> None:
    WALL.clear()
    CPU.clear()
