"""The shared node label schema of DESIGN.md §4 as far as the machine type decides it, and the GPU taint.

Every GPU pool, on either cloud, carries these; the program labels and taints its pools with them
(components/k8s/topology.py) and the policy pack checks each pool against them.
"""

from __future__ import annotations

from dataclasses import dataclass

from platform_catalog.machines import MachineType


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str

    @property
    def cloud_effect(self) -> str:
        """The effect as the EKS and GKE node pool APIs spell it (NoSchedule -> NO_SCHEDULE)."""
        return "".join(f"_{c}" if c.isupper() else c.upper() for c in self.effect).lstrip("_")


GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")


# The shared schema's label suffixes (DESIGN.md §4), under the configured label domain.
SCHEMA_LABELS = ("pool", "gpu-product", "gpu-memory-gib", "fabric", "placement-group", "nvlink-domain")


def machine_labels(domain: str, machine: MachineType) -> dict[str, str]:
    """The schema labels that follow from the machine type alone (the catalog's facts)."""
    gpu = machine.gpu_model
    return {
        f"{domain}/gpu-product": gpu.name,
        f"{domain}/gpu-memory-gib": str(gpu.memory_gib),
        # Intra-node NVLink: the node is the NVLink domain; without NVLink there is none.
        f"{domain}/nvlink-domain": "node" if gpu.nvlink and machine.gpus > 1 else "none",
    }
