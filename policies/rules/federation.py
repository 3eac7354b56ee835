"""Karmada federation: what the control plane propagates reaches every member as intended."""

from __future__ import annotations

from collections.abc import Iterator

from policies.framework import Context, Violation, rule
from policies.model import Resource


@rule(
    name="karmada-overrides-apply",
    description="Every OverridePolicy patch applies to each member's copy of the template it selects (Karmada "
    "refuses the whole override, and the member gets no object, when one operation does not apply).",
    severity="high",
    remediation="make each plaintext path exist in the template (use operator add for new keys, escape '/' in "
    "keys as ~1), or remove the operation",
    applies_to=("propagated Kubernetes objects",),
    subject=lambda r: r.propagated is not None,
    scope="stack",
)
def karmada_overrides_apply(r: Resource, ctx: Context) -> Iterator[Violation]:
    if r.override_error:
        yield Violation(f"{r.label}: {r.override_error}")


RULES = [karmada_overrides_apply]
