"""make rollout against a fake Automation API workspace: wave order, gates that stop the run, resume,
--from-wave, operator confirmation, and the dry run."""

from __future__ import annotations

import copy
import io
import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from components.catalog.bringup import DNS_NAME_PUBLISHED
from components.checks.loader import load_environment
from components.domain.waves import Wave, rollout_waves
from tests.harness import ENVIRONMENTS_DIR, apply_ops, program_values, raw_environment
from tools.plan.__main__ import main as plan_main
from tools.plan.runner import PROJECT_DIR
from tools.rollout.__main__ import main
from tools.rollout.bootstrap import NetworkBootstrap
from tools.rollout.bringup import Report, Violation
from tools.rollout.loadtest import Sample
from tools.rollout.state import load_state
from tools.rollout.workspace import StepResult

PROD_WAVES = [
    Wave("canary", ("prod.use1",), False),
    Wave("aws", ("prod.usw2",), False),
    Wave("gcp", ("prod.usc1",), False),
    Wave("global", ("prod.global",), False),
]


def prod_spec(*ops):
    return load_environment(apply_ops(raw_environment("prod"), ops))


def test_default_waves_of_prod_are_canary_then_its_cloud_then_the_other_cloud_then_global():
    # Pulumi.prod.yaml: federation host use1 (aws) is the anchor; usw2 is the other aws region, usc1 the gcp one.
    assert rollout_waves(prod_spec(), "prod") == PROD_WAVES


def test_dev_is_one_wave_of_its_one_stack():
    assert rollout_waves(load_environment(raw_environment("dev")), "dev") == [Wave("environment", ("dev",), False)]


SHARED_RUNNER = {"kind": "privateLink", "cidrs": ["10.250.0.0/24"], "runnerLabel": "prod-ops"}


def test_configured_waves_and_confirmations_deploy_each_stack_after_those_it_reads():
    """use1 and usw2 share a runner, so they may share a wave; listed usw2 first, use1 (the anchor usw2 reads) still
    deploys first: usw2's `up` reads the outputs this rollout deployed, not the previous ones (or none at all)."""
    env = prod_spec(
        ("set", "regions[0].deployer", SHARED_RUNNER),
        ("set", "regions[1].deployer", SHARED_RUNNER),
        (
            "set",
            "rollout",
            {
                "waves": [{"name": "first", "regions": ["usw2", "use1"]}, {"name": "rest", "regions": ["usc1"]}],
                "confirmBefore": ["rest", "global"],
            },
        ),
    )
    assert rollout_waves(env, "prod") == [
        Wave("first", ("prod.use1", "prod.usw2"), False),
        Wave("rest", ("prod.usc1",), True),
        Wave("global", ("prod.global",), True),
    ]


def test_one_wave_of_stacks_of_different_runners_is_refused_but_the_whole_rollout_goes(project, capsys):
    """`make rollout WAVE=rest` is one job on one runner: usw2's and usc1's each live in their own network. The whole
    rollout, from a host that reaches every cluster, deploys the same wave."""
    env = prod_spec(
        (
            "set",
            "rollout",
            {"waves": [{"name": "canary", "regions": ["use1"]}, {"name": "rest", "regions": ["usw2", "usc1"]}]},
        )
    )
    ws = FakeWorkspace(prod_outputs(env))
    assert roll(project, ["--wave", "rest"], env=env, workspace=ws).code == 2
    assert ws.calls == []
    assert capsys.readouterr().err == (
        "error: --wave rest: its stacks deploy from different runners (prod.usw2 on ['self-hosted', "
        "'inference-platform', 'prod-usw2']; prod.usc1 on ['self-hosted', 'inference-platform', 'prod-usc1']), and one "
        "job runs on one; run it on each runner with a wave of its own (rollout.waves), or `make rollout` without WAVE "
        "from a host that reaches them all\n"
    )
    assert roll(project, ["--wave", "canary"], env=env, workspace=FakeWorkspace(prod_outputs(env))).code == 0
    whole = FakeWorkspace(prod_outputs(env))
    assert roll(project, [], env=env, workspace=whole).code == 0
    assert [stack for stack, action in whole.calls if action == "up"] == [
        "prod.use1",
        "prod.usw2",
        "prod.usc1",
        "prod.global",
    ]


def _with_euw1(*ops):
    """prod with a second region of usw2's cloud, euw1 (a copy of usw2 in eu-west-1)."""
    raw = raw_environment("prod")
    euw1 = copy.deepcopy(next(r for r in raw["regions"] if r["name"] == "usw2"))
    euw1.update(name="euw1", region="eu-west-1", zones=["eu-west-1a", "eu-west-1b", "eu-west-1c"])
    euw1["network"]["cidr"] = "10.40.0.0/16"
    for pool in euw1.get("gpuPools", []):
        if "zones" in pool:
            pool["zones"] = ["eu-west-1a"]
    raw["regions"].append(euw1)
    return load_environment(apply_ops(raw, ops))


def test_default_waves_give_each_runner_of_a_cloud_a_wave_of_its_own():
    """`make rollout WAVE=<wave>` runs on one runner; usw2's and euw1's each live in their own network."""
    assert [(w.name, w.stacks) for w in rollout_waves(_with_euw1(), "prod")] == [
        ("canary", ("prod.use1",)),
        ("aws-usw2", ("prod.usw2",)),
        ("aws-euw1", ("prod.euw1",)),
        ("gcp", ("prod.usc1",)),
        ("global", ("prod.global",)),
    ]
    shared = _with_euw1(("set", "regions[1].deployer", SHARED_RUNNER), ("set", "regions[3].deployer", SHARED_RUNNER))
    assert [(w.name, w.stacks) for w in rollout_waves(shared, "prod")][1] == ("aws", ("prod.usw2", "prod.euw1"))


# --- a fake workspace, healthy clusters and gateway -------------------------------------------------------------


@dataclass
class FakeWorkspace:
    outputs: dict[str, dict]
    fail: dict[tuple[str, str], str] = field(default_factory=dict)  # (stack, action) -> error
    calls: list[tuple[str, str]] = field(default_factory=list)
    targets: dict[str, list[str]] = field(default_factory=dict)  # stack -> its `up --target` URNs

    def select_stack(self, name: str):
        return FakeStack(self, name)


@dataclass
class FakeStack:
    workspace: FakeWorkspace
    name: str

    def _step(self, action: str) -> StepResult:
        self.workspace.calls.append((self.name, action))
        error = self.workspace.fail.get((self.name, action))
        return StepResult(False, f"{action} failed", error) if error else StepResult(True, "create 3")

    def preview(self) -> StepResult:
        return self._step("preview")

    def up(self) -> StepResult:
        return self._step("up")

    def bootstrap(self, targets: list[str]) -> StepResult:
        self.workspace.targets[self.name] = targets
        return self._step("up --target")

    def outputs(self) -> Mapping[str, Any]:
        return self.workspace.outputs.get(self.name, {})


def region_outputs(env, region: str) -> dict:
    models = [m.name for m in env.models if any(p.region == region for p in m.placements)]
    return {
        "clusters": {region: {"name": f"prod-{region}", "cloud": env.region(region).cloud}},
        "kubeconfigs": {region: f"kubeconfig-{region}"},
        "gateways": {region: {"baseUrl": f"https://{region}.gw/v1", "models": models}},
    }


def prod_outputs(env) -> dict[str, dict]:
    outputs = {f"prod.{r.name}": region_outputs(env, r.name) for r in env.regions}
    outputs["prod.use1"]["apiKeys"] = {t.name: f"key-{t.name}" for t in env.tenants}
    outputs["prod.use1"]["karmadaKubeconfig"] = "kubeconfig-karmada"
    return outputs


class FakeCluster:
    """Every pool's nodes Ready, every model Ready; `not_ready` models never become Ready."""

    def __init__(self, env, not_ready: set[str] = frozenset()):
        self.env = env
        self.not_ready = not_ready
        self.asked: list[str] = []

    def __call__(self, kubeconfig):
        self.asked.append(kubeconfig)
        return self

    def pool_nodes(self, label_selector: str):
        return 2, 2

    def serving_ready(self, namespace: str, kind: str):
        return {m.name: m.name not in self.not_ready for m in self.env.models}

    def members_ready(self):
        return {f"prod-{r.name}": f"prod-{r.name}" not in self.not_ready for r in self.env.regions}

    def indexed_clusters(self):
        return {f"prod-{r.name}": f"pedia prod-{r.name}" not in self.not_ready for r in self.env.regions}


def gateway_ok(url: str, headers: Mapping[str, str]):
    return 200, {"data": [{"id": m} for m in ("llama-3-1-70b", "llama-3-1-70b-rag", "llama-3-1-8b", "mistral-7b-trt")]}


def within_slo(base_url, api_key, schedule, bounds, **_):
    """The SLO gate's load test (tools/rollout/loadtest.py) answered by a gateway well within prod's rollout.slo:
    every request sent, 200 ms to the first of 64 tokens, 20 ms a token after it."""
    samples = [Sample(schedule(i).model, True, ttft=0.2, tpot=0.02, tokens=64) for i in range(bounds.max_requests)]
    return samples, 30.0


class FakeClock:
    def __init__(self):
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(ENVIRONMENTS_DIR / "Pulumi.prod.yaml", tmp_path / "Pulumi.prod.yaml")
    return tmp_path


def fake_plans(env, mandatory: Mapping[str, str] | None = None):
    """A plan per stack of `env`: only its policy findings matter to the rollout."""

    mandatory = mandatory or {}

    def plans(project_dir, env_name, *, out_dir):
        stacks = [s for w in rollout_waves(env, env_name) for s in w.stacks]
        return env, {
            s: SimpleNamespace(
                policy=[{"policy": "p", "urn": f"urn:{s}", "message": mandatory[s], "enforcementLevel": "mandatory"}]
                if s in mandatory
                else []
            )
            for s in stacks
        }

    return plans


def roll(
    project: Path,
    args: list[str],
    *,
    env=None,
    workspace=None,
    cluster=None,
    confirm=None,
    mandatory=None,
    bring_up: Report | None = None,
    load_test=None,
):
    env = env or prod_spec()
    out = io.StringIO()
    clock = FakeClock()
    prompts: list[str] = []

    def answer(prompt: str) -> bool:
        prompts.append(prompt)
        return confirm(prompt)

    code = main(
        ["prod", "--project-dir", str(project), *args],
        console=Console(file=out, width=200),
        workspace=workspace,
        plans=fake_plans(env, mandatory or {}),
        cluster_probe=cluster or FakeCluster(env),
        http_get=gateway_ok,
        confirm=answer if confirm else lambda p: pytest.fail(f"asked {p!r}"),
        clock=clock,
        sleep=clock.sleep,
        bring_up_check=lambda *_: bring_up or Report(),  # the fake plans have no resources to check
        load_test=load_test or within_slo,
    )
    return SimpleNamespace(code=code, out=out.getvalue(), prompts=prompts, clock=clock)


def state_of(project: Path):
    return load_state(project / "build" / "prod" / "rollout-state.json")


def test_a_rollout_deploys_each_stack_preview_then_up_wave_by_wave(project):
    env = prod_spec()
    ws = FakeWorkspace(prod_outputs(env))
    run = roll(project, [], workspace=ws)
    assert run.code == 0, run.out
    assert ws.calls == [
        ("prod.use1", "preview"),
        ("prod.use1", "up"),
        ("prod.usw2", "preview"),
        ("prod.usw2", "up"),
        ("prod.usc1", "preview"),
        ("prod.usc1", "up"),
        ("prod.global", "preview"),
        ("prod.global", "up"),
    ]
    assert state_of(project).waves_done == ["canary", "aws", "gcp", "global"]
    assert "gate health" in run.out and "rollout of prod done" in run.out
    # the summary table: one row per step and gate, with its wave
    assert "│ prod.usc1   │ gcp    │ up" in run.out


def test_a_mandatory_violation_in_the_offline_plan_stops_before_the_wave(project):
    env = prod_spec()
    ws = FakeWorkspace(prod_outputs(env))
    run = roll(project, [], workspace=ws, mandatory={"prod.usw2": "bucket is public"})
    assert run.code == 1
    assert ws.calls == [("prod.use1", "preview"), ("prod.use1", "up")]
    assert "FAIL gate policy: 1 mandatory violation(s): prod.usw2: policy p: urn:prod.usw2: bucket is public" in run.out
    state = state_of(project)
    assert (state.waves_done, state.stopped_at) == (["canary"], "aws")
    assert "make rollout ENV=prod RESUME=1" in run.out and "FROM_WAVE=aws" in run.out


def test_a_failed_preview_stops_before_its_up(project):
    env = prod_spec()
    ws = FakeWorkspace(prod_outputs(env), fail={("prod.use1", "preview"): "policy pack: mandatory violation"})
    run = roll(project, [], workspace=ws)
    assert run.code == 1
    assert ws.calls == [("prod.use1", "preview")]
    assert "FAIL preview prod.use1: preview failed (policy pack: mandatory violation)" in run.out


def test_a_failed_up_stops_the_rollout_and_resume_goes_on_from_that_wave(project):
    env = prod_spec()
    ws = FakeWorkspace(prod_outputs(env), fail={("prod.usc1", "up"): "quota exceeded"})
    first = roll(project, [], workspace=ws)
    assert first.code == 1
    assert ws.calls[-2:] == [("prod.usc1", "preview"), ("prod.usc1", "up")]
    assert state_of(project).waves_done == ["canary", "aws"]

    fixed = FakeWorkspace(prod_outputs(env))
    second = roll(project, ["--resume"], workspace=fixed)
    assert second.code == 0, second.out
    assert fixed.calls == [
        ("prod.usc1", "preview"),
        ("prod.usc1", "up"),
        ("prod.global", "preview"),
        ("prod.global", "up"),
    ]
    assert state_of(project).waves_done == ["canary", "aws", "gcp", "global"]


def test_resume_redoes_every_wave_when_the_environment_file_changed(project):
    env = prod_spec()
    roll(project, [], workspace=FakeWorkspace(prod_outputs(env), fail={("prod.usc1", "up"): "quota"}))
    (project / "Pulumi.prod.yaml").write_text((project / "Pulumi.prod.yaml").read_text() + "\n# changed\n")
    again = FakeWorkspace(prod_outputs(env))
    run = roll(project, ["--resume"], workspace=again)
    assert run.code == 0
    assert "no rollout state for this commit and Pulumi file" in run.out
    assert again.calls[0] == ("prod.use1", "preview")


def test_resume_redoes_every_wave_when_a_stacks_own_file_changed(project):
    """`pulumi config set --secret -s prod.usw2 ...` edits Pulumi.prod.usw2.yaml, which prod.usw2 reads: no commit."""
    env = prod_spec()
    stack_file = project / "Pulumi.prod.usw2.yaml"
    stack_file.write_text("config:\n  pulumi:disable-default-providers: ['*']\n")
    roll(project, [], workspace=FakeWorkspace(prod_outputs(env), fail={("prod.usc1", "up"): "quota"}))
    stack_file.write_text(stack_file.read_text() + "  aws:region: us-west-2\n")  # its name unchanged
    again = FakeWorkspace(prod_outputs(env))
    run = roll(project, ["--resume"], workspace=again)
    assert run.code == 0
    assert "no rollout state for this commit and Pulumi file" in run.out
    assert again.calls[0] == ("prod.use1", "preview")


@pytest.mark.parametrize("command", ["rollout", "plan"])
def test_a_bootstrap_variable_left_in_the_shell_stops_plan_and_rollout_before_anything(
    command, project, monkeypatch, capsys
):
    """The Automation API hands the CLI this environment: inherited, an untargeted `up` would register the network
    alone and delete the rest. Both commands set it themselves for BOOTSTRAP=1."""
    monkeypatch.setenv("INFERENCE_PLATFORM_BOOTSTRAP", "network")
    ws = FakeWorkspace(prod_outputs(prod_spec()))
    if command == "rollout":
        assert roll(project, [], workspace=ws).code == 2
    else:
        assert plan_main(["prod", "--project-dir", str(project), "--quiet"]) == 2
    assert capsys.readouterr().err == (
        "error: INFERENCE_PLATFORM_BOOTSTRAP=network is set in this shell; make plan and make rollout set it "
        "themselves for the network-first step (make rollout BOOTSTRAP=1): unset it\n"
    )
    assert ws.calls == [] and not (project / "build").exists()


def test_from_wave_starts_there(project):
    env = prod_spec()
    ws = FakeWorkspace(prod_outputs(env))
    run = roll(project, ["--from-wave", "gcp"], workspace=ws)
    assert run.code == 0
    assert [stack for stack, _ in ws.calls] == ["prod.usc1", "prod.usc1", "prod.global", "prod.global"]


def test_one_wave_alone_for_the_runner_that_reaches_it(project):
    env = prod_spec()
    ws = FakeWorkspace(prod_outputs(env))
    run = roll(project, ["--wave", "aws"], workspace=ws)
    assert run.code == 0
    assert ws.calls == [("prod.usw2", "preview"), ("prod.usw2", "up")]
    assert state_of(project).waves_done == ["aws"]


def test_an_unknown_from_wave_is_refused_with_the_waves(project, capsys):
    run = roll(project, ["--from-wave", "gpc"], workspace=FakeWorkspace({}))
    assert run.code == 2
    assert capsys.readouterr().err == (
        "error: --from-wave gpc: no such wave; did you mean 'gcp'? the waves are canary, aws, gcp, global\n"
    )


def test_an_unhealthy_wave_stops_after_the_health_deadline(project):
    env = prod_spec()
    ws = FakeWorkspace(prod_outputs(env))
    run = roll(project, [], workspace=ws, cluster=FakeCluster(env, not_ready={"llama-3-1-70b-rag"}))
    assert run.code == 1
    assert ws.calls == [("prod.use1", "preview"), ("prod.use1", "up")]
    # llama-3-1-70b-rag is disaggregated: the canary waits for it as the LLMInferenceService it is.
    assert "not ready use1 models (LLMInferenceService): not Ready: llama-3-1-70b-rag (0/1 Ready)" in run.out
    # Six checks of use1's own (pools, models, gateway) and the search index on it (the federation host).
    assert "FAIL gate health: 1 of 7 checks not passed: use1 models (LLMInferenceService)" in run.out
    assert sum(run.clock.slept) == 30 * 60  # healthTimeoutMinutes, polled, not slept through at once
    assert len(run.clock.slept) > 1


def confirm_global(project: Path, answer: bool, *flags: str):
    env = prod_spec(("set", "rollout", {"confirmBefore": ["global"]}))
    ws = FakeWorkspace(prod_outputs(env))
    run = roll(project, list(flags), env=env, workspace=ws, confirm=lambda _: answer)
    return run, ws


def test_a_declined_confirmation_stops_before_the_wave(project):
    run, ws = confirm_global(project, False)
    assert run.code == 1
    assert run.prompts == ["deploy wave global (prod.global)? [y/N] "]
    assert ("prod.global", "preview") not in ws.calls
    assert "FAIL gate confirmation: declined by the operator" in run.out


def test_a_confirmed_wave_deploys(project):
    run, ws = confirm_global(project, True)
    assert run.code == 0
    assert len(run.prompts) == 1
    assert ws.calls[-1] == ("prod.global", "up")


def test_yes_confirms_without_asking(project):
    run, ws = confirm_global(project, False, "--yes")
    assert run.code == 0
    assert run.prompts == []
    assert ws.calls[-1] == ("prod.global", "up")


# --- dry run ----------------------------------------------------------------------------------------------------


@pytest.mark.plan
def test_dry_run_of_dev_prints_its_wave_plan_and_gates_from_the_offline_plan(capsys, fixture_project):
    out = io.StringIO()
    argv = ["dev", "--project-dir", str(fixture_project), "--dry-run"]
    code = main(argv, console=Console(file=out, width=200), workspace=None)
    text = out.getvalue()
    assert code == 0
    assert "rollout of dev (dry run: no credentials, no Pulumi CLI): layout single, 1 stack(s) in 1 wave(s)" in text
    assert "wave 1: environment" in text
    assert "policy passed: " in text and " 0 mandatory " in text
    assert "health: use1 models" in text and "InferenceService Ready=True: llama-3-1-8b, qwen2-5-7b" in text
    assert "bring-up" in text and "preconditions of every wait (releases, awaits, gates) created in time" in text
    # dev's runner is outside the VPC (its public endpoint admits it); its gateway is internal: not waited for.
    assert "GET https://use1.llm.dev.acme.example" not in text
    assert (
        "not waited for: use1's gateway (internal, reachable only from inside use1's network) from 203.0.113.0/24"
        in (" ".join(text.split()))
    )


def test_dry_run_of_prod_lists_every_wave_and_stops_on_a_mandatory_violation(project):
    env = prod_spec()

    def plans(project_dir, env_name, *, out_dir):
        assert out_dir is None  # a dry run writes nothing
        _, fake = fake_plans(env, {"prod.usc1": "no CMEK"})(project_dir, env_name, out_dir=out_dir)
        for name, plan in fake.items():
            plan.resources, plan.policy_verdicts = [], []
            plan.kubernetes_objects = plan.helm_releases = list
            plan.outputs = prod_outputs(env).get(name, {})
        return env, fake

    out = io.StringIO()
    code = main(
        ["prod", "--project-dir", str(project), "--dry-run"],
        console=Console(file=out, width=200),
        plans=plans,
        bring_up_check=lambda *_: Report(),
    )
    text = out.getvalue()
    assert code == 1
    assert [line.strip("─ ") for line in text.splitlines() if line.startswith("─")] == [
        "wave 1: canary",
        "wave 2: aws",
        "wave 3: gcp",
        "wave 4: global",
    ]
    assert "prod.usw2 (region, reads prod.use1)" in text
    assert "would stop: mandatory violations in prod.usc1" in text
    assert (
        "health: karmada members" in text and "Cluster Ready=True in Karmada: prod-use1, prod-usw2, prod-usc1" in text
    )
    assert not (project / "build").exists()


def test_dry_run_of_an_invalid_environment_exits_2_with_the_key(tmp_path, capsys):
    raw = (
        (ENVIRONMENTS_DIR / "Pulumi.dev.yaml")
        .read_text()
        .replace(
            "inference-platform:gateway:",
            "inference-platform:rollout:\n    waves: [{name: a, regions: [use1]}]\n  inference-platform:gateway:",
        )
    )
    (tmp_path / "Pulumi.dev.yaml").write_text(raw)
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    code = main(["dev", "--project-dir", str(tmp_path), "--dry-run"], console=Console(file=io.StringIO()))
    assert code == 2
    assert capsys.readouterr().err.startswith(
        "error: Pulumi.dev.yaml: rollout.waves: the environment deploys as one stack"
    )


def test_the_state_file_records_each_step(project):
    env = prod_spec()
    roll(project, [], workspace=FakeWorkspace(prod_outputs(env), fail={("prod.usw2", "up"): "boom"}))
    data = json.loads((project / "build" / "prod" / "rollout-state.json").read_text())
    assert data["wavesDone"] == ["canary"]
    assert data["stoppedAt"] == "aws"
    assert [(s["stack"], s["action"], s["ok"]) for s in data["steps"]][-2:] == [
        ("prod.usw2", "preview", True),
        ("prod.usw2", "up", False),
    ]


# --- the Automation API wrapper and the make target -------------------------------------------------------------


class AutomationStack:
    """Stands in for pulumi.automation.Stack: records the policy arguments, fails when told."""

    def __init__(self, error: str | None = None, up_result: str = "succeeded"):
        self.error = error
        self.up_result = up_result
        self.kwargs: list[dict] = []

    def _run(self, kwargs):
        from pulumi.automation import CommandError
        from pulumi.automation._cmd import CommandResult

        self.kwargs.append({k: v for k, v in kwargs.items() if k != "on_output"})
        if self.error:
            raise CommandError(CommandResult(stdout="", stderr=f"Updating...\n{self.error}\n", code=255))

    def preview(self, **kwargs):
        self._run(kwargs)
        return SimpleNamespace(change_summary={"create": 3, "same": 0})

    def up(self, **kwargs):
        self._run(kwargs)
        return SimpleNamespace(
            summary=SimpleNamespace(result=self.up_result, resource_changes={"update": 1}, message="2 errors")
        )

    def outputs(self):
        return {"gateways": SimpleNamespace(value={"use1": {}})}


def test_pulumi_stack_runs_the_policy_pack_and_reports_the_engine_summary():
    from tools.rollout.workspace import PulumiStack

    stack = AutomationStack()
    ops = PulumiStack(
        stack=stack,
        policy_pack=Path("build/policy-pack"),
        policy_config=Path("build/prod/policy-config.json"),
        on_output=print,
    )
    assert ops.preview() == StepResult(True, "create 3")
    assert ops.up() == StepResult(True, "update 1")
    assert stack.kwargs == 2 * [
        {"policy_packs": ["build/policy-pack"], "policy_pack_configs": ["build/prod/policy-config.json"]}
    ]
    assert ops.outputs() == {"gateways": {"use1": {}}}


def test_the_summary_names_each_operation_as_the_engine_spells_it():
    from pulumi.automation import OpType

    from tools.rollout.workspace import change_summary

    # `preview()` returns OpType keys (pulumi.automation PreviewResult.change_summary), `up()` plain strings.
    assert change_summary({OpType.CREATE: 3, OpType.SAME: 0, OpType.UPDATE: 1}) == "create 3, update 1"
    assert change_summary({"create": 2}) == "create 2"
    assert change_summary({}) == "no changes"


def test_pulumi_stack_failures_keep_the_engine_reason():
    from tools.rollout.workspace import PulumiStack

    failing = PulumiStack(
        stack=AutomationStack(error="error: quota exceeded"),
        policy_pack=Path("k"),
        policy_config=Path("p"),
        on_output=print,
    )
    assert failing.preview() == StepResult(False, "preview failed", "error: quota exceeded")
    partial = PulumiStack(
        stack=AutomationStack(up_result="failed"), policy_pack=Path("k"), policy_config=Path("p"), on_output=print
    )
    assert partial.up() == StepResult(False, "update 1", "2 errors")


def test_a_real_run_without_the_pack_folder_stops_before_any_stack(project, capsys):
    """Its previews and updates run `build/policy-pack` with the folder's virtualenv, which `make policy-pack` makes."""
    run = roll(project, [])
    assert run.code == 2
    assert capsys.readouterr().err == (
        f"error: {project / 'build' / 'policy-pack'}: no policy pack folder; run `make policy-pack` first (the previews "
        "and updates run it)\n"
    )
    (project / "build" / "policy-pack").mkdir(parents=True)
    (project / "build" / "policy-pack" / "__main__.py").write_text("")
    assert roll(project, []).code == 2
    assert "the pack's virtualenv venv/ is missing" in capsys.readouterr().err


def test_make_rollout_builds_the_pack_folder_unless_a_dry_run():
    import subprocess

    def prerequisites(*variables: str) -> str:
        done = subprocess.run(
            ["make", "-n", "-W", "policies/requirements.txt", "rollout", "ENV=prod", *variables],
            cwd=PROJECT_DIR,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    assert "tools.policy_pack" in prerequisites()
    assert "tools.policy_pack" not in prerequisites("DRY_RUN=1")


def test_make_rollout_passes_its_variables_as_flags():
    import subprocess

    done = subprocess.run(
        ["make", "-n", "rollout", "ENV=prod", "DRY_RUN=1", "RESUME=1", "FROM_WAVE=gcp", "YES=1"],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        check=True,
    )
    command = next(line for line in done.stdout.splitlines() if "tools.rollout" in line)
    assert command.split() == [
        ".venv/bin/python",
        "-m",
        "tools.rollout",
        "prod",
        "--dry-run",
        "--resume",
        "--from-wave",
        "gcp",
        "--yes",
    ]


@pytest.mark.plan
def test_a_real_run_of_dev_writes_its_plan_for_the_previews_then_deploys_the_one_stack(tmp_path):
    from tools.rollout.__main__ import offline_plans

    shutil.copy(ENVIRONMENTS_DIR / "Pulumi.dev.yaml", tmp_path / "Pulumi.dev.yaml")
    env = load_environment(raw_environment("dev"))
    outputs = region_outputs(env, "use1")
    outputs["apiKeys"] = {"research": "sk"}
    ws = FakeWorkspace({"dev": outputs})
    out = io.StringIO()
    code = main(
        ["dev", "--project-dir", str(tmp_path)],
        console=Console(file=out, width=200),
        workspace=ws,
        plans=lambda project_dir, env_name, *, out_dir: offline_plans(
            PROJECT_DIR, env_name, out_dir=out_dir, config_dir=project_dir
        ),
        cluster_probe=FakeCluster(env),
        http_get=lambda url, headers: (200, {"data": [{"id": "llama-3-1-8b"}, {"id": "qwen2-5-7b"}]}),
        confirm=lambda prompt: pytest.fail(prompt),
    )
    assert code == 0, out.getvalue()
    assert ws.calls == [("dev", "preview"), ("dev", "up")]
    build = tmp_path / "build" / "dev"
    assert json.loads((build / "policy-config.json").read_text())  # what `pulumi preview --policy-pack-config` reads
    assert load_state(build / "rollout-state.json").waves_done == ["environment"]


def _bootstraps(*stacks: str) -> Report:
    return Report(
        bootstraps={s: NetworkBootstrap(s, f"urn:{s}:network", (f"urn:{s}:vpc", f"urn:{s}:nat"), ()) for s in stacks}
    )


def test_bootstrap_creates_a_waves_runner_network_alone_and_says_where_the_runner_goes(project):
    ws = FakeWorkspace({})  # an empty account: no stack has outputs yet
    run = roll(project, ["--bootstrap", "--wave", "aws"], workspace=ws, bring_up=_bootstraps("prod.use1", "prod.usw2"))
    assert run.code == 0
    # Only the wave's stack, only its network: no preview of the whole stack, no gate.
    assert ws.calls == [("prod.usw2", "up --target")]
    assert ws.targets == {"prod.usw2": ["urn:prod.usw2:vpc", "urn:prod.usw2:nat"]}
    text = " ".join(run.out.split())
    assert (
        "next: start the runner labelled ['self-hosted', 'inference-platform', 'prod-usw2'] in prod.usw2's network"
        in text
    )
    assert "`make rollout ENV=prod WAVE=aws` on it" in text


def test_a_stack_deployed_before_is_not_bootstrapped_again(project):
    """The network-first program exports nothing: a stack with outputs had its full `up`, and a targeted `up` of its
    network-only program would replace its outputs with none."""
    env = prod_spec()
    ws = FakeWorkspace({"prod.use1": prod_outputs(env)["prod.use1"]})
    run = roll(project, ["--bootstrap"], workspace=ws, bring_up=_bootstraps("prod.use1", "prod.usw2"))
    assert run.code == 0
    assert ws.calls == [("prod.usw2", "up --target")]
    assert "deployed before: its network exists" in " ".join(run.out.split())


def test_a_failed_bootstrap_stops_and_a_wave_without_one_says_so(project):
    ws = FakeWorkspace({}, fail={("prod.use1", "up --target"): "VpcLimitExceeded"})
    assert roll(project, ["--bootstrap"], workspace=ws, bring_up=_bootstraps("prod.use1", "prod.usw2")).code == 1
    assert ws.calls == [("prod.use1", "up --target")]
    quiet = roll(
        project, ["--bootstrap", "--wave", "global"], workspace=FakeWorkspace({}), bring_up=_bootstraps("prod.use1")
    )
    assert quiet.code == 0 and "nothing to bootstrap" in quiet.out


def test_a_wave_whose_waits_cannot_complete_stops_at_its_bring_up_gate(project):
    env = prod_spec()
    ws = FakeWorkspace(prod_outputs(env))
    blocked = Report(
        violations=[
            Violation(
                "prod.usw2",
                "gate health: usw2 gateway",
                "a DNS record for usw2.llm.acme.example",
                "no stack creates it",
                DNS_NAME_PUBLISHED,
            )
        ]
    )
    run = roll(project, [], workspace=ws, bring_up=blocked)
    assert run.code == 1
    assert ws.calls == [("prod.use1", "preview"), ("prod.use1", "up")]  # canary went; aws stopped before its preview
    assert (
        "FAIL gate bring-up: 1 precondition(s) missing: prod.usw2: gate health: usw2 gateway needs a DNS record"
        in " ".join(run.out.split())
    )


def test_the_hosts_wave_waits_for_its_own_search_index_read_on_the_host(project):
    """prod: Clusterpedia on the federation host (use1) indexes use1 itself, a PediaCluster use1's own stack creates:
    the canary's gate waits for it Ready, asking use1's cluster; a wave creating no PediaCluster does not wait."""
    env = prod_spec()
    assert (env.federation.host, env.federation.search.members) == ("use1", ["use1"])
    ws = FakeWorkspace(prod_outputs(env))
    cluster = FakeCluster(env, not_ready={"pedia prod-use1"})
    run = roll(project, [], workspace=ws, cluster=cluster)
    assert run.code == 1
    assert ws.calls == [("prod.use1", "preview"), ("prod.use1", "up")]
    assert "not ready search index: not Ready on prod-use1: prod-use1 (0/1)" in " ".join(run.out.split())
    assert set(cluster.asked) == {"kubeconfig-use1", "kubeconfig-karmada"}  # the host joins Karmada in its wave


def test_the_global_wave_waits_for_the_search_index_of_each_member_it_adds_read_on_the_host(project):
    """Indexing every member: the global stack creates the other members' PediaClusters on the host; its gate reads
    them from the host's cluster, through the host stack's kubeconfig."""
    from tests.test_search import search_everywhere

    env = load_environment(program_values(search_everywhere()))
    ws = FakeWorkspace(prod_outputs(env))
    cluster = FakeCluster(env, not_ready={"pedia prod-usc1"})
    run = roll(project, [], workspace=ws, env=env, cluster=cluster)
    assert run.code == 1
    assert ws.calls[-2:] == [("prod.global", "preview"), ("prod.global", "up")]
    assert "not ready search index: not Ready on prod-use1: prod-usc1 (1/2)" in " ".join(run.out.split())
    assert state_of(project).waves_done == ["canary", "aws", "gcp"]


def test_the_global_wave_waits_for_every_member_to_be_ready_in_karmada(project):
    env = prod_spec()
    ws = FakeWorkspace(prod_outputs(env))
    run = roll(project, [], workspace=ws, cluster=FakeCluster(env, not_ready={"prod-usc1"}))
    assert run.code == 1
    assert ws.calls[-2:] == [("prod.global", "preview"), ("prod.global", "up")]
    assert "not ready karmada members: not Ready in Karmada: prod-usc1 (2/3)" in run.out
    assert state_of(project).waves_done == ["canary", "aws", "gcp"]
