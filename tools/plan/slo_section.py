"""plan.md's rollout SLO gate (`rollout.slo`): per wave, which gateways `make rollout` load-tests with which models,
the bounds each test must meet, and each region it does not test with the reason."""

from __future__ import annotations

from tools.plan.model import Plan


def slo_section(plan: Plan) -> str:
    from components.domain.waves import rollout_waves
    from tools.rollout.gates import offline_slo_gate
    from tools.rollout.slo import NotTested, untested_wave

    env = plan.spec
    plans = plan.stacks or {plan.environment: plan}
    gate = offline_slo_gate(env, plan.environment, plans)
    if gate is None:
        return ""
    slo = gate.slo
    mix = ", ".join(f"{r.weight} x {r.max_tokens} tokens" for r in slo.requests)
    priority = next(t.priority for t in env.tenants if t.name == slo.tenant)
    rows = [
        "## Rollout SLO gate\n",
        f"After each wave's health gate, `make rollout` streams chat completions through the wave's gateways as "
        f"tenant `{slo.tenant}` (request class {priority}: the latency that class sees; its key from the anchor's "
        f"`apiKeys` output, never written down): up to "
        f"{slo.max_requests} requests in {slo.duration_seconds}s, {slo.concurrency} at a time, each at most "
        f"{slo.request_timeout_seconds}s (mix: {mix}). The next wave starts only when every test has TTFT p95 <= "
        f"{slo.ttft_p95_ms:g} ms, TPOT p95 <= {slo.tpot_p95_ms:g} ms, errors <= {slo.max_error_rate:.1%} and at "
        f"least {slo.min_requests} requests completed; the results go to `build/{plan.environment}/rollout-state.json`.\n",
        "| wave | region | load test |",
        "|---|---|---|",
    ]
    stops = []
    for wave in rollout_waves(env, plan.environment):
        targets = [t for stack in wave.stacks for t in gate.targets(wave.name, stack, plans[stack].outputs)]
        untested = untested_wave(wave.name, targets)
        if untested:
            stops.append(f"**The gate would stop the rollout:** {untested}.\n")
        for target in targets:
            if isinstance(target, NotTested):
                rows.append(f"| {wave.name} | {target.region or '-'} | not load-tested: {target.reason} |")
            else:
                models = ", ".join(f"`{m}`" for m in target.models)
                rows.append(f"| {wave.name} | {target.region} | {target.base_url}/chat/completions: {models} |")
    return "\n".join(rows) + "\n" + "".join(f"\n{line}" for line in stops)
