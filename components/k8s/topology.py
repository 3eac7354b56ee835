"""The shared node label schema of DESIGN.md §4 on every GPU pool: the labels a pool's nodes carry, the selectors.

Schedulers (Volcano HyperNodes, Karmada placement, nodeSelectors) select on these labels and
never need to know which cloud a node runs on. The taint, the schema's label suffixes and the labels that follow
from the machine type alone are platform_catalog/topology.py, which the policy pack checks pools against.
"""

from __future__ import annotations

from components.config.region import GpuPoolSpec
from components.domain.gpu_partitioning import partitioning_labels
from platform_catalog.machines import MACHINES, Fabric
from platform_catalog.topology import GPU_TAINT, machine_labels

# Well-known label every cloud sets on every node.
ZONE_LABEL = "topology.kubernetes.io/zone"


def placement_group_name(cluster_name: str, pool: str) -> str:
    return f"{cluster_name}-{pool}"


def pool_fabric(pool: GpuPoolSpec) -> Fabric:
    """The fabric a pool's nodes are wired to: the type's, when the pool asks for EFA / GPUDirect."""
    return MACHINES[pool.machine_type].fabric if pool.efa or pool.gpu_direct else "none"


def uses_placement_group(pool: GpuPoolSpec) -> bool:
    """Pools packed into one placement group / compact placement: by default those wired to a fabric."""
    return pool.packed


def gpu_pool_labels(domain: str, cluster_name: str, pool: GpuPoolSpec) -> dict[str, str]:
    """Labels every node of a GPU pool carries, whatever the cloud.

    Besides the shared schema: who owns the NVIDIA driver on the node and how its GPUs are
    partitioned (MIG config, device-plugin time-slicing entry), read by the GPU Operator.
    """
    return {
        f"{domain}/pool": pool.name,
        **machine_labels(domain, MACHINES[pool.machine_type]),
        f"{domain}/fabric": pool_fabric(pool),
        f"{domain}/placement-group": placement_group_name(cluster_name, pool.name)
        if uses_placement_group(pool)
        else "none",
        **partitioning_labels(pool),
    }


def pool_selector(domain: str, pool_name: str) -> dict[str, str]:
    """nodeSelector that pins a workload to one pool."""
    return {f"{domain}/pool": pool_name}


def placement_group_selector(domain: str, cluster_name: str, pool: str) -> dict[str, str]:
    """Labels selecting the nodes of one pool's placement group (its multi-node fabric domain)."""
    return {f"{domain}/placement-group": placement_group_name(cluster_name, pool)}


def fabric_selector(domain: str, fabric: Fabric) -> dict[str, str]:
    """nodeSelector for per-fabric daemons (e.g. the EFA device plugin)."""
    return {f"{domain}/fabric": fabric}


def gpu_tolerations() -> list[dict[str, str]]:
    """Tolerations for pods that must run on GPU pools (model servers, device plugins, cache workers)."""
    return [{"key": GPU_TAINT.key, "operator": "Equal", "value": GPU_TAINT.value, "effect": GPU_TAINT.effect}]


def no_gpu_env() -> dict[str, str]:
    """The env entry of a container that may run on a GPU node without requesting a GPU: without it, its image's
    NVIDIA_VISIBLE_DEVICES (CUDA images say all) exposes every GPU of the node
    (upstream.NVIDIA_IMAGE_DEFAULTS_EXPOSE_EVERY_GPU)."""
    return {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}
