"""The gateways' CA keeps its root key in one place: the anchor stack's state (review of prod's first rollout, M3).

Each region's cert-manager signs with an intermediate of its own (path length 0), read from the anchor stack by that
region's stack only; no stack exports the root's key and no cluster holds it. Expected values by hand from
the fixture Pulumi.prod.yaml: gateways in use1, usw2 and usc1, anchor use1.
"""

from __future__ import annotations

import copy
import dataclasses

import pytest

from tests.harness import plan_for

SIGNED = "tls:index/locallySignedCert:LocallySignedCert"


@pytest.fixture(scope="module")
def prod():
    """The fixture prod's environment and its stacks' plans (what the rollout's offline_plans returns), from the
    session's one plan of prod."""
    plan = plan_for("prod")
    return plan.spec, plan.stacks


@pytest.mark.plan
def test_the_root_key_signs_only_intermediates_in_the_anchor_stack(prod):
    _, plans = prod
    use1 = plans["prod.use1"]
    root_key = use1.named("gateway-ca-key", "tls:index/privateKey:PrivateKey")
    signed_by_root = [
        r for r in use1.of_type(SIGNED) if root_key.urn in r.property_dependencies.get("caPrivateKeyPem", [])
    ]
    assert sorted(r.name for r in signed_by_root) == [
        "gateway-ca-usc1-cert",
        "gateway-ca-use1-cert",
        "gateway-ca-usw2-cert",
    ]
    for cert in signed_by_root:
        assert cert.inputs["isCaCertificate"] is True and cert.inputs["maxPathLength"] == 0, cert.name
        assert set(cert.inputs["allowedUses"]) == {"cert_signing", "crl_signing", "digital_signature"}, cert.name
    # Nothing else reads the root's key: no Secret, no output.
    readers = [r.name for r in use1.resources if any(root_key.urn in us for us in r.property_dependencies.values())]
    assert sorted(readers) == sorted(["gateway-ca-cert", *(c.name for c in signed_by_root)])
    assert "gatewayCaKey" not in use1.outputs
    assert use1.outputs["gatewayIssuers"] == "[secret]"
    assert sorted(use1.evaluation.referenced.values["gatewayIssuers"]) == ["usc1", "usw2"]  # use1's own stays put


@pytest.mark.plan
def test_each_cluster_signs_with_its_own_intermediate(prod):
    _, plans = prod
    use1 = plans["prod.use1"]
    secret = use1.named("prod-use1-inference-gateway-ca", "kubernetes:core/v1:Secret")
    sources = set(secret.property_dependencies["stringData"])
    assert use1.named("gateway-ca-use1-key").urn in sources and use1.named("gateway-ca-key").urn not in sources
    for stack in ("prod.usw2", "prod.usc1"):
        plan = plans[stack]
        assert plan.evaluation.reads_stacks == ("prod.use1",)
        assert not [r for r in plan.resources if r.type.startswith("tls:")], stack  # no CA material made there


@pytest.mark.plan
def test_the_pack_admits_an_intermediate_and_refuses_a_signing_leaf(prod):
    from policies.offline import evaluate_plan
    from tools.plan.model import Plan

    env, plans = prod
    use1 = plans["prod.use1"]

    def findings(edit) -> list[str]:
        resources = copy.deepcopy(use1.resources)
        edit({r.name: r for r in resources})
        plan = Plan("prod.use1", use1.project, dataclasses.replace(use1.evaluation, resources=resources), spec=env)
        return [f.message for f in evaluate_plan(plan).findings if f.policy == "tls-material-bounded"]

    leaf = "certificate gateway-ca-usw2-cert is a leaf that may sign certificates (isCaCertificate / cert_signing)."
    assert findings(lambda rs: None) == []
    for edit in (
        lambda rs: rs["gateway-ca-usw2-cert"].inputs["allowedUses"].append("server_auth"),  # a CA serving TLS
        lambda rs: rs["gateway-ca-usw2-cert"].inputs.pop("maxPathLength"),  # may sign CAs below it
        lambda rs: rs["gateway-ca-usw2-cert"].inputs.update(maxPathLength=1),
    ):
        (found,) = findings(edit)
        assert found.startswith(leaf), found
