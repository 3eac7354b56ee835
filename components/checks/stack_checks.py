"""The names an environment deploys as: each a stack name Pulumi accepts, and `<env>.<slice>` unambiguous."""

from __future__ import annotations

import re

from components.config.base import Issue
from components.config.environment import EnvironmentSpec
from components.domain.stack_split import environment_stacks

# Pulumi stack names: letters, digits, '-', '_' and '.', at most 100 characters (pulumi/pulumi validateStackName,
# `^[a-zA-Z0-9-_.]{1,100}$`, "should match the stack naming rules enforced by the Pulumi Service").
_STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


def stack_name_issues(env: EnvironmentSpec, env_name: str) -> list[Issue]:
    """Every stack name the environment deploys as is one Pulumi accepts, and an environment split per region
    has a name without '.', which separates the environment from its slice (`prod.use1`)."""
    issues = []
    if env.stack_layout() == "perRegion" and "." in env_name:
        issues.append(
            Issue(
                "stacks.layout",
                f"environment name {env_name!r} holds '.', which would read as <env>.<slice>; "
                "rename Pulumi.<env>.yaml without dots",
            )
        )
    for piece in environment_stacks(env, env_name):
        if not _STACK_NAME.match(piece.name):
            where = f"regions[{[r.name for r in env.regions].index(piece.region)}].name" if piece.region else "stacks"
            issues.append(
                Issue(
                    where,
                    f"stack name {piece.name!r} is not one Pulumi accepts (letters, digits, '-', '_', '.', "
                    "at most 100 characters); shorten or rename it",
                )
            )
    return issues
