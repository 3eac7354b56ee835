"""The rollout's SLO gate against llm-d's inference simulator v0.10.2, built from its Go module at the pin
(tools/rehearsal/binaries.py; `make rehearsal-tools`), listening on a loopback port: a latency within the bounds
passes with the measured values where the simulator's flags put them, a slower one or failing requests stop the
rollout naming the metric, measured against allowed. Rehearsal tier (`make rehearsal-test`): a missing binary fails.

What the simulator does with its flags (github.com/llm-d/llm-d-inference-sim@v0.10.2): it sleeps
--time-to-first-token before the first token and --inter-token-latency before each later one
(pkg/llm-d-inference-sim/simulator.go L406-445, context.go L255-283), scaled by nothing under the default
--time-factor-under-load 1.0 (latencies.go L59-64, L122-124), with no deviation while the -std-dev flags are 0; one
token per SSE chunk (simulator.go L427-440); answers of 1 to max_tokens tokens (pkg/dataset/dataset.go L159-177,
histogram_helper.go L57-64); the usage chunk with stream_options.include_usage (pkg/api/request.go L375-377);
--failure-injection-rate 100 with --failure-types server_error answers every request 503, type
InternalServerError (failures.go L33-42, L47-53; pkg/api/response.go L363-398). It listens on every IPv4 interface
(pkg/communication/http.go L53-54: there is no flag for the address), so the test picks a free port on loopback and
only ever calls 127.0.0.1.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from components.config.rollout import SloSpec
from tests.harness import ENVIRONMENTS_DIR
from tests.test_rollout import FakeWorkspace, prod_outputs, prod_spec, roll, state_of
from tools.plan.runner import PROJECT_DIR
from tools.rehearsal import cache
from tools.rollout.loadtest import run_load_test
from tools.rollout.slo import SloTarget, run_target

pytestmark = pytest.mark.rehearsal

BINARY = "llm-d-inference-sim"
MODEL = "llama-3-1-8b"  # the name prod's probe tenant calls (tests/fixtures/environments/Pulumi.prod.yaml)
LOGS = PROJECT_DIR / "build" / "rehearsal-tests" / "slo-simulator"
# Scheduling on a loaded 2-core machine adds to the simulator's sleeps, never takes from them.
TTFT_SLACK_MS, TPOT_SLACK_MS = 250, 15
SLO = {
    "tenant": "rollout-probe",
    "ttftP95Ms": 400,
    "tpotP95Ms": 40,
    "maxErrorRate": 0.01,
    "concurrency": 4,
    "durationSeconds": 30,
    "maxRequests": 24,
    "minRequests": 12,
    "requestTimeoutSeconds": 20,
    "requests": [{"prompt": "Summarise in two sentences why the sky is blue.", "maxTokens": 32}],
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def simulator(name: str, *, ttft_ms: int, itl_ms: int, failure_rate: int = 0) -> Iterator[str]:
    """The simulator on a free loopback port, with these latencies; yields its base URL, stops it after."""
    binary = cache.binary_path(BINARY)
    assert binary.is_file(), f"{BINARY} not built in {cache.bin_dir()}: run `make rehearsal-tools`"
    port = _free_port()
    args = [
        str(binary),
        *("--port", str(port), "--model", MODEL, "--served-model-name", MODEL, "--force-dummy-tokenizer"),
        *("--mode", "random", "--seed", "7", "--max-num-seqs", "8"),
        *("--time-to-first-token", f"{ttft_ms}ms", "--inter-token-latency", f"{itl_ms}ms"),
    ]
    if failure_rate:
        args += ["--failure-injection-rate", str(failure_rate), "--failure-types", "server_error"]
    LOGS.mkdir(parents=True, exist_ok=True)
    with (LOGS / f"{name}.log").open("w") as log:
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        try:
            base_url = f"http://127.0.0.1:{port}/v1"
            _wait_ready(base_url, process)
            yield base_url
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_ready(base_url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, f"{BINARY} exited with {process.returncode}: see {LOGS}"
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"{BINARY} did not answer {base_url}/models within 30 s: see {LOGS}")


def gate(base_url: str, **changes):
    slo = SloSpec.model_validate({**SLO, **changes})
    return slo, run_target(
        slo=slo,
        wave="canary",
        target=SloTarget("use1", base_url, (MODEL,)),
        api_keys=lambda: {"rollout-probe": "probe-key"},
        ca_pem=None,
    )


def test_a_gateway_within_the_slo_passes_with_the_simulators_latencies():
    with simulator("pass", ttft_ms=100, itl_ms=10) as base_url:
        _, result = gate(base_url)
    assert result.passed, result.failures
    m = result.measured
    assert m is not None and (m.requests, m.errors) == (24, 0)
    assert m.ttft_p95_ms is not None and 100 <= m.ttft_p95_ms <= 100 + TTFT_SLACK_MS
    assert m.tpot_p95_ms is not None and 10 <= m.tpot_p95_ms <= 10 + TPOT_SLACK_MS


def test_a_slow_first_token_fails_naming_ttft():
    with simulator("slow-ttft", ttft_ms=600, itl_ms=10) as base_url:
        _, result = gate(base_url)
    m = result.measured
    assert m is not None and m.errors == 0
    assert m.ttft_p95_ms is not None and 600 <= m.ttft_p95_ms <= 600 + TTFT_SLACK_MS
    assert result.failures == (f"TTFT p95 {m.ttft_p95_ms:g} ms > 400 ms allowed",)


def test_slow_tokens_fail_naming_tpot():
    with simulator("slow-tpot", ttft_ms=50, itl_ms=60) as base_url:
        _, result = gate(base_url)
    m = result.measured
    assert m is not None and m.tpot_p95_ms is not None and 60 <= m.tpot_p95_ms <= 60 + TPOT_SLACK_MS
    assert result.failures == (f"TPOT p95 {m.tpot_p95_ms:g} ms > 40 ms allowed",)


def test_failing_requests_fail_naming_the_error_rate():
    with simulator("errors", ttft_ms=10, itl_ms=1, failure_rate=100) as base_url:
        _, result = gate(base_url)
    assert result.failures == (
        "0 requests completed in " + f"{result.measured.seconds:g}s, fewer than minRequests 12",
        "error rate 100.0% (24 of 24: HTTP 503: InternalServerError x24) > 1.0% allowed",
    )


def test_the_rollout_stops_at_a_slow_canary(tmp_path: Path):
    """make rollout with prod's waves: the canary's gateway (here the simulator) is slower than allowed, so aws waits."""
    shutil.copy(ENVIRONMENTS_DIR / "Pulumi.prod.yaml", tmp_path / "Pulumi.prod.yaml")
    env = prod_spec(("set", "rollout.slo", {**SLO, "ttftP95Ms": 200}))
    workspace = FakeWorkspace(prod_outputs(env))
    with simulator("rollout", ttft_ms=400, itl_ms=5) as base_url:
        run = roll(
            tmp_path,
            [],
            env=env,
            workspace=workspace,
            load_test=lambda url, *args, **kwargs: run_load_test(base_url, *args, **kwargs),
        )
    assert run.code == 1
    assert workspace.calls == [("prod.use1", "preview"), ("prod.use1", "up")]
    [result] = state_of(tmp_path).slo
    assert result["measured"]["ttftP95Ms"] >= 400
    assert result["failures"] == [f"TTFT p95 {result['measured']['ttftP95Ms']:g} ms > 200 ms allowed"]
    assert "FAIL gate slo: use1 (llama-3-1-8b): 24 requests" in run.out
