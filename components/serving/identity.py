"""The namespace model servers run in, and their service account bound to the cloud identity that reads weights.

KServe's InferenceServices use this namespace and set `serviceAccountName` to this account; the
account carries the IRSA role (EKS) or Google service account (GKE) of the region's model store,
so model servers read `s3://` / `gs://` weights without static keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.catalog.regions import Cloud
from components.k8s.cluster import ClusterTarget
from components.k8s.helm import namespace
from components.k8s.inputs import known
from components.k8s.names import MODEL_SERVER_SERVICE_ACCOUNT
from components.k8s.workload_identity import IDENTITY_ANNOTATION, identity_annotations
from components.serving.inference_pool import METRICS_PORT as PICKER_METRICS_PORT
from components.serving.network_policies import serving_namespace_policies
from components.serving.runtimes import HTTP_PORT
from platform_catalog.names import SERVING_NAMESPACE

# What Prometheus scrapes in the serving namespace: the model servers' and the endpoint pickers' metrics.
SERVING_METRICS_PORTS = (HTTP_PORT, PICKER_METRICS_PORT)


@dataclass(frozen=True, kw_only=True)
class ServingIdentityArgs:
    cluster: ClusterTarget
    # The cluster's cloud: which annotation binds the account to `cloud_identity`.
    cloud: Cloud
    # IAM role ARN (EKS) or Google service account email (GKE) that may read the model store.
    cloud_identity: pulumi.Input[str]
    # Namespace of the Prometheus that scrapes the model servers and pickers (network_policies.prometheus_namespace);
    # None: nothing scrapes them, and the namespace admits no one on their metrics ports.
    prometheus_namespace: str | None

    def __post_init__(self) -> None:
        known("cloud", self.cloud, IDENTITY_ANNOTATION, "cloud")


class ServingIdentity(pulumi.ComponentResource):
    namespace: k8s.core.v1.Namespace
    service_account: k8s.core.v1.ServiceAccount

    def __init__(self, name: str, args: ServingIdentityArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:serving:ServingIdentity", name, None, opts)
        cluster, cloud = args.cluster, args.cloud
        self.namespace = namespace(SERVING_NAMESPACE, cluster, self, "baseline")
        for manifest in serving_namespace_policies(args.prometheus_namespace, SERVING_METRICS_PORTS):
            k8s.networking.v1.NetworkPolicy(
                f"{cluster.name}-netpol-{manifest['metadata']['name']}",
                metadata=manifest["metadata"],
                spec=manifest["spec"],
                opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[self.namespace]),
            )
        self.service_account = k8s.core.v1.ServiceAccount(
            f"{cluster.name}-{MODEL_SERVER_SERVICE_ACCOUNT}",
            metadata={
                "name": MODEL_SERVER_SERVICE_ACCOUNT,
                "namespace": SERVING_NAMESPACE,
                "annotations": pulumi.Output.from_input(args.cloud_identity).apply(
                    lambda identity: identity_annotations(cloud, identity)
                ),
            },
            # Model servers never call the Kubernetes API; cloud credentials come from their own token.
            automount_service_account_token=False,
            opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[self.namespace]),
        )
        self.register_outputs({"namespace": SERVING_NAMESPACE, "serviceAccount": MODEL_SERVER_SERVICE_ACCOUNT})
