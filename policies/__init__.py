"""The platform's CrossGuard policy pack: the rules run by `pulumi preview --policy-pack build/policy-pack` (the
folder `make policy-pack` assembles, tools/policy_pack.py) and, in-process on the offline plan, by
`python -m tools.plan` (policies/offline.py)."""
