"""`python -m policies.check PLAN` (`make policy-check PLAN=build/<env>/plan.json`): the pack on a saved plan.

Reads plan.json (resources with their property dependencies) and the policy-config.json beside it
(the settings `make plan` used, spec-derived ones included; what the plan's own resources tell, such as
federationMembers, is derived from them again), judges the environment as one and each stack alone as
`make plan` does, and gives the same verdict and exit codes: 0 pass, 1 a mandatory violation, 2 invalid input.
`policies/__main__.py` stays the entry the Pulumi engine runs, from the folder `make policy-pack` assembles.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from policies.framework import Evaluation
from policies.model import Resource, normalize
from policies.offline import environment_settings, judge_environment, load_settings, verdict_table, verdicts
from policies.rules import ALL_RULES

EXIT_POLICY_VIOLATION = 1
EXIT_INVALID_INPUT = 2


def saved_resources(document: Any) -> list[Resource]:
    """plan.json's custom resources as rules see them (the same fields `plan_resources` takes from a plan)."""
    if not isinstance(document, dict) or not isinstance(document.get("resources"), list):
        raise ValueError("not a plan.json: expected an object with a resources list")
    found = []
    for r in document["resources"]:
        if not r.get("custom"):
            continue
        if "propertyDependencies" not in r:
            raise ValueError(f"{r.get('urn')}: no propertyDependencies; re-run `make plan` to write them")
        options = r.get("options") or {}
        found.append(
            Resource(
                urn=r["urn"],
                type=r["type"],
                name=r["name"],
                props=normalize(r.get("inputs") or {}),
                protect=bool(options.get("protect")),
                retain_on_delete=bool(options.get("retainOnDelete")),
                parent=r.get("parent"),
                provider=r.get("provider"),
                deps={k: list(v) for k, v in r["propertyDependencies"].items()},
            )
        )
    return found


def check_saved_plan(plan_json: Path, config: Path | None = None) -> Evaluation:
    """The pack's evaluation of a saved plan, with the settings saved beside it (or `config`)."""
    try:
        document = json.loads(plan_json.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{plan_json}: cannot read the plan ({exc})") from None
    settings_path = config or plan_json.with_name("policy-config.json")
    if not settings_path.exists():
        raise ValueError(f"{settings_path}: missing; it holds the settings the plan was judged with")
    resources = saved_resources(document)
    settings = load_settings(settings_path).merged(environment_settings(resources), ALL_RULES)
    return judge_environment(ALL_RULES, resources, settings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="policy-check", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("plan", type=Path, help="a plan.json written by `make plan`")
    parser.add_argument(
        "--policy-config", type=Path, default=None, help="settings (default: policy-config.json beside it)"
    )
    args = parser.parse_args(argv)
    try:
        evaluation = check_saved_plan(args.plan, args.policy_config)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID_INPUT
    from rich.console import Console

    Console(stderr=True).print(verdict_table(verdicts(evaluation)))
    for finding in evaluation.mandatory:
        print(f"error: policy {finding.policy}: {finding.urn}: {finding.message}", file=sys.stderr)
    return EXIT_POLICY_VIOLATION if evaluation.mandatory else 0


if __name__ == "__main__":
    sys.exit(main())
