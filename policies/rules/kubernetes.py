"""Kubernetes workload baselines (Pod Security, Kyverno best-practice policies) and Helm pins."""

from __future__ import annotations

import re
from collections.abc import Iterator

from policies.framework import CannotCheck, Context, Violation, rule
from policies.model import Resource, as_list, get, number
from policies.pods import (
    LLM_KIND,
    SERVING_KINDS,
    WORKLOAD_KINDS,
    Workload,
    is_serving_workload,
    is_workload,
    serves_model,
    takes_traffic,
    workloads,
)
from policies.upstream import KSERVE_API_CLIENT_CONTAINERS, PSS_BASELINE_CAPABILITIES

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
PDB_KIND = "PodDisruptionBudget"
PSA_ENFORCE = "pod-security.kubernetes.io/enforce"
PAUSE_REPOSITORY = "/pause"  # registry.k8s.io/pause, gke.gcr.io/pause
_SEMVER = re.compile(r"^v?\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]+)?$")


def _pods(r: Resource, ctx: Context, exempt: bool = True) -> list[Workload]:
    """The object's pods, less those in privileged namespaces when the rule exempts them."""
    return [w for w in workloads(r, ctx.require_stack()) if not (exempt and w.namespace in ctx.privileged_namespaces)]


def _incomplete(w: Workload, what: str) -> CannotCheck:
    return CannotCheck(f"{w.label}: {what} may come from what the pack cannot see: {w.missing}")


def _containers(w: Workload) -> Iterator[tuple[str, dict]]:
    for c in w.all_containers():
        yield f"{w.label} container {c.get('name')}", c


def capability(name: object) -> str:
    """A capability as the container runtime reads it: any case, with or without the CAP_ prefix."""
    return str(name).strip().upper().removeprefix("CAP_")


@rule(
    name="k8s-no-privileged",
    description="No privileged containers, and no added capability beyond Pod Security baseline's list (SYS_ADMIN, "
    "SYS_MODULE, NET_ADMIN, ALL, in any case spelling, with or without CAP_), outside the GPU-operator and cache "
    "namespaces.",
    severity="critical",
    remediation="drop privileged/capabilities; if the component really needs the host, run it in a namespace "
    "listed in privilegedNamespaces",
    applies_to=WORKLOAD_KINDS,
    subject=is_workload,
    scope="stack",
    config=("privilegedNamespaces",),
)
def no_privileged(r: Resource, ctx: Context) -> Iterator[Violation]:
    for w in _pods(r, ctx):
        for where, c in _containers(w):
            if get(c, "securityContext", "privileged") is True:
                yield Violation(f"{where} is privileged")
            added = [str(a) for a in as_list(get(c, "securityContext", "capabilities", "add"))]
            beyond = sorted(a for a in added if capability(a) not in PSS_BASELINE_CAPABILITIES)
            if beyond:
                yield Violation(f"{where} adds capabilities {beyond}, beyond Pod Security baseline")
        if not w.complete:
            yield _incomplete(w, "privileged settings")


@rule(
    name="k8s-no-unconfined-profiles",
    description="No pod or container runs without its seccomp or AppArmor profile (type Unconfined, or the "
    "legacy 'unconfined' annotations), outside the GPU-operator and cache namespaces.",
    severity="high",
    remediation="drop the Unconfined profile: leave seccompProfile unset or set type RuntimeDefault (or Localhost "
    "with a reviewed profile), and the same for appArmorProfile",
    applies_to=WORKLOAD_KINDS,
    subject=is_workload,
    scope="stack",
    config=("privilegedNamespaces",),
)
def no_unconfined_profiles(r: Resource, ctx: Context) -> Iterator[Violation]:
    for w in _pods(r, ctx):
        contexts = [(w.label, get(w.pod, "securityContext") or {})]
        contexts += [(where, get(c, "securityContext") or {}) for where, c in _containers(w)]
        for where, context in contexts:
            for profile in ("seccompProfile", "appArmorProfile"):
                if str(get(context, profile, "type") or "").lower() == "unconfined":
                    yield Violation(f"{where} sets {profile}.type Unconfined")
        for key, value in w.annotations.items():
            if unconfined_annotation(key, value):
                yield Violation(f"{w.label}: pod annotation {key} is {value}")
    for key, value in r.annotations.items():
        if unconfined_annotation(key, value):
            yield Violation(f"{r.label}: annotation {key} is {value}")


# The deprecated profile annotations (k8s.io/api@v0.33.13 core/v1/annotation_key_constants.go L37-68:
# SeccompPodAnnotationKey, SeccompContainerAnnotationKeyPrefix, DeprecatedAppArmorBetaContainerAnnotationKeyPrefix),
# on a pod's metadata: the value `unconfined` asks for no profile.
LEGACY_PROFILE_ANNOTATIONS = (
    "seccomp.security.alpha.kubernetes.io/",
    "container.seccomp.security.alpha.kubernetes.io/",
    "container.apparmor.security.beta.kubernetes.io/",
)


def unconfined_annotation(key: object, value: object) -> bool:
    return str(key).startswith(LEGACY_PROFILE_ANNOTATIONS) and str(value).strip().lower() == "unconfined"


@rule(
    name="k8s-no-host-namespaces",
    description="Pods do not share the node's network, PID or IPC namespace outside the GPU-operator and cache "
    "namespaces.",
    severity="high",
    remediation="remove hostNetwork/hostPID/hostIPC; use a Service for networking and an emptyDir (medium: Memory) "
    "for shared memory",
    applies_to=WORKLOAD_KINDS,
    subject=is_workload,
    scope="stack",
    config=("privilegedNamespaces",),
)
def no_host_namespaces(r: Resource, ctx: Context) -> Iterator[Violation]:
    for w in _pods(r, ctx):
        for field in ("hostNetwork", "hostPID", "hostIPC"):
            if get(w.pod, field) is True:
                yield Violation(f"{w.label} sets {field}")


@rule(
    name="k8s-no-host-path",
    description="Pods mount no hostPath volumes outside the GPU-operator and cache namespaces.",
    severity="high",
    remediation="use an emptyDir, a PVC or the model cache's PVC (pvc://) instead of hostPath",
    applies_to=WORKLOAD_KINDS,
    subject=is_workload,
    scope="stack",
    config=("privilegedNamespaces",),
)
def no_host_path(r: Resource, ctx: Context) -> Iterator[Violation]:
    for w in _pods(r, ctx):
        for volume in as_list(get(w.pod, "volumes")):
            if isinstance(volume, dict) and volume.get("hostPath") is not None:
                yield Violation(f"{w.label} mounts hostPath {get(volume, 'hostPath', 'path')} ({volume.get('name')})")


@rule(
    name="k8s-no-privilege-escalation",
    description="Every container sets allowPrivilegeEscalation: false (outside the GPU-operator and cache namespaces).",
    severity="medium",
    remediation="set securityContext.allowPrivilegeEscalation: false (and capabilities.drop: [ALL]) on every container",
    applies_to=WORKLOAD_KINDS,
    subject=is_workload,
    scope="stack",
    config=("privilegedNamespaces",),
)
def no_privilege_escalation(r: Resource, ctx: Context) -> Iterator[Violation]:
    for w in _pods(r, ctx):
        for where, c in _containers(w):
            value = get(c, "securityContext", "allowPrivilegeEscalation")
            if value is True or (value is None and not w.partial):
                yield (
                    _incomplete(w, "allowPrivilegeEscalation")
                    if not w.complete
                    else Violation(f"{where} does not set allowPrivilegeEscalation: false")
                )


def _image_repository(image: str) -> str:
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return name.rsplit(":", 1)[0] if ":" in last else name


@rule(
    name="k8s-run-as-non-root",
    description="Containers run as non-root (runAsNonRoot or a non-zero runAsUser), except images known to need root.",
    severity="medium",
    enforcement="advisory",
    remediation="set securityContext.runAsNonRoot: true and runAsUser: <uid> on the pod or container; list images "
    "that cannot run as non-root in the rootImages config",
    applies_to=WORKLOAD_KINDS,
    subject=is_workload,
    scope="stack",
    config=("privilegedNamespaces", "rootImages"),
)
def run_as_non_root(r: Resource, ctx: Context) -> Iterator[Violation]:
    for w in _pods(r, ctx):
        pod_context = get(w.pod, "securityContext") or {}
        for where, c in _containers(w):
            image = get(c, "image")
            if isinstance(image, str) and _image_repository(image) in ctx.root_images:
                continue
            context = {**pod_context, **(get(c, "securityContext") or {})}
            uid = number(context.get("runAsUser"))
            if uid == 0 or context.get("runAsNonRoot") is False:
                yield Violation(f"{where} runs as root")
            elif context.get("runAsNonRoot") is not True and not uid and not w.partial:
                yield (
                    _incomplete(w, "runAsNonRoot")
                    if not w.complete
                    else Violation(f"{where} may run as root (no runAsNonRoot / runAsUser)")
                )


def _has(resources: dict, section: str, name: str) -> bool:
    return get(resources, section, name) is not None


@rule(
    name="k8s-resources-set",
    description="Every container requests and limits CPU and memory; GPUs are set as limits.",
    severity="medium",
    remediation="set resources.requests and resources.limits for cpu and memory, and nvidia.com/gpu (or the "
    "pool's MIG resource) under limits",
    applies_to=WORKLOAD_KINDS,
    subject=is_workload,
    scope="stack",
)
def resources_set(r: Resource, ctx: Context) -> Iterator[Violation]:
    for w in _pods(r, ctx, exempt=False):
        if not w.partial:
            yield from _resource_problems(w)


def _resource_problems(w: Workload) -> Iterator[Violation]:
    for where, c in _containers(w):
        resources = get(c, "resources") or {}
        missing = [
            f"{section}.{name}"
            for section in ("requests", "limits")
            for name in ("cpu", "memory")
            if not _has(resources, section, name)
        ]
        # Extended resources (GPUs) are not overcommittable: Kubernetes needs them as limits.
        gpus = [k for k in get(resources, "requests") or {} if k.startswith("nvidia.com/")]
        missing += [f"limits.{k}" for k in gpus if not _has(resources, "limits", k)]
        if missing:
            yield (
                _incomplete(w, "resources")
                if not w.complete and not resources
                else Violation(f"{where} does not set {', '.join(missing)}")
            )


def image_problem(image: object) -> str | None:
    """Why an image reference is not pinned, or None when it is (a digest, or a tag other than latest)."""
    if not isinstance(image, str) or not image:
        return "has no image"
    if "@sha256:" in image:
        return None
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return f"image {image} has no tag (pulls latest)"
    if last.rsplit(":", 1)[-1] in ("latest", ""):
        return f"image {image} uses the latest tag"
    return None


def _values_images(values: object, path: str = "values") -> Iterator[tuple[str, str]]:
    """(path, problem) for Helm values that pick the latest image explicitly."""
    if isinstance(values, dict):
        for key, value in values.items():
            sub = f"{path}.{key}"
            if key == "tag" and str(value).lower() == "latest":
                yield sub, "tag latest"
            elif key == "image" and isinstance(value, str) and image_problem(value) and ":" in value:
                yield sub, str(image_problem(value))
            else:
                yield from _values_images(value, sub)
    elif isinstance(values, list):
        for i, value in enumerate(values):
            yield from _values_images(value, f"{path}[{i}]")


@rule(
    name="k8s-images-pinned",
    description="Container images are pinned by tag or digest, never latest or untagged (Helm values included).",
    severity="high",
    remediation="pin the image by version tag (and digest where known) from components/catalog",
    applies_to=(*WORKLOAD_KINDS, "ServingRuntime", "ClusterServingRuntime", HELM_RELEASE),
    subject=lambda r: is_workload(r) or r.kind in ("ServingRuntime", "ClusterServingRuntime") or r.type == HELM_RELEASE,
    scope="stack",
)
def images_pinned(r: Resource, ctx: Context) -> Iterator[Violation]:
    if r.type == HELM_RELEASE:
        for path, problem in _values_images(get(r.props, "values") or {}):
            yield Violation(f"Helm release {r.name}: {path} is {problem}")
        return
    if r.kind in ("ServingRuntime", "ClusterServingRuntime"):
        containers = [c for c in as_list(get(r.props, "spec", "containers")) if isinstance(c, dict)]
    else:
        containers = []
        for w in _pods(r, ctx, exempt=False):
            if not w.complete and not get(w.main, "image"):
                yield _incomplete(w, "the image")
            else:
                containers += [c for c in w.all_containers() if not (w.partial and "image" not in c)]
    for c in containers:
        image_issue = image_problem(get(c, "image"))
        if image_issue:
            yield Violation(f"{r.label} container {c.get('name')}: {image_issue}")


@rule(
    name="helm-charts-pinned",
    description="Helm releases pin an exact chart version (no ranges, no latest).",
    severity="high",
    remediation="set version to an exact chart version from components/catalog/charts.py",
    applies_to=(HELM_RELEASE,),
)
def helm_charts_pinned(r: Resource, ctx: Context) -> Iterator[Violation]:
    version = get(r.props, "version")
    if not version:
        yield Violation(f"Helm release {r.name} has no chart version (installs whatever is newest)")
    elif not _SEMVER.match(str(version)):
        yield Violation(f"Helm release {r.name}: chart version {version!r} is not an exact version")


def _probe_problems(where: str, c: dict, traffic: bool = True) -> Iterator[str]:
    readiness, liveness = get(c, "readinessProbe"), get(c, "livenessProbe")
    if not readiness and traffic:
        yield f"{where} has no readinessProbe"
    if not liveness:
        yield f"{where} has no livenessProbe"
    if readiness and liveness and readiness == liveness:
        yield f"{where}: liveness and readiness probes are identical (a busy server gets restarted, not drained)"


@rule(
    name="k8s-probes",
    description="Long-running containers have readiness and liveness probes, and the two are distinct (a "
    "multi-node replica's worker, which no Service routes to, needs only liveness).",
    severity="medium",
    remediation="add a readinessProbe (e.g. GET /v1/models) and a cheaper, more tolerant livenessProbe "
    "(e.g. GET /health)",
    applies_to=SERVING_KINDS,
    subject=is_serving_workload,
    scope="stack",
)
def probes(r: Resource, ctx: Context) -> Iterator[Violation]:
    for w in _pods(r, ctx, exempt=False):
        # Sidecars (init containers that keep running) serve like the main container.
        sidecars = [c for c in w.init_containers if c.get("restartPolicy") == "Always"]
        for c in [] if w.partial else [*w.containers, *sidecars]:
            if _image_repository(str(c.get("image", ""))).endswith(PAUSE_REPOSITORY):
                continue  # the pause image runs no process to probe (it only holds a DaemonSet's pod)
            for problem in _probe_problems(f"{w.label} container {c.get('name')}", c, takes_traffic(w)):
                yield _incomplete(w, "probes") if not w.complete else Violation(problem)


def selector_matches(selector: object, labels: dict) -> bool:
    if not isinstance(selector, dict):
        return False
    match_labels = selector.get("matchLabels") or {}
    if not match_labels and not selector.get("matchExpressions"):
        return False
    if any(labels.get(k) != v for k, v in match_labels.items()):
        return False
    for expression in as_list(selector.get("matchExpressions")):
        key, operator, values = expression.get("key"), expression.get("operator"), as_list(expression.get("values"))
        present = key in labels
        if (
            (operator == "In" and labels.get(key) not in values)
            or (operator == "NotIn" and labels.get(key) in values)
            or (operator == "Exists" and not present)
            or (operator == "DoesNotExist" and present)
        ):
            return False
    return True


def _replicas(r: Resource, w: Workload) -> float:
    """How many pods the workload may run at once."""
    if r.kind == "InferenceService":
        predictor = get(r.props, "spec", "predictor") or {}
        return max(number(predictor.get("minReplicas")) or 1, number(predictor.get("maxReplicas")) or 1)
    if r.kind == LLM_KIND:
        if w.where.startswith("spec.router"):  # the picker's Deployment (scheduler.go L395)
            return number(get(r.props, "spec", "router", "scheduler", "replicas")) or 1
        prefill = w.where.startswith("spec.prefill")
        return number(get(r.props, "spec", "prefill", "replicas") if prefill else get(r.props, "spec", "replicas")) or 1
    if r.kind == "DaemonSet":
        return 0  # one per node; drains move nothing
    return number(get(r.props, "spec", "replicas")) or 1


@rule(
    name="k8s-pdb",
    description="Workloads that run more than one replica have a PodDisruptionBudget selecting their pods.",
    severity="medium",
    remediation="add a policy/v1 PodDisruptionBudget in the same namespace with maxUnavailable: 1 and a selector "
    "matching the pod labels (serving.kserve.io/inferenceservice=<name> for an InferenceService)",
    applies_to=SERVING_KINDS,
    subject=is_serving_workload,
    scope="stack",
)
def pod_disruption_budget(r: Resource, ctx: Context) -> Iterator[Violation]:
    budgets = [
        p for p in ctx.require_stack().kubernetes(PDB_KIND, "policy", cluster=r.cluster) if p.namespace == r.namespace
    ]
    for w in _pods(r, ctx, exempt=False):
        if w.partial or _replicas(r, w) <= 1:
            continue
        if not any(selector_matches(get(p.props, "spec", "selector"), w.labels) for p in budgets):
            yield Violation(
                f"{w.label} runs up to {_replicas(r, w):g} replicas and no PodDisruptionBudget selects its pods"
            )


@rule(
    name="k8s-privileged-namespaces",
    description="Namespaces enforce a Pod Security level, and only the allow-listed ones (GPU operator, cache) "
    "are privileged.",
    severity="high",
    remediation="label the namespace pod-security.kubernetes.io/enforce=baseline or restricted "
    "(components/k8s/helm.namespace does), or add it to privilegedNamespaces with a reason",
    applies_to=(NAMESPACE,),
    config=("privilegedNamespaces",),
)
def privileged_namespaces(r: Resource, ctx: Context) -> Iterator[Violation]:
    level = get(r.props, "metadata", "labels", PSA_ENFORCE)
    if level is None:
        yield Violation(f"namespace {r.k8s_name} enforces no Pod Security level")
    elif level == "privileged" and r.k8s_name not in ctx.privileged_namespaces:
        yield Violation(f"namespace {r.k8s_name} is privileged but not in privilegedNamespaces")


def _api_clients(w: Workload) -> list[str]:
    return [str(c.get("name")) for c in w.all_containers() if c.get("name") in KSERVE_API_CLIENT_CONTAINERS]


def _token_mounted(w: Workload, stack) -> bool | None:
    """Whether the pod mounts a token; None when its ServiceAccount is declared in another stack."""
    pod = get(w.pod, "automountServiceAccountToken")
    if pod is not None:
        return pod is not False
    if stack.runs_beside_unseen(w.resource):
        return None
    name = get(w.pod, "serviceAccountName") or get(w.pod, "serviceAccount") or "default"
    accounts = [
        a
        for a in stack.kubernetes("ServiceAccount", "", w.resource.cluster)
        if a.namespace == w.namespace and a.k8s_name == name
    ]
    return not any(get(a.props, "automountServiceAccountToken") is False for a in accounts)


@rule(
    name="k8s-model-servers-no-token",
    description="Model server pods (InferenceService, LLMInferenceService) mount no ServiceAccount token, on the pod "
    "or through their ServiceAccount, unless a container in the pod is a Kubernetes API client (KServe's llm-d "
    "routing sidecar watches its InferencePool): an engine bug or a malicious model then holds no credential.",
    severity="high",
    remediation="set automountServiceAccountToken: false on the pod template (or on the ServiceAccount it names)",
    applies_to=("InferenceService", LLM_KIND),
    subject=lambda r: is_workload(r) and r.api_group == "serving.kserve.io",
    scope="stack",
)
def model_servers_no_token(r: Resource, ctx: Context) -> Iterator[Violation]:
    stack = ctx.require_stack()
    for w in _pods(r, ctx, exempt=False):
        if not serves_model(w) or _api_clients(w):
            continue
        mounted = _token_mounted(w, stack)
        if mounted is None:
            yield CannotCheck(
                f"{w.label}: its ServiceAccount in {w.resource.cluster} is declared in another stack",
                fix="nothing to change here; `make plan` judges the copy with the environment's other stacks",
            )
        elif mounted:
            yield Violation(f"{w.label} mounts a ServiceAccount token it has no use for")


RULES = [
    no_privileged,
    no_unconfined_profiles,
    model_servers_no_token,
    no_host_namespaces,
    no_host_path,
    no_privilege_escalation,
    run_as_non_root,
    resources_set,
    images_pinned,
    helm_charts_pinned,
    probes,
    pod_disruption_budget,
    privileged_namespaces,
]
