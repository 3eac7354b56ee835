"""What Karmada is told, function by function: the interpreter's Lua (run on Lua 5.1, as gopher-lua) and
the override/propagation manifests."""

from __future__ import annotations

import copy

import pytest
from lupa.lua51 import LuaRuntime

from components.checks.loader import load_environment
from components.config.karmada import FailoverSpec
from components.federation import interpreter
from components.federation.manifests import (
    federated_template,
    image_paths,
    json_patch,
    override_policy,
    propagation_policy,
)
from components.federation.placement import MemberShare, member_labels, replica_range
from tests.harness import raw_environment

# --- the interpreter's Lua --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lua():
    runtime = LuaRuntime(unpack_returned_tuples=True)
    for script in (
        interpreter.GET_REPLICAS,
        interpreter.INTERPRET_HEALTH,
        interpreter.REFLECT_STATUS,
        interpreter.AGGREGATE_STATUS,
        interpreter.GET_DEPENDENCIES,
    ):
        runtime.execute(script)
    return runtime


def _py(value):
    """A Lua table back to Python: dicts, and lists for 1..n keys."""
    if hasattr(value, "items"):
        items = dict(value.items())
        if items and all(isinstance(k, int) for k in items) and sorted(items) == list(range(1, len(items) + 1)):
            return [_py(items[i]) for i in range(1, len(items) + 1)]
        return {k: _py(v) for k, v in items.items()}
    return value


def _isvc(**predictor) -> dict:
    return {"metadata": {"name": "m", "namespace": "inference"}, "spec": {"predictor": predictor}}


def test_replicas_are_the_ceiling_with_the_pods_requirements(lua):
    obj = _isvc(
        minReplicas=3,
        maxReplicas=4,
        nodeSelector={"pool": "h100"},
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}],
        model={"resources": {"limits": {"nvidia.com/gpu": "4"}, "requests": {"cpu": "8"}}},
    )
    replicas, requirement = lua.globals().GetReplicas(lua.table_from(obj, recursive=True))
    assert replicas == 4
    assert _py(requirement) == {
        "nodeClaim": {
            "nodeSelector": {"pool": "h100"},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        },
        "resourceRequest": {"nvidia.com/gpu": "4", "cpu": "8"},
    }


def test_replicas_default_to_one_and_no_empty_requirement_tables(lua):
    replicas, requirement = lua.globals().GetReplicas(lua.table_from(_isvc(model={}), recursive=True))
    assert replicas == 1 and _py(requirement) == {}


@pytest.mark.parametrize(
    ("status", "healthy"),
    [
        ({"conditions": [{"type": "PredictorReady", "status": "True"}, {"type": "Ready", "status": "True"}]}, True),
        ({"conditions": [{"type": "Ready", "status": "False"}]}, False),
        ({"conditions": [{"type": "PredictorReady", "status": "True"}]}, False),
        (None, False),
    ],
)
def test_health_is_the_ready_condition(lua, status, healthy):
    obj = {"metadata": {"name": "m"}, **({"status": status} if status else {})}
    assert lua.globals().InterpretHealth(lua.table_from(obj, recursive=True)) is healthy


def test_status_reflects_conditions_and_url(lua):
    observed = {"status": {"url": "http://m", "conditions": [{"type": "Ready", "status": "True"}], "other": 1}}
    reflected = _py(lua.globals().ReflectStatus(lua.table_from(observed, recursive=True)))
    assert reflected == {"url": "http://m", "conditions": [{"type": "Ready", "status": "True"}]}


def test_aggregate_status_names_members_not_ready(lua):
    items = [
        {"clusterName": "prod-use1", "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        {"clusterName": "prod-usc1", "status": {"conditions": [{"type": "Ready", "status": "False"}]}},
    ]
    aggregated = _py(
        lua.globals().AggregateStatus(lua.table_from(_isvc(), recursive=True), lua.table_from(items, recursive=True))
    )
    assert aggregated["status"]["conditions"] == [
        {
            "type": "Ready",
            "status": "False",
            "reason": "MembersNotReady",
            "message": "1 of 2 member(s) ready; not ready: prod-usc1",
        }
    ]


def test_the_models_pod_disruption_budget_is_its_dependency(lua):
    dependencies = _py(lua.globals().GetDependencies(lua.table_from(_isvc(), recursive=True)))
    assert dependencies == [
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "namespace": "inference", "name": "m"}
    ]


# --- manifests ---------------------------------------------------------------------------------------------


def _env():
    return load_environment(raw_environment("prod"))


def _share(region: str) -> MemberShare:
    env = _env()
    spec = env.region(region)
    return MemberShare(spec, spec.gpu_pools[0], env.models[0].placements[0], f"prod-{region}")


def _render(pool: str, uri: str, image: str | None = None, tp: str = "4") -> dict:
    model = {"storageUri": uri, "args": ["--tensor-parallel-size", tp]}
    if image:
        model["image"] = image
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "m", "namespace": "inference", "annotations": {"example.io/gpu": pool}},
        "spec": {"predictor": {"minReplicas": 1, "maxReplicas": 2, "nodeSelector": {"pool": pool}, "model": model}},
    }


def test_json_patch_turns_base_into_target():
    base = {"a": {"b": 1, "c/d": 2, "gone": 0}, "list": [1, 2], "keep": True}
    target = {"a": {"b": 5, "c/d": 2, "new": {"x": 1}}, "list": [1, 3], "keep": True}
    assert json_patch(base, target) == [
        {"operator": "remove", "path": "/a/gone"},
        {"operator": "replace", "path": "/a/b", "value": 5},
        {"operator": "add", "path": "/a/new", "value": {"x": 1}},
        {"operator": "replace", "path": "/list", "value": [1, 3]},
    ]
    assert json_patch(base, target, skip=frozenset({"/a/b", "/list"})) == [
        {"operator": "remove", "path": "/a/gone"},
        {"operator": "add", "path": "/a/new", "value": {"x": 1}},
    ]
    assert json_patch({"k": {"a/b~c": 1}}, {"k": {"a/b~c": 2}}) == [
        {"operator": "replace", "path": "/k/a~1b~0c", "value": 2}
    ]


def test_override_states_the_region_and_patches_what_else_differs():
    template = federated_template(_render("h100", "pvc://models/models/m"), 3, 4)
    member = _render("h200", "gs://bucket/models/m/", tp="2")
    policy = override_policy(template, member, _share("usc1"))
    assert policy["metadata"] == {"name": "m-usc1", "namespace": "inference"}
    (rule,) = policy["spec"]["overrideRules"]
    assert rule["targetCluster"] == {"clusterNames": ["prod-usc1"]}
    assert rule["overriders"]["plaintext"] == [
        {"operator": "replace", "path": "/spec/predictor/model/storageUri", "value": "gs://bucket/models/m/"},
        {"operator": "replace", "path": "/spec/predictor/nodeSelector", "value": {"pool": "h200"}},
        {"operator": "replace", "path": "/spec/predictor/minReplicas", "value": 1},
        {"operator": "replace", "path": "/spec/predictor/maxReplicas", "value": 2},
        {"operator": "replace", "path": "/metadata/annotations/example.io~1gpu", "value": "h200"},
        {"operator": "replace", "path": "/spec/predictor/model/args", "value": ["--tensor-parallel-size", "2"]},
    ]


def test_registry_mirror_rewrites_the_members_images():
    template = federated_template(_render("h100", "pvc://m", image="vllm/vllm-openai:v0.11.0"), 3, 4)
    member = _render("h100", "pvc://m", image="vllm/vllm-openai:v0.11.0")
    policy = override_policy(template, member, _share("usw2"), registry_mirror="mirror.example/hub")
    overriders = policy["spec"]["overrideRules"][0]["overriders"]
    assert overriders["imageOverrider"] == [
        {
            "component": "Registry",
            "operator": "replace",
            "value": "mirror.example/hub",
            "predicate": {"path": "/spec/predictor/model/image"},
        }
    ]
    assert list(image_paths(member)) == ["/spec/predictor/model/image"]
    different = _render("h100", "pvc://m", image="vllm/vllm-openai:v0.11.0-h200")
    with pytest.raises(ValueError, match="image at /spec/predictor/model/image differs from the template's"):
        override_policy(template, different, _share("usw2"), registry_mirror="mirror.example/hub")


def test_no_override_policy_when_nothing_binds_the_member():
    """Without a storage URI, pool selector or replica range, and the same rendering: nothing to override."""
    render = {"apiVersion": "v", "kind": "K", "metadata": {"name": "m", "namespace": "n"}, "spec": {"predictor": {}}}
    assert override_policy(render, copy.deepcopy(render), _share("use1")) is None


def test_propagation_policy_lists_only_existing_overrides():
    env = _env()
    share = _share("use1")
    policy = propagation_policy("m", "inference", [share], env.federation.failover, overrides=[])
    assert policy["spec"]["dependentOverrides"] == []
    custom = FailoverSpec(cluster_toleration_seconds=60)
    tolerations = propagation_policy("m", "inference", [share], custom, [])["spec"]["placement"]["clusterTolerations"]
    assert {t["tolerationSeconds"] for t in tolerations} == {60}


def test_replica_range_and_member_labels():
    env = _env()
    assert replica_range(env.models[0]) == (3, 10)
    assert member_labels("example.io", env.region("use1")) == {
        "example.io/cloud": "aws",
        "example.io/region": "us-east-1",
        "example.io/gpu-product-H100-80GB": "true",
        "example.io/gpu-product-L40S": "true",
    }
