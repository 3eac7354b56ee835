"""Combinations that validate key by key but mean nothing, or something the user did not intend.

Each plans green otherwise and fails later, or silently: a label domain the API server refuses, a tenant
budget with no limit, a gateway nobody may call, a production model the cloud may reclaim at short notice,
a Kubernetes API opened to the internet by split ranges.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from ipaddress import IPv4Network

from components.config.base import Issue, KeyPath, join_path
from components.config.environment import EnvironmentSpec
from platform_catalog.address_space import covers_internet

# Kubernetes label key prefixes are DNS subdomains (RFC 1123): at most 253 characters of lowercase labels.
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
# AWS regions leave these to the VPC CNI / EKS; only a GKE cluster reads them.


def check_consistency(env: EnvironmentSpec) -> Iterator[Issue]:
    yield from _label_domain(env.label_domain)
    yield from _open_to_the_internet(
        env.federation.api_server.allowed_cidrs, ("federation", "apiServer", "allowedCidrs"), "the Karmada API"
    )
    yield from _tenants(env)
    yield from _regions(env)
    yield from _models(env)


def _label_domain(domain: str) -> Iterator[Issue]:
    labels = domain.split(".")
    if len(domain) > 253 or not all(_DNS_LABEL.match(label) for label in labels):
        yield Issue(
            "labelDomain",
            f"{domain!r} is not a DNS subdomain, which Kubernetes requires of a label key's prefix; use lowercase "
            "letters, digits, '-' and '.', e.g. inference-platform.example.com",
        )


def _tenants(env: EnvironmentSpec) -> Iterator[Issue]:
    served = [m.name for m in env.models]
    if served and env.gateway.enabled and not env.tenants:
        yield Issue(
            "tenants",
            f"the gateway serves {', '.join(served)} but no tenant has a key, so it refuses every request; "
            "add a tenant with the models it may call",
        )
    for i, tenant in enumerate(env.tenants):
        first: dict[str, int] = {}
        for j, model in enumerate(tenant.models):
            if model in first:
                yield Issue(
                    join_path("tenants", i, "models", j),
                    f"{model!r} is listed twice (also at index {first[model]}); remove one",
                )
            first.setdefault(model, j)
        budget = tenant.budget
        if budget is not None and not any(
            (budget.input_tokens, budget.output_tokens, budget.total_tokens, budget.requests)
        ):
            yield Issue(
                join_path("tenants", i, "budget"),
                "sets no limit; add inputTokens, outputTokens, totalTokens or requests, or remove budget",
            )


def _regions(env: EnvironmentSpec) -> Iterator[Issue]:
    for i, region in enumerate(env.regions):
        cidrs = list(region.api_access.public_cidrs)
        if len(cidrs) > 1:  # a single 0.0.0.0/0 is reported by check_region
            yield from _open_to_the_internet(cidrs, ("regions", i, "apiAccess", "publicCidrs"), "the Kubernetes API")
        # Which webhooks fail closed, and for what (no pod webhook of Volcano's): upstream.VOLCANO_ADMITS_NO_PODS.
        if env.production and region.system_pool.min_size < 2:
            yield Issue(
                join_path("regions", i, "systemPool", "minSize"),
                "production runs controllers and webhooks on at least 2 system nodes (one node's loss stops "
                "admission of Volcano queues, PodGroups and jobs, and of KServe's model-server pods, all fail-closed "
                "webhooks); set minSize to 2 or more",
            )


def _open_to_the_internet(cidrs: list[IPv4Network], path: KeyPath, what: str) -> Iterator[Issue]:
    """Coverage, not prefix length, judged as the policy pack judges it: 0.0.0.0/1 plus 128.0.0.0/1 opens as
    much as 0.0.0.0/0, and so does every public block listed one by one."""
    if covers_internet(str(c) for c in cidrs):
        yield Issue(
            join_path(*path),
            f"{', '.join(map(str, cidrs))} cover the whole internet, opening {what} to it; list your office/VPN "
            "or peer CIDRs instead",
        )


def _models(env: EnvironmentSpec) -> Iterator[Issue]:
    tiers = {t.name: t for t in env.priority_tiers}
    regions = {r.name: r for r in env.regions}
    for i, model in enumerate(env.models):
        tier = tiers.get(model.tier)
        if not env.production or tier is None or tier.preemptible:
            continue
        for j, placement in enumerate(model.placements):
            region = regions.get(placement.region)
            pool = next((p for p in region.gpu_pools if p.name == placement.pool), None) if region else None
            if pool is not None and pool.capacity.type == "spot":
                yield Issue(
                    join_path("models", i, "placements", j, "pool"),
                    f"{pool.name!r} runs on spot capacity, which the cloud reclaims at short notice, and tier "
                    f"{tier.name!r} must not be preempted in production; place the model on an onDemand, "
                    "reservation or capacityBlock pool, or give it a preemptible tier",
                )
