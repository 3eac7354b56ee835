"""Is a deployed wave serving? GPU pools' nodes Ready, every model's InferenceService Ready, and the gateway
listing the region's models for a tenant key, polled until they pass or the deadline.

The cluster and HTTP clients are small protocols: the real ones wrap the `kubernetes` client and `requests`,
tests inject fakes and a clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from components.k8s.names import SERVING_NAMESPACE
from components.k8s.topology import pool_selector

if TYPE_CHECKING:
    from components.config.environment import EnvironmentSpec

POLL_SECONDS = 15.0
# What KServe serves a model as: aggregated (InferenceService) or disaggregated (LLMInferenceService).
SERVING_KINDS = (
    ("serving.kserve.io", "v1beta1", "inferenceservices"),
    ("serving.kserve.io", "v1alpha2", "llminferenceservices"),
)


class ProbeError(Exception):
    """A cluster or gateway that could not be asked (unreachable, refused): not healthy yet."""


class ClusterProbe(Protocol):
    def pool_nodes(self, label_selector: str) -> tuple[int, int]:
        """(Ready nodes, all nodes) matching the selector."""
        ...

    def serving_ready(self, namespace: str) -> Mapping[str, bool]:
        """Model name -> its InferenceService (or LLMInferenceService) has condition Ready=True."""
        ...

    def members_ready(self) -> Mapping[str, bool]:
        """Karmada's API: member cluster name -> its `Cluster` has condition Ready=True."""
        ...


HttpGet = Callable[[str, Mapping[str, str]], tuple[int, Any]]  # (url, headers) -> (status, JSON body or None)


@dataclass(frozen=True)
class Check:
    """One health condition: what it waits for, and `probe()` giving (passed, what was seen)."""

    name: str
    waits_for: str
    probe: Callable[[], tuple[bool, str]]


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    message: str


def region_checks(
    *,
    env: EnvironmentSpec,
    region: str,
    gateway: Mapping[str, Any] | None,
    api_keys: Callable[[], Mapping[str, str]],
    cluster: Callable[[], ClusterProbe],
    http_get: HttpGet,
) -> list[Check]:
    """The checks of one region's cluster; `gateway` is the region's entry of the `gateways` output.

    `cluster` and `api_keys` (tenant -> key) are called when a check first runs, so the dry run lists the same
    checks without credentials."""
    probe = _Once(cluster)
    checks = [
        Check(
            f"{region} pool {pool.name}",
            f"every node of GPU pool {pool.name} Ready, at least {pool.min_size}",
            _pool_check(probe, env.label_domain, pool.name, pool.min_size),
        )
        for pool in env.region(region).gpu_pools
    ]
    models = [m.name for m in env.models if any(p.region == region for p in m.placements)]
    if models:
        checks.append(
            Check(
                f"{region} models",
                f"InferenceService Ready=True: {', '.join(models)}",
                _models_check(probe, models),
            )
        )
    if gateway is not None:
        served = set(gateway.get("models") or [])
        tenant = next((t for t in env.tenants if served & set(t.models)), None)
        url = f"{gateway['baseUrl']}/models"
        if tenant is not None:
            expected = sorted(served & set(tenant.models))
            checks.append(
                Check(
                    f"{region} gateway",
                    f"GET {url} with tenant {tenant.name}'s key lists {', '.join(expected)}",
                    _gateway_check(url, tenant.name, expected, api_keys, http_get),
                )
            )
    return checks


def federation_checks(*, members: list[str], karmada: Callable[[], ClusterProbe]) -> list[Check]:
    """The global wave: every member joined Karmada and is Ready (its agent got through the allowlist)."""
    probe = _Once(karmada)

    def run() -> tuple[bool, str]:
        ready = probe().members_ready()
        waiting = [m for m in members if not ready.get(m)]
        if waiting:
            return False, f"not Ready in Karmada: {', '.join(waiting)} ({len(members) - len(waiting)}/{len(members)})"
        return True, f"{len(members)}/{len(members)} members Ready in Karmada"

    return [Check("karmada members", f"Cluster Ready=True in Karmada: {', '.join(members)}", run)]


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


def _models_check(probe: _Once, models: list[str]) -> Callable[[], tuple[bool, str]]:
    def run() -> tuple[bool, str]:
        ready = probe().serving_ready(SERVING_NAMESPACE)
        waiting = [m for m in models if not ready.get(m)]
        if waiting:
            return False, f"not Ready: {', '.join(waiting)} ({len(models) - len(waiting)}/{len(models)} Ready)"
        return True, f"{len(models)}/{len(models)} InferenceServices Ready"

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

    def serving_ready(self, namespace: str) -> Mapping[str, bool]:
        ready: dict[str, bool] = {}
        for group, version, plural in SERVING_KINDS:
            listed = self._ask(
                lambda g=group, v=version, p=plural: self._custom.list_namespaced_custom_object(g, v, namespace, p),
                missing={"items": []},
            )
            for item in listed.get("items", []):
                conditions = (item.get("status") or {}).get("conditions") or []
                ready[item["metadata"]["name"]] = any(
                    c.get("type") == "Ready" and c.get("status") == "True" for c in conditions
                )
        return ready

    def members_ready(self) -> Mapping[str, bool]:
        listed = self._ask(
            lambda: self._custom.list_cluster_custom_object("cluster.karmada.io", "v1alpha1", "clusters")
        )
        return {
            item["metadata"]["name"]: any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in (item.get("status") or {}).get("conditions") or []
            )
            for item in listed.get("items", [])
        }

    @staticmethod
    def _ask(call: Callable[[], Any], missing: Any = None) -> Any:
        """`missing`: the answer when the API has no such kind (404), e.g. KServe's LLMInferenceService."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            return call()
        except ApiException as exc:
            if exc.status == 404 and missing is not None:
                return missing
            raise ProbeError(f"Kubernetes API: {exc.status} {exc.reason}") from None
        except (HTTPError, OSError) as exc:
            raise ProbeError(f"Kubernetes API unreachable: {exc}") from None


def requests_get(url: str, headers: Mapping[str, str]) -> tuple[int, Any]:
    """The gateway over HTTPS; an unreachable gateway is a probe error, a non-JSON body is None."""
    import requests

    try:
        response = requests.get(url, headers=dict(headers), timeout=10)
    except requests.RequestException as exc:
        raise ProbeError(f"GET {url}: {type(exc).__name__}") from None
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, None
