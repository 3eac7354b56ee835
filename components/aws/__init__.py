"""AWS cloud layer: network, EKS cluster, IAM for workloads."""
