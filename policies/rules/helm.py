"""Helm values are workloads too: what a chart will render is judged from its values, whatever the key shape.

Charts spell the same setting many ways (`image: repo:tag`, `image: {repository, tag}`,
`imageTag`, `image_tag_version`, `serviceType`, `service: {type}`), so keys are matched by
what they say, case-insensitively, anywhere in the values tree.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from platform_catalog.address_space import covers_internet
from policies.framework import Context, Violation, rule
from policies.model import Resource, as_list, get, number
from policies.rules.gateway import internal_load_balancer
from policies.rules.kubernetes import capability, unconfined_annotation
from policies.upstream import PSS_BASELINE_CAPABILITIES

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
MOVING_TAGS = ("latest", "main", "master", "nightly", "edge", "dev", "stable")
HOST_SETTINGS = ("privileged", "hostnetwork", "hostpid", "hostipc", "allowprivilegeescalation")
DEFAULT_ADMIN_PASSWORDS = ("admin", "prom-operator", "password", "changeme")
_IMAGE_KEY = re.compile(r"image", re.IGNORECASE)
_EXPOSED = ("loadbalancer", "nodeport")


def _leaves(value: object, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], object]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, str(k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, str(i)))
    else:
        yield path, value


def _dicts(value: object, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], dict]]:
    if isinstance(value, dict):
        yield path, value
        for k, v in value.items():
            yield from _dicts(v, (*path, str(k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _dicts(v, (*path, str(i)))


def _tag_key(key: str) -> bool:
    return "tag" in key.lower() or key.lower().endswith("version")


def _moving(tag: str) -> bool:
    return tag.strip().lower() in MOVING_TAGS


def _unpinned_reference(text: str) -> bool:
    """An image reference string whose tag is absent or moving (digests are pinned)."""
    if "@sha256:" in text or ("/" not in text and ":" not in text):
        return False
    name, _, tag = text.rpartition(":") if ":" in text.rsplit("/", 1)[-1] else (text, "", "")
    return bool(name) and (not tag or _moving(tag))


def _image_findings(values: dict) -> Iterator[str]:
    for path, value in _leaves(values):
        if not isinstance(value, str) or not path:
            continue
        key, inside_image = path[-1], any(_IMAGE_KEY.search(p) for p in path)
        if _IMAGE_KEY.search(key) and not _tag_key(key) and _unpinned_reference(value):
            yield f"values.{'.'.join(path)} = {value!r} is not pinned to a version or digest"
        elif (inside_image or _IMAGE_KEY.search(key)) and _tag_key(key) and _moving(value):
            yield f"values.{'.'.join(path)} = {value!r} is a moving tag"


def _service_findings(values: dict) -> Iterator[str]:
    for path, d in _dicts(values):
        for key, value in d.items():
            kind = str(value).lower() if isinstance(value, str) else ""
            service_type = key.lower() == "servicetype" or (key == "type" and path and "service" in path[-1].lower())
            if not service_type or kind not in _EXPOSED:
                continue
            ranges = d.get("loadBalancerSourceRanges") or []
            where = f"values.{'.'.join((*path, key))}"
            if kind == "nodeport":
                yield f"{where} = {value} opens the service on every node"
            elif not internal_load_balancer(d.get("annotations")) and (not ranges or covers_internet(ranges)):
                yield f"{where} = {value} without loadBalancerSourceRanges that exclude the internet"


def setting(key: str) -> str:
    """A chart's key as the setting it means: case, separators and use/enable prefixes dropped (KEDA's
    `useHostNetwork`, `host_network`, `enableHostNetwork` and `hostNetwork` are one setting)."""
    plain = re.sub(r"[^a-z0-9]", "", key.lower())
    plain = "hostpath" if plain == "hostpaths" else plain  # the GPU Operator's hostPaths: {rootFS, ...}
    for prefix in ("enabled", "enable", "use"):
        if plain.startswith(prefix) and plain[len(prefix) :] in (*HOST_SETTINGS, "hostpath"):
            return plain[len(prefix) :]
    return plain


# How a chart reads a value it tests with `{{ if }}` or renders into a boolean field: Go templates take any non-empty
# string as true, and YAML 1.1 (go-yaml, which Helm parses rendered manifests with) reads yes/on/y as true. Only an
# explicit false spelling, 0 or nothing is off.
_OFF = ("", "false", "no", "off", "n", "0")


def _enabled(value: object) -> bool:
    if (
        value is None
        or value is False
        or (isinstance(value, int | float) and not isinstance(value, bool) and not value)
    ):
        return False
    return not (isinstance(value, str) and value.strip().lower() in _OFF)


def _unconfined(path: tuple[str, ...], value: object) -> bool:
    profile = len(path) >= 2 and setting(path[-2]) in ("seccompprofile", "apparmorprofile") and path[-1] == "type"
    return profile and str(value).strip().lower() == "unconfined"


def _host_findings(values: dict) -> Iterator[str]:
    for path, value in _leaves(values):
        key = setting(path[-1]) if path else ""
        where = f"values.{'.'.join(path)}"
        if key in HOST_SETTINGS and _enabled(value):
            yield f"{where} is {value!r}"
        elif key == "hostpath" and _enabled(value):
            yield f"{where} mounts the node's {value}"
        elif key == "hostport" and number(value):
            yield f"{where} binds the node's port {value}"
        elif _unconfined(path, value):
            yield f"{where} is Unconfined"
    for path, d in _dicts(values):
        where = f"values.{'.'.join(path)}" if path else "values"
        for key, value in d.items():
            if setting(str(key)) == "hostpath" and isinstance(value, dict | list) and value:
                yield f"{where}.{key} mounts the node's {get(value, 'path') if isinstance(value, dict) else value}"
            elif unconfined_annotation(key, value):
                yield f"{where}.{key} is {value!r}: the pod runs without that profile"
        if path and setting(path[-1]) == "capabilities":
            added = [str(a) for a in as_list(d.get("add"))]
            beyond = [a for a in added if capability(a) not in PSS_BASELINE_CAPABILITIES]
            if beyond:
                yield f"values.{'.'.join(path)}.add adds {beyond}, beyond Pod Security baseline"


def _grafana_findings(values: dict) -> Iterator[str]:
    for path, d in _dicts(values):
        anonymous = next((v for k, v in d.items() if k.lower() == "auth.anonymous"), None)
        if isinstance(anonymous, dict) and str(anonymous.get("enabled")).lower() == "true":
            yield f"values.{'.'.join(path)}.auth.anonymous.enabled lets anyone in without logging in"
        password = d.get("adminPassword")
        if isinstance(password, str) and password.strip().lower() in DEFAULT_ADMIN_PASSWORDS:
            yield f"values.{'.'.join(path)}.adminPassword is the well-known default {password!r}"


@rule(
    name="helm-values-hardened",
    description="Helm values render no unpinned image (any key shape), no internet-facing LoadBalancer or NodePort "
    "Service, no privileged or host settings outside the privileged namespaces, and no anonymous or default-admin "
    "Grafana login.",
    severity="high",
    remediation="pin image tags (or digests), keep chart Services ClusterIP or internal with source ranges, drop "
    "privileged/host settings (or install into a namespace listed in privilegedNamespaces), and give Grafana "
    "admin.existingSecret with anonymous auth off",
    applies_to=(HELM_RELEASE,),
    config=("privilegedNamespaces",),
)
def helm_values_hardened(r: Resource, ctx: Context) -> Iterator[Violation]:
    values = r.props.get("values")  # unknown parts (secret files) are skipped, not guessed
    if not isinstance(values, dict):
        return
    release = get(r.props, "name") or r.name
    problems = [*_image_findings(values), *_service_findings(values), *_grafana_findings(values)]
    if get(r.props, "namespace") not in ctx.privileged_namespaces:
        problems += list(_host_findings(values))
    for problem in problems:
        yield Violation(f"Helm release {release}: {problem}")


RULES = [helm_values_hardened]
