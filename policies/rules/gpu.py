"""GPU node pools: MIG configs valid for the pool's GPU, fabric pools packed, the shared taint and labels.

Facts and the label schema come from platform_catalog (gpus, machines, topology), the package the components
build the pools with, so the pack and the components cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

import yaml

from platform_catalog.gpus import MIG_COMPUTE_SLICES, MIG_MEMORY_SLICES, GpuModel
from platform_catalog.machines import MACHINES, MachineType
from platform_catalog.topology import GPU_TAINT, SCHEMA_LABELS, machine_labels
from policies.framework import CannotCheck, Context, Violation, rule
from policies.model import UNKNOWN, Resource, as_list, get, number, peek
from policies.rules.aws import LAUNCH_TEMPLATE, NODE_GROUP, SUBNET
from policies.rules.gcp import NODE_POOL
from policies.rules.helm import HELM_RELEASE

PLACEMENT_GROUP = "aws:ec2/placementGroup:PlacementGroup"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
MIG_PARTED_KEY = "config.yaml"
# Kubernetes taint effect -> the providers' enum (EKS and GKE both use NO_SCHEDULE).
_EFFECT = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}


@dataclass
class GpuPool:
    resource: Resource
    machine_type: str | None
    labels: dict
    taints: list
    cluster: str | None  # cluster name when known

    @property
    def machine(self) -> MachineType | None:
        return MACHINES.get(self.machine_type or "")

    @property
    def gpu(self) -> GpuModel | None:
        return self.machine.gpu_model if self.machine else None

    @property
    def label(self) -> str:
        kind = "node group" if self.resource.type == NODE_GROUP else "node pool"
        return f"{kind} {self.resource.name} ({self.machine_type or 'unknown machine type'})"


def may_be_gpu_pool(r: Resource) -> bool:
    """Node groups/pools that have GPUs, or whose machine type is not on the resource (launch template)."""
    if r.type == NODE_GROUP:
        types = as_list(peek(r.props, "instanceTypes"))
        return not types or any(t in MACHINES for t in types) or "NVIDIA" in str(peek(r.props, "amiType") or "")
    if r.type == NODE_POOL:
        config = peek(r.props, "nodeConfig")
        config = config if isinstance(config, dict) else {}
        return config.get("machineType") in MACHINES or bool(config.get("guestAccelerators")) or not config
    return False


def _launch_template(r: Resource, ctx: Context) -> Resource | None:
    found = ctx.require_stack().sources(r, "launchTemplate")
    return next((t for t in found if t.type == LAUNCH_TEMPLATE), None)


def gpu_pool(r: Resource, ctx: Context) -> GpuPool | None:
    """The pool as a GPU pool, or None when it has no GPUs."""
    if r.type == NODE_GROUP:
        machine_type = (as_list(get(r.props, "instanceTypes")) or [None])[0]
        if machine_type is None:
            template = _launch_template(r, ctx)
            machine_type = get(template.props, "instanceType") if template else None
        cluster = peek(r.props, "clusterName")
        gpu = machine_type in MACHINES or "NVIDIA" in str(peek(r.props, "amiType") or "")
        labels, taints = get(r.props, "labels") or {}, as_list(get(r.props, "taints"))
    else:
        config = get(r.props, "nodeConfig") or {}
        machine_type = get(config, "machineType")
        cluster = peek(r.props, "cluster")
        gpu = machine_type in MACHINES or bool(as_list(peek(config, "guestAccelerators")))
        labels, taints = get(config, "labels") or {}, as_list(get(config, "taints"))
    if not gpu:
        return None
    return GpuPool(
        r,
        machine_type if isinstance(machine_type, str) else None,
        labels,
        taints,
        cluster if isinstance(cluster, str) else None,
    )


def _label(labels: dict, domain: str | None, suffix: str) -> tuple[str | None, str | None]:
    """(key, value) of a shared label, in the configured domain or, unconfigured, any domain."""
    if domain:
        key = f"{domain}/{suffix}"
        return (key, labels[key]) if key in labels else (None, None)
    found = next((k for k in labels if k.endswith("/" + suffix) and not k.startswith("nvidia.com/")), None)
    return (found, labels[found]) if found else (None, None)


@rule(
    name="gpu-pool-taint-and-labels",
    description="GPU pools carry the nvidia.com/gpu=present:NoSchedule taint and the shared topology labels "
    "(DESIGN.md §4), with values matching the catalog.",
    severity="high",
    remediation="build the pool's labels with components/k8s/topology.py (gpu_pool_labels) and its taint with "
    "platform_catalog/topology.py (GPU_TAINT)",
    applies_to=(NODE_GROUP, NODE_POOL),
    subject=may_be_gpu_pool,
    scope="stack",
    config=("labelDomain",),
)
def gpu_pool_taint_and_labels(r: Resource, ctx: Context) -> Iterator[Violation]:
    pool = gpu_pool(r, ctx)
    if pool is None:
        return
    effect = _EFFECT[GPU_TAINT.effect]
    tainted = any(
        get(t, "key") == GPU_TAINT.key and get(t, "value") == GPU_TAINT.value and get(t, "effect") == effect
        for t in pool.taints
    )
    if not tainted:
        yield Violation(f"{pool.label} lacks the taint {GPU_TAINT.key}={GPU_TAINT.value}:{GPU_TAINT.effect}")
    if pool.machine is None:
        yield CannotCheck(f"{pool.label}: machine type not in the catalog, so its labels cannot be checked")
        return
    # Keys are compared by suffix, so the domain here is a placeholder.
    from_catalog = {k.split("/", 1)[1]: v for k, v in machine_labels("schema", pool.machine).items()}
    found = {suffix: _label(pool.labels, ctx.label_domain, suffix) for suffix in SCHEMA_LABELS}
    for suffix, (key, actual) in found.items():
        if key is None:
            yield Violation(f"{pool.label} lacks the label {ctx.label_domain or '<domain>'}/{suffix}")
        elif suffix in from_catalog and actual != from_catalog[suffix]:
            yield Violation(f"{pool.label}: label {key}={actual!r}, but the catalog says {from_catalog[suffix]!r}")
    fabric_key, fabric = found["fabric"]
    if fabric_key is not None and fabric not in (pool.machine.fabric, "none"):
        yield Violation(
            f"{pool.label}: label {fabric_key}={fabric!r}, but {pool.machine.name} offers {pool.machine.fabric!r}"
        )
    placement_key, placement = found["placement-group"]
    if fabric_key is not None and placement_key is not None and fabric != "none" and placement == "none":
        yield Violation(f"{pool.label}: fabric {fabric} needs a placement group, but {placement_key} is 'none'")


def _custom_mig_configs(pool: GpuPool, ctx: Context) -> dict[str, list]:
    """mig-parted configs defined in ConfigMaps (key config.yaml) of the pool's cluster."""
    configs: dict[str, list] = {}
    for cm in ctx.require_stack().kubernetes("ConfigMap", ""):
        if pool.cluster is not None and cm.cluster != pool.cluster:
            continue
        text = peek(cm.props, "data", MIG_PARTED_KEY)
        if isinstance(text, str):
            configs.update(_mig_configs_in(text))
    return configs


@lru_cache(maxsize=256)
def _mig_configs_in(text: str) -> Mapping[str, list]:
    """The `mig-configs` of a mig-parted config.yaml (none when it does not parse). Parsed once per text: the rule asks
    for every pool of a cluster, and every pass of the pack meets the same ConfigMaps."""
    try:
        document = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        return MappingProxyType({})
    configs = document.get("mig-configs") if isinstance(document, dict) else None
    return MappingProxyType(configs if isinstance(configs, dict) else {})


def _custom_layout_problems(name: str, entries: list, gpu: GpuModel) -> Iterator[str]:
    for i, entry in enumerate(as_list(entries)):
        if not isinstance(entry, dict) or not entry.get("mig-enabled"):
            continue
        compute = memory = 0
        for profile, count in (entry.get("mig-devices") or {}).items():
            known = gpu.mig_profile(str(profile).removesuffix("+me"))
            instances = number(count)
            if known is None or instances is None:
                yield f"config {name!r} entry {i} asks for {count!r} x {profile}, not a MIG profile count of {gpu.name}"
                continue
            compute += known.compute_slices * int(instances)
            memory += known.memory_slices * int(instances)
        if compute > MIG_COMPUTE_SLICES or memory > MIG_MEMORY_SLICES:
            yield (
                f"config {name!r} entry {i} needs {compute} compute / {memory} memory slices; {gpu.name} has "
                f"{MIG_COMPUTE_SLICES} / {MIG_MEMORY_SLICES}"
            )


@rule(
    name="gpu-mig-config-valid",
    description="A pool's nvidia.com/mig.config label (or GKE gpuPartitionSize) names a MIG config of the pool's "
    "GPU: an upstream one from the catalog, or a custom layout in a mig-parted ConfigMap that fits the GPU.",
    severity="high",
    remediation="pick one of the GPU's configs from platform_catalog/gpus.py (GPUS[...].mig_configs), or use "
    "time-slicing on GPUs without MIG (L40S, L4, A10G)",
    applies_to=(NODE_GROUP, NODE_POOL),
    subject=may_be_gpu_pool,
    scope="stack",
)
def gpu_mig_config_valid(r: Resource, ctx: Context) -> Iterator[Violation]:
    pool = gpu_pool(r, ctx)
    if pool is None:
        return
    partitions = []
    if r.type == NODE_POOL:
        partitions = [
            get(a, "gpuPartitionSize")
            for a in as_list(get(r.props, "nodeConfig", "guestAccelerators"))
            if get(a, "gpuPartitionSize")
        ]
    config = pool.labels.get(MIG_CONFIG_LABEL)
    if config is None and not partitions:
        return
    gpu = pool.gpu
    if gpu is None:
        yield CannotCheck(f"{pool.label}: machine type not in the catalog, MIG config {config!r} cannot be checked")
        return
    if not gpu.mig_capable:
        if config not in (None, "all-disabled") or partitions:
            yield Violation(
                f"{pool.label}: {gpu.name} has no MIG, but the pool asks for {config or partitions[0]!r}",
                fix="use time-slicing (timeSlicing.replicas) on this pool, or a MIG-capable GPU (A100, H100, H200, B200)",
            )
        return
    for size in partitions:
        if gpu.mig_profile(size) is None:
            profiles = ", ".join(p.name for p in gpu.mig_profiles)
            yield Violation(f"{pool.label}: gpuPartitionSize {size!r} is not a {gpu.name} profile ({profiles})")
    if config is None or config in gpu.mig_configs:
        return
    custom = _custom_mig_configs(pool, ctx)
    if config not in custom:
        yield Violation(
            f"{pool.label}: MIG config {config!r} is neither a {gpu.name} config ({', '.join(gpu.mig_configs)}) "
            "nor defined in a mig-parted ConfigMap of the cluster"
        )
        return
    for problem in _custom_layout_problems(config, custom[config], gpu):
        yield Violation(f"{pool.label}: {problem}")


@rule(
    name="gpu-fabric-placement",
    description="Pools with a multi-node fabric (EFA, RDMA, TCPX/TCPXO) sit in one cluster placement group / "
    "compact placement policy and one zone.",
    severity="high",
    remediation="EKS: a launch template with placement.groupName of an aws.ec2.PlacementGroup(strategy=cluster) "
    "and subnets of one zone; GKE: placementPolicy.type COMPACT and a single nodeLocations zone",
    applies_to=(NODE_GROUP, NODE_POOL),
    subject=may_be_gpu_pool,
    scope="stack",
    config=("labelDomain",),
)
def gpu_fabric_placement(r: Resource, ctx: Context) -> Iterator[Violation]:
    pool = gpu_pool(r, ctx)
    if pool is None:
        return
    # Whether the pool uses its machine's fabric is what its fabric label says.
    _, fabric = _label(pool.labels, ctx.label_domain, "fabric")
    if fabric is None:
        yield CannotCheck(f"{pool.label}: no fabric label, so whether it needs packing is unseen")
        return
    if fabric == "none":
        return
    if r.type == NODE_POOL:
        if get(r.props, "placementPolicy", "type") != "COMPACT":
            yield Violation(f"{pool.label}: {fabric} pool without a COMPACT placement policy")
        zones = as_list(get(r.props, "nodeLocations"))
        if len(zones) != 1:
            yield Violation(f"{pool.label}: {fabric} pool spans {zones or 'all the cluster zones'}; pin one zone")
        return
    yield from _eks_placement(r, pool, fabric, ctx)


def _eks_placement(r: Resource, pool: GpuPool, fabric: str, ctx: Context) -> Iterator[Violation]:
    stack = ctx.require_stack()
    template = _launch_template(r, ctx)
    group_name = peek(template.props, "placement", "groupName") if template else None
    if group_name is None:
        yield Violation(f"{pool.label}: {fabric} pool without a placement group (launch template placement.groupName)")
    elif template is not None:
        groups = [g for g in stack.sources(template, "placement") if g.type == PLACEMENT_GROUP] or [
            g for g in stack.of_type(PLACEMENT_GROUP) if peek(g.props, "name") == group_name
        ]
        if not groups:
            yield CannotCheck(
                f"{pool.label}: placement group {group_name} is not in this stack; its strategy is unseen"
            )
        for group in groups:
            if get(group.props, "strategy") != "cluster":
                yield Violation(f"{pool.label}: placement group {group.name} is not strategy cluster", urn=group.urn)
    subnets = [s for s in stack.sources(r, "subnetIds") if s.type == SUBNET]
    if not subnets:
        if peek(r.props, "subnetIds") is UNKNOWN or as_list(peek(r.props, "subnetIds")):
            yield CannotCheck(f"{pool.label}: its subnets are not in this stack, so their zones are unseen")
        return
    zones = sorted({str(get(s.props, "availabilityZone")) for s in subnets})
    if len(zones) > 1:
        yield Violation(f"{pool.label}: {fabric} pool spans zones {', '.join(zones)}; use the subnet of one zone")


VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"
# Values that expose no GPU: void (no NVIDIA runtime setup at all), none (driver libraries, no device).
_NO_GPU = ("void", "none")
# The one value that makes a container no GPU container at all, whatever its image says
# (upstream.NVIDIA_IMAGE_DEFAULTS_EXPOSE_EVERY_GPU); the toolkit compares it as written.
NO_GPU_CONTAINER = "void"
GPU_RESOURCE_PREFIX = "nvidia.com/"


def _visible_devices(value: object, where: str = "") -> Iterator[tuple[str, object]]:
    """(where, value) of every NVIDIA_VISIBLE_DEVICES a container-like part of a manifest sets: Kubernetes `env`
    lists, and the `env` maps of custom resources (Fluid's runtimes)."""
    if isinstance(value, dict):
        env = value.get("env")
        name = own if isinstance(own := value.get("name"), str) else where
        if isinstance(env, list):
            for entry in env:
                if isinstance(entry, dict) and entry.get("name") == VISIBLE_DEVICES:
                    yield name, entry.get("value", entry.get("valueFrom"))
        elif isinstance(env, dict) and VISIBLE_DEVICES in env:
            yield name, env[VISIBLE_DEVICES]
        for key, item in value.items():
            yield from _visible_devices(item, key if isinstance(item, dict | list) else where)
    elif isinstance(value, list):
        for item in value:
            yield from _visible_devices(item, where)


def _exposes_no_gpu(value: object) -> bool:
    return isinstance(value, str) and value.strip().lower() in _NO_GPU


def _tolerates_gpu_nodes(tolerations: object) -> bool:
    """Whether a pod with these tolerations may run on a GPU node: one of them tolerates the GPU pools' taint, as
    Kubernetes matches them [k8s.io/api@v0.33.13:core/v1/toleration.go L38-57 ToleratesTaint: an empty effect
    matches every effect, an empty key every key, an empty operator is Equal]."""
    for toleration in as_list(tolerations):
        if not isinstance(toleration, dict):
            continue
        if toleration.get("effect") and toleration["effect"] != GPU_TAINT.effect:
            continue
        if toleration.get("key") and toleration["key"] != GPU_TAINT.key:
            continue
        operator = toleration.get("operator") or "Equal"
        if operator == "Exists" or (operator == "Equal" and toleration.get("value", "") == GPU_TAINT.value):
            return True
    return False


def _requests_gpu(container: dict) -> bool:
    """Whether the container asks for an NVIDIA device (a GPU, a MIG profile), so the device plugin sets its list."""
    resources = declared if isinstance(declared := container.get("resources"), dict) else {}
    return any(
        str(name).startswith(GPU_RESOURCE_PREFIX) and str(count) != "0"
        for part in ("limits", "requests")
        if isinstance(resources.get(part), dict)
        for name, count in resources[part].items()
    )


def _gpu_tolerating_parts(value: object, where: str = "") -> Iterator[tuple[str, dict]]:
    """(path, part) of every part of a manifest or of Helm values whose tolerations let its pods run on GPU nodes."""
    if isinstance(value, dict):
        if _tolerates_gpu_nodes(value.get("tolerations")):
            yield where, value
        for key, item in value.items():
            if key != "tolerations":
                yield from _gpu_tolerating_parts(item, f"{where}.{key}" if where else key)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _gpu_tolerating_parts(item, f"{where}[{i}]")


def _gpu_node_containers(value: object, where: str = "") -> Iterator[tuple[str, dict]]:
    """(where, container) of every container of a pod-like part of a manifest that tolerates the GPU taint: its
    `initContainers` and `containers`, and a KServe predictor's `model` container."""
    for path, pod in _gpu_tolerating_parts(value, where):
        for key in ("initContainers", "containers", "model"):
            for container in as_list(pod.get(key)):
                if isinstance(container, dict):
                    yield f"{path}.{key}" if path else key, container


def _non_gpu_container_issue(container: dict) -> str | None:
    """What is wrong with the NVIDIA_VISIBLE_DEVICES of a container on a GPU node that requests no GPU, if anything."""
    told = [value for _, value in _visible_devices({"env": container.get("env")})]
    if not told:
        return f"does not set {VISIBLE_DEVICES}={NO_GPU_CONTAINER}: its image's value decides (CUDA images say all)"
    if any(isinstance(value, str) and value.strip() == NO_GPU_CONTAINER for value in told):
        return None
    if all(_exposes_no_gpu(value) for value in told):  # none: the driver's libraries without a GPU
        return f"sets {VISIBLE_DEVICES}={told[0]!r}, which still sets up the driver: say {NO_GPU_CONTAINER}"
    return None  # any other value is reported as a value that exposes GPUs


@rule(
    name="gpu-visible-devices-from-the-device-plugin",
    description="Outside the GPU stack's privileged namespaces, no pod sets NVIDIA_VISIBLE_DEVICES other than void or "
    "none, every container that may run on a GPU node (its pod tolerates the GPU taint) without requesting a GPU sets "
    "it to void, and no Helm release's values put its chart's pods on GPU nodes: where the node's container toolkit "
    "honours the variable from any container (EKS's NVIDIA node images, nvidia the default runtime), a set value "
    "overrides the device plugin's allocation, and an image's own value (CUDA images say all) exposes every GPU of the "
    "node to a container that asked for none; a chart's values do not show its containers' environment.",
    severity="high",
    remediation="remove the variable from GPU containers (request nvidia.com/gpu or a MIG profile and let the device "
    "plugin set it); give every other container on a GPU node NVIDIA_VISIBLE_DEVICES=void; install a chart whose pods "
    "must run on GPU nodes into a GPU-stack namespace listed in privilegedNamespaces, else drop its GPU tolerations",
    applies_to=("Kubernetes objects with containers", HELM_RELEASE),
    subject=lambda r: r.is_kubernetes or r.type == HELM_RELEASE,
    config=("privilegedNamespaces",),
)
def gpu_visible_devices_from_the_device_plugin(r: Resource, ctx: Context) -> Iterator[Violation]:
    if r.type == HELM_RELEASE:
        if get(r.props, "namespace") in ctx.privileged_namespaces:
            return
        for where, _ in _gpu_tolerating_parts(r.props.get("values")):
            yield Violation(
                f"{r.label}: values {where or '(top level)'} tolerate the GPU taint, so the chart's pods may run on GPU nodes with an "
                f"environment its values do not show ({VISIBLE_DEVICES} from their images)"
            )
        return
    if r.namespace in ctx.privileged_namespaces:
        return
    spec = r.props.get("spec")
    for name, value in _visible_devices(spec):
        if not _exposes_no_gpu(value):
            yield Violation(f"{r.label}: container {name} sets {VISIBLE_DEVICES}={value!r}")
    for where, container in _gpu_node_containers(spec, "spec"):
        issue = None if _requests_gpu(container) else _non_gpu_container_issue(container)
        if issue is not None:
            name = container.get("name", "(unnamed)")
            yield Violation(
                f"{r.label}: container {name} ({where}) may run on a GPU node and requests no GPU, but {issue}"
            )


RULES = [
    gpu_pool_taint_and_labels,
    gpu_mig_config_valid,
    gpu_fabric_placement,
    gpu_visible_devices_from_the_device_plugin,
]
