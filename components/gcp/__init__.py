"""GCP cloud layer: network and GKE cluster."""
