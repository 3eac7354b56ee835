"""Pod specs inside Kubernetes objects, as the kubelet will run them.

Typed workloads carry their pod template at a known path. A KServe InferenceService that
names a serving runtime runs the runtime's container merged with the ISVC's `model`
fields, so its effective pod is built from both; when the runtime is not in the stack,
the workload is `complete=False` and rules report what they cannot see instead of passing.
An LLMInferenceService's pods are its templates merged onto KServe's presets
(policies/upstream.py). Any other custom resource is searched for PodSpec-shaped fields
(a `containers` list of named containers), each judged as a pod: a CRD the pack has never
heard of is not a way around the pod rules. A `*Patch` of a workload is judged as the
object it produces (policies/model.py merges it onto its target); a patch of an object
outside the stack is `partial`: rules judge what it sets, not what it leaves out.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from policies.model import UNKNOWN, NotKnown, Resource, Stack, as_list, peek
from policies.upstream import KSERVE_LLM_PRESETS, kserve_llm_pod_labels

ISVC_GROUP = "serving.kserve.io"
KARMADA_POLICY_GROUP = "policy.karmada.io"
PROPAGATION_POLICY = "PropagationPolicy"
RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
ISVC_LABEL = "serving.kserve.io/inferenceservice"
MAIN_CONTAINER = "kserve-container"
LLM_KIND = "LLMInferenceService"

# kind -> path of the pod spec inside the object
_POD_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
_BUILTIN_GROUPS = {"", "apps", "batch"}
# Long-running kinds: must answer probes and survive drains.
SERVING_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "InferenceService", LLM_KIND, "LeaderWorkerSet")
# For the docs: builtin kinds and their *Patch, KServe's kinds, and any custom resource with a pod spec.
WORKLOAD_KINDS = (
    *_POD_PATHS,
    "InferenceService",
    LLM_KIND,
    "LeaderWorkerSet",
    "*Patch of these",
    "any CR with a pod spec",
)
# Keys a container has besides its name: what tells a PodSpec-shaped `containers` list from any list of names.
_CONTAINER_KEYS = frozenset(
    {"image", "command", "args", "resources", "securityContext", "env", "envFrom", "ports", "volumeMounts"}
)


@dataclass
class Workload:
    resource: Resource
    pod: dict  # pod-level fields (hostNetwork, securityContext, volumes, ...)
    containers: list[dict]  # app containers (init containers are in `init_containers`)
    init_containers: list[dict]
    labels: dict  # labels of the pods it creates
    complete: bool = True  # False: part of the pod comes from a runtime this stack does not define
    missing: str = ""  # what is not visible when incomplete
    where: str = ""  # the pod's path inside the object, when it holds several (e.g. spec.prefill.template)
    partial: bool = False  # a patch of an object outside the stack: only what it sets is known

    @property
    def main(self) -> dict:
        """The serving container (KServe's kserve-container, else the first)."""
        return next((c for c in self.containers if c.get("name") == MAIN_CONTAINER), self.containers[0])

    @property
    def namespace(self) -> str:
        return self.resource.namespace

    @property
    def label(self) -> str:
        return f"{self.resource.label} {self.where}" if self.where else self.resource.label

    def all_containers(self) -> list[dict]:
        return self.init_containers + self.containers


def is_workload(r: Resource) -> bool:
    """Objects that run pods: builtin workloads and their patches, KServe's serving kinds, and any other custom
    resource carrying a pod spec (serving runtimes are templates, judged merged into the services using them)."""
    if not r.is_kubernetes:
        return False
    if r.api_group in _BUILTIN_GROUPS:
        return r.kind in _POD_PATHS
    if r.api_group == ISVC_GROUP and r.kind in ("InferenceService", LLM_KIND):
        return True
    if r.kind in RUNTIME_KINDS:
        return False
    return any(True for _ in _pod_specs(peek(r.props, "spec"), "spec"))


def _pod_shaped(value: object) -> bool:
    containers = value.get("containers") if isinstance(value, dict) else None
    return (
        isinstance(containers, list)
        and bool(containers)
        and all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in containers)
        and any(_CONTAINER_KEYS & set(c) for c in containers)
    )


def _pod_specs(value: object, path: str, parent: dict | None = None):
    """(path, pod spec, pod labels) of every PodSpec-shaped mapping inside `value`; a PodSpec under a
    PodTemplateSpec (`{metadata, spec}`) takes the template's labels."""
    if _pod_shaped(value):
        labels = peek(parent, "metadata", "labels") if parent is not None and path.endswith(".spec") else None
        yield path, value, labels if isinstance(labels, dict) else {}
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _pod_specs(item, f"{path}.{key}", value)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _pod_specs(item, f"{path}[{i}]", None)


def is_serving_workload(r: Resource) -> bool:
    return is_workload(r) and r.kind in SERVING_KINDS


def is_model_server(r: Resource) -> bool:
    return r.is_kubernetes and r.kind == "InferenceService" and r.api_group == ISVC_GROUP


def _known(value, what: str):
    """A pod structure that is itself unknown (e.g. a spec built in an apply) cannot be checked at all."""
    if value is UNKNOWN or (isinstance(value, list) and UNKNOWN in value):
        raise NotKnown(what)
    return value


def _dicts(value, what: str = "containers") -> list[dict]:
    value = _known(value, what)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _from_pod_spec(r: Resource, spec, labels) -> Workload:
    spec = _known(spec, "pod spec")
    spec = spec if isinstance(spec, dict) else {}
    return Workload(
        r,
        spec,
        _dicts(spec.get("containers")),
        _dicts(spec.get("initContainers")),
        labels if isinstance(labels, dict) else {},
    )


def workloads(r: Resource, stack: Stack | None) -> list[Workload]:
    """Every pod an object runs (most run one; an LLMInferenceService runs decode and prefill pods)."""
    cache = stack.workload_cache if stack is not None else {}
    if id(r) not in cache:
        cache[id(r)] = _workloads(r, stack)
    return cache[id(r)]


def workload(r: Resource, stack: Stack | None) -> Workload | None:
    """The (first) pod of a workload object; None when the object has no pod template."""
    found = workloads(r, stack)
    return found[0] if found else None


def _workloads(r: Resource, stack: Stack | None) -> list[Workload]:
    if r.kind in _POD_PATHS and r.api_group in _BUILTIN_GROUPS:
        path = _POD_PATHS[r.kind]
        template_meta = peek(r.props, *path[:-1], "metadata") if len(path) > 1 else r.metadata
        w = _from_pod_spec(r, peek(r.props, *path), peek(template_meta, "labels") if template_meta else {})
        if r.kind == "Pod":
            w.labels = r.labels
        w.partial = r.patch_of is None and r.type.endswith("Patch")
        return [w] if w.containers else []
    if is_model_server(r):
        w = _inference_service(r, stack)
        return [w] if w is not None else []
    if r.kind == LLM_KIND and r.api_group == ISVC_GROUP:
        return _llm_inference_service(r)
    found = []
    for path, pod, labels in _pod_specs(_known(peek(r.props, "spec"), "spec"), "spec"):
        w = _from_pod_spec(r, pod, labels)
        w.where = path
        found.append(w)
    return found


# KServe's LLMInferenceService pods: (path of our template, preset without prefill, preset with prefill).
# Multi-node (worker) pods use presets the pack does not carry: judged as incomplete.
_LLM_PODS = (
    (("spec", "template"), "kserve-config-llm-template", "kserve-config-llm-decode-template"),
    (("spec", "prefill", "template"), None, "kserve-config-llm-prefill-template"),
    (("spec", "worker"), None, None),
    (("spec", "prefill", "worker"), None, None),
)


def _llm_inference_service(r: Resource) -> list[Workload]:
    """Each pod KServe runs for an LLMInferenceService: our template strategically merged onto its preset
    (kserve/kserve@v0.20.0 pkg/controller/v1alpha2/llmisvc/config_merge.go), labelled as KServe labels it
    (workload_single_node.go singleNodeLabels)."""
    disaggregated = peek(r.props, "spec", "prefill") is not None
    found = []
    for path, single, with_prefill in _LLM_PODS:
        ours = _known(peek(r.props, *path), ".".join(path))
        if not isinstance(ours, dict):
            continue
        preset = with_prefill if disaggregated else single
        base = KSERVE_LLM_PRESETS.get(preset or "", {})
        labels = kserve_llm_pod_labels(r.k8s_name, prefill=path[1] == "prefill", disaggregated=disaggregated)
        w = _from_pod_spec(r, merge_pod(base, ours), labels)
        w.where = ".".join(path)
        if preset is None:
            w.complete, w.missing = False, f"KServe's preset for {w.where} is not one the pack knows"
        if w.containers:
            found.append(w)
    return found


def merge_pod(base: dict, patch: dict) -> dict:
    """`patch` strategically merged onto the pod spec `base`: pod lists by their merge keys, each container's
    lists by theirs (what Kubernetes' StrategicMergePatch does with a PodSpec)."""
    merged = strategic_merge(base, patch, POD_MERGE_KEYS)
    for key in ("containers", "initContainers"):
        base_by_name = {c.get("name"): c for c in as_list(base.get(key)) if isinstance(c, dict)}
        patched = {c.get("name"): c for c in as_list(patch.get(key)) if isinstance(c, dict)}
        if isinstance(merged, dict) and isinstance(merged.get(key), list):
            merged[key] = [
                strategic_merge(base_by_name[c.get("name")], patched[c.get("name")], CONTAINER_MERGE_KEYS)
                if isinstance(c, dict) and c.get("name") in base_by_name and c.get("name") in patched
                else c
                for c in merged[key]
            ]
    return merged if isinstance(merged, dict) else {}


def serving_runtime(isvc: Resource, stack: Stack | None) -> Resource | None:
    """The (Cluster)ServingRuntime an ISVC names, in the cluster its pods run in.

    That is the ISVC's own cluster, or, for a template in a Karmada control plane, the member clusters
    its PropagationPolicy places it on (the runtime is there; Karmada only stores the template).
    """
    name = peek(isvc.props, "spec", "predictor", "model", "runtime")
    if stack is None or not isinstance(name, str):
        return None
    clusters = [isvc.cluster, *propagated_to(isvc, stack)]
    for cluster in clusters:
        for r in stack.resources:
            same = r.is_kubernetes and r.kind in RUNTIME_KINDS and r.k8s_name == name and r.cluster == cluster
            if same and (r.kind == "ClusterServingRuntime" or r.namespace == isvc.namespace):
                return r
    return None


def propagated_to(r: Resource, stack: Stack) -> list[str]:
    """Member clusters named by the Karmada PropagationPolicies (same cluster and namespace) selecting `r`."""
    clusters: list[str] = []
    for policy in stack.kubernetes(PROPAGATION_POLICY, KARMADA_POLICY_GROUP, cluster=r.cluster):
        if policy.namespace != r.namespace:
            continue
        selectors = as_list(peek(policy.props, "spec", "resourceSelectors"))
        if any(
            isinstance(s, dict)
            and s.get("kind") == r.kind
            and s.get("apiVersion") == r.props.get("apiVersion")
            and s.get("name") in (None, r.k8s_name)
            for s in selectors
        ):
            names = peek(policy.props, "spec", "placement", "clusterAffinity", "clusterNames")
            clusters += [c for c in as_list(names) if isinstance(c, str)]
    return clusters


# Strategic-merge keys of the Kubernetes API (the patchMergeKey of each list in core/v1 Container and
# PodSpec); lists without one are replaced by the patch, maps merge key by key, a null deletes.
CONTAINER_MERGE_KEYS = {
    "env": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "resizePolicy": "resourceName",
}
POD_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
}
# ModelSpec fields that are KServe's, not the container's (dropped when KServe unmarshals it into a Container).
_MODEL_ONLY = ("modelFormat", "runtime", "storageUri", "protocolVersion")


def strategic_merge(base: object, patch: object, merge_keys: dict[str, str] | None = None) -> object:
    """`patch` applied to `base` as a Kubernetes strategic merge patch (top-level list keys from `merge_keys`)."""
    if not isinstance(base, dict) or not isinstance(patch, dict):
        return patch
    merged = dict(base)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        elif merge_keys and key in merge_keys and isinstance(value, list) and isinstance(base.get(key), list):
            merged[key] = _merge_list(base[key], value, merge_keys[key])
        else:
            merged[key] = strategic_merge(base.get(key), value)
    return merged


def _merge_list(base: list, patch: list, key: str) -> list:
    items = [dict(b) if isinstance(b, dict) else b for b in base]
    for p in patch:
        same = next((i for i, b in enumerate(items) if isinstance(b, dict) and isinstance(p, dict)
                     and b.get(key) == p.get(key)), None)  # fmt: skip
        if same is None:
            items.append(p)
        else:
            items[same] = strategic_merge(items[same], p)
    return items


def _merge_container(runtime: dict, model: dict) -> dict:
    """KServe's merge (MergeRuntimeContainers): a strategic merge of the predictor's container fields onto the
    runtime container, args concatenated (runtime's first), the runtime's name kept when the predictor has none."""
    overrides = {k: v for k, v in model.items() if k not in _MODEL_ONLY}
    merged = strategic_merge(runtime, overrides, CONTAINER_MERGE_KEYS)
    merged["name"] = model.get("name") or runtime.get("name") or MAIN_CONTAINER
    merged["args"] = list(runtime.get("args") or []) + list(model.get("args") or [])
    return merged


def _inference_service(r: Resource, stack: Stack | None) -> Workload | None:
    predictor = _known(peek(r.props, "spec", "predictor"), "spec.predictor")
    if not isinstance(predictor, dict):
        return None
    labels = {**(predictor.get("labels") or {}), ISVC_LABEL: r.k8s_name}
    model = _known(predictor.get("model"), "spec.predictor.model")
    if not isinstance(model, dict):
        w = _from_pod_spec(r, predictor, labels)
        return w if w.containers else None

    runtime = serving_runtime(r, stack)
    if runtime is None:
        name = model.get("runtime") or f"auto-selected for format {peek(model, 'modelFormat', 'name')}"
        w = _from_pod_spec(r, predictor, labels)
        w.containers = [{**model, "name": MAIN_CONTAINER}]
        w.complete = False
        w.missing = f"serving runtime {name!r} is not in this stack"
        return w

    runtime_spec = runtime.props.get("spec") if isinstance(runtime.props.get("spec"), dict) else {}
    runtime_containers = _dicts(runtime_spec.get("containers"))
    main = next((c for c in runtime_containers if c.get("name") == MAIN_CONTAINER), None)
    main = main or (runtime_containers[0] if runtime_containers else {})
    containers = [_merge_container(main, model)] + [c for c in runtime_containers if c is not main]
    # Pod-level fields: KServe's MergePodSpec, a strategic merge of the predictor's pod spec onto the runtime's.
    pod = strategic_merge(runtime_spec, {k: v for k, v in predictor.items() if k != "model"}, POD_MERGE_KEYS)
    return Workload(r, pod, containers, _dicts(pod.get("initContainers")), labels)


def command_line(container: dict) -> list[str]:
    """command + args as tokens, splitting items that hold several flags ("--a 1 --b 2")."""
    tokens: list[str] = []
    for item in list(container.get("command") or []) + list(container.get("args") or []):
        if isinstance(item, str):
            try:
                tokens.extend(shlex.split(item))
            except ValueError:
                tokens.extend(item.split())
    return tokens


def flag(tokens: list[str], name: str) -> str | None:
    """Value of `--name value` or `--name=value` (the last one wins, like argparse)."""
    value = None
    for i, token in enumerate(tokens):
        if token == name and i + 1 < len(tokens):
            value = tokens[i + 1]
        elif token.startswith(name + "="):
            value = token[len(name) + 1 :]
    return value
