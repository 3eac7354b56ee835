"""What the cloud provides in a cluster, which no binary of ours can run: its default objects (storage classes,
GKE's critical-pods quota in kube-system, the CRDs of GKE multi-networking), and its controllers' visible effect:
a load balancer's address on a LoadBalancer Service, a provisioned volume for a claim the scheduler placed.
These are stand-ins, named as such in the report; nothing here decides whether our objects are right."""

from __future__ import annotations

import hashlib
from typing import Any

from tools.rehearsal.cluster import GKE_KUBE_SYSTEM_QUOTA
from tools.rehearsal.kube import Kube
from tools.rehearsal.processes import ReconcileLoop

# EKS creates `gp2` (in-tree EBS, WaitForFirstConsumer) in every cluster; GKE creates `standard-rwo` (default),
# `premium-rwo` and `standard`, all pd.csi.storage.gke.io and WaitForFirstConsumer.
STORAGE_CLASSES: dict[str, list[dict[str, Any]]] = {
    "aws": [
        {"name": "gp2", "provisioner": "kubernetes.io/aws-ebs", "parameters": {"type": "gp2", "fsType": "ext4"}},
    ],
    "gcp": [
        {
            "name": "standard-rwo",
            "provisioner": "pd.csi.storage.gke.io",
            "parameters": {"type": "pd-balanced"},
            "default": True,
        },
        {"name": "premium-rwo", "provisioner": "pd.csi.storage.gke.io", "parameters": {"type": "pd-ssd"}},
        {"name": "standard", "provisioner": "kubernetes.io/gce-pd", "parameters": {"type": "pd-standard"}},
    ],
}
STAND_IN_MANAGER = "rehearsal-cloud-stand-in"


def load_balancer_address(*, cloud: str, region: str, cluster: str, namespace: str, name: str) -> dict[str, str]:
    """The address the cloud gives a LoadBalancer Service: an NLB's DNS name on AWS (`<name>-<hash>.elb.<region>.
    amazonaws.com`), an IP on GCP. The plan the rehearsal evaluates gets the same (runner: stack outputs that carry
    it, like the Karmada API's hostname in the agents' kubeconfig, name what this cluster's Service gets)."""
    digest = hashlib.sha256(f"{cluster}/{namespace}/{name}".encode()).hexdigest()
    if cloud == "aws":
        return {"hostname": f"{name[:20]}-{digest[:16]}.elb.{region}.amazonaws.com"}
    return {"ip": f"34.{int(digest[:2], 16)}.{int(digest[2:4], 16)}.{int(digest[4:6], 16)}"}


def cloud_objects(cloud: str) -> list[dict[str, Any]]:
    objects = []
    for sc in STORAGE_CLASSES[cloud]:
        annotations = {"storageclass.kubernetes.io/is-default-class": "true"} if sc.get("default") else {}
        objects.append(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": sc["name"], "annotations": annotations},
                "provisioner": sc["provisioner"],
                "parameters": sc["parameters"],
                "volumeBindingMode": "WaitForFirstConsumer",
                "reclaimPolicy": "Delete",
                "allowVolumeExpansion": True,
            }
        )
    if cloud == "gcp":
        objects.append(GKE_KUBE_SYSTEM_QUOTA)
    return objects


class CloudControllers(ReconcileLoop):
    """Polls the cluster every two seconds: LoadBalancer Services get an address, placed claims get a volume."""

    period = 2.0

    def __init__(self, kube: Kube, *, cloud: str, region: str, cluster: str):
        super().__init__("cloud", cluster)
        self.kube, self.cloud, self.region, self.cluster = kube, cloud, region, cluster

    def reconcile(self) -> None:
        self._load_balancers()
        self._volumes()

    def _load_balancers(self) -> None:
        for svc in self.kube.list("v1", "Service"):
            spec, meta = svc.get("spec") or {}, svc["metadata"]
            if spec.get("type") != "LoadBalancer" or (svc.get("status") or {}).get("loadBalancer", {}).get("ingress"):
                continue
            if spec.get("loadBalancerIP"):
                ingress = {"ip": spec["loadBalancerIP"]}
            else:
                ingress = load_balancer_address(
                    cloud=self.cloud,
                    region=self.region,
                    cluster=self.cluster,
                    namespace=meta["namespace"],
                    name=meta["name"],
                )
            self.kube.patch_status(
                "v1", "Service", meta["namespace"], meta["name"], {"status": {"loadBalancer": {"ingress": [ingress]}}}
            )

    def _volumes(self) -> None:
        for claim in self.kube.list("v1", "PersistentVolumeClaim"):
            meta, spec = claim["metadata"], claim.get("spec") or {}
            annotations = meta.get("annotations") or {}
            node = annotations.get("volume.kubernetes.io/selected-node")
            if (claim.get("status") or {}).get("phase") == "Bound" or not node or spec.get("volumeName"):
                continue
            name = f"pvc-{meta['uid']}"
            if self.kube.get("v1", "PersistentVolume", name) is not None:
                continue
            self.kube.create(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolume",
                    "metadata": {
                        "name": name,
                        "annotations": {
                            "pv.kubernetes.io/provisioned-by": annotations.get(
                                "volume.kubernetes.io/storage-provisioner", ""
                            )
                        },
                    },
                    "spec": {
                        "capacity": {"storage": spec["resources"]["requests"]["storage"]},
                        "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                        "persistentVolumeReclaimPolicy": "Delete",
                        "storageClassName": spec.get("storageClassName"),
                        "claimRef": {"namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]},
                        "hostPath": {"path": f"/rehearsal/{name}"},
                        "nodeAffinity": {
                            "required": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}
                                        ]
                                    }
                                ]
                            }
                        },
                    },
                },
                field_manager=STAND_IN_MANAGER,
            )


# The resource types the rehearsal executes besides Kubernetes objects, Helm releases and ConfigFiles: the tls
# provider's, whose outputs the rehearsal's plan computes (tools/rehearsal/pki.py). A provider (pulumi:providers:*)
# is configuration: the Kubernetes ones are the rehearsal's clusters, the others' resources are declared below.
EXECUTED_PREFIXES = ("tls:", "pulumi:providers:")
CLUSTERS = ("aws:eks/cluster:Cluster", "gcp:container/cluster:Cluster")
NODES = (
    "aws:eks/nodeGroup:NodeGroup",
    "aws:ec2/launchTemplate:LaunchTemplate",
    "aws:ec2/placementGroup:PlacementGroup",
    "aws:autoscaling/tag:Tag",
    "gcp:container/nodePool:NodePool",
    "gcp:compute/resourcePolicy:ResourcePolicy",
)
NO_CLOUD = "a cloud resource, and the rehearsal has no cloud account: it is not created"


def not_executed(resource_type: str) -> tuple[str, str] | None:
    """(why the rehearsal does not execute a resource of this type, what takes its place), or None for the types
    it executes."""
    if resource_type.startswith(EXECUTED_PREFIXES):
        return None
    if resource_type in CLUSTERS:
        return NO_CLOUD, "the rehearsal's local control plane of that cluster (tools/rehearsal/cluster.py)"
    if resource_type in NODES:
        return (
            NO_CLOUD,
            "kwok nodes, every pool at its maxSize, with the labels, taints and machine sizes these resources give "
            "the nodes (tools/rehearsal/nodes.py)",
        )
    if resource_type == "aws:eks/addon:Addon":
        return (
            f"{NO_CLOUD}; EKS installs the add-on's workloads (vpc-cni, kube-proxy, coredns, aws-ebs-csi-driver), "
            "not the program",
            "the rehearsal's pod network, service proxy and cluster DNS, and its volume stand-in; the add-ons' "
            "DaemonSet pods are not on the nodes",
        )
    if resource_type.startswith("random:"):
        return (
            "the random provider is not run: the plan's mocks give each resource a fixed value",
            "that value, wherever the program uses it (Secrets, Helm values)",
        )
    if resource_type.startswith("command:"):
        return (
            "a command `pulumi up` runs on the deployer's machine, from the deployer's network; the rehearsal runs "
            "no deployer: the script is not run and what depends on it goes on as if it passed",
            "where the command waits for an API server (the Karmada API's /readyz), the rehearsal's own wait for "
            "that /readyz through the load balancer's name before it applies an object there "
            "(tools/rehearsal/runner.py provider_target)",
        )
    return (
        NO_CLOUD,
        "nothing: the policy pack judges it offline (make plan); the clusters' needs of it are stood in for",
    )
