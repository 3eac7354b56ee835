"""`rollout:` the order `make rollout` deploys an environment's stacks in, and where it stops to ask.

A wave is a set of region stacks deployed together, then checked (policy before, health after) before the
next wave starts. By default the anchor region goes first, alone, as the canary: it holds the tenant keys and
the Karmada control plane every other stack reads. Then the rest of the anchor's cloud, then each other cloud,
and the global stack always last.
"""

from __future__ import annotations

from pydantic import Field

from components.config.base import Name, Spec

CANARY = "canary"
SINGLE = "environment"  # the one wave of a single-stack environment


class WaveSpec(Spec):
    """One wave: region entries whose stacks deploy together."""

    name: Name = Field(description="Wave name, as `confirmBefore` and `--from-wave` name it.")
    regions: list[str] = Field(min_length=1, description="Region entries whose stacks deploy in this wave.")


class SloRequestSpec(Spec):
    """One kind of request of the SLO load test's mix: a chat prompt and how many tokens it may generate."""

    prompt: str = Field(min_length=1, max_length=32768, description="The user message the request sends.")
    max_tokens: int = Field(
        ge=2,
        le=32768,
        description="The request's max_tokens: at least 2, since TPOT is measured between the first and the last "
        "token of a response.",
    )
    weight: int = Field(1, ge=1, le=100, description="Share of the mix relative to the other entries.")


class SloSpec(Spec):
    """`rollout.slo`: after each wave's health gate, a bounded streaming load test through the wave's gateways with
    a tenant's key; the next wave starts only when its p95 TTFT, p95 TPOT and error rate are within these bounds."""

    tenant: str = Field(
        description="Tenant whose API key the load test calls with: give it a tenant of its own (tenants[]), "
        "granted only the models it tests and with a request budget (the pack checks both)."
    )
    ttft_p95_ms: float = Field(
        gt=0,
        description="Most the 95th percentile of time to first token may be, in ms (request sent to first "
        "output chunk).",
    )
    tpot_p95_ms: float = Field(
        gt=0,
        description="Most the 95th percentile of time per output token may be, in ms: (last token - first token) "
        "/ (tokens - 1) per request.",
    )
    max_error_rate: float = Field(
        0.01,
        ge=0,
        le=1,
        description="Largest share (0-1) of requests that may fail: a status other than 200, an error or a break in "
        "the stream, no content, or the request timeout.",
    )
    requests: list[SloRequestSpec] = Field(
        min_length=1, description="The request mix, sent in turn in proportion to each entry's weight."
    )
    concurrency: int = Field(4, ge=1, le=256, description="Requests in flight at once.")
    duration_seconds: int = Field(
        60, ge=1, le=3600, description="No request starts after this many seconds from the first one."
    )
    max_requests: int = Field(200, ge=1, le=100000, description="Hard cap on the requests one gateway's test sends.")
    min_requests: int = Field(
        20,
        ge=1,
        description="Fewest completed requests a verdict needs: a test that measured fewer fails (a p95 over a "
        "handful of requests says little).",
    )
    request_timeout_seconds: int = Field(
        60, ge=1, le=3600, description="Longest one request may stream; a longer one counts as an error."
    )
    models: list[str] = Field(
        default_factory=list,
        description="Models the test sends to, in each wave that creates them; empty: every model of the tenant "
        "that the wave's gateways serve once the wave is up.",
    )
    waves: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Per wave name, the models to test in that wave instead of `models`; [] skips that wave.",
    )


class RolloutSpec(Spec):
    """`rollout:`: waves, operator confirmations and the health deadline of `make rollout`."""

    waves: list[WaveSpec] | None = Field(
        None,
        min_length=1,
        description="Waves of region stacks, in order (perRegion layout only); default: `canary` = the anchor "
        "region, then the rest of its cloud, then each other cloud (waves named after the cloud), a cloud's regions "
        "split by runner (`<cloud>-<region>`) unless they share a deployer.runnerLabel (`make rollout WAVE=<wave>` "
        "runs on one runner); a stack deploys after the stacks it reads. The global stack is always the last wave, "
        "`global`.",
    )
    confirm_before: list[str] = Field(
        default_factory=list,
        description="Waves an operator confirms before they deploy (`global` included; `environment` for a "
        "single-stack environment); `--yes` confirms them all.",
    )
    health_timeout_minutes: int = Field(
        30, ge=1, description="How long a deployed wave may take to become healthy before the rollout stops."
    )
    slo: SloSpec | None = Field(
        None,
        description="Gate each wave on a bounded load test through its gateways (p95 TTFT and TPOT, error rate); "
        "off by default.",
    )
