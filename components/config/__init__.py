"""Typed, validated specifications of an environment (pydantic v2).

These models are the single description of what a user may write in
`Pulumi.<env>.yaml`; components take (parts of) them as their typed args.
"""
