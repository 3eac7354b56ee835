"""Property: any single mutation of dev or prod (a value of another type, a key removed or misspelled, a list
emptied or repeated) either plans, or stops with exit 2 and one `error:` line per problem naming a key,
never a traceback and never a partial build directory."""

from __future__ import annotations

import copy
import shutil
import typing
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from components.checks.loader import load_environment
from components.config.base import ConfigError
from components.config.region import RegionSpec
from tests.harness import raw_environment
from tools.plan.__main__ import main as plan_main
from tools.plan.runner import PROJECT_DIR

ENVIRONMENTS = {env: raw_environment(env) for env in ("dev", "prod")}


def _cloud_models() -> dict[str, type[BaseModel]]:
    """The union a region entry is read by: each cloud's model, by the value of `cloud` that chooses it."""
    union, _discriminator = typing.get_args(RegionSpec)
    return {typing.get_args(m.model_fields["cloud"].annotation)[0]: m for m in typing.get_args(union)}


CLOUD_MODELS = _cloud_models()


def _keys(model: Any, *path: str) -> set[str]:
    """The camelCase keys of the model found under `path` (through lists and optional models)."""
    for name in path:
        field = next(f for n, f in model.model_fields.items() if (f.alias or n) == name)
        model = next(a for a in [field.annotation, *_args(field.annotation)] if isinstance(a, type))
    return {f.alias or n for n, f in model.model_fields.items()}


def _args(annotation: Any) -> list[Any]:
    return [x for a in typing.get_args(annotation) for x in (a, *_args(a))]


# Where a region entry's per-cloud keys sit: the entry, its network, its GPU pools, its existing cluster.
_PER_CLOUD = [(), ("network",), ("gpuPools",), ("cluster", "existing")]


def _foreign_keys(cloud: str) -> list[tuple[tuple[str, ...], str]]:
    """Keys the other clouds' region entries take at each of _PER_CLOUD and this cloud's do not."""
    own = CLOUD_MODELS[cloud]
    return sorted(
        (where, key)
        for other, model in CLOUD_MODELS.items()
        if other != cloud
        for where in _PER_CLOUD
        for key in _keys(model, *where) - _keys(own, *where)
    )


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path of a config value, containers included."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, sub in value.items():
            found += _paths(sub, (*prefix, key))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            found += _paths(sub, (*prefix, i))
    return found


def _parent(raw: Any, path: tuple) -> Any:
    for part in path[:-1]:
        raw = raw[part]
    return raw


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=12),
    st.sampled_from(["", "us-east-1", "l40s", "llama-3-1-8b", "10.0.0.0/8", "0.0.0.0/0", "1.34", "-"]),
    st.just([]),
    st.just({}),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["name", "x", "enabled"]), st.integers(), max_size=2),
)


@st.composite
def mutated_configs(draw) -> tuple[str, dict, str]:
    env = draw(st.sampled_from(sorted(ENVIRONMENTS)))
    raw = copy.deepcopy(ENVIRONMENTS[env])
    path = draw(st.sampled_from(_paths(raw)))
    parent, last = _parent(raw, path), path[-1]
    kind = draw(st.sampled_from(["value", "delete", "rename", "repeat", "cloud"]))
    if kind == "cloud" and path[0] == "regions" and isinstance(raw["regions"][path[1]], dict):
        # The entry read as another cloud's model: its own cloud's keys become unknown keys.
        entry = raw["regions"][path[1]]
        entry["cloud"] = draw(st.sampled_from(sorted(set(CLOUD_MODELS) - {entry.get("cloud")})))
    elif kind == "value":
        parent[last] = draw(_VALUES)
    elif kind == "delete":
        del parent[last]
    elif kind == "rename" and isinstance(last, str):
        parent[last + draw(st.sampled_from(["s", "x", "_"]))] = parent.pop(last)
    elif kind == "repeat" and isinstance(last, int):
        parent.append(copy.deepcopy(parent[last]))
    else:
        parent[last] = None
    return env, raw, f"{kind} {'.'.join(map(str, path))}"


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(mutated_configs())
def test_validation_either_accepts_or_names_a_key_for_every_problem(case):
    _env, raw, _what = case
    try:
        load_environment(raw)
    except ConfigError as exc:
        assert exc.issues
        for issue in exc.issues:
            assert issue.message.strip()
            assert "Traceback" not in issue.message
            assert "\n" not in str(issue)
            top = issue.path.split(".")[0].split("[")[0]
            assert top in raw or top in ENVIRONMENTS["prod"] or top in ENVIRONMENTS["dev"] or not top, issue


@pytest.mark.plan
@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=mutated_configs())
def test_plan_exits_0_1_or_2_and_leaves_nothing_half_written(case, tmp_path_factory, capsys):
    """The whole program, not only validation: an accepted mutation must plan without a traceback."""
    _env, raw, _what = case
    project = tmp_path_factory.mktemp("project")
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(PROJECT_DIR / name, project / name)
    config = {f"inference-platform:{k}": v for k, v in raw.items()}
    config["pulumi:disable-default-providers"] = ["*"]
    (project / "Pulumi.t.yaml").write_text(yaml.safe_dump({"config": config}))
    out = project / "out"
    code = plan_main(["t", "--project-dir", str(project), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if code == 2:
        lines = err.strip().splitlines()
        assert lines and all(line.startswith("error: Pulumi.t.yaml: ") for line in lines), lines
        assert not out.exists()
    else:
        assert code in (0, 1), err
        assert (out / "plan.json").is_file() and (out / "plan.md").is_file()


def test_the_strategy_reaches_deep_keys():
    """Guard against a strategy that only ever touches the top level."""
    deepest = max(len(p) for p in _paths(ENVIRONMENTS["prod"]))
    assert deepest >= 5
    assert len(_paths(ENVIRONMENTS["prod"])) > 200


@pytest.mark.parametrize("env", sorted(ENVIRONMENTS))
def test_unmutated_environments_validate(env):
    load_environment(copy.deepcopy(ENVIRONMENTS[env]))


def test_both_clouds_have_keys_of_their_own():
    """Guard for the test below: it walks every per-cloud place and finds keys there."""
    assert set(CLOUD_MODELS) == {"aws", "gcp"}
    assert {where for where, _ in _foreign_keys("aws")} == set(_PER_CLOUD)
    assert {where for where, _ in _foreign_keys("gcp")} == {("network",), ("gpuPools",), ("cluster", "existing")}


@pytest.mark.parametrize("index", range(len(ENVIRONMENTS["prod"]["regions"])))
def test_a_key_of_the_other_cloud_is_an_unknown_key(index):
    """Every key only the other cloud's region entries take, set on a region entry, its network, its first GPU pool
    or its existing cluster, is refused as an unknown key at that key's path, and nothing else is reported."""
    cloud = ENVIRONMENTS["prod"]["regions"][index]["cloud"]
    foreign = _foreign_keys(cloud)
    # counted by hand: project, nodeServiceAccount, gkePartitionSize, gpuDirect, acceleratorCidr, controlPlaneCidr,
    # podsCidr on an AWS entry; nodeRoleArn, subnets, efa, imagePull, nat on a GCP one
    assert len(foreign) == {"aws": 7, "gcp": 5}[cloud]
    for where, key in foreign:
        raw = copy.deepcopy(ENVIRONMENTS["prod"])
        parent = raw["regions"][index]
        at = f"regions[{index}]"
        for part in where:
            parent = parent.setdefault(part, {} if part != "gpuPools" else [])
            if part == "gpuPools":
                parent, at = parent[0], f"{at}.gpuPools[0]"
            else:
                at = f"{at}.{part}"
        if where == ("cluster", "existing"):
            parent.setdefault("name", "team-cluster")
        parent[key] = parent.get(key, "x")
        with pytest.raises(ConfigError) as caught:
            load_environment(raw)
        assert [(i.path, i.message.split(":")[0].split(";")[0]) for i in caught.value.issues] == [
            (f"{at}.{key}", "unknown key")
        ]


def test_each_fix_for_an_other_cloud_key_names_a_key_of_the_other_cloud():
    """The fixes the loader gives for the other cloud's keys (OTHER_CLOUD_KEYS) are keyed by that cloud's own keys."""
    from components.config import region as r

    pairs = [
        (r.AwsRegionSpec, r.GcpRegionSpec),
        (r.AwsNetworkSpec, r.GcpNetworkSpec),
        (r.AwsGpuPoolSpec, r.GcpGpuPoolSpec),
        (r.AwsExistingClusterSpec, r.GcpExistingClusterSpec),
    ]
    fixes = 0
    for aws, gcp in pairs:
        for model, other in ((aws, gcp), (gcp, aws)):
            keys = {f.alias or n for n, f in other.model_fields.items()}
            own = {f.alias or n for n, f in model.model_fields.items()}
            for key in getattr(model, "OTHER_CLOUD_KEYS", {}):
                assert key in keys - own, (model.__name__, key)
                fixes += 1
    assert fixes == 12  # counted by hand: the 12 other-cloud keys of test_a_key_of_the_other_cloud_is_an_unknown_key
