"""The SLO gate of `make rollout` (`rollout.slo`): after a wave's health gate, a bounded streaming load test
(tools/rollout/loadtest.py) through each gateway the wave created and its runner reaches, with the SLO tenant's
key, judged on p95 TTFT, p95 TPOT and the error rate; the next wave starts only when every test passed.

What a wave tests: in each of its regions whose gateway the runner reaches (as the health gate, tools/rollout/reach.py),
the models of `rollout.slo.waves.<wave>` (else `models`, else every model the tenant may call) that the gateway routes
and that the region's own stack created by then (federated ones only exist after the global wave). The global wave
creates no gateway and is not load-tested.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from components.config.rollout import SloSpec
from components.domain.model_access import served_base
from components.domain.waves import slo_wave_models
from tools.rollout.health import served_models
from tools.rollout.loadtest import Bounds, LoadTestInputError, Sample, percentile, run_load_test, weighted_schedule

if TYPE_CHECKING:
    from components.config.environment import EnvironmentSpec

P95 = 95.0


@dataclass(frozen=True)
class SloTarget:
    """A gateway to load-test: its region, base URL (`<...>/v1`) and the models to send to."""

    region: str
    base_url: str
    models: tuple[str, ...]


@dataclass(frozen=True)
class NotTested:
    """A region (None: the whole wave) the gate does not load-test, and why."""

    region: str | None
    reason: str
    # The region serves models of its own the gate would test: a wave whose every region is untested for such a
    # reason deploys models no test measured, so its gate fails (tools/rollout/driver.py).
    expected: bool = False

    def line(self) -> str:
        return f"{self.region}: not load-tested: {self.reason}" if self.region else f"not load-tested: {self.reason}"


@dataclass(frozen=True)
class Measured:
    """What one gateway's test measured; latencies in ms, None where no request measured them."""

    requests: int
    succeeded: int
    ttft_p95_ms: float | None
    tpot_p95_ms: float | None
    seconds: float
    per_model: Mapping[str, Mapping[str, float | int | None]] = field(default_factory=dict)
    errors_by_kind: Mapping[str, int] = field(default_factory=dict)

    @property
    def errors(self) -> int:
        return self.requests - self.succeeded

    @property
    def error_rate(self) -> float:
        return self.errors / self.requests if self.requests else 0.0


def _p95_ms(values: Sequence[float]) -> float | None:
    return round(percentile(values, P95) * 1000, 1) if values else None


def measure(samples: Sequence[Sample], seconds: float) -> Measured:
    """p95s over the successful requests (TPOT over those of 2 tokens or more), per model too; errors by kind."""
    ok = [s for s in samples if s.ok]
    per_model: dict[str, dict[str, float | int | None]] = {}
    for model in dict.fromkeys(s.model for s in samples):
        mine = [s for s in samples if s.model == model]
        good = [s for s in mine if s.ok]
        per_model[model] = {
            "requests": len(mine),
            "errors": len(mine) - len(good),
            "ttftP95Ms": _p95_ms([s.ttft for s in good if s.ttft is not None]),
            "tpotP95Ms": _p95_ms([s.tpot for s in good if s.tpot is not None]),
        }
    kinds: dict[str, int] = {}
    for s in samples:
        if not s.ok:
            kinds[s.error] = kinds.get(s.error, 0) + 1
    return Measured(
        requests=len(samples),
        succeeded=len(ok),
        ttft_p95_ms=_p95_ms([s.ttft for s in ok if s.ttft is not None]),
        tpot_p95_ms=_p95_ms([s.tpot for s in ok if s.tpot is not None]),
        seconds=round(seconds, 1),
        per_model=per_model,
        errors_by_kind=dict(sorted(kinds.items(), key=lambda kv: -kv[1])),
    )


def judge(measured: Measured, slo: SloSpec) -> list[str]:
    """Each bound the test broke, naming the metric, what was measured and what is allowed; [] when it passed."""
    failures = []
    if measured.succeeded < slo.min_requests:
        failures.append(
            f"{measured.succeeded} requests completed in {measured.seconds:g}s, fewer than minRequests "
            f"{slo.min_requests}"
        )
    if measured.error_rate > slo.max_error_rate:
        kinds = ", ".join(f"{kind} x{n}" for kind, n in measured.errors_by_kind.items())
        failures.append(
            f"error rate {measured.error_rate:.1%} ({measured.errors} of {measured.requests}: {kinds}) > "
            f"{slo.max_error_rate:.1%} allowed"
        )
    for metric, value, allowed in (
        ("TTFT", measured.ttft_p95_ms, slo.ttft_p95_ms),
        ("TPOT", measured.tpot_p95_ms, slo.tpot_p95_ms),
    ):
        if value is None:
            if measured.succeeded:
                failures.append(f"{metric} p95 not measured (no request returned 2 tokens or more)")
        elif value > allowed:
            failures.append(f"{metric} p95 {value:g} ms > {allowed:g} ms allowed")
    return failures


@dataclass(frozen=True)
class SloResult:
    """One gateway's verdict, as the summary and rollout-state.json show it (never the key)."""

    wave: str
    target: SloTarget
    tenant: str
    measured: Measured | None
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failures

    def line(self, slo: SloSpec) -> str:
        where = f"{self.target.region} ({', '.join(self.target.models)})"
        if self.measured is None:
            return f"{where}: {'; '.join(self.failures)}"
        m = self.measured
        numbers = (
            f"{m.requests} requests in {m.seconds:g}s, TTFT p95 {_ms(m.ttft_p95_ms)}/{slo.ttft_p95_ms:g} ms, "
            f"TPOT p95 {_ms(m.tpot_p95_ms)}/{slo.tpot_p95_ms:g} ms, errors {m.error_rate:.1%}/{slo.max_error_rate:.1%}"
        )
        return f"{where}: {numbers}" + (f": FAILED: {'; '.join(self.failures)}" if self.failures else "")

    def to_json(self, slo: SloSpec) -> dict[str, Any]:
        measured = self.measured
        return {
            "wave": self.wave,
            "region": self.target.region,
            "baseUrl": self.target.base_url,
            "tenant": self.tenant,
            "models": list(self.target.models),
            "tested": True,
            "passed": self.passed,
            "failures": list(self.failures),
            "allowed": {
                "ttftP95Ms": slo.ttft_p95_ms,
                "tpotP95Ms": slo.tpot_p95_ms,
                "maxErrorRate": slo.max_error_rate,
                "minRequests": slo.min_requests,
            },
            "measured": None
            if measured is None
            else {
                "requests": measured.requests,
                "succeeded": measured.succeeded,
                "errors": measured.errors,
                "errorRate": round(measured.error_rate, 4),
                "ttftP95Ms": measured.ttft_p95_ms,
                "tpotP95Ms": measured.tpot_p95_ms,
                "seconds": measured.seconds,
                "perModel": {k: dict(v) for k, v in measured.per_model.items()},
                "errorsByKind": dict(measured.errors_by_kind),
            },
        }


@dataclass(frozen=True)
class SloGate:
    """The gate as the rollout runs it: `targets(wave, stack, outputs)` says what a deployed stack's wave tests (or
    why not), `run(wave, target)` load-tests one gateway and judges it (tools/rollout/gates.py slo_gate)."""

    slo: SloSpec
    targets: Callable[[str, str, Mapping[str, Any]], list[SloTarget | NotTested]]
    run: Callable[[str, SloTarget], SloResult]


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def not_tested_json(wave: str, found: NotTested) -> dict[str, Any]:
    return {"wave": wave, "region": found.region, "tested": False, "reason": found.reason}


def untested_wave(wave: str, found: Sequence[SloTarget | NotTested]) -> str | None:
    """Why a wave's gate fails without a test: it deploys models of its own and not one gateway of it was tested."""
    if any(isinstance(t, SloTarget) for t in found) or not any(isinstance(t, NotTested) and t.expected for t in found):
        return None
    return (
        f"wave {wave} deploys models no load test could measure; give the gate a gateway it reaches and a model "
        f"its tenant may call there (rollout.slo.models, rollout.slo.waves.{wave}), or set rollout.slo.waves.{wave}: "
        "[] to deploy it untested"
    )


def region_target(
    env: EnvironmentSpec, slo: SloSpec, wave: str, region: str, gateway: Mapping[str, Any] | None, reachable: bool
) -> SloTarget | NotTested:
    """What the gate does in one region of a wave: load-test these models of its gateway, or why not."""
    if gateway is None:
        return NotTested(region, "no gateway (the region serves no model, or its gateway is off)")
    if not reachable:
        return NotTested(
            region,
            f"its gateway ({gateway.get('exposure', 'internal')}) is not reachable from where the wave runs",
            expected=True,
        )
    if wave in slo.waves and not slo.waves[wave]:
        return NotTested(region, f"rollout.slo.waves.{wave} is empty")
    wanted = slo_wave_models(env, slo, wave)
    own = {m.name for m in served_models(env, region) if not m.federated}
    routed = set(gateway.get("models") or [])
    tested = []
    for name in wanted:
        base = served_base(env, name)
        if base is not None and base.name in own and name in routed:
            tested.append(name)
    if not tested:
        return NotTested(
            region,
            f"none of {', '.join(wanted)} (tenant {slo.tenant}) is served by its gateway by the end of {wave}",
            expected=bool(own),
        )
    return SloTarget(region, str(gateway["baseUrl"]), tuple(tested))


def run_target(
    *,
    slo: SloSpec,
    wave: str,
    target: SloTarget,
    api_keys: Callable[[], Mapping[str, str]],
    ca_pem: str | None,
    load_test: Callable[..., tuple[list[Sample], float]] = run_load_test,
) -> SloResult:
    """Load-test one gateway with the SLO tenant's key (from the anchor's `apiKeys` output) and judge it."""
    key = (api_keys() or {}).get(slo.tenant)
    if not key:
        return SloResult(wave, target, slo.tenant, None, (f"no key for tenant {slo.tenant} in the apiKeys output",))
    schedule = weighted_schedule(target.models, [(r.prompt, r.max_tokens, r.weight) for r in slo.requests])
    bounds = Bounds(slo.concurrency, slo.duration_seconds, slo.max_requests, slo.request_timeout_seconds)
    try:
        samples, seconds = load_test(target.base_url, key, schedule, bounds, ca_pem=ca_pem)
    except LoadTestInputError as exc:
        return SloResult(wave, target, slo.tenant, None, (str(exc),))
    measured = measure(samples, seconds)
    return SloResult(wave, target, slo.tenant, measured, tuple(judge(measured, slo)))
