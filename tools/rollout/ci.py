"""What CI needs to fan out: the environments in the repository, and each stack with the runner that reaches it."""

from __future__ import annotations

from pathlib import Path

import yaml

from components.config.environment import EnvironmentSpec
from components.config.loader import PROJECT
from components.config.stacks import StackSlice, environment_stacks

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
    """`runs-on` of the job that previews or deploys a stack: a runner that reaches its cluster API.

    Every cluster API is taken as private until regions declare their deployer: a stack with clusters runs on
    a self-hosted runner in its region's VPC, labelled `<env>-<region>`; the global stack reaches only the
    Karmada load balancer and the state backend, from a hosted runner."""
    regions = stack_regions(env, stack)
    if not regions:
        return HOSTED_RUNNER
    label = f"{env_name}-{regions[0]}" if len(regions) == 1 else env_name
    return ["self-hosted", PROJECT, label]


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
