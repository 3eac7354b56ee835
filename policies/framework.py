"""Rules, their metadata and configuration, and how a rule is evaluated on a resource.

A rule is a plain function `check(resource, ctx)` that yields `Violation`s (or `CannotCheck`s)
for one subject resource; `scope="stack"` rules also read other resources through
`ctx.stack`. The same functions run under the Pulumi engine (policies/crossguard.py) and
in-process on the offline plan (policies/offline.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from platform_catalog.names import PRIVILEGED_NAMESPACES
from policies.model import NotKnown, Resource, Stack, one_pass

Severity = Literal["low", "medium", "high", "critical"]
Level = Literal["advisory", "mandatory", "disabled"]
LEVELS: tuple[Level, ...] = ("advisory", "mandatory", "disabled")


@dataclass(frozen=True)
class ConfigKey:
    schema: dict[str, Any]
    default: Any = None


# Pack configuration a rule may read (per policy, as CrossGuard passes it; offline the plan fills
# `production` and `labelDomain` from the environment spec).
CONFIG: dict[str, ConfigKey] = {
    "production": ConfigKey(
        {"type": "boolean", "description": "The stack is a production environment (not visible on resources)."}
    ),
    "labelDomain": ConfigKey(
        {"type": "string", "description": "Domain of the shared node labels; unset: match label keys by suffix."}
    ),
    "privilegedNamespaces": ConfigKey(
        {
            "type": "array",
            "items": {"type": "string"},
            "description": "Namespaces allowed privileged pods, host namespaces and hostPath (GPU operator, cache).",
        },
        list(PRIVILEGED_NAMESPACES),
    ),
    "clusterAdminServiceAccounts": ConfigKey(
        {
            "type": "array",
            "items": {"type": "string"},
            "description": "<namespace>/<name> of service accounts that manage the whole cluster by design (Karmada's "
            "push-mode controller on members); offline, filled from the environment spec.",
        },
        [],
    ),
    "federationMembers": ConfigKey(
        {
            "type": "array",
            "items": {"type": "string"},
            "description": "The Karmada member clusters the environment federates, in whichever of its stacks they are "
            "declared (a per-region environment issues every agent's certificate in the host's stack and declares the "
            "members in the global one); offline, filled from the whole plan.",
        },
        [],
    ),
    "namespaceSecretReaders": ConfigKey(
        {
            "type": "array",
            "items": {"type": "string"},
            "description": "<namespace>/<name> of service accounts that read every Secret of their own namespace by "
            "design (Clusterpedia's synchro manager: the members' credentials); offline, filled from the environment "
            "spec.",
        },
        [],
    ),
    "noAutoRepairPools": ConfigKey(
        {
            "type": "array",
            "items": {"type": "string"},
            "description": "GKE node pool names that must not auto-repair (DWS flex-start pools); offline, filled from "
            "the environment spec's gpuPools.",
        },
        [],
    ),
    "rolloutSloTenant": ConfigKey(
        {
            "type": "string",
            "description": "The tenant whose API key `make rollout`'s SLO gate calls with (rollout.slo.tenant); offline, "
            "filled from the environment spec.",
        }
    ),
    "rolloutSloModels": ConfigKey(
        {
            "type": "array",
            "items": {"type": "string"},
            "description": "The models that gate sends to (rollout.slo models and waves, else the tenant's); offline, "
            "filled from the environment spec.",
        },
        [],
    ),
    "rootImages": ConfigKey(
        {
            "type": "array",
            "items": {"type": "string"},
            "description": "Image repositories known to need root (runAsNonRoot is not required of them).",
        },
        [],
    ),
}


@dataclass(frozen=True)
class Context:
    """What a rule knows besides the resource: pack config and, for stack rules, the whole stack."""

    config: Mapping[str, Any] = field(default_factory=dict)
    stack: Stack | None = None

    def value(self, key: str) -> Any:
        value = self.config.get(key)
        return CONFIG[key].default if value is None else value

    @property
    def production(self) -> bool | None:
        value = self.config.get("production")
        return None if value is None else bool(value)

    @property
    def label_domain(self) -> str | None:
        return self.config.get("labelDomain") or None

    @property
    def privileged_namespaces(self) -> tuple[str, ...]:
        return tuple(self.value("privilegedNamespaces"))

    @property
    def cluster_admin_service_accounts(self) -> tuple[str, ...]:
        return tuple(self.value("clusterAdminServiceAccounts"))

    @property
    def federation_members(self) -> tuple[str, ...]:
        return tuple(self.value("federationMembers"))

    @property
    def namespace_secret_readers(self) -> tuple[str, ...]:
        return tuple(self.value("namespaceSecretReaders"))

    @property
    def root_images(self) -> tuple[str, ...]:
        return tuple(self.value("rootImages"))

    def require_stack(self) -> Stack:
        assert self.stack is not None, "stack rule evaluated without a stack"
        return self.stack


@dataclass(frozen=True)
class Violation:
    """What a check yields: the problem, optionally a specific fix and another resource to blame."""

    message: str
    fix: str | None = None
    urn: str | None = None


@dataclass(frozen=True)
class CannotCheck(Violation):
    """The check cannot decide (missing annotation, unknown value, missing config): reported as advisory."""


Kind = Literal["violation", "cannot-check", "error"]


@dataclass(frozen=True)
class Finding:
    policy: str
    enforcement_level: Level
    urn: str
    message: str
    kind: Kind

    def to_json(self) -> dict[str, str]:
        """The policy.json entry (DESIGN.md §3)."""
        return {
            "policy": self.policy,
            "enforcementLevel": self.enforcement_level,
            "urn": self.urn,
            "message": self.message,
        }


Check = Callable[[Resource, Context], Iterable[Violation]]


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    severity: Severity
    enforcement: Level
    remediation: str
    scope: Literal["resource", "stack"]
    applies_to: tuple[str, ...]  # what the subjects are, for the docs (type tokens or kinds)
    subject: Callable[[Resource], bool]
    check: Check
    config: tuple[str, ...] = ()
    category: str = ""

    def message(self, finding: Violation) -> str:
        prefix = "cannot check: " if isinstance(finding, CannotCheck) else ""
        text = finding.message.rstrip(".")
        return f"{prefix}{text}. Fix: {finding.fix or self.remediation}"

    def evaluate(self, resource: Resource, ctx: Context, level: Level | None = None) -> list[Finding]:
        """Findings of this rule on one subject; never raises."""
        level = level or self.enforcement
        findings: list[Finding] = []

        def add(v: Violation, kind: Kind) -> None:
            findings.append(
                Finding(
                    self.name,
                    level if kind == "violation" else "advisory",
                    v.urn or resource.urn,
                    self.message(v),
                    kind,
                )
            )

        try:
            for v in self.check(resource, ctx):
                add(v, "cannot-check" if isinstance(v, CannotCheck) else "violation")
        except NotKnown as exc:
            add(
                CannotCheck(
                    f"{resource.label}: {exc.path} is not known yet (computed from another resource)",
                    fix="nothing to change if the value is right; the rule runs again during `pulumi up` "
                    "when the value is known",
                ),
                "cannot-check",
            )
        except Exception as exc:  # a rule bug must not stop a deployment check: report it, loudly
            add(
                CannotCheck(
                    f"{resource.label}: rule failed ({type(exc).__name__}: {exc})",
                    fix="report this as a bug in the policy pack",
                ),
                "error",
            )
        return findings


def rule(
    *,
    name: str,
    description: str,
    severity: Severity,
    remediation: str,
    applies_to: tuple[str, ...],
    subject: Callable[[Resource], bool] | None = None,
    enforcement: Level = "mandatory",
    scope: Literal["resource", "stack"] = "resource",
    config: tuple[str, ...] = (),
) -> Callable[[Check], Rule]:
    """Decorator turning a check function into a Rule; subjects default to the `applies_to` type tokens."""
    unknown = set(config) - set(CONFIG)
    assert not unknown, f"{name}: unknown config keys {unknown}"
    types = frozenset(applies_to)

    def wrap(check: Check) -> Rule:
        return Rule(
            name=name,
            description=description,
            severity=severity,
            enforcement=enforcement,
            remediation=remediation,
            scope=scope,
            applies_to=applies_to,
            subject=subject or (lambda r: r.type in types),
            check=check,
            config=config,
            category=check.__module__.rsplit(".", 1)[-1],
        )

    return wrap


def evaluate_stack(
    rules: Iterable[Rule], resources: Iterable[Resource], settings: PackSettings, *, previewed_alone: bool = False
) -> Evaluation:
    """Every rule on every subject, with the given pack settings (enforcement overrides, config); `previewed_alone`:
    the resources are one stack as `pulumi preview` of it alone sees it (policies.model.Stack)."""
    with one_pass():
        return _evaluate(rules, Stack(resources, previewed_alone=previewed_alone), settings)


def _evaluate(rules: Iterable[Rule], stack: Stack, settings: PackSettings) -> Evaluation:
    evaluation = Evaluation()
    for r in rules:
        level = settings.level(r)
        if level == "disabled":
            evaluation.subjects[r.name] = 0
            evaluation.levels[r.name] = level
            continue
        ctx = Context(settings.config_for(r), stack if r.scope == "stack" else None)
        # Resource rules see what the program declares, as CrossGuard hands them one resource; stack rules
        # see what runs (Karmada templates as their members' copies), as under the engine's stack policy.
        candidates = stack.resources if r.scope == "stack" else stack.declared
        subjects = [res for res in candidates if r.subject(res)]
        evaluation.subjects[r.name] = len(subjects)
        evaluation.levels[r.name] = level
        for res in subjects:
            evaluation.findings.extend(r.evaluate(res, ctx, level))
    return evaluation


@dataclass
class Evaluation:
    findings: list[Finding] = field(default_factory=list)
    subjects: dict[str, int] = field(default_factory=dict)  # rule -> resources it applied to
    levels: dict[str, Level] = field(default_factory=dict)  # rule -> effective enforcement level

    @property
    def mandatory(self) -> list[Finding]:
        return [f for f in self.findings if f.enforcement_level == "mandatory"]

    def of(self, rule_name: str, kind: Kind | None = None) -> list[Finding]:
        return [f for f in self.findings if f.policy == rule_name and (kind is None or f.kind == kind)]


@dataclass(frozen=True)
class PackSettings:
    """Pack configuration in the CrossGuard `--policy-pack-config` format.

    `{"all": "advisory", "<rule>": "mandatory" | {"enforcementLevel": ..., "<key>": value}}`
    """

    raw: Mapping[str, Any] = field(default_factory=dict)

    def level(self, r: Rule) -> Level:
        for key in (r.name, "all"):
            entry = self.raw.get(key)
            value = entry.get("enforcementLevel") if isinstance(entry, dict) else entry
            if value is not None:
                if value not in LEVELS:
                    raise ValueError(f"policy config {key!r}: enforcement level {value!r}; use one of {LEVELS}")
                return value
        return r.enforcement

    def config_for(self, r: Rule) -> dict[str, Any]:
        entry = self.raw.get(r.name)
        values = {k: v for k, v in entry.items() if k != "enforcementLevel"} if isinstance(entry, dict) else {}
        return {k: values[k] for k in r.config if k in values}

    def merged(self, values: Mapping[str, Any], rules: Iterable[Rule]) -> PackSettings:
        """These settings plus `values` (e.g. production from the spec) for every rule that reads them."""
        raw: dict[str, Any] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in self.raw.items()}
        for r in rules:
            keys = {k: v for k, v in values.items() if k in r.config and v is not None}
            if not keys:
                continue
            entry = raw.get(r.name)
            entry = dict(entry) if isinstance(entry, dict) else ({"enforcementLevel": entry} if entry else {})
            raw[r.name] = {**entry, **keys}
        return PackSettings(raw)
