"""Multi-cluster search: Clusterpedia on the federation host, a read-only identity on each member, one PediaCluster
per search member naming its credentials, the index's database, in the stacks and waves that can create them."""

from __future__ import annotations

import base64

import pytest
import yaml

from components.catalog.webhooks import RENDERED_BACKENDS, control_plane_webhook_ports
from components.federation.search_store import storage_config
from tests.harness import cluster_objects, config_errors, environment_config, ns, plan_config, raw_environment
from tools.plan import search_section
from tools.plan.report import render_markdown
from tools.rollout.bringup import check_bring_up
from tools.rollout.gates import offline_gates

RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
PEDIA_CLUSTER = "kubernetes:cluster.clusterpedia.io/v1alpha2:PediaCluster"
EKS = "aws:eks/cluster:Cluster"
GKE = "gcp:container/cluster:Cluster"
NS = "clusterpedia-system"
# What the reader may do on a member, by hand from Clusterpedia v0.9.0: the indexed resources, and its discovery's
# CRDs and APIServices, list and watch only (cluster_synchro.go L128-131, dynamic_discovery.go L116-135).
READER_RULES = [
    {"apiGroups": [""], "resources": ["pods", "nodes", "namespaces"], "verbs": ["list", "watch"]},
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["list", "watch"]},
    {"apiGroups": ["serving.kserve.io"], "resources": ["inferenceservices"], "verbs": ["list", "watch"]},
    {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["list", "watch"]},
    {"apiGroups": ["apiregistration.k8s.io"], "resources": ["apiservices"], "verbs": ["list", "watch"]},
]


def search_everywhere() -> dict:
    """prod with every member indexed: usw2 and usc1 open their public endpoints to a range of the team's, to which
    the program adds use1's NAT egress; deployed from runners in their networks."""
    config = environment_config("prod")
    config[ns("federation")]["search"] = {"enabled": True, "storageGib": 50}
    for region in config[ns("regions")][1:]:
        region["apiAccess"]["publicCidrs"] = ["198.51.100.7/32"]
        region["deployer"] = {"kind": "vpcRunner"}
    return config


@pytest.fixture(scope="module")
def everywhere():
    return plan_config(search_everywhere(), stack="search")


def _stack_of(plan, resource) -> str:
    return resource.urn.split("::")[0].rsplit(":", 1)[-1]


# --- configuration ------------------------------------------------------------------------------------------------


def test_search_needs_the_federation():
    raw = raw_environment("dev")
    raw["federation"]["search"] = {"enabled": True}
    assert config_errors(raw) == [
        "federation.search.enabled: Clusterpedia runs on the federation host; set federation.enabled: true or "
        "remove federation.search"
    ]


def test_a_search_member_must_be_a_federation_member():
    raw = raw_environment("prod")
    raw["federation"]["search"] = {"enabled": True, "members": ["use1", "usw3"]}
    (line,) = config_errors(raw)
    assert line.startswith("federation.search.members[1]: 'usw3' is not a federation member (use1, usw2, usc1)")


def test_a_private_member_the_host_cannot_reach_is_refused_naming_the_key_and_the_fix():
    """Clusterpedia has no agent: its synchro manager dials each member's API server from the host
    (CLUSTERPEDIA_SYNCHRO_DIALS_AND_READS); prod's usw2 and usc1 have private endpoints."""
    raw = raw_environment("prod")
    raw["federation"]["search"] = {"enabled": True}
    lines = config_errors(raw)
    assert [line.split(":", 1)[0] for line in lines] == [
        "regions[1].apiAccess.publicCidrs",
        "regions[2].apiAccess.publicCidrs",
    ]
    assert lines[0] == (
        "regions[1].apiAccess.publicCidrs: Clusterpedia on use1 syncs usw2 through its API server, which is private "
        "and has no path from use1; open its public endpoint by listing here the CIDRs it admits (the program adds "
        "use1's NAT egress itself to a cluster it creates), or leave usw2 out of federation.search.members"
    )
    # A cluster the team brings is not changed: its endpoint must admit the host's egress already.
    raw["regions"][1]["cluster"] = {
        "existing": {
            "name": "team-eks",
            "nodeRoleArn": "arn:aws:iam::123456789012:role/n",
            "subnets": {z: f"subnet-0a1b2c3{n}" for n, z in enumerate(("us-west-2a", "us-west-2b", "us-west-2c"))},
            "egressIps": ["198.51.100.9"],
        }
    }
    (existing,) = [line for line in config_errors(raw) if line.startswith("regions[1].apiAccess.publicCidrs: ")]
    assert existing.endswith(
        "has no path from use1; usw2 is a cluster the program does not change: open its public endpoint to use1's NAT "
        "egress yourself (the `egressIps` output of use1's stack, or regions[].cluster.existing.egressIps of an "
        "existing host) and list here the CIDRs it admits, or leave usw2 out of federation.search.members"
    )
    del raw["regions"][1]["cluster"]
    # The host itself needs no path: it is read in-cluster.
    raw["federation"]["search"]["members"] = ["use1"]
    from components.checks.loader import load_environment

    assert load_environment(raw).federation.search.storage_gib == 20


# --- the host: Clusterpedia, its CRDs and its database --------------------------------------------------------------


def _on_host(plan, kind: str) -> list:
    return [r for r in plan.kubernetes_objects() if r.inputs["kind"] == kind and plan.cluster_of(r) == "prod-use1"]


def _named(plan, kind: str, name: str, namespace: str | None = NS):
    (found,) = [
        r
        for r in _on_host(plan, kind)
        if r.inputs["metadata"]["name"] == name and r.inputs["metadata"].get("namespace") == namespace
    ]
    return found


def test_no_clusterpedia_chart_is_installed(prod_plan):
    """The clusterpedia-2.6.0 chart grants cluster-admin and skips TLS verification whatever its values
    (CLUSTERPEDIA_CHART_GRANTS_CLUSTER_ADMIN): the platform renders the chart's objects itself, under the chart's
    names at release `clusterpedia`, without its controller manager (or that manager's account)."""
    assert [r.inputs["name"] for r in prod_plan.of_type(RELEASE) if "clusterpedia" in r.inputs["chart"]] == []
    in_namespace = {
        kind: sorted(
            r.inputs["metadata"]["name"]
            for r in _on_host(prod_plan, kind)
            if r.inputs["metadata"].get("namespace") == NS
        )
        for kind in ("Deployment", "ServiceAccount", "Service")
    }
    assert in_namespace == {
        "Deployment": ["clusterpedia-apiserver", "clusterpedia-clustersynchro-manager", "clusterpedia-postgres"],
        "ServiceAccount": ["clusterpedia-apiserver", "clusterpedia-clustersynchro-manager", "clusterpedia-reader"],
        "Service": ["clusterpedia-apiserver", "clusterpedia-postgres"],
    }


# What Clusterpedia v0.9.0 calls on the host with its own accounts (CLUSTERPEDIA_HOST_CALLS), by hand: the API server
# lists and watches PediaClusters (pkg/kubeapiserver/apiserver.go L152, L201) and delegates authentication and
# authorization (Kubernetes' system:auth-delegator, and extension-apiserver-authentication-reader in kube-system); the
# synchro manager's informers (clustersynchro_manager.go L73-75, L94-95: Secrets of its namespace only), finalizer
# and status updates (L368, L379, L669), its Lease (client-go leaselock.go L41-75) and the events about it
# (event_expansion.go L159-169).
CLUSTER_ROLES = {
    "clusterpedia-apiserver": [
        {"apiGroups": ["cluster.clusterpedia.io"], "resources": ["pediaclusters"], "verbs": ["list", "watch"]},
    ],
    "clusterpedia-clustersynchro-manager": [
        {
            "apiGroups": ["cluster.clusterpedia.io"],
            "resources": ["pediaclusters"],
            "verbs": ["list", "watch", "update"],
        },
        {"apiGroups": ["cluster.clusterpedia.io"], "resources": ["pediaclusters/status"], "verbs": ["update"]},
        {"apiGroups": ["cluster.clusterpedia.io"], "resources": ["clustersyncresources"], "verbs": ["list", "watch"]},
    ],
}
SYNCHRO_ROLE = [
    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["list", "watch"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
    {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "resourceNames": ["clusterpedia-clustersynchro-manager"],
        "verbs": ["get", "update"],
    },
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "update", "patch"]},
]
# (binding kind, its namespace) -> (role kind, role name, account), for every binding of Clusterpedia's own accounts.
BINDINGS = {
    ("ClusterRoleBinding", None, "clusterpedia-apiserver"): ("ClusterRole", "clusterpedia-apiserver"),
    ("ClusterRoleBinding", None, "clusterpedia-apiserver-auth-delegator"): ("ClusterRole", "system:auth-delegator"),
    ("RoleBinding", "kube-system", "clusterpedia-apiserver-auth-reader"): (
        "Role",
        "extension-apiserver-authentication-reader",
    ),
    ("ClusterRoleBinding", None, "clusterpedia-clustersynchro-manager"): (
        "ClusterRole",
        "clusterpedia-clustersynchro-manager",
    ),
    ("RoleBinding", NS, "clusterpedia-clustersynchro-manager"): ("Role", "clusterpedia-clustersynchro-manager"),
}


def test_clusterpedias_accounts_hold_only_what_it_calls_on_the_host(prod_plan):
    roles = {r.inputs["metadata"]["name"]: r.inputs["rules"] for r in _on_host(prod_plan, "ClusterRole")}
    assert {name: roles[name] for name in CLUSTER_ROLES} == CLUSTER_ROLES
    roles_here = [r for r in _on_host(prod_plan, "Role") if r.inputs["metadata"]["namespace"] == NS]
    assert [(r.inputs["metadata"], r.inputs["rules"]) for r in roles_here] == [
        ({"name": "clusterpedia-clustersynchro-manager", "namespace": NS}, SYNCHRO_ROLE)
    ]
    found = {}
    for kind in ("ClusterRoleBinding", "RoleBinding"):
        for b in _on_host(prod_plan, kind):
            mine = [s for s in b.inputs["subjects"] if s["namespace"] == NS and s["name"] != "clusterpedia-reader"]
            if mine:
                (subject,) = mine
                meta = b.inputs["metadata"]
                ref = b.inputs["roleRef"]
                found[kind, meta.get("namespace"), meta["name"]] = (ref["kind"], ref["name"], subject["name"])
    assert found == {
        key: (*role, "clusterpedia-apiserver" if "apiserver" in key[2] else "clusterpedia-clustersynchro-manager")
        for key, role in BINDINGS.items()
    }
    # Each component runs as its own account, created with its RBAC before it: the API server exits when it cannot
    # read the authentication ConfigMap (k8s.io/apiserver@v0.31.2 authentication.go L366-373), the synchro manager
    # when its Secret informer does not sync within 60 s (clustersynchro_manager.go L164-178).
    for app in ("clusterpedia-apiserver", "clusterpedia-clustersynchro-manager"):
        deployment = _named(prod_plan, "Deployment", app)
        assert deployment.inputs["spec"]["template"]["spec"]["serviceAccountName"] == app
        bindings = [
            b.urn
            for kind in ("ClusterRoleBinding", "RoleBinding")
            for b in _on_host(prod_plan, kind)
            if b.inputs["subjects"][0]["name"] == app
        ]
        assert bindings and set(bindings) <= set(deployment.options["dependsOn"])


def test_the_api_service_verifies_the_certificate_the_api_server_serves(prod_plan):
    """The host's API server verifies the aggregated API against the APIService's caBundle for the name
    <service>.<namespace>.svc (AGGREGATED_API_VERIFIED_BY_CA_BUNDLE): the bundle is the index's CA, which signs the
    serving certificate for that name, which the API server serves from the mounted Secret."""
    (service,) = [r for r in prod_plan.of_type("kubernetes:apiregistration.k8s.io/v1:APIService")]
    spec = service.inputs["spec"]
    assert service.inputs["metadata"] == {"name": "v1beta1.clusterpedia.io"}
    assert spec["insecureSkipTLSVerify"] is False
    assert spec["service"] == {"name": "clusterpedia-apiserver", "namespace": NS, "port": 443}
    (ca,) = [
        r
        for r in prod_plan.of_type("tls:index/selfSignedCert:SelfSignedCert")
        if r.name == "prod-use1-clusterpedia-ca-cert"
    ]
    assert ca.inputs["isCaCertificate"] is True
    assert service.property_dependencies["spec"] == [ca.urn]
    (server,) = [
        r for r in prod_plan.of_type("tls:index/locallySignedCert:LocallySignedCert") if "clusterpedia" in r.name
    ]
    assert server.property_dependencies["caCertPem"] == [ca.urn]
    assert spec["caBundle"] == base64.b64encode(server.inputs["caCertPem"].encode()).decode()
    assert "server_auth" in server.inputs["allowedUses"] and "cert_signing" not in server.inputs["allowedUses"]
    (request,) = [r for r in prod_plan.of_type("tls:index/certRequest:CertRequest") if "clusterpedia" in r.name]
    assert request.inputs["dnsNames"] == ["clusterpedia-apiserver.clusterpedia-system.svc"]  # handler_proxy.go L225
    secret = _named(prod_plan, "Secret", "clusterpedia-apiserver-tls")
    assert secret.inputs["type"] == "kubernetes.io/tls" and server.urn in secret.property_dependencies["stringData"]
    # The Service's 443 reaches the container's port, where --tls-cert-file/--tls-private-key-file are served from it.
    svc = _named(prod_plan, "Service", "clusterpedia-apiserver").inputs["spec"]
    template = _named(prod_plan, "Deployment", "clusterpedia-apiserver").inputs["spec"]["template"]
    pod = template["spec"]
    (container,) = pod["containers"]
    assert svc["ports"] == [{"name": "https", "port": 443, "targetPort": 8443}]
    assert svc["selector"] == template["metadata"]["labels"] == {"app": "clusterpedia-apiserver"}
    assert container["ports"] == [{"name": "https", "containerPort": 8443}]
    assert "--secure-port=8443" in container["command"]
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == "tls"]
    assert f"--tls-cert-file={mount['mountPath']}/tls.crt" in container["command"]
    assert f"--tls-private-key-file={mount['mountPath']}/tls.key" in container["command"]
    assert {"name": "tls", "secret": {"secretName": "clusterpedia-apiserver-tls", "defaultMode": 0o440}} in pod[
        "volumes"
    ]
    # The APIService is registered once its server answers, and a private GKE host's firewall opens its port.
    deployment = _named(prod_plan, "Deployment", "clusterpedia-apiserver")
    assert deployment.urn in service.options["dependsOn"]
    assert 8443 in {b.port for b in RENDERED_BACKENDS} and 8443 in control_plane_webhook_ports()


def test_clusterpedia_runs_as_the_chart_configures_it_without_its_password_in_the_environment(prod_plan):
    """The chart's images, flags and namespace variable (templates/*-deployment.yaml at clusterpedia-2.6.0), the
    storage configuration with its password as a Secret file (CLUSTERPEDIA_STORAGE_PASSWORD_FROM_FILE), as a
    non-root user on the system pool."""
    config = "/etc/clusterpedia/storage/internalstorage-config.yaml"
    expected = {
        "clusterpedia-apiserver": (
            "ghcr.io/clusterpedia-io/clusterpedia/apiserver:v0.9.0",
            "/usr/local/bin/apiserver",
            [f"--storage-config={config}", "-v=3"],
        ),
        "clusterpedia-clustersynchro-manager": (
            "ghcr.io/clusterpedia-io/clusterpedia/clustersynchro-manager:v0.9.0",
            "/usr/local/bin/clustersynchro-manager",
            [
                f"--storage-config={config}",
                "--leader-elect-resource-namespace=clusterpedia-system",
                "--leader-elect-lease-duration=15s",
                "--leader-elect-renew-deadline=10s",
                "--leader-elect-retry-period=2s",
                "--leader-elect-resource-lock=leases",
                "--worker-number=5",
                "--feature-gates=ClusterAuthenticationFromSecret=true",
            ],
        ),
    }
    for app, (image, binary, flags) in expected.items():
        pod = _named(prod_plan, "Deployment", app).inputs["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        assert container["image"] == image
        assert container["command"][0] == binary and set(flags) <= set(container["command"])
        assert container["env"] == [
            {"name": "CLUSTERPEDIA_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}
        ]
        assert {"name": "storage", "mountPath": "/etc/clusterpedia/storage", "readOnly": True} in container[
            "volumeMounts"
        ]
        assert {
            "name": "storage",
            "secret": {"secretName": "clusterpedia-internalstorage", "defaultMode": 0o440},
        } in pod["volumes"]
        assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] >= 10000
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert pod["nodeSelector"] == {"inference-platform.io/pool": "system"}
    # The Secret is made from the database's generated password (a secret in the plan).
    storage = _named(prod_plan, "Secret", "clusterpedia-internalstorage")
    assert storage.inputs["stringData"] == "[secret]"
    assert [
        u
        for u in storage.property_dependencies["stringData"]
        if u.endswith("RandomPassword::prod-use1-clusterpedia-postgres")
    ]
    assert (
        _named(prod_plan, "Namespace", NS, None).inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
        == "restricted"
    )


def test_the_storage_configuration_is_what_clusterpedia_reads():
    """Its keys, as Clusterpedia's storage config reads them (internalstorage/config.go L27-44: yaml.v3 lowercases
    untagged fields; connPool by tag), at the chart's pool sizes (values.yaml L75-79)."""
    assert yaml.safe_load(storage_config("db.example", "pw")) == {
        "type": "postgres",
        "host": "db.example",
        "port": 5432,
        "user": "clusterpedia",
        "password": "pw",
        "database": "clusterpedia",
        "connPool": {"maxIdleConns": 5, "maxOpenConns": 40, "connMaxLifetime": "60m"},
    }


def test_the_v0_9_0_crds_come_first_and_clusterpedia_waits_for_them_and_the_database(prod_plan):
    """The CRDs by URL at the tag: the vendored copies have no status schema (CLUSTERPEDIA_CRDS_NEED_THEIR_STATUS)."""
    files = {r.inputs["file"]: r for r in prod_plan.of_type(CONFIG_FILE) if "clusterpedia" in r.name}
    base = "https://raw.githubusercontent.com/clusterpedia-io/clusterpedia/v0.9.0/kustomize/crds/"
    assert set(files) == {
        base + "cluster.clusterpedia.io_pediaclusters.yaml",
        base + "cluster.clusterpedia.io_clustersyncresources.yaml",
    }
    store = _named(prod_plan, "Deployment", "clusterpedia-postgres")
    for app in ("clusterpedia-apiserver", "clusterpedia-clustersynchro-manager"):
        assert {f.urn for f in files.values()} | {store.urn} <= set(
            _named(prod_plan, "Deployment", app).options["dependsOn"]
        )


def test_the_vendored_pedia_cluster_crd_cannot_stand_in_for_the_tags(upstream):
    """Near variant of the fact: the vendored copy validates our specs but has no status schema, which Clusterpedia
    writes (it would be pruned): it is never applied."""
    crd = yaml.safe_load((upstream.root / "clusterpedia/v0.9.0/cluster.clusterpedia.io_pediaclusters.yaml").read_text())
    (version,) = crd["spec"]["versions"]
    assert "status" not in version["schema"]["openAPIV3Schema"]["properties"]


def test_pedia_clusters_are_deleted_before_the_synchro_manager_that_holds_their_finalizer(prod_plan):
    """The synchro manager adds clusterpedia.io/cluster-synchro-controller to each PediaCluster and removes it on
    deletion (clustersynchro_manager.go L362-381): Pulumi deletes a dependent first, so `destroy` is not stuck."""
    synchro = _named(prod_plan, "Deployment", "clusterpedia-clustersynchro-manager")
    (pedia,) = prod_plan.of_type(PEDIA_CLUSTER)
    assert synchro.urn in pedia.options["dependsOn"]


def test_only_the_control_plane_reaches_clusterpedias_api_server(prod_plan):
    """Default deny in its namespace; the API server takes the aggregation layer's calls from the control plane's
    addresses (MANAGED_CONTROL_PLANE_ADDRESSES: EKS's in the VPC) on its port; the synchro manager nothing."""
    policies = {
        r.inputs["metadata"]["name"]: r.inputs["spec"]
        for r in _on_host(prod_plan, "NetworkPolicy")
        if r.inputs["metadata"]["namespace"] == NS
    }
    assert policies["default-deny-ingress"] == {
        "podSelector": {"matchLabels": {}},
        "policyTypes": ["Ingress"],
        "ingress": [],
    }
    assert policies["allow-clusterpedia-apiserver"] == {
        "podSelector": {"matchLabels": {"app": "clusterpedia-apiserver"}},
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": [{"ipBlock": {"cidr": str(prod_plan.spec.region("use1").network.cidr)}}],
                "ports": [{"protocol": "TCP", "port": 8443}],
            }
        ],
    }


def test_the_database_is_protected_private_and_runs_as_its_own_user(prod_plan):
    objects = {k: v for k, v in cluster_objects(prod_plan, "PersistentVolumeClaim").items() if k[0] == "prod-use1"}
    volume = objects["prod-use1", "clusterpedia-postgres"]
    assert volume["spec"]["resources"]["requests"]["storage"] == "20Gi"
    assert volume["spec"]["storageClassName"] == "gp2"
    (claim,) = [
        r
        for r in prod_plan.resources
        if r.name == "prod-use1-clusterpedia-postgres" and r.type.endswith("PersistentVolumeClaim")
    ]
    assert claim.options["protect"] is True and claim.options["retainOnDelete"] is True
    server = cluster_objects(prod_plan, "Deployment")["prod-use1", "clusterpedia-postgres"]
    pod = server["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == 999 and pod["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["containers"]
    assert container["image"] == "docker.io/library/postgres:17.6-bookworm"
    # The password as a file the entrypoint reads (docker-library/postgres 17/bookworm/docker-entrypoint.sh L235
    # file_env), readable by the pod's group 999, never an environment variable.
    env = {e["name"]: e for e in container["env"]}
    assert "POSTGRES_PASSWORD" not in env
    assert not [e for e in container["env"] if "valueFrom" in e]
    (mount,) = [
        m for m in container["volumeMounts"] if env["POSTGRES_PASSWORD_FILE"]["value"].startswith(m["mountPath"])
    ]
    assert env["POSTGRES_PASSWORD_FILE"]["value"] == mount["mountPath"] + "/password" and mount["readOnly"] is True
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert volume["secret"] == {"secretName": "clusterpedia-postgres", "defaultMode": 0o440}
    assert pod["securityContext"]["fsGroup"] == 999
    policy = cluster_objects(prod_plan, "NetworkPolicy")["prod-use1", "clusterpedia-postgres"]
    # clusterpedia-2.6.0 labels its pods app: clusterpedia-apiserver / clusterpedia-clustersynchro-manager.
    assert policy["spec"]["ingress"] == [
        {
            "from": [
                {"podSelector": {"matchLabels": {"app": "clusterpedia-apiserver"}}},
                {"podSelector": {"matchLabels": {"app": "clusterpedia-clustersynchro-manager"}}},
            ],
            "ports": [{"protocol": "TCP", "port": 5432}],
        }
    ]


# --- members: read-only identities and PediaClusters ------------------------------------------------------------------


def test_prods_host_indexes_itself_in_cluster_with_its_reader_token(prod_plan):
    (pedia,) = prod_plan.of_type(PEDIA_CLUSTER)
    assert prod_plan.cluster_of(pedia) == "prod-use1"
    spec = pedia.inputs["spec"]
    assert pedia.inputs["metadata"] == {"name": "prod-use1"}
    assert spec["apiserver"] == "https://kubernetes.default.svc"
    assert spec["authenticationFrom"] == {
        "token": {"name": "clusterpedia-reader-token", "key": "token"},
        "ca": {"name": "clusterpedia-reader-token", "key": "ca.crt"},
    }
    assert not {"tokenData", "caData", "kubeconfig", "certData", "keyData"} & spec.keys()
    token = cluster_objects(prod_plan, "Secret")["prod-use1", "clusterpedia-reader-token"]
    assert token["metadata"]["namespace"] == NS  # the synchro manager reads Secrets of its own namespace
    assert token["type"] == "kubernetes.io/service-account-token"
    assert token["metadata"]["annotations"] == {"kubernetes.io/service-account.name": "clusterpedia-reader"}
    assert {p.inputs["metadata"]["name"] for p in prod_plan.of_type(PEDIA_CLUSTER)} == {"prod-use1"}


def test_pedia_clusters_validate_against_the_v0_9_0_crd_and_the_charts_would_drop_their_credentials(
    upstream, prod_plan
):
    """The chart's own CRD has no authenticationFrom (CLUSTERPEDIA_CREDENTIALS_FROM_SECRETS): with it the API server
    would prune the field and the PediaCluster would have no credentials."""
    (pedia,) = prod_plan.of_type(PEDIA_CLUSTER)
    assert upstream.validate_custom_resource(pedia.inputs) == []
    served = upstream.crd_served_schema("cluster.clusterpedia.io/v1alpha2", "PediaCluster")
    assert "authenticationFrom" in served["properties"]["spec"]["properties"]
    charts = [
        d
        for d in yaml.safe_load_all(
            (
                upstream.root
                / "clusterpedia-helm/clusterpedia-2.6.0/chart-clusterpedia._crds.cluster.clusterpedia.io_pediaclusters.yaml"
            ).read_text()
        )
        if d
    ]
    (chart_crd,) = charts
    (version,) = [v for v in chart_crd["spec"]["versions"] if v["name"] == "v1alpha2"]
    assert "authenticationFrom" not in version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]


@pytest.mark.plan
def test_each_member_reads_through_a_list_watch_identity(everywhere):
    roles = cluster_objects(everywhere, "ClusterRole")
    bindings = cluster_objects(everywhere, "ClusterRoleBinding")
    for member in ("search-use1", "search-usw2", "search-usc1"):
        assert roles[member, "clusterpedia-reader"]["rules"] == READER_RULES
        assert bindings[member, "clusterpedia-reader"]["subjects"] == [
            {"kind": "ServiceAccount", "name": "clusterpedia-reader", "namespace": NS}
        ]


@pytest.mark.plan
def test_other_members_are_indexed_from_the_global_stack_with_their_own_tokens(everywhere):
    """Each member's stack makes its reader and exports the token; the global stack (last wave, from the host's
    runner) copies it beside Clusterpedia and declares the PediaCluster on the member's endpoint."""
    pedias = {p.inputs["metadata"]["name"]: p for p in everywhere.of_type(PEDIA_CLUSTER)}
    assert set(pedias) == {"search-use1", "search-usw2", "search-usc1"}
    assert {name: _stack_of(everywhere, p) for name, p in pedias.items()} == {
        "search-use1": "search.use1",
        "search-usw2": "search.global",
        "search-usc1": "search.global",
    }
    assert {everywhere.cluster_of(p) for p in pedias.values()} == {"search-use1"}
    usw2 = pedias["search-usw2"].inputs["spec"]
    assert usw2["apiserver"].startswith("https://") and usw2["apiserver"].endswith(".us-west-2.eks.amazonaws.com")
    assert pedias["search-usc1"].inputs["spec"]["apiserver"].startswith("https://")  # GKE reports an address
    for member in ("search-usw2", "search-usc1"):
        secret_name = f"{member}-clusterpedia-reader"
        assert pedias[member].inputs["spec"]["authenticationFrom"]["token"] == {"name": secret_name, "key": "token"}
        (copy,) = [
            r
            for r in everywhere.of_type("kubernetes:core/v1:Secret")
            if r.inputs["metadata"] == {"name": secret_name, "namespace": NS}
        ]
        assert _stack_of(everywhere, copy) == "search.global" and everywhere.cluster_of(copy) == "search-use1"
        assert "data" in copy.secret_digests or copy.inputs["data"] == "[secret]"
        assert copy.urn in pedias[member].options["dependsOn"]
    for region in ("usw2", "usc1"):
        assert everywhere.stacks[f"search.{region}"].outputs["searchReader"] == "[secret]"


@pytest.mark.plan
def test_members_endpoints_admit_the_hosts_nat_egress(everywhere):
    """Clusterpedia's synchro manager on use1 dials usw2 and usc1 (CLUSTERPEDIA_MEMBER_HEALTHY): their endpoints admit
    use1's NAT egress, read from its stack's `egressIps`, after the team's range; use1's own does not change."""
    egress = [f"{ip}/32" for ip in everywhere.stacks["search.use1"].evaluation.referenced.values["egressIps"]]
    assert len(egress) == 3  # a NAT gateway per zone
    eks = {r.inputs["name"]: r.inputs["vpcConfig"].get("publicAccessCidrs") for r in everywhere.of_type(EKS)}
    assert eks == {"search-use1": None, "search-usw2": ["198.51.100.7/32", *egress]}
    (gke,) = everywhere.of_type(GKE)
    assert gke.inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"][1:] == [
        {"displayName": "public-0", "cidrBlock": "198.51.100.7/32"},
        *({"displayName": f"karmada-host-{i}", "cidrBlock": cidr} for i, cidr in enumerate(egress)),
    ]


@pytest.mark.plan
def test_every_wave_can_create_its_search_objects(everywhere):
    """The bring-up check: each PediaCluster's CRD is installed earlier (the host's stack, or earlier in it), each
    release's preconditions exist, on empty accounts."""
    report = check_bring_up(
        everywhere.spec, "search", everywhere.stacks, offline_gates(everywhere.spec, "search", everywhere.stacks)
    )
    assert [v for v in report.violations if "clusterpedia" in str(v).lower() or "PediaCluster" in str(v)] == []
    assert report.violations == []


def test_plan_md_shows_where_search_runs_and_what_it_reaches(prod_plan, everywhere):
    markdown = render_markdown(prod_plan)
    assert "## Multi-cluster search (Clusterpedia)" in markdown
    assert "| prod-use1 | yes | `https://kubernetes.default.svc` |" in markdown
    assert "| prod-usw2 | no (not in `federation.search.members`) | - |" in markdown
    assert (
        "`kubectl --context prod-use1 get --raw "
        "'/apis/clusterpedia.io/v1beta1/resources/api/v1/pods?labelSelector=inference-platform.io/model'`"
    ) in markdown
    assert "| search-usc1 | yes | `https://" in render_markdown(everywhere)
    assert "run with roles of their own on the host (no wildcards)" in markdown
    assert "the APIService `v1beta1.clusterpedia.io` verifies its certificate against the index's CA" in markdown


def test_plan_md_says_when_clusterpedia_is_over_privileged_or_unverified():
    """Near variants of the summary: the chart's ClusterRole of `*` and its insecure APIService are named."""

    class Planned:
        def __init__(self, inputs):
            self.inputs = inputs

    class Shown:
        def __init__(self, objects):
            self.objects = [Planned(o) for o in objects]

        def kubernetes_objects(self):
            return self.objects

        def of_type(self, type_):
            return [o for o in self.objects if type_.endswith(":" + o.inputs["kind"])]

    chart = Shown(
        [
            {
                "kind": "ClusterRole",
                "metadata": {"name": "clusterpedia"},
                "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
            },
            {
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "clusterpedia"},
                "roleRef": {"kind": "ClusterRole", "name": "clusterpedia"},
                "subjects": [{"kind": "ServiceAccount", "name": "clusterpedia-apiserver", "namespace": NS}],
            },
            {
                "kind": "APIService",
                "metadata": {"name": "v1beta1.clusterpedia.io"},
                "spec": {"insecureSkipTLSVerify": True, "service": {"name": "clusterpedia-apiserver", "namespace": NS}},
            },
        ]
    )
    assert search_section._rbac_check(chart) == "WILDCARDS in clusterpedia"
    assert "does NOT verify" in search_section._api_check(chart)


def test_the_documented_query_finds_model_pods_and_their_pools(prod_plan):
    """The README's queries select model pods by `inference-platform.io/model` and nodes by
    `inference-platform.io/pool`: every model server pod carries the one, every GPU node the other."""
    predictors = [
        d for (cluster, name), d in cluster_objects(prod_plan, "InferenceService").items() if cluster == "prod-use1"
    ]
    assert predictors
    for isvc in predictors:
        labels = isvc["spec"]["predictor"].get("labels") or isvc["metadata"].get("labels") or {}
        assert labels.get("inference-platform.io/model") == isvc["metadata"]["name"]
    groups = [r for r in prod_plan.of_type("aws:eks/nodeGroup:NodeGroup") if r.name.startswith("use1-")]
    assert {g.inputs["labels"].get("inference-platform.io/pool") for g in groups} == {"system", "h100", "l40s"}
