"""Every documented option the tests build, run through the whole pack: none may fail it.

The configs are the ones the feature tests plan (imported where they are named, rebuilt the same
way where they are inline), so the plans are shared with those tests through the harness cache.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from policies.offline import evaluate_plan
from tests.harness import environment_config, ns, plan_config
from tests.test_federation import _push_config
from tests.test_gpu_pools import AWS_EXTRA, GCP_EXTRA
from tests.test_search import search_everywhere
from tests.test_serving_config import _multi_node_prod
from tests.test_stand_in import stand_in_dev, stand_in_prod


def _gpu_pools() -> dict:
    config = environment_config("prod")
    config[ns("regions")][0]["gpuPools"] += AWS_EXTRA
    config[ns("regions")][2]["gpuPools"] += GCP_EXTRA
    return config


def _gke_public_endpoint() -> dict:
    config = environment_config("prod")
    config[ns("regions")][2]["apiAccess"]["publicCidrs"] = ["198.51.100.0/24"]
    return config


def _knative() -> dict:
    config = environment_config("dev")
    config[ns("regions")][0]["serving"] = {"deploymentMode": "Knative"}
    return config


def _cache_off() -> dict:
    config = environment_config("dev")
    config[ns("regions")][0]["modelCache"] = {"enabled": False}
    return config


def _remote_write_with_credentials() -> dict:
    config = environment_config("dev")
    config[ns("regions")][0]["observability"]["remoteWrite"] = {
        "url": "https://metrics.example.com/api/v1/push",
        "username": "prometheus-dev",
        "password": {"secure": "v1:ciphertext"},  # what `pulumi config set --secret --path` writes
    }
    return config


def _no_gpu_pools() -> dict:
    config = environment_config("dev")
    config[ns("regions")][0]["gpuPools"] = []
    config[ns("regions")][0]["modelCache"] = {"enabled": False}
    config[ns("models")] = []
    config[ns("tenants")] = []
    return config


VARIANTS: dict[str, tuple[Callable[[], dict], str]] = {
    "federation push mode": (_push_config, "push"),
    "search indexing every member": (search_everywhere, "search"),
    "multi-node serving": (_multi_node_prod, "test"),
    "extra GPU pools": (_gpu_pools, "test"),
    "GKE public endpoint with authorized CIDRs": (_gke_public_endpoint, "test"),
    "Knative serving": (_knative, "test"),
    "model cache off": (_cache_off, "dev"),
    "remote write with basic auth": (_remote_write_with_credentials, "dev"),
    "cluster without GPU pools": (_no_gpu_pools, "test"),
    "stand-ins while models wake": (stand_in_dev, "dev"),
    "prod's 70B with the 8B standing in": (stand_in_prod, "prod"),
}


@pytest.mark.plan
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_documented_option_passes_the_pack(variant: str):
    build, stack = VARIANTS[variant]
    evaluation = evaluate_plan(plan_config(build(), stack=stack))
    assert sum(evaluation.subjects.values()) > 0
    assert not evaluation.mandatory, [f"{f.policy}: {f.message}" for f in evaluation.mandatory]
    assert not [f for f in evaluation.findings if f.kind == "error"], [f.message for f in evaluation.findings]
