"""A stand-in for what Fluid's (v1.0.8) AlluxioRuntime controller hands the pods that read a Dataset: its
PersistentVolume and PersistentVolumeClaim. Fluid's controllers are not run (their images carry Helm and the
runtime charts they install from inside), so nothing else would make the claim a model server mounts, and its
pods would wait for it. The volume is made exactly as the controller makes it once the Dataset is bound
(fluid-cloudnative/fluid@v1.0.8:pkg/utils/dataset/volume/create.go L37-L259): named `<namespace>-<name>`, the
Dataset's access modes (ReadOnlyMany when none), 100Pi unless the Dataset's annotation says otherwise, CSI driver
fuse.csi.fluid.io, and a node affinity that is the runtime's `fuse.nodeSelector` (L109-L129): so the scheduler
places a model's pods only where the cache's FUSE can run, as in a cluster. A Dataset that refers to another
(`dataset://<namespace>/<name>`: a namespace reading the cache of another) gets the volume the thin runtime's
reference engine makes: the physical one's, claimed in its own namespace (pkg/ddc/thin/referencedataset/
volume.go L70-L209). And, as the kubelet does when the Fluid CSI node plugin on a node registers, the node's
CSINode lists the driver: Volcano counts each CSI claim of a pod as a resource `attachable-volumes-csi-<driver>`
that only nodes whose CSINode lists the driver have (CSI_DRIVER_REGISTERED). It is reported as a stand-in.

The runtime's pods take their room on the nodes as the controller's pods do (fluid@v1.0.8 installs them with its
charts/alluxio chart, valued by pkg/ddc/alluxio/transform*.go): a master StatefulSet (master and job master), a
worker StatefulSet (worker and job worker; `replicas` of them, on the Dataset's node affinity, one per node) and a
FUSE DaemonSet (system-node-critical) whose node selector is the runtime's `fuse.nodeSelector` plus
`fluid.io/f-<namespace>-<name>: "true"`, a label the CSI plugin puts on a node when a pod there mounts the cache
(NodeStageVolume): so a FUSE pod comes to a node after the model server that reads through it, and must fit
beside it (or preempt it). kwok plays these pods: only their placement and requests are rehearsed, and a pod that
mounts the cache starts once the FUSE pod of its node is Ready (NodePublishVolume waits for the mount,
`fuse_blocker`)."""

from __future__ import annotations

import json
from typing import Any

from tools.rehearsal.kube import KindNotServed, Kube
from tools.rehearsal.processes import ReconcileLoop
from tools.rehearsal.references import CONTAINER_CREATING, Blocked

RUNTIMES = ("data.fluid.io/v1alpha1", "AlluxioRuntime")
DATASETS = ("data.fluid.io/v1alpha1", "Dataset")
MANAGER = "rehearsal-fluid-stand-in"
# fluid@v1.0.8: pkg/common/volume.go L30, L40; pkg/common/alluxio.go L23; pkg/utils/dataset.go L33-L34;
# pkg/common/constants.go L166-L170 (GetExpectedFluidAnnotations); pkg/common/label.go L27 (fluid.io/s-).
CSI_DRIVER = "fuse.csi.fluid.io"
STORAGE_CLASS = "fluid"
MOUNT_TYPE = "fuse.alluxio-fuse"
CAPACITY_ANNOTATION = "pvc.fluid.io/resources.requests.storage"
DEFAULT_CAPACITY = "100Pi"
ANNOTATIONS = {"CreatedBy": "fluid"}
MOUNT_ROOT_DEFAULT = "/runtime-mnt"  # charts/fluid/fluid/values.yaml runtime.mountRoot
REF_SCHEMA = "dataset://"  # pkg/common: RefSchema
# charts/fluid/fluid/templates/csi/daemonset.yaml: the node plugin's pods; `--nodeid=$(NODE_ID)`, spec.nodeName.
CSI_NODE_PLUGIN = "app=csi-nodeplugin-fluid"


# pkg/common/label.go L23, L31: the label on a node whose FUSE the runtime should run (pkg/utils/label.go L178-L204:
# `fluid.io/f-<namespace>-<name>`, shorter than 63 characters for the names we render).
FUSE_LABEL_PREFIX = "fluid.io/f-"
CRITICAL_PRIORITY = "system-node-critical"  # upstream.FLUID_CONTROLLER_CREATES_CRITICAL_FUSE_PODS
MEMORY_TIER = "MEM"


def fuse_label(namespace: str, name: str) -> str:
    return f"{FUSE_LABEL_PREFIX}{namespace}-{name}"


def _quantity_bytes(text: str) -> float:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
    for unit, factor in units.items():
        if str(text).endswith(unit):
            return float(str(text)[: -len(unit)]) * factor
    return float(text)


def _container(name: str, image: str, resources: dict[str, Any] | None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": image}
    if resources:
        container["resources"] = resources
    return container


def runtime_workloads(runtime: dict[str, Any], dataset: dict[str, Any]) -> list[dict[str, Any]]:
    """The master and worker StatefulSets and the FUSE DaemonSet the AlluxioRuntime controller installs for a
    runtime and its Dataset, as far as placement and requests go (fluid@v1.0.8: charts/alluxio/templates/master/
    statefulset.yaml, worker/statefulset.yaml, fuse/daemonset.yaml L76-L92; pkg/ddc/alluxio/transform.go
    L378-L427 transformWorkers, transform_resources.go L73-L123 (a memory tier larger than the worker's memory
    request becomes its request), L224-L228 (the Dataset's tolerations), transform_fuse.go L97-L103;
    pkg/ctrl/affinity.go L56-L172 BuildWorkersAffinity: one worker per node (exclusive placement), the Dataset's
    required node affinity)."""
    meta, spec = runtime["metadata"], runtime.get("spec") or {}
    namespace, name = meta["namespace"], meta["name"]
    dataset_spec = dataset.get("spec") or {}
    image = f"{spec.get('image') or 'alluxio/alluxio'}:{spec.get('imageTag') or 'fluid-stand-in'}"
    tolerations = dataset_spec.get("tolerations") or []
    owner = (
        [
            {
                "apiVersion": runtime.get("apiVersion", RUNTIMES[0]),
                "kind": "AlluxioRuntime",
                "name": name,
                "uid": meta.get("uid", ""),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        if meta.get("uid")
        else []
    )

    def part(role: str) -> dict[str, str]:
        return {"app": "alluxio", "release": name, "role": role}

    def workload(kind: str, role: str, replicas: int | None, pod: dict[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "selector": {"matchLabels": part(role)},
            "template": {"metadata": {"labels": {**part(role), **pod.pop("labels", {})}}, "spec": pod},
        }
        if replicas is not None:
            body |= {"replicas": replicas, "serviceName": f"{name}-{role.removeprefix('alluxio-')}"}
        return {
            "apiVersion": "apps/v1",
            "kind": kind,
            "metadata": {
                "name": f"{name}-{role.removeprefix('alluxio-')}",
                "namespace": namespace,
                "labels": part(role),
                "ownerReferences": owner,
            },
            "spec": body,
        }

    master = spec.get("master") or {}
    worker = spec.get("worker") or {}
    fuse = spec.get("fuse") or {}
    worker_resources = json.loads(json.dumps(worker.get("resources") or {}))
    memory_tier = sum(
        _quantity_bytes(level.get("quota", "0"))
        for level in (spec.get("tieredstore") or {}).get("levels") or []
        if level.get("mediumtype") == MEMORY_TIER
    )
    requested = (worker_resources.get("requests") or {}).get("memory")
    if memory_tier and (requested is None or memory_tier > _quantity_bytes(requested)):
        worker_resources.setdefault("requests", {})["memory"] = str(int(memory_tier))
    dataset_label = {"fluid.io/dataset": f"{namespace}-{name}", "fluid.io/dataset-placement": "Exclusive"}
    worker_affinity: dict[str, Any] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchExpressions": [{"key": "fluid.io/dataset", "operator": "Exists"}]},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        },
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "preference": {
                        "matchExpressions": [{"key": fuse_label(namespace, name), "operator": "In", "values": ["true"]}]
                    },
                }
            ]
        },
    }
    required = (dataset_spec.get("nodeAffinity") or {}).get("required")
    if required:
        worker_affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = required
    return [
        workload(
            "StatefulSet",
            "alluxio-master",
            int(master.get("replicas") or 1),
            {
                "nodeSelector": master.get("nodeSelector") or {},
                "tolerations": tolerations,
                "containers": [
                    _container("alluxio-master", image, master.get("resources")),
                    _container("alluxio-job-master", image, (spec.get("jobMaster") or {}).get("resources")),
                ],
            },
        ),
        workload(
            "StatefulSet",
            "alluxio-worker",
            int(spec.get("replicas") or 1),
            {
                "labels": dataset_label,
                "nodeSelector": worker.get("nodeSelector") or {},
                "tolerations": tolerations,
                "affinity": worker_affinity,
                "containers": [
                    _container("alluxio-worker", image, worker_resources),
                    _container("alluxio-job-worker", image, (spec.get("jobWorker") or {}).get("resources")),
                ],
            },
        ),
        workload(
            "DaemonSet",
            "alluxio-fuse",
            None,
            {
                "priorityClassName": CRITICAL_PRIORITY,
                "nodeSelector": {**(fuse.get("nodeSelector") or {}), fuse_label(namespace, name): "true"},
                "tolerations": [{"operator": "Exists"}],
                "containers": [_container("alluxio-fuse", f"{image}-fuse", fuse.get("resources"))],
            },
        ),
    ]


def fluid_volume_runtime(volume: dict[str, Any]) -> tuple[str, str] | None:
    """(namespace, name) of the runtime a PersistentVolume of Fluid's reads through (its volume attributes), else
    None."""
    csi = (volume.get("spec") or {}).get("csi") or {}
    attributes = csi.get("volumeAttributes") or {}
    if csi.get("driver") != CSI_DRIVER or not attributes.get("runtime_name"):
        return None
    return attributes.get("runtime_namespace", ""), attributes["runtime_name"]


def fuse_blocker(
    pod: dict[str, Any], runtime_of_claim: dict[tuple[str, str], tuple[str, str]], ready: set[tuple[str, str, str]]
) -> Blocked | None:
    """A pod that mounts a Fluid volume on a node where that runtime's FUSE pod is not Ready yet: Fluid's CSI
    plugin fails NodePublishVolume until the FUSE mount is there (fluid@v1.0.8: pkg/csi/plugins/nodeserver.go
    L142-L160, pkg/utils/mount.go L45-L70), so the kubelet keeps the pod in ContainerCreating. `runtime_of_claim`:
    (namespace, claim) -> (runtime namespace, name); `ready`: (runtime namespace, name, node) of Ready FUSE pods."""
    node, namespace = (pod.get("spec") or {}).get("nodeName", ""), pod["metadata"]["namespace"]
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        runtime = runtime_of_claim.get((namespace, claim or ""))
        if runtime is None or (*runtime, node) in ready:
            continue
        message = (
            f'MountVolume.SetUp failed for volume "{volume.get("name")}" : rpc error: code = Internal desc = '
            "timeout waiting for FUSE mount point to be ready"
        )
        return Blocked(None, False, CONTAINER_CREATING, message, f"the FUSE pod of {runtime[0]}/{runtime[1]} on {node}")
    return None


def csi_node(node: dict[str, Any], drivers: list[str]) -> dict[str, Any]:
    """A node's CSINode as the kubelet makes it (k8s.io/kubernetes@v1.33.13:pkg/volume/csi/nodeinfomanager/
    nodeinfomanager.go L452-L484: named for the node, owned by it) with each driver installed as L536-L593 installs
    one whose NodeGetInfo gives no volume limit (no `allocatable`): Fluid's, CSI_DRIVER_REGISTERED."""
    name = node["metadata"]["name"]
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {
            "name": name,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"]}],
        },
        "spec": {"drivers": [{"name": d, "nodeID": name} for d in sorted(drivers)]},
    }


def volume_objects(runtime: dict[str, Any], dataset: dict[str, Any], mount_root: str) -> list[dict[str, Any]]:
    """The PersistentVolume and claim the AlluxioRuntime controller creates for a bound Dataset."""
    namespace, name = runtime["metadata"]["namespace"], runtime["metadata"]["name"]
    pv_name = f"{namespace}-{name}"  # pkg/ddc/base/pv.go L21-L28
    access = (dataset.get("spec") or {}).get("accessModes") or ["ReadOnlyMany"]
    capacity = ((dataset["metadata"].get("annotations") or {}).get(CAPACITY_ANNOTATION)) or DEFAULT_CAPACITY
    labels = {f"fluid.io/s-{namespace}-{name}": "true", "fluid.io/dataset-id": f"{namespace}-{name}"}
    volume: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": pv_name, "labels": labels, "annotations": ANNOTATIONS},
        "spec": {
            "claimRef": {"namespace": namespace, "name": name},
            "accessModes": access,
            "capacity": {"storage": capacity},
            "storageClassName": STORAGE_CLASS,
            "csi": {
                "driver": CSI_DRIVER,
                "volumeHandle": pv_name,
                "volumeAttributes": {
                    # pkg/ddc/alluxio/utils.go L147-L180: <MOUNT_ROOT>/alluxio/<namespace>/<name>/alluxio-fuse
                    "fluid_path": f"{mount_root}/alluxio/{namespace}/{name}/alluxio-fuse",
                    "mount_type": MOUNT_TYPE,
                    "runtime_namespace": namespace,
                    "runtime_name": name,
                },
            },
        },
    }
    selector = ((runtime.get("spec") or {}).get("fuse") or {}).get("nodeSelector") or {}
    if selector:
        expressions = [{"key": k, "operator": "In", "values": [v]} for k, v in selector.items()]
        volume["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}}
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace, "labels": labels, "annotations": ANNOTATIONS},
        "spec": {
            "volumeName": pv_name,
            "storageClassName": STORAGE_CLASS,
            "accessModes": access,
            "resources": {"requests": {"storage": capacity}},
        },
    }
    return [volume, claim]


def referred(dataset: dict[str, Any]) -> tuple[str, str, str] | None:
    """(namespace, name, sub path) of the Dataset a reference Dataset reads (its one `dataset://` mount)."""
    mounts = (dataset.get("spec") or {}).get("mounts") or []
    refs = [m["mountPoint"] for m in mounts if str(m.get("mountPoint", "")).startswith(REF_SCHEMA)]
    if len(refs) != 1 or len(mounts) != 1:
        return None
    parts = refs[0].removeprefix(REF_SCHEMA).split("/", 2)  # pkg/ddc/base/dataset.go L53-L65
    return parts[0], parts[1], parts[2] if len(parts) == 3 else ""


def reference_objects(
    dataset: dict[str, Any], physical_volume: dict[str, Any], physical_claim: dict[str, Any]
) -> list[dict[str, Any]]:
    """The reference engine's PersistentVolume (the physical one's spec, claimed by the referring Dataset) and
    claim."""
    namespace, name = dataset["metadata"]["namespace"], dataset["metadata"]["name"]
    pv_name = f"{namespace}-{name}"
    spec = json.loads(json.dumps(physical_volume["spec"]))
    spec.pop("claimRef", None)
    _, _, sub_path = referred(dataset) or ("", "", "")
    if sub_path:
        spec["csi"]["volumeAttributes"]["fluid_sub_path"] = sub_path
    # accessModesForVirtualDataset: ReadOnlyMany when the Dataset says none or the physical volume is read-only
    access = (dataset.get("spec") or {}).get("accessModes") or []
    if not access or "ReadOnlyMany" in spec.get("accessModes", []):
        access = ["ReadOnlyMany"]
    spec["accessModes"] = access
    spec["claimRef"] = {"namespace": namespace, "name": name}
    labels = {f"fluid.io/s-{namespace}-{name}": "true", "fluid.io/dataset-id": f"{namespace}-{name}"}
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": pv_name, "labels": labels, "annotations": physical_volume["metadata"].get("annotations")},
        "spec": spec,
    }
    claim_labels = {
        **labels,
        "fluid.io/dataset.referring-name": physical_claim["metadata"]["name"],
        "fluid.io/dataset.referring-namespace": physical_claim["metadata"]["namespace"],
    }
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace, "labels": claim_labels, "annotations": ANNOTATIONS},
        "spec": {
            "volumeName": pv_name,
            "storageClassName": STORAGE_CLASS,
            "accessModes": access,
            "resources": physical_claim["spec"]["resources"],
        },
    }
    return [volume, claim]


class FluidStandIn(ReconcileLoop):
    period = 2.0

    def __init__(self, kube: Kube, cluster: str, mount_root: str):
        super().__init__("fluid", cluster)
        self.kube, self.cluster, self.mount_root = kube, cluster, mount_root
        self._staged: dict[str, dict[str, str]] = {}  # node -> the FUSE labels this stand-in applied to it

    def reconcile(self) -> None:
        self._register_csi_driver()
        try:
            runtimes = self.kube.list(*RUNTIMES)
        except KindNotServed:
            return
        for runtime in runtimes:
            namespace, name = runtime["metadata"]["namespace"], runtime["metadata"]["name"]
            dataset = self.kube.get(*DATASETS, name, namespace)
            if dataset is None:
                continue
            self._create(runtime_workloads(runtime, dataset))
            if self.kube.get("v1", "PersistentVolumeClaim", name, namespace) is None:
                self._create(volume_objects(runtime, dataset, self.mount_root))
        self._stage()
        for dataset in self.kube.list(*DATASETS):
            ref = referred(dataset)
            namespace, name = dataset["metadata"]["namespace"], dataset["metadata"]["name"]
            if ref is None or self.kube.get("v1", "PersistentVolumeClaim", name, namespace) is not None:
                continue
            physical_volume = self.kube.get("v1", "PersistentVolume", f"{ref[0]}-{ref[1]}")
            physical_claim = self.kube.get("v1", "PersistentVolumeClaim", ref[1], ref[0])
            if physical_volume is not None and physical_claim is not None:
                self._create(reference_objects(dataset, physical_volume, physical_claim))

    def _stage(self) -> None:
        """What Fluid's CSI plugin does when a pod that mounts the cache comes to a node (fluid@v1.0.8:
        pkg/csi/plugins/nodeserver.go L336-L366 NodeStageVolume): the node is labelled for the runtime's FUSE."""
        runtimes = {
            volume["metadata"]["name"]: found
            for volume in self.kube.list("v1", "PersistentVolume")
            if (found := fluid_volume_runtime(volume)) is not None
        }
        if not runtimes:
            return
        claims = {
            (c["metadata"]["namespace"], c["metadata"]["name"]): runtimes[c["spec"]["volumeName"]]
            for c in self.kube.list("v1", "PersistentVolumeClaim")
            if (c.get("spec") or {}).get("volumeName") in runtimes
        }
        wanted: dict[str, set[str]] = {}
        for pod in self.kube.list("v1", "Pod"):
            node = (pod.get("spec") or {}).get("nodeName")
            for volume in (pod.get("spec") or {}).get("volumes") or []:
                claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
                runtime = claims.get((pod["metadata"]["namespace"], claim or ""))
                if node and runtime is not None:
                    wanted.setdefault(node, set()).add(fuse_label(*runtime))
        for node in self.kube.list("v1", "Node"):
            labels = node["metadata"].get("labels") or {}
            missing = {label: "true" for label in wanted.get(node["metadata"]["name"], set()) if label not in labels}
            if missing:
                labels = {**missing, **self._staged.get(node["metadata"]["name"], {})}
                patch = {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": node["metadata"]["name"], "labels": labels},
                }
                self.kube.apply(patch, field_manager=MANAGER)
                self._staged.setdefault(node["metadata"]["name"], {}).update(missing)

    def _register_csi_driver(self) -> None:
        """The CSINode of each node where the CSI node plugin runs lists fuse.csi.fluid.io (kwok plays the
        plugin's pods; the kubelet would register the driver once the registrar reports it)."""
        running = {
            p["spec"]["nodeName"]
            for p in self.kube.list("v1", "Pod", selector=CSI_NODE_PLUGIN)
            if (p.get("status") or {}).get("phase") == "Running" and (p.get("spec") or {}).get("nodeName")
        }
        registered = {n["metadata"]["name"] for n in self.kube.list("storage.k8s.io/v1", "CSINode")}
        for node in self.kube.list("v1", "Node"):
            if node["metadata"]["name"] in running and node["metadata"]["name"] not in registered:
                self.kube.create(csi_node(node, [CSI_DRIVER]), field_manager=MANAGER)

    def _create(self, objects: list[dict[str, Any]]) -> None:
        for obj in objects:
            meta = obj["metadata"]
            if self.kube.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace")) is None:
                self.kube.create(obj, field_manager=MANAGER)
