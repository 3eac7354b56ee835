"""Every rule of the pack, grouped by what it protects (the README's order)."""

from __future__ import annotations

from policies.framework import Rule
from policies.rules import aws, disaggregation, gateway, gcp, gpu, kubernetes, llm, production, storage

CATEGORIES: dict[str, str] = {
    "aws": "AWS: EKS, EC2, IAM, KMS",
    "storage": "Model storage: S3 and GCS",
    "gcp": "GCP: GKE and node pools",
    "kubernetes": "Kubernetes workloads and Helm",
    "gpu": "GPU node pools",
    "llm": "Model servers (LLM sizing)",
    "disaggregation": "Disaggregated serving (KV hand-off)",
    "gateway": "AI gateway routes",
    "production": "Production",
}

ALL_RULES: tuple[Rule, ...] = (
    *aws.RULES,
    *storage.RULES,
    *gcp.RULES,
    *kubernetes.RULES,
    *gpu.RULES,
    *llm.RULES,
    *disaggregation.RULES,
    *gateway.RULES,
    *production.RULES,
)

assert len({r.name for r in ALL_RULES}) == len(ALL_RULES), "rule names must be unique"
