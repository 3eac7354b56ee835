"""plan.md's multi-cluster search section: where Clusterpedia runs, which members it indexes and how it reaches
them, and the query that lists every model pod."""

from __future__ import annotations

from components.catalog.charts import CHARTS, CLUSTERPEDIA_POSTGRES_IMAGE, CLUSTERPEDIA_VERSION
from components.config.federation import federation_members, search_members
from components.federation.search import READ_VERBS, SYNCED
from components.k8s.names import MODEL_LABEL, cluster_name
from platform_catalog.names import SEARCH_NAMESPACE, SEARCH_READER
from tools.plan.model import Plan

PEDIA_CLUSTER = "kubernetes:cluster.clusterpedia.io/v1alpha2:PediaCluster"


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
        f"Clusterpedia {CHARTS['clusterpedia'].version} ({CLUSTERPEDIA_VERSION}) on `{host}`, namespace "
        f"`{SEARCH_NAMESPACE}`, its index in PostgreSQL {CLUSTERPEDIA_POSTGRES_IMAGE['tag']} on a "
        f"{search.storage_gib} GiB volume{' (protected)' if env.production else ''}. Each member is read by "
        f"`{SEARCH_READER}` ({'/'.join(READ_VERBS)} on {resources}; no Secrets, no writes).\n",
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
