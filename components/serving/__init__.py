"""Workloads layer: model deployments (engine arguments, InferenceServices, autoscaling), sized by components/domain."""
