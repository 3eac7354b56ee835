"""The rehearsal's Helm wait judges a release's objects as Helm v3.20.2's ReadyChecker does (catalog fact
`helm-wait-readiness`): the hand-written cases of tests/helm_wait_cases.py, which `make rehearsal-test` also runs
through Helm's own checker (the test marked `rehearsal` below)."""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import pytest

from components.catalog.upstream import FACTS, HELM_WAIT_READINESS
from tests.helm_wait_cases import CASES, Case
from tools.rehearsal import cache, helm_wait


class CaseKube:
    """The case's objects as the API server serves them: get by name, list by equality selector."""

    def __init__(self, objects: list[dict[str, Any]]):
        self.objects = objects

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        return next(
            (
                o
                for o in self.objects
                if (o["apiVersion"], o["kind"], o["metadata"]["name"]) == (api_version, kind, name)
                and o["metadata"].get("namespace") == namespace
            ),
            None,
        )

    def list(
        self, api_version: str, kind: str, namespace: str | None = None, *, selector: str | None = None
    ) -> list[dict[str, Any]]:
        return [
            o
            for o in self.objects
            if (o["apiVersion"], o["kind"]) == (api_version, kind)
            and o["metadata"].get("namespace") == namespace
            and _selects(selector or "", o["metadata"].get("labels") or {})
        ]


_TERM = re.compile(r"(!?)([\w./-]+)(?:\s*(=|\s+in\s+|\s+notin\s+)\s*(?:\(([^)]*)\)|([\w./-]*)))?")


def _selects(selector: str, labels: dict[str, str]) -> bool:
    """The API server's reading of a `labelSelector` (k8s.io/apimachinery labels.Parse) for the terms the
    rehearsal writes: key=value, key in (...), key notin (...), key, !key."""
    for term in re.findall(r"[^,(]+(?:\([^)]*\))?", selector):
        negated, key, operator, values, value = _TERM.fullmatch(term.strip()).groups()
        listed = set(values.split(",")) if values is not None else {value}
        match (operator or "").strip():
            case "=":
                ok = labels.get(key) == value
            case "in":
                ok = labels.get(key) in listed
            case "notin":
                ok = labels.get(key) not in listed
            case _:
                ok = (key in labels) != bool(negated)
        if not ok:
            return False
    return True


def _judged(case: Case) -> bool:
    return helm_wait.ready(CaseKube(case.objects), case.objects[0], wait_for_jobs=case.wait_for_jobs)[0]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_rehearsal_judges_a_release_object_as_helms_wait_does(case):
    assert HELM_WAIT_READINESS.name in FACTS
    assert _judged(case) is (case.ready and not case.rehearsal_differs)


@pytest.mark.parametrize(
    ("selector", "text"),
    [
        ({"matchLabels": {"app": "web"}}, "app=web"),
        (
            {
                "matchLabels": {"app": "web"},
                "matchExpressions": [
                    {"key": "tier", "operator": "In", "values": ["a", "b"]},
                    {"key": "zone", "operator": "NotIn", "values": ["c"]},
                    {"key": "gpu", "operator": "Exists"},
                    {"key": "spot", "operator": "DoesNotExist"},
                ],
            },
            "app=web,tier in (a,b),zone notin (c),gpu,!spot",
        ),
        ({}, ""),
        (None, ""),
    ],
)
def test_a_label_selector_is_asked_of_the_api_server_whole(selector, text):
    """metav1.LabelSelectorAsSelector's terms, which Helm lists a workload's pods and ReplicaSets with."""
    assert helm_wait.selector_text(selector) == text


def test_a_deleted_object_is_not_ready():
    (claim,) = next(c for c in CASES if c.name == "claim bound").objects
    assert helm_wait.ready(CaseKube([]), claim, wait_for_jobs=False) == (False, "not found")


def test_helm_waits_regardless_of_pulumis_skip_await_annotation():
    dep = next(c for c in CASES if c.name.startswith("deployment of 4 at the default")).objects[0]
    skipped = {**dep, "metadata": {**dep["metadata"], "annotations": {"pulumi.com/skipAwait": "true"}}}
    assert helm_wait.waited(skipped, wait_for_jobs=False)


@pytest.mark.parametrize(
    ("api_version", "kind", "wait_for_jobs", "waited"),
    [
        ("apps/v1", "Deployment", False, True),
        ("v1", "Pod", False, True),
        # Helm checks a templated CRD too; the rehearsal waits for it to be established and served before it
        # creates the release's other objects (runner.wait_crds_established), so its wait does not.
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition", False, False),
        ("batch/v1", "Job", False, False),
        ("batch/v1", "Job", True, True),
        ("v1", "ConfigMap", False, False),
        ("serving.kserve.io/v1beta1", "Deployment", False, False),  # a custom kind of the same name
    ],
)
def test_the_kinds_helms_checker_checks(api_version, kind, wait_for_jobs, waited):
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
    assert helm_wait.waited(obj, wait_for_jobs=wait_for_jobs) is waited


@pytest.mark.parametrize(
    ("replicas", "strategy", "max_unavailable"),
    [
        (4, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}, 1),
        (3, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}, 0),
        (10, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "33%"}}, 3),
        (2, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 5}}, 2),  # at most replicas
        (1, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "0%", "maxUnavailable": "0%"}}, 1),
        (4, {"type": "Recreate"}, 0),
        (0, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}, 0),
        # GetValueFromIntOrPercent (deprecated, Helm's Deployment path) reads a string without % as a percentage,
        # and a value it cannot read resolves both fenceposts to 0 (API validation refuses both).
        (20, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "10"}}, 2),
        (20, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "x%", "maxUnavailable": 3}}, 0),
    ],
)
def test_a_deployments_max_unavailable_is_resolved_as_its_controller_resolves_it(replicas, strategy, max_unavailable):
    deployment = {"spec": {"replicas": replicas, "strategy": strategy}}
    assert helm_wait.deployment_max_unavailable(deployment) == max_unavailable


def test_a_daemonsets_max_unavailable_that_is_not_a_percentage_asks_for_no_pod():
    """GetScaledValueFromIntOrPercent refuses "1" (no %), and Helm then takes every desired pod as allowed to be
    unavailable (ready.go L326-L332)."""
    objects = next(c for c in CASES if c.name == "daemonset on 3 nodes at maxUnavailable 1: 1 ready fail").objects
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "1", "maxSurge": 0}}
    daemon_set = {**objects[0], "spec": {**objects[0]["spec"], "updateStrategy": strategy}}
    assert helm_wait.ready(CaseKube([daemon_set, *objects[1:]]), daemon_set, wait_for_jobs=False)[0] is True


@pytest.mark.rehearsal
def test_helms_own_ready_checker_judges_the_cases_as_written():
    """Helm v3.20.2's ReadyChecker itself (`helm-readycheck`, built by `make rehearsal-tools` from
    tools/rehearsal/modules/helm/readycheck) on each case, with a fake clientset serving its objects: the hand-written
    expectations are Helm's, so the rehearsal that meets them (above) judges as Helm does."""
    program = cache.binary_path("helm-readycheck")
    assert program.is_file(), f"{program} not built: run `make rehearsal-tools`"
    cases = [{"name": c.name, "objects": c.objects, "waitForJobs": c.wait_for_jobs} for c in CASES]
    done = subprocess.run([program], input=json.dumps(cases), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    verdicts = {v["name"]: v for v in json.loads(done.stdout)}
    assert [n for n in verdicts if n not in {c.name for c in CASES}] == []
    wrong = [(c.name, verdicts[c.name]) for c in CASES if verdicts[c.name]["ready"] is not c.ready]
    assert wrong == []
    # Helm's checker ends its wait on a failed Job with an error (retried 30 times, wait.go L61-L76).
    assert verdicts["job failed past its backoffLimit"]["error"] == "job is failed: release/migrate"
