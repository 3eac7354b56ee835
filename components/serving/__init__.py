"""Model serving: the serving namespace and identity, model deployments."""
