"""Private GKE Standard cluster with Workload Identity, shielded nodes and a system node pool."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv4Network

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.catalog.webhooks import control_plane_webhook_ports
from components.config.gpu_pools import initial_nodes_per_zone
from components.config.region import SystemPoolSpec
from components.gcp.network import PODS_RANGE, SERVICES_RANGE, GcpLocation, GcpNetwork
from components.k8s.cluster import ExecAuth, kubernetes_provider, render_kubeconfig
from components.k8s.inputs import InputError

# Least privilege for node service accounts (GKE hardening guide).
NODE_ROLES = (
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/monitoring.viewer",
    "roles/stackdriver.resourceMetadata.writer",
    "roles/artifactregistry.reader",
)
CLUSTER_TIMEOUTS = pulumi.CustomTimeouts(create="45m", update="90m", delete="45m")


@dataclass(frozen=True, kw_only=True)
class GkeClusterArgs:
    location: GcpLocation
    zones: Sequence[str]  # where the control plane's and the system pool's nodes run
    kubernetes_version: str  # the minimum master version, e.g. "1.33"
    cluster_name: str
    network: GcpNetwork
    node_cidr: IPv4Network  # the nodes' subnet: always admitted to the API
    control_plane_cidr: IPv4Network  # the private endpoint's /28
    public_cidrs: Sequence[IPv4Network] = ()  # none: a private endpoint only
    # Addresses the public endpoint admits besides public_cidrs, known only at deploy time: the federation host's NAT
    # egress, whose pods dial this cluster (Karmada in push mode, Clusterpedia: catalog.bringup
    # KARMADA_PUSH_MEMBER_READY, CLUSTERPEDIA_MEMBER_HEALTHY). Needs public_cidrs.
    public_sources: pulumi.Input[Sequence[str]] | None = None
    private_link_cidrs: Sequence[IPv4Network] = ()  # a deployer's private link, admitted to the API
    multi_networking: bool = False  # GPUDirect pools attach extra node networks
    system_pool: SystemPoolSpec
    label_domain: str
    production: bool

    def __post_init__(self) -> None:
        if not self.zones:
            raise InputError("zones", "name at least one zone of the region for the nodes")
        if self.public_sources is not None and not self.public_cidrs:
            raise InputError("public_sources", "admitting addresses needs the public endpoint: give public_cidrs too")


def gke_kubeconfig(cluster_name: str, endpoint: pulumi.Input[str], ca: pulumi.Input[str]) -> pulumi.Output[str]:
    """A secret kubeconfig authenticating through gke-gcloud-auth-plugin (no static token)."""
    auth = ExecAuth(command="gke-gcloud-auth-plugin", args=(), provide_cluster_info=True)
    return pulumi.Output.secret(
        pulumi.Output.all(endpoint, ca).apply(lambda a: render_kubeconfig(cluster_name, f"https://{a[0]}", a[1], auth))
    )


class GkeCluster(pulumi.ComponentResource):
    cluster: gcp.container.Cluster
    node_service_account: gcp.serviceaccount.Account
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider  # the cluster's own, once the system pool is up
    endpoint: pulumi.Output[str]
    ready: list[pulumi.Resource]  # what workloads wait for

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:gcp:GkeCluster", name, None, opts)
        location = args.location
        child = pulumi.ResourceOptions(parent=self)
        stateful = pulumi.ResourceOptions(parent=self, protect=args.production, retain_on_delete=args.production)

        # Nodes never run as the Compute Engine default service account (Editor on the project).
        self.node_service_account = gcp.serviceaccount.Account(
            f"{name}-nodes",
            account_id=f"{args.cluster_name}-nodes"[:30],
            display_name=f"GKE nodes of {args.cluster_name}",
            project=location.project,
            opts=child,
        )
        node_sa_member = self.node_service_account.email.apply(lambda e: f"serviceAccount:{e}")
        for role in NODE_ROLES:
            gcp.projects.IAMMember(
                f"{name}-nodes-{role.split('/')[-1]}",
                project=location.project,
                role=role,
                member=node_sa_member,
                opts=child,
            )

        public_cidrs = [str(c) for c in args.public_cidrs]
        authorized = (
            [{"cidr_block": str(args.node_cidr), "display_name": "nodes"}]
            + [{"cidr_block": c, "display_name": f"public-{i}"} for i, c in enumerate(public_cidrs)]
            + [
                {"cidr_block": str(c), "display_name": f"private-link-{i}"}
                for i, c in enumerate(args.private_link_cidrs)
            ]
        )
        authorized_networks: pulumi.Input[list[dict[str, str]]] = authorized
        if args.public_sources is not None:  # named for the Karmada host, which Clusterpedia's is too (a rename
            # would update every existing member's authorized networks)
            authorized_networks = pulumi.Output.from_input(args.public_sources).apply(
                lambda ips: (
                    authorized
                    + [
                        {"cidr_block": f"{ip}/32", "display_name": f"karmada-host-{i}"}
                        for i, ip in enumerate(ips)
                        if f"{ip}/32" not in public_cidrs
                    ]
                )
            )
        self.workload_pool = f"{location.project}.svc.id.goog"
        self.cluster = gcp.container.Cluster(
            f"{name}-cluster",
            name=args.cluster_name,
            project=location.project,
            location=location.region,
            node_locations=list(args.zones),
            network=args.network.network.id,
            subnetwork=args.network.subnet.id,
            networking_mode="VPC_NATIVE",
            ip_allocation_policy={
                "cluster_secondary_range_name": PODS_RANGE,
                "services_secondary_range_name": SERVICES_RANGE,
            },
            private_cluster_config={
                "enable_private_nodes": True,
                "enable_private_endpoint": not public_cidrs,
                "master_ipv4_cidr_block": str(args.control_plane_cidr),
                "master_global_access_config": {"enabled": False},
            },
            master_authorized_networks_config={"cidr_blocks": authorized_networks},
            workload_identity_config={"workload_pool": self.workload_pool},
            enable_shielded_nodes=True,
            release_channel={"channel": "REGULAR"},
            min_master_version=args.kubernetes_version,
            remove_default_node_pool=True,
            initial_node_count=1,
            # The short-lived default pool still must not use the default service account.
            node_config={
                "service_account": self.node_service_account.email,
                "oauth_scopes": ["https://www.googleapis.com/auth/cloud-platform"],
                "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
                "workload_metadata_config": {"mode": "GKE_METADATA"},
            },
            datapath_provider="ADVANCED_DATAPATH",
            # GPUDirect pools attach extra node networks (one per GPU NIC); GKE needs multi-networking for that.
            enable_multi_networking=args.multi_networking or None,
            logging_config={"enable_components": ["SYSTEM_COMPONENTS", "APISERVER", "WORKLOADS"]},
            monitoring_config={
                "enable_components": ["SYSTEM_COMPONENTS", "APISERVER"],
                "managed_prometheus": {"enabled": False},
            },
            master_auth={"client_certificate_config": {"issue_client_certificate": False}},
            deletion_protection=args.production,
            resource_labels={"platform": "inference-platform", "cluster": args.cluster_name},
            opts=pulumi.ResourceOptions.merge(stateful, pulumi.ResourceOptions(custom_timeouts=CLUSTER_TIMEOUTS)),
        )

        # GKE_CONTROL_PLANE_FIREWALL: GKE's own rule lets the control plane reach the nodes on 443 and 10250 only;
        # the webhooks and aggregated APIs we install listen on other pod ports. Every pool runs as this account.
        gcp.compute.Firewall(
            f"{name}-control-plane-webhooks",
            name=f"{args.cluster_name}-control-plane-webhooks",
            project=location.project,
            network=args.network.network.id,
            direction="INGRESS",
            source_ranges=[str(args.control_plane_cidr)],
            target_service_accounts=[self.node_service_account.email],
            allows=[{"protocol": "tcp", "ports": [str(p) for p in control_plane_webhook_ports()]}],
            description="GKE control plane to admission/conversion webhooks and aggregated APIs on the pods",
            opts=child,
        )

        pool = args.system_pool
        self.system_pool = gcp.container.NodePool(
            f"{name}-system",
            name="system",
            project=location.project,
            location=location.region,
            cluster=self.cluster.name,
            initial_node_count=initial_nodes_per_zone(pool.desired, pool.max_size, len(args.zones)),
            autoscaling={
                "total_min_node_count": pool.min_size,
                "total_max_node_count": pool.max_size,
                "location_policy": "BALANCED",
            },
            management={"auto_repair": True, "auto_upgrade": True},
            upgrade_settings={"max_surge": 1, "max_unavailable": 0},
            node_config={
                "machine_type": pool.machine_type,
                "disk_type": "pd-balanced",
                "disk_size_gb": pool.disk_gib,
                "image_type": "COS_CONTAINERD",
                "service_account": self.node_service_account.email,
                "oauth_scopes": ["https://www.googleapis.com/auth/cloud-platform"],
                "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
                "workload_metadata_config": {"mode": "GKE_METADATA"},
                "metadata": {"disable-legacy-endpoints": "true"},
                "labels": {f"{args.label_domain}/pool": "system"},
            },
            opts=pulumi.ResourceOptions(
                parent=self, ignore_changes=["initialNodeCount"], custom_timeouts=CLUSTER_TIMEOUTS
            ),
        )

        self.kubeconfig = gke_kubeconfig(
            args.cluster_name, self.cluster.endpoint, self.cluster.master_auth["cluster_ca_certificate"]
        )
        self.provider = kubernetes_provider(args.cluster_name, self.kubeconfig, self, [self.system_pool])
        self.endpoint = self.cluster.endpoint
        self.ready = [self.system_pool]
        self.register_outputs({"endpoint": self.cluster.endpoint, "kubeconfig": self.kubeconfig})
