"""Gateway budgets, listeners, routes and providers that make sense, and DNS each gateway's name can be published in."""

from __future__ import annotations

from collections.abc import Iterator

from components.config.base import Issue, config_key, duplicates, join_path, unknown_name
from components.config.environment import EnvironmentSpec
from components.config.gateway import ExternalProviderSpec
from components.domain.gateways import has_gateway


def check_gateway(env: EnvironmentSpec) -> Iterator[Issue]:
    """Budgets, listeners and routes that make sense, providers that can authenticate."""
    if env.gateway.endpoint_picker.failure_mode == "FailOpen":
        yield Issue(
            "gateway.endpointPicker.failureMode",
            "FailOpen would be ignored: the AI Gateway v1.1.0 builds each InferencePool's picker filter "
            "fail-closed (FailureModeAllow false); use FailClose",
        )
    identified = env.gateway.enabled and env.gateway.auth == "apiKey"
    for i, tenant in enumerate(env.tenants):
        if tenant.priority != "batch" and not identified:
            yield Issue(
                join_path("tenants", i, "priority"),
                f"{tenant.priority} needs the gateway to know the tenant, from its API key; set gateway.enabled and "
                "gateway.auth apiKey, or remove priority",
            )
        if tenant.budget is None:
            continue
        for key, rate in (
            ("inputTokens", tenant.budget.input_tokens),
            ("outputTokens", tenant.budget.output_tokens),
            ("totalTokens", tenant.budget.total_tokens),
            ("requests", tenant.budget.requests),
        ):
            if rate is not None and rate.limit <= 0:
                unit = "requests" if key == "requests" else "tokens"
                yield Issue(
                    join_path("tenants", i, "budget", key, "limit"),
                    f"a budget of {rate.limit} {unit} per {rate.per} refuses every request; set a positive "
                    "limit, or remove the key for no limit",
                )
    if not env.gateway.enabled:
        return
    gateway = env.gateway
    if gateway.idle_timeout_seconds > gateway.request_timeout_seconds:
        yield Issue(
            "gateway.idleTimeoutSeconds",
            f"{gateway.idle_timeout_seconds}s is longer than requestTimeoutSeconds {gateway.request_timeout_seconds}s, "
            "so it never fires; lower it or raise requestTimeoutSeconds",
        )
    for i, region in enumerate(env.regions):
        path = ("regions", i, "gateway")
        if not has_gateway(env, region):
            continue
        if region.gateway.hostname is None and gateway.domain is None:
            yield Issue(
                join_path(*path, "hostname"),
                f"region {region.name!r} serves models, so its gateway needs a hostname for its HTTPS listener "
                "and certificate; set it, or gateway.domain for `<region>.<domain>`",
            )
        if region.gateway.exposure == "public" and gateway.auth == "none":
            yield Issue(
                join_path(*path, "exposure"),
                "a public listener with gateway.auth none lets anyone on the internet call the models; set "
                "exposure internal, or gateway.auth apiKey",
            )
    yield from _check_routes(env)
    yield from _check_providers(env)


def _check_routes(env: EnvironmentSpec) -> Iterator[Issue]:
    """Every model a tenant is granted must be reachable through some region's gateway."""
    gateways = {r.name for r in env.regions if has_gateway(env, r)}
    served = {m.name: {p.region for p in m.placements} for m in env.models}
    external = env.gateway.external_models()
    for i, tenant in enumerate(env.tenants):
        for j, model in enumerate(tenant.models):
            if model in served:
                regions = served[model]
            elif model in external:
                regions = {r for r in gateways if external[model].offered_in(r)} or set(external[model].regions or [])
            else:
                continue  # an unknown model is reported by the workload checks
            if not regions & gateways:
                where = f"only in {', '.join(sorted(regions))}" if regions else "in no region"
                yield Issue(
                    join_path("tenants", i, "models", j),
                    f"model {model!r} is served {where}, where no gateway runs, so no route reaches it; enable "
                    "the gateway there (regions[].gateway.enabled) or serve the model in a region with one",
                )


def _check_providers(env: EnvironmentSpec) -> Iterator[Issue]:
    providers = env.gateway.external_providers
    base = ("gateway", "externalProviders")
    yield from duplicates([p.name for p in providers], base, "provider name")
    self_hosted = {m.name for m in env.models}
    seen: dict[str, str] = {}
    regions = {r.name for r in env.regions}
    for i, provider in enumerate(providers):
        path = (*base, i)
        for j, model in enumerate(provider.models):
            if model in self_hosted:
                yield Issue(
                    join_path(*path, "models", j),
                    f"{model!r} is also a self-hosted model, so a request for it could go either way; rename one",
                )
            elif model in seen:
                yield Issue(
                    join_path(*path, "models", j),
                    f"{model!r} is also offered by provider {seen[model]!r}; offer each model name once",
                )
            seen.setdefault(model, provider.name)
        for j, region in enumerate(provider.regions or []):
            if region not in regions:
                yield unknown_name(join_path(*path, "regions", j), "region", region, sorted(regions))
        needed = ("api_key",) if provider.type == "openai" else ("access_key_id", "secret_access_key")
        for key in ("api_key", "access_key_id", "secret_access_key"):
            alias = config_key(ExternalProviderSpec, key)
            value = getattr(provider, key)
            if key in needed and (value is None or not value.get_secret_value()):
                yield Issue(
                    join_path(*path, alias),
                    f"required: {provider.type} providers authenticate with it; set it with `pulumi config set "
                    "--secret` (a `secure:` value), never in plain text",
                )
            elif key not in needed and value is not None:
                yield Issue(join_path(*path, alias), f"not used by {provider.type} providers; remove it")
        if provider.type == "bedrock" and provider.aws_region is None:
            yield Issue(join_path(*path, "awsRegion"), "required for bedrock: the AWS region of the Bedrock runtime")
        if provider.type == "bedrock" and provider.hostname is not None:
            yield Issue(join_path(*path, "hostname"), "bedrock's host follows from awsRegion; remove it")


def check_gateway_names(env: EnvironmentSpec) -> Iterator[Issue]:
    """A public gateway whose name ExternalDNS publishes needs the public zone that serves the domain; an internal
    one a network to bind its private zone to, which the stack knows unless the cluster is an existing GKE one."""

    dns = env.gateway.dns
    if dns.publisher != "externalDns":
        return
    missing: dict[str, str] = {}  # config key -> the first public region that needs it
    for i, region in enumerate(env.regions):
        if not has_gateway(env, region):
            continue
        if region.gateway.exposure == "internal":
            if region.cluster.existing is not None and not region.cluster.existing.network_known:
                yield Issue(
                    join_path("regions", i, "gateway", "exposure"),
                    "ExternalDNS publishes an internal gateway's name into a private Cloud DNS zone bound to the "
                    "cluster's VPC network, which the stack does not know for an existing GKE cluster; set "
                    "gateway.dns.publisher: external and publish the name yourself, or exposure: public",
                )
            continue
        key, value = region.public_dns_zone(dns)
        if value is None:
            missing.setdefault(key, region.name)
    for key, region_name in missing.items():
        kind = "Route 53 hosted" if key == "route53ZoneId" else "Cloud DNS managed"
        yield Issue(
            join_path("gateway", "dns", key),
            f"{region_name}'s gateway is public: name the {kind} zone that serves its hostname (it must exist; `make "
            "preflight` checks a Route 53 one), or set gateway.dns.publisher: external and publish it yourself",
        )
