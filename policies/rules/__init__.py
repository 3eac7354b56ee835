"""Every rule of the pack, grouped by what it protects (the README's order)."""

from __future__ import annotations

from policies.framework import Rule
from policies.rules import (
    aws,
    disaggregation,
    federation,
    gateway,
    gcp,
    gpu,
    helm,
    iam,
    kubernetes,
    llm,
    network,
    priority,
    production,
    rollout,
    search,
    secrets,
    storage,
)

CATEGORIES: dict[str, str] = {
    "aws": "AWS: EKS, EC2, IAM, KMS",
    "iam": "Identity and access: AWS policies, GCP IAM, Kubernetes RBAC",
    "network": "Network exposure",
    "secrets": "Secrets",
    "storage": "Model storage: S3 and GCS",
    "gcp": "GCP: GKE and node pools",
    "kubernetes": "Kubernetes workloads and Helm",
    "helm": "Helm values as workloads",
    "gpu": "GPU node pools",
    "llm": "Model servers (LLM sizing)",
    "disaggregation": "Disaggregated serving (KV hand-off)",
    "gateway": "AI gateway routes",
    "priority": "Request priority classes",
    "federation": "Karmada federation",
    "search": "Multi-cluster search (Clusterpedia)",
    "rollout": "Rollout gates (the SLO load test's tenant)",
    "production": "Production",
}

ALL_RULES: tuple[Rule, ...] = (
    *aws.RULES,
    *iam.RULES,
    *network.RULES,
    *secrets.RULES,
    *storage.RULES,
    *gcp.RULES,
    *kubernetes.RULES,
    *helm.RULES,
    *gpu.RULES,
    *llm.RULES,
    *disaggregation.RULES,
    *gateway.RULES,
    *priority.RULES,
    *federation.RULES,
    *search.RULES,
    *rollout.RULES,
    *production.RULES,
)

assert len({r.name for r in ALL_RULES}) == len(ALL_RULES), "rule names must be unique"
