"""Clusterpedia on the federation host: its database, CRDs, API server and synchro manager.

The objects are the clusterpedia-2.6.0 chart's (its Deployments, Services, service accounts and APIService, the
same names and labels), rendered here rather than installed with the chart, which grants its components
cluster-admin and registers its API unverified whatever its values (CLUSTERPEDIA_CHART_GRANTS_CLUSTER_ADMIN):
- each component has its own service account with the RBAC of CLUSTERPEDIA_HOST_CALLS and nothing else; the
  chart's controller manager (and its account) is not rendered;
- the API server serves a certificate of the index's own CA, which the APIService's caBundle verifies
  (AGGREGATED_API_VERIFIED_BY_CA_BUNDLE); only the control plane's addresses reach it;
- the storage configuration, password included, is a Secret file, never an environment variable;
- the pods run as a non-root user with a read-only root file system (restricted Pod Security).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.catalog.charts import CLUSTERPEDIA_APISERVER_PORT, CLUSTERPEDIA_CRDS, CLUSTERPEDIA_IMAGES
from components.federation.certificates import KeyPair, certificate_authority, signed_certificate
from components.federation.search_store import SearchStore, SearchStoreArgs, storage_config
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import namespace
from components.k8s.names import PINNED_IMAGE_SKIPS, checkov_skips
from components.k8s.topology import pool_selector
from components.serving.network_policies import control_plane_peer, default_deny, policy
from platform_catalog.names import SEARCH_APISERVER, SEARCH_NAMESPACE, SEARCH_SYNCHRO_MANAGER

# The chart's names at release `clusterpedia` (templates/_helpers.tpl: <fullname>-apiserver, ...), which its pods
# carry as their `app` label.
APISERVER = SEARCH_APISERVER
SYNCHRO_MANAGER = SEARCH_SYNCHRO_MANAGER
API_GROUP = "clusterpedia.io"
API_VERSION = "v1beta1"
PEDIA_GROUP = "cluster.clusterpedia.io"
RBAC_GROUP = "rbac.authorization.k8s.io"
# The synchro manager's leader-election Lease (cmd/clustersynchro-manager/app/options/options.go L72-74).
LEASE = "clusterpedia-clustersynchro-manager"
# Kubernetes' own roles for a delegating API server (k8s.io/kubernetes@v1.33.13 bootstrappolicy policy.go L434-439,
# namespace_policy.go L77-81): TokenReview and SubjectAccessReview creates; the kube-system ConfigMap
# extension-apiserver-authentication.
AUTH_DELEGATOR = "system:auth-delegator"
AUTHENTICATION_READER = "extension-apiserver-authentication-reader"

# What each component may do on the host, by CLUSTERPEDIA_HOST_CALLS.
APISERVER_RULES: list[dict[str, Any]] = [
    {"apiGroups": [PEDIA_GROUP], "resources": ["pediaclusters"], "verbs": ["list", "watch"]},
]
SYNCHRO_CLUSTER_RULES: list[dict[str, Any]] = [
    {"apiGroups": [PEDIA_GROUP], "resources": ["pediaclusters"], "verbs": ["list", "watch", "update"]},
    {"apiGroups": [PEDIA_GROUP], "resources": ["pediaclusters/status"], "verbs": ["update"]},
    {"apiGroups": [PEDIA_GROUP], "resources": ["clustersyncresources"], "verbs": ["list", "watch"]},
]
# In Clusterpedia's namespace: the members' credentials (its Secret informer lists them all: no resourceNames), its
# Lease (a create cannot name it) and the events about it.
SYNCHRO_NAMESPACE_RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["list", "watch"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
    {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "resourceNames": [LEASE],
        "verbs": ["get", "update"],
    },
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "update", "patch"]},
]

UID = 65532  # no user of the images (alpine, root by default); nothing they run writes to the file system
STORAGE_SECRET = "clusterpedia-internalstorage"
STORAGE_DIR = "/etc/clusterpedia/storage"
STORAGE_FILE = "internalstorage-config.yaml"
TLS_SECRET = f"{APISERVER}-tls"
TLS_DIR = "/etc/clusterpedia/tls"
SERVICE_PORT = 443  # where the APIService calls (its spec.service.port default)
SYNCHRO_METRICS_PORT = 8081  # its metrics server's default (pkg/metrics/server/options.go L21-24)
WORKLOAD_SKIPS = checkov_skips(
    {
        **PINNED_IMAGE_SKIPS,
        "CKV_K8S_38": "it reads its API objects from the host's API server with this token (RBAC of "
        "components/federation/search_index.py)",
    }
)
# Restricted Pod Security: non-root, no privilege escalation, no capabilities, the runtime's seccomp profile.
POD_SECURITY = {
    "runAsNonRoot": True,
    "runAsUser": UID,
    "runAsGroup": UID,
    "fsGroup": UID,  # the Secret files, 0440, readable by the pod's group
    "seccompProfile": {"type": "RuntimeDefault"},
}
CONTAINER_SECURITY = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
}


def apiserver_args() -> list[str]:
    """The chart's (templates/apiserver-deployment.yaml L118-131) on a port above 1024, with the serving pair."""
    return [
        "/usr/local/bin/apiserver",
        f"--secure-port={CLUSTERPEDIA_APISERVER_PORT}",
        f"--storage-config={STORAGE_DIR}/{STORAGE_FILE}",
        f"--tls-cert-file={TLS_DIR}/tls.crt",
        f"--tls-private-key-file={TLS_DIR}/tls.key",
        "-v=3",
    ]


def synchro_manager_args() -> list[str]:
    """The chart's at its default values (templates/clustersynchro-manager-deployment.yaml L118-136, values.yaml
    L204, L301-304), with credentials read from Secrets (CLUSTERPEDIA_CREDENTIALS_FROM_SECRETS)."""
    return [
        "/usr/local/bin/clustersynchro-manager",
        f"--storage-config={STORAGE_DIR}/{STORAGE_FILE}",
        f"--leader-elect-resource-namespace={SEARCH_NAMESPACE}",
        "--leader-elect-lease-duration=15s",
        "--leader-elect-renew-deadline=10s",
        "--leader-elect-retry-period=2s",
        "--leader-elect-resource-lock=leases",
        "--worker-number=5",
        "--feature-gates=ClusterAuthenticationFromSecret=true",
    ]


def _secret_volume(name: str, secret: str) -> dict[str, Any]:
    return {"name": name, "secret": {"secretName": secret, "defaultMode": 0o440}}


def _pod(
    app: str,
    label_domain: str,
    container: dict[str, Any],
    volumes: list[dict[str, Any]],
) -> dict[str, Any]:
    """One replica (as the chart's default) of `container` as `app`'s service account, on the system pool."""
    labels = {"app": app}
    storage_mount = {"name": "storage", "mountPath": STORAGE_DIR, "readOnly": True}
    return {
        "replicas": 1,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "serviceAccountName": app,
                "nodeSelector": pool_selector(label_domain, "system"),
                "securityContext": POD_SECURITY,
                "containers": [
                    {
                        "name": app,
                        "imagePullPolicy": "IfNotPresent",
                        # The namespace whose Secrets hold the members' credentials: its own.
                        "env": [
                            {
                                "name": "CLUSTERPEDIA_NAMESPACE",
                                "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
                            }
                        ],
                        "securityContext": CONTAINER_SECURITY,
                        **container,
                        "volumeMounts": [storage_mount, *container.get("volumeMounts", [])],
                    }
                ],
                "volumes": [_secret_volume("storage", STORAGE_SECRET), *volumes],
            },
        },
    }


def apiserver_pod(label_domain: str) -> dict[str, Any]:
    https = {"port": CLUSTERPEDIA_APISERVER_PORT, "scheme": "HTTPS"}  # /readyz, /livez skip authorization
    return _pod(
        APISERVER,
        label_domain,
        {
            "image": CLUSTERPEDIA_IMAGES["apiserver"],
            "command": apiserver_args(),
            "ports": [{"name": "https", "containerPort": CLUSTERPEDIA_APISERVER_PORT}],
            "readinessProbe": {"httpGet": {"path": "/readyz", **https}, "periodSeconds": 10},
            "livenessProbe": {
                "httpGet": {"path": "/livez", **https},
                "initialDelaySeconds": 15,
                "periodSeconds": 20,
                "failureThreshold": 6,
            },
            "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
            "volumeMounts": [{"name": "tls", "mountPath": TLS_DIR, "readOnly": True}],
        },
        [_secret_volume("tls", TLS_SECRET)],
    )


def synchro_manager_pod(label_domain: str) -> dict[str, Any]:
    return _pod(
        SYNCHRO_MANAGER,
        label_domain,
        {
            "image": CLUSTERPEDIA_IMAGES["clustersynchro-manager"],
            "command": synchro_manager_args(),
            "ports": [{"name": "metrics", "containerPort": SYNCHRO_METRICS_PORT}],
            # Its metrics server, up before leader election: the landing page, and the port for liveness.
            "readinessProbe": {"httpGet": {"path": "/", "port": SYNCHRO_METRICS_PORT}, "periodSeconds": 10},
            "livenessProbe": {
                "tcpSocket": {"port": SYNCHRO_METRICS_PORT},
                "initialDelaySeconds": 15,
                "periodSeconds": 20,
                "failureThreshold": 6,
            },
            "resources": {"requests": {"cpu": "200m", "memory": "512Mi"}, "limits": {"cpu": "2", "memory": "2Gi"}},
        },
        [],
    )


def api_service(ca_bundle: pulumi.Input[str]) -> dict[str, Any]:
    """The chart's APIService (templates/apiserver-apiservice.yaml), verified against the index's CA."""
    return {
        "group": API_GROUP,
        "version": API_VERSION,
        "groupPriorityMinimum": 1000,
        "versionPriority": 100,
        "service": {"name": APISERVER, "namespace": SEARCH_NAMESPACE, "port": SERVICE_PORT},
        "caBundle": ca_bundle,
        "insecureSkipTLSVerify": False,
    }


def serving_name() -> str:
    """The name the host's API server verifies the API server's certificate for (<service>.<namespace>.svc)."""
    return f"{APISERVER}.{SEARCH_NAMESPACE}.svc"


@dataclass(frozen=True, kw_only=True)
class SearchIndexArgs:
    host: ClusterHandle
    label_domain: str
    storage_gib: int
    production: bool


class SearchIndex(pulumi.ComponentResource):
    """Clusterpedia and its database on the federation host."""

    _host: ClusterHandle
    namespace: k8s.core.v1.Namespace
    crds: list[pulumi.Resource]  # what a PediaCluster waits for (its CRD)
    # The synchro manager, which holds a finalizer on every PediaCluster: they are deleted before it.
    synchro_manager: k8s.apps.v1.Deployment

    def __init__(self, name: str, args: SearchIndexArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:federation:SearchIndex", name, None, opts)
        host = self._host = args.host
        # In production its store's volume is kept (SearchStore), so the namespace holding its claim is kept too.
        self.namespace = namespace(SEARCH_NAMESPACE, host, self, "restricted", retain_on_delete=args.production)
        store = SearchStore(
            f"{host.name}-search-store",
            SearchStoreArgs(
                cluster=host,
                namespace=self.namespace,
                storage_gib=args.storage_gib,
                production=args.production,
                client_apps=(APISERVER, SYNCHRO_MANAGER),
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.crds = [
            k8s.yaml.v2.ConfigFile(
                f"{host.name}-clusterpedia-crds-{url.rsplit('_', 1)[1].removesuffix('.yaml')}",
                file=url,
                opts=self._on(),
            )
            for url in CLUSTERPEDIA_CRDS
        ]
        storage = k8s.core.v1.Secret(
            f"{host.name}-{STORAGE_SECRET}",
            metadata={"name": STORAGE_SECRET, "namespace": SEARCH_NAMESPACE},
            # A secret, as the password it holds.
            string_data={
                STORAGE_FILE: pulumi.Output.all(store.host, store.password).apply(lambda v: storage_config(*v))
            },
            opts=self._on(self.namespace),
        )
        ca, tls = self._serving_certificate()
        first = [storage, *self.crds, *store.ready]
        apiserver = self._workload(APISERVER, apiserver_pod(args.label_domain), [*self._apiserver_rbac(), tls, *first])
        service = k8s.core.v1.Service(
            f"{host.name}-{APISERVER}",
            metadata={"name": APISERVER, "namespace": SEARCH_NAMESPACE, "labels": {"app": APISERVER}},
            spec={
                "selector": {"app": APISERVER},
                "ports": [{"name": "https", "port": SERVICE_PORT, "targetPort": CLUSTERPEDIA_APISERVER_PORT}],
            },
            opts=self._on(self.namespace),
        )
        k8s.apiregistration.v1.APIService(
            f"{host.name}-{API_VERSION}.{API_GROUP}",
            metadata={"name": f"{API_VERSION}.{API_GROUP}"},
            spec=api_service(ca.cert_pem.apply(lambda pem: base64.b64encode(pem.encode()).decode())),
            opts=self._on(service, apiserver),
        )
        self.synchro_manager = self._workload(
            SYNCHRO_MANAGER, synchro_manager_pod(args.label_domain), [*self._synchro_rbac(), *first]
        )
        self._network_policies()
        self.register_outputs({"apiService": f"{API_VERSION}.{API_GROUP}"})

    def _on(self, *after: pulumi.Resource) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, provider=self._host.provider, depends_on=[*self._host.ready, *after])

    def _serving_certificate(self) -> tuple[KeyPair, k8s.core.v1.Secret]:
        """The index's CA (its certificate is the APIService's caBundle) and the API server's serving pair."""
        host = self._host.name
        ca = certificate_authority(f"{host}-clusterpedia-ca", "clusterpedia-ca", self)
        server = signed_certificate(
            f"{host}-{APISERVER}",
            ca,
            self,
            common_name=serving_name(),
            allowed_uses=("digital_signature", "key_encipherment", "server_auth"),
            dns_names=(serving_name(),),
        )
        return ca, k8s.core.v1.Secret(
            f"{host}-{TLS_SECRET}",
            metadata={"name": TLS_SECRET, "namespace": SEARCH_NAMESPACE},
            type="kubernetes.io/tls",
            string_data={"tls.crt": server.cert_pem, "tls.key": server.key_pem},
            opts=self._on(self.namespace),
        )

    def _account(self, app: str) -> k8s.core.v1.ServiceAccount:
        return k8s.core.v1.ServiceAccount(
            f"{self._host.name}-{app}",
            metadata={"name": app, "namespace": SEARCH_NAMESPACE},
            opts=self._on(self.namespace),
        )

    def _bind(
        self,
        name: str,
        account: k8s.core.v1.ServiceAccount,
        role: tuple[str, str],
        role_namespace: str | None = None,
        after: Sequence[pulumi.Resource] = (),
    ) -> k8s.rbac.v1.ClusterRoleBinding | k8s.rbac.v1.RoleBinding:
        """`account` bound to `role` (kind, name): by a RoleBinding in `role_namespace`, else a ClusterRoleBinding."""
        kind, role_name = role
        role_ref = {"apiGroup": RBAC_GROUP, "kind": kind, "name": role_name}
        subjects = [{"kind": "ServiceAccount", "name": account.metadata["name"], "namespace": SEARCH_NAMESPACE}]
        opts = self._on(account, *after)
        if role_namespace is None:
            return k8s.rbac.v1.ClusterRoleBinding(
                f"{self._host.name}-{name}", metadata={"name": name}, role_ref=role_ref, subjects=subjects, opts=opts
            )
        return k8s.rbac.v1.RoleBinding(
            f"{self._host.name}-{name}-{role_namespace}",
            metadata={"name": name, "namespace": role_namespace},
            role_ref=role_ref,
            subjects=subjects,
            opts=opts,
        )

    def _apiserver_rbac(self) -> list[pulumi.Resource]:
        account = self._account(APISERVER)
        role = k8s.rbac.v1.ClusterRole(
            f"{self._host.name}-{APISERVER}", metadata={"name": APISERVER}, rules=APISERVER_RULES, opts=self._on()
        )
        return [
            self._bind(APISERVER, account, ("ClusterRole", APISERVER), after=[role]),
            self._bind(f"{APISERVER}-auth-delegator", account, ("ClusterRole", AUTH_DELEGATOR)),
            self._bind(f"{APISERVER}-auth-reader", account, ("Role", AUTHENTICATION_READER), "kube-system"),
        ]

    def _synchro_rbac(self) -> list[pulumi.Resource]:
        account = self._account(SYNCHRO_MANAGER)
        host = self._host.name
        cluster_role = k8s.rbac.v1.ClusterRole(
            f"{host}-{SYNCHRO_MANAGER}",
            metadata={"name": SYNCHRO_MANAGER},
            rules=SYNCHRO_CLUSTER_RULES,
            opts=self._on(),
        )
        role = k8s.rbac.v1.Role(
            f"{host}-{SYNCHRO_MANAGER}",
            metadata={"name": SYNCHRO_MANAGER, "namespace": SEARCH_NAMESPACE},
            rules=SYNCHRO_NAMESPACE_RULES,
            opts=self._on(self.namespace),
        )
        return [
            self._bind(SYNCHRO_MANAGER, account, ("ClusterRole", SYNCHRO_MANAGER), after=[cluster_role]),
            self._bind(SYNCHRO_MANAGER, account, ("Role", SYNCHRO_MANAGER), SEARCH_NAMESPACE, after=[role]),
        ]

    def _workload(self, app: str, spec: dict[str, Any], after: Sequence[pulumi.Resource]) -> k8s.apps.v1.Deployment:
        """`app`'s Deployment once its RBAC (the API server stops when it cannot read what it delegates to),
        configuration, CRDs and database exist; Pulumi waits for it to be available."""
        return k8s.apps.v1.Deployment(
            f"{self._host.name}-{app}",
            metadata={
                "name": app,
                "namespace": SEARCH_NAMESPACE,
                "labels": {"app": app},
                "annotations": WORKLOAD_SKIPS,
            },
            spec=spec,
            opts=self._on(*after),
        )

    def _network_policies(self) -> None:
        """Default deny in the namespace; the API server takes the control plane's calls (the aggregation layer);
        the synchro manager takes none (it only calls out); the database admits both (search_store.py)."""
        apiserver = {
            "from": [control_plane_peer(self._host.region)],
            "ports": [{"protocol": "TCP", "port": CLUSTERPEDIA_APISERVER_PORT}],
        }
        for manifest in (
            default_deny(SEARCH_NAMESPACE),
            policy(f"allow-{APISERVER}", SEARCH_NAMESPACE, {"app": APISERVER}, [apiserver]),
        ):
            k8s.networking.v1.NetworkPolicy(
                f"{self._host.name}-clusterpedia-{manifest['metadata']['name']}",
                metadata=manifest["metadata"],
                spec=manifest["spec"],
                opts=self._on(self.namespace),
            )
