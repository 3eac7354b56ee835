"""Another team's Pulumi program: one GPU pool and one model on an EKS cluster that already exists.

It installs the inference platform as a package (README.md) and composes the platform's components itself, as
`stacks/` does for a whole environment: the cluster is read, never managed; the GPU pool (with Cluster
Autoscaler), the GPU Operator (device plugin), Volcano (the model pods' scheduler), cert-manager and KServe are
what the model needs; its weights are read from an S3 bucket of its own through IRSA. Its config is the
platform's schema under this project's namespace, validated by the platform's models, and limited to what this
program builds: anything else is refused with the platform's one-line errors, never ignored.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pulumi.runtime import config as runtime_config
from pydantic import ValidationError

from components.addons.cert_manager import CertManager, CertManagerArgs
from components.addons.gpu_operator import GpuOperator, GpuOperatorArgs, operator_pools
from components.addons.kserve import KServe, KServeArgs
from components.addons.model_cache import model_storage_uri
from components.addons.volcano import Volcano
from components.aws.cluster_autoscaler import (
    ClusterAutoscaler,
    ClusterAutoscalerArgs,
    max_graceful_termination_seconds,
    scale_down_unneeded_seconds,
)
from components.aws.existing_cluster import ExistingEksCluster, ExistingEksClusterArgs
from components.aws.gpu_node_group import EksGpuNodeGroup, EksGpuNodeGroupArgs
from components.aws.model_store import S3ModelStore, S3ModelStoreArgs
from components.catalog.peers import NAMESPACE_NAME_LABEL
from components.checks.loader import config_key_issues, load_environment
from components.config.base import ConfigError, Issue, join_path
from components.config.environment import EnvironmentSpec
from components.k8s.cluster import ClusterHandle, IrsaIdentity
from components.k8s.names import MODEL_SERVER_SERVICE_ACCOUNT, model_bucket_name
from components.k8s.workload_identity import ServiceAccountRef
from components.serving.deployment import model_placements
from components.serving.identity import ServingIdentity, ServingIdentityArgs
from components.serving.model_deployment import ModelDeployment, ModelDeploymentArgs
from components.serving.network_policies import policy, prometheus_namespace
from components.serving.runtimes import HTTP_PORT
from platform_catalog.names import SERVING_NAMESPACE
from stacks.config import engine_config, namespace_values
from stacks.scheduling import volcano_args

MODEL_SERVER = "model-server"  # the bucket's reader: the model servers' service account
CLIENT_NAMESPACES = "clientNamespaces"  # this program's own key, beside the platform's
# A Kubernetes namespace name (RFC 1123 label).
NAMESPACE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def read_config(project: str) -> tuple[EnvironmentSpec, list[str]]:
    """The environment and the client namespaces, or every mistake at once (ConfigError: one line each)."""
    config = engine_config()
    values = namespace_values(project, config)
    clients = values.pop(CLIENT_NAMESPACES, None)
    issues = config_key_issues(config, project) + list(client_namespace_issues(clients))
    # The scope first, once the structure is valid: a gateway switched on also fails the platform's gateway checks,
    # and the line that says this program runs none is the one to read.
    with contextlib.suppress(ValidationError):  # load_environment reports it, key by key
        issues += out_of_scope(EnvironmentSpec.model_validate(values))
    secret = {key.split(":", 1)[1] for key in config if runtime_config.is_config_secret(key)}
    try:
        env = load_environment(values, secret_keys=secret)
    except ConfigError as exc:
        issues += exc.issues
    if issues:
        raise ConfigError(issues)
    return env, clients


def client_namespace_issues(clients: Any) -> Iterator[Issue]:
    if not isinstance(clients, list) or not clients:
        yield Issue(CLIENT_NAMESPACES, "list the namespaces whose pods call the model, e.g. [search-api]")
        return
    for i, name in enumerate(clients):
        if not isinstance(name, str) or not NAMESPACE_NAME.match(name):
            yield Issue(
                join_path(CLIENT_NAMESPACES, i),
                f"{name!r} is not a namespace name; use lowercase letters, digits and '-' (at most 63)",
            )


def out_of_scope(env: EnvironmentSpec) -> list[Issue]:
    """What the platform's schema allows and this program does not build."""
    issues = [
        Issue(join_path("regions", i), "this program builds on one cluster; keep one region entry")
        for i in range(1, len(env.regions))
    ]
    region = env.regions[0]
    if region.cloud != "aws" or region.cluster.existing is None:
        issues.append(
            Issue(
                "regions[0].cluster.existing",
                "this program builds on an EKS cluster that exists; set cloud: aws and cluster.existing",
            )
        )
    if len(region.gpu_pools) != 1:
        issues.append(Issue("regions[0].gpuPools", "this program builds one GPU pool; keep one"))
    elif region.gpu_pools[0].efa:
        issues.append(Issue("regions[0].gpuPools[0].efa", "this program installs no EFA device plugin; remove it"))
    switched_on = {
        "gateway.enabled": (
            env.gateway.enabled and region.gateway.enabled,
            "this program runs no gateway (clientNamespaces call the model); set it to false",
        ),
        "regions[0].observability.enabled": (
            region.observability.enabled,
            "this program installs no monitoring; set it to false",
        ),
        "regions[0].modelCache.enabled": (region.model_cache.enabled, "this program runs no model cache; remove it"),
        "regions[0].serving.deploymentMode": (
            region.serving.deployment_mode != "Standard",
            "this program serves in Standard mode; remove it",
        ),
        "federation.enabled": (env.federation.enabled, "this program builds on one cluster; remove it"),
        "tenants": (bool(env.tenants), "this program runs no gateway, so no tenants; remove them"),
    }
    issues += [Issue(path, message) for path, (on, message) in switched_on.items() if on]
    if len(env.models) != 1 or len(env.models[0].placements) != 1:
        issues.append(Issue("models", "this program serves one model in one placement; keep one of each"))
        return issues
    placement = env.models[0].placements[0]
    at = "models[0].placements[0]"
    if placement.serving_mode != "aggregated":
        issues.append(Issue(f"{at}.servingMode", "this program serves aggregated replicas; set aggregated"))
    if placement.min_replicas != placement.max_replicas:
        issues.append(
            Issue(
                f"{at}.maxReplicas",
                f"this program runs a fixed number of replicas (no KEDA); set it to minReplicas "
                f"({placement.min_replicas})",
            )
        )
    return issues


def main() -> None:
    env, clients = read_config(pulumi.get_project())
    stack = pulumi.get_stack()
    region = env.regions[0]
    existing, pool = region.cluster.existing, region.gpu_pools[0]
    assert existing is not None, "out_of_scope refuses a region without an existing cluster"
    (placement,) = model_placements(env, region)
    label_domain = env.label_domain

    aws_provider = aws.Provider(f"{region.name}-aws", region=region.region, default_tags={"tags": env.tags})
    on_aws = pulumi.ResourceOptions(providers={"aws": aws_provider})
    found = ExistingEksCluster(
        region.name,
        ExistingEksClusterArgs(
            aws_region=region.region,
            cluster_name=existing.name,
            node_role_arn=existing.node_role_arn or "",  # the config requires it with a GPU pool
            subnets=existing.subnets,
        ),
        opts=on_aws,
    )
    identity = IrsaIdentity(oidc_provider_arn=found.oidc_provider_arn, oidc_issuer=found.oidc_issuer)
    cluster = replace(
        ClusterHandle.of(found, name=existing.name, region=region), cloud_provider=aws_provider, identity=identity
    )

    gpu_pool = EksGpuNodeGroup(
        f"{region.name}-{pool.name}",
        EksGpuNodeGroupArgs(
            zones=region.pool_zones(pool),
            kubernetes_version=region.kubernetes_version,
            pool=pool,
            cluster_name=existing.name,
            label_domain=label_domain,
            target=found.target,
            scale_down_unneeded_seconds=scale_down_unneeded_seconds([placement.startup_budget_seconds]),
        ),
        opts=on_aws,
    )
    ClusterAutoscaler(
        region.name,
        ClusterAutoscalerArgs(
            cluster=cluster,
            aws_region=region.region,
            cluster_name=existing.name,
            label_domain=label_domain,
            production=env.production,
            node_groups=[gpu_pool.node_group],
            tags=gpu_pool.autoscaler_tags,
            max_graceful_termination_seconds=max_graceful_termination_seconds([placement.termination_grace_seconds]),
        ),
        opts=on_aws,
    )

    # What the model's pods need on the cluster: GPUs advertised, their scheduler, KServe and its certificates.
    GpuOperator(f"{region.name}-gpu-operator", GpuOperatorArgs(cluster=cluster, pools=operator_pools(region)))
    volcano = Volcano(region.name, volcano_args(env, region, cluster))
    cert_manager = []
    if not region.cert_manager.existing:
        cert_manager = [
            CertManager(
                region.name, CertManagerArgs(cluster=cluster, label_domain=label_domain, production=env.production)
            ).release
        ]
    kserve = KServe(
        region.name,
        KServeArgs(
            cluster=cluster,
            label_domain=label_domain,
            deployment_mode=region.serving.deployment_mode,
            production=env.production,
            cert_manager=cert_manager,
        ),
    )

    # The weights: a bucket of this stack's, read by the model servers' service account through IRSA.
    bucket = model_bucket_name(env.model_store.bucket_prefix, stack, region.name)
    store = S3ModelStore(
        region.name,
        S3ModelStoreArgs(
            bucket_name=bucket,
            aws_region=region.region,
            spec=env.model_store,
            production=env.production,
            identity=identity,
            readers={MODEL_SERVER: ServiceAccountRef(namespace=SERVING_NAMESPACE, name=MODEL_SERVER_SERVICE_ACCOUNT)},
        ),
        opts=on_aws,
    )
    serving = ServingIdentity(
        region.name,
        ServingIdentityArgs(
            cluster=cluster,
            cloud=region.cloud,
            cloud_identity=store.reader_roles[MODEL_SERVER].arn,
            prometheus_namespace=prometheus_namespace(region.observability),
        ),
    )
    weights = model_storage_uri(env, region, stack, placement.model)
    ModelDeployment(
        f"{region.name}-{placement.name}",
        ModelDeploymentArgs(
            cluster=cluster,
            placement=placement,
            storage_uri=weights,
            depends_on=[kserve.release, *kserve.runtimes, volcano, serving],
        ),
    )
    # The serving namespace denies all ingress but the platform's own callers: let the team's namespaces in.
    clients_policy = policy(
        f"{placement.name}-clients",
        SERVING_NAMESPACE,
        placement.serving_pods,
        [
            {
                "from": [{"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: name}}} for name in clients],
                "ports": [{"protocol": "TCP", "port": HTTP_PORT}],
            }
        ],
    )
    k8s.networking.v1.NetworkPolicy(
        f"{cluster.name}-netpol-{placement.name}-clients",
        metadata=clients_policy["metadata"],
        spec=clients_policy["spec"],
        opts=pulumi.ResourceOptions(provider=cluster.provider, depends_on=[serving.namespace]),
    )

    # KServe's Service for the predictor (components/catalog/upstream.py KSERVE_PREDICTOR_SERVICE).
    pulumi.export("url", f"http://{placement.predictor}.{SERVING_NAMESPACE}.svc.cluster.local/v1")
    pulumi.export("weights", weights)
    pulumi.export("gpuPool", gpu_pool.node_group.node_group_name)


main()
