"""Cluster add-ons: what every GPU cluster runs on top of the cloud's Kubernetes."""
