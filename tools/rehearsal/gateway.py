"""`gateway-translated`: each cluster's gateway objects, as its API server holds them after the wave, through
Envoy Gateway's translator (`egctl x translate --to gateway-api`: every Gateway API and Envoy Gateway object with
the status conditions its controller would write). A condition that says False (not accepted, a reference not
resolved, a listener not programmed) fails the check, named.

The AI Gateway's objects (AIGatewayRoutes and their backends) are not translated: its translator runs only in its
controller and in `aigw run`, which starts Envoy; no served version has a translate command
(envoyproxy/ai-gateway@v1.0.0:cmd/aigw/main.go L36-L42: version, run, healthcheck, download-envoy; v1.1.0, the
pin, is refused by the module proxy). Each cluster that has them gets a check that says so (`ok: null`).

Backends Envoy Gateway hands to its extension server (its config's `extensionManager.backendResources`:
InferencePools, which the AI Gateway's controller resolves) are not Envoy Gateway's to translate, and `egctl x
translate` loads no EnvoyGateway config (envoyproxy/gateway@v1.9.0:internal/cmd/egctl/translate.go L236 passes
nil), so its translator would call them an invalid kind (internal/gatewayapi/validate.go L85-L91). They are left
out of egctl's input; a route's InvalidKind condition is then the extension's to resolve, and each such
reference must name an object that exists."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING, Any

import yaml

from components.k8s.names import cluster_name
from tools.rehearsal import cache
from tools.rehearsal.kube import ApiError, KindNotServed
from tools.rehearsal.report import Check, Limit
from tools.rollout.ci import stack_regions

if TYPE_CHECKING:
    from components.domain.waves import Wave
    from tools.rehearsal.runner import Rehearsal, Target

GATEWAY_KINDS = (
    ("gateway.networking.k8s.io/v1", "GatewayClass"),
    ("gateway.networking.k8s.io/v1", "Gateway"),
    ("gateway.networking.k8s.io/v1", "HTTPRoute"),
    ("gateway.networking.k8s.io/v1", "GRPCRoute"),
    ("gateway.networking.k8s.io/v1beta1", "ReferenceGrant"),
    ("gateway.envoyproxy.io/v1alpha1", "EnvoyProxy"),
    ("gateway.envoyproxy.io/v1alpha1", "ClientTrafficPolicy"),
    ("gateway.envoyproxy.io/v1alpha1", "BackendTrafficPolicy"),
    ("gateway.envoyproxy.io/v1alpha1", "SecurityPolicy"),
    ("gateway.envoyproxy.io/v1alpha1", "EnvoyExtensionPolicy"),
    ("gateway.envoyproxy.io/v1alpha1", "Backend"),
)
# The Envoy Gateway release's own configuration (envoyproxy/gateway@v1.9.0:charts/gateway-helm/templates/
# envoy-gateway-config.yaml L4, L9).
EG_CONFIG = ("envoy-gateway-config", "envoy-gateway.yaml")
INVALID_KIND = "InvalidKind"
# The backend kinds Envoy Gateway itself resolves (internal/gatewayapi/validate.go L74-L91).
EG_BACKEND_KINDS = {("", "Service"), ("multicluster.x-k8s.io", "ServiceImport"), ("gateway.envoyproxy.io", "Backend")}
# The extension backends the platform routes to, by API version (what the check looks each reference up as).
EXTENSION_KINDS = (("inference.networking.k8s.io/v1", "InferencePool"),)
AI_KINDS = (
    ("aigateway.envoyproxy.io/v1beta1", "AIGatewayRoute"),
    ("aigateway.envoyproxy.io/v1beta1", "AIServiceBackend"),
    ("aigateway.envoyproxy.io/v1beta1", "BackendSecurityPolicy"),
)
SUPPORT_KINDS = (("v1", "Secret"), ("v1", "Service"), ("v1", "Namespace"), ("discovery.k8s.io/v1", "EndpointSlice"))
BAD = {"Accepted": "False", "Programmed": "False", "ResolvedRefs": "False", "Conflicted": "True"}


def _live(target: Target, kinds: tuple[tuple[str, str], ...]) -> list[dict[str, Any]]:
    objects = []
    for api_version, kind in kinds:
        try:
            items = target.kube.list(api_version, kind)
        except (KindNotServed, ApiError):
            continue
        for item in items:
            item = {"apiVersion": api_version, "kind": kind, **item}
            meta = item["metadata"]
            item["metadata"] = {k: meta[k] for k in ("name", "namespace", "labels", "annotations", "uid") if k in meta}
            item.pop("status", None)
            objects.append(item)
    return objects


def check_gateways(rehearsal: Rehearsal, wave: Wave) -> None:
    env, env_name = rehearsal.env, rehearsal.env_name
    for stack in wave.stacks:
        for region_name in stack_regions(env, rehearsal.slices[stack]):
            region = env.region(region_name)
            cluster = cluster_name(env_name, region)
            target = rehearsal.targets.get(cluster)
            if target is None:
                continue
            gateways = _live(target, GATEWAY_KINDS[1:2])
            if not gateways:
                continue
            name = f"gateway objects of {cluster}"
            if not rehearsal.has_binary("egctl"):
                rehearsal.check(
                    Check(
                        name,
                        "gateway-translated",
                        False,
                        "egctl is not built: run `make rehearsal-tools`",
                        wave.name,
                        stack,
                        cluster=cluster,
                    )
                )
                continue
            rehearsal.check(_translate(rehearsal, target, wave, stack, name))
            ai = _live(target, AI_KINDS)
            if ai:
                kinds = ", ".join(sorted({o["kind"] for o in ai}))
                rehearsal.limit(
                    Limit(
                        f"AI Gateway objects of {cluster}: {len(ai)} ({kinds})",
                        "gateway-translated",
                        "the AI Gateway's translator runs only in its controller (not built: the module proxy refuses "
                        "github.com/envoyproxy/ai-gateway@v1.1.0) and in `aigw run`, which starts Envoy; no served "
                        "aigw has a translate command",
                        "their v1.1.0 CRDs' schemas, which the API server checked at apply; the Envoy Gateway objects "
                        "they sit on are translated by egctl",
                        wave.name,
                        stack,
                        cluster=cluster,
                    )
                )


def _run(argv: list[str], stdin: str) -> tuple[int, str, str]:
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def _translate(_rehearsal: Rehearsal, target: Target, wave: Wave, stack: str, name: str) -> Check:
    work = target.directory / "gateway"
    work.mkdir(parents=True, exist_ok=True)
    objects = _live(target, GATEWAY_KINDS) + _live(target, SUPPORT_KINDS)
    ai = _live(target, AI_KINDS)
    extension = extension_backends(target)
    source = work / "egctl-input.yaml"
    source.write_text(yaml.safe_dump_all(objects))
    code, out, err = _run(
        [
            str(cache.binary_path("egctl")),
            "x",
            "translate",
            "--from",
            "gateway-api",
            "--to",
            "gateway-api",
            "-f",
            str(source),
        ],
        "",
    )
    (work / "egctl.out.yaml").write_text(out)
    (work / "egctl.err.log").write_text(err)
    if code != 0:
        return Check(
            name,
            "gateway-translated",
            False,
            f"egctl x translate fails: {_last(err)}",
            wave.name,
            stack,
            cluster=target.name,
        )
    problems, counted, resolved_by_extension = [], 0, 0
    for doc in yaml.load_all(out, Loader=yaml.CSafeLoader):
        for obj in _flatten(doc):
            status = obj.get("status") or {}
            refs = _extension_refs(obj, extension)
            if refs:
                missing = [f"{kind} {ns}/{name}" for kind, ns, name in refs if not _exists(target, kind, ns, name)]
                problems += [
                    f"{obj.get('kind')} {obj['metadata'].get('namespace', '')}/{obj['metadata'].get('name')}: "
                    f"backend {m} does not exist"
                    for m in missing
                ]
                resolved_by_extension += len(refs)
            for holder, conditions in _conditions(status):
                counted += 1
                for c in conditions:
                    if refs and c.get("type") == "ResolvedRefs" and c.get("reason") == INVALID_KIND:
                        continue  # the extension's backends (module docstring)
                    if BAD.get(str(c.get("type"))) == c.get("status"):
                        meta = obj.get("metadata") or {}
                        problems.append(
                            f"{obj.get('kind')} {meta.get('namespace', '')}/{meta.get('name')}{holder}: {c['type']}={c['status']} "
                            f"{c.get('reason', '')}: {c.get('message', '')}".strip()
                        )
    if problems:
        return Check(
            name,
            "gateway-translated",
            False,
            "; ".join(problems[:4]) + (f" (+{len(problems) - 4} more)" if len(problems) > 4 else ""),
            wave.name,
            stack,
            cluster=target.name,
        )
    return Check(
        name,
        "gateway-translated",
        True,
        f"{len(objects)} object(s) translated, {counted} condition set(s) without errors"
        + (
            f"; {resolved_by_extension} backend reference(s) to {', '.join(sorted(k for _, k in extension))} left to "
            "the extension server (they exist)"
            if resolved_by_extension
            else ""
        )
        + (f"; {len(ai)} AI Gateway object(s) not translated (module docstring)" if ai else ""),
        wave.name,
        stack,
        cluster=target.name,
    )


def extension_backends(target: Target) -> set[tuple[str, str]]:
    """(group, kind) of the backends the cluster's Envoy Gateway hands to its extension server."""
    from components.k8s.names import ENVOY_GATEWAY_NAMESPACE

    name, key = EG_CONFIG
    try:
        config_map = target.kube.get("v1", "ConfigMap", name, ENVOY_GATEWAY_NAMESPACE)
    except ApiError:
        return set()
    config = yaml.safe_load(((config_map or {}).get("data") or {}).get(key) or "{}") or {}
    resources = (config.get("extensionManager") or {}).get("backendResources") or []
    return {(r.get("group", ""), r.get("kind", "")) for r in resources}


def _extension_refs(obj: dict[str, Any], extension: set[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(kind, namespace, name) of a route's backend references to extension backends."""
    if not extension or not obj.get("kind", "").endswith("Route"):
        return []
    namespace = obj["metadata"].get("namespace", "default")
    every = [ref for rule in (obj.get("spec") or {}).get("rules") or [] for ref in rule.get("backendRefs") or []]
    kinds = {(ref.get("group", ""), ref.get("kind", "Service")) for ref in every}
    if kinds - extension - EG_BACKEND_KINDS:
        return []  # some other kind egctl calls invalid: its condition stands
    refs = [ref for ref in every if (ref.get("group", ""), ref.get("kind", "Service")) in extension]
    return [(r["kind"], r.get("namespace", namespace), r["name"]) for r in refs]


def _exists(target: Target, kind: str, namespace: str, name: str) -> bool:
    api_version = next((v for v, k in EXTENSION_KINDS if k == kind), None)
    if api_version is None:
        return False
    try:
        return target.kube.get(api_version, kind, name, namespace) is not None
    except ApiError:
        return False


def _flatten(doc: Any) -> list[dict[str, Any]]:
    """egctl prints a map of resource lists (gatewayClass, gateways, httpRoutes, ...) or objects."""
    if isinstance(doc, list):
        return [o for item in doc for o in _flatten(item)]
    if not isinstance(doc, dict):
        return []
    if "kind" in doc and "metadata" in doc:
        return [doc]
    return [o for value in doc.values() for o in _flatten(value)]


def _conditions(status: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(where, conditions) for an object's own, its listeners' and its parents' (route / policy) conditions."""
    found = [("", status.get("conditions") or [])]
    for listener in status.get("listeners") or []:
        found.append((f" listener {listener.get('name')}", listener.get("conditions") or []))
    for parent in status.get("parents") or []:
        ref = parent.get("parentRef") or parent.get("ancestorRef") or {}
        found.append((f" on {ref.get('name')}", parent.get("conditions") or []))
    for ancestor in status.get("ancestors") or []:
        ref = ancestor.get("ancestorRef") or {}
        found.append((f" on {ref.get('name')}", ancestor.get("conditions") or []))
    return [f for f in found if f[1]]


def _last(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:400] if lines else "(no output)"
