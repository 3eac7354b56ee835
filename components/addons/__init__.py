"""Cluster add-ons: Helm releases and their configuration, installed on a ClusterHandle."""
