"""Entry point of the CrossGuard pack: assembles the rules into a PolicyPack, nothing else.

The Pulumi CLI runs this file with the pack directory (policies/) first on sys.path. The
rules import the project's catalog (components/) and themselves as `policies.*`, so the
repository root goes first instead, and the pack directory is removed: a module of the
pack must never be importable under two names.
"""

import sys
from pathlib import Path

PACK_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACK_DIR.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != PACK_DIR]
sys.path.insert(0, str(REPO_ROOT))

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from policies.crossguard import policies  # noqa: E402
from policies.rules import ALL_RULES  # noqa: E402

PolicyPack(
    name="inference-platform",
    policies=policies(ALL_RULES),
    enforcement_level=EnforcementLevel.MANDATORY,
    description="Security baselines and GPU/LLM rules for the inference platform (README: Policy rules).",
)
