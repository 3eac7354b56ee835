"""plan.md's gateway section: per region the entry point, its routes and models; per tenant the budgets."""

from __future__ import annotations

from components.config.gateway import RateSpec
from components.domain.gateways import gateway_hostname, has_gateway
from components.k8s.names import cluster_name
from tools.plan.model import Plan

_ROUTE_KIND = "AIGatewayRoute"


def _rate(rate: RateSpec | None) -> str:
    return f"{rate.limit:,} / {rate.per}" if rate is not None else "-"


def _backend(rule: dict) -> str:
    ref = rule["backendRefs"][0]
    stand_ins = [b["modelNameOverride"] for b in rule["backendRefs"] if b.get("modelNameOverride")]
    if stand_ins:  # components/serving/stand_in.py
        return f"its Service; with no Ready replica, stand-in `{stand_ins[0]}`"
    return f"InferencePool `{ref['name']}`" if ref.get("kind") == "InferencePool" else f"provider `{ref['name']}`"


def gateway_section(plan: Plan) -> str:
    env = plan.spec
    regions = [r for r in env.regions if has_gateway(env, r)]
    if not regions:
        return "## Gateway\n\nNo gateway: no region serves models (or `gateway.enabled` is off).\n"
    rows = [
        "## Gateway\n",
        f"OpenAI-compatible entry per region (`https://<hostname>/v1`), auth `{env.gateway.auth}`, "
        f"endpoint pickers fail {'closed' if env.gateway.endpoint_picker.failure_mode == 'FailClose' else 'open'}, "
        f"requests up to {env.gateway.request_timeout_seconds}s (idle {env.gateway.idle_timeout_seconds}s), "
        f"{env.gateway.retries} retries on connect failure / 503.\n",
        "| region | hostname | exposure | route | model | backend | tenants |",
        "|---|---|---|---|---|---|---|",
    ]
    for region in regions:
        cluster = cluster_name(plan.environment, region)
        routes = sorted(
            (
                r.inputs
                for r in plan.kubernetes_objects()
                if r.inputs["kind"] == _ROUTE_KIND and plan.cluster_of(r) == cluster
            ),
            key=lambda route: route["metadata"]["name"],
        )
        for route in routes:
            for rule in route["spec"]["rules"]:
                headers = [h for match in rule["matches"] for h in match["headers"]]
                model = headers[0]["value"]
                tenants = sorted({h["value"] for h in headers if h["name"] != headers[0]["name"]}) or ["any"]
                rows.append(
                    f"| {region.name} | `{gateway_hostname(env, region)}` | {region.gateway.exposure} | "
                    f"{route['metadata']['name']} | `{model}` | {_backend(rule)} | {', '.join(tenants)} |"
                )
    rows += [
        "",
        "| tenant | models | input tokens | output tokens | total tokens | requests |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for tenant in env.tenants:
        budget = tenant.budget
        cells = (
            [
                _rate(budget.input_tokens),
                _rate(budget.output_tokens),
                _rate(budget.total_tokens),
                _rate(budget.requests),
            ]
            if budget
            else ["unlimited"] * 4
        )
        rows.append(f"| {tenant.name} | {', '.join(tenant.models)} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"
