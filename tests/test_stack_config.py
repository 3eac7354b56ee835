"""A region stack's own config (its secrets) set into its environment's by path, as Pulumi sets `--path` keys."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from components.config.base import ConfigError
from components.config.environment import EnvironmentSpec
from components.config.stackfile import SECRET_MARKER, merge_by_path, overlay_config
from tests.harness import ENVIRONMENTS_DIR, PROJECT, environment_config, ns, plan_config
from tools.plan.engine import evaluate
from tools.plan.runner import PROJECT_DIR, build_plan
from tools.plan.stackfile import load_stack_config

# README's example: `pulumi config set --secret --path -s prod.use1 'gateway.externalProviders[0].apiKey' <key>`
# leaves this in the stack's own settings file (the value is the secrets provider's ciphertext).
STACK_GATEWAY = {"externalProviders": [{"apiKey": {"secure": "v1:AAAA"}}]}
PROVIDER = {"name": "openai", "type": "openai", "models": ["gpt-4o-mini"]}


def test_a_path_key_is_set_into_the_environments_object():
    environment = {"domain": "llm.acme.example", "requestTimeoutSeconds": 900, "externalProviders": [PROVIDER]}
    merged = merge_by_path(environment, {"externalProviders": [{"apiKey": "k"}]})
    assert merged == {
        "domain": "llm.acme.example",
        "requestTimeoutSeconds": 900,
        "externalProviders": [{"name": "openai", "type": "openai", "models": ["gpt-4o-mini"], "apiKey": "k"}],
    }
    # A scalar the stack sets wins; a list index the environment lacks is added.
    assert merge_by_path({"a": 1, "l": [1]}, {"a": 2, "l": [1, 5]}) == {"a": 2, "l": [1, 5]}
    assert overlay_config({"p:x": '{"a": 1}', "p:y": "1"}, {"p:x": '{"b": 2}', "p:y": "2"}) == {
        "p:x": json.dumps({"a": 1, "b": 2}),
        "p:y": "2",
    }


def _project_with_provider(tmp_path):
    """prod's environment file with an external provider whose key the region stack holds."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(PROJECT_DIR / name, tmp_path / name)
    document = yaml.safe_load((ENVIRONMENTS_DIR / "Pulumi.prod.yaml").read_text())
    document["config"][f"{PROJECT}:gateway"]["externalProviders"] = [PROVIDER]
    (tmp_path / "Pulumi.acme.yaml").write_text(yaml.safe_dump(document))
    own = {"config": {f"{PROJECT}:gateway": STACK_GATEWAY}}
    for stack in ("use1", "usw2", "usc1", "global"):  # every stack validates the environment it is part of
        (tmp_path / f"Pulumi.acme.{stack}.yaml").write_text(yaml.safe_dump(own))
    return tmp_path


def test_the_program_of_a_region_stack_keeps_its_environments_gateway(tmp_path, monkeypatch):
    """`pulumi up -s acme.use1`: the engine passes the stack's own keys only, the program reads the file."""
    from stacks.config import read_environment

    monkeypatch.chdir(_project_with_provider(tmp_path))
    seen = []
    evaluate(
        lambda: seen.append(read_environment()),
        project=PROJECT,
        stack="acme.use1",
        config={f"{PROJECT}:gateway": json.dumps({"externalProviders": [{"apiKey": "sk-live"}]})},
        secret_keys=[f"{PROJECT}:gateway"],
    )
    (env,) = seen
    assert str(env.gateway.domain) == "llm.acme.example"
    assert env.gateway.request_timeout_seconds == 900
    assert env.gateway.endpoint_picker.replicas == 2
    (provider,) = env.gateway.external_providers
    assert (provider.name, provider.type, provider.models) == ("openai", "openai", ["gpt-4o-mini"])


def _program_environment(stack: str, own_regions: list) -> EnvironmentSpec:
    """What the program of `stack` reads when the engine passes its own file: `own_regions` (as `pulumi config set
    --path 'regions[N]…'` wrote them) and the provider's key, both secret."""
    from stacks.config import read_environment

    seen = []
    evaluate(
        lambda: seen.append(read_environment()),
        project=PROJECT,
        stack=stack,
        config={
            f"{PROJECT}:regions": json.dumps(own_regions),
            f"{PROJECT}:gateway": json.dumps({"externalProviders": [{"apiKey": "sk-live"}]}),
        },
        secret_keys=[f"{PROJECT}:regions", f"{PROJECT}:gateway"],
    )
    (env,) = seen
    return env


def test_a_region_stacks_own_region_keys_go_into_its_environments_regions(tmp_path, monkeypatch):
    """`pulumi config set --path -s acme.use1 'regions[0].observability.remoteWrite.username' …` (and the password,
    --secret) leave a list of one partial region in the stack's own file: the program still reads the
    environment's three regions, use1 with its credentials, the others without (their stacks hold their own)."""
    monkeypatch.chdir(_project_with_provider(tmp_path))
    own = [{"observability": {"remoteWrite": {"username": "prometheus-use1", "password": "pw-use1"}}}]
    env = _program_environment("acme.use1", own)
    assert [r.name for r in env.regions] == ["use1", "usw2", "usc1"]
    writes = [r.observability.remote_write for r in env.regions]
    assert [w.url for w in writes] == ["https://metrics.ml-platform.example.com/api/v1/push"] * 3
    assert [(w.username, w.password and w.password.get_secret_value()) for w in writes] == [
        ("prometheus-use1", "pw-use1"),
        (None, None),
        (None, None),
    ]


def test_a_second_regions_keys_set_by_path_keep_the_first_region(tmp_path, monkeypatch):
    """On acme.usw2, `pulumi config set --path 'regions[1]…'` writes `[null, {…}]` (Pulumi pads the indexes before
    with nulls): the null keeps the environment's first region."""
    monkeypatch.chdir(_project_with_provider(tmp_path))
    own = [None, {"observability": {"remoteWrite": {"username": "prometheus-usw2", "password": "pw-usw2"}}}]
    env = _program_environment("acme.usw2", own)
    assert [r.name for r in env.regions] == ["use1", "usw2", "usc1"]
    assert [r.observability.remote_write.username for r in env.regions] == [None, "prometheus-usw2", None]
    assert merge_by_path([{"a": 1}, {"b": 2}], [None, {"c": 3}]) == [{"a": 1}, {"b": 2, "c": 3}]


@pytest.mark.plan
def test_the_offline_plan_reads_each_stacks_own_settings_file(tmp_path):
    project = _project_with_provider(tmp_path)
    plan = build_plan(load_stack_config(project, "acme"), project)
    for region in ("use1", "usw2", "usc1"):
        objects = plan.stacks[f"acme.{region}"].kubernetes_objects()
        kinds = [r.inputs["kind"] for r in objects]
        assert "BackendSecurityPolicy" in kinds, region
        keys = [r for r in objects if r.inputs["kind"] == "Secret" and "openai" in r.name]
        assert keys and SECRET_MARKER in json.dumps(keys[0].inputs), region


@pytest.mark.plan
def test_a_stack_without_the_key_is_refused_naming_it(tmp_path):
    project = _project_with_provider(tmp_path)
    (project / "Pulumi.acme.usw2.yaml").unlink()
    try:
        build_plan(load_stack_config(project, "acme"), project)
    except ConfigError as exc:
        assert [i.path for i in exc.issues] == ["gateway.externalProviders[0].apiKey"]
    else:
        raise AssertionError("acme.usw2 has no key: its program must refuse the environment")


@pytest.mark.plan
def test_without_stack_files_every_stack_is_planned_from_the_environment():
    """prod's environment with usc1's API endpoint public, as a stack with no stack files beside it: the plan
    tests/test_clusters.py and the policy variants ask for (one plan of the session, every stack evaluated)."""
    config = environment_config("prod")
    config[ns("regions")][2]["apiAccess"]["publicCidrs"] = ["198.51.100.0/24"]
    plan = plan_config(config, stack="test")
    assert not list(ENVIRONMENTS_DIR.glob("Pulumi.test.*"))
    assert set(plan.stacks) == {f"test.{s}" for s in ("use1", "usw2", "usc1", "global")}


def test_the_environment_is_validated_once_per_distinct_input(monkeypatch):
    """An offline plan runs every stack's program in one process on the same config: validated once, and again
    whenever anything validation reads differs (the config, which keys are secret, the model catalog's files)."""
    from stacks import config as program_config

    raw = json.loads(json.dumps(yaml.safe_load((ENVIRONMENTS_DIR / "Pulumi.dev.yaml").read_text())["config"]))
    values = program_config.namespace_values(config={k: json.dumps(v) for k, v in raw.items()})
    validations = []

    def counted(*args, **kwargs):
        validations.append(args)
        return real(*args, **kwargs)

    real = program_config.load_environment
    monkeypatch.setattr(program_config, "load_environment", counted)
    monkeypatch.setattr(program_config, "_VALIDATED", {})
    first = program_config._validated(values, set(), {})
    assert program_config._validated(json.loads(json.dumps(values)), set(), {}) is first
    assert len(validations) == 1
    program_config._validated(values, {"tags"}, {})
    program_config._validated(values, set(), {"models/extra.yaml": None})
    # The same tags in another order: a mapping's order shows in the plan (an AWS provider's defaultTags).
    reordered = {**values, "tags": dict(reversed(values["tags"].items()))}
    assert list(program_config._validated(reordered, set(), {}).tags) == list(reversed(first.tags)) != list(first.tags)
    changed = {**values, "labelDomain": "platform.acme.example"}
    assert program_config._validated(changed, set(), {}).label_domain == "platform.acme.example"
    assert len(validations) == 5
    broken = {**values, "regions": []}
    for _ in range(2):  # refused every time, never kept
        with pytest.raises(ConfigError):
            program_config._validated(broken, set(), {})
    assert len(validations) == 7
