"""Domain maths over the typed configuration: GPU slots, sizing, host shares, KV hand-off, pool resources.

Pure functions, no resources: the config checks, the workloads, the add-ons and plan.md run the same
computation, so validation and rendering cannot disagree.
"""
