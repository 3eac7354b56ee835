"""Cluster add-ons: GPU operator, model cache, schedulers, serving stack, observability."""
