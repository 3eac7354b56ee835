"""The bring-up check: would every wave of an environment complete on empty accounts?

Walks the stacks in rollout order. For every thing a stack waits on (a Helm release that waits, a Pulumi await on
a cluster's API or on a patch, a rollout gate), every runtime precondition it has (RBAC in a remote API, a CRD or
controller, a Secret, a DNS name, network reachability from where the stack is deployed, an object a controller
would otherwise create first) must be created by that stack before it (in its dependency closure), by an earlier
stack of the rollout, or by the cloud. Each precondition is a fact of components/catalog/bringup.py with its
upstream source; a violation names the stack, the waiter, what it needs and where that is created (or that
nothing creates it). Destroying a stack is checked too: it must not open what it protected.

`crd_charts` is the hook for the catalog's "which CRDs each pinned chart installs" (CrdCharts): for a kind the catalog
says some chart installs, an object of it must come after a release of such a chart, with values that install it, on
the cluster that serves it (CUSTOM_RESOURCE_AFTER_ITS_CHARTS_CRDS); for a kind it says nothing of, the object must at
least wait for a release or CRD on its cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from ipaddress import IPv4Network
from typing import Any, Protocol

from components.catalog import bringup as facts
from components.catalog.bringup import BringUpFact
from components.catalog.chart_crds import CHART_CRDS, GroupKind, installed_kinds
from components.catalog.chart_webhooks import CHART_CREATES, admitting
from components.config.environment import EnvironmentSpec
from components.config.stackfile import overlay_config
from components.config.stacks import StackSlice, region_stack_name
from components.domain.stack_split import environment_stacks
from components.domain.waves import rollout_waves
from components.federation.certificates import AGENT_USER_PREFIX
from components.federation.control_plane import EXTERNAL_SERVICE, INTERNAL_ENDPOINT, karmada_name
from components.federation.member import EXECUTION_NAMESPACE_PREFIX, IN_CLUSTER_API
from components.federation.search_index import SYNCHRO_MANAGER
from components.k8s.names import ENVOY_GATEWAY_NAMESPACE, cluster_name
from platform_catalog.names import KARMADA_CLUSTER_NAMESPACE, SERVING_NAMESPACE
from tools.conformance import BUILTIN_GROUPS
from tools.plan.engine import PlannedResource
from tools.plan.model import HELM_RELEASE, Plan, is_kubernetes_object, is_patch
from tools.rollout.bootstrap import NetworkBootstrap, needs_network_bootstrap, network_bootstrap
from tools.rollout.health import Check, Target
from tools.rollout.reach import Location, location_of, reaches_api

# Kinds the Karmada API server serves itself (its aggregated API and the CRDs its control plane installs).
KARMADA_GROUPS = ("cluster.karmada.io", "policy.karmada.io", "work.karmada.io", "config.karmada.io")
# CRD files applied by the provider (their objects are expanded at `up`, not planned one by one).
CRD_FILES = ("kubernetes:yaml/v2:ConfigFile", "kubernetes:yaml/v2:ConfigGroup")
# Annotations that replace pulumi-kubernetes' own await of an object (upstream.PULUMI_SERVICE_AWAITS_SETTLED_ENDPOINTS;
# pulumi/pulumi-kubernetes@v4.32.0:provider/pkg/metadata/overrides.go ReadyCondition, await.go L321-L332).
AWAIT_OVERRIDES = {"pulumi.com/skipAwait", "pulumi.com/waitFor"}
CLOUD_GROUPS = ("networking.gke.io",)  # GKE_MULTI_NETWORK_CRDS
SECURITY_GROUP_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EKS_CLUSTER, GKE_CLUSTER = "aws:eks/cluster:Cluster", "gcp:container/cluster:Cluster"
DNS_RECORDS = ("aws:route53/record:Record", "gcp:dns/recordSet:RecordSet")
DNS_ZONES = ("aws:route53/zone:Zone", "gcp:dns/managedZone:ManagedZone")
LOCAL_COMMAND = "command:local:Command"


class CrdCharts(Protocol):
    """The catalog's "which CRDs each pinned chart installs", as the check asks it."""

    def charts(self, group: str, kind: str) -> frozenset[str]:
        """Every chart that installs `kind` of `group` with some values; empty when the catalog does not say."""
        ...

    def installed(self, chart: str, values: Mapping[str, Any]) -> tuple[frozenset[GroupKind], bool]:
        """The kinds a release of `chart` with `values` installs, and whether it serves them in the Karmada API server
        it runs (else in its own cluster); none for a chart the catalog has not read."""
        ...


class _NoCrdFacts:
    """The catalog says nothing: every custom resource must at least wait for a release or CRD on its cluster."""

    def charts(self, group: str, kind: str) -> frozenset[str]:
        return frozenset()

    def installed(self, chart: str, values: Mapping[str, Any]) -> tuple[frozenset[GroupKind], bool]:
        return frozenset(), False


NO_CRD_FACTS: CrdCharts = _NoCrdFacts()


class _CatalogCrdCharts:
    """`components/catalog/chart_crds.py`: what each pinned chart installs, read from its files at the tag."""

    def charts(self, group: str, kind: str) -> frozenset[str]:
        return frozenset(
            chart
            for chart, crds in CHART_CRDS.items()
            if any(entry.group == group and kind in entry.kinds for entry in crds.installed)
        )

    def installed(self, chart: str, values: Mapping[str, Any]) -> tuple[frozenset[GroupKind], bool]:
        if chart not in CHART_CRDS:
            return frozenset(), False
        return installed_kinds(chart, values), CHART_CRDS[chart].target == "karmada-api"


CATALOG_CRD_CHARTS: CrdCharts = _CatalogCrdCharts()


@dataclass(frozen=True)
class Violation:
    stack: str
    waiter: str
    needs: str
    where: str
    fact: BringUpFact

    def line(self) -> str:
        return f"{self.stack}: {self.waiter} needs {self.needs}; {self.where} [{self.fact.name}]"


@dataclass
class Report:
    violations: list[Violation] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)  # stack -> preconditions checked
    notes: dict[str, list[str]] = field(default_factory=dict)  # stack -> what is not waited for, and why
    bootstraps: dict[str, NetworkBootstrap] = field(default_factory=dict)  # stack -> its network-first step

    def of(self, stack: str) -> list[Violation]:
        return [v for v in self.violations if v.stack == stack]


@dataclass(frozen=True)
class Placed:
    """A planned resource and the stack that creates it."""

    stack: str
    resource: PlannedResource

    @property
    def urn(self) -> str:
        return self.resource.urn

    @property
    def inputs(self) -> dict[str, Any]:
        return self.resource.inputs


class World:
    """The environment's stacks in rollout order, with what each creates and when."""

    def __init__(self, env: EnvironmentSpec, env_name: str, plans: Mapping[str, Plan]):
        self.env, self.env_name, self.plans = env, env_name, plans
        self.slices = {s.name: s for s in environment_stacks(env, env_name)}
        waves = rollout_waves(env, env_name)
        self.waves = [w.name for w in waves]
        self.wave = {stack: i for i, w in enumerate(waves) for stack in w.stacks}
        self.order = {stack: i for i, stack in enumerate(s for w in waves for s in w.stacks)}
        self.karmada = karmada_name(env_name)
        self.region_of_cluster = {cluster_name(env_name, r): r.name for r in env.regions}
        self._closures: dict[str, dict[str, frozenset[str]]] = {}
        self._crd_installers: dict[str | None, list[Placed]] = {}

    # --- what exists, and when --------------------------------------------------------------------------------

    # The checks ask "which resources of this type or kind" once per resource they judge: the stacks' resources are
    # placed and indexed once (a World is built per check, after the plans are final).
    @cached_property
    def _placed(self) -> tuple[Placed, ...]:
        return tuple(
            Placed(stack, resource)
            for stack in sorted(self.plans, key=lambda s: self.order[s])
            for resource in self.plans[stack].resources
        )

    @cached_property
    def _by_type(self) -> dict[str, list[Placed]]:
        index: dict[str, list[Placed]] = {}
        for p in self._placed:
            index.setdefault(p.resource.type, []).append(p)
        return index

    @cached_property
    def _by_kind(self) -> dict[tuple[str | None, bool], list[Placed]]:
        index: dict[tuple[str | None, bool], list[Placed]] = {}
        for p in self._placed:
            if is_kubernetes_object(p.resource):
                index.setdefault((p.inputs.get("kind"), is_patch(p.resource)), []).append(p)
        return index

    def everything(self) -> Iterator[Placed]:
        """Every stack's resources, in rollout order."""
        return iter(self._placed)

    def of_type(self, type_: str) -> list[Placed]:
        """The resources of this type, in rollout order."""
        return self._by_type.get(type_, [])

    def in_install_mode(self, mode: str) -> list[Placed]:
        """The Helm releases whose values set Karmada's `installMode` to `mode` ("host": a control plane; "agent": a
        member's agent), in rollout order."""
        return [p for p in self.of_type(HELM_RELEASE) if (p.inputs.get("values") or {}).get("installMode") == mode]

    def crd_installers(self, cluster: str | None) -> list[Placed]:
        """What may install a CRD on `cluster`: its Helm releases, CRD files and CustomResourceDefinitions."""
        if cluster not in self._crd_installers:
            self._crd_installers[cluster] = [
                p
                for p in self._placed
                if self.cluster_of(p) == cluster
                and (
                    p.resource.type in (HELM_RELEASE, *CRD_FILES) or p.inputs.get("kind") == "CustomResourceDefinition"
                )
            ]
        return self._crd_installers[cluster]

    def objects(self, kind: str, *, cluster: str | None = None, patches: bool = False) -> list[Placed]:
        return [p for p in self._by_kind.get((kind, patches), ()) if cluster is None or self.cluster_of(p) == cluster]

    def cluster_of(self, placed: Placed) -> str | None:
        return self.plans[placed.stack].cluster_of(placed.resource)

    def closure(self, stack: str, urn: str) -> frozenset[str]:
        """Everything `urn` waits for in its stack: explicit and input dependencies and providers, transitively; a
        component stands for all its descendants (as the SDK expands it)."""
        memo = self._closures.setdefault(stack, {})
        if urn in memo:
            return memo[urn]
        plan = self.plans[stack]
        seen: set[str] = set()
        todo = list(self._direct(plan, urn))
        while todo:
            dep = todo.pop()
            if dep in seen or dep not in plan.by_urn:
                continue
            seen.add(dep)
            todo += self._direct(plan, dep)
        memo[urn] = frozenset(seen)
        return memo[urn]

    @staticmethod
    def _direct(plan: Plan, urn: str) -> Iterator[str]:
        resource = plan.by_urn[urn]
        deps = [
            *resource.options.get("dependsOn", ()),
            *(u for us in resource.property_dependencies.values() for u in us),
        ]
        if resource.provider:
            deps.append(resource.provider)
        for dep in deps:
            yield dep
            target = plan.by_urn.get(dep)
            if target is not None and not target.custom:
                yield from (d.urn for d in plan.descendants(dep))

    def before(self, stack: str, urn: str, found: Placed) -> bool:
        """Is `found` created before `urn` of `stack` starts: earlier in the rollout, or within its closure?"""
        if found.stack == stack:
            return found.urn in self.closure(stack, urn)
        return self.order[found.stack] < self.order[stack]

    def by_end_of(self, wave: int, found: Placed) -> bool:
        return self.wave[found.stack] <= wave

    def at(self, stack: str) -> str:
        wave = self.wave[stack]
        return f"{stack} (wave {wave + 1}: {self.waves[wave]})"

    def where(self, found: list[Placed], after: str) -> str:
        if not found:
            return "no stack creates it"
        places = ", ".join(dict.fromkeys(self.at(p.stack) for p in found))
        return f"it is created by {places}, {after}"

    # --- the Karmada API's allowlist ---------------------------------------------------------------------------

    def allowlist(self, applies: Callable[[Placed], bool]) -> list[IPv4Network] | None:
        """The source ranges of the Karmada API's load balancer in effect (the last patch that applies, else the
        host Service's own); None when no such Service is planned."""
        patches = [p for p in self.objects("Service", patches=True) if _named(p, EXTERNAL_SERVICE) and applies(p)]
        services = [p for p in self.objects("Service") if _named(p, EXTERNAL_SERVICE) and applies(p)]
        chosen = patches[-1] if patches else services[-1] if services else None
        if chosen is None:
            return None
        return [IPv4Network(c) for c in chosen.inputs.get("spec", {}).get("loadBalancerSourceRanges") or []]

    def egress_of(self, region: str) -> list[IPv4Network] | None:
        """A region's NAT egress, as its stack exports it (unknown in a single-stack environment)."""
        stack = region_stack_name(self.env_name, region)
        plan = self.plans.get(stack)
        ips = plan.evaluation.referenced.values.get("egressIps") if plan is not None else None
        return [IPv4Network(f"{ip}/32") for ip in ips] if ips else None

    def sources_of(self, where: Location) -> list[IPv4Network] | None:
        if where.deployer.kind == "vpcRunner" and where.region is not None:
            return self.egress_of(where.region)
        return [IPv4Network(c) for c in where.deployer.cidrs]


def check_bring_up(
    env: EnvironmentSpec,
    env_name: str,
    plans: Mapping[str, Plan],
    gates: Callable[[str, Mapping[str, Any]], list[Check]],
    *,
    own_configs: Mapping[str, Mapping[str, str] | None] | None = None,
    environment_config: Mapping[str, str] | None = None,
    catalog_files: Mapping[str, Any] | None = None,
    crd_charts: CrdCharts = NO_CRD_FACTS,
) -> Report:
    """Every stack of `plans` (stack -> its offline plan) in rollout order; `gates` gives a stack's health checks
    from its outputs (tools/rollout/gates.py stack_health); `own_configs`: each stack's own settings file's config
    (None: no file), `environment_config` the environment file's and `catalog_files` the project's models/*.yaml,
    when known."""
    world = World(env, env_name, plans)
    report = Report()
    for stack in sorted(plans, key=lambda s: world.order[s]):
        slice_ = world.slices[stack]
        checker = _StackCheck(world, stack, slice_, report, crd_charts)
        checker.engine_config(own_configs)
        checker.program_config(own_configs, environment_config, catalog_files)
        checker.api_reach()
        checker.releases()
        checker.agent_patches()
        checker.custom_resources()
        checker.webhooks()
        checker.cluster_registrations()
        checker.search_reach()
        checker.controller_namespaces()
        checker.gates(gates(stack, plans[stack].outputs))
        checker.destroy()
    return report


class _StackCheck:
    def __init__(self, world: World, stack: str, slice_: StackSlice, report: Report, crd_charts: CrdCharts):
        self.world, self.stack, self.slice, self.report, self.crd_charts = world, stack, slice_, report, crd_charts
        self.plan = world.plans[stack]
        self.where = location_of(world.env, slice_)
        report.checked.setdefault(stack, 0)

    def need(self, waiter: str, needs: str, ok: bool, where: str, fact: BringUpFact) -> None:
        self.report.checked[self.stack] += 1
        if not ok:
            self.report.violations.append(Violation(self.stack, waiter, needs, where, fact))

    def need_by_end_of(self, wave: int, waiter: str, needs: str, found: list[Placed], fact: BringUpFact) -> None:
        """`need`: one of `found` created by the end of `wave` (a gate's wait runs once its wave is up)."""
        world = self.world
        self.need(
            waiter, needs, any(world.by_end_of(wave, p) for p in found), world.where(found, "after this wave"), fact
        )

    def note(self, text: str) -> None:
        self.report.notes.setdefault(self.stack, []).append(text)

    def mine(self, kind: str | None = None) -> list[Placed]:
        return [
            Placed(self.stack, r)
            for r in self.plan.resources
            if kind is None or (is_kubernetes_object(r) and r.inputs.get("kind") == kind)
        ]

    # --- the engine's own config ------------------------------------------------------------------------------

    def engine_config(self, own_configs: Mapping[str, Mapping[str, str] | None] | None) -> None:
        if own_configs is None or self.slice.kind == "environment":
            return  # a stack of its own: its file is the environment's
        own = own_configs.get(self.stack) or {}
        value = own.get("pulumi:disable-default-providers", "")
        self.need(
            f"`pulumi up` of {self.stack}",
            "`pulumi:disable-default-providers` in its own stack settings",
            '"*"' in value,
            f"Pulumi.{self.stack}.yaml " + ("does not set it" if own_configs.get(self.stack) else "does not exist"),
            facts.PULUMI_ENGINE_READS_ITS_STACKS_CONFIG,
        )

    def program_config(
        self,
        own_configs: Mapping[str, Mapping[str, str] | None] | None,
        environment: Mapping[str, str] | None,
        catalog_files: Mapping[str, Any] | None = None,
    ) -> None:
        """The stack's program reads the environment file with the stack's own keys set into it by path: it must
        accept the result (a secret set with `--path` must not drop the rest of its object)."""
        own = (own_configs or {}).get(self.stack)
        if not own or environment is None or self.slice.kind == "environment":
            return
        from components.checks.loader import load_environment
        from components.config.base import ConfigError
        from stacks.config import namespace_values

        merged = overlay_config(dict(environment), dict(own))
        try:
            load_environment(namespace_values(config=merged), catalog_files=catalog_files)
            problems = []
        except ConfigError as exc:
            problems = [str(issue) for issue in exc.issues]
        self.need(
            f"the program of {self.stack}",
            f"Pulumi.{self.world.env_name}.yaml with Pulumi.{self.stack}.yaml's keys set into it",
            not problems,
            f"it refuses the result: {'; '.join(problems)}",
            facts.STACK_KEYS_SET_BY_PATH,
        )

    # --- a cluster's API, from where the stack runs --------------------------------------------------------------

    def api_reach(self) -> None:
        """Every Kubernetes provider the stack uses waits on its API server being reachable from the runner."""
        providers = {
            r.provider for r in self.plan.resources if r.provider and "pulumi:providers:kubernetes" in r.provider
        }
        for provider in sorted(providers):
            name = provider.rsplit("::", 1)[-1]
            if name == self.world.karmada:
                self._karmada_reach(provider)
            elif name in self.world.region_of_cluster:
                self._cluster_reach(provider, self.world.region_of_cluster[name])

    def _cluster_reach(self, provider: str, region: str) -> None:
        env, where = self.world.env, self.where
        waiter = f"the Kubernetes provider of {cluster_name(self.world.env_name, env.region(region))}"
        if where is None:
            return
        spec = env.region(region)
        fact = (
            facts.EKS_PRIVATE_ENDPOINT_ADMITS_ITS_SECURITY_GROUP
            if spec.cloud == "aws"
            else facts.GKE_PRIVATE_ENDPOINT_AUTHORIZED_NETWORKS
        )
        reached = reaches_api(env, where, region)
        self.need(
            waiter,
            f"its API server reachable from {where.describe()}",
            reached,
            f"the endpoint admits {_api_sources(spec)} only",
            fact,
        )
        if not reached or spec.cluster.existing is not None:
            return
        if where.deployer.kind == "vpcRunner" and where.region == region:
            self._runner_network(waiter, region)
        if spec.cloud == "aws" and where.deployer.kind in ("vpcRunner", "privateLink") and where.region == region:
            sources = [spec.network.cidr] if where.deployer.kind == "vpcRunner" else list(where.deployer.cidrs)
            rules = [p for p in self.world.of_type(SECURITY_GROUP_RULE) if _port(p, 443)]
            for source in sources:
                admitting = [
                    p
                    for p in rules
                    if IPv4Network(source).subnet_of(IPv4Network(p.inputs.get("cidrIpv4", "0.0.0.0/32")))
                ]
                ok = any(self.world.before(self.stack, provider, p) for p in admitting)
                self.need(
                    waiter,
                    f"a rule of the EKS cluster security group admitting {source} on 443",
                    ok,
                    self.world.where(admitting, "after the provider's first use"),
                    facts.EKS_PRIVATE_ENDPOINT_ADMITS_ITS_SECURITY_GROUP,
                )

    def _runner_network(self, waiter: str, region: str) -> None:
        slice_ = self.world.slices.get(region_stack_name(self.world.env_name, region)) or self.slice
        if not needs_network_bootstrap(self.world.env, slice_) or slice_.name != self.stack:
            return
        program = self.plan.bootstrap
        bootstrap = network_bootstrap(self.stack, program, self.plan) if program is not None else None
        if bootstrap is not None:
            self.report.bootstraps[self.stack] = bootstrap
        where = (
            "the stack has no network-first program"
            if bootstrap is None
            else "a targeted `up` of its network-first program fails with 'untargeted create': "
            + "; ".join(f"{_short(urn)} needs its {how} {_short(dep)}" for urn, how, dep in bootstrap.outside)
        )
        self.need(
            waiter,
            f"a runner inside {region}'s network, which this stack creates first on its own",
            bootstrap is not None and not bootstrap.outside,
            where,
            facts.PULUMI_TARGETED_CREATE,
        )
        if bootstrap is not None and bootstrap.differs:
            self.need(
                waiter,
                f"the network-first step to create {region}'s network as the full program declares it",
                False,
                "the full program registers otherwise: " + ", ".join(_short(u) for u in bootstrap.differs),
                facts.PULUMI_TARGETED_CREATE,
            )

    def _karmada_reach(self, provider: str) -> None:
        if self.where is None:
            return
        self._load_balancer_answers(provider, self.where)
        sources = self.world.sources_of(self.where)
        allowed = self.world.allowlist(lambda p: self.world.before(self.stack, provider, p))
        if sources is None or allowed is None:
            self.note(f"the Karmada API's allowlist against {self.where.describe()}: not determinable offline")
            return
        self.need(
            "the Kubernetes provider of the Karmada API",
            f"its load balancer to admit {self.where.describe()} ({', '.join(map(str, sources))})",
            _within(sources, allowed),
            f"its allowlist then is {', '.join(map(str, allowed)) or 'empty'}",
            facts.LOAD_BALANCER_OPEN_WITHOUT_SOURCE_RANGES,
        )

    def _load_balancer_answers(self, provider: str, where: Location) -> None:
        """A provider configured through a load balancer this stack creates needs, before it, a wait that reaches the
        API through it: a command whose inputs come from that Service (it runs where `pulumi up` runs)."""
        for service in [s for s in self.mine("Service") if _named(s, EXTERNAL_SERVICE) and not is_patch(s.resource)]:
            closure = self.world.closure(self.stack, provider)
            waits = [
                p
                for p in self.mine()
                if p.resource.type == LOCAL_COMMAND
                and p.urn in closure
                and any(service.urn in urns for urns in p.resource.property_dependencies.values())
            ]
            self.need(
                "the Kubernetes provider of the Karmada API",
                f"its load balancer ({service.resource.name}, created by this stack) answering from "
                f"{where.describe()} before the provider is configured",
                bool(waits),
                "no wait reaching the API through it comes first: the provider's one discovery fails and every "
                "create in Karmada fails with 'cluster is unreachable'",
                facts.PULUMI_KUBERNETES_REACHES_ITS_CLUSTER_AT_CONFIGURE,
            )

    # --- Helm releases that wait ----------------------------------------------------------------------------

    def releases(self) -> None:
        for placed in self.mine():
            release = placed.resource
            if release.type != HELM_RELEASE or release.inputs.get("skipAwait"):
                continue
            values = release.inputs.get("values") or {}
            if release.inputs.get("chart", "").endswith("/karmada") and values.get("installMode") == "agent":
                self._agent_needs(f"Helm release {release.name} (waits for karmada-agent)", placed, values["agent"])
            elif release.inputs.get("chart", "").endswith("/karmada") and values.get("installMode") == "host":
                self._hook_images(placed, values)

    def agent_patches(self) -> None:
        """A patch of the agent's Deployment that waits for its rollout waits for the agent, as its release would."""
        for placed in self.mine("Deployment"):
            meta = placed.inputs.get("metadata") or {}
            if not is_patch(placed.resource) or meta.get("name") != "karmada-agent":
                continue
            if (meta.get("annotations") or {}).get("pulumi.com/skipAwait") == "true":
                continue
            cluster = self.world.cluster_of(placed)
            agent = {"clusterName": cluster, "kubeconfig": {"server": self._agent_server(cluster)}}
            self._agent_needs(f"{placed.resource.name} (awaits the agent's rollout)", placed, agent)

    def _agent_server(self, cluster: str | None) -> str | None:
        for p in self.world.in_install_mode("agent"):
            if self.world.cluster_of(p) == cluster:
                return p.inputs["values"]["agent"]["kubeconfig"].get("server")
        return None

    def _agent_needs(self, waiter: str, placed: Placed, agent: Mapping[str, Any]) -> None:
        world, member = self.world, agent["clusterName"]
        bindings = _agent_bindings(world, member)
        self.need(
            waiter,
            f"RBAC for {AGENT_USER_PREFIX}{member} in the Karmada API",
            any(world.before(self.stack, placed.urn, b) for b in bindings),
            world.where(bindings, f"after {self.stack}'s wait"),
            facts.KARMADA_AGENT_STARTS,
        )
        clusters = [c for c in world.objects("Cluster", cluster=world.karmada) if _named(c, member)]
        if clusters:
            self.need(
                waiter,
                f"its Cluster {member} created by the program first",
                any(world.before(self.stack, placed.urn, c) for c in clusters),
                world.where(clusters, f"after {self.stack}'s wait (the agent creates it, the program's create fails)"),
                facts.PULUMI_CREATE_IS_CLIENT_SIDE,
            )
        self._agent_reach(waiter, member, agent, lambda p: world.before(self.stack, placed.urn, p))

    def _agent_reach(
        self, waiter: str, member: str, agent: Mapping[str, Any], applies: Callable[[Placed], bool]
    ) -> None:
        world = self.world
        server = (agent.get("kubeconfig") or {}).get("server")
        if server == INTERNAL_ENDPOINT:
            planes = [p for p in world.in_install_mode("host") if world.cluster_of(p) == member]
            self.need(
                waiter,
                f"the Karmada API server in {member} itself",
                any(applies(p) for p in planes),
                world.where(planes, "after it"),
                facts.KARMADA_AGENT_STARTS,
            )
            return
        region = world.region_of_cluster.get(member)
        egress = world.egress_of(region) if region else None
        allowed = world.allowlist(applies)
        if egress is None or allowed is None:
            self.note(f"{member}'s agent against the Karmada allowlist: not determinable offline")
            return
        patches = [p for p in world.objects("Service", patches=True) if _named(p, EXTERNAL_SERVICE)]
        self.need(
            waiter,
            f"the Karmada API's load balancer to admit {member}'s NAT egress ({', '.join(map(str, egress))})",
            _within(egress, allowed),
            f"its allowlist then is {', '.join(map(str, allowed)) or 'empty'}"
            + (
                f"; the allowlist with it is applied by {', '.join(world.at(p.stack) for p in patches)}"
                if patches
                else ""
            ),
            facts.KARMADA_AGENT_STARTS,
        )

    def _hook_images(self, placed: Placed, values: Mapping[str, Any]) -> None:
        for key in ("kubectl", "cfssl"):
            image = (values.get(key) or {}).get("image") or {}
            ref = f"{image.get('registry')}/{image.get('repository')}"
            has_shell, fact = facts.SCRIPT_IMAGES.get(ref, (False, facts.KARMADA_HOST_HOOKS_NEED_BASH))
            self.need(
                f"Helm release {placed.resource.name} (waits for its static-resource Job and `wait` init containers)",
                f"/bin/sh, bash and sleep in {key}.image {ref}:{image.get('tag')}",
                has_shell,
                f"{ref} has no shell"
                if fact is not facts.KARMADA_HOST_HOOKS_NEED_BASH
                else f"nothing says {ref} has one",
                fact,
            )

    # --- custom resources and their CRDs ------------------------------------------------------------------------

    def custom_resources(self) -> None:
        world = self.world
        for placed in self.mine():
            resource = placed.resource
            if not is_kubernetes_object(resource) or is_patch(resource):
                continue
            api_version, kind = resource.inputs["apiVersion"], resource.inputs["kind"]
            group = api_version.rpartition("/")[0]
            if group in BUILTIN_GROUPS:
                continue
            cluster = world.cluster_of(placed)
            waiter = f"{kind} {(resource.inputs.get('metadata') or {}).get('name')} on {cluster}"
            charts = self.crd_charts.charts(group, kind)
            if charts:
                installing = [p for p in world.of_type(HELM_RELEASE) if self._installs(p, (group, kind), cluster)]
                names = " or ".join(sorted(charts))
                self.need(
                    waiter,
                    f"the {kind} CRD on {cluster}, installed by a release of {names}",
                    any(world.before(self.stack, placed.urn, p) for p in installing),
                    world.where(installing, "after it")
                    if installing
                    else f"no release of {names} installs it there with its values",
                    facts.CUSTOM_RESOURCE_AFTER_ITS_CHARTS_CRDS,
                )
                continue
            if cluster == world.karmada and group in KARMADA_GROUPS:
                ok = any(world.before(self.stack, placed.urn, p) for p in world.in_install_mode("host"))
            elif group in CLOUD_GROUPS:
                # Served by the cloud once the cluster has the feature (GKE multi-networking).
                clusters = world.of_type(GKE_CLUSTER)
                ok = any(
                    world.before(self.stack, placed.urn, p) and p.inputs.get("enableMultiNetworking") for p in clusters
                )
                self.need(
                    waiter,
                    f"the {kind} CRD GKE serves with multi-networking on",
                    ok,
                    "no cluster with enableMultiNetworking comes first",
                    facts.GKE_MULTI_NETWORK_CRDS,
                )
                continue
            else:
                ok = any(world.before(self.stack, placed.urn, p) for p in world.crd_installers(cluster))
            self.need(
                waiter,
                f"the {kind} CRD on {cluster}",
                ok,
                "nothing installing it comes first",
                facts.HELM_RELEASE_WAITS,
            )

    def _installs(self, placed: Placed, kind: GroupKind, cluster: str | None) -> bool:
        """Is `placed` a Helm release that installs `kind` (with its values) where `cluster` serves it?"""
        if placed.resource.type != HELM_RELEASE:
            return False
        kinds, in_karmada = self.crd_charts.installed(_chart(placed), placed.inputs.get("values") or {})
        serves = self.world.karmada if in_karmada else self.world.cluster_of(placed)
        return kind in kinds and serves == cluster

    # --- objects a release's webhook admits ------------------------------------------------------------------

    def webhooks(self) -> None:
        """What a release's webhook admits, created by this stack (an object, or a later release's templates),
        waits for the webhook's Service to serve when the release is installed by the same stack."""
        for placed in self.mine():
            resource = placed.resource
            cluster = self.world.cluster_of(placed)
            if resource.type == HELM_RELEASE:
                kinds, waiter = CHART_CREATES.get(_chart(placed), frozenset()), f"Helm release {resource.name}"
            elif is_kubernetes_object(resource) and not is_patch(resource):
                kind = resource.inputs["kind"]
                kinds = frozenset({(resource.inputs["apiVersion"].rpartition("/")[0], kind)})
                waiter = f"{kind} {_meta_name(placed)} on {cluster}"
            else:
                continue
            for group, kind in sorted(kinds):
                for chart, hook in admitting(group, kind).items():
                    if hook.awaited_by_release:
                        continue
                    for release in self._releases_of(chart, cluster, hook.admits_in):
                        self._webhook_serves(
                            waiter, placed, kind, chart, hook.service_of(release.inputs["name"]), release
                        )

    def _releases_of(self, chart: str, cluster: str | None, admits_in: str) -> list[Placed]:
        """This stack's releases of `chart` whose webhook admits objects of `cluster` (an earlier wave's webhook has
        long been serving): on that cluster, or, for Karmada's, running the Karmada API (host mode)."""
        return [
            p
            for p in self.mine()
            if p.resource.type == HELM_RELEASE
            and _chart(p) == chart
            and (
                self.world.cluster_of(p) == cluster
                if admits_in == "cluster"
                else cluster == self.world.karmada and (p.inputs.get("values") or {}).get("installMode") == "host"
            )
        ]

    def _webhook_serves(
        self, waiter: str, placed: Placed, kind: str, chart: str, service: str, release: Placed
    ) -> None:
        """A wait that holds: a Service or ServicePatch of the webhook's name, after the release (whose wait saw the
        pods Ready), awaited by the provider's own Service await (no skipAwait, no waitFor that replaces it)."""
        namespace = release.inputs.get("namespace")
        awaits = [
            p
            for patches in (False, True)
            for p in self.world.objects("Service", cluster=self.world.cluster_of(release), patches=patches)
            if _named(p, service)
            and _namespace(p) == namespace
            and not AWAIT_OVERRIDES & set((p.inputs.get("metadata") or {}).get("annotations") or {})
            and self.world.before(p.stack, p.urn, release)
        ]
        where = (
            f"its release {release.resource.name} does not wait for its pods (skipAwait)"
            if release.inputs.get("skipAwait")
            else self.world.where(awaits, "after it")
            if awaits
            else "nothing waits for it to serve after its release"
        )
        self.need(
            waiter,
            f"the {chart} webhook's Service {namespace}/{service} serving (it admits {kind})",
            not release.inputs.get("skipAwait") and any(self.world.before(self.stack, placed.urn, p) for p in awaits),
            where,
            facts.WEBHOOK_SERVES_BEFORE_WHAT_IT_ADMITS,
        )

    # --- objects an agent would otherwise create first --------------------------------------------------------

    def cluster_registrations(self) -> None:
        world = self.world
        for placed in self.mine("Cluster"):
            if world.cluster_of(placed) != world.karmada or (placed.inputs.get("spec") or {}).get("syncMode") != "Pull":
                continue
            member = placed.inputs["metadata"]["name"]
            creators = [b for b in _agent_bindings(world, member, verb="create")]
            early = [b for b in creators if not (b.stack == self.stack and placed.urn in world.closure(b.stack, b.urn))]
            early = [b for b in early if world.order[b.stack] <= world.order[self.stack]]
            self.need(
                f"the create of Cluster {member} in Karmada",
                f"no agent of {member} able to create it first",
                not early,
                f"its agent may create it first: RBAC with `create` on clusters by {', '.join(world.at(b.stack) for b in early)}",
                facts.PULUMI_CREATE_IS_CLIENT_SIDE,
            )

    # --- objects a controller creates when another appears ------------------------------------------------------

    def controller_namespaces(self) -> None:
        """Karmada's cluster controller creates Namespace `karmada-es-<cluster>` when Cluster <cluster> appears: the
        program's own create of it must come before every create of that Cluster."""
        world = self.world
        for placed in self.mine("Namespace"):
            name = _meta_name(placed) or ""
            if world.cluster_of(placed) != world.karmada or not name.startswith(EXECUTION_NAMESPACE_PREFIX):
                continue
            member = name.removeprefix(EXECUTION_NAMESPACE_PREFIX)
            clusters = [c for c in world.objects("Cluster", cluster=world.karmada) if _named(c, member)]
            early = [c for c in clusters if not world.before(c.stack, c.urn, placed)]
            self.need(
                f"the create of Namespace {name} in Karmada",
                f"its Cluster {member} created after it",
                not early,
                "the cluster controller creates the namespace once the Cluster exists, and the Cluster is created by "
                + ", ".join(world.at(c.stack) for c in early)
                + " without waiting for it",
                facts.KARMADA_CREATES_THE_EXECUTION_NAMESPACE,
            )

    # --- the wave's gates ----------------------------------------------------------------------------------------

    def gates(self, checks: list[Check]) -> None:
        world = self.world
        wave = world.wave[self.stack]  # gates run once every stack of the wave is up
        self._unreached_gateways({c.target.region for c in checks if c.target and c.target.what == "gateway"})
        for check in checks:
            target = check.target
            if target is None:
                continue
            waiter = f"gate health: {check.name}"
            if target.what == "serving":
                self._gate_serving(waiter, wave, target)
            elif target.what == "gateway":
                self._gate_gateway(waiter, wave, target)
            elif target.what == "members":
                for member in target.names:
                    self._gate_member(waiter, wave, member)
            elif target.what == "search":
                self._gate_search(waiter, wave, target)

    def _unreached_gateways(self, waited: set[str | None]) -> None:
        """A gateway the gate's runner cannot reach is not waited for (the gate would never pass): say so."""
        world, where = self.world, self.where
        if where is None:
            return
        if self.slice.kind == "global":
            federated = {p.region for m in world.env.models if m.federated for p in m.placements}
            regions = (
                sorted(r for r in federated if r in world.region_of_cluster.values())
                if world.env.federation.enabled
                else []
            )
            gateways = {
                r: (world.plans[region_stack_name(world.env_name, r)].outputs.get("gateways") or {}).get(r)
                for r in regions
                if region_stack_name(world.env_name, r) in world.plans
            }
        else:
            gateways = dict(self.plan.outputs.get("gateways") or {})
        for region, gateway in sorted(gateways.items()):
            if gateway is None or region in waited:
                continue
            exposure = world.env.region(region).gateway.exposure
            reach = f"reachable only from inside {region}'s network" if exposure == "internal" else "its allowedCidrs"
            self.note(f"{region}'s gateway ({exposure}, {reach}) from {where.describe()}")

    def _gate_serving(self, waiter: str, wave: int, target: Target) -> None:
        world = self.world
        cluster = (
            world.karmada if target.region is None else cluster_name(world.env_name, world.env.region(target.region))
        )
        for name in target.names:
            found = [
                p
                for p in world.objects(target.kind or "", cluster=cluster)
                if _named(p, name) and (p.inputs.get("metadata") or {}).get("namespace") == SERVING_NAMESPACE
            ]
            self.need_by_end_of(
                wave, waiter, f"{target.kind} {name} in {cluster}", found, facts.KSERVE_READY_ON_THE_SERVING_OBJECT
            )
            multi_node = [p for p in found if ((p.inputs.get("spec") or {}).get("predictor") or {}).get("workerSpec")]
            if target.kind == "InferenceService" and multi_node:
                self.need(
                    waiter,
                    f"InferenceService {name}'s multi-node workers kept by KServe",
                    False,
                    "KServe v0.20.0 deletes a workerSpec replica's worker Deployment on every reconcile "
                    "(kserve/kserve#6113): size the model to one node per replica (a larger GPU machine, a "
                    "quantization, a shorter maxModelLen) until the KServe pin has the fix",
                    facts.KSERVE_DELETES_MULTI_NODE_WORKERS,
                )

    def _gate_gateway(self, waiter: str, wave: int, target: Target) -> None:
        world = self.world
        assert target.region is not None and target.hostname is not None
        cluster = cluster_name(world.env_name, world.env.region(target.region))
        private = [p for p in world.everything() if _zone_serves(p, target.hostname)]
        internal = world.env.region(target.region).gateway.exposure == "internal"
        zones = [_zone_name(p) for p in private] if internal and private else parent_zones(target.hostname)
        publishers = [p for p in world.everything() if _publishes(p, target.hostname, cluster, world, zones)]
        controllers = [p for p in world.everything() if _external_dns_args(p, cluster, world) is not None]
        if publishers or not controllers:
            self.need_by_end_of(
                wave, waiter, f"a DNS record for {target.hostname}", publishers, facts.DNS_NAME_PUBLISHED
            )
        else:
            self.need(
                waiter,
                f"a DNS record for {target.hostname}",
                False,
                f"ExternalDNS on {cluster} ({', '.join(dict.fromkeys(world.at(p.stack) for p in controllers))}) keeps "
                f"no zone the name may be in ({', '.join(zones)}): its filters drop them",
                facts.EXTERNAL_DNS_KEEPS_A_ZONE,
            )
        if world.env.region(target.region).gateway.exposure == "internal" and any(
            p.resource.type not in DNS_RECORDS for p in publishers
        ):
            # ExternalDNS writes an internal gateway's name into a private zone of the region's network.
            private_zones = [p for p in world.everything() if _zone_serves(p, target.hostname)]
            self.need_by_end_of(
                wave,
                waiter,
                f"a private zone serving {target.hostname} in {target.region}'s network",
                private_zones,
                facts.DNS_NAME_PUBLISHED,
            )
        gateways = [p for p in world.objects("Gateway", cluster=cluster) if _namespace(p) == ENVOY_GATEWAY_NAMESPACE]
        for secret in sorted({s for g in gateways for s in _listener_secrets(g, target.hostname)}):
            makers = [
                p
                for p in [*world.objects("Secret", cluster=cluster), *world.objects("Certificate", cluster=cluster)]
                if _namespace(p) == ENVOY_GATEWAY_NAMESPACE
                and (
                    _named(p, secret)
                    if p.inputs["kind"] == "Secret"
                    else (p.inputs.get("spec") or {}).get("secretName") == secret
                )
            ]
            self.need_by_end_of(
                wave,
                waiter,
                f"Secret {ENVOY_GATEWAY_NAMESPACE}/{secret}, the HTTPS listener's certificate",
                makers,
                facts.ENVOY_GATEWAY_LISTENER_NEEDS_ITS_SECRET,
            )
            for certificate in [p for p in makers if p.inputs["kind"] == "Certificate"]:
                self._issuer(waiter, wave, cluster, certificate)

    def _issuer(self, waiter: str, wave: int, cluster: str, certificate: Placed) -> None:
        world = self.world
        ref = (certificate.inputs.get("spec") or {}).get("issuerRef") or {}
        issuers = [
            p for p in world.objects(ref.get("kind", "Issuer"), cluster=cluster) if _named(p, ref.get("name", ""))
        ]
        self.need_by_end_of(
            wave,
            waiter,
            f"{ref.get('kind')} {ref.get('name')} to sign its certificate",
            issuers,
            facts.CERT_MANAGER_ISSUES_INTO_A_SECRET,
        )
        for issuer in issuers:
            ca = ((issuer.inputs.get("spec") or {}).get("ca") or {}).get("secretName")
            if ca is None:
                continue
            keys = [
                p for p in world.objects("Secret", cluster=cluster) if _named(p, ca) and _namespace(p) == "cert-manager"
            ]
            self.need_by_end_of(
                wave,
                waiter,
                f"Secret cert-manager/{ca}, the CA key pair of {ref.get('name')}",
                keys,
                facts.CERT_MANAGER_ISSUES_INTO_A_SECRET,
            )

    def _gate_search(self, waiter: str, wave: int, target: Target) -> None:
        """CLUSTERPEDIA_MEMBER_HEALTHY: each PediaCluster on the host, and the synchro manager that makes it Ready."""
        world = self.world
        assert target.region is not None
        host = cluster_name(world.env_name, world.env.region(target.region))
        managers = [p for p in world.objects("Deployment", cluster=host) if _named(p, SYNCHRO_MANAGER)]
        self.need_by_end_of(
            wave, waiter, f"Clusterpedia's {SYNCHRO_MANAGER} on {host}", managers, facts.CLUSTERPEDIA_MEMBER_HEALTHY
        )
        for member in target.names:
            found = [p for p in world.objects("PediaCluster", cluster=host) if _named(p, member)]
            self.need_by_end_of(
                wave, waiter, f"PediaCluster {member} on {host}", found, facts.CLUSTERPEDIA_MEMBER_HEALTHY
            )

    def _gate_member(self, waiter: str, wave: int, member: str) -> None:
        world = self.world
        if world.env.federation.member_mode == "push":
            self._gate_push_member(waiter, wave, member)
            return
        bindings = _agent_bindings(world, member)
        self.need_by_end_of(
            wave,
            waiter,
            f"RBAC for {AGENT_USER_PREFIX}{member} in the Karmada API",
            bindings,
            facts.KARMADA_MEMBER_READY,
        )
        agents = [p for p in world.in_install_mode("agent") if world.cluster_of(p) == member]
        self.need_by_end_of(wave, waiter, f"karmada-agent on {member}", agents, facts.KARMADA_MEMBER_READY)
        for agent in [a for a in agents if world.by_end_of(wave, a)][:1]:
            self._agent_reach(waiter, member, agent.inputs["values"]["agent"], lambda p: world.by_end_of(wave, p))

    def _gate_push_member(self, waiter: str, wave: int, member: str) -> None:
        """KARMADA_PUSH_MEMBER_READY: the Cluster and its Secret in Karmada, the control plane that dials the member,
        the member's token, and its API server reachable from the host's pods."""
        world = self.world

        fact = facts.KARMADA_PUSH_MEMBER_READY

        def created(what: str, found: list[Placed]) -> None:
            self.need_by_end_of(wave, waiter, what, found, fact)

        clusters = [c for c in world.objects("Cluster", cluster=world.karmada) if _named(c, member)]
        created(f"Cluster {member} in Karmada", clusters)
        spec = (clusters[-1].inputs.get("spec") or {}) if clusters else {}
        if clusters:
            missing = [f for f in ("apiEndpoint", "secretRef") if not spec.get(f)]
            self.need(
                waiter,
                f"Cluster {member} with syncMode Push, an apiEndpoint and a secretRef",
                spec.get("syncMode") == "Push" and not missing,
                f"its spec has syncMode {spec.get('syncMode')}" + (f", no {', no '.join(missing)}" if missing else ""),
                fact,
            )
        if clusters and world.region_of_cluster.get(member) == world.env.federation.host:
            self.need(
                waiter,
                f"Cluster {member} (the host) named by its in-cluster API, which the control plane's pods reach",
                spec.get("apiEndpoint") == IN_CLUSTER_API,
                f"its apiEndpoint is {spec.get('apiEndpoint')}, which they may reach only through the NAT",
                fact,
            )
        ref = spec.get("secretRef") or {}
        if ref:
            secrets = [
                s
                for s in world.objects("Secret", cluster=world.karmada)
                if _named(s, ref.get("name", "")) and _namespace(s) == ref.get("namespace")
            ]
            created(f"Secret {ref.get('namespace')}/{ref.get('name')} in Karmada (token, caBundle)", secrets)
        created(
            "karmada-controller-manager (the control plane's release), which dials the member",
            world.in_install_mode("host"),
        )
        tokens = [
            t
            for t in world.objects("Secret", cluster=member)
            if t.inputs.get("type") == "kubernetes.io/service-account-token"
            and _namespace(t) == KARMADA_CLUSTER_NAMESPACE
        ]
        created(f"the service-account token on {member} that Karmada's Secret carries", tokens)
        for token in [t for t in tokens if world.by_end_of(wave, t)][:1]:
            self._push_account(waiter, wave, member, token)
        self._reached_from_the_host(waiter, member, "the Karmada controllers", "push", fact)

    def _push_account(self, waiter: str, wave: int, member: str, token: Placed) -> None:
        """The token's service account on the member, bound to what Karmada does with it: list and watch nodes and
        pods (its status controller's resource modeling, on by default, before it writes Ready) and write whatever
        kind it propagates (the execution controller): every resource and verb, as karmadactl join grants."""
        world = self.world
        account = ((token.inputs.get("metadata") or {}).get("annotations") or {}).get(
            "kubernetes.io/service-account.name", ""
        )
        accounts = [
            a
            for a in world.objects("ServiceAccount", cluster=member)
            if _named(a, account) and _namespace(a) == KARMADA_CLUSTER_NAMESPACE
        ]
        self.need_by_end_of(
            wave,
            waiter,
            f"ServiceAccount {KARMADA_CLUSTER_NAMESPACE}/{account} on {member}, whose token Karmada's Secret carries",
            accounts,
            facts.KARMADA_PUSH_MEMBER_READY,
        )
        subject = {"kind": "ServiceAccount", "name": account, "namespace": KARMADA_CLUSTER_NAMESPACE}
        roles = {_meta_name(r): r for r in world.objects("ClusterRole", cluster=member)}
        granted = [
            b
            for b in world.objects("ClusterRoleBinding", cluster=member)
            if subject in (b.inputs.get("subjects") or [])
            and world.by_end_of(wave, b)
            and (role := roles.get((b.inputs.get("roleRef") or {}).get("name", ""))) is not None
            and world.by_end_of(wave, role)
            and _grants_everything(role)
        ]
        self.need(
            waiter,
            f"RBAC on {member} for {KARMADA_CLUSTER_NAMESPACE}/{account}: every verb on every resource (Karmada reads "
            "its nodes and pods, and writes what it propagates)",
            bool(granted),
            "no ClusterRoleBinding of this wave or earlier binds it to such a ClusterRole",
            facts.KARMADA_PUSH_MEMBER_READY,
        )

    def _reached_from_the_host(self, waiter: str, member: str, who: str, topic: str, fact: BringUpFact) -> None:
        """Pods on the host (`who`) dial the member's API server: the host itself from inside its own network; any
        other member through the host's NAT egress, which the public endpoint the program renders for it must admit
        (both from the host stack's `egressIps`: stacks/environment.py dialled_by_the_host). A member the team brings
        (an existing cluster) keeps its own endpoint, which an offline plan cannot see: a note. In a single stack the
        program adds the host's egress from the same evaluation, and no output holds it to compare: nothing to ask."""
        world, host = self.world, self.world.env.federation.host
        region = world.region_of_cluster.get(member)
        if region is None or host is None or region == host:
            return
        egress = world.egress_of(host)
        host_stack = region_stack_name(world.env_name, host) in world.plans
        admitted = _public_endpoint_sources(world, member)
        if admitted is None:
            addresses = ", ".join(map(str, egress)) if egress else f"the `egressIps` output of {host}'s stack"
            self.note(
                f"{topic}: {member} is a cluster the program does not change: its public endpoint must admit "
                f"{host}'s NAT egress ({addresses}), from which pods on {host} ({who}) dial its API server [{fact.name}]"
            )
            return
        if egress is None and not host_stack:
            return
        self.need(
            waiter,
            f"{member}'s API server reachable from {who} on {host} (its NAT egress "
            f"{', '.join(map(str, egress or [])) or 'none: its stack exports no egressIps'})",
            egress is not None and _within(egress, admitted),
            f"its public endpoint admits {', '.join(map(str, admitted)) or 'nothing'} only",
            fact,
        )

    # --- what the host's search dials --------------------------------------------------------------------------

    def search_reach(self) -> None:
        """CLUSTERPEDIA_MEMBER_HEALTHY: each PediaCluster this stack declares on the host names a member whose API
        server Clusterpedia's synchro manager reaches from the host."""
        for placed in self.mine("PediaCluster"):
            member = _meta_name(placed) or ""
            self._reached_from_the_host(
                f"PediaCluster {member} (Clusterpedia indexes it)",
                member,
                "Clusterpedia's synchro manager",
                "search",
                facts.CLUSTERPEDIA_MEMBER_HEALTHY,
            )

    # --- destroying the stack --------------------------------------------------------------------------------

    def destroy(self) -> None:
        for placed in self.mine("Service"):
            spec = placed.inputs.get("spec") or {}
            meta = placed.inputs.get("metadata") or {}
            if not is_patch(placed.resource) or "loadBalancerSourceRanges" not in spec:
                continue
            if (meta.get("annotations") or {}).get("pulumi.com/patchForce") != "true":
                continue
            self.need(
                f"`pulumi destroy` of {self.stack} (or a replace of {placed.resource.name})",
                f"{meta.get('name')}'s loadBalancerSourceRanges left in place",
                bool(placed.resource.options.get("retainOnDelete")),
                "deleting the patch removes the field it took over, and the load balancer then admits 0.0.0.0/0",
                facts.PULUMI_PATCH_DELETE_RELINQUISHES,
            )


def _short(urn: str) -> str:
    """`<type> <name>` of a URN (a provider's reference may end in `::<id>`)."""
    parts = urn.split("::")
    return f"{parts[2].rsplit('$', 1)[-1]} {parts[3]}" if len(parts) >= 4 else urn


def _chart(placed: Placed) -> str:
    """A release's chart name (the last part of its reference)."""
    return str(placed.inputs.get("chart", "")).rstrip("/").rpartition("/")[2]


def _named(placed: Placed, name: str) -> bool:
    return (placed.inputs.get("metadata") or {}).get("name") == name


def _namespace(placed: Placed) -> str | None:
    return (placed.inputs.get("metadata") or {}).get("namespace")


def _port(placed: Placed, port: int) -> bool:
    return placed.inputs.get("fromPort", 0) <= port <= placed.inputs.get("toPort", -1)


def _within(sources: Iterable[IPv4Network], allowed: list[IPv4Network]) -> bool:
    sources = list(sources)
    return bool(sources) and all(any(s.subnet_of(a) for a in allowed) for s in sources)


def _public_endpoint_sources(world: World, cluster: str) -> list[IPv4Network] | None:
    """What the public endpoint of a cluster the program creates admits, as rendered (EKS publicAccessCidrs, GKE
    master authorized networks); None for a cluster it does not create."""
    for placed in world.of_type("aws:eks/cluster:Cluster"):
        if placed.inputs.get("name") == cluster:
            return [IPv4Network(c) for c in (placed.inputs.get("vpcConfig") or {}).get("publicAccessCidrs") or []]
    for placed in world.of_type("gcp:container/cluster:Cluster"):
        if placed.inputs.get("name") == cluster:
            blocks = (placed.inputs.get("masterAuthorizedNetworksConfig") or {}).get("cidrBlocks") or []
            return [IPv4Network(b["cidrBlock"]) for b in blocks]
    return None


def _api_sources(spec: Any) -> str:
    public = ", ".join(map(str, spec.api_access.public_cidrs))
    return f"its network{' and ' + public if public else ''}"


def _agent_bindings(world: World, member: str, verb: str | None = None) -> list[Placed]:
    """The RBAC bindings in Karmada of `member`'s agent (those whose role grants `verb` on clusters, if given)."""
    user = AGENT_USER_PREFIX + member
    roles = {_meta_name(p): p for kind in ("ClusterRole", "Role") for p in world.objects(kind, cluster=world.karmada)}
    found = []
    for kind in ("ClusterRoleBinding", "RoleBinding"):
        for binding in world.objects(kind, cluster=world.karmada):
            subjects = binding.inputs.get("subjects") or []
            if not any(s.get("kind") == "User" and s.get("name") == user for s in subjects):
                continue
            if verb is not None:
                role = roles.get((binding.inputs.get("roleRef") or {}).get("name"))
                rules = (role.inputs.get("rules") or []) if role is not None else []
                if not any("clusters" in r.get("resources", []) and verb in r.get("verbs", []) for r in rules):
                    continue
            found.append(binding)
    return found


def _grants_everything(role: Placed) -> bool:
    """A ClusterRole with a rule of every verb on every resource of every API group."""
    return any(
        all("*" in (rule.get(key) or []) for key in ("apiGroups", "resources", "verbs"))
        for rule in role.inputs.get("rules") or []
    )


def _meta_name(placed: Placed) -> str | None:
    return (placed.inputs.get("metadata") or {}).get("name")


def _listener_secrets(gateway: Placed, hostname: str) -> list[str]:
    listeners = (gateway.inputs.get("spec") or {}).get("listeners") or []
    return [
        ref["name"]
        for listener in listeners
        if listener.get("hostname") in (None, hostname) and listener.get("protocol") == "HTTPS"
        for ref in (listener.get("tls") or {}).get("certificateRefs") or []
    ]


def _publishes(placed: Placed, hostname: str, cluster: str, world: World, zones: list[str]) -> bool:
    """A DNS record of `hostname`, or a DNS controller on the gateway's cluster that publishes it into a zone serving
    it: into each of `zones` (every zone it may be, by name), as ExternalDNS chooses zones (EXTERNAL_DNS_KEEPS_A_ZONE)."""
    if placed.resource.type in DNS_RECORDS:
        return (placed.inputs.get("name") or "").rstrip(".") == hostname
    args = _external_dns_args(placed, cluster, world)
    return args is not None and all(external_dns_writes(args, hostname, z) for z in zones)


def _external_dns_args(placed: Placed, cluster: str, world: World) -> list[str] | None:
    """The args of an ExternalDNS Deployment on `cluster` that reads the gateways' routes; None for anything else."""
    if not (
        is_kubernetes_object(placed.resource)
        and placed.inputs.get("kind") == "Deployment"
        and world.cluster_of(placed) == cluster
    ):
        return None
    labels = ((placed.inputs.get("metadata") or {}).get("labels")) or {}
    if labels.get("app.kubernetes.io/name") != "external-dns":
        return None
    args = [a for c in placed.inputs["spec"]["template"]["spec"]["containers"] for a in c.get("args") or []]
    return args if "--source=gateway-httproute" in args else None


def external_dns_writes(args: list[str], hostname: str, zone: str) -> bool:
    """Does ExternalDNS v0.15.1 with `args` publish `hostname` into the zone named `zone` (EXTERNAL_DNS_KEEPS_A_ZONE)?"""
    filters = [a.split("=", 1)[1].lower() for a in args if a.startswith("--domain-filter=")]

    def match(name: str) -> bool:  # endpoint/domain_filter.go L104-125 (no filter: everything)
        return not filters or any(name == f or name.endswith("." + f) for f in filters)

    def parent(name: str) -> bool:  # domain_filter.go L209-228
        return not filters or any(f.endswith("." + name) for f in filters if not f.startswith("."))

    if not match(hostname):
        return False
    if "--provider=aws" in args:
        return match(zone) or ("--aws-zone-match-parent" in args and parent(zone))
    return match(zone)  # google: the domain filter against the zone's own DNS name, no parent matching


def parent_zones(hostname: str) -> list[str]:
    """Every public zone `make preflight` accepts for a name: each parent domain of two labels or more."""
    labels = hostname.split(".")
    return [".".join(labels[i:]) for i in range(1, len(labels) - 1)]


def _zone_name(placed: Placed) -> str:
    name = placed.inputs.get("name") if placed.resource.type.startswith("aws") else placed.inputs.get("dnsName")
    return (name or "").rstrip(".")


def _zone_serves(placed: Placed, hostname: str) -> bool:
    if placed.resource.type not in DNS_ZONES:
        return False
    zone = _zone_name(placed)
    return hostname == zone or hostname.endswith("." + zone)


def stack_own_configs(project_dir: Any, env: EnvironmentSpec, env_name: str) -> dict[str, Mapping[str, str] | None]:
    """Each stack's own settings file's config, as the engine reads it (None when it has no file)."""
    from components.checks.loader import PROJECT
    from components.config.stackfile import read_yaml, stack_config_from_mapping

    found: dict[str, Mapping[str, str] | None] = {}
    for stack in environment_stacks(env, env_name):
        path = project_dir / f"Pulumi.{stack.name}.yaml"
        if stack.kind == "environment" or not path.exists():
            found[stack.name] = None
            continue
        document = read_yaml(path) or {}
        found[stack.name] = stack_config_from_mapping(PROJECT, stack.name, document.get("config") or {}, path).config
    return found
