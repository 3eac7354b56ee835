"""What the Karmada API server needs before it can hold federated models.

- the KServe CRDs (chart `kserve-crd`), so that InferenceServices can be created in Karmada: it stores
  and propagates them, nothing reconciles them there;
- the serving namespace, where the templates live; labelled so that Karmada does not push it to the
  members (each member's platform already creates it, with its own labels);
- the ResourceInterpreterCustomization that teaches Karmada InferenceService replicas and health.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.catalog.charts import CHARTS
from components.federation.interpreter import inference_service_interpreter
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import custom_resource, helm_release, namespace
from platform_catalog.names import SERVING_NAMESPACE

SKIP_PROPAGATION = {"namespace.karmada.io/skip-auto-propagation": "true"}
CRD_NAMESPACE = "kserve"  # where the kserve-crd release is recorded


@dataclass(frozen=True, kw_only=True)
class FederatedServingApiArgs:
    karmada: ClusterHandle


class FederatedServingApi(pulumi.ComponentResource):
    crds: k8s.helm.v3.Release
    serving_namespace: k8s.core.v1.Namespace
    interpreter: k8s.apiextensions.CustomResource

    def __init__(self, name: str, args: FederatedServingApiArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:federation:FederatedServingApi", name, None, opts)
        karmada = args.karmada
        crd_ns = namespace(CRD_NAMESPACE, karmada, self, "baseline", SKIP_PROPAGATION)
        self.crds = helm_release("kserve-crd", CHARTS["kserve-crd"], karmada, crd_ns, {}, parent=self)
        self.serving_namespace = namespace(SERVING_NAMESPACE, karmada, self, "baseline", SKIP_PROPAGATION)
        manifest = inference_service_interpreter()
        # Karmada's own API serves the interpreter's kind; it waits for the InferenceService CRDs it customises.
        self.interpreter = custom_resource(
            f"{karmada.name}-interpreter-{manifest['metadata']['name']}",
            manifest,
            cluster=karmada,
            parent=self,
            crd_from=karmada.ready,
            depends_on=[self.crds],
        )
        self.register_outputs({"namespace": SERVING_NAMESPACE})
