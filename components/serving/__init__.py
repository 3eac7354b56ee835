"""Workloads layer: model deployments (sizing, engine arguments, InferenceServices)."""
