"""One region entry: the cloud's network and cluster, then everything that runs on it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi

from components.addons.dcgm_exporter import DcgmExporter, DcgmExporterArgs, gke_managed_pools
from components.addons.gpu_operator import GpuOperator, GpuOperatorArgs, needs_gpu_operator, operator_pools
from components.addons.inference_gateway import InferenceGateway
from components.addons.observability import Observability
from components.addons.volcano import Volcano
from components.config.base import ConfigError, Issue, join_path
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.domain.gateways import has_gateway
from components.k8s.cluster import ClusterHandle
from components.k8s.names import cluster_name as cluster_name_of
from stacks.clouds import backend_for
from stacks.gateway import inference_gateway_args
from stacks.gateway_names import gateway_certificate, gateway_dns
from stacks.model_storage import RegionalModelStorage, build_model_storage
from stacks.observability import observability_args
from stacks.scheduling import volcano_args
from stacks.serving import RegionalServing, build_serving


@dataclass(frozen=True)
class RegionalPlatformArgs:
    env: EnvironmentSpec
    region: RegionSpec
    stack: str
    api_keys: Mapping[str, pulumi.Output[str]] = field(default_factory=dict)  # tenant -> secret gateway key
    # The region's issuing CA (its intermediate's certificate chain, its key) when cert-manager issues the gateway's
    # certificate.
    gateway_ca: tuple[pulumi.Input[str], pulumi.Input[str]] | None = None
    # The network-first step (INFERENCE_PLATFORM_BOOTSTRAP=network): the region's provider and network, nothing else.
    network_only: bool = False
    # Addresses the cluster's public endpoint admits besides the region's publicCidrs: the federation host's NAT egress,
    # where pods on the host dial this cluster (stacks/environment.py dialled_by_the_host).
    public_sources: pulumi.Input[Sequence[str]] | None = None


class RegionalPlatform(pulumi.ComponentResource):
    """Cloud + add-ons + workloads for one region entry."""

    cluster: ClusterHandle
    volcano: Volcano | None  # GPU clusters only; model deployments depend on its release
    model_storage: RegionalModelStorage
    observability: Observability | None  # its prometheus_url feeds autoscalers on metrics
    gateway: InferenceGateway | None  # where the region serves models
    serving: RegionalServing | None  # GPU clusters only: KServe, KEDA and the models placed here

    def __init__(self, name: str, args: RegionalPlatformArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:stacks:RegionalPlatform", name, None, opts)
        region = args.region
        cluster_name = cluster_name_of(args.stack, region)
        if args.network_only:
            backend_for(region.cloud).network(self, args.env, region, cluster_name, args.stack)
            self.register_outputs({"cluster": cluster_name})
            return
        self.cluster = backend_for(region.cloud).cluster(
            self, args.env, region, cluster_name, args.stack, public_sources=args.public_sources
        )

        self.volcano = None
        if region.gpu_pools:
            self.volcano = Volcano(
                region.name, volcano_args(args.env, region, self.cluster), opts=pulumi.ResourceOptions(parent=self)
            )
        # GKE-managed GPU pools need no operator; every other GPU pool does.
        gpu_operator = None
        if needs_gpu_operator(region):
            gpu_operator = GpuOperator(
                f"{region.name}-gpu-operator",
                GpuOperatorArgs(cluster=self.cluster, pools=operator_pools(region)),
                opts=pulumi.ResourceOptions(parent=self),
            )
        if gpu_operator is not None and any(pool.efa for pool in region.gpu_pools):
            from components.aws.efa_device_plugin import EfaDevicePlugin, EfaDevicePluginArgs

            EfaDevicePlugin(
                region.name,
                EfaDevicePluginArgs(
                    cluster=self.cluster, label_domain=args.env.label_domain, namespace=gpu_operator.namespace
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        # GKE-managed pools run no operator: their GPU metrics come from a DCGM exporter of their own.
        if gke_managed := [p.name for p in gke_managed_pools(region)]:
            DcgmExporter(
                region.name,
                DcgmExporterArgs(cluster=self.cluster, label_domain=args.env.label_domain, pools=gke_managed),
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.model_storage = build_model_storage(self, args.env, region, args.stack, self.cluster)

        self.observability = None
        if region.observability.enabled:
            self.observability = Observability(
                region.name,
                observability_args(args.env, region, self.cluster),
                opts=pulumi.ResourceOptions(parent=self),
            )

        self.serving = None
        if self.volcano is not None:
            self.serving = build_serving(
                self, args.env, region, args.stack, self.cluster, self.volcano, self.model_storage, self.observability
            )
        self.gateway = None
        if has_gateway(args.env, region):
            serving = self.serving
            if serving is None:  # check_workloads: a placement names a GPU pool of its region
                at = join_path("regions", args.env.regions.index(region), "gpuPools")
                raise ConfigError([Issue(at, "a region serving models needs a GPU pool its placements name")])
            self.gateway = InferenceGateway(
                region.name,
                inference_gateway_args(
                    args.env,
                    region,
                    self.cluster,
                    serving_namespace=self.model_storage.serving.namespace,
                    inference_pool_crds=serving.kserve.inference_pool_crds,
                    api_keys=args.api_keys,
                    cert_manager=serving.cert_manager,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            gateway_certificate(
                self,
                args.env,
                region,
                self.cluster,
                ca=args.gateway_ca,
                cert_manager=serving.cert_manager,
                gateway=self.gateway,
            )
            gateway_dns(self, args.env, region, self.cluster, gateway=self.gateway)

        self.register_outputs({"cluster": cluster_name, "endpoint": self.cluster.endpoint})
