"""rollout.slo: the SLO gate's config and its errors, the load tester against an in-suite OpenAI-compatible SSE server
on 127.0.0.1 (tests/sse_simulator.py), the gate in the rollout (verdict, rollout-state.json, the summary, the key kept
out of both), the dry run and plan.md. The same gate against llm-d's inference simulator is
tests/test_rollout_slo_simulator.py (rehearsal tier)."""

from __future__ import annotations

import io
import json
import shutil
import ssl
import time
from pathlib import Path

import pytest
from rich.console import Console

from components.checks.loader import load_environment
from tests.harness import ENVIRONMENTS_DIR, apply_ops, config_errors, plan_for, raw_environment
from tests.sse_simulator import SseSimulator
from tests.test_rollout import FakeWorkspace, prod_outputs, prod_spec, roll, state_of
from tools.rehearsal import pki
from tools.rollout.bringup import Report
from tools.rollout.loadtest import (
    Bounds,
    Endpoint,
    LoadTestInputError,
    Sample,
    percentile,
    run_load_test,
    weighted_schedule,
)
from tools.rollout.slo import NotTested, measure, region_target, untested_wave

# prod's rollout.slo (tests/fixtures/environments/Pulumi.prod.yaml), by hand.
PROD_SLO = {
    "tenant": "rollout-probe",
    "ttftP95Ms": 1000,
    "tpotP95Ms": 60,
    "maxErrorRate": 0.01,
    "concurrency": 8,
    "durationSeconds": 120,
    "maxRequests": 400,
    "minRequests": 50,
    "requests": [
        {"prompt": "Summarise in two sentences why the sky is blue.", "maxTokens": 128, "weight": 3},
        {"prompt": "Write a short product description for a waterproof hiking boot.", "maxTokens": 512, "weight": 1},
    ],
}
KEY = "k3y-0f-the-r0llout-pr0be-never-written-d0wn"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(ENVIRONMENTS_DIR / "Pulumi.prod.yaml", tmp_path / "Pulumi.prod.yaml")
    return tmp_path


def slo_errors(env: str, slo: dict, *ops) -> list[str]:
    return config_errors(apply_ops(raw_environment(env), [*ops, ("set", "rollout.slo", slo)]))


def with_slo(**changes) -> dict:
    return {**PROD_SLO, **changes}


# --- config ---------------------------------------------------------------------------------------------------


def test_prod_gates_its_rollout_on_the_probe_tenants_latency():
    slo = prod_spec().rollout.slo
    assert slo is not None
    assert (slo.tenant, slo.ttft_p95_ms, slo.tpot_p95_ms, slo.max_error_rate) == ("rollout-probe", 1000, 60, 0.01)
    assert (slo.concurrency, slo.duration_seconds, slo.max_requests, slo.min_requests) == (8, 120, 400, 50)
    assert [(r.max_tokens, r.weight) for r in slo.requests] == [(128, 3), (512, 1)]
    assert (slo.request_timeout_seconds, slo.models, slo.waves) == (60, [], {})  # the defaults


@pytest.mark.parametrize(
    ("slo", "ops", "error"),
    [
        (
            with_slo(tenant="rollout-prob"),
            (),
            "rollout.slo.tenant: did you mean 'rollout-probe'? no tenant named 'rollout-prob'; use one of search, "
            "support-bot, evals, legal, rollout-probe",
        ),
        (
            with_slo(models=["llama-3-1-70b"]),
            (),
            "rollout.slo.models[0]: tenant 'rollout-probe' may not call 'llama-3-1-70b', so its key would be refused; "
            "add llama-3-1-70b to the tenant's models or test one of llama-3-1-8b, mistral-7b-trt",
        ),
        (
            with_slo(waves={"aws": ["llama-3-1-70b"]}),
            (),
            "rollout.slo.waves.aws[0]: tenant 'rollout-probe' may not call 'llama-3-1-70b', so its key would be "
            "refused; add llama-3-1-70b to the tenant's models or test one of llama-3-1-8b, mistral-7b-trt",
        ),
        (
            PROD_SLO,
            (("set", "tenants[4].models", ["llama-3-1-8b"]),),
            "rollout.slo.tenant: wave gcp deploys mistral-7b-trt and the gate would test none of them (llama-3-1-8b), "
            "so it would stop the rollout there; add one of them to the models of tenant 'rollout-probe', or set "
            "rollout.slo.waves.gcp: [] to deploy gcp untested",
        ),
        (
            with_slo(models=["llama-3-1-8b"]),
            (),
            "rollout.slo.models: wave gcp deploys mistral-7b-trt and the gate would test none of them "
            "(llama-3-1-8b), so it would stop the rollout there; list one of them here (and in the models of tenant "
            "'rollout-probe'), or set rollout.slo.waves.gcp: [] to deploy gcp untested",
        ),
        (
            with_slo(waves={"gcp": ["llama-3-1-8b"]}),
            (),
            "rollout.slo.waves.gcp[0]: 'llama-3-1-8b' is served in use1, usw2, not by this wave's regions (usc1); "
            "test it in the wave that deploys it",
        ),
        (
            with_slo(waves={"global": []}),
            (),
            "rollout.slo.waves.global: the global wave creates no gateway of its own, so it is not load-tested; "
            "remove it (federated models are routable only after it)",
        ),
        (
            with_slo(waves={"canry": []}),
            (),
            "rollout.slo.waves.canry: did you mean 'canary'? no wave named 'canry'; use one of canary, aws, gcp",
        ),
        (
            with_slo(minRequests=500),
            (),
            "rollout.slo.minRequests: 500 is more than maxRequests 400, so no test could pass; lower minRequests or "
            "raise maxRequests",
        ),
        (
            with_slo(concurrency=16, maxRequests=10, minRequests=5),
            (),
            "rollout.slo.concurrency: 16 requests in flight is more than the maxRequests 10 a test sends; lower "
            "concurrency or raise maxRequests",
        ),
        (
            PROD_SLO,
            (
                ("set", "gateway.auth", "none"),
                ("set", "regions[0].gateway.exposure", "internal"),
                ("set", "regions[1].gateway.exposure", "internal"),
            ),
            "rollout.slo.tenant: the load test calls the gateway with the tenant's API key, and gateway.auth none "
            "issues none; set gateway.auth apiKey or remove rollout.slo",
        ),
        (
            PROD_SLO,
            (("set", "gateway.enabled", False),),
            "rollout.slo: no region runs a gateway (gateway.enabled, regions[].gateway.enabled, a model placed "
            "there), so there is nothing to load-test; remove rollout.slo or enable a gateway",
        ),
    ],
    ids=[
        "unknown-tenant",
        "model-not-granted",
        "wave-model-not-granted",
        "wave-untested-tenant",
        "wave-untested-models",
        "model-not-in-the-wave",
        "global-wave",
        "unknown-wave",
        "min-over-max",
        "concurrency-over-max",
        "no-keys",
        "no-gateway",
    ],
)
def test_a_wrong_slo_is_one_line_naming_the_key_and_the_fix(slo, ops, error):
    assert error in slo_errors("prod", slo, *ops)


@pytest.mark.parametrize(
    "ops",
    [
        # gcp says it deploys untested
        (("set", "tenants[4].models", ["llama-3-1-8b"]), ("set", "rollout.slo.waves", {"gcp": []})),
        # gcp names the model it tests; the other waves test llama-3-1-8b
        (("set", "rollout.slo.models", ["llama-3-1-8b"]), ("set", "rollout.slo.waves", {"gcp": ["mistral-7b-trt"]})),
    ],
    ids=["gcp-skipped-by-name", "gcp-names-its-model"],
)
def test_a_wave_that_names_its_test_or_its_skip_passes(ops):
    assert prod_spec(*ops).rollout.slo is not None


def test_an_external_providers_model_is_not_the_gates_to_test():
    ops = (
        (
            "set",
            "gateway.externalProviders",
            [{"name": "openai", "type": "openai", "models": ["gpt-4o-mini"], "apiKey": "sk-test"}],
        ),
        ("set", "tenants[4].models", ["llama-3-1-8b", "gpt-4o-mini"]),
    )
    assert slo_errors("prod", with_slo(models=["gpt-4o-mini"]), *ops) == [
        "rollout.slo.models[0]: 'gpt-4o-mini' is an external provider's model; the gate measures the models this "
        "environment serves, remove it"
    ]


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"requests": [{"prompt": "hi", "maxTokens": 1}]}, "rollout.slo.requests[0].maxTokens"),
        ({"requests": []}, "rollout.slo.requests"),
        ({"maxErrorRate": 1.5}, "rollout.slo.maxErrorRate"),
        ({"ttftP95Ms": 0}, "rollout.slo.ttftP95Ms"),
        ({"concurrency": 0}, "rollout.slo.concurrency"),
    ],
)
def test_values_out_of_range_name_their_key(changes, key):
    [line] = slo_errors("prod", with_slo(**changes))
    assert line.startswith(f"{key}: "), line


def test_a_single_stack_environment_names_its_one_wave():
    """dev deploys as one stack: its one wave is `environment` (its tenants and models as dev's fixture has them)."""
    raw = apply_ops(
        raw_environment("dev"), [("set", "rollout", {"slo": with_slo(tenant="research", waves={"canary": []})})]
    )
    assert config_errors(raw) == [
        "rollout.slo.waves.canary: no wave named 'canary'; use one of environment",
    ]


# --- the measurements -------------------------------------------------------------------------------------------


def test_p95_interpolates_linearly_as_numpy():
    # np.percentile(range(1, 21), 95) = 19.05: rank 0.95 x 19 = 18.05, between the 19th (19) and 20th (20) values.
    assert percentile(list(range(1, 21)), 95) == pytest.approx(19.05)
    assert percentile([3.0], 95) == 3.0
    assert percentile([10, 0], 50) == 5


def test_the_mix_cycles_by_weight_and_every_model_gets_every_kind():
    schedule = weighted_schedule(["a", "b"], [("short", 128, 3), ("long", 512, 1)])
    assert [(r.model, r.max_tokens) for r in map(schedule, range(10))] == [
        ("a", 128),
        ("b", 128),
        ("a", 128),
        ("b", 128),
        ("a", 128),
        ("b", 128),
        ("a", 512),
        ("b", 512),
        ("a", 128),
        ("b", 128),
    ]


def test_measure_counts_errors_and_leaves_one_token_answers_out_of_tpot():
    samples = [
        Sample("m", True, ttft=0.1, tpot=0.02, tokens=10),
        Sample("m", True, ttft=0.3, tpot=None, tokens=1),
        Sample("m", False, error="HTTP 503: server_error"),
        Sample("n", False, error="HTTP 503: server_error"),
    ]
    measured = measure(samples, 4.04)
    assert (measured.requests, measured.succeeded, measured.errors, measured.error_rate) == (4, 2, 2, 0.5)
    assert measured.ttft_p95_ms == pytest.approx(290.0)  # 100 + 0.95 x 200
    assert measured.tpot_p95_ms == 20.0
    assert measured.errors_by_kind == {"HTTP 503: server_error": 2}
    assert measured.per_model["n"] == {"requests": 1, "errors": 1, "ttftP95Ms": None, "tpotP95Ms": None}


# --- the load tester against the in-suite simulator ---------------------------------------------------------------

MIX = [("hi", 16, 1)]
# What a loaded 2-core machine adds to the simulator's sleeps, at most (thread and event-loop scheduling).
TTFT_SLACK, TPOT_SLACK = 0.25, 0.015
# How late a loaded machine may read a stream's first chunk after it was sent (the span to the last one shrinks by it).
LATE_FIRST_CHUNK = 0.03


def load(sim: SseSimulator, bounds: Bounds, key: str = "sim-key", models=("m",), **kwargs):
    samples, seconds = run_load_test(sim.base_url, key, weighted_schedule(list(models), MIX), bounds, **kwargs)
    return samples, seconds, measure(samples, seconds)


@pytest.mark.slow
def test_streams_are_measured_within_the_simulators_latencies():
    with SseSimulator(ttft=0.08, itl=0.01) as sim:
        samples, _, measured = load(
            sim, Bounds(concurrency=8, duration_seconds=30, max_requests=24, request_timeout_seconds=10)
        )
    assert len(sim.received) == 24 and measured.requests == 24 and measured.errors == 0
    # The simulator sends a role-only chunk at once: TTFT waits for the first token, 80 ms later.
    assert all(0.08 <= s.ttft <= 0.08 + TTFT_SLACK for s in samples)
    # 16 tokens, one every 10 ms after the first: (last - first) / 15 >= 10 ms.
    assert all(0.01 <= s.tpot <= 0.01 + TPOT_SLACK and s.tokens == 16 for s in samples)
    assert 80 <= measured.ttft_p95_ms <= 80 + TTFT_SLACK * 1000
    body = sim.received[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True} and body["max_tokens"] == 16
    assert sim.received[0].authorization == "Bearer sim-key"


@pytest.mark.slow
def test_tokens_are_counted_from_usage_when_a_chunk_carries_several():
    """With speculative decoding a chunk carries several tokens: the usage chunk's count makes TPOT per token."""
    # Chunks 200 ms apart, so a loaded machine's delays (tens of ms) cannot blur per token into per chunk; the three
    # requests at once, each on its own connection and stream.
    with SseSimulator(ttft=0.02, itl=0.2, tokens_per_chunk=4, tokens=lambda _: 16) as sim:
        samples, _, _ = load(sim, Bounds(3, 30, 3, 10))
    # 4 chunks, 200 ms apart: 600 ms over 15 token intervals = 40 ms a token (not 200 ms a chunk). A first chunk read
    # late on a loaded machine shortens the span a little: LATE_FIRST_CHUNK below the interval, still 5x apart.
    assert len(samples) == 3
    assert all(s.tokens == 16 and 0.04 - LATE_FIRST_CHUNK / 15 <= s.tpot <= 0.04 + 4 * TPOT_SLACK for s in samples)
    with SseSimulator(ttft=0.02, itl=0.2, tokens_per_chunk=4, tokens=lambda _: 16, usage=False) as sim:
        samples, _, _ = load(sim, Bounds(3, 30, 3, 10))
    # Without usage, the chunks are the tokens: 600 ms over 3 intervals.
    assert len(samples) == 3
    assert all(s.tokens == 4 and 0.2 - LATE_FIRST_CHUNK / 3 <= s.tpot <= 0.2 + 4 * TPOT_SLACK for s in samples)


def test_the_request_cap_bounds_a_test():
    with SseSimulator(ttft=0.0, itl=0.0) as sim:
        samples, _, _ = load(
            sim, Bounds(concurrency=3, duration_seconds=60, max_requests=7, request_timeout_seconds=10)
        )
    assert len(samples) == 7 and len(sim.received) == 7


@pytest.mark.slow
def test_the_duration_bounds_a_test():
    """No request starts after the duration; those in flight finish: at most duration + one request."""
    with SseSimulator(ttft=0.15, itl=0.0, tokens=lambda _: 2) as sim:
        started = time.monotonic()
        samples, seconds, _ = load(sim, Bounds(2, duration_seconds=0.5, max_requests=1000, request_timeout_seconds=10))
        took = time.monotonic() - started
    # 2 workers, ~0.15 s a request: about 4 rounds start within 0.5 s.
    assert 4 <= len(samples) <= 10 and len(sim.received) == len(samples)
    assert took < 0.5 + 0.15 + 1.0 and seconds <= took


def test_a_request_longer_than_its_timeout_is_an_error_and_stops_waiting():
    with SseSimulator(ttft=3.0, itl=0.0) as sim:
        started = time.monotonic()
        samples, _, measured = load(sim, Bounds(2, duration_seconds=0.1, max_requests=2, request_timeout_seconds=0.25))
        took = time.monotonic() - started
    assert [s.error for s in samples] == ["timed out after 0.25s"] * 2
    assert took < 4 * 0.25 and measured.error_rate == 1.0  # not the 3 s of the first token


@pytest.mark.parametrize(
    ("failure", "error"),
    [
        ("status", "HTTP 503: server_error"),
        ("break", "the stream ended without [DONE]"),
        ("error-event", "error event in the stream: internal_error"),
    ],
)
def test_failures_are_counted_by_kind(failure, error):
    with SseSimulator(ttft=0.0, itl=0.001, fail=lambda i: failure if i % 2 else None) as sim:
        samples, _, measured = load(sim, Bounds(1, 30, 10, 10))
    assert (measured.requests, measured.errors) == (10, 5)
    assert measured.errors_by_kind == {error: 5}
    assert all(s.ok for s in samples[::2])


@pytest.mark.slow
def test_a_kept_alive_connection_gives_each_request_its_whole_timeout():
    """The first request ends 0.3 s before its 1.2 s timeout; the second waits 0.6 s in the queue for its headers: 1.5 s
    on one connection, each request within its own timeout."""
    with SseSimulator(ttft=0.0, itl=0.0, queued=lambda i: 0.9 if i == 0 else 0.6) as sim:
        samples, _, measured = load(sim, Bounds(1, 30, 2, request_timeout_seconds=1.2))
    assert [(s.ok, s.error) for s in samples] == [(True, ""), (True, "")] and measured.errors == 0


def test_a_kept_alive_connection_the_server_closed_is_reopened_not_counted_as_an_error():
    with SseSimulator(ttft=0.0, itl=0.0, drop_idle=True) as sim:
        _, _, measured = load(sim, Bounds(1, 30, 4, 10))
    assert (measured.requests, measured.errors) == (4, 0)
    assert len(sim.received) == 4  # each sent once: the closed connection got no byte of it


def test_a_wrong_key_is_refused_and_counted():
    with SseSimulator(ttft=0.0, itl=0.0) as sim:
        _, _, measured = load(sim, Bounds(1, 30, 3, 10), key="not-the-key")
    assert measured.errors_by_kind == {"HTTP 401: invalid_api_key": 3}


@pytest.mark.parametrize(
    "url",
    ["http://use1.llm.acme.example/v1", "http://10.20.0.5:8000/v1", "ftp://127.0.0.1/v1", "https:///v1"],
)
def test_a_key_goes_over_tls_only_but_to_a_loopback_simulator(url):
    with pytest.raises(LoadTestInputError):
        Endpoint.of(url)


@pytest.mark.parametrize("url", ["https://use1.llm.acme.example/v1", "http://127.0.0.1:8000/v1", "http://[::1]:80/v1"])
def test_tls_and_loopback_targets_are_called(url):
    assert Endpoint.of(url).path == "/v1/chat/completions"


def test_tls_is_verified_against_the_gateways_ca():
    ca = pki.new_ca("test gateways")
    leaf = pki.issue(ca, "gateway", ip_addresses=("127.0.0.1",), server=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with tempfile_pair(leaf) as (crt, key):
        context.load_cert_chain(crt, key)
    with SseSimulator(ttft=0.0, itl=0.0, tls=context) as sim:
        _, _, trusted = load(sim, Bounds(1, 30, 2, 10), ca_pem=ca.cert_pem)
        _, _, untrusted = load(sim, Bounds(1, 30, 2, 10), ca_pem=pki.new_ca("another").cert_pem)
    assert (trusted.requests, trusted.errors) == (2, 0)
    assert untrusted.errors == 2 and all(k.startswith("TLS: ") for k in untrusted.errors_by_kind)


class tempfile_pair:
    def __init__(self, pair: pki.KeyPair):
        import tempfile

        self._dir = tempfile.TemporaryDirectory()
        self._pair = pair

    def __enter__(self):
        from pathlib import Path

        crt, key = self._pair.write(Path(self._dir.name), "leaf")
        return str(crt), str(key)

    def __exit__(self, *_):
        self._dir.cleanup()


# --- the gate in the rollout -----------------------------------------------------------------------------------


def simulated_gateways(sim: SseSimulator):
    """The load test of every gateway sent to the one simulator (its base URL for theirs)."""

    def load_test(base_url, api_key, schedule, bounds, **kwargs):
        load_test.urls.append(base_url)
        return run_load_test(sim.base_url, api_key, schedule, bounds, **kwargs)

    load_test.urls = []
    return load_test


@pytest.mark.slow
def test_a_long_answer_streams_through_whole_with_the_tokens_it_was_asked_for():
    """The gate tests answer short (short_answers); the mix's longest answer (prod's 512 tokens) still streams through
    the load tester whole, every token counted, at no inter-token wait."""
    with SseSimulator(ttft=0.0, itl=0.0) as sim:
        samples, _ = run_load_test(
            sim.base_url, "sim-key", weighted_schedule(["m"], [("hi", 512, 1)]), Bounds(2, 30, 4, 10)
        )
    assert len(samples) == 4 and all(s.ok and not s.error and s.tokens == 512 for s in samples)
    assert {r.body["max_tokens"] for r in sim.received} == {512}


def short_answers(max_tokens: int) -> int:
    """The gate tests' answer length: at most 16 tokens (a model stops early at its end of sequence), so the mix's
    128- and 512-token requests do not spend seconds in inter-token waits; TTFT and TPOT are measured the same."""
    return min(max_tokens, 16)


def fast_slo(**changes):
    """prod's rollout.slo, small enough for a test: 12 requests, 6 at a time."""
    return with_slo(concurrency=6, durationSeconds=20, maxRequests=12, minRequests=6, **changes)


@pytest.mark.slow
def test_the_gate_passes_a_fast_gateway_and_records_its_measurements(project):
    env = prod_spec(("set", "rollout.slo", fast_slo()))
    outputs = prod_outputs(env)
    outputs["prod.use1"]["apiKeys"]["rollout-probe"] = KEY
    with SseSimulator(ttft=0.05, itl=0.005, api_key=KEY, tokens=short_answers) as sim:
        load_test = simulated_gateways(sim)
        run = roll(project, [], env=env, workspace=FakeWorkspace(outputs), load_test=load_test)
    assert run.code == 0, run.out
    # canary (use1) and aws (usw2) test llama-3-1-8b, gcp (usc1) mistral-7b-trt; the global wave has no gateway
    assert load_test.urls == ["https://use1.gw/v1", "https://usw2.gw/v1", "https://usc1.gw/v1"]
    assert {r.body["model"] for r in sim.received} == {"llama-3-1-8b", "mistral-7b-trt"} and len(sim.received) == 36
    state = state_of(project)
    tested = [s for s in state.slo if s["tested"]]
    assert [(s["wave"], s["region"], s["passed"]) for s in tested] == [
        ("canary", "use1", True),
        ("aws", "usw2", True),
        ("gcp", "usc1", True),
    ]
    measured = tested[0]["measured"]
    assert measured["requests"] == 12 and measured["errors"] == 0
    assert 50 <= measured["ttftP95Ms"] <= 50 + TTFT_SLACK * 1000
    assert tested[0]["allowed"] == {"ttftP95Ms": 1000, "tpotP95Ms": 60, "maxErrorRate": 0.01, "minRequests": 6}
    assert [(s["wave"], s["region"], s["reason"]) for s in state.slo if not s["tested"]] == [
        ("global", None, "the global wave creates no gateway of its own"),
    ]
    gates = [s for s in state.steps if s.action == "gate slo"]
    assert [(g.wave, g.ok) for g in gates] == [("canary", True), ("aws", True), ("gcp", True), ("global", True)]
    assert gates[3].result == "not load-tested: the global wave creates no gateway of its own"
    assert "pass gate slo: 1 gateway(s) within the SLO: use1 (llama-3-1-8b): 12 requests" in run.out


@pytest.mark.slow
def test_a_slow_gateway_stops_the_rollout_naming_the_metric_measured_and_allowed(project):
    env = prod_spec(("set", "rollout.slo", fast_slo(ttftP95Ms=100)))
    outputs = prod_outputs(env)
    outputs["prod.use1"]["apiKeys"]["rollout-probe"] = KEY
    workspace = FakeWorkspace(outputs)
    with SseSimulator(ttft=0.15, itl=0.005, api_key=KEY, tokens=short_answers) as sim:
        run = roll(project, [], env=env, workspace=workspace, load_test=simulated_gateways(sim))
    assert run.code == 1
    assert workspace.calls == [("prod.use1", "preview"), ("prod.use1", "up")]  # aws waits
    state = state_of(project)
    assert (state.waves_done, state.stopped_at) == ([], "canary")
    [result] = state.slo
    assert not result["passed"] and result["measured"]["ttftP95Ms"] >= 150
    [failure] = result["failures"]
    assert failure == f"TTFT p95 {result['measured']['ttftP95Ms']:g} ms > 100 ms allowed"
    assert "FAIL gate slo: use1 (llama-3-1-8b): 12 requests" in run.out and "ms > 100 ms allowed" in run.out
    # the key: in the Authorization header the gateway received, nowhere in the state or the output
    assert sim.received[0].authorization == f"Bearer {KEY}"
    text = (project / "build" / "prod" / "rollout-state.json").read_text()
    assert KEY not in text and KEY not in run.out


@pytest.mark.slow
def test_errors_over_the_allowed_rate_stop_the_rollout(project):
    env = prod_spec(("set", "rollout.slo", fast_slo()))
    outputs = prod_outputs(env)
    outputs["prod.use1"]["apiKeys"]["rollout-probe"] = KEY
    with SseSimulator(
        ttft=0.0, itl=0.001, api_key=KEY, tokens=short_answers, fail=lambda i: "status" if i % 4 == 0 else None
    ) as sim:
        run = roll(project, [], env=env, workspace=FakeWorkspace(outputs), load_test=simulated_gateways(sim))
    assert run.code == 1
    [result] = state_of(project).slo
    assert result["failures"] == ["error rate 25.0% (3 of 12: HTTP 503: server_error x3) > 1.0% allowed"]


def test_without_the_tenants_key_the_gate_fails_without_sending(project):
    env = prod_spec(("set", "rollout.slo", fast_slo()))
    outputs = prod_outputs(env)
    del outputs["prod.use1"]["apiKeys"]["rollout-probe"]
    sent = []
    run = roll(project, [], env=env, workspace=FakeWorkspace(outputs), load_test=lambda *a, **k: sent.append(a))
    assert run.code == 1 and sent == []
    assert "FAIL gate slo: use1 (llama-3-1-8b): no key for tenant rollout-probe in the apiKeys output" in run.out


def test_a_wave_skipped_by_name_is_not_load_tested(project):
    env = prod_spec(("set", "rollout.slo", fast_slo(waves={"canary": []})))
    calls = []

    def load_test(base_url, *args, **kwargs):
        calls.append(base_url)
        return [Sample("llama-3-1-8b", True, ttft=0.1, tpot=0.01, tokens=9)] * 12, 2.0

    run = roll(project, [], env=env, workspace=FakeWorkspace(prod_outputs(env)), load_test=load_test)
    assert run.code == 0 and calls == ["https://usw2.gw/v1", "https://usc1.gw/v1"]
    assert state_of(project).slo[0] == {
        "wave": "canary",
        "region": "use1",
        "tested": False,
        "reason": "rollout.slo.waves.canary is empty",
    }


def test_a_wave_whose_models_no_test_reached_stops_the_rollout(project):
    """usc1 deploys mistral-7b-trt, but its gateway routes none of the probe's models: gcp deployed untested."""
    env = prod_spec(("set", "rollout.slo", fast_slo()))
    outputs = prod_outputs(env)
    outputs["prod.usc1"]["gateways"]["usc1"]["models"] = []
    calls = []

    def load_test(base_url, *args, **kwargs):
        calls.append(base_url)
        return [Sample("llama-3-1-8b", True, ttft=0.1, tpot=0.01, tokens=9)] * 12, 2.0

    workspace = FakeWorkspace(outputs)
    run = roll(project, [], env=env, workspace=workspace, load_test=load_test)
    assert run.code == 1 and calls == ["https://use1.gw/v1", "https://usw2.gw/v1"]
    state = state_of(project)
    assert state.stopped_at == "gcp" and ("prod.global", "up") not in workspace.calls
    [gate] = [g for g in state.steps if g.action == "gate slo" and g.wave == "gcp"]
    assert not gate.ok and gate.result.startswith(
        "wave gcp deploys models no load test could measure; give the gate a gateway it reaches and a model its "
        "tenant may call there (rollout.slo.models, rollout.slo.waves.gcp), or set rollout.slo.waves.gcp: [] to "
        "deploy it untested: usc1: not load-tested: none of llama-3-1-8b, mistral-7b-trt"
    )


@pytest.mark.plan
def test_only_a_wave_with_models_and_no_test_is_untested():
    spec = prod_spec()
    slo = spec.rollout.slo
    gateway = plan_for("prod").stacks["prod.usc1"].outputs["gateways"]["usc1"]
    unreachable = region_target(spec, slo, "gcp", "usc1", gateway, reachable=False)
    tested = region_target(spec, slo, "gcp", "usc1", gateway, reachable=True)
    no_gateway = region_target(spec, slo, "gcp", "usc1", None, reachable=True)
    assert untested_wave("gcp", [unreachable]) is not None
    assert untested_wave("gcp", [tested, unreachable]) is None  # one gateway of the wave measured
    assert untested_wave("gcp", [no_gateway]) is None  # nothing of its own to measure
    assert untested_wave("global", [NotTested(None, "the global wave creates no gateway of its own")]) is None


@pytest.mark.plan
def test_a_gateway_the_runner_cannot_reach_is_not_load_tested():
    """As the health gate: an internal gateway is called only from inside its network (tools/rollout/reach.py)."""
    spec = prod_spec(("set", "tenants[4].models", ["llama-3-1-8b", "mistral-7b-trt"]))
    slo = spec.rollout.slo
    gateway = plan_for("prod").stacks["prod.usc1"].outputs["gateways"]["usc1"]
    found = region_target(spec, slo, "gcp", "usc1", gateway, reachable=False)
    assert found.line() == "usc1: not load-tested: its gateway (internal) is not reachable from where the wave runs"
    assert region_target(spec, slo, "gcp", "usc1", gateway, reachable=True).models == ("mistral-7b-trt",)
    assert region_target(spec, slo, "gcp", "usc1", None, reachable=True).line() == (
        "usc1: not load-tested: no gateway (the region serves no model, or its gateway is off)"
    )


# --- what the plan and the dry run show ---------------------------------------------------------------------------


@pytest.mark.plan
def test_plan_md_lists_the_gate_per_wave():
    from tools.plan.slo_section import slo_section

    section = slo_section(plan_for("prod"))
    assert section.splitlines()[-4:] == [
        "| canary | use1 | https://use1.llm.acme.example/v1/chat/completions: `llama-3-1-8b` |",
        "| aws | usw2 | https://usw2.llm.acme.example/v1/chat/completions: `llama-3-1-8b` |",
        "| gcp | usc1 | https://usc1.llm.acme.example/v1/chat/completions: `mistral-7b-trt` |",
        "| global | - | not load-tested: the global wave creates no gateway of its own |",
    ]
    assert "TTFT p95 <= 1000 ms, TPOT p95 <= 60 ms, errors <= 1.0% and at least 50 requests" in section
    assert slo_section(plan_for("dev")) == ""  # dev sets no rollout.slo


@pytest.mark.plan
def test_the_dry_run_lists_the_slo_gate_and_sends_nothing(project):
    from tools.rollout.__main__ import main

    out = io.StringIO()
    code = main(
        ["prod", "--dry-run", "--project-dir", str(project)],
        console=Console(file=out, width=400),
        plans=lambda project_dir, env_name, *, out_dir: (prod_spec(), plan_for("prod").stacks),
        bring_up_check=lambda *_: Report(),
        load_test=lambda *a, **k: pytest.fail("the dry run sent a request"),
    )
    rows = [" ".join(line.split()) for line in out.getvalue().splitlines()]
    assert code == 0, out.getvalue()
    assert (
        "slo: use1 streamed chat completions to https://use1.llm.acme.example/v1/chat/completions as tenant "
        "rollout-probe (llama-3-1-8b): up to 400 requests in 120s, 8 at a time; passes with TTFT p95 <= 1000 ms, "
        "TPOT p95 <= 60 ms, errors <= 1.0%, at least 50 requests"
    ) in rows
    assert "slo not load-tested: the global wave creates no gateway of its own" in rows


def test_the_pack_is_told_the_gates_tenant_and_models():
    from policies.offline import spec_settings

    settings = spec_settings(prod_spec())
    assert (settings["rolloutSloTenant"], settings["rolloutSloModels"]) == (
        "rollout-probe",
        ["llama-3-1-8b", "mistral-7b-trt"],
    )
    explicit = with_slo(waves={"aws": [], "gcp": []}, models=["llama-3-1-8b"])
    assert spec_settings(prod_spec(("set", "rollout.slo", explicit)))["rolloutSloModels"] == ["llama-3-1-8b"]
    # every region wave named: the tenant's other models are tested nowhere, so they are not the gate's
    wider = (("set", "tenants[4].models", ["llama-3-1-8b", "mistral-7b-trt"]),)
    named = with_slo(waves={"canary": ["llama-3-1-8b"], "aws": [], "gcp": ["mistral-7b-trt"]})
    assert spec_settings(prod_spec(*wider, ("set", "rollout.slo", named)))["rolloutSloModels"] == [
        "llama-3-1-8b",
        "mistral-7b-trt",
    ]
    partly = with_slo(waves={"canary": ["llama-3-1-8b"], "aws": []})  # gcp tests the tenant's models
    assert spec_settings(prod_spec(*wider, ("set", "rollout.slo", partly)))["rolloutSloModels"] == [
        "llama-3-1-8b",
        "mistral-7b-trt",
    ]
    only_8b = with_slo(waves={"canary": ["llama-3-1-8b"], "aws": ["llama-3-1-8b"], "gcp": []})
    assert spec_settings(prod_spec(*wider, ("set", "rollout.slo", only_8b)))["rolloutSloModels"] == ["llama-3-1-8b"]
    assert spec_settings(load_environment(raw_environment("dev")))["rolloutSloTenant"] is None


@pytest.mark.plan
def test_prods_plan_passes_the_slo_tenant_rule():
    from policies.offline import evaluate_plan, plan_settings

    plan = plan_for("prod")
    evaluation = evaluate_plan(plan)
    assert evaluation.subjects["rollout-slo-tenant-least-privilege"] > 0
    assert not evaluation.of("rollout-slo-tenant-least-privilege")
    # the settings `pulumi preview` gets (policy-config.json) carry the tenant and its models
    assert json.loads(json.dumps(plan_settings(plan).raw))["rollout-slo-tenant-least-privilege"] == {
        "rolloutSloTenant": "rollout-probe",
        "rolloutSloModels": ["llama-3-1-8b", "mistral-7b-trt"],
    }


@pytest.mark.plan
def test_admitting_the_slo_tenant_to_another_model_fails_prods_plan():
    from policies.framework import evaluate_stack
    from policies.offline import plan_resources, plan_settings
    from policies.rules import ALL_RULES

    plan = plan_for("prod")
    resources = plan_resources(plan)
    [route] = [
        r for r in resources if r.type.endswith(":AIGatewayRoute") and r.name == "prod-use1-aigatewayroute-models-1"
    ]
    rule_ = next(x for x in route.props["spec"]["rules"] if x["name"] == "llama-3-1-70b")
    rule_["matches"].append(
        {
            "headers": [
                {"type": "Exact", "name": "x-ai-eg-model", "value": "llama-3-1-70b"},
                {"type": "Exact", "name": "x-tenant-id", "value": "rollout-probe"},
            ]
        }
    )
    [finding] = evaluate_stack(ALL_RULES, resources, plan_settings(plan)).of("rollout-slo-tenant-least-privilege")
    assert finding.enforcement_level == "mandatory"
    assert (
        "admits tenant 'rollout-probe', whose key the rollout's SLO gate holds, to 'llama-3-1-70b'" in finding.message
    )


@pytest.mark.parametrize(
    ("delta", "output"),
    [
        ({"role": "assistant"}, False),  # vLLM's opening chunk
        ({"role": "assistant", "content": ""}, False),
        ({"content": "Hello"}, True),
        ({"content": ""}, True),  # a token that decodes to nothing (a special token, skip_special_tokens)
        ({"reasoning": "First,"}, True),
        ({"tool_calls": [{"index": 0, "function": {"arguments": "{"}}]}, True),
        ({}, False),
    ],
)
def test_a_chunk_is_output_as_vllms_benchmark_counts_it(delta, output):
    """vllm 0.33.0 vllm/benchmarks/lib/endpoint_request_func.py L392-406 (_choice_has_streamed_output), by hand."""
    from tools.rollout.loadtest import _has_token

    assert _has_token({"choices": [{"index": 0, "delta": delta}]}) is output
    assert _has_token({"choices": [], "usage": {"completion_tokens": 3}}) is False
