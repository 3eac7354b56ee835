"""Entry point of the CrossGuard pack: assembles the rules into a PolicyPack, nothing else.

The Pulumi CLI runs the pack folder's `__main__.py` with that folder first on sys.path (`python -m pulumi.policy
<engine> <folder>`, runpy). `make policy-pack` assembles the folder: this file beside the `policies` and
`platform_catalog` packages, PulumiPolicy.yaml and requirements.txt (tools/policy_pack.py, docs/policy.md).
"""

from pulumi_policy import EnforcementLevel, PolicyPack

from policies.crossguard import policies
from policies.rules import ALL_RULES

PolicyPack(
    name="inference-platform",
    policies=policies(ALL_RULES),
    enforcement_level=EnforcementLevel.MANDATORY,
    description="Security baselines and GPU/LLM rules for the inference platform (docs/policy.md).",
)
