"""The rules as Pulumi CrossGuard policies (`pulumi preview --policy-pack build/policy-pack`).

Inputs arrive wrapped in proxies that raise on unknown values; they are unwrapped into
plain data with `UNKNOWN` markers so that one unknown field turns into a "cannot check"
for that resource instead of aborting the whole policy. "Cannot check" findings are
raised as the SDK's UnknownValueError, which the engine reports as an advisory diagnostic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError, _DictProxy, _ListProxy
from pulumi_policy.secret import Secret

from policies.framework import CONFIG, Context, Finding, Rule
from policies.model import OFFLINE_SECRET, Resource, Stack, normalize


class CannotCheckError(UnknownValueError):
    """Carries our "cannot check" messages through the SDK's advisory path for unknowns."""

    def __init__(self, message: str):
        Exception.__init__(self, message)
        self.message = message


def plain(value: Any) -> Any:
    """Unwrap the SDK's proxies without tripping their unknown checks; a secret becomes the offline plan's secret
    marker, so both runs see the same value (not readable) and secrets-stay-secret can tell secret from plain."""
    if isinstance(value, _DictProxy | _ListProxy):
        return plain(value["__target"])
    if isinstance(value, Secret):
        return OFFLINE_SECRET
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [plain(v) for v in value]
    return value


def _resource(type_: str, props: Any, urn: str, name: str, protect: bool, parent, provider, deps=None) -> Resource:
    return Resource(
        urn=urn,
        type=type_,
        name=name,
        props=normalize(plain(props)),
        protect=bool(protect),
        retain_on_delete=None,
        parent=parent,
        provider=provider.urn if provider is not None else None,
        deps=deps or {},
    )


def _from_stack_resource(r: PolicyResource) -> Resource:
    deps = {k: [d.urn for d in v] for k, v in (r.property_dependencies or {}).items()}
    parent = r.parent.urn if r.parent is not None else None
    return _resource(r.resource_type, r.props, r.urn, r.name, r.opts.protect, parent, r.provider, deps)


def _report(findings: Iterable[Finding], report: ReportViolation) -> None:
    unchecked = []
    for f in findings:
        if f.kind == "violation":
            report(f.message, f.urn)
        else:
            unchecked.append(f"{f.urn}: {f.message}")
    if unchecked:
        raise CannotCheckError("; ".join(unchecked))


def to_policy(rule: Rule) -> Policy:
    schema = PolicyConfigSchema({k: {**CONFIG[k].schema} for k in rule.config}) if rule.config else None
    common: dict[str, Any] = {
        "name": rule.name,
        "description": rule.description,
        "enforcement_level": EnforcementLevel(rule.enforcement),
        "severity": Severity(rule.severity),
        "remediation_steps": rule.remediation,
        "config_schema": schema,
        "tags": [rule.category],
    }
    if rule.scope == "resource":

        def validate_resource(args: ResourceValidationArgs, report: ReportViolation) -> None:
            resource = _resource(
                args.resource_type, args.props, args.urn, args.name, args.opts.protect, args.opts.parent, args.provider
            )
            if rule.subject(resource):
                _report(rule.evaluate(resource, Context(dict(args.get_config()))), report)

        return ResourceValidationPolicy(validate=validate_resource, **common)

    def validate_stack(args: StackValidationArgs, report: ReportViolation) -> None:
        stack = Stack((_from_stack_resource(r) for r in args.resources), previewed_alone=True)
        ctx = Context(dict(args.get_config()), stack)
        findings = [f for r in stack.resources if rule.subject(r) for f in rule.evaluate(r, ctx)]
        _report(findings, report)

    return StackValidationPolicy(validate=validate_stack, **common)


def policies(rules: Iterable[Rule]) -> list[Policy]:
    return [to_policy(r) for r in rules]
