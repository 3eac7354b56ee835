"""`gateway-translated`: each cluster's gateway objects, as its API server holds them after the wave, through
the translators the gateway controllers run: AI Gateway's (`aigw translate`: AIGatewayRoutes and their backends
into HTTPRoutes and Envoy Gateway policies), then Envoy Gateway's (`egctl x translate --to gateway-api`: every
Gateway API and Envoy Gateway object with the status conditions its controller would write). A condition that
says False (not accepted, a reference not resolved, a listener not programmed) fails the check, named."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING, Any

import yaml

from components.k8s.names import cluster_name
from tools.rehearsal import cache
from tools.rehearsal.charts import load_all
from tools.rehearsal.kube import ApiError, KindNotServed
from tools.rehearsal.report import Check
from tools.rollout.ci import stack_regions

if TYPE_CHECKING:
    from components.config.rollout import Wave
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
    ("inference.networking.k8s.io/v1", "InferencePool"),
)
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
                        None,
                        "not run: egctl is not built",
                        wave.name,
                        stack,
                        cluster=cluster,
                    )
                )
                continue
            rehearsal.check(_translate(rehearsal, target, wave, stack, name))


def _run(argv: list[str], stdin: str) -> tuple[int, str, str]:
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def _translate(rehearsal: Rehearsal, target: Target, wave: Wave, stack: str, name: str) -> Check:
    work = target.directory / "gateway"
    work.mkdir(parents=True, exist_ok=True)
    objects = _live(target, GATEWAY_KINDS) + _live(target, SUPPORT_KINDS)
    ai = _live(target, AI_KINDS)
    notes = []
    if ai:
        if not rehearsal.has_binary("aigw"):
            notes.append(f"{len(ai)} AI Gateway object(s) not translated: aigw is not built")
        else:
            source = work / "ai-input.yaml"
            source.write_text(yaml.safe_dump_all(ai + [o for o in objects if o["kind"] in ("Gateway", "Secret")]))
            code, out, err = _run([str(cache.binary_path("aigw")), "translate", str(source)], "")
            (work / "aigw.out.yaml").write_text(out)
            (work / "aigw.err.log").write_text(err)
            if code != 0:
                return Check(
                    name,
                    "gateway-translated",
                    False,
                    f"aigw translate fails: {_last(err)}",
                    wave.name,
                    stack,
                    cluster=target.name,
                )
            translated = [o for o in load_all(out) if o["kind"] not in ("Gateway", "Secret")]
            objects += translated
            notes.append(f"aigw translated {len(ai)} AI Gateway object(s) into {len(translated)}")
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
    problems, counted = [], 0
    for doc in yaml.safe_load_all(out):
        for obj in _flatten(doc):
            status = obj.get("status") or {}
            for holder, conditions in _conditions(status):
                counted += 1
                for c in conditions:
                    if BAD.get(c.get("type")) == c.get("status"):
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
        + (f"; {'; '.join(notes)}" if notes else ""),
        wave.name,
        stack,
        cluster=target.name,
    )


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
