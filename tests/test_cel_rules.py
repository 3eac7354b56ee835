"""Every CR's CRD validation rules (`x-kubernetes-validations`, CEL) evaluated with cel-python
(tools/cel_rules.py), as the API server evaluates them on create."""

from __future__ import annotations

import collections
import copy
import json

import pytest

from tests.test_conformance import NO_UPSTREAM_SCHEMA
from tools.cel_rules import evaluate
from tools.conformance import is_custom_resource


def _outcomes(plan, upstream):
    results = []
    for resource in plan.kubernetes_objects():
        obj = resource.inputs
        if not is_custom_resource(obj):
            continue
        schema = upstream.crd_served_schema(obj["apiVersion"], obj["kind"])
        if schema is None:
            assert (obj["apiVersion"], obj["kind"]) in NO_UPSTREAM_SCHEMA
            continue
        where = f"{plan.cluster_of(resource)}: {obj['kind']} {obj['metadata']['name']}"
        results.extend((where, outcome) for outcome in evaluate(obj, schema))
    return results


def test_every_cr_passes_its_crd_rules(checked_plan, upstream, record_property):
    results = _outcomes(checked_plan, upstream)
    verdicts = collections.Counter(outcome.verdict for _, outcome in results)
    not_evaluated = sorted(
        {
            f"{where.split(': ')[1].split()[0]} {o.name} ({o.reason})"
            for where, o in results
            if o.verdict == "not evaluated"
        }
    )
    record_property("cel_rules", json.dumps({"verdicts": verdicts, "not_evaluated": not_evaluated}))
    print(f"{checked_plan.environment}: CEL rules {dict(verdicts)}; not evaluated:", *not_evaluated, sep="\n  ")
    assert verdicts["pass"] > 0
    failures = [f"{where}: {o.path}: {o.message} [{o.rule}] {o.reason}" for where, o in results if o.verdict == "fail"]
    assert failures == []
    # The one transition rule our CRs meet: GatewayClass's immutable controllerName.
    assert {o.reason for _, o in results if o.verdict == "not evaluated"} <= {"transition rule: no oldSelf on create"}


def _gateway(dev_plan, upstream):
    (gateway,) = [r.inputs for r in dev_plan.kubernetes_objects() if r.inputs["kind"] == "Gateway"]
    return copy.deepcopy(gateway), upstream.crd_served_schema(gateway["apiVersion"], "Gateway")


def _verdicts(obj, schema, path_prefix=""):
    return {(o.path, o.verdict) for o in evaluate(obj, schema) if o.path.startswith(path_prefix)}


def test_a_real_rule_passes_and_fails(dev_plan, upstream):
    gateway, schema = _gateway(dev_plan, upstream)
    tls_rule = "self.all(l, l.protocol in ['HTTP', 'TCP', 'UDP'] ? !has(l.tls) : true)"
    (ok,) = [o for o in evaluate(gateway, schema) if o.rule == tls_rule]
    assert ok.verdict == "pass"
    gateway["spec"]["listeners"][0]["protocol"] = "HTTP"  # an HTTP listener with TLS settings
    (bad,) = [o for o in evaluate(gateway, schema) if o.rule == tls_rule]
    assert (bad.path, bad.verdict, bad.message) == (
        "spec.listeners",
        "fail",
        "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
    )


def test_duplicate_listener_names_fail(dev_plan, upstream):
    gateway, schema = _gateway(dev_plan, upstream)
    gateway["spec"]["listeners"].append({**gateway["spec"]["listeners"][0], "port": 8443})
    failed = [o.message for o in evaluate(gateway, schema) if o.verdict == "fail"]
    assert failed == ["Listener name must be unique within the Gateway"]


def _schema(rules, **node):
    return {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-validations": rules, **node}}}


@pytest.mark.parametrize(
    ("rule", "spec", "verdict"),
    [
        # Kubernetes strings library, implemented here.
        ("self.header.lowerAscii() != 'host'", {"header": "X-Id"}, "pass"),
        ("self.header.lowerAscii() != 'host'", {"header": "HoSt"}, "fail"),
        ("self.k.upperAscii() == 'ÄB'", {"k": "äb"}, "fail"),  # ASCII letters only: ä stays ä
        ("self.k.split('/')[0].size() < 4", {"k": "abc/def"}, "pass"),
        ("self.k.split('/')[0].size() < 4", {"k": "abcd/e"}, "fail"),
        ("self.k.split('/', 2) == ['a', 'b/c']", {"k": "a/b/c"}, "pass"),
        # Standard CEL: macros, duration, matches.
        ("duration(self.t) <= duration('1h')", {"t": "90m"}, "fail"),
        ("self.items.exists_one(i, i == 1)", {"items": [1, 2]}, "pass"),
        ("self.name.matches('^[a-z]+$')", {"name": "Web"}, "fail"),
        # Reading an absent field is an evaluation error: the API server rejects the object.
        ("self.missing == 1", {}, "fail"),
        # Transition rules and functions not implemented here: reported, never passed.
        ("self.k == oldSelf.k", {"k": "a"}, "not evaluated"),
        ("isURL(self.u)", {"u": "https://x"}, "not evaluated"),
        ("self.l.isSorted()", {"l": [2, 1]}, "not evaluated"),
    ],
)
def test_rule_mechanisms(rule, spec, verdict):
    ((outcome),) = evaluate({"metadata": {"name": "x"}, "spec": spec}, _schema([{"rule": rule}]))
    assert outcome.verdict == verdict, outcome


def test_a_not_evaluated_rule_names_the_missing_function():
    (outcome,) = evaluate({"spec": {"u": "x"}}, _schema([{"rule": "isURL(self.u)"}]))
    assert outcome.reason == "function isURL() not implemented"


def test_defaults_apply_before_rules_and_numbers_are_doubles():
    """The API server defaults the object from its schema, and a `number` written `1` is a double."""
    node = {"properties": {"mode": {"type": "string", "default": "Terminate"}, "weight": {"type": "number"}}}
    schema = _schema([{"rule": "self.mode == 'Terminate'"}, {"rule": "self.weight == 1.0"}], **node)
    assert [o.verdict for o in evaluate({"spec": {"weight": 1}}, schema)] == ["pass", "pass"]
    assert [o.verdict for o in evaluate({"spec": {"mode": "Passthrough", "weight": 2}}, schema)] == ["fail", "fail"]


def test_a_parent_rule_sees_its_childrens_defaults():
    node = {
        "properties": {"tls": {"type": "object", "properties": {"mode": {"type": "string", "default": "Terminate"}}}}
    }
    schema = _schema([{"rule": "self.tls.mode == 'Terminate'"}], **node)
    assert [o.verdict for o in evaluate({"spec": {"tls": {}}}, schema)] == ["pass"]


def test_rules_of_an_absent_field_are_not_evaluated():
    schema = _schema([], properties={"tls": {"type": "object", "x-kubernetes-validations": [{"rule": "false"}]}})
    assert evaluate({"spec": {}}, schema) == []
    assert [o.verdict for o in evaluate({"spec": {"tls": {}}}, schema)] == ["fail"]
