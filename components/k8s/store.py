"""A single-pod data store on a cluster: its generated password in a Secret, its volume, the pod that holds the
volume (one at a time), a Service, and a NetworkPolicy admitting only its clients.

The rate limiter's Redis and the search index's PostgreSQL are such stores; each says its own container.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random

from components.k8s.cluster import ClusterTarget

PASSWORD_LENGTH = 40


@dataclass(frozen=True, kw_only=True)
class SinglePodStore:
    name: str  # of every object, and of the pod's volume claim
    namespace: pulumi.Input[str]
    labels: dict[str, str]
    annotations: dict[str, str]  # on every object (Checkov's reasoned skips)
    uid: int  # the image's own user, which owns the data directory
    port: int
    port_name: str
    storage: str  # the volume's size, e.g. 1Gi
    storage_class: str  # the cluster's built-in class (catalog BUILTIN_STORAGE_CLASS of its cloud)
    password_secret: str  # the Secret's name; its key `password_key` holds the generated password
    password_key: str
    container: dict[str, Any]  # the one container; its volume mounts name `data` for the volume
    extra_volumes: tuple[dict[str, Any], ...] = ()
    clients: tuple[dict[str, Any], ...] = ()  # NetworkPolicy peers (podSelector entries) admitted on the port
    volume_options: pulumi.ResourceOptions | None = None  # protect / retain the volume


def single_pod_store(
    store: SinglePodStore, cluster: ClusterTarget, parent: pulumi.Resource, depends_on: Sequence[pulumi.Resource]
) -> tuple[random.RandomPassword, k8s.apps.v1.Deployment]:
    """The store's objects on `cluster`, children of `parent`: the generated password (a secret) and the pod's
    Deployment, which Pulumi waits for."""
    on_cluster = pulumi.ResourceOptions(
        parent=parent, provider=cluster.provider, depends_on=[*cluster.ready, *depends_on]
    )
    meta = {"name": store.name, "namespace": store.namespace, "labels": store.labels}
    annotated = {**meta, "annotations": store.annotations}
    resource = f"{cluster.name}-{store.name}"
    password = random.RandomPassword(
        resource,
        length=PASSWORD_LENGTH,
        special=False,
        opts=pulumi.ResourceOptions(
            parent=parent, provider=random.Provider(resource, opts=pulumi.ResourceOptions(parent=parent))
        ),
    )
    secret = k8s.core.v1.Secret(
        f"{cluster.name}-{store.password_secret}",
        metadata={**meta, "name": store.password_secret},
        string_data={store.password_key: password.result},
        opts=on_cluster,
    )
    data = k8s.core.v1.PersistentVolumeClaim(
        resource,
        metadata=annotated,
        spec={
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": store.storage_class,
            "resources": {"requests": {"storage": store.storage}},
        },
        opts=pulumi.ResourceOptions.merge(on_cluster, store.volume_options),
    )
    pod = {
        "automountServiceAccountToken": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": store.uid,
            "runAsGroup": store.uid,
            "fsGroup": store.uid,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [store.container],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": store.name}}, *store.extra_volumes],
    }
    server = k8s.apps.v1.Deployment(
        resource,
        metadata=annotated,
        spec={
            "replicas": 1,
            "strategy": {"type": "Recreate"},  # one pod at a time holds the volume
            "selector": {"matchLabels": store.labels},
            "template": {"metadata": {"labels": store.labels}, "spec": pod},
        },
        opts=pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=[secret, data])),
    )
    port = {"name": store.port_name, "port": store.port, "targetPort": store.port}
    k8s.core.v1.Service(resource, metadata=annotated, spec={"selector": store.labels, "ports": [port]}, opts=on_cluster)
    k8s.networking.v1.NetworkPolicy(
        resource,
        metadata=annotated,
        spec={
            "podSelector": {"matchLabels": store.labels},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": list(store.clients), "ports": [{"protocol": "TCP", "port": store.port}]}],
        },
        opts=on_cluster,
    )
    return password, server
