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

from dataclasses import dataclass, field

from policies.model import UNKNOWN, NotKnown, Resource, Stack, as_list, once_per_pass, peek, shell_words
from policies.propagation import KARMADA_POLICY_GROUP
from policies.upstream import (
    KSERVE_GRAPH_LABEL,
    KSERVE_GRAPH_ROUTER_CONTAINER,
    KSERVE_GRAPH_ROUTER_POD_FIELDS,
    KSERVE_LLM_PRESETS,
    KSERVE_LLM_SCHEDULER_ANNOTATIONS,
    KSERVE_LLM_SCHEDULER_PRESET,
    KSERVE_NAMESPACE,
    kserve_llm_pod_labels,
    kserve_llm_scheduler_labels,
)

ISVC_GROUP = "serving.kserve.io"
PROPAGATION_POLICY = "PropagationPolicy"
RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
ISVC_LABEL = "serving.kserve.io/inferenceservice"
MAIN_CONTAINER = "kserve-container"
TRANSFORMER_CONTAINER = "transformer-container"  # pkg/constants TransformerContainerName (collocated transformer)
WORKER_CONTAINER = "worker-container"  # pkg/constants WorkerContainerName
ISVC_COMPONENT_LABEL = "component"  # pkg/constants KServiceComponentLabel: predictor, transformer, explainer
LLM_KIND = "LLMInferenceService"
GRAPH_KIND = "InferenceGraph"

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
    GRAPH_KIND,
    "LeaderWorkerSet",
    "*Patch of these",
    "any CR with a pod spec",
)
# Keys a container has besides its name (core/v1 Container, k8s.io/api@v0.33.13 core/v1/types.go): what tells a
# PodSpec-shaped `containers` list from any list of names.
_CONTAINER_KEYS = frozenset(
    {
        "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy",
        "restartPolicy", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe",
        "lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "securityContext",
        "stdin", "stdinOnce", "tty",
    }
)  # fmt: skip


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
    annotations: dict = field(default_factory=dict)  # annotations of the pods it creates

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


@once_per_pass
def is_workload(r: Resource) -> bool:
    """Objects that run pods: builtin workloads and their patches, KServe's serving kinds, and any other custom
    resource carrying a pod spec (serving runtimes and LLMInferenceServiceConfigs are templates, judged merged into
    the services using them)."""
    if not r.is_kubernetes:
        return False
    if r.api_group in _BUILTIN_GROUPS:
        return r.kind in _POD_PATHS
    if r.api_group == ISVC_GROUP and r.kind in ("InferenceService", LLM_KIND, GRAPH_KIND):
        return True
    if r.kind in (*RUNTIME_KINDS, LLM_CONFIG_KIND):
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
    """(path, pod spec, pod metadata) of every PodSpec-shaped mapping inside `value`; a PodSpec under a
    PodTemplateSpec (`{metadata, spec}`) takes the template's metadata (labels, annotations)."""
    if _pod_shaped(value):
        meta = peek(parent, "metadata") if parent is not None and path.endswith(".spec") else None
        yield path, value, meta if isinstance(meta, dict) else {}
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _pod_specs(item, f"{path}.{key}", value)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _pod_specs(item, f"{path}[{i}]", None)


def _mapping(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def serves_model(w: Workload) -> bool:
    """A pod that runs the model (a predictor, an LLM pool's workload or worker), not the transformer, explainer or
    router KServe runs beside it."""
    return w.resource.kind != GRAPH_KIND and not w.where.startswith(
        ("spec.transformer", "spec.explainer", "spec.router")
    )


def takes_traffic(w: Workload) -> bool:
    """Whether requests reach the pod through a Service: not a multi-node replica's worker (an InferenceService's
    workerSpec, an LLMInferenceService's worker), which only joins its head's Ray cluster or engine group."""
    return not w.where.endswith(("workerSpec", ".worker"))


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


def _from_pod_spec(r: Resource, spec, labels, annotations=None) -> Workload:
    spec = _known(spec, "pod spec")
    spec = spec if isinstance(spec, dict) else {}
    return Workload(
        r,
        spec,
        _dicts(spec.get("containers")),
        _dicts(spec.get("initContainers")),
        _mapping(labels),
        annotations=_mapping(annotations),
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
        meta = _mapping(peek(r.props, *path[:-1], "metadata") if len(path) > 1 else r.metadata)
        w = _from_pod_spec(r, peek(r.props, *path), peek(meta, "labels"), peek(meta, "annotations"))
        w.partial = r.patch_of is None and r.type.endswith("Patch")
        return [w] if w.containers else []
    if is_model_server(r):
        return _inference_service(r, stack)
    if r.kind == LLM_KIND and r.api_group == ISVC_GROUP:
        return _llm_inference_service(r, stack)
    if r.kind == GRAPH_KIND and r.api_group == ISVC_GROUP:
        return [_inference_graph(r)]
    found = []
    for path, pod, meta in _pod_specs(_known(peek(r.props, "spec"), "spec"), "spec"):
        w = _from_pod_spec(r, pod, peek(meta, "labels"), peek(meta, "annotations"))
        w.where = path
        found.append(w)
    return found


# KServe's LLMInferenceService pods: (path of the pod in the spec, preset without prefill, preset with prefill).
# Multi-node (worker) pods use presets the pack does not carry: judged as incomplete.
_LLM_PODS = (
    (("spec", "template"), "kserve-config-llm-template", "kserve-config-llm-decode-template"),
    (("spec", "prefill", "template"), None, "kserve-config-llm-prefill-template"),
    (("spec", "worker"), None, None),
    (("spec", "prefill", "worker"), None, None),
    (("spec", "router", "scheduler", "template"), KSERVE_LLM_SCHEDULER_PRESET, KSERVE_LLM_SCHEDULER_PRESET),
)
LLM_CONFIG_KIND = "LLMInferenceServiceConfig"


def _llm_runs(spec: dict, path: tuple[str, ...]) -> bool:
    """Whether KServe runs the pod at `path` of a (resolved) spec: the main workload always; prefill and workers when
    declared; the endpoint picker when the router has a scheduler without a pool ref (scheduler.go L97-113)."""
    if path == ("spec", "template"):
        return True
    if path[1] == "router":
        scheduler = peek(spec, "router", "scheduler")
        return isinstance(scheduler, dict) and not peek(scheduler, "pool", "ref", "name")
    return isinstance(peek(spec, *path[1:]), dict)


def _llm_configs(r: Resource, stack: Stack | None) -> tuple[list[dict], str]:
    """The specs of the LLMInferenceServiceConfigs `spec.baseRefs` names, in order, and what is not visible ('' when
    every one is in the stack: the service's namespace first, then KServe's, on the cluster its pods run in)."""
    specs, missing = [], []
    for ref in as_list(_known(peek(r.props, "spec", "baseRefs"), "spec.baseRefs")):
        name = ref.get("name") if isinstance(ref, dict) else None
        found = None
        if stack is not None and isinstance(name, str):
            candidates = [
                c
                for c in stack.resources
                if c.is_kubernetes
                and c.kind == LLM_CONFIG_KIND
                and c.api_group == ISVC_GROUP
                and c.k8s_name == name
                and c.cluster == r.cluster
            ]
            for namespace in (r.namespace, KSERVE_NAMESPACE):
                found = found or next((c for c in candidates if c.namespace == namespace), None)
        if found is None:
            missing.append(str(name))
        else:
            specs.append(_mapping(_known(peek(found.props, "spec"), f"{LLM_CONFIG_KIND} {name} spec")))
    shown = ", ".join(repr(m) for m in missing)
    return specs, (
        f"spec.baseRefs names {LLM_CONFIG_KIND} {shown}, which this stack does not define" if missing else ""
    )


def _merge_llm_spec(base: dict, patch: dict) -> dict:
    """One spec merged onto another as KServe's mergeSpecs does: a strategic merge, pod specs by their merge keys."""
    merged = _mapping(strategic_merge(base, patch))
    for path, _, _ in _LLM_PODS:
        ours, theirs = peek(patch, *path[1:]), peek(base, *path[1:])
        if isinstance(ours, dict) and isinstance(theirs, dict):
            _set_in(merged, path[1:], merge_pod(theirs, ours))
    return merged


def _set_in(obj: dict, path: tuple[str, ...], value: object) -> None:
    for key in path[:-1]:
        obj = obj.setdefault(key, {})
    obj[path[-1]] = value


def _llm_inference_service(r: Resource, stack: Stack | None) -> list[Workload]:
    """Each pod KServe runs for an LLMInferenceService: its spec merged onto the configs its baseRefs name, then onto
    the well-known preset of each pod (kserve/kserve@v0.20.0 pkg/controller/v1alpha2/llmisvc/config_merge.go
    combineBaseRefsConfig L212-283, MergeSpecs L760-829), labelled and annotated as KServe does
    (workload_single_node.go singleNodeLabels, L180/L284; scheduler.go SchedulerLabels). A baseRef the stack does not
    define could set anything: those pods are incomplete."""
    ours = _mapping(_known(peek(r.props, "spec"), "spec"))
    configs, missing = _llm_configs(r, stack)
    spec: dict = {}
    for config in [*configs, ours]:
        spec = _merge_llm_spec(spec, config)
    disaggregated = peek(spec, "prefill") is not None
    found = []
    for path, single, with_prefill in _LLM_PODS:
        if not _llm_runs(spec, path):
            continue
        pod = _known(peek(spec, *path[1:]), ".".join(path))
        preset = with_prefill if disaggregated else single
        if path[-1] == "template" and isinstance(peek(spec, *path[1:-1], "worker"), dict):
            preset = None  # a multi-node pool's leader runs a worker preset (config_merge.go L228-262)
        base = KSERVE_LLM_PRESETS.get(preset or "", {})
        where = ".".join(path)
        if path[1] == "router":
            labels = {
                **kserve_llm_scheduler_labels(r.k8s_name),
                **_mapping(peek(spec, "router", "scheduler", "labels")),
            }
            annotations = {
                **KSERVE_LLM_SCHEDULER_ANNOTATIONS,
                **_mapping(peek(spec, "router", "scheduler", "annotations")),
            }
        else:
            labels = kserve_llm_pod_labels(r.k8s_name, prefill=path[1] == "prefill", disaggregated=disaggregated)
            pool = ("prefill",) if path[1] == "prefill" else ()
            annotations = _mapping(peek(spec, *pool, "annotations"))
        w = _from_pod_spec(r, merge_pod(base, _mapping(pod)), labels, annotations)
        w.where = where
        if preset is None:
            w.complete, w.missing = False, f"KServe's preset for {where} is not one the pack knows"
        if missing:
            w.complete, w.missing = False, missing
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


def serving_runtime(isvc: Resource, stack: Stack | None, predictor: dict | None = None) -> Resource | None:
    """The (Cluster)ServingRuntime an ISVC names, in the cluster its pods run in.

    That is the ISVC's own cluster, or, for a template in a Karmada control plane, the member clusters
    its PropagationPolicy places it on (the runtime is there; Karmada only stores the template).
    """
    name = peek(predictor if predictor is not None else peek(isvc.props, "spec", "predictor"), "model", "runtime")
    if stack is None or not isinstance(name, str):
        return None
    runtimes = _serving_runtimes(stack)
    for cluster in [isvc.cluster, *propagated_to(isvc, stack)]:
        for r in runtimes.get((cluster, name), ()):
            if r.kind == "ClusterServingRuntime" or r.namespace == isvc.namespace:
                return r
    return None


def _serving_runtimes(stack: Stack) -> dict[tuple[str | None, str], list[Resource]]:
    """The stack's (Cluster)ServingRuntimes by (cluster, name), in the stack's order; once per stack."""
    if "serving_runtimes" not in stack.memo:
        index: dict[tuple[str | None, str], list[Resource]] = {}
        for r in stack.resources:
            if r.is_kubernetes and r.kind in RUNTIME_KINDS:
                index.setdefault((r.cluster, r.k8s_name), []).append(r)
        stack.memo["serving_runtimes"] = index
    return stack.memo["serving_runtimes"]


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
    merged = _mapping(strategic_merge(runtime, overrides, CONTAINER_MERGE_KEYS))
    merged["name"] = model.get("name") or runtime.get("name") or MAIN_CONTAINER
    merged["args"] = list(runtime.get("args") or []) + list(model.get("args") or [])
    return merged


def _inference_service(r: Resource, stack: Stack | None) -> list[Workload]:
    """Each pod KServe runs for an InferenceService (kserve/kserve@v0.20.0): the predictor's, each canary's
    predictor's, their multi-node workers', and the transformer's and explainer's (pkg/apis/serving/v1beta1/
    inference_service.go L27-56), labelled as KServe labels them (components/predictor.go buildObjectMeta)."""
    spec = _mapping(_known(peek(r.props, "spec"), "spec"))
    found: list[Workload] = []
    predictors = [("spec.predictor", peek(spec, "predictor"))]
    predictors += [
        (f"spec.canary[{i}].predictor", peek(c, "predictor")) for i, c in enumerate(as_list(spec.get("canary")))
    ]
    for where, predictor in predictors:
        predictor = _known(predictor, where)
        if not isinstance(predictor, dict):
            continue
        for w in _predictor_pods(r, stack, predictor):
            # The predictor's own pod keeps the service's name in messages; its workers and canaries say where.
            w.where = f"{where}.{w.where}" if w.where else ("" if where == "spec.predictor" else where)
            found.append(w)
    for component in ("transformer", "explainer"):
        pod = _known(spec.get(component), f"spec.{component}")
        if not isinstance(pod, dict):
            continue
        w = _from_pod_spec(r, pod, _component_labels(r, pod, component), _component_annotations(r, pod))
        w.where = f"spec.{component}"
        if component == "explainer" and pod.get("art") is not None:
            # The ART explainer's container is KServe's, from its inferenceservice-config (explainer.GetContainer).
            w.containers = [{**_mapping(pod.get("art")), "name": "kserve-container"}, *w.containers[1:]]
            w.complete, w.missing = False, "the ART explainer's image and command come from KServe's configuration"
        if w.containers:
            found.append(w)
    return found


def _component_labels(r: Resource, component: dict, name: str) -> dict:
    return {**r.labels, **_mapping(component.get("labels")), ISVC_LABEL: r.k8s_name, ISVC_COMPONENT_LABEL: name}


def _component_annotations(r: Resource, component: dict) -> dict:
    return {**r.annotations, **_mapping(component.get("annotations"))}


def _predictor_pods(r: Resource, stack: Stack | None, predictor: dict) -> list[Workload]:
    """The predictor's pod: its runtime's containers with `model` merged into kserve-container, then the runtime's
    other containers and `predictor.containers` (components/predictor.go L430-493); and, with `workerSpec`, the
    worker pod: the runtime's workerSpec merged with the predictor's (L578-603)."""
    labels = _component_labels(r, predictor, "predictor")
    annotations = _component_annotations(r, predictor)
    model = _known(predictor.get("model"), "predictor.model")
    sidecars = _dicts(predictor.get("containers"))
    if not isinstance(model, dict):
        w = _from_pod_spec(r, predictor, labels, annotations)
        return [w] if w.containers else []
    runtime = serving_runtime(r, stack, predictor)
    if runtime is None:
        name = model.get("runtime") or f"auto-selected for format {peek(model, 'modelFormat', 'name')}"
        w = _from_pod_spec(r, predictor, labels, annotations)
        w.containers = [{**model, "name": MAIN_CONTAINER}, *sidecars]
        w.complete, w.missing = False, f"serving runtime {name!r} is not in this stack"
        worker = predictor.get("workerSpec")
        workers = [_worker_pod(r, {}, _mapping(worker), labels, annotations)] if isinstance(worker, dict) else []
        for incomplete in workers:
            incomplete.complete, incomplete.missing = False, w.missing
        return [w, *[x for x in workers if x.containers]]

    runtime_spec = _mapping(runtime.props.get("spec"))
    # The runtime's pod labels and annotations rank below the service's and the predictor's (buildObjectMeta).
    labels = {**_mapping(runtime_spec.get("labels")), **labels}
    annotations = {**_mapping(runtime_spec.get("annotations")), **annotations}
    runtime_containers = _dicts(runtime_spec.get("containers"))
    main = next((c for c in runtime_containers if c.get("name") == MAIN_CONTAINER), None)
    main = main or (runtime_containers[0] if runtime_containers else {})
    by_name = {c.get("name"): c for c in runtime_containers if c is not main}
    containers = [_merge_container(main, model)] + [c for c in runtime_containers if c is not main]
    for c in sidecars:
        if c.get("name") == TRANSFORMER_CONTAINER and TRANSFORMER_CONTAINER in by_name:
            index = containers.index(by_name[TRANSFORMER_CONTAINER])
            containers[index] = _mapping(strategic_merge(by_name[TRANSFORMER_CONTAINER], c, CONTAINER_MERGE_KEYS))
        else:
            containers.append(c)
    # Pod-level fields: KServe's MergePodSpec, a strategic merge of the predictor's pod spec onto the runtime's.
    pod = _mapping(strategic_merge(runtime_spec, {k: v for k, v in predictor.items() if k != "model"}, POD_MERGE_KEYS))
    pods = [Workload(r, pod, containers, _dicts(pod.get("initContainers")), labels, annotations=annotations)]
    if isinstance(predictor.get("workerSpec"), dict):
        worker = _worker_pod(r, _mapping(runtime_spec.get("workerSpec")), predictor["workerSpec"], labels, annotations)
        if not isinstance(runtime_spec.get("workerSpec"), dict):
            worker.complete, worker.missing = False, f"serving runtime {runtime.k8s_name} has no workerSpec"
        if worker.containers:
            pods.append(worker)
    return pods


def _worker_pod(r: Resource, runtime_worker: dict, ours: dict, labels: dict, annotations: dict) -> Workload:
    """The multi-node worker pod: the runtime's worker-container merged with the first of ours, the pod specs merged
    (MergeServingRuntimeAndInferenceServiceSpecs); only that container runs."""
    theirs = next((c for c in _dicts(runtime_worker.get("containers")) if c.get("name") == WORKER_CONTAINER), {})
    mine = (_dicts(ours.get("containers")) or [{}])[0]
    container = _mapping(strategic_merge(theirs, mine, CONTAINER_MERGE_KEYS)) if theirs else mine
    pod = _mapping(strategic_merge(runtime_worker, ours, POD_MERGE_KEYS))
    w = Workload(
        r, pod, [container] if container else [], _dicts(pod.get("initContainers")), labels, annotations=annotations
    )
    w.where = "workerSpec"
    return w


def _inference_graph(r: Resource) -> Workload:
    """The router pod KServe runs for an InferenceGraph (policies/upstream.py KSERVE_GRAPH_ROUTER_CONTAINER): its
    security context is KServe's own; its image, and its resources unless the graph sets them, KServe's config."""
    spec = _mapping(_known(peek(r.props, "spec"), "spec"))
    resources = spec.get("resources")
    container = {"name": r.k8s_name, **KSERVE_GRAPH_ROUTER_CONTAINER, **({"resources": resources} if resources else {})}
    pod = {k: spec[k] for k in KSERVE_GRAPH_ROUTER_POD_FIELDS if k in spec} | {"automountServiceAccountToken": False}
    labels = {**r.labels, KSERVE_GRAPH_LABEL: r.k8s_name}
    w = Workload(r, pod, [container], [], labels, annotations=dict(r.annotations))
    w.complete, w.missing = False, "the router's image and default resources come from KServe's inferenceservice-config"
    w.where = "router pod"
    return w


def command_line(container: dict) -> list[str]:
    """command + args as tokens, splitting items that hold several flags ("--a 1 --b 2")."""
    tokens: list[str] = []
    for item in list(container.get("command") or []) + list(container.get("args") or []):
        if isinstance(item, str):
            words = shell_words(item)
            tokens.extend(item.split() if words is None else words)
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
