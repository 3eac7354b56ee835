"""What CI needs to fan out: the environments in the repository, and each stack with the runner that reaches it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import yaml

from components.checks.loader import PROJECT
from components.config.environment import EnvironmentSpec
from components.config.stacks import StackSlice
from components.domain.deployers import deployer_of
from components.domain.stack_split import environment_stacks, global_deployer

HOSTED_RUNNER = "ubuntu-24.04"


def environments(project_dir: Path) -> list[str]:
    """`Pulumi.<env>.yaml` files that describe an environment (they list regions); per-stack files
    (`Pulumi.<env>.<region>.yaml`, holding e.g. a secrets provider) are not environments."""
    found = []
    for path in sorted(project_dir.glob("Pulumi.*.yaml")):
        name = path.name[len("Pulumi.") : -len(".yaml")]
        if "." in name:
            continue
        try:
            document = yaml.safe_load(path.read_text())
        except yaml.YAMLError:  # still an environment: its plan job reports the syntax error (exit 2)
            found.append(name)
            continue
        config = document.get("config") if isinstance(document, dict) else None
        if isinstance(config, dict) and f"{PROJECT}:regions" in config:
            found.append(name)
    return found


def stack_regions(env: EnvironmentSpec, stack: StackSlice) -> list[str]:
    """Region entries whose clusters a stack deploys to."""
    if stack.kind == "environment":
        return [r.name for r in env.regions]
    return [stack.region] if stack.region else []


def runner_labels(env: EnvironmentSpec, env_name: str, stack: StackSlice) -> str | list[str]:
    """`runs-on` of the job that previews or deploys a stack: where its deployer is (components/config/deployer.py).

    A declared `runnerLabel` wins. Otherwise a self-hosted runner labelled `<env>-<region>`: inside the network,
    behind the private link, or at the egress CIDRs the endpoint allows (a hosted runner's address is none of
    these). The global stack runs where the federation host's stack does (it applies the Karmada allowlist on
    the host cluster), or on a hosted runner when nothing federates (it calls only cloud APIs)."""
    if stack.kind == "global":
        deployer, region = global_deployer(env), env.federation.host
    else:
        regions = stack_regions(env, stack)
        # One stack for several regions: each must accept the same runner (check_deployers); take the first's.
        deployer, region = deployer_of(env.region(regions[0])), regions[0] if len(regions) == 1 else None
    if deployer is None:
        return HOSTED_RUNNER
    if deployer.runner_label:
        return deployer.runner_label
    return ["self-hosted", PROJECT, f"{env_name}-{region}" if region else env_name]


def mixed_runners(env: EnvironmentSpec, env_name: str, stacks: Sequence[str]) -> str | None:
    """Why one job cannot deploy these stacks (`make rollout WAVE=<wave>` runs on one runner), or None: their
    `runs-on` differ. A whole `make rollout` from a host that reaches every cluster deploys them all."""
    slices = {s.name: s for s in environment_stacks(env, env_name)}
    labels = {stack: runner_labels(env, env_name, slices[stack]) for stack in stacks}
    if len({json.dumps(label) for label in labels.values()}) < 2:
        return None
    return "its stacks deploy from different runners (" + "; ".join(f"{s} on {labels[s]}" for s in stacks) + ")"


def stack_matrix(env: EnvironmentSpec, env_name: str) -> list[dict]:
    """One entry per stack, in rollout order: what the preview job's matrix runs."""
    rows = []
    for stack in environment_stacks(env, env_name):
        regions = stack_regions(env, stack)
        specs = [env.region(r) for r in regions]
        rows.append(
            {
                "env": env_name,
                "stack": stack.name,
                "kind": stack.kind,
                "regions": regions,
                # the global stack wires buckets and federation across every cloud of the environment
                "clouds": sorted({s.cloud for s in (specs or env.regions)}),
                "cloudRegions": [s.region for s in specs],
                "runsOn": runner_labels(env, env_name, stack),
            }
        )
    return rows
