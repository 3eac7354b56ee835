"""plan.md (a pull-request comment) and the terminal summary tree."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from components.addons.dashboards import DASHBOARD_LABEL
from components.catalog.charts import CHARTS
from components.catalog.engines import LIBFABRIC, PD_ENGINE_IMAGE, PD_NIXL_BACKENDS
from components.catalog.regions import CLOUDS
from components.checks.gpu_pool_checks import unused_pools
from components.config.region import GpuPoolSpec, RegionSpec
from components.domain.capacity import pool_holds, replica_demands
from components.domain.disaggregation import efa_path
from components.domain.gpu_resources import schedulable_at_max_size, schedulable_resources
from components.domain.image_pull import effective_image_pull
from components.k8s.names import cluster_name
from components.k8s.topology import placement_group_name, pool_fabric, uses_placement_group
from platform_catalog.machines import MACHINES
from tools.plan.cost_section import cost_section
from tools.plan.gateway_section import gateway_section
from tools.plan.model import REGION_TYPE, Plan
from tools.plan.priority_section import priority_section
from tools.plan.search_section import search_section
from tools.plan.slo_section import slo_section


def component_counts(plan: Plan) -> dict[str | None, Counter]:
    """Region name (None = environment level) -> component label -> custom resources under it."""
    counts: dict[str | None, Counter] = {}
    for r in plan.resources:
        if not r.custom:
            continue
        region = plan.region_of(r)
        chain = [a for a in plan.ancestors(r) if a.type not in (REGION_TYPE, "pulumi:pulumi:Stack")]
        top = chain[-1] if chain else None
        label = f"{top.type.rsplit(':', 1)[-1]} {top.name}" if top else "providers"
        counts.setdefault(region, Counter())[label] += 1
    return counts


def _summary(plan: Plan) -> str:
    custom = [r for r in plan.resources if r.custom]
    return (
        f"# Plan: `{plan.environment}`\n\n"
        f"**{len(custom)}** resources ({len(plan.resources) - len(custom)} components), "
        f"**{len(plan.kubernetes_objects())}** Kubernetes objects, **{len(plan.helm_releases())}** Helm releases "
        f"across **{len(plan.spec.regions)}** region(s).\n"
    ) + (f"\n{_stacks(plan)}" if plan.stacks else "")


def _stacks(plan: Plan) -> str:
    """Several stacks: each one's share, where it is deployed from, what it reads, and the rollout's waves."""
    if not plan.stacks:
        return ""
    from components.config.stacks import region_stack_name
    from components.domain.deployers import deployer_of
    from components.domain.stack_split import environment_stacks, global_deployer
    from components.domain.waves import rollout_waves

    env = plan.spec
    rows = [
        "## Stacks and rollout\n",
        f"`{plan.environment}` is deployed as {len(plan.stacks)} stacks (`stacks.layout: perRegion`), each from "
        "where its cluster's API is reachable; `make rollout ENV=" + plan.environment + "` deploys them in waves "
        "(`DRY_RUN=1` prints them).\n",
        "| wave | stack | resources | Kubernetes objects | Helm releases | reads | deployed from | mandatory findings "
        "| missing preconditions |",
        "|---|---|---:|---:|---:|---|---|---:|---:|",
    ]
    slices = {s.name: s for s in environment_stacks(env, plan.environment)}
    for wave in rollout_waves(env, plan.environment):
        for name in wave.stacks:
            part, piece = plan.stacks[name], slices[name]
            deployer = global_deployer(env) if piece.kind == "global" else deployer_of(env.region(piece.region))
            where = "anywhere (cloud APIs only)" if deployer is None else _deployer_text(deployer)
            if piece.kind == "global" and env.stacks.global_deployer is None and deployer is not None:
                # By default it runs where the host's stack runs (it patches the host's Karmada service).
                where = f"where `{region_stack_name(plan.environment, env.federation.host)}` is: {where}"
            mandatory = sum(f["enforcementLevel"] == "mandatory" for f in part.policy)
            missing = len(plan.bring_up.of(name)) if plan.bring_up is not None else "-"
            rows.append(
                f"| {wave.name}{' (confirm)' if wave.confirm else ''} | `{name}` | "
                f"{sum(r.custom for r in part.resources)} | {len(part.kubernetes_objects())} | "
                f"{len(part.helm_releases())} | {', '.join(f'`{r}`' for r in part.evaluation.reads_stacks) or '-'} | "
                f"{where} | {mandatory} | {missing} |"
            )
    return "\n".join(rows) + "\n"


def _bring_up(plan: Plan) -> str:
    """The bring-up check: every wait of every wave, its preconditions created in time (tools/rollout/bringup.py)."""
    report = plan.bring_up
    if report is None:
        return ""
    checked = sum(report.checked.values())
    rows = [
        "## Bring-up on empty accounts\n",
        f"{checked} preconditions of the Helm releases that wait, the Pulumi awaits and the rollout's gates, wave by "
        f"wave: **{len(report.violations)} missing**" + (":" if report.violations else "."),
        "",
    ]
    rows += [f"- {v.line()}" for v in report.violations]
    from components.domain.waves import rollout_waves

    for wave in rollout_waves(plan.spec, plan.environment):
        for stack in [s for s in wave.stacks if s in report.bootstraps]:
            rows.append(
                f"- first `up` of `{stack}`: its network alone ({report.bootstraps[stack].resources} resources; `make "
                f"rollout ENV={plan.environment} WAVE={wave.name} BOOTSTRAP=1`), then its runner inside it"
            )
    for stack, notes in sorted(report.notes.items()):
        rows += [f"- `{stack}`'s gate does not wait for {note}" for note in notes]
    return "\n".join(rows) + "\n"


def _deployer_text(deployer) -> str:
    cidrs = ", ".join(str(c) for c in deployer.cidrs)
    return {
        "vpcRunner": "a runner inside the region's network",
        "cidrs": f"a runner at {cidrs} (public endpoint)",
        "privateLink": f"{cidrs} over your private link",
    }[deployer.kind]


def _counts(plan: Plan) -> str:
    rows = ["## Resources per region and component\n", "| region | component | resources |", "|---|---|---:|"]
    for region, counter in component_counts(plan).items():
        for label, n in sorted(counter.items()):
            rows.append(f"| {region or '(environment)'} | {label} | {n} |")
    return "\n".join(rows) + "\n"


def _policy(plan: Plan) -> str:
    mandatory = sum(v["enforcementLevel"] == "mandatory" for v in plan.policy)
    verdict = "**rejected**" if mandatory else "passed"
    rows = [
        "## Policy\n",
        f"Policy {verdict}: {len(plan.policy_verdicts)} rules, {mandatory} mandatory and "
        f"{len(plan.policy) - mandatory} advisory finding(s).\n",
    ]
    if not plan.policy:
        rows.append("No violations.")
    else:
        rows += ["| policy | level | resource | message |", "|---|---|---|---|"]
        for v in plan.policy:
            message = v["message"].replace("|", "\\|")
            rows.append(f"| {v['policy']} | {v['enforcementLevel']} | `{v['urn']}` | {message} |")
    if plan.policy_verdicts:
        rows += [
            "",
            "<details><summary>Verdict per rule</summary>\n",
            "| rule | severity | level | resources | violations | cannot check | verdict |",
            "|---|---|---|---:|---:|---:|---|",
        ]
        for v in plan.policy_verdicts:
            rows.append(
                f"| {v['policy']} | {v['severity']} | {v['enforcementLevel']} | {v['resources']} | {v['violations']} "
                f"| {v['cannotCheck']} | {v['verdict']} |"
            )
        rows.append("\n</details>")
    return "\n".join(rows) + "\n"


def _partitioning(pool) -> str:
    if pool.mig is not None:
        layout = " + ".join(f"{n}x {profile}" for profile, n in (pool.mig.layout or {}).items())
        return f"MIG {pool.mig.strategy}, {pool.mig.profile or layout} per GPU"
    if pool.gke_partition_size:
        return f"GKE partitions {pool.gke_partition_size}"
    if pool.time_slicing is not None:
        return f"time-sliced x{pool.time_slicing.replicas}"
    return "whole GPUs"


# Who adds a pool's nodes for pending pods, per cloud.
NODE_AUTOSCALER = {"aws": "Cluster Autoscaler", "gcp": "GKE cluster autoscaler"}


def _schedulable_gpu_resources(plan: Plan) -> str:
    """What each GPU pool offers the scheduler: the names model deployments and queues request, and how
    much of it the node autoscaler can add beyond the nodes the pool starts with."""
    rows = [
        "## Schedulable GPU resources\n",
        "| region | pool | machine | partitioning | resource | per node | max nodes | at max size "
        "| autoscaler can add |",
        "|---|---|---|---|---|---:|---:|---:|---|",
    ]
    for region in plan.spec.regions:
        for pool in region.gpu_pools:
            at_max = schedulable_at_max_size(pool)
            extra_nodes = pool.max_size - pool.desired
            for name, count in schedulable_resources(pool).items():
                rows.append(
                    f"| {region.name} | {pool.name} | {pool.machine_type} | {_partitioning(pool)} | `{name}` | "
                    f"{count} | {pool.max_size} | {at_max[name]} | +{count * extra_nodes} ({extra_nodes} node"
                    f"{'' if extra_nodes == 1 else 's'} from {pool.desired}, {NODE_AUTOSCALER[region.cloud]}) |"
                )
    return "\n".join(rows) + "\n"


def _fabric(plan: Plan, region: RegionSpec, pool: GpuPoolSpec) -> str:
    fabric, machine = pool_fabric(pool), MACHINES[pool.machine_type]
    if fabric == "efa":
        return f"efa ({machine.efa_interfaces} EFA + 1 ENA)"
    return fabric if fabric == "none" else f"{fabric} ({machine.extra_nics} GPU NICs)"


def _placement(plan: Plan, region: RegionSpec, pool: GpuPoolSpec) -> str:
    zones = ", ".join(region.pool_zones(pool))
    if not uses_placement_group(pool):
        return zones
    kind = CLOUDS[region.cloud].compact_placement
    return f"{kind} `{placement_group_name(cluster_name(plan.environment, region), pool.name)}` in {zones}"


def _image_pull(plan: Plan, region: RegionSpec, pool: GpuPoolSpec) -> str:
    """How a new node pulls the engine images (components/domain/image_pull.py)."""
    if effective_image_pull(pool) == "parallel":
        return "parallel (SOCI, nodeadm FastImagePull)"
    if region.cloud == "gcp":
        return "whole (streaming: Artifact Registry images only)"
    return "whole (containerd)"


def _capacity_type(plan: Plan, region: RegionSpec, pool: GpuPoolSpec) -> str:
    capacity = pool.capacity
    return f"{capacity.type} `{capacity.reservation_id}`" if capacity.reservation_id else capacity.type


_OBTAINED = {
    "aws": {
        "onDemand": "on-demand instances",
        "spot": "spot instances",
        "reservation": "instances in ODCR `{id}`",
        "capacityBlock": "instances in Capacity Block `{id}`",
    },
    "gcp": {
        "onDemand": "on-demand VMs (a matching reservation first)",
        "spot": "spot VMs",
        "reservation": "VMs of reservation `{id}` only",
        "flexStart": "flex-start VMs (DWS), granted to pending pods",
    },
}


def _obtained_via(plan: Plan, region: RegionSpec, pool: GpuPoolSpec) -> str:
    """Who adds the pool's nodes, and what they are bought as."""
    capacity = pool.capacity
    how = _OBTAINED[region.cloud][capacity.type].format(id=capacity.reservation_id)
    return f"{NODE_AUTOSCALER[region.cloud]}: {how}"


def _max_replicas(plan: Plan, region: RegionSpec, pool: GpuPoolSpec) -> str:
    """Per model on the pool: the replicas it holds at maxSize (the others at their minimum); a maxReplicas
    beyond that is flagged, as the autoscaler may ask for replicas that stay pending."""
    demands = replica_demands(plan.spec, region)
    on_pool = [d for d in demands if d.pool.name == pool.name]
    cells = []
    for d in on_pool:
        holds = pool_holds(d, on_pool)
        cell = f"{d.label}: {holds}"
        if d.placement.max_replicas > holds:
            cell += f" **capped by pool** (maxReplicas {d.placement.max_replicas})"
        cells.append(cell)
    return "; ".join(cells) or "-"


# Columns of the capacity table: header, cell of one (plan, region, pool). Capabilities append theirs.
CAPACITY_COLUMNS: tuple[tuple[str, Callable[[Plan, RegionSpec, GpuPoolSpec], str]], ...] = (
    ("region", lambda plan, r, p: r.name),
    ("pool", lambda plan, r, p: p.name),
    ("machine type", lambda plan, r, p: p.machine_type),
    ("GPU", lambda plan, r, p: MACHINES[p.machine_type].gpu),
    ("GPUs / node", lambda plan, r, p: str(MACHINES[p.machine_type].gpus)),
    ("nodes (min-max)", lambda plan, r, p: f"{p.min_size}-{p.max_size}"),
    ("fabric", _fabric),
    ("placement", _placement),
    ("image pull", _image_pull),
    ("capacity", _capacity_type),
    ("obtained via", _obtained_via),
    ("max replicas the pool holds", _max_replicas),
)


def _capacity(plan: Plan) -> str:
    pools = [(region, pool) for region in plan.spec.regions for pool in region.gpu_pools]
    if not pools:
        return "## GPU capacity\n\nNo GPU pools.\n"
    rows = [
        "## GPU capacity\n",
        "| " + " | ".join(header for header, _ in CAPACITY_COLUMNS) + " |",
        "|" + "---|" * len(CAPACITY_COLUMNS),
    ]
    rows += ["| " + " | ".join(cell(plan, r, p) for _, cell in CAPACITY_COLUMNS) + " |" for r, p in pools]
    warnings = [f"- **warning**: `{issue.path}`: {issue.message}" for issue in unused_pools(plan.spec)]
    return "\n".join([*rows, *(["", *warnings] if warnings else [])]) + "\n"


def _node_id(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", "_".join(parts))


def _diagram(plan: Plan) -> str:
    """Per region its cluster, GPU pools, gateway and the models placed there, one edge per relation; Karmada's
    links to its members. Tenants and routes are tables (the Gateway section): as edges they tangle the picture."""
    from components.domain.gateways import gateway_hostname, has_gateway

    env = plan.spec
    lines = ["## Topology\n", "```mermaid", "flowchart LR"]
    for region in env.regions:
        cluster = cluster_name(plan.environment, region)
        kind = CLOUDS[region.cloud].cluster_kind
        lines.append(f'  subgraph {_node_id("r", region.name)}["{region.name}: {region.cloud} {region.region}"]')
        lines.append(
            f'    {_node_id("c", region.name)}["{kind} {cluster}<br/>system {region.system_pool.machine_type} '
            f'{region.system_pool.min_size}-{region.system_pool.max_size}"]'
        )
        for pool in region.gpu_pools:
            lines.append(
                f'    {_node_id("p", region.name, pool.name)}["GPU pool {pool.name}<br/>{pool.machine_type} '
                f'{pool.min_size}-{pool.max_size}"]'
            )
            lines.append(f"    {_node_id('c', region.name)} --- {_node_id('p', region.name, pool.name)}")
        placed = [(model, pl) for model in env.models for pl in model.placements if pl.region == region.name]
        for model, pl in placed:
            replicas = f"{pl.min_replicas}-{pl.max_replicas} replicas"  # a federated member's too: its own copy
            node = _node_id("m", region.name, model.name, pl.pool)
            lines.append(f'    {node}(["model {model.name}<br/>{model.runtime} · {replicas}"])')
            lines.append(f"    {node} --> {_node_id('p', region.name, pl.pool)}")
        if has_gateway(env, region):
            routed = len({model.name for model, _ in placed})
            lines.append(
                f'    {_node_id("g", region.name)}[/"gateway {gateway_hostname(env, region)}<br/>'
                f'{region.gateway.exposure} · {routed} models"/]'
            )
            lines.append(f"    {_node_id('g', region.name)} --- {_node_id('c', region.name)}")
        lines.append("  end")
    if env.federation.enabled:
        lines += _federation_diagram(plan)
    lines.append("```")
    return "\n".join(lines) + "\n"


def _federation_diagram(plan: Plan) -> list[str]:
    """Karmada on its host and a link to each member (the GPU products it offers); federated models are on each member's
    cluster with their replica range there."""
    from components.domain.federation_members import gpu_products
    from components.federation.placement import member_regions

    fed = plan.spec.federation
    lines = [f'  fed[["Karmada {CHARTS["karmada"].version} on {fed.host}<br/>{fed.member_mode} members"]]']
    members = {region.name: region for region in member_regions(plan.spec)}
    if fed.host not in members:
        lines.append(f'  fed ===|"host"| {_node_id("c", str(fed.host))}')
    for name, region in members.items():
        products = ", ".join(gpu_products(region)) or "no GPUs"
        link = f'===|"host · member · {products}"|' if name == fed.host else f'-.-|"member · {products}"|'
        lines.append(f"  fed {link} {_node_id('c', name)}")
    return lines


def _joins(plan: Plan, member: str) -> str:
    """How a member's Cluster comes to exist in Karmada, read from what the plan renders for it."""
    ways = set()
    for r in plan.kubernetes_objects():
        if r.inputs["kind"] == "Cluster" and r.inputs["metadata"]["name"] == member:
            mode = r.inputs["spec"]["syncMode"].lower()
            ways.add(
                "declared with its labels (pull): karmada-agent re-registers it by its kube-system UID"
                if mode == "pull"
                else f"declared by the program ({mode})"
            )
    return "; ".join(sorted(ways)) or "not registered"


def _federation(plan: Plan) -> str:
    """Karmada: the members and each federated model's copy on them (pool, GPU, replica range)."""
    from components.domain.federation_members import gpu_products
    from components.federation.placement import federated_models, member_regions, model_shares

    env = plan.spec
    fed = env.federation
    if not fed.enabled:
        return ""
    rows = [
        "## Federation (Karmada)\n",
        f"Control plane on `{plan.environment}-{fed.host}`; members join in **{fed.member_mode}** mode. Failover: "
        f"replicas leave a member not ready or unreachable for {fed.failover.cluster_toleration_seconds}s, or "
        f"unhealthy for {fed.failover.application_toleration_seconds}s.\n",
        "| member | cloud | region | GPU products | joins |",
        "|---|---|---|---|---|",
    ]
    for region in member_regions(env):
        rows.append(
            f"| {cluster_name(plan.environment, region)} | {region.cloud} | {region.region} | "
            f"{', '.join(gpu_products(region)) or '-'} | {_joins(plan, cluster_name(plan.environment, region))} |"
        )
    models = federated_models(env)
    if models:
        rows += ["", "| federated model | member | pool | GPU | replicas |", "|---|---|---|---|---:|"]
        for model in models:
            for s in model_shares(env, plan.environment, model):
                rows.append(
                    f"| {model.name} | {s.cluster} | {s.pool.name} | {s.gpu} | "
                    f"{s.placement.min_replicas}-{s.placement.max_replicas} |"
                )
    return "\n".join(rows) + "\n"


def _admission(plan: Plan) -> str:
    """Per cluster: cert-manager (webhook certificates) and the quotas GKE needs to admit critical pods."""
    rows = [
        "## Cluster prerequisites\n",
        "cert-manager issues KServe's webhook certificate; on GKE, pods with system-node-critical or "
        "system-cluster-critical priority are admitted outside kube-system only where a ResourceQuota is scoped "
        "to those classes.\n",
        "| cluster | cloud | cert-manager | critical-pod quotas (namespaces) |",
        "|---|---|---|---|",
    ]
    releases = {(plan.cluster_of(r), r.inputs["name"]): r.inputs for r in plan.helm_releases()}
    quotas: dict[str | None, list[str]] = {}
    for r in plan.kubernetes_objects():
        if r.inputs["kind"] == "ResourceQuota":
            quotas.setdefault(plan.cluster_of(r), []).append(r.inputs["metadata"]["namespace"])
    for region in plan.spec.regions:
        cluster = cluster_name(plan.environment, region)
        installed = releases.get((cluster, "cert-manager"))
        if installed is not None:
            cert_manager = f"{installed['version']} (installed before KServe)"
        elif region.cert_manager.existing:
            cert_manager = "existing (not installed)"
        else:
            cert_manager = "- (no KServe)"
        needed = ", ".join(sorted(quotas.get(cluster, []))) or (
            "none needed" if region.critical_pods_need_quota else "n/a (EKS)"
        )
        rows.append(f"| {cluster} | {region.cloud} | {cert_manager} | {needed} |")
    return "\n".join(rows) + "\n"


def _quantities(amounts: dict | None) -> str:
    return ", ".join(f"{name}: {int(n) if isinstance(n, float) else n}" for name, n in (amounts or {}).items()) or "-"


def _scheduling(plan: Plan) -> str:
    """Volcano queues per cluster: who gets which GPUs, at which priority."""
    queues = sorted(
        (r for r in plan.kubernetes_objects() if r.inputs["kind"] == "Queue"),
        key=lambda r: (plan.cluster_of(r) or "", r.inputs["metadata"]["name"]),
    )
    if not queues:
        return ""
    rows = [
        "## Scheduling queues (Volcano)\n",
        "| cluster | queue | weight | priority | reclaimable | capability | guarantee |",
        "|---|---|---:|---:|---|---|---|",
    ]
    for r in queues:
        spec = r.inputs["spec"]
        rows.append(
            f"| {plan.cluster_of(r)} | {r.inputs['metadata']['name']} | {int(spec['weight'])} | "
            f"{int(spec['priority'])} | {spec['reclaimable']} | {_quantities(spec['capability'])} | "
            f"{_quantities(spec.get('guarantee', {}).get('resource'))} |"
        )
    return "\n".join(rows) + "\n"


def _model_storage(plan: Plan) -> str:
    """Per region: bucket and how it is kept in sync, cache tiers and capacity, pre-warmed models."""
    from components.addons.model_cache import model_bucket_url, prewarmed_models
    from components.domain.cache_plan import cache_plan
    from components.k8s.names import model_bucket_name

    env = plan.spec
    source = env.model_store_source()
    rows = [
        "## Model storage\n",
        "| region | bucket | kept in sync by | cache tiers per worker | workers | cache capacity | pre-warmed |",
        "|---|---|---|---|---:|---:|---|",
    ]
    for region in env.regions:
        bucket = model_bucket_url(
            region, model_bucket_name(env.model_store.bucket_prefix, plan.environment, region.name)
        )
        if region.name == source.name:
            sync = "source of truth (uploads)"
        elif region.cloud == "aws":
            sync = f"S3 replication from {source.name}"
        else:
            sync = f"Storage Transfer from {source.name} every {env.model_store.sync_interval_hours}h"
        if region.model_cache.enabled:
            cache = cache_plan(region)
            tiers = f"MEM {cache.memory_gib}Gi" + (f" + NVMe {cache.ssd_gib}Gi" if cache.ssd_gib else "")
            workers, capacity = str(cache.replicas), f"{cache.capacity_gib} GiB"
            warm = ", ".join(m.name for m in prewarmed_models(env, region)) or "none"
        else:
            tiers, workers, capacity, warm = "cache off", "-", "-", "-"
        rows.append(f"| {region.name} | `{bucket}` | {sync} | {tiers} | {workers} | {capacity} | {warm} |")
    return "\n".join(rows) + "\n"


_MONITOR_TYPES = {f"kubernetes:monitoring.coreos.com/v1:{kind}" for kind in ("ServiceMonitor", "PodMonitor")}
_RULE_TYPE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"


def _observability(plan: Plan) -> str:
    """Per region: which Prometheus, and how many monitors, dashboards and alert rules the platform adds."""
    stack_chart = CHARTS["kube-prometheus-stack"]
    rows = [
        "## Observability\n",
        "| region | Prometheus | monitors | dashboards | alert rules | remote write | Grafana exposed |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for region in plan.spec.regions:
        obs = region.observability
        mine = [r for r in plan.resources if r.custom and plan.region_of(r) == region.name]
        monitors = sorted(r.inputs["metadata"]["name"] for r in mine if r.type in _MONITOR_TYPES)
        dashboards = [
            r
            for r in mine
            if r.type == "kubernetes:core/v1:ConfigMap"
            and DASHBOARD_LABEL.items() <= r.inputs.get("metadata", {}).get("labels", {}).items()
        ]
        rules = sum(
            "alert" in rule
            for r in mine
            if r.type == _RULE_TYPE
            for g in r.inputs["spec"]["groups"]
            for rule in g["rules"]
        )
        if not obs.enabled:
            stack = "off"
        elif obs.existing_prometheus is not None:
            stack = f"existing, namespace `{obs.existing_prometheus.namespace}`"
        else:
            stack = f"{stack_chart.name} {stack_chart.version}"
        rows.append(
            f"| {region.name} | {stack} | {len(monitors)} ({', '.join(monitors) or '-'}) | {len(dashboards)} | {rules} "
            f"| {'yes' if obs.remote_write else 'no'} | {'yes' if obs.grafana.expose else 'no'} |"
        )
    return "\n".join(rows) + "\n"


def _model_deployments(plan: Plan) -> str:
    """Per model and region: the GPU it got, its split, memory and concurrency at full context, its replicas."""
    from components.serving.deployment import model_placements

    placements = [p for region in plan.spec.regions for p in model_placements(plan.spec, region)]
    if not placements:
        return ""
    rows = [
        "## Model deployments\n",
        "| region | model | runtime | pool | GPU (resource x per pod) | TP x PP | weights GiB | KV GiB per replica "
        "| max sequences at max context | maxNumSeqs x maxModelLen | replicas | autoscaler | start-up est. / probe "
        "budget | at zero replicas: cold start (image pull) / a request is held, then 503 + Retry-After (or its "
        "stand-in answers) |",
        "|---|---|---|---|---|---|---:|---:|---:|---|---|---|---:|---:|",
    ]
    for p in placements:
        sizing, model = p.fit.sizing, p.model
        cold = p.cold_start_seconds
        held = f"{p.queue_wait_seconds}s" if p.placement.stand_in is None else f"stand-in {p.placement.stand_in}"
        at_zero = "never at zero" if cold is None else f"{cold}s ({p.cold_start_pull_seconds}s) / {held}"
        rows.append(
            f"| {p.placement.region} | {model.name} | {model.runtime} | {p.pool.name} | {p.fit.slot.name} "
            f"(`{p.resource}` x {sizing.tensor_parallel}) | {sizing.tensor_parallel} x {sizing.pipeline_parallel} "
            f"| {sizing.weights_gib:g} | {sizing.kv_cache_gib:g} | {sizing.max_sequences_at_max_len} "
            f"| {model.max_num_seqs} x {model.max_model_len} | {p.placement.min_replicas}-{p.placement.max_replicas} "
            f"| {p.autoscaler} | {p.startup_seconds}s / {p.startup_budget_seconds}s | {at_zero} |"
        )
    return "\n".join([*rows, *_declared_models(plan)]) + "\n"


def _declared_models(plan: Plan) -> list[str]:
    """The environment's own presets (modelCatalog, models/*.yaml) as sizing reads them, and who serves them."""
    from components.config.model_catalog import CATALOG_KEY
    from components.domain.sizing import GIB, kv_bytes_per_token, weight_bytes

    declared = plan.spec.declared_models
    if not declared:
        return []
    rows = [
        "",
        "### Models of your own\n",
        "| preset | declared in | Hub repository | params | layers x hidden | heads / KV heads x head dim | context "
        "| vocab | experts (active) | checkpoint | KV bytes per token (16-bit) | served as |",
        "|---|---|---|---:|---|---|---:|---:|---|---|---:|---|",
    ]
    for entry in declared:
        arch = entry.architecture
        checkpoint = "any precision"
        if arch.weights_format is not None:
            checkpoint = f"{arch.weights_format}, {weight_bytes(arch, arch.weights_format) / GIB:.2f} GiB"
        experts = f"{arch.experts} ({arch.active_experts})" if arch.experts else "-"
        served = ", ".join(m.name for m in plan.spec.models if m.preset == entry.name) or "-"
        where = f"Pulumi.{plan.environment}.yaml" if entry.source == CATALOG_KEY else entry.source
        rows.append(
            f"| {entry.name} | {where} | {arch.hf_repo or '-'} | {arch.params_billion:g}B | {arch.layers} x "
            f"{arch.hidden_size} | {arch.attention_heads} / {arch.kv_heads} x {arch.head_dim} | {arch.max_context} "
            f"| {arch.vocab_size} | {experts} | {checkpoint} | {kv_bytes_per_token(arch, 'auto')} | {served} |"
        )
    return rows


def _disaggregated_serving(plan: Plan) -> str:
    """Per placement asking for disaggregation: the mode it runs in and why, both pools' sizing, the KV hand-off."""
    from components.serving.deployment import model_placements

    asked = [
        p
        for region in plan.spec.regions
        for p in model_placements(plan.spec, region)
        if p.placement.serving_mode != "aggregated"
    ]
    if not asked:
        return ""
    rows = [
        "## Disaggregated serving\n",
        "| region | model | mode | decode: pool, GPU x TP, replicas, maxNumSeqs | prefill: pool, GPU x TP, replicas, "
        "maxNumSeqs, KV GiB | KV per prompt | hand-off | why |",
        "|---|---|---|---|---|---:|---|---|",
    ]
    warnings = []
    for p in asked:
        side, model = p.disaggregation, p.model
        why = "configured" if p.mode_decision is None else "auto: " + "; ".join(p.mode_decision.reasons)
        decode = (
            f"{p.pool.name}, {p.fit.slot.name} x {p.fit.sizing.tensor_parallel}, {p.placement.max_replicas}, "
            f"{model.max_num_seqs}"
        )
        if side is None:
            rows.append(f"| {p.placement.region} | {model.name} | aggregated | {decode} | - | - | - | {why} |")
            continue
        t = side.transfer
        prefill = (
            f"{side.pool.name}, {side.fit.slot.name} x {side.fit.sizing.tensor_parallel}, {side.spec.replicas}, "
            f"{side.spec.max_num_seqs}, {side.fit.sizing.kv_cache_gib:g}"
        )
        kv = f"{t.bytes_per_prompt / 2**20:,.0f} MiB ({side.spec.prompt_tokens} tokens, {model.kv_cache_dtype} KV)"
        hand_off = f"{t.transport.upper()} {t.paths} x {t.gbps_per_path:g} Gbps: {t.seconds * 1000:.1f} ms"
        rows.append(
            f"| {p.placement.region} | {model.name} | disaggregated | {decode} | {prefill} | {kv} | {hand_off} | {why} |"
        )
        if t.transport == "tcp":
            fabric = efa_path(
                plan.spec.region(p.placement.region), side.pool, p.pool, nixl_backends=(*PD_NIXL_BACKENDS, LIBFABRIC)
            )
            fix = (
                f"the engine image {PD_ENGINE_IMAGE} has no NIXL LIBFABRIC backend usable over EFA "
                "(components/catalog/upstream.py PD_ENGINE_IMAGE)"
                if fabric
                else "put both pools on EFA in one zone for RDMA"
            )
            warnings.append(
                f"- **warning**: {p.placement.region}/{model.name} hands its KV cache over TCP ({t.seconds * 1000:.0f} ms "
                f"per prompt): {fix}"
            )
        if side.fp8_would_halve:
            warnings.append(
                f"- {p.placement.region}/{model.name}: both GPUs have FP8; kvCacheDtype: fp8 halves each hand-off"
            )
    return "\n".join([*rows, "", *warnings]) + "\n"


def _lora_adapters(plan: Plan) -> str:
    """Per placement serving LoRA adapters: which, whose, and the GPU memory their slots take from the KV cache."""
    from components.domain.sizing import lora_bytes
    from components.serving.deployment import model_placements

    owners = {lora.name: t.name for t in plan.spec.tenants for lora in t.loras}
    rows = [
        "## LoRA adapters\n",
        "| region | base model | adapters (callers) | --max-loras x --max-lora-rank | slots GiB | KV GiB per replica |",
        "|---|---|---|---|---:|---:|",
    ]
    for region in plan.spec.regions:
        for p in model_placements(plan.spec, region):
            adapters = p.model.served_adapters
            if not adapters:
                continue
            who = ", ".join(f"{a.name} ({owners.get(a.name, 'base model tenants')})" for a in adapters)
            reserved = lora_bytes(p.model.architecture, p.model.max_lora_rank, len(adapters)) / 2**30
            rows.append(
                f"| {region.name} | {p.name} | {who} | {len(adapters)} x {p.model.max_lora_rank} | {reserved:.2f} "
                f"| {p.fit.sizing.kv_cache_gib:g} |"
            )
    return "\n".join(rows) + "\n" if len(rows) > 3 else ""


# Sections of plan.md, in order; capabilities add theirs here.
SECTIONS: tuple[Callable[[Plan], str], ...] = (
    _summary,
    _diagram,
    _capacity,
    _schedulable_gpu_resources,
    _model_storage,
    _model_deployments,
    cost_section,
    _disaggregated_serving,
    _lora_adapters,
    priority_section,
    _federation,
    search_section,
    _bring_up,
    slo_section,
    _admission,
    _counts,
    _scheduling,
    _observability,
    gateway_section,
    _policy,
)


def render_markdown(plan: Plan) -> str:
    return "\n".join(section(plan) for section in SECTIONS)


def summary_tree(plan: Plan):
    """Regions -> cluster -> components -> resource counts, for the terminal."""
    from rich.tree import Tree

    tree = Tree(f"[bold]{plan.environment}[/] ({sum(r.custom for r in plan.resources)} resources)")
    counts = component_counts(plan)
    for region in plan.spec.regions:
        branch = tree.add(
            f"[cyan]{region.name}[/] {region.cloud} {region.region} -> cluster {cluster_name(plan.environment, region)}"
        )
        for label, n in sorted(counts.get(region.name, Counter()).items()):
            branch.add(f"{label}: {n}")
    for label, n in sorted(counts.get(None, Counter()).items()):
        tree.add(f"{label}: {n}")
    return tree
