"""EKS node images (the AL2023 AMI release every managed node group runs) and how their nodes pull images.

The AMI is pinned: nodeadm, which reads the NodeConfig in a GPU pool's launch template, containerd and the SOCI
snapshotter come with it, and the facts below were read at this release. Moving it is a reviewed change (re-read
nodeadm at the new tag), like a chart pin; it replaces every node, one at a time.

Sources (awslabs/amazon-eks-ami, MIT-0):
- Release versions: CHANGELOG.md at tag v20260724, section "AMI Release v20260714" (the newest release whose notes
  the repository carries): L229 `1.34.9-20260714`, L310 `1.33.13-20260714`, each spanning (rowspan 5) the
  AL2023 x86_64 NVIDIA, NEURON and STANDARD and the arm64 AMIs of that Kubernetes minor.
- nodeadm is the same at v20260714 and v20260724 (`git diff v20260714 v20260724 -- nodeadm/internal nodeadm/api`
  is empty), so its behaviour is read at v20260724, whose docs are vendored (amazon-eks-ami/v20260724/).
"""

from __future__ import annotations

from typing import Literal

EKS_AMI_RELEASE = "v20260714"
# Kubernetes minor -> the managed node group's `releaseVersion` of that AMI release (every AL2023 AMI type).
EKS_AMI_RELEASE_VERSIONS: dict[str, str] = {"1.33": "1.33.13-20260714", "1.34": "1.34.9-20260714"}

# nodeadm ignores FastImagePull below 4 vCPU (4000 millicores) or 7 GiB of memory as the kernel reports it
# (internal/containerd/config.go L167-188, UseSOCISnapshotter).
FAST_IMAGE_PULL_MIN_VCPUS = 4
FAST_IMAGE_PULL_MIN_MEMORY_GIB = 7

ImagePull = Literal["default", "parallel"]

# How fast a new node pulls an engine image, in GiB of compressed layers per second: estimates, not measurements.
# - default: containerd's own pull. "Standard Docker image pulls of 15-20 GB can take 4-6 minutes per instance"
#   (AWS Machine Learning blog, "Reducing container cold start times using SOCI index on DLAMI and DLC", 2026):
#   0.04-0.08 GB/s; the slow end, rounded.
# - parallel: the SOCI snapshotter's parallel pull and unpack (nodeadm's FastImagePull): 20 ranged downloads of
#   16 MiB per image and 12 layers unpacked at once (the vendored soci-snapshotter.config.toml), onto the
#   instance-store RAID0 array; one layer still decompresses on one stream (unpigz), so the largest layer of an
#   engine image bounds it. Counted three times the default until measured on the pinned AMI.
PULL_GIB_PER_SECOND: dict[ImagePull, float] = {"default": 0.05, "parallel": 0.15}
