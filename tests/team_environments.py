"""What a team adopting the project does to the environments beside the program: edits dev and adds a staging of
its own. Written from the fixture dev (tests/fixtures/environments/), never from the shipped file, so the same
edits apply whatever the team's files hold. tests/test_check.py checks the staging; README ("Your own
environments") tells how to run the whole suite against these edits:

    python -m tests.team_environments DIR    # writes DIR/Pulumi.dev.yaml (edited) and DIR/Pulumi.staging.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path

FIXTURE_DEV = Path(__file__).parent / "fixtures" / "environments" / "Pulumi.dev.yaml"


def _replaced(text: str, edits: list[tuple[str, str]]) -> str:
    for old, new in edits:
        if text.count(old) != 1:
            raise ValueError(f"expected one {old!r} in the fixture dev")
        text = text.replace(old, new)
    return text


def fixture_dev() -> str:
    """The fixture dev without its fixture header: the file as the team started from it."""
    start = "# Development environment"
    return start + FIXTURE_DEV.read_text().split(start, 1)[1]


def edited_dev() -> str:
    """Dev as a team edits it: a third zone, room for one more L40S node, a model and a tenant of its own."""
    return _replaced(
        fixture_dev(),
        [
            ("zones: [us-east-1a, us-east-1b]\n", "zones: [us-east-1a, us-east-1b, us-east-1c]\n"),
            ("          maxSize: 2\n          timeSlicing:", "          maxSize: 3\n          timeSlicing:"),
            (
                "  inference-platform:tenants:\n",
                "    - name: mistral-7b\n      preset: mistral-7b\n      runtime: vllm\n      tenant: evals\n"
                "      precision: awq\n      kvCacheDtype: fp8\n      maxModelLen: 4096\n      maxNumSeqs: 16\n"
                "      placements:\n        - {region: use1, pool: l40s, minReplicas: 0, maxReplicas: 1}\n"
                "  inference-platform:tenants:\n",
            ),
            (
                "  inference-platform:federation:\n",
                "    - name: evals\n      models: [mistral-7b]\n      weight: 1\n      tier: batch\n"
                "      gpuQuotas:\n        - {region: use1, capability: {nvidia.com/gpu: 1}}\n"
                "      budget:\n        requests: {limit: 60, per: minute}\n"
                "  inference-platform:federation:\n",
            ),
        ],
    )


def staging() -> str:
    """A staging of the team's own, started from dev as the README says: its region us-west-2, its own network,
    cost center and domain."""
    return _replaced(
        fixture_dev(),
        [
            ("# Development environment:", "# Staging, the release candidate:"),
            ("cost-center: dev", "cost-center: staging"),
            (
                "name: use1\n      cloud: aws\n      region: us-east-1",
                "name: usw2\n      cloud: aws\n      region: us-west-2",
            ),
            ("zones: [us-east-1a, us-east-1b]", "zones: [us-west-2a, us-west-2b]"),
            ("zones: [us-east-1b]", "zones: [us-west-2b]"),
            ("10.10.0.0/16", "10.50.0.0/16"),
            ("https://use1.llm.dev.acme.example/v1", "https://usw2.llm.staging.acme.example/v1"),
            ("domain: llm.dev.acme.example", "domain: llm.staging.acme.example"),
            ("        - region: use1\n          pool: l40s", "        - region: usw2\n          pool: l40s"),
            ("        - region: use1\n          pool: a100-mig", "        - region: usw2\n          pool: a100-mig"),
            ("        - region: use1\n          capability:", "        - region: usw2\n          capability:"),
        ],
    )


def write(directory: Path) -> None:
    (directory / "Pulumi.dev.yaml").write_text(edited_dev())
    (directory / "Pulumi.staging.yaml").write_text(staging())


if __name__ == "__main__":
    write(Path(sys.argv[1]))
