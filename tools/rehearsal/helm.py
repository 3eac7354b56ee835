"""A Helm release of the plan, rendered from its chart's sources at the pin and installed as Helm installs it
(catalog facts `helm-install-order-and-wait` and `helm-install-runs-hooks`, components/catalog/upstream.py).

pulumi-kubernetes's `helm.sh/v3:Release` runs Helm's install action (helm.sh/helm/v3 v3.20.2 in the provider's
go.mod at v4.32.0): the chart's `crds/` first (unless skipCrds; one that exists is skipped); then the pre-install
hooks one at a time, in Helm's order (weight, name, kind), each waited for before the next (a Job until Complete, a
Pod until Succeeded, other kinds once created); then every template in Helm's kind order
(pkg/releaseutil/kind_sorter.go InstallOrder; kinds it does not list, webhook configurations among them, last,
alphabetically), each labelled and annotated as the release's own (an object that exists already fails the
install); then, unless skipAwait, it waits for its objects as Helm's ReadyChecker judges them (Jobs only with
waitForJobs; tools/rehearsal/helm_wait.py); then the post-install hooks, as the pre-install ones. Values are the
release's `valueYamlFiles` merged under its `values`. A real install renders with the cluster at hand: a template's `lookup`
reads the live cluster, so the rehearsal renders against its cluster too (`--dry-run=server`)."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tools.rehearsal import cache
from tools.rehearsal.charts import CHART_SOURCES, ChartSource, chart_key, load_all

# helm.sh/helm/v3@v3.20.2:pkg/releaseutil/kind_sorter.go L31-L68 (InstallOrder).
INSTALL_ORDER = (
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
)
HELM_FIELD_MANAGER = "helm"
# helm.sh/helm/v3@v3.20.2:pkg/release/hook.go L28-L71: the annotations, the install events, the delete policies.
HOOK_ANNOTATION = "helm.sh/hook"
HOOK_WEIGHT_ANNOTATION = "helm.sh/hook-weight"
HOOK_DELETE_ANNOTATION = "helm.sh/hook-delete-policy"
PRE_INSTALL, POST_INSTALL = "pre-install", "post-install"
# Every event Helm knows (pkg/releaseutil/manifest_sorter.go L54-L66); a hook naming another is skipped entirely
# (L187-L201).
HOOK_EVENTS = frozenset(
    {
        "pre-install",
        "post-install",
        "pre-delete",
        "post-delete",
        "pre-upgrade",
        "post-upgrade",
        "pre-rollback",
        "post-rollback",
        "test",
        "test-success",
    }
)
BEFORE_HOOK_CREATION, HOOK_SUCCEEDED, HOOK_FAILED = "before-hook-creation", "hook-succeeded", "hook-failed"
# helm.sh/helm/v3@v3.20.2:pkg/action/validate.go L140-L170 (setMetadataVisitor, applied to every template's object
# by install.go L339) and L30-L33 (the names): what marks an object as a release's own.
OWNER_LABELS = {"app.kubernetes.io/managed-by": "Helm"}
OWNER_RELEASE = ("meta.helm.sh/release-name", "meta.helm.sh/release-namespace")

# The karmada chart's only dependency, bitnami `common` 2.31.4 (charts/karmada/Chart.lock), is not in a Go
# module. Karmada's templates call two of its helpers (templates/_helpers.tpl L374-L437): this stand-in gives
# them the image reference `<registry>/<repository>:<tag>` and no pull secrets; nothing else depends on it.
COMMON_STAND_IN = {
    "Chart.yaml": "apiVersion: v2\nname: common\nversion: 2.31.4\ntype: library\n",
    "templates/_images.tpl": (
        '{{- define "common.images.image" -}}\n'
        "{{- $r := .imageRoot -}}\n"
        '{{- if $r.registry }}{{ $r.registry }}/{{ end }}{{ $r.repository }}:{{ $r.tag | default "latest" }}\n'
        "{{- end -}}\n"
        '{{- define "common.images.pullSecrets" -}}{{- end -}}\n'
    ),
}
STAND_IN_DEPENDENCIES = {("karmada", "v1.18.2"): {"common": COMMON_STAND_IN}}


@dataclass(frozen=True)
class Packaging:
    """What a project's release packaging does to the chart directory before `helm package`."""

    values_template: dict[str, str]  # values.tmpl.yaml -> values.yaml, these variables substituted (envsubst)
    version: str  # helm package --version
    app_version: str  # helm package --app-version


# envoyproxy/gateway@v1.9.0:tools/make/helm.mk L9, L24-L27, L54-L56: GatewayImage=${IMAGE}:${TAG} (IMAGE =
# docker.io/envoyproxy/gateway, tools/make/env.mk L15), IMAGE_PULL_POLICY ?= IfNotPresent, --version and
# --app-version the release tag.
PACKAGING = {
    ("gateway-helm", "v1.9.0"): Packaging(
        {"GatewayImage": "docker.io/envoyproxy/gateway:v1.9.0", "GatewayImagePullPolicy": "IfNotPresent"},
        "v1.9.0",
        "v1.9.0",
    ),
}


@dataclass(frozen=True)
class Hook:
    """One hook of a release as Helm reads it (pkg/releaseutil/manifest_sorter.go L139-L234): its object, its
    template, the events it runs on, its weight (0 unless the annotation is an integer) and its delete policies
    (before-hook-creation when it names none: pkg/action/hooks.go L52-L59)."""

    obj: dict[str, Any]
    path: str
    events: frozenset[str]
    weight: int
    delete_policies: tuple[str, ...]

    @property
    def kind(self) -> str:
        return str(self.obj["kind"])

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name", ""))


def parse_hook(obj: dict[str, Any], path: str) -> Hook | None:
    """The hook `obj` is, or None when it names an event Helm does not know (which Helm skips, creating nothing)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    events = [e.strip().lower() for e in str(annotations[HOOK_ANNOTATION]).split(",")]
    if any(e not in HOOK_EVENTS for e in events):
        return None
    weight_text = str(annotations.get(HOOK_WEIGHT_ANNOTATION, ""))
    # Go's strconv.Atoi: an optional sign and digits, nothing around them; anything else weighs 0.
    weight = int(weight_text) if re.fullmatch(r"[+-]?[0-9]+", weight_text) else 0
    policies = tuple(
        p.strip().lower() for p in str(annotations.get(HOOK_DELETE_ANNOTATION, "")).split(",") if p.strip()
    )
    return Hook(obj, path, frozenset(events), weight, policies or (BEFORE_HOOK_CREATION,))


def hook_order(hooks: list[Hook]) -> list[Hook]:
    """Hooks in the order Helm runs them: templates by path (SortManifests sorts the file names, L84), then by kind
    in InstallOrder (sortHooksByKind, pkg/releaseutil/kind_sorter.go L126-L160), then stably by weight and name
    (pkg/action/hooks.go L49, L135-L146 hookByWeight)."""
    by_kind = sorted(sorted(hooks, key=lambda h: h.path), key=lambda h: kind_rank(h.kind))
    return sorted(by_kind, key=lambda h: (h.weight, h.name))


@dataclass
class Rendered:
    crds: list[dict[str, Any]] = field(default_factory=list)  # the charts' crds/ files: skipped when they exist
    owned_crds: list[dict[str, Any]] = field(default_factory=list)  # CRDs among the templates: the release's own
    pre_hooks: list[Hook] = field(default_factory=list)  # in the order Helm runs them (hook_order)
    manifests: list[dict[str, Any]] = field(default_factory=list)
    post_hooks: list[Hook] = field(default_factory=list)

    @property
    def every_crd(self) -> list[dict[str, Any]]:
        return [*self.crds, *self.owned_crds]


def owned(obj: dict[str, Any], release: str, namespace: str) -> dict[str, Any]:
    """`obj` as Helm's install creates a template's object: labelled and annotated as the release's."""
    metadata = obj.setdefault("metadata", {})
    metadata["labels"] = {**(metadata.get("labels") or {}), **OWNER_LABELS}
    metadata["annotations"] = {
        **(metadata.get("annotations") or {}),
        OWNER_RELEASE[0]: release,
        OWNER_RELEASE[1]: namespace,
    }
    return obj


def rendered_documents(text: str) -> list[tuple[str, dict[str, Any]]]:
    """(template path, object) of each document `helm template` prints, the path from its `# Source:` line."""
    found: list[tuple[str, dict[str, Any]]] = []
    for chunk in re.split(r"^---\s*$", text, flags=re.M):
        source = next((line[len("# Source: ") :] for line in chunk.splitlines() if line.startswith("# Source: ")), "")
        found += [(source, doc) for doc in load_all(chunk)]
    return found


class RenderError(Exception):
    pass


def release_source(inputs: dict[str, Any]) -> tuple[tuple[str, str], ChartSource | None]:
    key = chart_key(str(inputs.get("chart")), str(inputs.get("version")))
    return key, CHART_SOURCES.get(key)


def merged_values(inputs: dict[str, Any]) -> dict[str, Any]:
    """`valueYamlFiles` (assets) merged in order, then `values` over them (Helm's coalescing of maps)."""
    merged: dict[str, Any] = {}
    for asset in inputs.get("valueYamlFiles") or []:
        text = getattr(asset, "text", None)
        if text is None and getattr(asset, "path", None):
            text = Path(asset.path).read_text()
        merged = _coalesce(merged, yaml.safe_load(text or "") or {})
    return _coalesce(merged, inputs.get("values") or {})


def _coalesce(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        out[key] = _coalesce(out[key], value) if isinstance(out.get(key), dict) and isinstance(value, dict) else value
    return out


def _chart_dir(key: tuple[str, str], source: ChartSource, workdir: Path) -> Path:
    """The chart's directory: the module's, or a copy packaged as the release packaged it, with stand-in
    dependencies in its charts/."""
    assert source.files is not None
    stand_ins, packaging = STAND_IN_DEPENDENCIES.get(key), PACKAGING.get(key)
    if not stand_ins and not packaging:
        return source.files.directory
    copy = workdir / "charts" / key[0]
    if copy.exists():
        return copy
    import shutil

    shutil.copytree(source.files.directory, copy)
    copy.chmod(0o755)
    for path in copy.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    for name, files in (stand_ins or {}).items():
        for rel, text in files.items():
            target = copy / "charts" / name / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    if packaging is not None:
        template = (copy / "values.tmpl.yaml").read_text()
        values = re.sub(r"\$\{(\w+)\}", lambda m: packaging.values_template.get(m.group(1), ""), template)
        (copy / "values.yaml").write_text(values)
        chart = yaml.safe_load((copy / "Chart.yaml").read_text())
        chart["version"], chart["appVersion"] = packaging.version, packaging.app_version
        (copy / "Chart.yaml").write_text(yaml.safe_dump(chart, sort_keys=False))
    return copy


def render(
    inputs: dict[str, Any],
    *,
    key: tuple[str, str],
    source: ChartSource,
    workdir: Path,
    kube_version: str,
    api_versions: list[str],
    kubeconfig: Path,
) -> Rendered:
    """`helm template` of the release, split the way `helm install` applies it; its lookups read the cluster of
    `kubeconfig`, as the install's do."""
    chart = _chart_dir(key, source, workdir)
    values_file = workdir / f"{inputs['name']}.values.yaml"
    values_file.parent.mkdir(parents=True, exist_ok=True)
    values_file.write_text(yaml.safe_dump(merged_values(inputs)))
    argv = [
        str(cache.binary_path("helm")),
        "template",
        str(inputs["name"]),
        str(chart),
        "--namespace",
        str(inputs.get("namespace") or "default"),
        "--values",
        str(values_file),
        "--kube-version",
        kube_version,
        *[a for v in api_versions for a in ("--api-versions", v)],
        "--dry-run=server",
        "--kubeconfig",
        str(kubeconfig),
    ]
    if not inputs.get("skipCrds"):
        argv.append("--include-crds")
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise RenderError(
            f"helm template {inputs['name']} ({source.files.source if source.files else key}): {done.stderr.strip()}"
        )
    (workdir / f"{inputs['name']}.rendered.yaml").write_text(done.stdout)
    release, namespace = str(inputs["name"]), str(inputs.get("namespace") or "default")
    return split_rendered(done.stdout, release, namespace)


def split_rendered(text: str, release: str, namespace: str) -> Rendered:
    """`helm template`'s output split as `helm install` applies it: crds/ files, the templates' CRDs and other
    objects (the release's own), pre- and post-install hooks in the order Helm runs them; hooks of other events
    (upgrade, delete, test) do not run on install."""
    rendered = Rendered()
    pre: list[Hook] = []
    post: list[Hook] = []
    for source, doc in rendered_documents(text):
        annotations = (doc.get("metadata") or {}).get("annotations") or {}
        if "/crds/" in f"/{source}":
            rendered.crds.append(doc)
        elif HOOK_ANNOTATION in annotations:
            hook = parse_hook(doc, source)
            if hook is not None and PRE_INSTALL in hook.events:
                pre.append(hook)
            if hook is not None and POST_INSTALL in hook.events:
                post.append(hook)
        elif doc["kind"] == "CustomResourceDefinition":
            rendered.owned_crds.append(owned(doc, release, namespace))
        else:
            rendered.manifests.append(owned(doc, release, namespace))
    rendered.manifests.sort(key=_install_rank)
    rendered.pre_hooks, rendered.post_hooks = hook_order(pre), hook_order(post)
    return rendered


def kind_rank(kind: str) -> tuple[int, str]:
    """InstallOrder's place of `kind`; kinds it does not list after them, alphabetically (kind_sorter.go
    L135-L160 lessByKind)."""
    return (INSTALL_ORDER.index(kind), "") if kind in INSTALL_ORDER else (len(INSTALL_ORDER), kind)


def _install_rank(obj: dict[str, Any]) -> tuple[int, str]:
    return kind_rank(obj["kind"])
