"""plan.md's multi-cluster search section: where Clusterpedia runs, which members it indexes and how it reaches
them, and the query that lists every model pod."""

from __future__ import annotations

from components.catalog.charts import CLUSTERPEDIA_POSTGRES_IMAGE, CLUSTERPEDIA_VERSION
from components.domain.federation_members import federation_members, search_members
from components.federation.search import READ_VERBS, SYNCED
from components.federation.search_index import API_GROUP, API_VERSION, APISERVER, SYNCHRO_MANAGER
from components.k8s.names import MODEL_LABEL, cluster_name
from platform_catalog.names import SEARCH_NAMESPACE, SEARCH_READER
from tools.plan.model import Plan

PEDIA_CLUSTER = "kubernetes:cluster.clusterpedia.io/v1alpha2:PediaCluster"
API_SERVICE = "kubernetes:apiregistration.k8s.io/v1:APIService"


def _wildcards(plan: Plan) -> list[str]:
    """The roles of the plan bound to Clusterpedia's own accounts (not the members' reader) that grant a `*`."""
    objects = [r.inputs for r in plan.kubernetes_objects()]
    rules = {(o["kind"], o["metadata"]["name"]): o.get("rules") or [] for o in objects if o["kind"].endswith("Role")}
    found = []
    for binding in (o for o in objects if o["kind"].endswith("RoleBinding")):
        mine = [
            s
            for s in binding.get("subjects") or []
            if s.get("namespace") == SEARCH_NAMESPACE and s["name"] != SEARCH_READER
        ]
        ref = (binding["roleRef"]["kind"], binding["roleRef"]["name"])
        if mine and any("*" in str(rule) for rule in rules.get(ref, [])):
            found.append(ref[1])
    return sorted(set(found))


def _rbac_check(plan: Plan) -> str:
    wild = _wildcards(plan)
    return f"WILDCARDS in {', '.join(wild)}" if wild else "no wildcards"


def _api_check(plan: Plan) -> str:
    """How the host's API server checks Clusterpedia's API server, as the plan's APIService says."""
    name = f"{API_VERSION}.{API_GROUP}"
    found = [r.inputs.get("spec") or {} for r in plan.of_type(API_SERVICE) if r.inputs["metadata"]["name"] == name]
    if not found:
        return f"no APIService `{name}`"
    spec = found[0]
    if spec.get("insecureSkipTLSVerify") or not spec.get("caBundle"):
        return f"the APIService `{name}` does NOT verify its certificate"
    return f"the APIService `{name}` verifies its certificate against the index's CA (caBundle)"


def search_section(plan: Plan) -> str:
    env = plan.spec
    search = env.federation.search
    if not (env.federation.enabled and search.enabled):
        return ""
    host = cluster_name(plan.environment, env.region(env.federation.host))
    dialed = {r.inputs["metadata"]["name"]: r.inputs["spec"]["apiserver"] for r in plan.of_type(PEDIA_CLUSTER)}
    indexed = {r.name for r in search_members(env)}
    resources = ", ".join(f"{g or 'core'}/{'+'.join(rs)}" for g, rs in SYNCED)
    rows = [
        "## Multi-cluster search (Clusterpedia)\n",
        f"Clusterpedia {CLUSTERPEDIA_VERSION} on `{host}`, namespace `{SEARCH_NAMESPACE}`, its index in PostgreSQL "
        f"{CLUSTERPEDIA_POSTGRES_IMAGE['tag']} on a {search.storage_gib} GiB volume"
        f"{' (protected)' if env.production else ''}. `{APISERVER}` and `{SYNCHRO_MANAGER}` run with roles of "
        f"their own on the host ({_rbac_check(plan)}); {_api_check(plan)}. Each member is "
        f"read by `{SEARCH_READER}` ({'/'.join(READ_VERBS)} on {resources}; no Secrets, no writes).\n",
        "| member | indexed | API server Clusterpedia dials |",
        "|---|---|---|",
    ]
    for region in federation_members(env):
        name = cluster_name(plan.environment, region)
        if region.name in indexed:
            rows.append(f"| {name} | yes | `{dialed.get(name, '(planned in another stack)')}` |")
        else:
            rows.append(f"| {name} | no (not in `federation.search.members`) | - |")
    rows += [
        "",
        f"Every model pod of the indexed members, with the cluster in `shadow.clusterpedia.io/cluster-name`: "
        f"`kubectl --context {host} get --raw "
        f"'/apis/clusterpedia.io/v1beta1/resources/api/v1/pods?labelSelector={MODEL_LABEL}'` (docs/operations.md, Multi-cluster "
        "search).",
    ]
    return "\n".join(rows) + "\n"
