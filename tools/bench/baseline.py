"""The SDK's floor: a program that registers exactly the resources of a plan, with nothing of ours.

Same types, names, parents, providers, inputs and options as `plan.json`, declared one after
the other with literal values: no config, no components, no Outputs flowing between
resources. A plan runs its program once per stack, and once more for a region stack's
network-first bootstrap (`make rollout BOOTSTRAP=1`); the floor runs once per such run
(`program_runs`), so it registers what the plan's runs register, as many times. It first
imports the provider SDK classes those types need, as any program declaring them must (that
cost is the SDK's). Two flavours:

- plain: `pulumi.CustomResource(<type token>, ...)`, the bare SDK;
- typed: the provider SDK's own class for each type (`aws.ec2.Vpc`, ...), which registers
  every input and output property of the type and costs over twice as much per resource.

Evaluated by the plan's own engine and mocks, a floor's time is what the SDK costs for that
resource set; the plan's time over it is what our program adds.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from collections.abc import Callable
from functools import cache
from typing import Any, cast

import pulumi
from pulumi import _types
from pulumi.runtime import rpc

from tools.plan.artifacts import plan_document
from tools.plan.engine import SECRET
from tools.plan.model import Plan
from tools.plan.phases import phase

_PROVIDER_PREFIX = "pulumi:providers:"


def evaluated_runs(plan: Plan) -> list[Plan]:
    """Each run of the program the plan made, in its order: a stack, then its network-first bootstrap."""
    stacks = list(plan.stacks.values()) or [plan]
    return [run for stack in stacks for run in (stack, stack.bootstrap) if run is not None]


def program_runs(plan: Plan) -> list[dict[str, Any]]:
    """The plan document of each of its runs (`evaluated_runs`), as the JSON a floor reads: literal values only."""
    return [json.loads(json.dumps(plan_document(run, with_cost=False))) for run in evaluated_runs(plan)]


@cache
def sdk_class(token: str) -> type | None:
    """The provider SDK class a typed program uses for a resource type (imported), None for our components.

    Resolved through the SDK's own resource registry, so a floor pays for exactly the
    provider modules its resource set needs.
    """
    pkg, mod, name = token.split(":", 2)
    if token.startswith(_PROVIDER_PREFIX):
        pkg = name
    if not (pkg.isidentifier() and importlib.util.find_spec(f"pulumi_{pkg}")):
        return None
    importlib.import_module(f"pulumi_{pkg}")  # registers its modules with the SDK
    if token.startswith(_PROVIDER_PREFIX):
        package: Any = rpc.get_resource_package(pkg, "")  # a generated class: its pkg_info is not in the protocol
        info = package.pkg_info
        return getattr(importlib.import_module(info["fqn"]), info["class"])
    if (module := rpc.get_resource_module(pkg, mod, "")) is not None:
        info = cast(Any, module).mod_info  # a generated class: its mod_info is not in the protocol
        return getattr(importlib.import_module(info["fqn"]), info["classes"][token])
    if pkg == "kubernetes":  # kinds of CRDs have no class of their own (nor do their server-side-apply patches)
        apiextensions = importlib.import_module("pulumi_kubernetes.apiextensions")
        return apiextensions.CustomResourcePatch if token.endswith("Patch") else apiextensions.CustomResource
    raise LookupError(f"no provider SDK class is registered for {token}")


def _reveal(value: Any) -> Any:
    """Redacted secrets go back in as secrets, so the engine sees the same secret inputs."""
    if value == SECRET:
        return pulumi.Output.secret(SECRET)
    if isinstance(value, dict):
        return {k: _reveal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_reveal(v) for v in value]
    return value


def _options(resource: dict[str, Any], created: dict[str, pulumi.Resource]) -> pulumi.ResourceOptions:
    options = resource["options"]
    return pulumi.ResourceOptions(
        parent=created.get(resource["parent"] or ""),  # None: the stack
        provider=cast(pulumi.ProviderResource, created[resource["provider"]]) if resource["provider"] else None,
        depends_on=[created[urn] for urn in options["dependsOn"]],
        protect=options["protect"],
        retain_on_delete=options["retainOnDelete"],
        ignore_changes=options["ignoreChanges"] or None,
        delete_before_replace=options["deleteBeforeReplace"],
        replace_on_changes=options["replaceOnChanges"] or None,
        custom_timeouts=pulumi.CustomTimeouts(**options["customTimeouts"]) if options["customTimeouts"] else None,
    )


_CRD_FIELDS = {"apiVersion", "kind", "metadata", "spec"}


# replaceOnChanges an SDK class adds to every instance itself (pulumi_command local/command.py: `triggers[*]`): the
# plan records them once, so the typed floor passes only the rest.
_CLASS_REPLACE_ON_CHANGES = {"command:local:Command": ("triggers[*]",)}


def _typed_resource(r: dict[str, Any], props: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.Resource:
    """The resource through its provider SDK class, with the same (camelCase) inputs."""
    own = _CLASS_REPLACE_ON_CHANGES.get(r["type"], ())
    if own and (paths := opts.replace_on_changes):
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions())
        opts.replace_on_changes = [path for path in paths if path not in own] or None
    cls = sdk_class(r["type"])
    if cls is None:
        raise LookupError(f"{r['type']} is not a provider resource")
    if r["type"].startswith("kubernetes:") and cls.__module__.startswith("pulumi_kubernetes.apiextensions"):
        if not set(props) <= _CRD_FIELDS:  # a CR the typed class cannot express: plain is what remains
            return pulumi.CustomResource(r["type"], r["name"], props, opts)
        fields = {k: props[k] for k in ("metadata", "spec") if k in props}
        return cls(r["name"], api_version=props["apiVersion"], kind=props["kind"], opts=opts, **fields)
    names = _types.resource_pulumi_to_py_names(cls)
    return cls(r["name"], opts=opts, **{names.get(k, k): v for k, v in props.items()})


_OUR_COMPONENTS = ("inference-platform:", "pulumi:pulumi:Stack")


def baseline_program(document: dict[str, Any], typed: bool = False) -> Callable[[], None]:
    """A program registering `document["resources"]` (plan.json, in registration order) and its outputs.

    Plain: `pulumi.CustomResource` with the type token. Typed: the provider SDK's class for
    the type (what a hand-written program without our components would use), with literal
    inputs; providers stay plain in both (their inputs are recorded as the JSON text the SDK
    sends).
    """

    def program() -> None:
        with phase("sdk_imports"):
            for token in sorted({r["type"] for r in document["resources"]}):
                sdk_class(token)
        created: dict[str, pulumi.Resource] = {}
        for r in document["resources"]:
            opts = _options(r, created)
            props = _reveal(r["inputs"])
            if r["type"].startswith(_PROVIDER_PREFIX):
                resource: pulumi.Resource = pulumi.ProviderResource(
                    r["type"].removeprefix(_PROVIDER_PREFIX), r["name"], props, opts
                )
            elif r["custom"]:
                resource = (
                    _typed_resource(r, props, opts)
                    if typed
                    else pulumi.CustomResource(r["type"], r["name"], props, opts)
                )
            elif r["type"].startswith(_OUR_COMPONENTS):
                resource = pulumi.ComponentResource(r["type"], r["name"], None, opts)
                resource.register_outputs({})
            else:  # a provider's multi-language component (e.g. kubernetes:yaml/v2:ConfigFile)
                resource = pulumi.ComponentResource(r["type"], r["name"], props, opts, remote=True)
            created[r["urn"]] = resource
        for key, value in document["outputs"].items():
            pulumi.export(key, _reveal(value))

    return program
