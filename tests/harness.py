"""Evaluate environments or single components under the plan's recording mocks, and query them.

The environments the tests plan and count are their own fixtures, `tests/fixtures/environments/` (a frozen copy of
the shipped dev and prod, with prod's stack files): a team's own `Pulumi.*.yaml` never change a test's outcome
(tests/environment_guard.py fails a test that reads them). The tests about the shipped examples themselves are
tests/test_example_environments.py."""

from __future__ import annotations

import copy
import json
import pickle
import re
import runpy
import shutil
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from unittest import mock

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.config.stackfile import read_stack_file, read_yaml, stack_config_from_mapping
from components.k8s.cluster import ClusterHandle, ExecAuth, render_kubeconfig
from policies.framework import Context, Evaluation, Finding, PackSettings
from policies.model import Resource, Stack, one_pass
from policies.rules import ALL_RULES
from tests import plan_store
from tests.gpu_specs import region
from tools.plan import runner
from tools.plan.engine import PlannedResource, evaluate
from tools.plan.model import Plan, is_patch
from tools.plan.runner import PROJECT_DIR, build_plan
from tools.plan.stackfile import load_stack_config

PROJECT = "inference-platform"
ENVIRONMENTS_DIR = Path(__file__).parent / "fixtures" / "environments"

# What the fixture environments declare, counted by hand from their Pulumi.<env>.yaml (never read from a plan): the
# guards that keep a test looping over a plan's objects from passing on an empty plan.
# Every region serves a model, so every region's cluster runs a gateway: dev use1; prod use1, usw2 (AWS), usc1 (GCP).
SERVING_CLUSTERS = {"dev": ["dev-use1"], "prod": ["prod-usc1", "prod-use1", "prod-usw2"]}
# An InferenceService per (model, region) placement, the disaggregated llama-3-1-70b-rag aside (an
# LLMInferenceService): dev 8b and qwen in use1; prod 70b in all three regions, 8b in use1 and usw2, mistral in usc1.
INFERENCE_SERVICES = {"dev": 2, "prod": 6}
# dev's one region: cert-manager, cluster-autoscaler, fluid, gpu-operator, keda, kserve-crd, kserve-resources,
# kserve-llmisvc-crd, kserve-llmisvc-resources, kserve-runtime-configs, kube-prometheus-stack, volcano, gateway-helm,
# ai-gateway-crds-helm, ai-gateway-helm = 15. prod: each AWS region the 15, the EFA device plugin and a karmada agent
# = 17, use1 the karmada host's release too = 18; usc1 (GKE) the 15 without cluster-autoscaler, with dcgm-exporter
# and an agent = 16; kserve-crd on the karmada API server = 1. 52 (Clusterpedia on the host is rendered, no release).
HELM_RELEASES = {"dev": 15, "prod": 52}


def plan_for(env: str) -> Plan:
    """The plan of a fixture environment (dev, prod), built once per test session (tests/plan_store.py): a test
    that asks for one is marked `plan`."""
    plan_store.asked(f"asked for plan_for({env!r})")
    return _plan_for(env)


@cache
def _plan_for(env: str) -> Plan:
    return plan_store.shared(("env", env), lambda: build_plan(load_stack_config(PROJECT_DIR, env, ENVIRONMENTS_DIR)))


def project_with_environments(directory: Path) -> Path:
    """`directory` made a project of the program (`Pulumi.yaml`, `__main__.py`) with the fixture environments: what
    the tests pass the command lines as `--project-dir`."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(PROJECT_DIR / name, directory / name)
    for path in ENVIRONMENTS_DIR.glob("Pulumi.*.yaml"):
        shutil.copy(path, directory / path.name)
    return directory


def kubernetes_object_keys(plan: Plan) -> list[tuple]:
    """(cluster, API group, kind, namespace, name) of every Kubernetes object: what the API server keys it by."""
    keys = []
    for r in plan.kubernetes_objects():
        if is_patch(r):  # a patch of an object declared elsewhere (or by a controller) does not create it
            continue
        meta = r.inputs.get("metadata") or {}
        group = r.inputs["apiVersion"].rpartition("/")[0]
        keys.append((plan.cluster_of(r), group, r.inputs["kind"], meta.get("namespace"), meta.get("name")))
    return keys


_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _parts(path: str) -> list[Any]:
    return [int(index) if index else key for key, index in _PART.findall(path)]


def apply_ops(raw: dict, ops: tuple[tuple[Any, ...], ...]) -> dict:
    """Apply (\"set\", path, value), (\"del\", path), (\"rename\", path, key), (\"append\", path, value) to raw."""
    for op, path, *value in ops:
        *parents, last = _parts(path)
        node: Any = raw
        for part in parents:
            node = node[part]
        if op == "set":
            node[last] = value[0]
        elif op == "del":
            del node[last]
        elif op == "rename":
            node[value[0]] = node.pop(last)
        elif op == "append":
            node[last].append(value[0])
        else:
            raise ValueError(op)
    return raw


def environment_config(env: str) -> dict[str, Any]:
    """A deep copy of the fixture `Pulumi.<env>.yaml`'s config mapping, to mutate in a test."""
    return pickle.loads(_parsed_config((ENVIRONMENTS_DIR / f"Pulumi.{env}.yaml").read_text()))


@cache
def _parsed_config(text: str) -> bytes:
    """A stack file's config, parsed once per content and pickled: the suite asks for the fixtures ~1,500 times,
    parsing prod's took 30 ms, and unpickling makes a fresh copy 10 times faster than copy.deepcopy (0.03 ms against
    0.35 ms)."""
    return pickle.dumps(yaml.safe_load(text)["config"], protocol=pickle.HIGHEST_PROTOCOL)


def plan_config(config: dict[str, Any], stack: str = "test") -> Plan:
    """Plan an environment given as a config mapping (keys with or without the project namespace), as a fixture
    environment: a `stack` of `dev` or `prod` is planned with the fixture's stack files.

    Built once per distinct config in a session (tests/plan_store.py): the policy-variant test re-plans what other
    tests build. A test that asks for one is marked `plan`."""
    plan_store.asked(f"asked for plan_config(stack={stack!r})")
    return _planned(json.dumps(config, sort_keys=True), stack)


@cache
def _planned(config_json: str, stack: str) -> Plan:
    return plan_store.shared(("config", config_json, stack), lambda: _build(config_json, stack))


def _build(config_json: str, stack: str) -> Plan:
    """The plan of a config mapping (JSON) as a fixture environment's `stack`, with its stack files."""
    config = json.loads(config_json)
    return build_plan(stack_config_from_mapping(PROJECT, stack, config, ENVIRONMENTS_DIR / f"Pulumi.{stack}.yaml"))


def plan_stacks(config: dict[str, Any], stack: str, regions: Collection[str]) -> Plan:
    """`plan_config` with only the stacks of `regions` evaluated, and the stacks they read (the anchor region's): for
    a variant whose point is what those regions' stacks create, which the environment's other stacks do not change
    (prod's: 2-4 of its 7 program runs). One stack left: a plan without `stacks`."""
    plan_store.asked(f"asked for plan_stacks(stack={stack!r}, regions={sorted(regions)!r})")
    return _planned_stacks(json.dumps(config, sort_keys=True), stack, tuple(sorted(regions)))


@cache
def _planned_stacks(config_json: str, stack: str, regions: tuple[str, ...]) -> Plan:
    every = runner.environment_stacks

    def chosen(env: Any, env_name: str) -> list[Any]:
        stacks = every(env, env_name)
        named = {s.name for s in stacks if s.region in regions}
        named |= {read for s in stacks if s.name in named for read in s.references}
        assert {s.region for s in stacks if s.name in named} >= set(regions), (regions, stacks)
        return [s for s in stacks if s.name in named]

    def build() -> Plan:
        with mock.patch.object(runner, "environment_stacks", chosen):
            return _build(config_json, stack)

    return plan_store.shared(("config-stacks", config_json, stack, regions), build)


def scoped_markdown(plan: Plan) -> str:
    """plan.md of a `plan_stacks` plan: every section but the rollout SLO gate's, which reads the outputs of each
    wave's stacks (those left out are not there). The other sections read the spec or the evaluated resources."""
    from tools.plan import report
    from tools.plan.slo_section import slo_section

    with mock.patch.object(report, "SECTIONS", tuple(s for s in report.SECTIONS if s is not slo_section)):
        return report.render_markdown(plan)


def evaluate_program(program: Callable[[], None], stack: str = "test") -> Plan:
    """Evaluate a component-level program (no config) and wrap it for queries."""
    evaluation = evaluate(program, project=PROJECT, stack=stack, config={})
    return Plan(environment=stack, project=PROJECT, evaluation=evaluation)


def plan_program(
    project_dir: Path,
    stack: str,
    config: dict[str, Any] | None = None,
    on_register: Callable[[PlannedResource], None] | None = None,
) -> Plan:
    """Evaluate another Pulumi program (`project_dir/__main__.py`, an example) as `pulumi up` would run it, with
    its `Pulumi.<stack>.yaml` config or `config` (such a file's `config:` mapping) instead."""
    project = read_yaml(project_dir / "Pulumi.yaml")["name"]
    mapping = read_stack_file(project_dir, stack) if config is None else config
    own = stack_config_from_mapping(project, stack, mapping, project_dir / f"Pulumi.{stack}.yaml")
    evaluation = evaluate(
        lambda: runpy.run_path(str(project_dir / "__main__.py"), run_name="__main__"),
        project=project,
        stack=stack,
        config=own.config,
        secret_keys=own.secret_keys,
        on_register=on_register,
    )
    return Plan(environment=stack, project=project, evaluation=evaluation)


def ns(key: str) -> str:
    """`regions` -> `inference-platform:regions`."""
    return f"{PROJECT}:{key}"


def program_values(config: dict[str, Any]) -> dict[str, Any]:
    """A stack file's config as the program reads it: the `inference-platform:` keys, unprefixed."""
    return {k.split(":", 1)[1]: v for k, v in config.items() if k.startswith(f"{PROJECT}:")}


def raw_environment(env: str = "dev") -> dict[str, Any]:
    """The fixture `Pulumi.<env>.yaml`'s program values (a deep copy), to mutate in a test."""
    return program_values(environment_config(env))


def config_errors(raw: dict[str, Any]) -> list[str]:
    """The lines a config is rejected with; fails the test when it is accepted."""
    import pytest

    from components.checks.loader import load_environment
    from components.config.base import ConfigError

    with pytest.raises(ConfigError) as info:
        load_environment(raw)
    return [str(issue) for issue in info.value.issues]


def cluster_objects(plan: Plan, kind: str) -> dict[tuple[str, str], dict[str, Any]]:
    """(cluster, name) -> the `kind` objects each cluster runs, federated ones included.

    A template in a Karmada control plane is not run there: its PropagationPolicy's member clusters
    get it, with their OverridePolicy's plaintext patches applied; its PodDisruptionBudget follows it
    (the interpreter's GetDependencies). Karmada's replica division and image overriders are left
    out: the members' overrides state their own replica range.
    """
    objects = {
        (plan.cluster_of(r), r.inputs["kind"], r.inputs["metadata"]["name"]): r.inputs
        for r in plan.kubernetes_objects()
    }
    policies = [(cluster, obj) for (cluster, k, _), obj in objects.items() if k == "PropagationPolicy"]
    overrides = [(cluster, obj) for (cluster, k, _), obj in objects.items() if k == "OverridePolicy"]
    karmada = {cluster for cluster, _ in policies}
    found = {(c, n): obj for (c, k, n), obj in objects.items() if k == kind and c not in karmada}
    for control_plane, policy in policies:
        for selector in policy["spec"]["resourceSelectors"]:
            name = selector["name"]
            delivered = {selector["kind"]}
            if policy["spec"].get("propagateDeps"):
                delivered.add("PodDisruptionBudget")
            template = objects.get((control_plane, kind, name))
            if kind not in delivered or template is None:
                continue
            for member in policy["spec"]["placement"]["clusterAffinity"]["clusterNames"]:
                obj = copy.deepcopy(template)
                for cluster, override in overrides:
                    selected = any(
                        t["kind"] == kind and t["name"] == name for t in override["spec"]["resourceSelectors"]
                    )
                    for rule in override["spec"]["overrideRules"] if cluster == control_plane and selected else ():
                        if member in rule["targetCluster"]["clusterNames"]:
                            for op in rule["overriders"].get("plaintext", []):
                                _json_patch(obj, op)
                found[member, name] = obj
    return found


def _json_patch(obj: dict, op: dict) -> None:
    """One RFC 6902 add/replace/remove on objects (what the federation's overrides use)."""
    *parents, last = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
    for key in parents:
        obj = obj.setdefault(key, {})
    if op["operator"] == "remove":
        obj.pop(last)
    else:
        obj[last] = op["value"]


def needing_no_cache(raw: dict) -> dict:
    """`raw` without what needs the model cache (disaggregated placements, tenants' LoRA adapters): for variants
    that turn the cache off."""
    for model in raw["models"]:
        for placement in model["placements"]:
            placement.pop("prefill", None)
            placement["servingMode"] = "aggregated"
    for tenant in raw["tenants"]:
        tenant.pop("loras", None)
    return raw


def cluster_handle(name: str, *, cloud: str = "aws", **fields: Any) -> ClusterHandle:
    """A handle of a test cluster (on AWS unless told) for a component evaluated alone: its own provider and an exec
    kubeconfig."""
    kubeconfig = render_kubeconfig(name, "https://10.0.0.1", "Y2E=", ExecAuth(command="aws", args=()))
    return ClusterHandle(
        name=name,
        region=region(cloud),
        provider=k8s.Provider(name),
        kubeconfig=pulumi.Output.from_input(kubeconfig),
        endpoint=pulumi.Output.from_input("https://10.0.0.1"),
        **fields,
    )


@dataclass(frozen=True)
class PackBaseline:
    """What each rule applied to on a stack of resources, and what each resource-scoped rule found on each: to judge
    changed copies of that stack without re-judging what did not change. A rule's subject test and a resource rule
    read one resource and the pack settings (a resource rule's context has no stack), so on a resource equal to the
    baseline's they answer what they answered on it; stack rules always run over the whole changed stack (whose
    Karmada members' copies and patched objects it derives afresh)."""

    resources: list[Resource]  # the baseline's own copy
    settings: PackSettings
    subjects: dict[str, frozenset[str]]  # rule -> URNs of the resources it applies to
    found: dict[str, dict[str, list[Finding]]]  # resource rule -> URN of each subject -> its findings

    @classmethod
    def of(cls, resources: list[Resource], settings: PackSettings) -> PackBaseline:
        own = copy.deepcopy(resources)
        assert len({r.urn for r in own}) == len(own), "URNs name the resources"
        subjects = {r.name: frozenset(res.urn for res in own if r.subject(res)) for r in ALL_RULES}
        found: dict[str, dict[str, list[Finding]]] = {}
        with one_pass():
            for r in ALL_RULES:
                if r.scope == "resource":
                    ctx = Context(settings.config_for(r), None)
                    level = settings.level(r)
                    found[r.name] = {res.urn: r.evaluate(res, ctx, level) for res in own if res.urn in subjects[r.name]}
        return cls(own, settings, subjects, found)

    def judge(self, resources: list[Resource]) -> Evaluation:
        """`evaluate_stack(ALL_RULES, resources, settings)`, finding for finding and in its order."""
        baseline = {r.urn: r for r in self.resources}
        unchanged = {id(res): res.urn for res in resources if baseline.get(res.urn) == res}
        evaluation = Evaluation()
        with one_pass():
            stack = Stack(resources)
            # Where each unchanged resource stands among a scope's candidates, and which candidates are fresh: changed,
            # added, or derived by the stack (a member's copy, a patched object).
            scopes = {}
            for scope, candidates in (("stack", stack.resources), ("resource", stack.declared)):
                at = [unchanged.get(id(res)) for res in candidates]
                where: dict[str, list[int]] = {}
                for p, urn in enumerate(at):
                    if urn is not None:
                        where.setdefault(urn, []).append(p)
                scopes[scope] = (candidates, at, where, [p for p, urn in enumerate(at) if urn is None])
            for r in ALL_RULES:
                level = self.settings.level(r)
                evaluation.levels[r.name] = level
                if level == "disabled":
                    evaluation.subjects[r.name] = 0
                    continue
                ctx = Context(self.settings.config_for(r), stack if r.scope == "stack" else None)
                candidates, at, where, fresh = scopes[r.scope]
                # The unchanged resources the rule applied to on the baseline, and the fresh ones it applies to.
                subjects = sorted(
                    [p for urn in self.subjects[r.name] for p in where.get(urn, ())]
                    + [p for p in fresh if r.subject(candidates[p])]
                )
                evaluation.subjects[r.name] = len(subjects)
                found = self.found.get(r.name, {}) if r.scope == "resource" else {}
                for p in subjects:
                    urn = at[p]
                    before = found.get(urn) if urn is not None else None
                    evaluation.findings.extend(r.evaluate(candidates[p], ctx, level) if before is None else before)
        return evaluation
