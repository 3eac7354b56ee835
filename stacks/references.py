"""Another stack of the same environment, read through a StackReference."""

from __future__ import annotations

from typing import Any

import pulumi


def stack_reference(stack: str, parent: pulumi.Resource | None = None) -> pulumi.StackReference:
    """`<organization>/<project>/<stack>`: the same project, in the organization this stack is deployed in."""
    return pulumi.StackReference(
        f"{pulumi.get_organization()}/{pulumi.get_project()}/{stack}",
        opts=pulumi.ResourceOptions(parent=parent),
    )


def output_item(reference: pulumi.StackReference, output: str, *keys: str) -> pulumi.Output[Any]:
    """One value inside a referenced stack's output, e.g. ("clusters", "use1", "endpoint")."""

    def pick(value: Any) -> Any:
        for key in keys:
            value = value[key]
        return value

    return reference.require_output(output).apply(pick)
