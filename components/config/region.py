"""A region entry: one Kubernetes cluster on one cloud, its network and its node pools.

Each cloud has its own models (AwsRegionSpec, GcpRegionSpec, and their networks, GPU pools and existing clusters);
an entry's `cloud` chooses which one reads it, so a key of the other cloud is an unknown key. Where code shared by
both clouds reads a setting only one of them has (`pool.efa`, `region.project`), the other cloud's model states
its value there as a class constant, not a key. What shared code decides per cloud it asks the model (a class
constant saying why, or a method checking the cloud's own keys), never the cloud's name or the model's class.
"""

from __future__ import annotations

import math
import re
from abc import abstractmethod
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network
from types import MappingProxyType
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from components.catalog import regions as region_catalog
from components.catalog.node_images import ImagePull
from components.config.base import Issue, KeyPath, Name, Spec, config_key, join_path
from components.config.deployer import DeployerSpec
from components.config.gateway import RegionGatewaySpec
from components.config.gateway_tls import GatewayDnsSpec
from components.config.model_store import ModelCacheSpec
from components.config.observability import ObservabilitySpec
from components.config.serving import ServingSpec

# GKE's GPUDirect how-tos put the GPU NIC subnets in 192.168.<n>.0/24.
DEFAULT_ACCELERATOR_CIDR = IPv4Network("192.168.0.0/16")
# The VPC-CNI gives every pod a VPC address, so an EKS cluster's private subnets must stay large.
_SMALLEST_PRIVATE_SUBNET_PREFIX = 24

# EKS CreateCluster `name` (botocore 1.44.8 data/eks/2017-11-01 service-2.json, shape ClusterName): 1-100 characters,
# `^[0-9A-Za-z][A-Za-z0-9\-_]*`.
EKS_CLUSTER_NAME = re.compile(r"^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$")
# GKE Cluster.name (cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters): up to 40
# characters, lowercase letters, digits and hyphens, starting with a letter and ending with a letter or digit.
GKE_CLUSTER_NAME = re.compile(r"^[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?$")
# An IAM role ARN in any partition (docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html): account
# id of 12 digits, path and name of [\w+=,.@-].
ROLE_ARN = re.compile(r"^arn:aws(?:-[a-z]+)*:iam::\d{12}:role/(?:[\w+=,.@-]+/)*[\w+=,.@-]{1,64}$")
# A subnet id: `subnet-` and 8 or 17 hexadecimal digits (EC2's resource id formats).
SUBNET_ID = re.compile(r"^subnet-(?:[0-9a-f]{8}|[0-9a-f]{17})$")
# A user-managed service account (cloud.google.com/iam/docs/service-accounts-create: 6-30 characters).
SERVICE_ACCOUNT = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z][a-z0-9-]{4,28}[a-z0-9]\.iam\.gserviceaccount\.com$")
# An EC2 capacity reservation (ODCR or Capacity Block) id.
_AWS_RESERVATION_ID = re.compile(r"^cr-[0-9a-f]{8,17}$")


@dataclass(frozen=True, kw_only=True)
class KubeletCredentials:
    """Where a node's kubelet keeps its kubeconfig and client certificates, for a node plugin that borrows them."""

    kubeconfig: str
    cert_dir: str


class NetworkBase(Spec):
    """Address plan of the cluster's network: the keys both clouds take."""

    cidr: IPv4Network = Field(description="VPC (AWS) or node subnet (GCP) range, e.g. 10.10.0.0/16.")
    services_cidr: IPv4Network | None = Field(
        None, description="Service ClusterIP range; GCP secondary range, AWS service CIDR."
    )


class AwsNetworkSpec(NetworkBase):
    """An AWS region's VPC. An EKS cluster takes pod addresses from the VPC (VPC CNI) and has no GPU NIC subnets."""

    nat: Literal["single", "perZone"] = Field(
        "single", description="One NAT gateway, or one per zone (survives a zone outage)."
    )
    pods_cidr: ClassVar[None] = None
    control_plane_cidr: ClassVar[None] = None
    accelerator_cidr: ClassVar[None] = None
    OTHER_CLOUD_KEYS: ClassVar[Mapping[str, str]] = MappingProxyType(
        dict.fromkeys(
            ("podsCidr", "controlPlaneCidr", "acceleratorCidr"),
            "GCP only: an EKS cluster takes pod addresses from the VPC (VPC CNI); remove it",
        )
    )

    @property
    def webhook_source_cidr(self) -> IPv4Network:
        """Where the API server's webhook calls come from: EKS's control-plane network interfaces sit in the
        cluster's subnets, inside the VPC's range (upstream.MANAGED_CONTROL_PLANE_ADDRESSES)."""
        return self.cidr


class GcpNetworkSpec(NetworkBase):
    """A GCP region's VPC-native subnet, its secondary ranges and the control plane's range (Cloud NAT is per region)."""

    pods_cidr: IPv4Network | None = Field(
        None, description="Secondary range for pods (VPC-native), e.g. 10.64.0.0/14; required."
    )
    control_plane_cidr: IPv4Network | None = Field(
        None,
        description="/28 for the private control plane; required. The nodes' firewall admits it on the ports of "
        "the webhooks and aggregated APIs we install (components/catalog/webhooks.py); an existing cluster's network "
        "needs that rule from its owner.",
    )
    accelerator_cidr: IPv4Network | None = Field(
        None,
        description="GPUDirect pools: range cut into one /24 per GPU NIC subnet (each pool's NIC VPCs "
        "reuse it); must not overlap the other ranges. Default 192.168.0.0/16.",
    )
    nat: ClassVar[Literal["single"]] = "single"
    OTHER_CLOUD_KEYS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"nat": "AWS only: Cloud NAT serves a GCP region's nodes, one per region; remove it"}
    )

    @property
    def webhook_source_cidr(self) -> IPv4Network | None:
        """Where the API server's webhook calls come from: a private GKE cluster's control-plane range, reached over
        VPC peering (upstream.MANAGED_CONTROL_PLANE_ADDRESSES)."""
        return self.control_plane_cidr


NetworkSpec = AwsNetworkSpec | GcpNetworkSpec
"""A region's network, of its region entry's cloud."""


def gpu_nic_cidr(network: NetworkSpec) -> IPv4Network:
    """The range GPUDirect pools' NIC subnets are cut from."""
    return network.accelerator_cidr or DEFAULT_ACCELERATOR_CIDR


class ApiAccessSpec(Spec):
    """Who may reach the Kubernetes API server."""

    public_cidrs: list[IPv4Network] = Field(
        default_factory=list,
        description="CIDRs allowed on the public endpoint; empty keeps the endpoint private-only.",
    )


class ExistingClusterBase(Spec):
    """A cluster the platform builds on instead of creating one: its network, control plane and system nodes
    are yours; the platform adds GPU pools, add-ons and models."""

    name: str = Field(description="The EKS / GKE cluster's name in this region (and project).")
    egress_ips: list[IPv4Address] = Field(
        default_factory=list,
        description="Public addresses its nodes reach the internet from (NAT), for peers' allowlists (Karmada's).",
    )

    @abstractmethod
    def id_issues(self, at: KeyPath) -> Iterator[Issue]:
        """The cluster's name and the ids it gives, in the formats its cloud takes."""

    @abstractmethod
    def gpu_node_issues(self, pool_zones: Collection[str], at: KeyPath) -> Iterator[Issue]:
        """What GPU pools joining the cluster need from its owner (nodes in `pool_zones`)."""


class AwsExistingClusterSpec(ExistingClusterBase):
    """An existing EKS cluster: GPU nodes join it with the node role and subnets given here."""

    node_role_arn: str | None = Field(None, description="IAM role of the GPU nodes (an EKS node role).")
    subnets: dict[str, str] = Field(
        default_factory=dict, description="Private subnet id per zone, for the GPU pools' nodes."
    )
    node_service_account: ClassVar[None] = None
    OTHER_CLOUD_KEYS: ClassVar[Mapping[str, str]] = MappingProxyType({"nodeServiceAccount": "only for GCP; remove it"})
    network_known: ClassVar[bool] = True
    """The stack reads the cluster's VPC from EKS (its vpc_config), e.g. to bind a private DNS zone to it."""

    def id_issues(self, at: KeyPath) -> Iterator[Issue]:
        if self.name.startswith("arn:"):
            yield Issue(join_path(*at, "name"), f"{self.name!r} is an ARN; give the cluster's name, e.g. team-eks")
        elif not EKS_CLUSTER_NAME.match(self.name):
            yield Issue(
                join_path(*at, "name"),
                f"{self.name!r} is not an EKS cluster name (letters, digits, '-', '_', starting with a letter or "
                "digit, at most 100); give the name `aws eks list-clusters` shows",
            )
        if self.node_role_arn is not None and not ROLE_ARN.match(self.node_role_arn):
            yield Issue(
                join_path(*at, "nodeRoleArn"),
                f"{self.node_role_arn!r} is not an IAM role ARN; write arn:aws:iam::<12-digit account>:role/<name>",
            )
        for zone, subnet in self.subnets.items():
            if not SUBNET_ID.match(subnet):
                yield Issue(
                    join_path(*at, "subnets", zone),
                    f"{subnet!r} is not a subnet id; write subnet- and its 8 or 17 hex digits (aws ec2 describe-subnets)",
                )

    def gpu_node_issues(self, pool_zones: Collection[str], at: KeyPath) -> Iterator[Issue]:
        if not self.node_role_arn:
            yield Issue(
                join_path(*at, "nodeRoleArn"),
                "GPU pools on an existing EKS cluster need the nodes' IAM role: nodeRoleArn: "
                "arn:aws:iam::<account>:role/<node-role>",
            )
        zones = sorted(set(pool_zones) - set(self.subnets))
        if zones:
            yield Issue(
                join_path(*at, "subnets"),
                f"no private subnet for zone(s) {', '.join(zones)} the GPU pools use; add `{zones[0]}: subnet-...`",
            )


class GcpExistingClusterSpec(ExistingClusterBase):
    """An existing GKE cluster: GPU nodes run as the service account given here."""

    node_service_account: str | None = Field(
        None, description="Service account e-mail of the GPU nodes (least privilege, not the default one)."
    )
    node_role_arn: ClassVar[None] = None
    subnets: ClassVar[Mapping[str, str]] = MappingProxyType({})  # GKE nodes join the cluster's own subnet
    OTHER_CLOUD_KEYS: ClassVar[Mapping[str, str]] = MappingProxyType(
        dict.fromkeys(("nodeRoleArn", "subnets"), "only for AWS; remove it")
    )
    network_known: ClassVar[bool] = False
    """The stack is not told the cluster's VPC network (the GKE cluster's owner holds it)."""

    def id_issues(self, at: KeyPath) -> Iterator[Issue]:
        if not GKE_CLUSTER_NAME.match(self.name):
            yield Issue(
                join_path(*at, "name"),
                f"{self.name!r} is not a GKE cluster name (lowercase letters, digits, '-', at most 40); give the "
                "name `gcloud container clusters list` shows, not its path",
            )
        account = self.node_service_account
        if account is not None and (
            account.endswith("-compute@developer.gserviceaccount.com") or not SERVICE_ACCOUNT.match(account)
        ):
            yield Issue(
                join_path(*at, "nodeServiceAccount"),
                f"{account!r} is not a user-managed service account e-mail (<name>@<project>.iam.gserviceaccount.com; "
                "not the Compute Engine default)",
            )

    def gpu_node_issues(self, pool_zones: Collection[str], at: KeyPath) -> Iterator[Issue]:
        if not self.node_service_account:
            yield Issue(
                join_path(*at, "nodeServiceAccount"),
                "GPU pools on an existing GKE cluster need the nodes' service account: nodeServiceAccount: "
                "<name>@<project>.iam.gserviceaccount.com",
            )


ExistingClusterSpec = AwsExistingClusterSpec | GcpExistingClusterSpec
"""An existing cluster, of its region entry's cloud."""

_EXISTING = "An existing cluster to build on."


class AwsClusterSpec(Spec):
    """Create the region's EKS cluster (the default) or build on one that exists."""

    existing: AwsExistingClusterSpec | None = Field(None, description=_EXISTING)


class GcpClusterSpec(Spec):
    """Create the region's GKE cluster (the default) or build on one that exists."""

    existing: GcpExistingClusterSpec | None = Field(None, description=_EXISTING)


ClusterSpec = AwsClusterSpec | GcpClusterSpec


class CertManagerSpec(Spec):
    """cert-manager, which issues KServe's webhook serving certificate: installed with KServe unless it already runs."""

    existing: bool = Field(
        False,
        description="cert-manager already runs in this cluster (installed out of band, v1.x with its CRDs): the "
        "platform does not install it, and KServe relies on the existing one.",
    )


class NodeScaling(Spec):
    min_size: int = Field(0, ge=0, description="Fewest nodes (0 lets an idle GPU pool cost nothing).")
    max_size: int = Field(ge=1, description="Most nodes the autoscaler may create.")
    desired_size: int | None = Field(None, ge=0, description="Initial size; defaults to minSize.")

    @property
    def desired(self) -> int:
        return self.min_size if self.desired_size is None else self.desired_size


class SystemPoolSpec(NodeScaling):
    """Non-GPU nodes for controllers and add-ons."""

    machine_type: str = Field(description="Instance / machine type, e.g. m7i.xlarge or n2-standard-4.")
    min_size: int = Field(2, ge=1, description="At least one node; two keep controllers available.")
    disk_gib: int = Field(100, ge=20, le=16384, description="Root volume size in GiB.")


class MigSpec(Spec):
    """Split each GPU with MIG: a named upstream config or a custom layout (exactly one)."""

    strategy: Literal["single", "mixed"] = Field(
        "mixed", description="single: one profile per node, exposed as nvidia.com/gpu; mixed: nvidia.com/mig-<profile>."
    )
    profile: str | None = Field(None, description="mig-parted config name, e.g. all-3g.40gb.")
    layout: dict[str, int] | None = Field(
        None, description='Custom per-GPU layout, e.g. {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}.'
    )


class TimeSlicingSpec(Spec):
    """Share each GPU between several pods by time-slicing (no memory isolation)."""

    replicas: int = Field(ge=2, le=48, description="Pods per physical GPU.")


class CapacitySpec(Spec):
    """How the pool buys its GPUs."""

    type: Literal["onDemand", "spot", "reservation", "capacityBlock", "flexStart"] = Field(
        "onDemand",
        description="onDemand; spot; reservation (AWS ODCR / GCP reservation); capacityBlock (AWS "
        "Capacity Blocks for ML); flexStart (GCP DWS flex-start). Only those the machine type is sold through "
        "(OBTAINABLE in components/catalog/machines.py).",
    )
    reservation_id: str | None = Field(
        None, description="ODCR / Capacity Block id (cr-...) or GCP reservation name; required for those types."
    )


class GpuPoolBase(NodeScaling):
    """A pool of GPU nodes: the keys both clouds take."""

    name: Name = Field(description="Pool name, unique within the region; becomes a node label.")
    machine_type: str = Field(description="GPU instance / machine type, e.g. g6e.xlarge or a3-highgpu-8g.")
    zones: list[str] | None = Field(
        None, description="Zones for this pool (subset of the region's zones); default all."
    )
    capacity: CapacitySpec = Field(default_factory=CapacitySpec, description="How the pool buys its GPUs.")
    driver_install: Literal["cloud", "operator"] = Field(
        "cloud",
        description="Who installs the NVIDIA driver: the cloud's node image / GKE, or the GPU Operator.",
    )
    mig: MigSpec | None = Field(None, description="MIG partitioning of the pool's GPUs.")
    time_slicing: TimeSlicingSpec | None = Field(None, description="GPU time-slicing for the pool.")
    placement_group: bool | None = Field(
        None,
        description="Pack nodes close together: AWS cluster placement group / GKE compact placement (one "
        "zone). Default: on when efa or gpuDirect is on.",
    )
    disk_gib: int = Field(
        300,
        ge=100,
        le=16384,
        description="Root / boot disk in GiB; inference images (vLLM, Triton, TensorRT-LLM) are 10-30 GB each.",
    )

    @property
    def packed(self) -> bool:
        """placementGroup, on by default for pools wired to a multi-node fabric."""
        return self.placement_group if self.placement_group is not None else self.multi_node_fabric

    @property
    @abstractmethod
    def multi_node_fabric(self) -> bool:
        """Wired to the cloud's multi-node fabric (EFA, GPUDirect)."""


class AwsGpuPoolSpec(GpuPoolBase):
    """A pool of EC2 GPU instances (an EKS managed node group). GKE's own MIG partitioning and GPUDirect NICs are
    not theirs."""

    efa: bool = Field(False, description="Attach every EFA interface the type has (multi-node NCCL over EFA).")
    image_pull: ImagePull = Field(
        "default",
        description="parallel: nodeadm's FastImagePull, the SOCI snapshotter's parallel pull and unpack of "
        "whole images onto the instance-store NVMe (no SOCI index needed; no lazy loading); default: containerd's "
        "pull. GKE pools stream Artifact Registry images (image streaming) and pull others whole.",
    )
    gke_partition_size: ClassVar[None] = None
    gpu_direct: ClassVar[bool] = False
    placement_kind: ClassVar[str] = "a cluster placement group"
    """What packs a pool's nodes close together, as messages name it."""
    reservation_id_format: ClassVar[re.Pattern[str] | None] = _AWS_RESERVATION_ID
    """A capacity reservation (ODCR or Capacity Block) is named by the id EC2 gives it."""
    driver_in_node_image: ClassVar[bool] = True
    """EKS GPU nodes run the AL2023 NVIDIA AMI, which ships the driver and the container toolkit: the GPU Operator
    runs the device plugin, GFD, DCGM exporter and MIG manager (driverInstall: operator is refused)."""
    cloud_device_plugin: ClassVar[bool] = False
    """EKS runs no GPU device plugin of its own: the GPU Operator's is the only one."""
    OTHER_CLOUD_KEYS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "gkePartitionSize": "only meaningful on GKE; on AWS let the GPU Operator partition the pool: "
            "mig: {profile: all-<size>}",
            "gpuDirect": "GPUDirect networking is GCP's; on AWS set efa instead",
        }
    )

    @property
    def multi_node_fabric(self) -> bool:
        return self.efa


class GcpGpuPoolSpec(GpuPoolBase):
    """A GKE node pool of GPU machines. EFA and nodeadm's parallel image pull are EC2's."""

    gke_partition_size: str | None = Field(
        None, description="Let GKE partition GPUs with MIG (gpu_partition_size), e.g. 1g.10gb."
    )
    gpu_direct: bool = Field(
        False,
        description="Build the nodes of A3/A4 types with their GPUDirect NICs (TCPX, TCPXO or RDMA by "
        "type) and the GPU NIC VPCs and subnets they need, packed by compact placement. NICs are attached only when a "
        "pool is created. Replicas stay within one node on these pools, so no pod uses the NICs yet and the cluster "
        "gets no pod networks or NCCL plugin for them.",
    )
    efa: ClassVar[bool] = False
    image_pull: ClassVar[ImagePull] = "default"
    placement_kind: ClassVar[str] = "compact placement"
    """What packs a pool's nodes close together, as messages name it."""
    reservation_id_format: ClassVar[re.Pattern[str] | None] = None
    """A GCP reservation is named by its owner: no form to check."""
    driver_in_node_image: ClassVar[bool] = False
    """GKE installs the driver (driverInstall: cloud), or the GPU Operator does (operator)."""
    cloud_device_plugin: ClassVar[bool] = True
    """GKE runs its own NVIDIA device plugin on GPU nodes (off with gpu_partitioning.GKE_NO_DEVICE_PLUGIN_LABEL)."""
    OTHER_CLOUD_KEYS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "efa": "EFA is an AWS fabric; on GCP set gpuDirect on an A3/A4 type instead",
            "imagePull": "parallel pull is an EKS node setting (nodeadm's FastImagePull); GKE pools already stream "
            "images from Artifact Registry (image streaming) and pull others whole: remove imagePull",
        }
    )

    @property
    def multi_node_fabric(self) -> bool:
        return self.gpu_direct


GpuPoolSpec = AwsGpuPoolSpec | GcpGpuPoolSpec
"""A GPU pool, of its region entry's cloud: the region's `cloud` decides which keys a pool takes."""


_NETWORK = "Address plan of the cluster's network."
_GPU_POOLS = "GPU node pools of the cluster."
_CLUSTER = "The region's cluster: created here, or an existing one."


class RegionBase(Spec):
    """One region entry: cloud, location, cluster and its pools; the keys both clouds take."""

    name: Name = Field(description="Short name of this region entry; prefixes its cluster and resources.")
    cloud: region_catalog.Cloud = Field(description="aws or gcp.")
    region: str = Field(description="Cloud region, e.g. us-east-1 or us-central1.")
    zones: list[str] = Field(min_length=1, description="Zones the cluster's nodes use.")
    kubernetes_version: str = Field(description="Kubernetes minor version, e.g. '1.33'.")
    network: NetworkSpec = Field(description=_NETWORK)
    api_access: ApiAccessSpec = Field(
        default_factory=ApiAccessSpec, description="Who may reach the Kubernetes API (private by default)."
    )
    system_pool: SystemPoolSpec = Field(description="Non-GPU nodes for controllers and add-ons.")
    gpu_pools: Sequence[GpuPoolSpec] = Field(default_factory=list, description=_GPU_POOLS)
    model_cache: ModelCacheSpec = Field(default_factory=ModelCacheSpec)
    observability: ObservabilitySpec = Field(
        default_factory=ObservabilitySpec, description="Metrics, dashboards and alerts of the cluster."
    )
    gateway: RegionGatewaySpec = Field(
        default_factory=RegionGatewaySpec, description="The cluster's inference gateway (where models are served)."
    )
    serving: ServingSpec = Field(
        default_factory=ServingSpec, description="KServe on the cluster: deployment mode, weight loading, autoscaling."
    )
    cert_manager: CertManagerSpec = Field(
        default_factory=CertManagerSpec,
        description="cert-manager for webhook certificates (KServe's); installed on every cluster that runs KServe.",
    )
    cluster: ClusterSpec = Field(default_factory=AwsClusterSpec, description=_CLUSTER)
    deployer: DeployerSpec | None = Field(
        None,
        description="Where this region's stack is deployed from; default: a runner inside the network when the "
        "API endpoint is private, else the endpoint's publicCidrs.",
    )

    def pool(self, name: str) -> GpuPoolSpec | None:
        return next((p for p in self.gpu_pools if p.name == name), None)

    def wave_runner(self) -> str:
        """Which runner deploys this region's stack: its declared `deployer.runnerLabel`, else one of its own
        (labelled `<env>-<region>`, tools/rollout/ci.py runner_labels)."""
        label = self.deployer.runner_label if self.deployer is not None else None
        return label or f"the runner of {self.name}"

    def pool_zones(self, pool: GpuPoolSpec) -> list[str]:
        return pool.zones or self.zones

    @abstractmethod
    def required_key_issues(self, path: KeyPath) -> Iterator[Issue]:
        """Keys this cloud needs that the model leaves optional (so that their absence is explained)."""

    @abstractmethod
    def network_issues(self, path: KeyPath) -> Iterator[Issue]:
        """The network's ranges against what this cloud's cluster needs of them (`path`: the network's)."""

    @abstractmethod
    def public_dns_zone(self, dns: GatewayDnsSpec) -> tuple[str, str | None]:
        """The `gateway.dns` key naming the public zone a public gateway's name is published in, and its value."""

    def subnet_plan(self) -> tuple[list[IPv4Network], list[IPv4Network]]:
        """AWS address plan: large private subnets per zone, then small public ones per zone.

        The VPC range is cut into 2^k blocks (k the fewest bits giving zones+1 blocks); the
        first `zones` blocks are private, the last is shared out to public subnets.
        """
        zones = len(self.zones)
        bits = max(1, math.ceil(math.log2(zones + 1)))
        blocks = list(self.network.cidr.subnets(prefixlen_diff=bits))
        public_bits = max(1, math.ceil(math.log2(zones)))
        public = list(blocks[-1].subnets(prefixlen_diff=public_bits))[:zones]
        return blocks[:zones], public


class AwsRegionSpec(RegionBase):
    """A region entry on AWS: an EKS cluster in its own VPC."""

    cloud: Literal["aws"] = Field(description="aws or gcp.")
    network: AwsNetworkSpec = Field(description=_NETWORK)
    gpu_pools: list[AwsGpuPoolSpec] = Field(default_factory=list, description=_GPU_POOLS)
    cluster: AwsClusterSpec = Field(default_factory=AwsClusterSpec, description=_CLUSTER)
    project: ClassVar[None] = None
    OTHER_CLOUD_KEYS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"project": "only meaningful on GCP; remove it from this AWS region"}
    )
    bucket_scheme: ClassVar[Literal["s3"]] = "s3"
    """The model bucket is an S3 bucket: its URL scheme for Alluxio's under-store and the weight streamer."""
    critical_pods_need_quota: ClassVar[bool] = False
    """EKS admits system-*-critical pods in any namespace (upstream.GKE_CRITICAL_PODS_NEED_QUOTA is GKE's rule)."""
    fluid_mount_root: ClassVar[None] = None
    """EKS's AL2023 nodes have a writable root: Fluid's default mount root stays (upstream.FLUID_MOUNT_ROOT_ON_THE_NODE)."""
    kubelet_credentials: ClassVar[None] = None
    """EKS kubelets authenticate with an IAM exec plugin, which Fluid's CSI plugin cannot run: it uses its own
    service account."""
    can_source_models: ClassVar[bool] = True
    """Its model bucket can be the source of truth the others are fed from: S3 replication and the S3-to-GCS transfer
    both start from S3."""
    pools_start_per_zone: ClassVar[bool] = False
    """An EKS node group starts at its desired size, spread by the Auto Scaling group (no per-zone count)."""
    kv_transfer_wired: ClassVar[bool] = True
    """The pod networking NIXL's KV-cache hand-off needs (disaggregated serving) is wired here."""

    def required_key_issues(self, path: KeyPath) -> Iterator[Issue]:
        yield from ()

    def network_issues(self, path: KeyPath) -> Iterator[Issue]:
        net = self.network
        private, _ = self.subnet_plan()
        if private[0].prefixlen > _SMALLEST_PRIVATE_SUBNET_PREFIX:
            needed = _SMALLEST_PRIVATE_SUBNET_PREFIX - (private[0].prefixlen - net.cidr.prefixlen)
            yield Issue(
                join_path(*path, "cidr"),
                f"{net.cidr} is too small for {len(self.zones)} zones (private subnets would be "
                f"/{private[0].prefixlen}); use a /{needed} or larger",
            )
        if not net.cidr.is_private:
            yield Issue(join_path(*path, "cidr"), f"{net.cidr} is not a private range; use RFC 1918 space")

    def public_dns_zone(self, dns: GatewayDnsSpec) -> tuple[str, str | None]:
        return "route53ZoneId", dns.route53_zone_id

    @property
    def bucket_client_env(self) -> Mapping[str, str]:
        """What a client streaming from the model bucket must be told: its region, since the weight streamer's S3
        client does not follow S3's region redirects."""
        return {"AWS_REGION": self.region}


class GcpRegionSpec(RegionBase):
    """A region entry on GCP: a GKE cluster in a project's VPC-native subnet."""

    cloud: Literal["gcp"] = Field(description="aws or gcp.")
    network: GcpNetworkSpec = Field(description=_NETWORK)
    gpu_pools: list[GcpGpuPoolSpec] = Field(default_factory=list, description=_GPU_POOLS)
    cluster: GcpClusterSpec = Field(default_factory=GcpClusterSpec, description=_CLUSTER)
    project: str | None = Field(None, description="The project id to create resources in; required.")
    bucket_scheme: ClassVar[Literal["gs"]] = "gs"
    """The model bucket is a GCS bucket: its URL scheme for Alluxio's under-store and the weight streamer."""
    critical_pods_need_quota: ClassVar[bool] = True
    """GKE admits system-*-critical pods outside kube-system only with a ResourceQuota scoped to their class
    (upstream.GKE_CRITICAL_PODS_NEED_QUOTA)."""
    fluid_mount_root: ClassVar[str] = "/var/lib/docker/runtime-mnt"
    """Container-Optimized OS mounts / read-only, so Fluid mounts its FUSE file systems under /var/lib/docker, which is
    writable (upstream.FLUID_MOUNT_ROOT_ON_THE_NODE)."""
    kubelet_credentials: ClassVar[KubeletCredentials] = KubeletCredentials(
        kubeconfig="/var/lib/kubelet/kubeconfig", cert_dir="/var/lib/kubelet/pki"
    )
    """GKE kubelets authenticate with a client certificate, which Fluid's CSI plugin borrows (node authorization)."""
    bucket_client_env: ClassVar[Mapping[str, str]] = MappingProxyType({})
    """A GCS client needs no region to stream from the model bucket."""
    can_source_models: ClassVar[bool] = False
    """The other buckets are fed by S3 replication and the S3-to-GCS transfer, which start from S3."""
    pools_start_per_zone: ClassVar[bool] = True
    """GKE creates a node pool with its initial node count in each of its zones, and no autoscaler brings it up to
    its minimum later (upstream.AUTOSCALER_ADDS_NODES_ONLY_FOR_PENDING_PODS)."""
    kv_transfer_wired: ClassVar[bool] = False
    """The RDMA pod networking NIXL needs is not wired on GKE yet."""

    def required_key_issues(self, path: KeyPath) -> Iterator[Issue]:
        if not self.project:
            yield Issue(join_path(*path, "project"), "required on GCP; set the project id to deploy into")
        for key in ("pods_cidr", "services_cidr", "control_plane_cidr"):
            if getattr(self.network, key) is None:
                alias = config_key(GcpNetworkSpec, key)
                yield Issue(join_path(*path, "network", alias), "required on GCP; add a CIDR range")

    def network_issues(self, path: KeyPath) -> Iterator[Issue]:
        control_plane = self.network.control_plane_cidr
        if control_plane and control_plane.prefixlen != 28:
            yield Issue(
                join_path(*path, "controlPlaneCidr"), "GKE needs a /28 for the control plane, e.g. 172.16.0.0/28"
            )

    def public_dns_zone(self, dns: GatewayDnsSpec) -> tuple[str, str | None]:
        return "cloudDnsZone", dns.cloud_dns_zone


RegionSpec = Annotated[AwsRegionSpec | GcpRegionSpec, Field(discriminator="cloud")]
"""A region entry: its `cloud` decides which model reads it, so a key of the other cloud is an unknown key."""
