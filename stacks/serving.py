"""Serving on one region's cluster: KServe, KEDA (Standard mode) and a deployment per model placed there."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.addons.cert_manager import CertManager, CertManagerArgs
from components.addons.keda import Keda, KedaArgs
from components.addons.kserve import KServe, KServeArgs
from components.addons.model_cache import model_storage_uri
from components.addons.observability import Observability
from components.addons.volcano import Volcano
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.k8s.cluster import ClusterHandle
from components.serving.deployment import model_placements
from components.serving.model_deployment import KedaScaling, ModelDeployment, ModelDeploymentArgs
from stacks.model_storage import RegionalModelStorage


@dataclass
class RegionalServing:
    kserve: KServe
    keda: Keda | None
    models: dict[str, ModelDeployment]
    cert_manager: list[pulumi.Resource]  # its release, where the stack installs it (CRDs and webhook)


def build_serving(
    parent: pulumi.Resource,
    env: EnvironmentSpec,
    region: RegionSpec,
    stack: str,
    cluster: ClusterHandle,
    volcano: Volcano,
    storage: RegionalModelStorage,
    observability: Observability | None,
) -> RegionalServing:
    opts = pulumi.ResourceOptions(parent=parent)
    cert_manager = []
    if not region.cert_manager.existing:
        cert_manager = [
            CertManager(
                region.name,
                CertManagerArgs(cluster=cluster, label_domain=env.label_domain, production=env.production),
                opts=opts,
            )
        ]
    kserve = KServe(
        region.name,
        KServeArgs(
            cluster=cluster,
            label_domain=env.label_domain,
            deployment_mode=region.serving.deployment_mode,
            production=env.production,
            cert_manager=[c.release for c in cert_manager],
        ),
        opts=opts,
    )
    keda = None
    if region.serving.deployment_mode == "Standard":
        keda = Keda(
            region.name, KedaArgs(cluster=cluster, label_domain=env.label_domain, production=env.production), opts=opts
        )
    prometheus_url = region.serving.prometheus_url or (observability.prometheus_url if observability else None)
    # Model pods need the controller and runtimes, their queue and PriorityClass, their namespace and
    # service account, and (pvc://) the cache's PVC.
    depends_on: list[pulumi.Resource] = [kserve.release, *kserve.runtimes, volcano, storage.serving]
    if storage.cache is not None:
        depends_on.append(storage.cache)
    models = {
        p.name: ModelDeployment(
            f"{region.name}-{p.name}",
            ModelDeploymentArgs(
                cluster=cluster,
                placement=p,
                storage_uri=model_storage_uri(env, region, stack, p.model),
                depends_on=depends_on,
                llm_inference_service=kserve.llm_inference_service,
                keda=KedaScaling(release=keda.release, prometheus_url=prometheus_url)
                if keda is not None and prometheus_url and p.autoscaler == "keda"
                else None,
                federated=p.model.federated and env.federation.enabled,
            ),
            opts=opts,
        )
        for p in model_placements(env, region)
    }
    return RegionalServing(kserve, keda, models, [c.release for c in cert_manager])
