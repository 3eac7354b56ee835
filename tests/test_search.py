"""Multi-cluster search: Clusterpedia on the federation host, a read-only identity on each member, one PediaCluster
per search member naming its credentials, the index's database, in the stacks and waves that can create them."""

from __future__ import annotations

import pytest
import yaml

from tests.harness import cluster_objects, config_errors, environment_config, ns, plan_config, raw_environment
from tools.plan.report import render_markdown
from tools.rollout.bringup import check_bring_up
from tools.rollout.gates import offline_gates

RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
PEDIA_CLUSTER = "kubernetes:cluster.clusterpedia.io/v1alpha2:PediaCluster"
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
    """prod with every member indexed: usw2 and usc1 admit use1's NAT egress (an address here), deployed from
    runners in their networks."""
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
    assert "Clusterpedia on use1 syncs usw2 through its API server, which is private" in lines[0]
    assert "regions[1].deployer.kind: vpcRunner, or leave usw2 out of federation.search.members" in lines[0]
    # The host itself needs no path: it is read in-cluster.
    raw["federation"]["search"]["members"] = ["use1"]
    from components.config.loader import load_environment

    assert load_environment(raw).federation.search.storage_gib == 20


# --- the host: Clusterpedia, its CRDs and its database --------------------------------------------------------------


def test_clusterpedia_runs_on_the_host_only_with_an_external_store_and_credentials_from_secrets(prod_plan):
    (release,) = [r for r in prod_plan.of_type(RELEASE) if r.inputs["name"] == "clusterpedia"]
    assert prod_plan.cluster_of(release) == "prod-use1"
    assert release.inputs["namespace"] == NS
    assert (release.inputs["chart"], release.inputs["version"]) == ("clusterpedia", "2.6.0")
    assert release.inputs["repositoryOpts"] == {"repo": "https://clusterpedia-io.github.io/clusterpedia-helm/"}
    values = release.inputs["values"]
    assert values["installCRDs"] is False
    assert values["storageInstallMode"] == "external"
    assert values["externalStorage"] == {
        "type": "postgres",
        "host": f"clusterpedia-postgres.{NS}.svc.cluster.local",
        "port": 5432,
        "user": "clusterpedia",
        "database": "clusterpedia",
        "createDatabase": False,
    }
    assert "password" not in values["externalStorage"]  # only in the secret values file
    assert release.inputs["valueYamlFiles"]
    assert values["postgresql"] == {
        "enabled": False,
        "image": {"registry": "docker.io", "repository": "library/postgres", "tag": "17.6-bookworm"},
    }
    assert values["clustersynchroManager"]["featureGates"] == {"ClusterAuthenticationFromSecret": True}
    assert values["controllerManager"] == {"disabled": True}
    assert values["apiserver"]["nodeSelector"] == {"inference-platform.io/pool": "system"}


def test_the_v0_9_0_crds_come_first_and_the_release_waits_for_them_and_the_database(prod_plan):
    files = {r.inputs["file"]: r for r in prod_plan.of_type(CONFIG_FILE) if "clusterpedia" in r.name}
    base = "https://raw.githubusercontent.com/clusterpedia-io/clusterpedia/v0.9.0/kustomize/crds/"
    assert set(files) == {
        base + "cluster.clusterpedia.io_pediaclusters.yaml",
        base + "cluster.clusterpedia.io_clustersyncresources.yaml",
    }
    (release,) = [r for r in prod_plan.of_type(RELEASE) if r.inputs["name"] == "clusterpedia"]
    (store,) = [
        r for r in prod_plan.of_type("kubernetes:apps/v1:Deployment") if r.name == "prod-use1-clusterpedia-postgres"
    ]
    assert {f.urn for f in files.values()} | {store.urn} <= set(release.options["dependsOn"])


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


def test_each_member_reads_through_a_list_watch_identity(everywhere):
    roles = cluster_objects(everywhere, "ClusterRole")
    bindings = cluster_objects(everywhere, "ClusterRoleBinding")
    for member in ("search-use1", "search-usw2", "search-usc1"):
        assert roles[member, "clusterpedia-reader"]["rules"] == READER_RULES
        assert bindings[member, "clusterpedia-reader"]["subjects"] == [
            {"kind": "ServiceAccount", "name": "clusterpedia-reader", "namespace": NS}
        ]


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
