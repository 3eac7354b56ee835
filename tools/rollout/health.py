"""Is a deployed wave serving? GPU pools' nodes Ready, every model the wave created ready as the kind it is served
as (an InferenceService Ready; an LLMInferenceService's workloads and picker ready: READY_CONDITIONS), the gateway listing those models for a tenant key, Karmada's
members Ready, and the search index's PediaClusters Ready, polled until they pass or the deadline.

A gate waits only for what its own or an earlier wave creates: a region wave for the models its stack deploys, the
global wave for the federated models Karmada propagates (and every member joined); the host's own membership in
the host's wave, where it joins.

The cluster and HTTP clients are small protocols: the real ones wrap the `kubernetes` client and `requests`,
tests inject fakes and a clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import urlparse

from components.federation.manifests import CLUSTER_API as KARMADA_CLUSTER_API
from components.federation.search import PEDIA_CLUSTER_API
from components.k8s.topology import pool_selector
from components.serving import llm_inference_service as llmisvc
from components.serving.deployment import ISVC_API_VERSION, model_placements
from platform_catalog.names import SERVING_NAMESPACE

if TYPE_CHECKING:
    from components.config.environment import EnvironmentSpec

POLL_SECONDS = 15.0
INFERENCE_SERVICE = "InferenceService"
# What KServe serves a model as: aggregated (InferenceService) or disaggregated (LLMInferenceService).
SERVING_APIS = {INFERENCE_SERVICE: ISVC_API_VERSION, llmisvc.KIND: llmisvc.API_VERSION}
# The conditions that say the model serves: an InferenceService's Ready; an LLMInferenceService's workloads and its
# endpoint picker, since its Ready also needs a route of KServe's own, which ours is not
# (KSERVE_LLMISVC_READY_NEEDS_ITS_OWN_ROUTE: it would never be True).
READY_CONDITIONS = {INFERENCE_SERVICE: ("Ready",), llmisvc.KIND: ("WorkloadsReady", "SchedulerWorkloadReady")}


def ready_condition_text(kind: str) -> str:
    return " and ".join(f"{c}=True" for c in READY_CONDITIONS[kind])


@dataclass(frozen=True)
class ServedModel:
    """A model placed in a region, as the object that serves it there and the stack that creates that object."""

    name: str
    kind: str
    api_version: str
    federated: bool  # created in the member by Karmada, from the global stack; else by the region's own stack


def served_models(env: EnvironmentSpec, region: str) -> list[ServedModel]:
    """Every model placed in `region`, in placement order: disaggregated ones as the LLMInferenceService the region's
    stack creates, aggregated ones as an InferenceService (through Karmada when the model is federated)."""
    served = []
    for p in model_placements(env, env.region(region)):
        if p.disaggregation is not None:
            served.append(ServedModel(p.model.name, llmisvc.KIND, llmisvc.API_VERSION, federated=False))
        else:
            federated = p.model.federated and env.federation.enabled
            served.append(ServedModel(p.model.name, INFERENCE_SERVICE, ISVC_API_VERSION, federated))
    return served


class ProbeError(Exception):
    """A cluster or gateway that could not be asked (unreachable, refused): not healthy yet."""


class ClusterProbe(Protocol):
    def pool_nodes(self, label_selector: str) -> tuple[int, int]:
        """(Ready nodes, all nodes) matching the selector."""
        ...

    def serving_ready(self, namespace: str, kind: str) -> Mapping[str, bool]:
        """Name -> the object of that kind (InferenceService, LLMInferenceService) has its READY_CONDITIONS True."""
        ...

    def members_ready(self) -> Mapping[str, bool]:
        """Karmada's API: member cluster name -> its `Cluster` has condition Ready=True."""
        ...

    def indexed_clusters(self) -> Mapping[str, bool]:
        """The federation host: PediaCluster name -> condition Ready=True (Clusterpedia's Validated, SynchroRunning
        and ClusterHealthy all True)."""
        ...


# (url, headers) -> (status, JSON body or None); `requests_get` also takes `ca_pem`, the CA its TLS must verify against.
HttpGet = Callable[..., tuple[int, Any]]


@dataclass(frozen=True)
class Target:
    """What a check waits for, as the bring-up check (tools/rollout/bringup.py) reads it."""

    what: Literal["pool", "serving", "gateway", "members", "search"]
    region: str | None = None  # whose cluster or gateway; None: the Karmada API
    kind: str | None = None  # serving: the object's kind
    names: tuple[str, ...] = ()  # serving: the objects; members: the Clusters; search: the PediaClusters
    hostname: str | None = None  # gateway


@dataclass(frozen=True)
class Check:
    """One health condition: what it waits for, and `probe()` giving (passed, what was seen)."""

    name: str
    waits_for: str
    probe: Callable[[], tuple[bool, str]]
    target: Target | None = None


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    message: str


def models_checks(probe: _Once, region: str, models: list[ServedModel]) -> list[Check]:
    """One check per kind that the region's `models` are ready."""
    checks = []
    for kind in dict.fromkeys(m.kind for m in models):
        names = tuple(m.name for m in models if m.kind == kind)
        checks.append(
            Check(
                f"{region} models" + ("" if kind == INFERENCE_SERVICE else f" ({kind})"),
                f"{kind} {ready_condition_text(kind)}: {', '.join(names)}",
                _models_check(probe, kind, list(names)),
                Target("serving", region, kind, names),
            )
        )
    return checks


def region_checks(
    *,
    env: EnvironmentSpec,
    region: str,
    gateway: Mapping[str, Any] | None,
    api_keys: Callable[[], Mapping[str, str]],
    cluster: Callable[[], ClusterProbe],
    http_get: HttpGet,
) -> list[Check]:
    """The checks of a region's own wave: its GPU pools, the models its stack creates, and the gateway (its entry of
    the `gateways` output; None where the gate cannot reach it) listing them.

    `cluster` and `api_keys` (tenant -> key) are called when a check first runs, so the dry run lists the same
    checks without credentials."""
    probe = _Once(cluster)
    checks = [
        Check(
            f"{region} pool {pool.name}",
            f"every node of GPU pool {pool.name} Ready, at least {pool.min_size}",
            _pool_check(probe, env.label_domain, pool.name, pool.min_size),
            Target("pool", region, names=(pool.name,)),
        )
        for pool in env.region(region).gpu_pools
    ]
    checks += models_checks(probe, region, [m for m in served_models(env, region) if not m.federated])
    checks += gateway_checks(env=env, region=region, gateway=gateway, api_keys=api_keys, http_get=http_get)
    return checks


def gateway_checks(
    *,
    env: EnvironmentSpec,
    region: str,
    gateway: Mapping[str, Any] | None,
    api_keys: Callable[[], Mapping[str, str]],
    http_get: HttpGet,
    federated: bool = False,
) -> list[Check]:
    """`GET <baseUrl>/models` with a tenant's key lists the region's models created by the end of the wave: its own
    (a region wave), or every one once the global wave federated the rest (`federated`)."""
    if gateway is None:
        return []
    created = {m.name for m in served_models(env, region) if federated or not m.federated}
    listed = set(gateway.get("models") or []) & created
    tenant = next((t for t in env.tenants if listed & set(t.models)), None)
    if tenant is None:
        return []
    url = f"{gateway['baseUrl']}/models"
    expected = sorted(listed & set(tenant.models))
    return [
        Check(
            f"{region} gateway" + (" (federated)" if federated else ""),
            f"GET {url} with tenant {tenant.name}'s key lists {', '.join(expected)}",
            _gateway_check(url, tenant.name, expected, api_keys, http_get),
            Target("gateway", region, names=tuple(expected), hostname=urlparse(url).hostname),
        )
    ]


def federated_models_check(*, names: list[str], karmada: Callable[[], ClusterProbe]) -> Check:
    """Federated InferenceServices Ready in Karmada: the status Karmada aggregates over every member it propagated
    them to (the interpreter's AggregateStatus), read through the Karmada API the global stack's runner reaches."""
    return Check(
        "federated models",
        f"{INFERENCE_SERVICE} Ready=True in Karmada (aggregated over its members): {', '.join(names)}",
        _models_check(_Once(karmada), INFERENCE_SERVICE, names),
        Target("serving", None, INFERENCE_SERVICE, tuple(names)),
    )


def federation_checks(
    *, members: list[str], karmada: Callable[[], ClusterProbe], name: str = "karmada members"
) -> list[Check]:
    """Members joined Karmada and Ready: pull members by their agents (KARMADA_MEMBER_READY: the host in its own
    wave, every member in the global wave, each other agent through the allowlist the global stack applies); push
    members by Karmada's own controllers dialling them (KARMADA_PUSH_MEMBER_READY), in the global wave."""
    probe = _Once(karmada)

    def run() -> tuple[bool, str]:
        ready = probe().members_ready()
        waiting = [m for m in members if not ready.get(m)]
        if waiting:
            return False, f"not Ready in Karmada: {', '.join(waiting)} ({len(members) - len(waiting)}/{len(members)})"
        return True, f"{len(members)}/{len(members)} members Ready in Karmada"

    return [
        Check(
            name,
            f"Cluster Ready=True in Karmada: {', '.join(members)}",
            run,
            Target("members", None, names=tuple(members)),
        )
    ]


def search_checks(
    *, host_region: str, host_cluster: str, members: list[str], host: Callable[[], ClusterProbe]
) -> list[Check]:
    """The search index on the federation host indexing `members` (the PediaClusters the wave created): each one
    Ready (catalog.bringup CLUSTERPEDIA_MEMBER_HEALTHY: one the host's synchro manager cannot reach stays Ready=False,
    retried, and nothing else would say so)."""
    if not members:
        return []
    probe = _Once(host)

    def run() -> tuple[bool, str]:
        ready = probe().indexed_clusters()
        waiting = [m for m in members if not ready.get(m)]
        if waiting:
            return (
                False,
                f"not Ready on {host_cluster}: {', '.join(waiting)} ({len(members) - len(waiting)}/{len(members)})",
            )
        return True, f"{len(members)}/{len(members)} PediaClusters Ready on {host_cluster}"

    return [
        Check(
            "search index",
            f"PediaCluster Ready=True on {host_cluster}: {', '.join(members)}",
            run,
            Target("search", host_region, names=tuple(members)),
        )
    ]


class _Once:
    """The cluster client, made on first use and kept."""

    def __init__(self, make: Callable[[], ClusterProbe]):
        self._make = make
        self._probe: ClusterProbe | None = None

    def __call__(self) -> ClusterProbe:
        if self._probe is None:
            self._probe = self._make()
        return self._probe


def _pool_check(probe: _Once, domain: str, pool: str, min_size: int) -> Callable[[], tuple[bool, str]]:
    selector = ",".join(f"{k}={v}" for k, v in pool_selector(domain, pool).items())

    def run() -> tuple[bool, str]:
        ready, total = probe().pool_nodes(selector)
        return ready == total and ready >= min_size, f"{ready}/{total} nodes Ready (minSize {min_size})"

    return run


def _models_check(probe: _Once, kind: str, models: list[str]) -> Callable[[], tuple[bool, str]]:
    def run() -> tuple[bool, str]:
        ready = probe().serving_ready(SERVING_NAMESPACE, kind)
        waiting = [m for m in models if not ready.get(m)]
        if waiting:
            return False, f"not Ready: {', '.join(waiting)} ({len(models) - len(waiting)}/{len(models)} Ready)"
        return True, f"{len(models)}/{len(models)} {kind}s Ready"

    return run


def _gateway_check(
    url: str, tenant: str, expected: list[str], api_keys: Callable[[], Mapping[str, str]], http_get: HttpGet
) -> Callable[[], tuple[bool, str]]:
    def run() -> tuple[bool, str]:
        key = api_keys().get(tenant)
        if not key:
            return False, f"no key for tenant {tenant} in the apiKeys output"
        status, body = http_get(url, {"Authorization": f"Bearer {key}"})
        if status != 200:
            return False, f"GET {url} with {tenant}'s key: HTTP {status}"
        listed = {m.get("id") for m in (body or {}).get("data", []) if isinstance(m, dict)}
        missing = [m for m in expected if m not in listed]
        if missing:
            return False, f"GET {url}: {', '.join(missing)} not listed for {tenant}"
        return True, f"GET {url} lists {', '.join(expected)} for {tenant}"

    return run


def wait_healthy(
    checks: list[Check],
    *,
    timeout_seconds: float,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    on_result: Callable[[CheckResult], None] = lambda _: None,
) -> list[CheckResult]:
    """Re-run the checks not yet passed until all pass or the deadline; the last result of each."""
    deadline = clock() + timeout_seconds
    results: dict[str, CheckResult] = {}
    pending = list(checks)
    while True:
        still = []
        for check in pending:
            try:
                ok, message = check.probe()
            except ProbeError as exc:
                ok, message = False, str(exc)
            results[check.name] = CheckResult(check.name, ok, message)
            if ok:
                on_result(results[check.name])
            else:
                still.append(check)
        pending = still
        if not pending or clock() >= deadline:
            break
        sleep(min(POLL_SECONDS, max(deadline - clock(), 0)))
    for check in pending:
        on_result(results[check.name])
    return [results[c.name] for c in checks]


class KubernetesProbe:
    """A cluster through the `kubernetes` client, from the kubeconfig the stack exports (exec-based auth)."""

    def __init__(self, kubeconfig: Any):
        import yaml
        from kubernetes import client, config

        document = yaml.safe_load(kubeconfig) if isinstance(kubeconfig, str) else kubeconfig
        api = config.new_client_from_config_dict(document)
        self._core = client.CoreV1Api(api)
        self._custom = client.CustomObjectsApi(api)

    def pool_nodes(self, label_selector: str) -> tuple[int, int]:
        nodes = self._ask(lambda: self._core.list_node(label_selector=label_selector).items)
        ready = sum(any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or []) for n in nodes)
        return ready, len(nodes)

    def serving_ready(self, namespace: str, kind: str) -> Mapping[str, bool]:
        group, _, version = SERVING_APIS[kind].partition("/")
        listed = self._ask(
            lambda: self._custom.list_namespaced_custom_object(group, version, namespace, f"{kind.lower()}s")
        )
        return {
            item["metadata"]["name"]: all(
                any(c.get("type") == wanted and c.get("status") == "True" for c in conditions)
                for wanted in READY_CONDITIONS[kind]
            )
            for item in listed.get("items", [])
            for conditions in [(item.get("status") or {}).get("conditions") or []]
        }

    def members_ready(self) -> Mapping[str, bool]:
        return self._ready_by_name(KARMADA_CLUSTER_API, "clusters")

    def indexed_clusters(self) -> Mapping[str, bool]:
        return self._ready_by_name(PEDIA_CLUSTER_API, "pediaclusters")

    def _ready_by_name(self, api_version: str, plural: str) -> Mapping[str, bool]:
        """A cluster-scoped kind's objects: name -> its condition Ready is True."""
        group, _, version = api_version.partition("/")
        listed = self._ask(lambda: self._custom.list_cluster_custom_object(group, version, plural))
        return {
            item["metadata"]["name"]: any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in (item.get("status") or {}).get("conditions") or []
            )
            for item in listed.get("items", [])
        }

    @staticmethod
    def _ask(call: Callable[[], Any]) -> Any:
        """Any refusal (a kind the API does not serve included: 404) is 'not healthy yet', with its reason."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            return call()
        except ApiException as exc:
            raise ProbeError(f"Kubernetes API: {exc.status} {exc.reason}") from None
        except (HTTPError, OSError) as exc:
            raise ProbeError(f"Kubernetes API unreachable: {exc}") from None


def requests_get(url: str, headers: Mapping[str, str], ca_pem: str | None = None) -> tuple[int, Any]:
    """The gateway over HTTPS, verified against the system's CAs or `ca_pem` (the environment's gateway CA); an
    unreachable gateway (or a certificate that does not verify) is a probe error, a non-JSON body is None."""
    import tempfile

    import requests

    with tempfile.NamedTemporaryFile("w", suffix=".pem") as bundle:
        if ca_pem:
            bundle.write(ca_pem)
            bundle.flush()
        try:
            response = requests.get(url, headers=dict(headers), timeout=10, verify=bundle.name if ca_pem else True)
        except requests.RequestException as exc:
            raise ProbeError(f"GET {url}: {type(exc).__name__}") from None
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, None
