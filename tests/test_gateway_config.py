"""Gateway config errors: each one names the key path and the fix, before any resource exists."""

from __future__ import annotations

import pytest

from components.checks.loader import load_environment
from tests.harness import config_errors, raw_environment


def _openai(**overrides) -> dict:
    return {"name": "openai", "type": "openai", "models": ["gpt-4o-mini"], "apiKey": "sk-test", **overrides}


@pytest.mark.parametrize(
    ("key", "limit", "message"),
    [
        ("inputTokens", 0, "a budget of 0 tokens per minute refuses every request"),
        ("totalTokens", -5, "a budget of -5 tokens per minute refuses every request"),
        ("requests", 0, "a budget of 0 requests per minute refuses every request"),
    ],
)
def test_budget_of_zero_or_negative(key, limit, message):
    raw = raw_environment()
    raw["tenants"][0]["budget"][key] = {"limit": limit}
    assert config_errors(raw) == [
        f"tenants[0].budget.{key}.limit: {message}; set a positive limit, or remove the key for no limit"
    ]


def test_budget_window_is_minute_or_hour():
    raw = raw_environment()
    raw["tenants"][0]["budget"]["inputTokens"]["per"] = "day"
    assert config_errors(raw) == [
        "tenants[0].budget.inputTokens.per: 'day' is not allowed; use one of 'minute' or 'hour'"
    ]


def test_public_listener_without_auth():
    raw = raw_environment()
    raw["gateway"]["auth"] = "none"
    load_environment(raw)  # internal: fine
    raw["regions"][0]["gateway"]["exposure"] = "public"
    raw["gateway"]["dns"] = {"route53ZoneId": "Z0412345DEV"}  # a public name needs its zone (gateway_tls.py)
    assert config_errors(raw) == [
        "regions[0].gateway.exposure: a public listener with gateway.auth none lets anyone on the internet call "
        "the models; set exposure internal, or gateway.auth apiKey"
    ]


def test_route_to_a_model_no_region_serves():
    raw = raw_environment()
    raw["regions"][0]["gateway"]["enabled"] = False
    assert config_errors(raw) == [
        f"tenants[0].models[{i}]: model {model!r} is served only in use1, where no gateway runs, so no route "
        "reaches it; enable the gateway there (regions[].gateway.enabled) or serve the model in a region with one"
        for i, model in enumerate(raw["tenants"][0]["models"])
    ]


def test_route_to_an_external_model_offered_nowhere_with_a_gateway():
    raw = raw_environment("prod")
    raw["gateway"]["externalProviders"] = [_openai(regions=["euw1"])]
    raw["tenants"][0]["models"].append("gpt-4o-mini")
    assert config_errors(raw) == [
        "tenants[0].models[3]: model 'gpt-4o-mini' is served only in euw1, where no gateway runs, so no route "
        "reaches it; enable the gateway there (regions[].gateway.enabled) or serve the model in a region with one",
        "gateway.externalProviders[0].regions[0]: no region named 'euw1'; use one of usc1, use1, usw2",
    ]


def test_tenant_granted_an_unknown_model_may_name_external_models():
    raw = raw_environment()
    raw["tenants"][0]["models"] = ["gpt-4o-mini"]
    assert config_errors(raw) == [
        "tenants[0].models[0]: no model named 'gpt-4o-mini'; use one of llama-3-1-8b, qwen2-5-7b"
    ]
    raw["gateway"]["externalProviders"] = [_openai()]
    load_environment(raw)
    raw["tenants"][0]["models"] = ["gpt-5"]
    assert config_errors(raw) == [
        "tenants[0].models[0]: no model named 'gpt-5'; use one of gpt-4o-mini, llama-3-1-8b, qwen2-5-7b"
    ]


@pytest.mark.parametrize(
    ("provider", "path", "message"),
    [
        (
            _openai(apiKey=None),
            "apiKey",
            "required: openai providers authenticate with it; set it with `pulumi config set --secret` (a `secure:` "
            "value), never in plain text",
        ),
        (
            _openai(apiKey=""),
            "apiKey",
            "required: openai providers authenticate with it; set it with `pulumi config set --secret` (a `secure:` "
            "value), never in plain text",
        ),
        (
            {"name": "bedrock", "type": "bedrock", "models": ["claude"], "awsRegion": "us-east-1", "accessKeyId": "AK"},
            "secretAccessKey",
            "required: bedrock providers authenticate with it; set it with `pulumi config set --secret` (a `secure:` "
            "value), never in plain text",
        ),
    ],
)
def test_external_provider_without_credentials(provider, path, message):
    raw = raw_environment()
    raw["gateway"]["externalProviders"] = [provider]
    assert config_errors(raw) == [f"gateway.externalProviders[0].{path}: {message}"]


def test_external_provider_settings_of_the_other_type():
    raw = raw_environment()
    raw["gateway"]["externalProviders"] = [
        {"name": "bedrock", "type": "bedrock", "models": ["claude"], "apiKey": "k", "hostname": "api.example.com"}
    ]
    required = (
        "required: bedrock providers authenticate with it; set it with `pulumi config set --secret` (a `secure:` "
        "value), never in plain text"
    )
    assert config_errors(raw) == [
        "gateway.externalProviders[0].apiKey: not used by bedrock providers; remove it",
        f"gateway.externalProviders[0].accessKeyId: {required}",
        f"gateway.externalProviders[0].secretAccessKey: {required}",
        "gateway.externalProviders[0].awsRegion: required for bedrock: the AWS region of the Bedrock runtime",
        "gateway.externalProviders[0].hostname: bedrock's host follows from awsRegion; remove it",
    ]


def test_external_model_names_are_unambiguous():
    raw = raw_environment()
    raw["gateway"]["externalProviders"] = [
        _openai(models=["llama-3-1-8b", "gpt-4o"]),
        _openai(name="other", hostname="llm.example.com", models=["gpt-4o"]),
    ]
    assert config_errors(raw) == [
        "gateway.externalProviders[0].models[0]: 'llama-3-1-8b' is also a self-hosted model, so a request for it "
        "could go either way; rename one",
        "gateway.externalProviders[1].models[0]: 'gpt-4o' is also offered by provider 'openai'; offer each model "
        "name once",
    ]


def test_a_serving_region_needs_a_hostname():
    raw = raw_environment()
    del raw["gateway"]["domain"]
    assert config_errors(raw) == [
        "regions[0].gateway.hostname: region 'use1' serves models, so its gateway needs a hostname for its HTTPS "
        "listener and certificate; set it, or gateway.domain for `<region>.<domain>`"
    ]
    raw["regions"][0]["gateway"]["hostname"] = "llm.use1.example.com"
    load_environment(raw)
    raw["regions"][0]["gateway"]["hostname"] = "LLM_use1"
    assert config_errors(raw) == [
        "regions[0].gateway.hostname: 'LLM_use1' is not a DNS name; use lowercase labels separated by dots, "
        "e.g. llm.example.com"
    ]


def test_idle_timeout_longer_than_the_request_timeout():
    raw = raw_environment()
    raw["gateway"].update(requestTimeoutSeconds=60, idleTimeoutSeconds=120)
    assert config_errors(raw) == [
        "gateway.idleTimeoutSeconds: 120s is longer than requestTimeoutSeconds 60s, so it never fires; lower it "
        "or raise requestTimeoutSeconds"
    ]


def test_credentials_never_show_in_the_validated_spec():
    raw = raw_environment()
    raw["gateway"]["externalProviders"] = [_openai(apiKey="sk-very-secret-value")]
    env = load_environment(raw)
    assert "sk-very-secret-value" not in repr(env) and "sk-very-secret-value" not in str(env.model_dump())
