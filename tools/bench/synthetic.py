"""Synthetic environments of N identical regions, to see how plan time grows with size.

Each region is a copy of the first AWS region of `Pulumi.prod.yaml` (same cloud region,
zones and pools), renamed, with its own VPC range; every model placed on the template
region, and every tenant quota there, is repeated on each copy. Environment-level keys are
kept as they are, except that references to regions point at the copies and federation
(which needs two clusters) is switched off, with the models it federates, for a single region.
"""

from __future__ import annotations

import copy
from ipaddress import IPv4Network
from typing import TYPE_CHECKING, Any

import yaml

from components.config.stackfile import StackConfig, stack_config_from_mapping
from tools.plan.runner import PROJECT_DIR

if TYPE_CHECKING:
    from components.config.environment import EnvironmentSpec

PROJECT = "inference-platform"
TEMPLATE_ENV = "prod"


def _key(name: str) -> str:
    return f"{PROJECT}:{name}"


def template_config() -> dict[str, Any]:
    return yaml.safe_load((PROJECT_DIR / f"Pulumi.{TEMPLATE_ENV}.yaml").read_text())["config"]


def region_name(index: int) -> str:
    return f"r{index + 1}"


def _shifted(cidr: str, index: int) -> str:
    """The index-th block of the template's size after the template's own block."""
    network = IPv4Network(cidr)
    return str(IPv4Network((int(network.network_address) + index * network.num_addresses, network.prefixlen)))


def synthetic_config(regions: int, template: dict[str, Any] | None = None) -> dict[str, Any]:
    """A `config:` mapping (as in a stack file) with `regions` copies of the template's first AWS region."""
    if regions < 1:
        raise ValueError("at least one region")
    config = copy.deepcopy(template if template is not None else template_config())
    source = next(r for r in config[_key("regions")] if r["cloud"] == "aws")
    copies = []
    for i in range(regions):
        region = copy.deepcopy(source)
        region["name"] = region_name(i)
        region["network"]["cidr"] = _shifted(region["network"]["cidr"], i)
        copies.append(region)
    config[_key("regions")] = copies

    models = []
    for model in config.get(_key("models"), []):
        on_template = [p for p in model["placements"] if p["region"] == source["name"]]
        if on_template:
            model["placements"] = [{**p, "region": region_name(i)} for i in range(regions) for p in on_template]
            models.append(model)
    config[_key("models")] = models
    kept = {m["name"] for m in models}

    tenants = []
    for tenant in config.get(_key("tenants"), []):
        tenant["models"] = [m for m in tenant["models"] if m in kept]
        quotas = [q for q in tenant.get("gpuQuotas", []) if q["region"] == source["name"]]
        tenant["gpuQuotas"] = [{**q, "region": region_name(i)} for i in range(regions) for q in quotas]
        if tenant["models"]:
            tenants.append(tenant)
    config[_key("tenants")] = tenants
    for model in models:
        if model.get("tenant") and model["tenant"] not in {t["name"] for t in tenants}:
            del model["tenant"]

    store = config.get(_key("modelStore"))
    if store is not None and "sourceRegion" in store:
        store["sourceRegion"] = region_name(0)

    federation = config.get(_key("federation"))
    if federation is not None:
        config[_key("federation")] = (
            {**federation, "host": region_name(0), **_search_on_copies(federation, source["name"], region_name(0))}
            if regions > 1 and federation.get("enabled")
            else {"enabled": False}
        )
    if not config.get(_key("federation"), {}).get("enabled"):
        for model in models:
            model.pop("federated", None)  # federated models need the federation
    return config


def synthetic_stack(regions: int) -> StackConfig:
    """The stack config the CLI would pass for a synthetic environment of `regions` regions."""
    stack = f"scale-{regions}"
    return stack_config_from_mapping(PROJECT, stack, synthetic_config(regions), PROJECT_DIR / f"Pulumi.{stack}.yaml")


def validated(config: dict[str, Any]) -> EnvironmentSpec:
    """The config as the program reads it; raises ConfigError naming the key if the generator fell behind."""
    from components.checks.loader import load_environment  # not before the bench's clock starts

    prefix = f"{PROJECT}:"
    return load_environment({k.removeprefix(prefix): v for k, v in config.items() if k.startswith(prefix)})


def _search_on_copies(federation: dict[str, Any], template: str, host: str) -> dict[str, Any]:
    """Search members listed in the template: the template region's entry indexes the host copy (the others are
    not copied, and the copies' API servers are as private as the template's)."""
    search = federation.get("search")
    if not search or search.get("members") is None:
        return {}
    members = [host] if template in search["members"] else []
    return {"search": {**search, "members": members} if members else {"enabled": False}}
