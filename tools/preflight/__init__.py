"""Preflight: will `pulumi up` get the GPUs? Offerings, quotas, reservations and model files, before apply.

Read-only cloud API calls against what `Pulumi.<env>.yaml` asks for; the offline plan
(`tools.plan`) answers what would be created, preflight whether the account can deliver it.
"""
