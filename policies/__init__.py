"""The platform's CrossGuard policy pack: the rules run by `pulumi preview --policy-pack policies` and,
in-process on the offline plan, by `python -m tools.plan` (policies/offline.py)."""
