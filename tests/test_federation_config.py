"""Federation config errors: one line naming the key path and the fix."""

from __future__ import annotations

from components.checks.loader import load_environment
from tests.harness import config_errors as _errors
from tests.harness import raw_environment


def _prod() -> dict:
    return raw_environment("prod")  # llama-3-1-70b federated on use1/h100, usw2/h100, usc1/h200


def test_prod_federates_the_70b_in_pull_mode():
    env = load_environment(_prod())
    assert env.models[0].federated and env.federation.member_mode == "pull"


def test_federation_needs_two_clusters():
    raw = _prod()
    raw["regions"] = raw["regions"][:1]
    raw["models"] = [m for m in raw["models"] if all(p["region"] == "use1" for p in m["placements"])]
    raw["tenants"] = []
    for model in raw["models"]:
        model.pop("tenant", None)  # its tenant went with the tenants
    assert _errors(raw) == [
        "federation.enabled: federation needs at least two clusters; add a region or disable it",
        # and, in the same run, the other mistake of this environment: no tenant left to call its model
        "tenants: the gateway serves llama-3-1-70b-rag but no tenant has a key, so it refuses every request; add a "
        "tenant with the models it may call",
        # and the rollout's SLO gate (rollout.slo) calls as a tenant that went with the others
        "rollout.slo.tenant: no tenant named 'rollout-probe'; use one of (no tenants defined)",
    ]


def test_host_must_be_a_cluster_of_the_environment():
    raw = _prod()
    raw["federation"]["host"] = "euw1"
    assert _errors(raw) == ["federation.host: no region named 'euw1'; use one of use1, usw2, usc1"]


def test_federated_model_whose_gpu_exists_in_no_member():
    raw = _prod()
    raw["federation"]["members"] = ["use1", "usw2"]  # usc1, the only H200 cluster, stays out
    assert _errors(raw) == [
        "models[0].placements[2].region: 'usc1' is not a federation member, so it cannot serve the federated model "
        "'llama-3-1-70b' on H200-141GB; H200-141GB exists in no member (use1, usw2). Add usc1 to "
        "federation.members or place the model on a member's pool"
    ]


def test_federated_model_on_a_non_member_names_the_members_offering_its_gpu():
    raw = _prod()
    raw["federation"]["members"] = ["use1", "usc1"]
    assert _errors(raw) == [
        "models[0].placements[1].region: 'usw2' is not a federation member, so it cannot serve the federated model "
        "'llama-3-1-70b' on H100-80GB; members offering H100-80GB: use1. Add usw2 to federation.members or place "
        "the model on a member's pool"
    ]


def test_federated_model_needs_the_federation():
    raw = _prod()
    raw["federation"] = {"enabled": False}
    assert _errors(raw) == [
        "models[0].federated: federation is not enabled; set federation.enabled: true or remove federated"
    ]


def test_federated_model_runs_one_pool_per_member():
    raw = _prod()
    raw["models"][0]["placements"].append({"region": "use1", "pool": "l40s", "minReplicas": 1, "maxReplicas": 2})
    assert _errors(raw) == [
        "models[0].placements[3]: a federated model runs one InferenceService per member cluster, and "
        "placements[0] already puts 'llama-3-1-70b' in use1; keep one pool per region"
    ]


def test_members_and_registry_mirrors_name_regions():
    raw = _prod()
    raw["federation"]["members"] = ["use1", "eu1"]
    raw["federation"]["registryMirrors"] = {"apac": "mirror.example.com"}
    assert _errors(raw) == [
        "federation.members[1]: no region named 'eu1'; use one of use1, usw2, usc1",
        "federation.registryMirrors.apac: no region named 'apac'; use one of use1, usw2, usc1",
    ]


def test_members_list_may_not_be_empty():
    raw = _prod()
    raw["federation"]["members"] = []
    assert _errors(raw)[0].startswith("federation.members: List should have at least 1 item")


def test_push_mode_needs_reachable_member_api_servers():
    raw = _prod()
    raw["federation"]["memberMode"] = "push"
    raw["regions"][1]["apiAccess"]["publicCidrs"] = ["198.51.100.0/24"]
    assert _errors(raw) == [
        "regions[2].apiAccess.publicCidrs: push mode needs the Karmada controllers on use1 to reach this cluster's "
        "API server, which is private; open its public endpoint by listing here the CIDRs it admits (the program adds "
        "use1's NAT egress itself to a cluster it creates), or use federation.memberMode: pull"
    ]
