"""The scanners the pack wraps: parliament (IAM policy validity), cloudsplaining (IAM risk) and
detect-secrets (secret material in strings).

Each is imported once, when the pack loads, and called on plain data; the rules decide what a
finding means for this platform. Nothing here re-implements what the libraries do.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import parliament
from cloudsplaining.scan.policy_document import PolicyDocument
from detect_secrets.core.scan import scan_line
from detect_secrets.settings import configure_settings_from_baseline, get_plugins

# parliament and policy_sentry log every unknown action at WARNING; the findings carry them.
for _name in ("parliament", "policy_sentry", "cloudsplaining"):
    logging.getLogger(_name).setLevel(logging.ERROR)

# parliament finding groups that make a policy wrong rather than merely broad (NOT_IDEAL and OLD,
# e.g. RESOURCE_STAR, are what cloudsplaining's risk checks judge instead).
INVALID_GROUPS = frozenset({"ERROR", "MALFORMED", "INVALID", "LOGICAL_INCONSISTANCY", "BAD_PATTERN"})


@dataclass(frozen=True)
class PolicyFinding:
    issue: str
    detail: str


def policy_validity(document: dict) -> list[PolicyFinding]:
    """parliament's findings that make an IAM policy document invalid or inconsistent."""
    return list(_policy_validity(json.dumps(document, sort_keys=True)))


@lru_cache(maxsize=512)
def _policy_validity(text: str) -> tuple[PolicyFinding, ...]:
    policy = parliament.analyze_policy_string(text)
    found = []
    for finding in policy.findings:
        group = parliament.config.get(finding.issue, {}).get("group", "ERROR")
        if group in INVALID_GROUPS:
            found.append(PolicyFinding(finding.issue, _detail(finding.detail)))
    return tuple(found)


def _detail(detail: object) -> str:
    text = json.dumps(detail, default=str) if not isinstance(detail, str) else detail
    return text if len(text) <= 160 else text[:157] + "..."


@dataclass(frozen=True)
class Risks:
    """cloudsplaining's risk categories of one identity policy (actions allowed without resource constraints)."""

    privilege_escalation: tuple[str, ...]
    data_exfiltration: tuple[str, ...]
    resource_exposure: tuple[str, ...]
    infrastructure_modification: tuple[str, ...]

    def items(self) -> Iterator[tuple[str, tuple[str, ...]]]:
        yield "privilege escalation", self.privilege_escalation
        yield "data exfiltration", self.data_exfiltration
        yield "resource exposure", self.resource_exposure
        yield "infrastructure modification", self.infrastructure_modification


def policy_risks(document: dict) -> Risks:
    return _policy_risks(json.dumps(document, sort_keys=True))


@lru_cache(maxsize=512)
def _policy_risks(text: str) -> Risks:
    doc = PolicyDocument(json.loads(text))
    escalation = tuple(sorted({a for method in doc.allows_privilege_escalation for a in method["actions"]}))
    return Risks(
        privilege_escalation=escalation,
        data_exfiltration=tuple(doc.allows_data_exfiltration_actions),
        resource_exposure=tuple(doc.permissions_management_without_constraints),
        infrastructure_modification=tuple(doc.infrastructure_modification),
    )


# Both libraries load their IAM action database on first use: load it now, with the pack.
_WARM_UP = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}
_policy_validity(json.dumps(_WARM_UP))
_policy_risks(json.dumps(_WARM_UP))


def allowed_actions(statement: dict) -> list[str]:
    """The IAM actions an Allow statement grants, wildcards and NotAction expanded (cloudsplaining's expansion)."""
    doc = PolicyDocument({"Version": "2012-10-17", "Statement": [statement]})
    return [a for s in doc.statements for a in s.expanded_actions or []]


# The detectors for credentials this platform handles or an engineer might paste: cloud and registry
# keys, git tokens, LLM API keys, bearer JWTs, private keys, passwords and credentials in URLs, alerting
# webhooks. Each detector costs a regex per scanned line, so vendors the platform never uses (IBM,
# Softlayer, Cloudant, Mailchimp, Square, Telegram, Discord, ...) are left out, and so are the entropy
# detectors: plan values are full of ids, hashes and digests that look random.
SECRET_PLUGINS = (
    "ArtifactoryDetector",
    "AWSKeyDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "JwtTokenDetector",
    "KeywordDetector",
    "OpenAIDetector",
    "PrivateKeyDetector",
    "SendGridDetector",
    "SlackDetector",
)
_SETTINGS = {
    "plugins_used": [{"name": name} for name in SECRET_PLUGINS],
    "filters_used": [
        {"path": "detect_secrets.filters.heuristic.is_indirect_reference"},
        {"path": "detect_secrets.filters.heuristic.is_templated_secret"},
        {"path": "detect_secrets.filters.heuristic.is_prefixed_with_dollar_sign"},
        {"path": "detect_secrets.filters.heuristic.is_potential_uuid"},
        {"path": "detect_secrets.filters.heuristic.is_sequential_string"},
    ],
}


# The pack's process is the only user of detect-secrets' global settings: set them once, not per call.
configure_settings_from_baseline(_SETTINGS)
get_plugins()  # loads the detector modules now, with the pack, not on the first scanned string


def secret_types(key: str, value: str) -> list[str]:
    """detect-secrets' secret types found in `value`, its first line read as `key: "line"` (so the keyword
    detector sees what the value is called); one entry per type."""
    found: set[str] = set()
    for i, line in enumerate(value.splitlines() or [value]):  # a PEM block is recognised by its header line
        found.update(_line_types(f'{key}: "{line}"' if i == 0 and key else line))
    return sorted(found)


@lru_cache(maxsize=16384)
def _line_types(line: str) -> frozenset[str]:
    """Lines repeat across resources (regions, dashboards): each distinct one is scanned once."""
    return frozenset(s.type for s in scan_line(line))
