"""The multi-cluster index's PostgreSQL, on the federation host beside Clusterpedia.

Clusterpedia keeps every synced object of every member in one database: the chart's bundled Bitnami PostgreSQL is
not used (its image tags are gone from Docker Hub, CLUSTERPEDIA_POSTGRES_IMAGE).
The index can be rebuilt from the members (Clusterpedia re-lists them), but a lost volume makes searches empty
until it has; in production the volume is protected and kept when the stack is destroyed. Only Clusterpedia's API
server and synchro manager reach the database (NetworkPolicy), with a generated password held in Secrets: the
server's, and Clusterpedia's storage configuration (`storage_config`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.catalog.charts import CLUSTERPEDIA_POSTGRES_IMAGE
from components.catalog.regions import BUILTIN_STORAGE_CLASS
from components.k8s.cluster import ClusterHandle
from components.k8s.names import PINNED_IMAGE_SKIPS, checkov_skips
from components.k8s.store import SinglePodStore, single_pod_store
from platform_catalog.names import SEARCH_STORE

STORE_LABELS = {"app.kubernetes.io/name": SEARCH_STORE}
PORT = 5432
UID = 999  # the `postgres` user of the official Debian-based image
DATABASE = USER = "clusterpedia"
PASSWORD_KEY = "password"
# The password as a file, not in the environment: the image's entrypoint reads POSTGRES_PASSWORD_FILE
# (fact POSTGRES_IMAGE_READS_PASSWORD_FILE).
PASSWORD_DIR = "/run/secrets/clusterpedia-postgres"
# The chart's connection pool (values.yaml L75-79, templates/internalstorage-configmap.yaml).
CONNECTION_POOL = {"maxIdleConns": 5, "maxOpenConns": 40, "connMaxLifetime": "60m"}
STORE_CHECKOV_SKIPS = checkov_skips(
    {
        **PINNED_IMAGE_SKIPS,
        "CKV_K8S_40": "the postgres image's own user (999) owns its data directory; non-root, no privilege escalation",
    }
)


def storage_config(host: str, password: str) -> str:
    """Clusterpedia's --storage-config file for this database: what the chart's ConfigMap holds
    (templates/internalstorage-configmap.yaml) and the password, which Clusterpedia reads from the file
    (CLUSTERPEDIA_STORAGE_PASSWORD_FROM_FILE) instead of the chart's DB_PASSWORD variable: a Secret's content."""
    return yaml.safe_dump(
        {
            "type": "postgres",
            "host": host,
            "port": PORT,
            "user": USER,
            "password": password,
            "database": DATABASE,
            "connPool": CONNECTION_POOL,
        },
        sort_keys=False,
    )


def store_image() -> str:
    image = CLUSTERPEDIA_POSTGRES_IMAGE
    return f"{image['registry']}/{image['repository']}:{image['tag']}"


@dataclass(frozen=True, kw_only=True)
class SearchStoreArgs:
    cluster: ClusterHandle  # the federation host
    namespace: k8s.core.v1.Namespace  # Clusterpedia's
    storage_gib: int
    production: bool
    client_apps: tuple[str, ...]  # the `app` labels of the pods that open the database (Clusterpedia's two)


class SearchStore(pulumi.ComponentResource):
    """Password, volume, server, Service and NetworkPolicy of the index's database."""

    host: pulumi.Output[str]  # what Clusterpedia dials
    password: pulumi.Output[str]
    ready: list[pulumi.Resource]  # the server Deployment (Pulumi waits for it to be available)

    def __init__(self, name: str, args: SearchStoreArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:federation:SearchStore", name, None, opts)
        namespace = args.namespace.metadata["name"]
        store = SinglePodStore(
            name=SEARCH_STORE,
            namespace=namespace,
            labels=STORE_LABELS,
            annotations=STORE_CHECKOV_SKIPS,
            uid=UID,
            port=PORT,
            port_name="postgres",
            storage=f"{args.storage_gib}Gi",
            storage_class=BUILTIN_STORAGE_CLASS[args.cluster.cloud],
            password_secret=SEARCH_STORE,
            password_key=PASSWORD_KEY,
            container=_server_container(),
            # PGDATA's socket and lock files, and initdb's temporary files, under a read-only root.
            extra_volumes=(
                {"name": "run", "emptyDir": {}},
                {"name": "tmp", "emptyDir": {}},
                {"name": "password", "secret": {"secretName": SEARCH_STORE, "defaultMode": 0o440}},
            ),
            clients=tuple({"podSelector": {"matchLabels": {"app": app}}} for app in args.client_apps),
            volume_options=pulumi.ResourceOptions(protect=args.production, retain_on_delete=args.production),
        )
        password, server = single_pod_store(store, args.cluster, self, [args.namespace])
        self.host = pulumi.Output.concat(SEARCH_STORE, ".", namespace, ".svc.cluster.local")
        self.password = password.result
        self.ready = [server]
        self.register_outputs({"host": self.host})


def _server_container() -> dict[str, Any]:
    """PostgreSQL as its image's own user, on the volume (PGDATA a directory below the mount: initdb refuses a
    mount point's lost+found), with a read-only root file system and its password read from a file."""
    env = [
        {"name": "POSTGRES_USER", "value": USER},
        {"name": "POSTGRES_DB", "value": DATABASE},
        {"name": "POSTGRES_PASSWORD_FILE", "value": f"{PASSWORD_DIR}/{PASSWORD_KEY}"},
        {"name": "PGDATA", "value": "/var/lib/postgresql/data/pgdata"},
    ]
    ready = {"exec": {"command": ["pg_isready", "-U", USER, "-d", DATABASE]}, "periodSeconds": 10}
    return {
        "name": "postgres",
        "image": store_image(),
        "env": env,
        "ports": [{"name": "postgres", "containerPort": PORT}],
        "readinessProbe": ready,
        "livenessProbe": {**ready, "initialDelaySeconds": 30, "failureThreshold": 6},
        "resources": {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [
            {"name": "data", "mountPath": "/var/lib/postgresql/data"},
            {"name": "run", "mountPath": "/var/run/postgresql"},
            {"name": "tmp", "mountPath": "/tmp"},
            {"name": "password", "mountPath": PASSWORD_DIR, "readOnly": True},
        ],
    }
