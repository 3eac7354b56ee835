"""Upstream behaviour the program relies on: who creates which object, what is admitted, what a repo serves.

Each fact is stated once, with its source at the pinned version; components cite the constant, the
README lists them (`make docs`) and tests/test_upstream_behaviour.py asserts each against the rendered
plans. Refresh: re-read the source at the new pin, update the statement, and let those tests tell what
the program must change.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UpstreamFact:
    name: str
    statement: str
    source: str  # repo@ref:path (lines), or the FACTS file section that cites it


FACTS: dict[str, UpstreamFact] = {}


def _fact(name: str, statement: str, source: str) -> UpstreamFact:
    fact = UpstreamFact(name, statement, source)
    FACTS[name] = fact
    return fact


KARMADA_SCHEDULES_ONLY_MEMBERS_SERVING_THE_KIND = _fact(
    "karmada-schedules-only-members-serving-the-kind",
    "Karmada's scheduler (v1.18.2) leaves a cluster out of a new scheduling decision while its Cluster status does "
    "not list the binding's kind among its API enablements (APIEnablement filter), which a member that just joined "
    "has not reported yet. A Divided binding scheduled without that member is not scheduled again when the member "
    "later reports the kind (only a placement or replica change, an explicit reschedule or a deleted target "
    "cluster reschedules it; Cluster status updates do not even requeue it), and under static weights its spread "
    "constraints are ignored. A Duplicated binding is scheduled afresh each time it is processed, and a cluster "
    "spread constraint whose minGroups exceeds the feasible clusters fails the scheduling, which is retried with "
    "back-off: `minGroups` = `maxGroups` = the members makes a model wait until every member serves the kind, "
    "as the filter's own comment advises.",
    "karmada-io/karmada@v1.18.2:pkg/scheduler/framework/plugins/apienablement/api_enablement.go L51-L80; "
    "pkg/scheduler/scheduler.go L395-L469 (doScheduleBinding: Duplicated always, Divided only on placement or "
    "replica change, RescheduleTriggeredAt, terminating clusters), L948-L955 (legacyHandleErr: AddRateLimited); "
    "pkg/scheduler/event_handler.go L326-L354 (updateCluster: labels, generation or deletion only); "
    "pkg/scheduler/core/spreadconstraint/select_clusters.go L27-L69 (static weights ignore spread constraints; "
    "Duplicated ignores available resources), select_clusters_by_cluster.go L25-L30 (fewer than minGroups fails)",
)

KARMADA_AGENT_REGISTERS = _fact(
    "karmada-agent-registers-its-cluster",
    "karmada-agent (v1.18.2) creates its member's `cluster.karmada.io/v1alpha1` Cluster itself, with "
    "`spec.id` = the member's kube-system Namespace UID and `syncMode: Pull`, and exits when a Cluster of that "
    "name exists with another or no `spec.id`. It sets no labels (no flag for them); the chart passes no "
    "--cluster-provider/--cluster-region/--cluster-zones. A Cluster pre-created with that `spec.id` and "
    "`syncMode: Pull` is re-registered (the agent rewrites only `spec`; labels are kept). So the program creates "
    "pull members' Clusters with the id and the labels, and keeps `spec.id` the member's current kube-system UID "
    "(no ignoreChanges on `spec`): after a member cluster is replaced its agent exits until the id is its own.",
    "karmada-io/karmada@v1.18.2:cmd/agent/app/agent.go L181-200, L449-498; pkg/util/cluster.go L82-119, "
    "L168-196; charts/karmada/templates/karmada-agent.yaml L108-117 (FACTS-3.md §9)",
)

PATCH_FORCE_TAKES_OVER_FIELDS = _fact(
    "kubernetes-patch-force-takes-over-fields",
    "A pulumi-kubernetes (v4.34.2) `*Patch` resource applies its fields by server-side apply with a field manager "
    "of its own; a field another manager owns is a conflict, an error unless the patch carries the annotation "
    '`pulumi.com/patchForce: "true"`, which forces the apply and takes the field over. The global stack\'s '
    "patch of the Karmada Service's `loadBalancerSourceRanges` carries it, and the host's stack, which created "
    "the Service, ignores changes to that field so the two never fight over it.",
    "pulumi/pulumi-kubernetes@v4.34.2: sdk/python/pulumi_kubernetes/core/v1/ServicePatch.py (class docstring, "
    "installed as pulumi_kubernetes 4.34.2); docs: registry/packages/kubernetes/how-to-guides/"
    "managing-resources-with-server-side-apply",
)

PULUMI_CREATES_OBJECTS = _fact(
    "pulumi-kubernetes-creates-objects",
    "With its defaults (server-side apply mode on, upsertExistingObjects off), pulumi-kubernetes (v4.34.2) creates "
    "a resource's object with a plain create (field manager `pulumi-kubernetes`): an object that already exists "
    "fails the `up`. A `*Patch` resource is a server-side apply with its own field manager "
    "(`pulumi.com/patchFieldManager`, else `pulumi-kubernetes-<random>`), forced only with "
    "`pulumi.com/patchForce`. A kind not served yet (its CRD missing) or a namespace not there is retried 5 times "
    "with doubling back-off. Deployments, StatefulSets, DaemonSets, Jobs, Pods, Services (endpoints; a load "
    "balancer's address) and PersistentVolumeClaims (Bound, or Pending under WaitForFirstConsumer) are awaited, "
    "10 minutes by default; custom resources are not (generic await is opt-in, PULUMI_K8S_AWAIT_ALL). A Secret of "
    "type `kubernetes.io/service-account-token` is awaited until its data is filled (by the token controller), "
    "for a hard-coded 5 seconds, after which the create fails. The rehearsal replays exactly this "
    "(tools/rehearsal/pulumi_k8s.py).",
    "pulumi/pulumi-kubernetes@v4.32.0 (the mirror's newest tag; the module proxy refuses v4.34.2): "
    "provider/pkg/await/await.go L150-L297 (Creation: SSA only for Patch or upsert, retries, AlreadyExists), "
    "L1031 patchForce; provider/pkg/provider/provider.go L651-L694 (defaults), L2878-L2910 fieldManagerName; "
    "provider/pkg/await/awaiters.go L183-L240, L288-L322, L431-L462 (token Secret: WatchUntil 5 s), "
    "provider/pkg/watcher/watcher.go L67-L80, L107-L130 (a timeout is an error); installed pulumi_kubernetes "
    "4.34.2: Provider upsert_existing_objects and *Patch docstrings",
)

CLIENT_GO_RETRIES_RETRY_AFTER = _fact(
    "client-go-retries-what-the-server-says-to-retry",
    "client-go's rest client (v0.33, what kube-controller-manager, the controllers and the Pulumi provider's "
    "client use) retries a request whose answer is 429 or any 5xx carrying a Retry-After header in whole seconds, "
    "after waiting that long, up to 10 times by default, then returns the last answer; without the header it does "
    "not retry. An API server answers 429 with Retry-After while the watch cache of a kind is (re)initializing "
    '("storage is (re)initializing", e.g. just after its CRD is established, or while a storage backend '
    "restarts), so a client waits it out instead of failing; the rehearsal's REST client does the same.",
    "kubernetes/kubernetes@v1.33.13 staging: client-go/rest/with_retry.go L148-L191 (IsNextRetry), L309-L318 "
    "(checkWait: 429 or >= 500 with Retry-After), client-go/rest/request.go L170 (maxRetries 10), L1542-L1549 "
    "(retryAfterSeconds); apiserver/pkg/storage/cacher/cacher.go L502, L744 (NewTooManyRequests while not ready), "
    "cacher/ready.go L125-L127",
)

KUBE_APISERVER_WATCH_STREAM = _fact(
    "kube-apiserver-watch-stream",
    "A watch (`?watch=true&resourceVersion=RV`, kube-apiserver v1.33) answers 200 with a chunked stream of "
    'WatchEvents, one JSON object per line (`{"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": ...}`), '
    "every change after RV, flushed whenever no further event is queued (so a chunk may hold several events or part "
    "of one); DELETED carries the object as it was, at the resourceVersion of its deletion; with allowWatchBookmarks "
    "it may send BOOKMARK events that carry only a resourceVersion (the watch cache: at most about each minute and "
    "2 s before timeoutSeconds, and only once the kind's cache has passed the watch's version, so a kind nothing "
    "writes to may get none; the API promises none); it ends the stream after timeoutSeconds. resourceVersions are "
    "etcd revisions the server parses and compares as unsigned integers, so a later change has a larger one. A watch "
    "from a resourceVersion the watch cache no longer holds is a 200 stream of one ERROR event whose object is a "
    "Status 410 Expired (\"too old resource version\"), not an HTTP error. client-go's reflector (an informer's) "
    "lists, watches from the list's resourceVersion with bookmarks, resumes from the last resourceVersion it saw "
    "when a watch ends, watches again after a backoff on a 429, and lists again after a backoff on an Expired or "
    "Gone error (an ERROR event's among them), on any other error (an internal one too, unless the reflector is "
    "given a retry duration for those: 0 by default), and when a watch ends within a second with no event. The "
    "rehearsal's client keeps the kinds its loops poll the same way (a second's wait, each error listed again; a "
    "watch silent past timeoutSeconds has stalled), and also takes its own writes' answers into the cache. A list "
    "asked with `Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` answers each item, and a "
    "watch asked with `as=PartialObjectMetadata` each event's object, as a PartialObjectMetadata holding the "
    "object's whole metadata, managedFields included (client-go's metadata informers ask so); the rehearsal's "
    "cert-manager stand-in keeps the kinds it injects CA bundles into that way, without their managedFields.",
    "kubernetes/kubernetes@v1.33.13 staging: apiserver/pkg/endpoints/handlers/watch.go L144 (each event's object "
    "encoded through the asked conversion), L215-L291 (HandleHTTP: chunked, an encoded event at a time, flushed when "
    "none is queued, ends on timeout), handlers/get.go L260-L264 (timeoutSeconds), handlers/response.go L83-L88, "
    "L258-L274 (doTransformObject, watch included), L422-L439 (asPartialObjectMetadata), L441-L480 (of a list); "
    "apiserver/pkg/storage/cacher/cacher.go L74-L76, L403 (bookmarks at most each minute), L895-L906 (a bookmark "
    "at the kind's last processed version), L606-L614 (an expired version as an ERROR event), L1305-L1328 "
    "(newErrWatcher); cacher/cache_watcher.go L222-L250 (nextBookmarkTime: 2 s before the deadline), L535-L540 "
    "(nothing at or before the watch's version, bookmarks included), L388-L396 (a deletion: the old object at the "
    "event's version); cacher/watch_cache.go L795, L835-L837 (getAllEventsSinceLocked: NewResourceExpired \"too old "
    'resource version"); storage/etcd3/watcher.go L695-L702 (a deletion at its revision); '
    "storage/api_object_versioner.go L90-L103 (ParseUint); apimachinery/pkg/apis/meta/v1/types.go L344-L348 (no "
    "bookmark promised); apimachinery/pkg/api/errors/errors.go L273-L280 (410, reason Expired); "
    "apimachinery/pkg/apis/meta/v1/watch.go L31-L40 (WatchEvent); apimachinery/pkg/api/meta/meta.go L112-L135 "
    "(AsPartialObjectMetadata copies ObjectMeta, ManagedFields too); client-go/tools/cache/reflector.go L484, "
    "L512 (AllowWatchBookmarks), L530-L557 (a closed watch: watch again; a 429: back off, watch again; an internal "
    "error: watch again only while retry_with_deadline.go L67-L70 allows; others: list again), L878 (an ERROR "
    "event is an error), L942-L945 (a very short watch), L1007-L1013 (Expired or Gone: list again); "
    "client-go/metadata/metadata.go L242, L300 (the metadata client's Accept for list and watch)",
)

KUBELET_READINESS_PROBE_CADENCE = _fact(
    "kubelet-readiness-probe-cadence",
    "The kubelet (v1.33) runs a container's readiness probe each periodSeconds (the API server defaults a probe's "
    "periodSeconds to 10, timeoutSeconds to 1, successThreshold to 1 and failureThreshold to 3), from "
    "initialDelaySeconds after the container's start, with the readiness result Failure until then; while a started "
    "container is not ready, each update of its pod's status also runs the probe at once (and restarts the period). "
    "A result changes the container's readiness only after successThreshold successes, or failureThreshold "
    "failures, in a row. So a ready container is probed each period, stays ready through a failure or two, and "
    "turns unready after failureThreshold periods of failures. The rehearsal's kubelet keeps a ready container's "
    "readiness so, and probes a container not yet ready each second (its pass).",
    "kubernetes/kubernetes@v1.33.13: pkg/kubelet/prober/worker.go L111-L114 (readiness starts as Failure), "
    "L156-L167 (a ticker of periodSeconds), L192-L197 (a manual run resets it), L288-L291 (initialDelaySeconds), "
    "L324-L335 (thresholds of results in a row); pkg/kubelet/prober/prober_manager.go L289-L316 (a started "
    "container not ready: a manual run at each status update); pkg/apis/core/v1/defaults.go L236-L249 "
    "(SetDefaults_Probe)",
)

HELM_INSTALLS_IN_ORDER = _fact(
    "helm-install-order-and-wait",
    "A `helm.sh/v3:Release` runs Helm's install action (helm v3.20.2 in pulumi-kubernetes' go.mod): the chart's "
    "crds/ first (unless skipCrds), then pre-install hooks (`helm-install-runs-hooks`), then every template in "
    "Helm's kind order (kinds it does not list, webhook configurations among them, last, alphabetically); with "
    "wait (the default) it then waits for the release's objects as `helm-wait-readiness` says, for Jobs only with "
    "waitForJobs; then it runs the post-install hooks; atomic rolls the release back when the wait times out.",
    "helm/helm@v3.20.2:pkg/releaseutil/kind_sorter.go L31-L68 (InstallOrder), L135-L160 (lessByKind), "
    "pkg/kube/ready.go L253 (serviceReady), pkg/action/install.go L444-L485 (performInstall); "
    "pulumi/pulumi-kubernetes@v4.32.0:provider/go.mod L30",
)

HELM_WAIT_READINESS = _fact(
    "helm-wait-readiness",
    "Helm's install wait (v3.20.2, what a `helm.sh/v3:Release` runs unless skipAwait) polls every 2 s until the "
    "release's timeout: each poll checks the release's objects in install order and stops at the first not ready; "
    "the wait succeeds at a poll that finds every one ready (one ready at an earlier poll is asked again); a "
    "NotFound ends it at once, another error after 30 retries. It reads the live object, never Pulumi's skipAwait "
    "annotation. A Pod is ready when its Ready condition is True; a Deployment when paused, or when its new "
    "ReplicaSet (of those its selector selects and it controls, the oldest with its pod template, pod-template-hash "
    "aside) has `replicas - maxUnavailable` ready replicas, that ReplicaSet's and the Deployment's generations "
    "observed (maxUnavailable rounded down from a percentage, 1 when it and maxSurge both come to 0, 0 for "
    "Recreate): at the API's default 25 % a Deployment of 4 passes with 3 ready; a DaemonSet when its generation is "
    "observed and, rolling, every desired pod is updated and `desired - maxUnavailable` (rounded up) are ready: at "
    "the default 1, a DaemonSet on one node passes with none ready; an OnDelete DaemonSet or StatefulSet at once; a "
    "rolling StatefulSet when its partition's pods are updated, exactly `replicas` are ready and (partition 0) its "
    "current revision is the update revision; a PVC when Bound; a Service unless it is not ExternalName and has no "
    "cluster IP, or is a LoadBalancer with neither external IPs nor ingress; a templated CRD when Established (or "
    "its names refused); a ReplicaSet or ReplicationController when its generation is observed and all the pods "
    "its selector selects are ready; a Job, only with waitForJobs, when its completions succeeded (more failures "
    "than backoffLimit: an error). Any other kind is ready once created. So a release's wait can end before every "
    "pod of its DaemonSets, or of a large Deployment, is Ready: what depends on the release must wait for what it "
    "needs.",
    "helm/helm@v3.20.2:pkg/kube/ready.go L92-L205 (IsReady), L230-L238 (isPodReady), L240-L251 (jobReady), "
    "L253-L280 (serviceReady), L282-L288 (volumeReady), L290-L307 (deploymentReady), L309-L340 (daemonSetReady), "
    "L365-L383 (crdReady), L385-L438 (statefulSetReady), L440-L456; pkg/kube/wait.go L49-L91 (waitForResources), "
    "L93-L110 (isRetryableError); pkg/kube/client.go L286-L314 (Wait: PausedAsReady L292; WaitWithJobs: CheckJobs "
    "L307); internal/third_party/k8s.io/kubernetes/deployment/util/deploymentutil.go L42-L63 (ListReplicaSets), "
    "L65-L91 (ReplicaSetsByCreationTimestamp, FindNewReplicaSet), L137-L148 (MaxUnavailable), L159-L178 "
    "(ResolveFenceposts); pulumi/pulumi-kubernetes@v4.32.0:provider/pkg/provider/helm_release.go L607-L612",
)

KEDA_SCALES_AN_IDLE_TARGET_TO_ZERO_AT_ONCE = _fact(
    "keda-scales-an-idle-target-to-zero-at-once",
    "KServe (v0.20.0) creates an InferenceService's predictor Deployment without `replicas` unless its autoscaler "
    "class is none, and leaves its replicas alone afterwards: with the external class (KEDA) the API server starts "
    "it at 1 replica, whatever minReplicas says. KEDA's operator (v2.20.2) polls a ScaledObject as soon as its scale "
    "loop starts, then every pollingInterval; at a poll whose triggers are all inactive without an error, a target "
    "above zero whose minReplicaCount is 0 (no idleReplicaCount, not paused, not forced active) is scaled to zero "
    "when the ScaledObject was never active and its initialCooldownPeriod (0 unless set) has passed since its "
    "creation, or its cooldownPeriod since it was last active; with no trigger active, a trigger's error without "
    "a fallback scales nothing, and a ScaledObject whose triggers are all cpu or memory is taken as active. The "
    "operator sees only the namespaces of its WATCH_NAMESPACE (a comma-separated list; empty: all). So a model at "
    "zero runs one pod at bring-up until KEDA's first poll that reads no load.",
    "kserve/kserve@v0.20.0:pkg/controller/v1beta1/inferenceservice/reconcilers/deployment/deployment_reconciler.go "
    "L170-L172 (replicas only for autoscaler class none), L252-L258 and L475-L481 (replicas ignored otherwise); "
    "kedacore/keda@v2.20.2:pkg/scaling/scale_handler.go L180-L198 (startScaleLoop: checkScalers before its first "
    "wait), L821-L828, L918-L922 (cpu and memory only: active), pkg/scaling/executor/scale_scaledobjects.go "
    "L37-L56, L83-L101 (inactive: scaleToZeroOrIdle; an error without a fallback: no scaling), L189-L217 "
    "(initialCooldownPeriod, cooldownPeriod), pkg/scaling/executor/scale_executor.go L35 "
    "(defaultInitialCooldownPeriod 0), apis/keda/v1alpha1/scaledobject_types.go L58-L67, L238-L283 (pause and "
    "force-activation annotations), pkg/util/watch.go L14-L31 (WATCH_NAMESPACE)",
)

KSERVE_DECLARES_EXTENDED_RESOURCES = _fact(
    "kserve-declares-extended-resources",
    "KServe (v0.20.0) refuses an InferenceService with a workerSpec (a multi-node replica) whose model or worker "
    "container asks, in requests or limits, for a resource other than cpu, memory, storage, ephemeral-storage and "
    "its GPU types (nvidia.com/gpu, amd.com/gpu, intel.com/gpu, habana.ai/gaudi, and those the "
    "inferenceservice-config's multiNode customGPUResourceTypeList adds once the process has read it): 'Unknown "
    "GPU resource type', unless the InferenceService's annotation serving.kserve.io/gpu-resource-types, a "
    "non-empty JSON array of non-empty strings, names it. The annotation adds to KServe's own types, which stay "
    "first in the list the multi-node Deployment's GPU count is given to (read from the pod template's "
    "annotations), and the Ray node and GPU arithmetic never reads it: a declared EFA interface "
    "(vpc.amazonaws.com/efa) is never counted as GPUs. So a multi-node replica on EFA nodes must declare its EFA "
    "interfaces or its InferenceService never reaches its cluster.",
    "kserve/kserve@v0.20.0:pkg/apis/serving/v1beta1/inference_service_validation.go L135, L385-L441 "
    "(validateMultiNodeVariables); pkg/utils/utils.go L354-L392 (HasUnknownGpuResourceType), L394-L421 "
    "(IsValidCustomGPUArray), L423-L450 (UpdateGPUResourceTypeListByAnnotation); pkg/constants/constants.go "
    "L309-L323; pkg/apis/serving/v1beta1/configmap.go L272, pkg/utils/utils.go L451-L468 (the config's list); "
    "pkg/controller/v1beta1/inferenceservice/components/predictor.go L686-L692 (computeRayNodeAndGPUs: utils.go "
    "L473-L491, the global list); "
    "pkg/controller/v1beta1/inferenceservice/reconcilers/deployment/deployment_reconciler.go L407-L447 "
    "(addGPUResourceToDeployment); seen in a rehearsal of the multi-node option on 2026-12-04: each member's "
    "karmada-agent refused by KServe's webhook",
)

KSERVE_POD_APP_LABEL = _fact(
    "kserve-pod-app-label",
    "KServe (v0.20.0) in Standard mode labels the pods of each Deployment it makes `app: isvc.<Deployment>`: an "
    "InferenceService's predictor pods `isvc.<name>-predictor`, and a multi-node replica's worker pods "
    "`isvc.<name>-predictor-worker`, which otherwise carry the predictor's labels (the InferenceService's, the "
    "predictor's, serving.kserve.io/inferenceservice, component). The `multinode/role` label (head, worker) is put "
    "on the head's and the workers' headless Services only, never on pods. So only `app` tells a multi-node "
    "replica's head pod, which serves on the container port, from its workers.",
    "kserve/kserve@v0.20.0:pkg/controller/v1beta1/inferenceservice/reconcilers/deployment/deployment_reconciler.go "
    "L140-L147 (createRawDefaultDeployment), L176-L184 (createRawWorkerDeployment); pkg/constants/constants.go "
    "L749, L755-L762; pkg/controller/v1beta1/inferenceservice/reconcilers/service/service_reconciler.go L193-L233; "
    "pkg/controller/v1beta1/inferenceservice/components/predictor.go L533-L546; seen in a rehearsal of the "
    "multi-node option on 2026-12-04: the picker's pool held no pod",
)

HELM_INSTALL_RUNS_HOOKS = _fact(
    "helm-install-runs-hooks",
    "Helm's install (v3.20.2) runs a release's pre-install hooks before it creates any template's object and its "
    "post-install hooks after the wait, unless hooks are disabled (pulumi-kubernetes passes `disableWebhooks` as "
    "DisableHooks). A hook is an object whose `helm.sh/hook` names only known events (one naming an unknown event "
    "is skipped, never created); its weight is `helm.sh/hook-weight` as an integer (else 0). The hooks of an event "
    "run one at a time, ordered by template path, then kind (InstallOrder), then stably by weight and name; each is "
    "deleted first when its `helm.sh/hook-delete-policy` has before-hook-creation (the default when it names "
    "none), created, and watched until done before the next starts: a Job until its Complete condition is True "
    "(its Failed condition fails the install), a Pod until Succeeded (Failed fails it), any other kind once "
    "created, each for up to the release's timeout (pulumi-kubernetes: 300 s unless set), after which the install "
    "fails (`failed pre-install: ...`). After all succeed, those with hook-succeeded are deleted, the last first; "
    "hook objects are not the release's own (no managed-by label), and a CRD hook is never deleted. So a Secret a "
    "pre-install Job makes exists before the release's pods that mount it are created.",
    "helm/helm@v3.20.2:pkg/action/install.go L444-L485 (performInstall: execHook pre-install L447-L452, Create "
    "L456-L466, Wait L469-L478, execHook post-install L480-L484); pkg/action/hooks.go L36-L133 (execHook), "
    "L135-L146 (hookByWeight), L147-L172 (deleteHookByPolicy, never a CRD); pkg/kube/client.go L489-L491 (Delete: "
    "background propagation), L555-L559 (WatchUntilReady), L745-L846 (watchUntilReady, waitForJob, "
    "waitForPodSuccess); pkg/releaseutil/manifest_sorter.go L54-L66 (events), L77-L110 (SortManifests), "
    "L139-L234 (hook parsing, weight); pkg/release/hook.go L28-L71; pulumi/pulumi-kubernetes@v4.32.0:"
    "provider/pkg/provider/helm_release.go L64 (defaultTimeoutSeconds 300), L607-L612 (DisableHooks, Wait, Timeout)",
)

KUBELET_WAITS_FOR_REFERENCED_OBJECTS = _fact(
    "kubelet-waits-for-referenced-objects",
    "The kubelet (v1.33) mounts a pod's volumes before it creates the pod's sandbox and waits while a `secret`, "
    "`configMap` or `projected` volume names a Secret or ConfigMap that does not exist, or an item key it does not "
    'have (FailedMount `MountVolume.SetUp failed for volume ...: secret "x" not found`, containers waiting in '
    "ContainerCreating, retried; the sync gives up after 2 min 3 s and tries again). It then builds each "
    "container's environment when it starts it: an `envFrom` secretRef/configMapRef or an `env[].valueFrom` "
    "secretKeyRef/configMapKeyRef naming a missing object or key fails the container with "
    "CreateContainerConfigError. `optional: true` exempts the reference in both. Such a pod is never Ready, so a "
    "Secret a Helm hook or a controller makes must exist before the pods that mount it can serve.",
    "kubernetes/kubernetes@v1.33.13:pkg/kubelet/kubelet.go L2047 (SyncPod: WaitForAttachAndMount before the "
    "runtime's SyncPod); pkg/kubelet/volumemanager/volume_manager.go L66-L75 (podAttachAndMountTimeout 2m3s), "
    "L393-L435; pkg/volume/secret/secret.go L176-L207, L259-L285; pkg/volume/configmap/configmap.go L180-L211, "
    "L263-L292; pkg/volume/projected/projected.go L245-L300; pkg/volume/util/operationexecutor/"
    "operation_generator.go L482, operation_executor.go L307-L324 (the event text); pkg/kubelet/kubelet_pods.go "
    "L711 (makeEnvironmentVariables), L750-L800 (envFrom), L840-L897 (valueFrom keys), L82 (ContainerCreating); "
    "pkg/kubelet/kuberuntime/kuberuntime_container.go L67-L68, L251-L258 (CreateContainerConfigError); "
    "pkg/kubelet/secret/secret_manager.go L155, pkg/kubelet/configmap/configmap_manager.go L154, "
    "pkg/kubelet/util/manager/watch_based_manager.go L330 (the NotFound text)",
)

KSERVE_NEEDS_CERT_MANAGER = _fact(
    "kserve-resources-needs-cert-manager",
    "kserve-resources (v0.20.0) always renders a cert-manager `Certificate` (serving-cert) and `Issuer` for its "
    "webhooks, with `cert-manager.io/inject-ca-from` on the webhook configurations: without cert-manager's CRDs "
    "and webhook running, the release fails. cert-manager v1.21.1 is published as "
    "oci://quay.io/jetstack/charts/cert-manager version v1.21.1 and installs its CRDs with crds.enabled.",
    "kserve/kserve@v0.20.0:charts/kserve-resources/files/kserve/resources.yaml L535-556, "
    "templates/kserve/resources.yaml; cert-manager/cert-manager@v1.21.1:RELEASE.md L16, "
    "deploy/charts/cert-manager/values.yaml L102-117 (FACTS-3.md §1)",
)

REPOSITORIES_SERVE_PINS = _fact(
    "repositories-serve-the-pinned-charts",
    "A chart is installed from a repository whose index lists the pinned version. The raw karmada master/charts "
    "index stops at v1.18.1 (patch releases arrive only by a manual PR); v1.18.2 is pushed to "
    "oci://docker.io/karmada. volcano-sh.github.io/helm-charts serves 1.15.0 as its newest. OCI registries and "
    "repositories without a copied index are not determinable offline.",
    "helm-index/* snapshots, karmada-io/karmada@v1.18.2:.github/workflows/dockerhub-released-chart.yml, "
    "Makefile L100-103; volcano-sh/helm-charts@be34e957:index.yaml (FACTS-3.md §3)",
)

# The classes: platform_catalog.pod_priorities.GKE_CRITICAL_PRIORITY_CLASSES (the policy pack reads them too).
GKE_CRITICAL_PODS_NEED_QUOTA = _fact(
    "gke-critical-pods-need-a-quota",
    "GKE admits a pod with priorityClassName system-node-critical or system-cluster-critical outside kube-system "
    "only if its namespace has a ResourceQuota whose scopeSelector matches that class (PriorityClass In [...]), "
    "else `insufficient quota to match these scopes`. Volcano's templates, the GPU Operator's and Karmada's "
    "values (agent included) use these classes by default.",
    "kubernetes.io/docs/concepts/policy/resource-quotas/#limit-priority-class-consumption-by-default; GKE's "
    "kube-system/gcp-critical-pods (openservicemesh/osm#4408, NVIDIA/aicr#915) (FACTS-3.md §8)",
)

GKE_NODE_COUNT_PER_ZONE = _fact(
    "gke-initial-node-count-is-per-zone",
    "A GKE node pool's `initialNodeCount` (and `node_count`) is per zone: a regional pool over N zones starts "
    "with N x initialNodeCount nodes; `autoscaling.totalMin/MaxNodeCount` bound the total.",
    "pulumi_gcp container.NodePool initialNodeCount: 'In regional or multi-zonal clusters, this is the number "
    "of nodes per zone' (pulumi_gcp 10.2.0, from the google provider's container_node_pool docs)",
)

GKE_POOLS_NEED_THEIR_OWN_DCGM_EXPORTER = _fact(
    "gke-managed-gpu-pools-need-their-own-dcgm-exporter",
    "On GKE pools whose driver GKE installs, the GPU Operator does not run (so neither does its DCGM exporter), "
    "and GKE's managed DCGM metrics go to Cloud Monitoring, not to an in-cluster Prometheus; NVIDIA's "
    "dcgm-exporter chart runs there with GKE's driver directory /home/kubernetes/bin/nvidia mounted at "
    "/usr/local/nvidia and a critical-pods quota in its namespace.",
    "NVIDIA/dcgm-exporter@4.5.3-4.8.2:deployment (chart 4.8.2, priorityClassName system-node-critical); "
    "GoogleCloudPlatform/container-engine-accelerators@992db81:gpudirect-rdma/nccl-test.yaml (driver mount, "
    "FACTS-3.md §7); cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics",
)

# --- The serving path: KServe's LLMInferenceService, the endpoint pickers, the AI Gateway -----------------------

LLM_INFERENCE_SERVICE_INSTALL = _fact(
    "llm-inference-service-install",
    "KServe v0.20.0 splits LLMInferenceService from InferenceService: its CRDs ship only in kserve-llmisvc-crd, "
    "its controller (cmd/llmisvc) only in kserve-llmisvc-resources, and the well-known LLMInferenceServiceConfigs "
    "every LLMInferenceService is merged over (kserve-config-llm-decode-template, -prefill-template, -scheduler) "
    "only in kserve-runtime-configs with llmisvcConfigs.enabled (off by default); a missing one leaves the service "
    "not ready (ConfigNotFound). kserve-resources and kserve-llmisvc-resources both render the shared Issuer, "
    "ClusterStorageContainer and inferenceservice-config unless createSharedResources is false, and "
    "kserve-llmisvc-resources carries the Inference Extension CRDs (InferencePool v1 identical to the v1.5.0 "
    "release's, v1alpha2, and llm-d.ai's InferenceObjective and InferenceModelRewrite v1alpha2, the objective's spec "
    "identical to llm-d-router v0.9.0's) unless createGIECRDs is false. The llmisvc controller watches "
    "InferencePools only if their CRD exists when it starts. KServe's own installer installs kserve-crd, "
    "kserve-llmisvc-crd, kserve-resources, kserve-llmisvc-resources (createSharedResources false, adopting any "
    "existing Inference Extension CRDs into it), then kserve-runtime-configs once the llmisvc webhook serves.",
    "kserve/kserve@v0.20.0:charts/kserve-llmisvc-resources/templates/llmisvc/resources.yaml, templates/common/"
    "*.yaml, values.yaml (createSharedResources, llmisvc.createGIECRDs), files/llmisvc/resources.yaml "
    "(inferenceobjectives.llm-d.ai, bundle-version v0.9.0; llm-d/llm-d-router@v0.9.0:config/crd/bases/"
    "llm-d.ai_inferenceobjectives.yaml); charts/kserve-runtime-configs/values.yaml "
    "(llmisvcConfigs.enabled: false); pkg/controller/v1alpha2/llmisvc/config_merge.go L97-110 (WellKnownDefault"
    "Configs), L741-757 (configNotFoundError), controller.go L436-444 (IsCrdAvailable at setup); hack/setup/"
    "quick-install/llmisvc-full-install-helm.sh L1437-1439, L1520-1527",
)

LLM_INFERENCE_SERVICE_PRESETS = _fact(
    "llm-inference-service-presets",
    "The decode and prefill presets (kserve-runtime-configs v0.20.0) run `/bin/bash -c '... eval \"exec vllm serve "
    "/mnt/models --served-model-name <name> --port 8001|8000 ... ${VLLM_ADDITIONAL_ARGS} $@\"' --`: the "
    "container's args are appended as `$@` and parsed again by the shell, so an argument with a space or a quote "
    "(any JSON config) must be shell-quoted, or vLLM receives it split and unquoted. They run the image "
    "ghcr.io/llm-d/llm-d-cuda:v0.8.0 unless the service sets its own, with runAsNonRoot but no runAsUser. KServe "
    "merges the service's template over the preset by strategic merge (containers by name, args replaced), and "
    "copies spec.labels / spec.annotations to the decode pods and spec.prefill.labels / .annotations to the "
    "prefill pods; of the service's metadata it copies only prometheus.io/*, Kueue and CNI keys.",
    "kserve/kserve@v0.20.0:charts/kserve-runtime-configs/files/llmisvcconfigs/resources.yaml L9-181 "
    "(decode: eval L161, image L181), L925-1103 (prefill); pkg/controller/v1alpha2/llmisvc/config_merge.go "
    "L779-827 (mergeSpecs, strategicpatch); workload_single_node.go L98-110, L179-180, L283-284, L484-500",
)

PD_ENGINE_IMAGE = _fact(
    "pd-engine-image",
    "No published image runs the pinned vLLM (v0.33.0) with NIXL's LIBFABRIC backend usable over EFA: "
    "vllm/vllm-openai ships NIXL without the EFA userspace (libfabric's efa provider) it needs, and llm-d's AWS "
    "image (ghcr.io/llm-d/llm-d-aws, built with the EFA installer and NIXL against /opt/amazon/efa) carries vLLM "
    "v0.23.0 at its v0.8 release, its bump to v0.27.1 still open when read. So disaggregated pods run the pinned "
    "vllm/vllm-openai image, whose NIXL hands KV caches over UCX (TCP on these nodes), and are sized for that.",
    "vllm-project/vllm#55635 (open 2026-09-07: 'using NIXL EFA requires ... EFA userspace libraries'), #55783 "
    "(open); llm-d/llm-d#1819 (Components v0.8.0: llm-d-cuda v0.8.0 = vLLM v0.23.0, llm-d-aws v0.8.0), #2324 "
    "(bump to vLLM v0.27.1, open); llm-d/llm-d:docker/Dockerfile.cuda (ENABLE_EFA), "
    "docker/scripts/cuda/builder/build-nixl.sh (-Dlibfabric_path=${EFA_PREFIX})",
)

LLMISVC_PREFILL_POD_SPEC = _fact(
    "llmisvc-prefill-pod-spec",
    "KServe v0.20.0 runs an LLMInferenceService's prefill Deployment with `spec.prefill.template` as its whole pod "
    "spec and the decode Deployment with `spec.template`, each merged only over its own preset "
    "(kserve-config-llm-prefill-template sets `spec.prefill.template`, -decode-template `spec.template`, neither a "
    "nodeSelector nor GPU resources). So the two pools' pods keep their own nodeSelector and GPU requests: prefill "
    "and decode may run on different GPU pools.",
    "kserve/kserve@v0.20.0:pkg/controller/v1alpha2/llmisvc/workload_single_node.go L137 (decode pod spec = "
    "spec.template), L222-257 (prefill pod spec = spec.prefill.template); config_merge.go L228-250 (a preset per "
    "side), L779-800 (mergeSpecs); charts/kserve-runtime-configs/files/llmisvcconfigs/resources.yaml (the presets)",
)

NIXL_HANDSHAKE_COMPAT = _fact(
    "nixl-handshake-compat",
    "vLLM v0.33.0's NixlConnector hands a KV cache only between two engines whose compatibility hash matches: it "
    "hashes the vLLM version, the model, its dtype, KV heads, head size and layers, the attention backend's name and "
    "the cache dtype, and a mismatch fails the handshake with a RuntimeError (enforce_handshake_compat, on by "
    "default). So prefill and decode must run one attention backend, whatever their GPUs; the platform keeps one "
    "model's dtype and kvCacheDtype on both sides by construction.",
    "vllm-project/vllm@v0.33.0:vllm/distributed/kv_transfer/kv_connector/v1/nixl/metadata.py L146-216 "
    "(compute_nixl_compatibility_hash); nixl/base_worker.py L967 (backend_name), L1038-1039 "
    "(enforce_handshake_compat default True), L1191-1208 (mismatch raises), L1502-1512 (read from the PyPI wheel "
    "vllm==0.33.0)",
)

NIXL_HETEROGENEOUS_TP = _fact(
    "nixl-heterogeneous-tp",
    "vLLM v0.33.0's NixlConnector is the pull connector: each decode rank reads its KV heads from the prefill "
    "rank(s) holding them, so prefill and decode may run different tensor-parallel sizes when the larger is a "
    "multiple of the smaller (either way round), except prefill TP above decode's with the prefill side's KV heads "
    "replicated (TP over the model's KV heads). With decode's TP the larger, several decode ranks read one prefill "
    "rank; with prefill's, each decode rank reads several, every read issued asynchronously at once: max(prefill "
    "TP, decode TP) rank-to-rank transfers per prompt. Heterogeneous TP splits heads, which needs the "
    "block-contiguous LBHNC layout the connector asks for on non-MLA models; block sizes may differ when decode's is "
    "a multiple of prefill's.",
    "vllm-project/vllm@v0.33.0:vllm/distributed/kv_transfer/kv_connector/v1/nixl/connector.py L149-166 (LBHNC), "
    "L432 (NixlConnector = NixlPullConnector); nixl/base_worker.py L2389-2430 (add_remote_agent), L2720-2730 (no P "
    "TP > D TP with replicated KV), L2832-2844 (head split needs a block-contiguous layout); nixl/tp_mapping.py "
    "L84-141 (compute_tp_mapping: source ranks per decode rank); nixl/pull_worker.py L278 (a read per source rank), L554-564 "
    "(make_prepped_xfer, async transfer); kv_connector/utils.py L522-547 (tp_ratio, block_size_ratio divisibility)",
)

VLLM_DEFAULT_ATTENTION_BACKEND = _fact(
    "vllm-default-attention-backend",
    "Unless --attention-backend names one, vLLM v0.33.0 picks the first valid backend of its priority list for the "
    "GPU's compute capability: FLASHINFER first on SM 10.x (B200), FLASH_ATTN first elsewhere; FLASH_ATTN reads an "
    "FP8 KV cache only as FA3 on SM 9.0 (H100, H200) or FA4 on SM 10.x, so an FP8 cache on SM 8.x (L4, L40S) gets "
    "FLASHINFER, the next one.",
    "vllm-project/vllm@v0.33.0:vllm/platforms/cuda.py L156-181 (_get_backend_priorities, non-MLA), L420-449 "
    "(get_attn_backend_cls: a selected backend first); vllm/v1/attention/backends/flash_attn.py L438-446 "
    "(supports_kv_cache_dtype); fa_utils.py L282-311 (flash_attn_supports_kv_cache_dtype)",
)

ENVOY_GATEWAY_WATCHES_INFERENCE_POOLS = _fact(
    "envoy-gateway-watches-inference-pools-from-start",
    "Envoy Gateway v1.9.0 registers a watch on every extension backend kind (the AI Gateway's InferencePool) when "
    "its controller starts, without checking the kind exists; a watch on a kind the API server does not serve "
    "never syncs, and the controller fails to start. So the InferencePool CRD is installed before Envoy Gateway.",
    "envoyproxy/gateway@v1.9.0:internal/provider/kubernetes/controller.go L158-161 (extBackendGVKs), L2934-2944 "
    "(c.Watch(source.Kind(...)) for each)",
)

AI_GATEWAY_PICKER_FAIL_CLOSED = _fact(
    "ai-gateway-picker-fail-closed-500",
    "The AI Gateway v1.1.0 builds each InferencePool's ext_proc filter with FailureModeAllow false and no "
    "status_on_error, ignoring the pool's endpointPickerRef.failureMode: when the picker cannot be reached the "
    "request fails with Envoy's ext_proc default, 500, generated by Envoy itself. The picker's own refusals are "
    "immediate responses: 503 with the reason as body when no endpoint can take the request or it timed out in "
    "the flow-control queue (llm-d-router v0.9.0's picker).",
    "envoyproxy/ai-gateway@v1.1.0:internal/extensionserver/inferencepool.go L288-316; envoyproxy/envoy "
    "api/envoy/extensions/filters/http/ext_proc/v3/ext_proc.proto status_on_error (default 500); "
    "llm-d/llm-d-router@v0.9.0:pkg/common/error/error.go L84-110, "
    "pkg/epp/requestcontrol/director.go L291-296, admission.go L217-231",
)

PICKER_LEADER_ONLY_READY = _fact(
    "picker-leader-election-readiness",
    "With --ha-enable-leader-election the endpoint picker (llm-d-router v0.9.0) reports ready (gRPC readiness, "
    "ext_proc, and the "
    "empty service) only while it is the leader, and only the leader runs the pool's reconcilers: a rolling update "
    "cannot make a new replica ready while the old leader lives, so such pickers roll only by Recreate (the "
    "chart's strategy), an outage of each picker change behind a fail-closed gateway. Without it every replica "
    "syncs the pool and serves ext_proc on its own.",
    "llm-d/llm-d-router@v0.9.0:cmd/epp/runner/health.go L47-102, runner.go L330-349; "
    "config/charts/routerlib/templates/_deployment.yaml L12-19 (Recreate), L133",
)

KSERVE_LLMISVC_PICKER_RECREATED = _fact(
    "kserve-llmisvc-picker-recreated",
    "KServe v0.20.0 renders an LLMInferenceService's endpoint picker as a Deployment with the Recreate strategy "
    "whatever its replicas (more than one adds --ha-enable-leader-election: only the leader is ready), on the "
    "system nodes (the preset gives it no nodeSelector or tolerations), ready 30 s after start at the earliest; its "
    "InferencePool says failureMode FailOpen, which the AI Gateway ignores (fail-closed). So each change of the "
    "picker (a KServe upgrade, a spec change it re-renders) or a drain of its node is an outage of the model of at "
    "least the picker's start: the gateway answers the local 500 as 503 with Retry-After meanwhile. A "
    "PodDisruptionBudget would only block the drain of its node, not shorten a Recreate.",
    "kserve/kserve@v0.20.0:pkg/controller/v1alpha2/llmisvc/scheduler.go L366-375 (Recreate), L401-407 (leader "
    "election), config/llmisvcconfig/config-llm-scheduler.yaml (failureMode FailOpen, readinessProbe "
    "initialDelaySeconds 30); envoyproxy/ai-gateway@v1.1.0:internal/extensionserver/inferencepool.go L288-316",
)

KSERVE_LLMISVC_READY_NEEDS_ITS_OWN_ROUTE = _fact(
    "kserve-llmisvc-ready-needs-its-own-route",
    "KServe v0.20.0 rolls an LLMInferenceService's Ready up from WorkloadsReady and RouterReady. With a scheduler "
    "and no `router.route`, it makes no HTTPRoute, so it knows no Gateway, and it judges the InferencePool only by "
    "the Gateways of its own routes: InferencePoolReady stays False (WaitingForGateway: 'exists but no Gateway "
    "controller has accepted it yet'), so RouterReady and Ready never become True, whoever routes to the pool. "
    "WorkloadsReady (the decode and prefill Deployments available) and SchedulerWorkloadReady (its endpoint "
    "picker's Deployment available) are set as for any spec.",
    "kserve/kserve@v0.20.0:pkg/apis/serving/v1alpha2/llm_inference_service_lifecycle.go L24-L44, L85-L89 "
    "(conditions), L125-L128 (Ready = WorkloadsReady + RouterReady), L218-L238, L318-L337 (roll-ups); "
    "pkg/controller/v1alpha2/llmisvc/router.go L67-L126 (reconcileRouter), L354-L373 (no route: no gateways), "
    "L685-L826 (EvaluateInferencePoolConditions), L831-L837; router_discovery.go L796-L799, L840-L853; "
    "scheduler.go L185; workload_single_node.go L86, L219",
)

AI_GATEWAY_ENVOY_GATEWAY_PAIR = _fact(
    "ai-gateway-envoy-gateway-pair",
    "AI Gateway v1.1.0 is released against Envoy Gateway v1.8.1 (its go.mod and release notes' dependency table; "
    "the 1.1 docs' egVersion/egMinVersion are 1.8.1 at the tag). Envoy Gateway v1.9.0 changes the extension-server "
    "protocol the AI Gateway implements only by adding field 3 (extension_policies) to PostRouteExtensionContext; "
    "service.proto is unchanged, so a v1.8.1-built extension server reads v1.9.0's messages (protobuf ignores the "
    "unknown field).",
    "envoyproxy/ai-gateway@v1.1.0:go.mod L21, release-notes/v1.1.0.md L72, site/versioned_docs/version-1.1/"
    "_vars.json; envoyproxy/gateway@v1.8.1..v1.9.0:proto/extension/context.proto (diff), service.proto",
)

AI_GATEWAY_WEBHOOK_CERTIFICATE = _fact(
    "ai-gateway-webhook-certificate-lasts-a-year-unless-cert-manager-renews-it",
    "ai-gateway-helm v1.1.0's pod mutator (failurePolicy Fail, on every pod Envoy Gateway manages: the Gateway's "
    "proxies and rate limiter) serves a certificate the chart makes itself by default: generated once, valid 365 "
    "days, and reused on every later install or upgrade (a Secret already there is looked up, not renewed); the "
    "controller only copies the Secret's CA into the webhook at start. A year after the first install the API "
    "server's calls fail TLS and no Envoy pod can be created. With `controller.mutatingWebhook.certManager.enable` "
    "the chart renders a cert-manager Issuer (selfSigned) and Certificate into the same Secret instead, with "
    "`cert-manager.io/inject-ca-from` on the webhook, so cert-manager renews it and its cainjector keeps the CA; the "
    "controller's webhook server (controller-runtime, CertDir) reloads the renewed files. The Issuer is selfSigned "
    "(hard-coded), so each renewal (90-day certificates, renewed at two thirds) changes the CA itself: from "
    "cainjector's new caBundle until the kubelet refreshes the mounted Secret (a minute or two), the API server "
    "refuses the old certificate and Envoy pod creates fail, retried by their ReplicaSet until it passes.",
    "envoyproxy/ai-gateway@v1.1.0:manifests/charts/ai-gateway-helm/templates/admission_webhook.yaml L8-11, L38, "
    "L40-61 (certManager), L66-L84 (lookup, genCA 3650, genSignedCert 365); values.yaml L234-256; "
    "cmd/controller/main.go L439-L442 (webhook.NewServer CertDir), L457, L521-L549 (maybePatchAdmissionWebhook)",
)

VLLM_ABORTS_IN_FLIGHT_REQUESTS_AT_SIGTERM = _fact(
    "vllm-aborts-in-flight-requests-at-sigterm",
    "vLLM v0.33.0's OpenAI server, sent SIGTERM, stops its engine in the mode `--shutdown-timeout` sets: 0 (the "
    "default) aborts every request in flight at once (streams end, a non-streamed answer is lost); N > 0 drains "
    "them for up to N seconds before it exits. The kubelet sends SIGTERM at every scale-down, rollout and drain, "
    "and SIGKILL terminationGracePeriodSeconds later (30 s by default). So an InferenceService's vLLM gets "
    "--shutdown-timeout = the gateway's request timeout and its pod that and 5 s to exit; KServe v0.20.0's "
    "LLMInferenceService presets pass --shutdown-timeout = grace - preStop (their 15 s sleep) - min(5, grace), so "
    "its pods get the drain and 20 s.",
    "vllm==0.33.0 wheel: vllm/entrypoints/launchers/launcher.py L255-L280 (SIGTERM -> engine_client.shutdown("
    "timeout=shutdown_timeout), mode abort when 0), vllm/v1/engine/core.py L1703-L1737 (abort: finish_requests "
    "FINISHED_ABORTED; else drain), vllm/engine/arg_utils.py L862, L1941-L1945 (default 0: '0 = abort, >0 = wait'); "
    "conformance/upstream/vllm/v0.33.0/generated-vllm-serve-args.json (shutdown_timeout); kserve/kserve@v0.20.0:"
    "charts/kserve-runtime-configs/files/llmisvcconfigs/resources.yaml L147-L151, L184-L188 (preStop sleep 15), "
    "L299; pkg/controller/v1alpha2/llmisvc/config_merge.go L684-L705 (shutdownTimeout)",
)

HELM_NEVER_UPGRADES_A_CHARTS_CRDS_FOLDER = _fact(
    "helm-never-upgrades-a-charts-crds-folder",
    "Helm v3.20 applies a chart's crds/ directory (its subcharts' included) only on install, before anything else, "
    "creating each CRD and skipping one that already exists; an upgrade never touches them. pulumi-kubernetes "
    "v4.32 updates a Release with Helm's upgrade action. So after a chart bump the new controllers run against the "
    "old CRDs (fields pruned, kinds missing) unless the chart's own hook applies them at upgrade (Fluid's "
    "crdUpgrade Job, kube-prometheus-stack's crds.upgradeJob) or the step is taken by hand (Envoy Gateway's "
    "gateway-helm has no hook: its docs apply the new CRDs server-side before the upgrade).",
    "helm/helm@v3.20.2:pkg/action/install.go L161-L180 (installCRDs: Create, AlreadyExists skipped), L259-L266 "
    "(only on install, unless SkipCRDs); pkg/action/upgrade.go L63 (SkipCRDs, its only CRD mention); "
    "pulumi/pulumi-kubernetes@v4.32.0:provider/pkg/provider/helm_release.go L694 (action.NewUpgrade); "
    "components/catalog/chart_crds.py CRD_UPGRADERS for each chart's upgrader",
)

ENVOY_REQUEST_TIMEOUT_COVERS_THE_PICKERS_QUEUE = _fact(
    "envoy-request-timeout-covers-the-pickers-queue",
    "Envoy Gateway v1.9.0 sets a ClientTrafficPolicy's `timeout.http.requestReceivedTimeout` as the listener's "
    "HTTP connection manager `request_timeout`, which Envoy arms when the request starts and disarms only when its "
    "last byte is sent upstream, once every decoding filter has processed it (or a response starts). The endpoint "
    "picker's ext_proc filter holds a request while its flow control queues it, so the timer runs through the "
    "queue: shorter than the queue, it answers 504 (no body, no Retry-After) before the picker's own 503.",
    "envoyproxy/gateway@v1.9.0:internal/xds/translator/listener.go L443-L446; github.com/envoyproxy/"
    "go-control-plane/envoy@v1.37.1-0.20260729145720-a2d8c7492908:extensions/filters/network/"
    "http_connection_manager/v3/http_connection_manager.pb.go L532-L536 (request_timeout)",
)

AI_GATEWAY_FINALIZES_ITS_OBJECTS = _fact(
    "ai-gateway-finalizes-its-objects",
    "The AI Gateway v1.1.0 controller adds the finalizer aigateway.envoyproxy.io/finalizer to every AIGatewayRoute, "
    "AIServiceBackend, BackendSecurityPolicy, MCPRoute and QuotaPolicy it reconciles, and removes it only itself, "
    "when it sees the object's deletion. An object deleted after the controller is gone keeps its finalizer: its "
    "delete never completes and its namespace stays Terminating. So each such object depends on the controller's "
    "release, which a destroy then deletes last.",
    "envoyproxy/ai-gateway@v1.1.0:internal/controller/controller.go L568-L610 (aiGatewayControllerFinalizer, "
    "handleFinalizer), ai_gateway_route.go L162, ai_service_backend.go L85, backend_security_policy.go L100, "
    "mcp_route.go L91, quota_policy.go L78",
)

PROMETHEUS_OPERATOR_WAITS_FOR_REMOTE_WRITE_SECRETS = _fact(
    "prometheus-operator-waits-for-remote-write-secrets",
    "Prometheus Operator v0.93.1 (kube-prometheus-stack 88.5.3's) builds a Prometheus' configuration before its "
    "StatefulSet, and loads every Secret a remoteWrite entry names (basicAuth username and password) while doing "
    'so; a missing Secret fails the sync ("creating config failed"), retried, and no StatefulSet is created: no '
    "Prometheus runs, so nothing scrapes and KEDA's Prometheus triggers have no server. The Helm release does not "
    "wait for it (the StatefulSet is the operator's). So the Secret must exist before the Prometheus resource: the "
    "platform makes it from the config, before the release.",
    "github.com/prometheus-operator/prometheus-operator@v0.93.1 (Go module): pkg/prometheus/server/operator.go "
    "L986-L988 (sync: creating config failed, before the StatefulSet), L1554, L1583 (AddRemoteWriteToStore); "
    "pkg/prometheus/promcfg.go L2863-L2870; pkg/prometheus/store.go L25-L27; pkg/assets/store.go L128-L144 "
    "(AddBasicAuth), L315-L336 (GetSecretKey: an error when the Secret is missing)",
)

KSERVE_LLM_WORKLOAD_LABELS = _fact(
    "kserve-llm-workload-labels",
    "KServe v0.20.0's controller labels an LLMInferenceService's decode pods app.kubernetes.io/component="
    "llminferenceservice-workload, its prefill pods llminferenceservice-workload-prefill, both app.kubernetes.io/name="
    "<service>, app.kubernetes.io/part-of=llminferenceservice, kserve.io/component=workload and llm-d.ai/role=decode "
    "or prefill (both without prefill), then adds spec.labels / spec.prefill.labels; its endpoint picker "
    "app.kubernetes.io/component=llminferenceservice-router-scheduler with the same name and part-of. Its "
    "InferencePool selects name, part-of and kserve.io/component=workload: both pools, not the picker. So a selector "
    "of both pools uses those three labels, of one pool name and llm-d.ai/role; app.kubernetes.io/component "
    "differs between the pools.",
    "kserve/kserve@v0.20.0:pkg/controller/v1alpha2/llmisvc/workload_single_node.go L89-97, L179, L222-229, L283, "
    "L503-509; scheduler.go L1623-1629 (SchedulerLabels); pkg/constants/constants.go L417-448; "
    "config/llmisvcconfig/config-llm-scheduler.yaml L17-22",
)

VOLCANO_SCHEDULES_ONLY_ITS_PODS = _fact(
    "volcano-schedules-only-its-pods",
    "Volcano v1.15.1's scheduler takes only pods whose schedulerName is one of its own (volcano), and its podgroup "
    "controller makes PodGroups, in the queue the pod's scheduling.volcano.sh/queue-name annotation names, only for "
    "those. A pod of the default scheduler on the same nodes is in no queue (its GPUs count against no tenant's "
    "capability) and is bound by a second scheduler that races Volcano for the same free GPUs: every GPU pod of a "
    "pool goes through one scheduler, Volcano here. KServe's LLMInferenceService controller sets no schedulerName: "
    "the template's stays.",
    "volcano-sh/volcano@v1.15.1:pkg/scheduler/cache/util.go L48-51 (responsibleForPod), "
    "pkg/controllers/podgroup/pg_controller.go L162-165, pg_controller_handler.go L398-402; "
    "kserve/kserve@v0.20.0:pkg/controller/v1alpha2/llmisvc/workload_single_node.go L135-136 (template copied)",
)

VLLM_IMAGE_TAG = _fact(
    "vllm-image-tag-per-release",
    "The engine image is `vllm/vllm-openai:v<release>` on Docker Hub, the tag vLLM's release pipeline pushes for "
    "each PyPI release (public deployments pin vllm/vllm-openai:v0.30.0 by digest, and v0.31.0). That the v0.33.0 "
    "tag exists could not be checked from here (no registry but the package registries is reachable, and no public "
    "text found names it): `docker manifest inspect vllm/vllm-openai:v0.33.0` before a rollout.",
    "PyPI: vllm 0.33.0 (wheel vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl); hub.docker.com/r/vllm/vllm-openai/"
    "tags (not reachable here); public repositories pinning vllm/vllm-openai:v0.30.0@sha256:8a69ffad... and "
    ":v0.31.0 (code search)",
)

VLLM_WRITES_UNDER_HOME_AND_TMP = _fact(
    "vllm-writes-under-home-and-tmp",
    "vLLM v0.33.0 writes its compile and asset caches under VLLM_CACHE_ROOT (default ~/.cache/vllm, XDG_CACHE_HOME), "
    "its usage stats under VLLM_CONFIG_ROOT (~/.config/vllm), and its ZMQ IPC sockets under VLLM_RPC_BASE_PATH "
    "(tempfile.gettempdir(): /tmp); with HOME and those roots under /tmp, a pod whose /tmp is an emptyDir (KServe's "
    "presets mount `tmp-dir` there) keeps every vLLM write off the image's root filesystem. KServe's presets still "
    "keep that root filesystem writable ('nvidia-cdi-hook requires a writable root filesystem').",
    "vllm-project/vllm@v0.33.0 (PyPI wheel): vllm/envs.py L17, L35-36, L340-352, L700-735; vllm/usage/usage_lib.py "
    "L28-29; vllm/utils/network_utils.py L154, L175-177; kserve/kserve@v0.20.0:config/llmisvcconfig/config-llm-decode-template"
    ".yaml L189-190 and volumes (tmp-dir at /tmp), config-llm-prefill-template.yaml",
)

MANAGED_CONTROL_PLANE_ADDRESSES = _fact(
    "managed-control-plane-webhook-sources",
    "A managed API server calls an in-cluster webhook from addresses of the cloud's: EKS from the elastic network "
    "interfaces it places in the cluster's subnets (inside the VPC's range); a private GKE cluster from its control "
    "plane's range (masterIpv4CidrBlock, reached over VPC peering). A NetworkPolicy admitting the API server names "
    "that range, not the internet.",
    "docs.aws.amazon.com/eks/latest/userguide/network-reqs.html (cross-account network interfaces in the cluster's "
    "subnets); cloud.google.com/kubernetes-engine/docs/how-to/private-clusters (control plane range; firewall "
    "rules for admission webhooks); cloud.google.com/service-mesh/docs/private-cluster-open-port",
)

GKE_CONTROL_PLANE_FIREWALL = _fact(
    "gke-private-control-plane-reaches-nodes-on-443-and-10250",
    "For a private GKE cluster GKE creates one ingress firewall rule from the control plane's range "
    "(masterIpv4CidrBlock) to the cluster's nodes, on TCP 443 and 10250 only. The API server calls admission "
    "webhooks, conversion webhooks and aggregated APIs at their pods' addresses (alias IPs of the nodes, which VPC "
    "firewall rules cover); on any other port the call times out, and a webhook with failurePolicy Fail rejects the "
    "objects it admits, until a rule from that range opens the port (components/catalog/webhooks.py lists them).",
    "cloud.google.com/kubernetes-engine/docs/how-to/private-clusters (Adding firewall rules for specific use "
    "cases); the charts say it too: cert-manager/cert-manager@v1.21.1:deploy/charts/"
    "cert-manager/values.yaml L1086-1089; prometheus-community/helm-charts@kube-prometheus-stack-88.5.3:charts/"
    "kube-prometheus-stack/values.yaml L2845",
)

# --- vLLM v0.33.0: loading weights and sizing memory ------------------------------------------------------------

VLLM_STREAMER_READS_ROOT_SAFETENSORS = _fact(
    "vllm-streamer-reads-root-safetensors",
    "vLLM's `--load-format runai_streamer` loader reads `*.safetensors` only, listed by the Run:ai streamer's "
    "`list_safetensors`, which globs `<model dir>/*.safetensors` and is not recursive; finding none, the loader "
    "fails ('Cannot find any safetensors model weights'). A checkpoint of PyTorch `*.bin` pickles, or one whose "
    "safetensors sit in a subdirectory only, does not load. Subdirectories may hold other files (a draft model, "
    "LoRA adapters), which their own loaders read.",
    "vllm-project/vllm@v0.33.0 (PyPI wheel): vllm/model_executor/model_loader/runai_streamer_loader.py L181-223; "
    "run-ai/runai-model-streamer 0.15.7 (the minimum vLLM's `runai` extra requires, METADATA): "
    "runai_model_streamer/safetensors_streamer/safetensors_streamer.py L29-45",
)

VLLM_STREAMER_DISTRIBUTED = _fact(
    "vllm-streamer-distributed",
    "The runai_streamer loader accepts `--model-loader-extra-config` keys `distributed`, `concurrency` and "
    "`memory_limit` only (any other key is a start-up error, as is a `distributed` that is not a bool, "
    "a `concurrency` that is not a positive integer, or a `memory_limit` below -1). Without `distributed: true` each tensor-parallel rank "
    "streams every safetensors file to the CPU itself: a TP 4 replica of a 131.5 GiB checkpoint reads 526 GiB. "
    "With it, the ranks of a node split the files between them, read each once to their GPU and broadcast the "
    "tensors over a per-node NCCL group; the streamer falls back to per-rank reads when torch.distributed is not "
    "initialized, the group has one rank, the backend is not NCCL, or the GPU has less free memory than two read "
    "chunks.",
    "vllm-project/vllm@v0.33.0 (PyPI wheel): vllm/model_executor/model_loader/runai_streamer_loader.py L124-178, "
    "L233-235; weight_utils.py L1282-1300 (runai_safetensors_weights_iterator: device cuda when distributed); "
    "run-ai/runai-model-streamer 0.15.7: runai_model_streamer/distributed_streamer/distributed_streamer.py "
    "L89-134 (set_is_distributed), L280-310 (one group per host unless RUNAI_STREAMER_DIST_GLOBAL)",
)

VLLM_KV_CACHE_BYTES_SKIP_PROFILING = _fact(
    "vllm-kv-cache-bytes-skip-profiling",
    "vLLM sizes its KV cache by profiling: the device's free memory at start minus what is free after loading the "
    "weights and a dummy forward pass counts as its own, and an engine whose neighbour frees memory meanwhile fails "
    "the profiler's assertion. On a time-sliced GPU (no memory isolation) two engines starting together count each "
    "other's loads and size their caches short, or below zero. With `--kv-cache-memory-bytes` the worker still runs "
    "the dummy pass (to compile) but reserves exactly that KV cache and skips the measurement; "
    "`--gpu-memory-utilization` then only gates the start (free memory must be at least utilization x the device's "
    "total).",
    "vllm-project/vllm@v0.33.0 (PyPI wheel): vllm/v1/worker/gpu_worker.py L654-681 (kv_cache_memory_bytes; the "
    "startup plan before it is off unless VLLM_ENABLE_STARTUP_PLAN=1, vllm/v1/worker/startup_plan.py L134-142), "
    "L683-740 (memory_profiling, the free-memory assertion L732) and vllm/v1/worker/utils.py L716-750 "
    "(request_memory); vllm/utils/mem_utils.py L230 (memory_profiling); `--kv-cache-memory-bytes` in "
    "vllm/v0.33.0/generated-vllm-serve-args.json",
)

VLLM_QUANTIZATION_KEEPS_EMBEDDINGS = _fact(
    "vllm-quantization-keeps-embeddings-16-bit",
    "vLLM's AWQ, GPTQ and FP8 methods quantize linear layers (LinearBase) only: the input embedding is never "
    "quantized, and the output head (ParallelLMHead) only when the checkpoint's quantization config says "
    "`lm_head: true` (default false). So a quantized model keeps vocab x hidden x 2 (untied) parameters in 16 bits: "
    "1.05 B for Llama 3.1 (1.47 GiB more than 4 bits would make them), 2.49 B for Qwen2.5 72B.",
    "vllm-project/vllm@v0.33.0 (PyPI wheel): vllm/model_executor/layers/quantization/auto_awq.py L245, L291-293; "
    "auto_gptq.py L198, L259 and utils/gptq_utils.py L172-193 (get_linear_quant_method); fp8.py L180; "
    "vllm/model_executor/layers/vocab_parallel_embedding.py L318-321 (no quant method: unquantized), L578 "
    "(ParallelLMHead)",
)

# --- The weight path: bucket -> identity -> cache runtime -> mount on the node -> pod (issue 31) ------------------

FLUID_RUNTIME_ON_HOST_NETWORK = _fact(
    "fluid-runtime-runs-on-the-host-network-by-default",
    "Fluid (v1.0.8) runs an AlluxioRuntime's master, worker and FUSE pods with hostNetwork unless that component's "
    "`networkMode` is `ContainerNetwork`: an empty networkMode is HostNetwork. GKE Workload Identity does not apply "
    "to host-network pods (their metadata requests reach the Compute Engine metadata server, which answers as the "
    "node's service account), so every component runs on the container network. There the worker still registers "
    "the node's IP as its hostname (locality) and its pod IP as its container hostname (where clients connect).",
    "fluid-cloudnative/fluid@v1.0.8:api/v1alpha1/container_network.go L22-36, pkg/ddc/alluxio/transform.go L309, "
    "L414, transform_fuse.go L106, charts/alluxio/templates/worker/statefulset.yaml L80-81, L139-147; "
    "cloud.google.com/kubernetes-engine/docs/concepts/workload-identity (limitations: Pods on the host network)",
)

FLUID_MOUNT_ROOT_ON_THE_NODE = _fact(
    "fluid-mount-root-must-be-writable-on-the-node",
    "Fluid (v1.0.8) mounts each FUSE file system under `runtime.mountRoot` (default /runtime-mnt), a hostPath "
    "(DirectoryOrCreate) of both the CSI node plugin and the FUSE DaemonSet; its install guide says to move it where "
    "the cloud's root file system is read-only (`--set runtime.mountRoot=/var/lib/docker/runtime-mnt`). "
    "Container-Optimized OS (GKE's node image) mounts / read-only; /var/lib/docker is writable, executable and "
    "stateful. EKS's AL2023 nodes have a writable root, so the default stays there.",
    "fluid-cloudnative/fluid@v1.0.8:charts/fluid/fluid/values.yaml L90, templates/csi/daemonset.yaml L81, L116, "
    "L160-163, docs/en/userguide/install.md L168-171, charts/alluxio/templates/fuse/daemonset.yaml L203-206; "
    "cloud.google.com/container-optimized-os/docs/concepts/disks-and-filesystem",
)

FLUID_CONTROLLER_CREATES_CRITICAL_FUSE_PODS = _fact(
    "fluid-creates-system-node-critical-fuse-pods",
    "Fluid's chart (v1.0.8) sets `runtime.criticalFusePod: true`, which its Alluxio runtime controller turns into "
    "`priorityClassName: system-node-critical` on the FUSE DaemonSet it creates for each AlluxioRuntime, in the "
    "runtime's namespace: that namespace needs a critical-pods quota on GKE, though no chart is installed there. "
    "DataLoad jobs carry no priority class; the FUSE DaemonSet Fluid copies for a reference Dataset selects "
    "`fluid.io/fuse-balloon=true`, which no node carries, so it creates no pods.",
    "fluid-cloudnative/fluid@v1.0.8:charts/fluid/fluid/values.yaml L85, templates/controller/"
    "alluxioruntime_controller.yaml L76-79, pkg/ddc/alluxio/transform_fuse.go L114, charts/alluxio/templates/fuse/"
    "daemonset.yaml L76-77, charts/fluid-dataloader/alluxio/templates/job.yaml, pkg/ddc/thin/referencedataset/"
    "cm.go L56-71",
)

FLUID_EMPTYDIR_TIERS_READ_THROUGH_THE_WORKER = _fact(
    "fluid-emptydir-tiers-turn-off-short-circuit-reads",
    "Fluid (v1.0.8) turns short-circuit reads off (`alluxio.user.short.circuit.enabled=false`) when any tiered-store "
    "level is an emptyDir, and mounts only hostPath or PVC levels into the FUSE pod: every read then goes through "
    "the node's worker over gRPC. The cache keeps emptyDir levels all the same: a hostPath level is sized by no "
    "pod (neither the tmpfs of the memory level nor the NVMe level counts against a request or an emptyDir "
    "sizeLimit), outlives the worker with its blocks, and needs a writable NVMe path that differs by node image; "
    "reads stay on the node (LocalFirst placement), sized by `cache_reads`.",
    "fluid-cloudnative/fluid@v1.0.8:pkg/ddc/alluxio/transform.go L527-549, charts/alluxio/templates/_helpers.tpl "
    "L214-260 (worker levels, emptyDir with sizeLimit) and L326-366 (FUSE levels: hostPath and PVC only)",
)

ALLUXIO_READ_BUFFERS = _fact(
    "alluxio-read-buffers-per-stream",
    "Alluxio 2.9.0 buffers up to `alluxio.user.streaming.reader.buffer.size.messages` (default 16) chunks per read "
    "stream in the client (the FUSE daemon, and a job worker loading a block by reading it; Netty direct memory), and "
    "the worker keeps up to `alluxio.worker.network.reader.buffer.size` (default 4MB) unacknowledged per stream. The "
    "client asks for chunks of `alluxio.user.streaming.reader.chunk.size.bytes` (default 1MB); the worker sends "
    "min(that, `alluxio.worker.network.reader.max.chunk.size.bytes`), default 2MB, so a larger chunk takes effect only "
    "with a max chunk as large, within the client's 100MB inbound message limit. A job worker runs "
    "`alluxio.job.worker.threadpool.size` loads at once (Alluxio 10, Fluid sets 32 unless the runtime does). Sizes "
    "written `MB` are MiB. So the chunk and the max chunk are one size, from the streams a node serves at once and the "
    "direct memory of the FUSE daemon, the worker and the job worker.",
    "org.alluxio:alluxio-core-common:2.9.0 (Maven Central) alluxio/conf/PropertyKey.java L4175-4200 "
    "(WORKER_NETWORK_READER_BUFFER_SIZE_BYTES, WORKER_NETWORK_READER_MAX_CHUNK_SIZE_BYTES), L5868-5885 "
    "(USER_STREAMING_READER_BUFFER_SIZE_MESSAGES, USER_STREAMING_READER_CHUNK_SIZE_BYTES), L6173-6177 "
    "(USER_NETWORK_STREAMING_MAX_INBOUND_MESSAGE_SIZE), L6834-6839 (JOB_WORKER_THREADPOOL_SIZE); "
    "org.alluxio:alluxio-core-server-worker:2.9.0 alluxio/worker/grpc/BlockReadHandler.java L89-92, L369; "
    "org.alluxio:alluxio-job-server:2.9.0 alluxio/job/util/JobUtils.java L116-150; "
    "fluid-cloudnative/fluid@v1.0.8:pkg/ddc/alluxio/transform_optimization.go L83",
)

FLUID_JOB_JVMS_TAKE_THE_RUNTIMES_OPTIONS = _fact(
    "fluid-job-jvms-get-only-the-runtimes-jvm-options",
    "Fluid 1.0.8 runs an AlluxioRuntime's job master in the master pod and its job worker in each worker pod, with "
    "`spec.jobMaster.resources` / `spec.jobWorker.resources`; their `jvmOptions` and `properties` are accepted by the "
    "CRD but not rendered (the chart values carry only ports and resources for them), and Fluid adds no defaults, so "
    "without more a job JVM sizes its heap as a quarter of the memory HotSpot sees: the node's, where the JVM cannot "
    "read the container's cgroup. `spec.jvmOptions` reaches every JVM of the runtime (ALLUXIO_JAVA_OPTS). HotSpot "
    "takes an explicit -XX:MaxRAM as the physical memory it sizes defaults from (default heap MaxRAM/4, default "
    "direct memory the heap's size), while an explicit -Xmx / -XX:MaxDirectMemorySize wins over it: so the runtime "
    "gives MaxRAM = the job containers' memory, and master, worker and FUSE keep their own sizes.",
    "fluid-cloudnative/fluid@v1.0.8:pkg/ddc/alluxio/types.go L129-137, transform_resources.go L57-58, L79-80, "
    "transform.go L183-185, charts/alluxio/templates/config/alluxio-conf.yaml L64-66, L81-91, L130-143, "
    "templates/master/statefulset.yaml L302-309, templates/worker/statefulset.yaml L210-217; "
    "openjdk/jdk8u hotspot/src/share/vm/runtime/arguments.cpp Arguments::set_heap_size (phys_mem = MaxRAM when set)",
)

VLLM_STREAMS_WEIGHTS_FROM_EVERY_RANK = _fact(
    "vllm-runai-streamer-streams-from-every-engine-process",
    "vLLM v0.33.0's `runai_streamer` load format loads weights in every worker process (one per GPU of a replica: "
    "tensor x pipeline parallel): each streams all of the model's safetensors files itself, through "
    "runai_safetensors_weights_iterator with is_distributed false unless `model_loader_extra_config` says "
    "`distributed`, with the streamer's parallel reads (RUNAI_STREAMER_CONCURRENCY, catalog.engines."
    "STREAMER_CONCURRENCY). Distributed (the platform's setting for replicas of several GPUs, "
    "vllm-streamer-distributed), each process streams its share of the files, with the same parallel reads. A node "
    "thus serves STREAMER_CONCURRENCY streams per engine process, not per model server.",
    "vllm-project/vllm@v0.33.0 (PyPI wheel): vllm/model_executor/model_loader/runai_streamer_loader.py L124-178, "
    "L227-240, weight_utils.py L1282-1300; runai-model-streamer 0.15.7 (PyPI, the version vLLM v0.33.0 requires at "
    "least): runai_model_streamer/distributed_streamer/distributed_streamer.py L136-152",
)

FLUID_APPLIES_A_CACHES_SPEC_ONCE = _fact(
    "fluid-reads-a-caches-spec-once",
    "Fluid 1.0.8 applies an AlluxioRuntime's spec when it installs the runtime's Helm release and never again: "
    "SyncRuntime does nothing, the periodic sync updates only worker replicas, the release is not upgraded once "
    "installed, and worker affinity is built only while none is set. A Dataset's spec is read when the runtime is set "
    "up, except that mount points added or removed are (un)mounted: other changes (mount options, node affinity, "
    "tolerations) are never applied. The mount root is baked in at install: into the FUSE DaemonSet and the cache "
    "Dataset's volume (`fluid_path` = <mountRoot>/<namespace>/<name>/alluxio-fuse), which a referring Dataset copies "
    "when it is created. A runtime is owned by its Dataset and a DataLoad by its Dataset (garbage-collected with it). "
    "Fluid writes into a runtime's spec only the worker's memory request, when it is below the memory tier. So a "
    "change of either object's spec, or of the mount root, takes effect only by replacing the objects.",
    "fluid-cloudnative/fluid@v1.0.8:pkg/ddc/alluxio/sync_runtime.go L22-23, pkg/ddc/base/syncs.go L31-60, "
    "pkg/ddc/alluxio/master_internal.go L47-57, pkg/ctrl/affinity.go L56-68, pkg/ddc/alluxio/ufs.go L115-131, "
    "pkg/utils/dataset.go L182-206, pkg/ddc/alluxio/utils.go L147-151, pkg/utils/dataset/volume/create.go L88, "
    "pkg/ddc/thin/referencedataset/volume.go L70-127, pkg/controllers/runtime_controller.go L139-141, "
    "pkg/controllers/operation_controller.go L197-200, L259-266, pkg/ddc/alluxio/transform_resources.go L94-133",
)

FLUID_DATASET_DELETION_WAITS_FOR_ITS_READERS = _fact(
    "fluid-holds-a-datasets-deletion-while-it-is-read",
    "Fluid 1.0.8 removes a Dataset's finalizer only when no pod that is not complete mounts its PVC and no other "
    "Dataset refers to it (status.datasetRef); until then it requeues every 10 s and the Dataset stays Terminating. "
    "The cache's Dataset is referred to by the serving namespace's, whose PVC the model servers mount: deleting the "
    "cache waits until the serving Dataset is gone, and that until no model server of the cluster runs. A runtime's "
    "deletion waits for nothing of the kind: it deletes its volume and uninstalls its release, the FUSE daemons under "
    "running model servers included.",
    "fluid-cloudnative/fluid@v1.0.8:pkg/controllers/v1alpha1/dataset/dataset_controller.go L184-236, "
    "pkg/utils/kubeclient/volume.go L276-299, pkg/controllers/runtime_controller.go L185-205",
)

PULUMI_REPLACES_ON_CHANGES_AS_TOLD = _fact(
    "pulumi-replaces-on-changes-and-deletes-dependents-first",
    "The Pulumi engine turns a change at or below a path listed in a resource's `replaceOnChanges` into a "
    "replacement. pulumi-kubernetes deletes before replacing a named object only for the replacements it forces "
    "itself (name, namespace, immutable fields), so an object replaced for replaceOnChanges also needs "
    "`deleteBeforeReplace`. When a resource is replaced delete-first, the engine first deletes, in reverse dependency "
    "order, the resources whose inputs are computed from it (property dependencies of the last deployment, not "
    "dependsOn) and that would be replaced with those inputs unknown (replaceOnChanges applied), and recreates them "
    "after it.",
    "pulumi/pulumi pkg/resource/deploy/step_generator.go applyReplaceOnChanges, calculateDependentReplacements "
    "(stored 2025 copy; the engine of pulumi 3.272.0 is not on the Go proxy); "
    "pulumi/pulumi-kubernetes@v4.32.0:provider/pkg/provider/provider.go L1558-1566, L1644-1656 (the facts the "
    "replacement predictions use, conformance/upstream/pulumi-providers/replacement.json); "
    "pulumi.com/docs/iac/concepts/resources/options/replaceonchanges",
)

PULUMI_POLICY_PACK_RUNS_FROM_ITS_FOLDER = _fact(
    "pulumi-runs-a-python-policy-pack-from-its-folder",
    "The Pulumi CLI runs a Python policy pack (a folder with PulumiPolicy.yaml, `runtime: python`) as "
    "`python -u -m pulumi.policy <engine address> <folder>`, with the folder as working directory and the python of "
    "the virtualenv PulumiPolicy.yaml's `runtime.options.virtualenv` names, relative to the folder (for a policy "
    "pack no default: without the option, the python on PATH). pulumi.policy runs the folder's `__main__.py` with "
    "runpy.run_path, which puts the folder first on sys.path: the pack imports what the folder and that virtualenv "
    "hold, nothing around the folder. A local `--policy-pack <folder>` installs nothing: the virtualenv must exist "
    "(`pulumi install` run in the folder creates it and installs requirements.txt, as the service's install does). "
    "The pack's version is PulumiPolicy.yaml's `version` (the Python SDK reports 0.0.1), its name the PolicyPack's.",
    "pulumi/pulumi@1b5949891b (v3.259.0+14; the language host of 3.272.0 is not on the Go proxy) "
    "sdk/python/cmd/pulumi-language-python/main.go RunPlugin L1528-1728 (L1609-1617 the analyzer's arguments, "
    "L1636-1640 its working directory), parseOptions L233-291 (L281-288: `venv` is the default for plugins that "
    "are not analyzers); pulumi 3.272.0 (installed) pulumi/policy/__main__.py main L25-72 (runpy.run_path L61); "
    "pulumi_policy 1.21.0 (installed) policy.py PolicyPack.__init__ L113-116; "
    "pulumi/pulumi pkg@v3.274.0:engine/update.go LoadLocalPolicyPackAnalyzers L280-331, "
    "cmd/pulumi/install/install.go L62-83 and cmd/pulumi/policy/io.go InstallPluginDependencies L60-118, "
    "resource/plugin/analyzer_plugin.go NewPolicyAnalyzer L68-219 (L202-210 the version) and GetAnalyzerInfo L496-500",
)

PULUMI_POLICY_PUBLISH_UPLOADS_THE_FOLDER = _fact(
    "pulumi-policy-publish-uploads-the-pack-folder",
    "`pulumi policy publish [org]`, run in the pack folder, starts the pack for its name and version and uploads a "
    ".tgz of the folder that holds PulumiPolicy.yaml, and only of it: every file a .gitignore in that folder or in "
    "any directory above it ignores is left out (and .git), so a folder inside the checkout's ignored build/ uploads "
    "empty, and the folder's own .gitignore keeps its virtualenv out. Where the service enforces the pack, the CLI "
    "extracts it, sets `virtualenv: venv` in its PulumiPolicy.yaml unless one is named, creates that virtualenv "
    "with Python's venv module, upgrades pip, setuptools and wheel in it and installs the folder's requirements.txt "
    "into it with pip, run in the folder.",
    "pulumi/pulumi pkg@v3.274.0:cmd/pulumi/policy/policy_publish.go L48-84, Run L94-226 (L155-170 the folder of "
    "PulumiPolicy.yaml); backend/httpstate/policypack.go Publish L419-495 (archive.TGZ L462), installRequiredPolicy "
    "L534-584 (L556-565 the virtualenv default); sdk@v3.272.0:go/common/util/archive/archive.go TGZ L35-60, "
    "addDirectoryToTar L186-307 (.gitignore files above the folder L203-221, ignored files skipped L248); "
    "go/common/util/archive/ignorer_gitignore.go L25-41 (sabhiram/go-gitignore: `build/` ignores every file below "
    "a build directory); python/toolchain/pip.go InstallDependencies L468-583",
)

PULUMI_POLICY_LEVELS_AND_GROUPS = _fact(
    "pulumi-policy-enforcement-levels-and-groups",
    "A policy's enforcement level is the pack's setting for it unless the policy config overrides it: a config file "
    "(`--policy-pack-config` locally, `pulumi policy enable --config` for a policy group) maps a policy name to a "
    "level string or to an object of its properties with an optional `enforcementLevel`, and `all` sets every "
    "policy's level first. A mandatory violation without an exception fails the preview or update; an advisory one "
    "is reported as a warning; disabled policies do not run. `pulumi policy enable <org>/<pack> <latest|version> "
    "[--policy-group <group>] [--config <file>]` enforces a published version on the stacks of a policy group (the "
    "organization's default group without --policy-group); `pulumi policy group edit <group> --add-stack "
    "<project/stack>` adds a stack to a group.",
    "pulumi/pulumi pkg@v3.274.0:resource/analyzer/config.go parsePolicyPackConfig L113-151, parsePolicyConfigs "
    "L182-218, applyConfig L398-432; resource/deploy/analyze_snapshot.go analyzeResource L40-100 (L76-85) and "
    "step_generator.go L3745-3758 (a mandatory diagnostic without exception is an error); engine/events.go "
    "L685-700; cmd/pulumi/policy/policy_enable.go L76-149; policy_group_edit.go L90-154; "
    "pulumi_policy 1.21.0 (installed) policy.py Analyze L971-1029 (disabled policies skipped)",
)

PULUMI_STACK_POLICY_SEES_ITS_STACK_ONLY = _fact(
    "pulumi-stack-policy-sees-its-stack-only",
    "A stack validation policy judges the resources of the one stack being previewed or updated: the engine hands "
    "the analyzer's AnalyzeStack the resources this deployment registered (`news`), none of another stack, and the "
    "Python policy SDK passes each stack policy those resources with its own entry of the policy config only (the "
    "config file's object under the policy's name, set by Configure). The CLI validates that entry against the "
    "policy's config schema as an object of its declared properties, with no additionalProperties restriction.",
    "pulumi/pulumi@v3.259.0 pkg/resource/deploy/step_generator.go AnalyzeResources L3439-3576 (L3446 "
    "sg.deployment.news.Range, L3541 analyzer.AnalyzeStack); pkg/resource/analyzer/config.go convertSchema "
    "L263-273; pulumi_policy 1.21.0 (installed) policy.py AnalyzeStack L1031-1092 (L1088 _get_policy_config), "
    "Configure L1275-1283, _get_policy_config L1414-1419",
)

AUTOSCALER_KEEPS_NODES_WITH_LOCAL_STORAGE = _fact(
    "cluster-autoscaler-keeps-nodes-with-local-storage",
    "Cluster Autoscaler (1.35.0) never removes a node running a pod with a hostPath or a non-memory emptyDir "
    "(`--skip-nodes-with-local-storage`, default true) unless the pod is annotated "
    '`cluster-autoscaler.kubernetes.io/safe-to-evict: "true"`, which is checked first. Fluid (v1.0.8) puts an '
    "AlluxioRuntime's `worker.podMetadata.annotations` on the worker pods, whose NVMe level is an emptyDir: the cache "
    "is a cache, so its workers are marked safe to evict. An evictable pod still has to fit on another existing node "
    "in the removal simulation (`NoPlaceToMovePods`), so workers run only on always-on pools (or the smallest nodes), "
    "never alone on an 8-GPU node scaled up from zero.",
    "kubernetes/autoscaler@cluster-autoscaler-1.35.0:cluster-autoscaler/config/flags/flags.go L200, "
    "simulator/cluster.go L126-158 (SimulateNodeRemoval: GetPodsToMove, then findPlaceFor), "
    "utils/drain/drain.go L36, L140-147, simulator/drainability/rules/rules.go L55-70; "
    "fluid-cloudnative/fluid@v1.0.8:pkg/ddc/alluxio/transform.go L250-264",
)

AUTOSCALER_ADDS_NODES_ONLY_FOR_PENDING_PODS = _fact(
    "cluster-autoscaler-does-not-scale-up-to-min-size",
    "Cluster Autoscaler (1.35.0) does not bring a node group below its minimum up to it "
    "(`--enforce-node-group-min-size`, default false): it adds nodes only for pending pods. How GKE runs its own "
    "autoscaler is not published, so a GKE pool must start at its total minimum: its per-zone initialNodeCount times "
    "its zones at least minSize (GKE_NODE_COUNT_PER_ZONE).",
    "kubernetes/autoscaler@cluster-autoscaler-1.35.0:cluster-autoscaler/config/flags/flags.go L74",
)

ALLUXIO_S3_READS_WITH_WEB_IDENTITY = _fact(
    "alluxio-s3-reads-with-the-pods-web-identity",
    "Alluxio 2.9's S3 under-store uses `DefaultAWSCredentialsProviderChain` when no access keys are set; in AWS SDK "
    "for Java 1.11.815 (the version alluxio-parent 2.9.0 pins) that chain is environment, system properties, "
    "`WebIdentityTokenCredentialsProvider` (AWS_ROLE_ARN + AWS_WEB_IDENTITY_TOKEN_FILE, which the EKS pod identity "
    "webhook injects), profile, then the instance role. The web-identity step loads "
    "`com.amazonaws.services.securitytoken.internal.STSProfileCredentialsService` from aws-java-sdk-sts, which "
    "underfs/s3a/pom.xml has declared since Alluxio PR #13173 (April 2021) and the under-store's jar-with-dependencies "
    "bundles unrelocated (maven-shade-plugin without relocations). With ACL inheritance on (the default) it also asks "
    "for ListAllMyBuckets and GetBucketAcl, and falls back to defaults on a denial: the mount turns it off.",
    "org.alluxio:alluxio-parent:2.9.0 pom (aws.amazonaws.version 1.11.815, aws-java-sdk-sts managed); "
    "org.alluxio:alluxio-underfs:2.9.0 pom (shade execution); org.alluxio:alluxio-underfs-s3a:2.9.3 and 2.9.4 poms "
    "(aws-java-sdk-sts; 2.9.0's is not on Maven Central); alluxio-underfs-s3a-2.9.4.jar S3AUnderFileSystem "
    "createAwsCredentialsProvider, getPermissionsInternal; com.amazonaws:aws-java-sdk-core:1.11.815 "
    "DefaultAWSCredentialsProviderChain, STSProfileCredentialsServiceProvider; Alluxio/alluxio#13173; "
    "org.alluxio:alluxio-core-common:2.9.0 PropertyKey UNDERFS_S3_INHERIT_ACL (default true)",
)

S3_MISSING_KEY_IS_404_ONLY_IF_LISTABLE = _fact(
    "s3-answers-a-missing-key-404-only-to-a-caller-that-may-list-it",
    "S3 answers a HEAD or GET of a key that does not exist with 404 only if the caller may s3:ListBucket the bucket "
    "with that key as `s3:prefix` (a ListBucket allow conditioned on s3:prefix is evaluated with the requested key), "
    "else with 403. Alluxio 2.9's S3 under-store takes only 404 for absent (S3AUnderFileSystem.getObjectStatus); a 403 "
    "becomes an AlluxioS3Exception, a RuntimeException that BaseUnderFileSystem.getParsedFingerprint (catching only "
    "IOException) lets through, so the metadata sync fails. A directory lookup HEADs `<dir>/` and then lists `<dir>/` "
    "(ObjectUnderFileSystem.isDirectory); a status lookup HEADs the key itself (getStatus), and a sync of the Dataset's "
    "mount point (Fluid's `alluxio fs ls -R /` with sync interval 0, `loadMetadata -R`) asks for the status of "
    "`models`, without the slash. So the readers may list `models` as well as `models/*`.",
    "docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html (Permissions: 404 with s3:ListBucket, else 403); "
    "ceph/s3-tests@d733d4a:s3tests/functional/test_s3.py test_head_object_404_with_policy_prefix (not marked "
    "fails_on_aws; ceph/ceph#68577 'add the requested object name ... as s3:prefix to match aws behavior'); "
    "org.alluxio:alluxio-core-common:2.9.0 alluxio/underfs/ObjectUnderFileSystem.java L558-588, "
    "BaseUnderFileSystem.java L122-135; org.alluxio:alluxio-underfs-s3a:2.9.3 S3AUnderFileSystem.java L607-620, "
    "AlluxioS3Exception.java L26; org.alluxio:alluxio-core-server-master:2.9.0 InodeSyncStream.java L803-818, L972; "
    "fluid-cloudnative/fluid@v1.0.8:pkg/ddc/alluxio/operations/base.go L139, L453",
)

FLUID_INJECTION_IS_PER_POD = _fact(
    "fluid-webhook-selects-pods-by-label",
    'Fluid\'s pod webhook (v1.0.8) is called only for pods labelled `serverless.fluid.io/inject: "true"` or '
    '`fuse.serverful.fluid.io/inject: "true"` (objectSelector, no namespaceSelector); `fluid.io/enable-injection` '
    "is read only as a pod label, to skip a pod (`false`). A namespace label of that name does nothing.",
    "fluid-cloudnative/fluid@v1.0.8:charts/fluid/fluid/templates/webhook/webhookconfiguration.yaml L1-48, "
    "pkg/webhook/handler/mutating/mutating_handler.go L90-93, pkg/common/label.go L58-59",
)

VOLCANO_ADMITS_NO_PODS = _fact(
    "volcano-installs-no-pod-webhook-by-default",
    "Volcano's chart (v1.15.1) enables only the admission paths in `custom.enabled_admissions` (default: jobs, "
    "podgroups, queues, hypernodes and cronjobs); its pod webhooks render only when that list names /pods/mutate "
    "or /pods/validate. Every webhook it renders is failurePolicy Fail, so with the admission pods down no Queue, "
    "PodGroup or Job is admitted, while pods are still created. KServe's pod webhook (v0.20.0, failurePolicy Fail) "
    "selects only InferenceService pods.",
    "volcano-sh/volcano@v1.15.1:installer/helm/chart/volcano/values.yaml L58, templates/webhooks.yaml L3, L21, "
    "L293; kserve/kserve@v0.20.0:charts/kserve-resources/files/kserve/resources.yaml L585-610",
)

VOLCANO_UNLISTED_RESOURCES_ARE_UNCAPPED = _fact(
    "volcano-caps-only-the-resources-a-queue-lists",
    "Volcano's proportion plugin (v1.15.1) bounds a queue by realCapability = (cluster total - all guarantees + its "
    "guarantee), lowered per dimension by `capability` with missing dimensions taken as infinite: a scalar resource "
    "the capability does not list (a MIG profile) is bounded only by the cluster. A listed 0 is a cap of 0.",
    "volcano-sh/volcano@v1.15.1:pkg/scheduler/plugins/proportion/proportion.go L120-139, "
    "pkg/scheduler/api/resource_info.go L87-123, L949-985",
)

VOLCANO_QUEUE_GUARANTEE_NEEDS_DESERVED = _fact(
    "volcano-queue-webhook-needs-deserved-over-guarantee",
    "Volcano's queue validating webhook (v1.15.1, enabled by the chart's default admissions) refuses a Queue whose "
    "spec.guarantee.resource names a resource that spec.deserved lacks or holds less of, and one whose deserved "
    "exceeds its capability (guarantee <= deserved <= capability). The proportion plugin never reads "
    "spec.deserved: it computes each queue's deserved from weights, raised to the guarantee.",
    "volcano-sh/volcano@v1.15.1:pkg/webhooks/admission/queues/validate/validate_queue.go L226-L291; "
    "pkg/scheduler/plugins/proportion/proportion.go L96-L139, L220-L236 (deserved from weight, Max with guarantee)",
)

VOLCANO_COUNTS_CSI_CLAIMS = _fact(
    "volcano-counts-csi-claims-as-node-resources",
    "Volcano's scheduler (v1.15.1) adds one `attachable-volumes-csi-<driver>` to a pod's request per claim bound to "
    "a CSI volume, and a node offers that resource only when its CSINode lists the driver (a very large amount when "
    "the driver reports no volume limit, as Fluid's fuse.csi.fluid.io does). So a model pod that mounts a Fluid "
    "cache fits only nodes where Fluid's CSI node plugin has registered, and its queue admits it only once some node "
    "offers the resource. Fluid's chart (v1.0.8) runs that plugin on every node by default (csi.tolerations: "
    "operator Exists).",
    "volcano-sh/volcano@v1.15.1:pkg/scheduler/cache/event_handlers.go L87-L170 (addPodCSIVolumesToTask, "
    "getPodCSIVolumes), L672-L679 and L1364-L1397 (setCSIResourceOnNode); pkg/scheduler/plugins/proportion/"
    "proportion.go L331-L376 (per-dimension queue check); fluid-cloudnative/fluid@v1.0.8:pkg/csi/plugins/driver.go "
    "L37 (driver name), charts/fluid/fluid/values.yaml csi.tolerations, templates/csi/daemonset.yaml L22-L41; "
    "kubernetes-csi/drivers@v1.0.2:pkg/csi-common/nodeserver-default.go L39-L45 (NodeGetInfo: no max volumes); "
    "kubernetes/kubernetes@v1.33.13:pkg/volume/csi/nodeinfomanager/nodeinfomanager.go L536-L593",
)

NVIDIA_VISIBLE_DEVICES_IS_HONOURED = _fact(
    "nvidia-visible-devices-is-honoured-from-any-container",
    "The NVIDIA Container Toolkit (v1.20.0; `accept-nvidia-visible-devices-envvar-when-unprivileged` defaults to "
    "true) exposes the GPUs a container's NVIDIA_VISIBLE_DEVICES names when its runtime is the default one, as on "
    "EKS's NVIDIA node images, where the GPU Operator runs no toolkit and CDI stays off here. The device plugin's "
    "default list strategy is that same variable, and a container's own env is applied after the plugin's, so a "
    "pod that sets NVIDIA_VISIBLE_DEVICES=all on a shared node sees every GPU of it. Tenants have no Kubernetes "
    "access: every pod is one the platform renders, and the policy pack forbids the variable in them.",
    "NVIDIA/nvidia-container-toolkit@v1.20.0:api/config/v1/config.go L64, L106; gpu-operator@v26.7.0 chart values "
    "`cdi.enabled` (components/addons/gpu_operator.py turns it on only with the operator's toolkit)",
)

NVIDIA_IMAGE_DEFAULTS_EXPOSE_EVERY_GPU = _fact(
    "nvidia-images-expose-every-gpu-unless-told-void",
    "On a node whose default runtime is the NVIDIA Container Runtime (EKS's AL2023 NVIDIA images: nodeadm makes it "
    "containerd's default_runtime_name wherever it is installed), every container runs through it, a GPU requested or "
    "not. The runtime (toolkit v1.20.0, mode `auto`, which resolves to jit-cdi on an NVML host; the legacy hook reads "
    "the same list) gives a container the devices its NVIDIA_VISIBLE_DEVICES names, read from the OCI spec's process "
    "environment: the image's env with the pod's on top (containerd appends the container's after the image's, and "
    "the toolkit keeps the last). So a container that requests no GPU (the device plugin sets the variable only for "
    "those that do) gets what its image says: CUDA base images (nvidia/cuda, which vLLM's image builds on) say `all`, "
    "every GPU of the node; a legacy CUDA image (CUDA_VERSION without NVIDIA_REQUIRE_CUDA) with the variable unset "
    "gets all too; other images, unset or empty, none. `void` leaves the container untouched, whatever the image; "
    "`none` still sets up the driver's libraries, without a GPU. Hence a container that may run on a GPU node and "
    "requests no GPU says void.",
    "awslabs/amazon-eks-ami@v20260724:nodeadm/internal/containerd/runtime_config_nvidia.go L25-34, "
    "config2.template.toml L25, templates/al2023/provisioners/install-nvidia-driver.sh L265 (the toolkit from NVIDIA's "
    "repository when the image is built: v1.20.0, the GPU Operator v26.7.0's, is the version read here); "
    "NVIDIA/nvidia-container-toolkit@v1.20.0:api/config/v1/config.go L106, L120 (accept the variable unprivileged; "
    "mode auto), internal/info/auto.go L87-90, L111-135 (auto -> jit-cdi), internal/modifier/mode.go L17-18, "
    "internal/modifier/cdi.go L43-55, L108-124 (devices from VisibleDevices; none requested, no modification), "
    "internal/config/image/cuda_image.go L60-79 (env from the spec's process), L101-105 (IsLegacy), L149-179 "
    "(unset on a legacy image -> all; unset, empty or void -> void), L258-292 (VisibleDevices), "
    "internal/config/image/builder.go L107-118 (the last value of a name wins), internal/config/image/devices.go "
    "L36-50, L76-83, cmd/nvidia-container-runtime-hook/container_config.go L177-185, container_config_test.go L60-90 "
    "(void -> no GPU container; none -> the driver without devices); containerd/containerd@v2.1.4:"
    "internal/cri/server/container_create.go L752-758, pkg/oci/spec_opts.go L180-188 (image env first, then the "
    "container's); the nvidia/cuda image Dockerfiles (ENV NVIDIA_VISIBLE_DEVICES=all) and vllm-project/vllm "
    "docker/Dockerfile (FINAL_BASE_IMAGE=nvidia/cuda:...), not read at a pin",
)

PULUMI_PATCH_AWAITS = _fact(
    "pulumi-patch-awaits-like-its-kind",
    "A pulumi-kubernetes (v4.34.2) Patch resource waits for its object as the full resource of its kind would (a "
    "DeploymentPatch until the Deployment is Available after the rollout it causes), unless the patch carries the "
    'annotation `pulumi.com/skipAwait: "true"`. The agent flags patch carries it: the agent it rolls out starts only '
    "once its RBAC in Karmada exists, created after the patch.",
    "pulumi_kubernetes 4.34.2 (installed): apps/v1/DeploymentPatch.py class docstring ('This resource waits until its "
    "status is ready'); pulumi/pulumi-kubernetes@v4.32.0:provider/pkg/await/await.go L190-240",
)

PULUMI_SERVICE_AWAITS_SETTLED_ENDPOINTS = _fact(
    "pulumi-service-awaits-settled-endpoints",
    "pulumi-kubernetes waits for a Service that selects pods (not headless, ExternalName or selector-less) until "
    "its v1 Endpoints of its name have settled and list no address that is not ready. It does not ask for a ready "
    "address (its own test: 'Should succeed with no endpoints'). Each Endpoints event, the first listing included, "
    "marks them unsettled and starts a 10 s timer that marks them settled (none is cancelled): the wait ends at the "
    "earliest 10 s after it starts, and Endpoints that keep changing settle when the first change's timer fires. "
    "At its timeout (10 min unless set; and on cancel) it passes a Service that is ready (a LoadBalancer has an "
    "ingress) with no pending address, settled or not: one whose Endpoints object never comes waits out the whole "
    "timeout and then passes. A ServicePatch "
    "waits likewise (pulumi-patch-awaits-like-its-kind); a Patch is awaited again only when its own inputs change.",
    "pulumi/pulumi-kubernetes@v4.32.0:provider/pkg/await/service.go L80, L158 (the 10 min timeout), L146-L154 "
    "(Endpoints informer), L228-L271 (await; L246-L263 the last look on cancel or timeout, L264-L265 any timer "
    "settles), L299-L315 (serviceReady, in processServiceEvent), L318-L363 "
    "(processEndpointEvent, "
    "time.Sleep(10 * time.Second)), L402-L425 (shouldWaitForPods, checkAndLogStatus: serviceReady && "
    "endpointsSettled && !endpointsPending), service_test.go L117-L128, L38-L48 ('Should succeed if Endpoints "
    "have settled when timeout occurs', never marked settled); provider/pkg/await/await.go L504-L515 (an update "
    "re-awaits on changed inputs); unchanged at the mirror's HEAD 94977969",
)

WEBHOOK_CALLED_THROUGH_SERVICE_ENDPOINTS = _fact(
    "webhook-called-through-service-endpoints",
    "kube-apiserver (v1.33.13) calls an admission webhook through its Service: with aggregator routing by the "
    "Service's v1 Endpoints, which refuse the call while they have no subset ('no endpoints available for service', "
    "503), otherwise by its cluster IP, which kube-proxy routes only once the endpoints reach it; a webhook with "
    "failurePolicy Fail then refuses the request. The endpoints controller fills the Endpoints after the pods turn "
    "Ready, asynchronously; Helm's wait ends on the pods (it asks a Service only for a load balancer's address), so "
    "an object created right after a release's wait can meet a webhook with no endpoint. A pod without a readiness "
    "probe is Ready when its container starts, before its server listens (Volcano's webhook manager first writes "
    "its CA into its webhook configurations and syncs its informers).",
    "k8s.io/apiserver@v0.33.13:pkg/util/proxy/proxy.go L55-L79 (ResolveEndpoint); "
    "helm.sh/helm/v3@v3.20.2:pkg/kube/ready.go L253 (serviceReady); volcano-sh/volcano@v1.15.1:"
    "cmd/webhook-manager/app/server.go L91-L140, installer/helm/chart/volcano/templates/admission.yaml L136-L176 (no "
    "readinessProbe); seen in a prod rehearsal on 2026-12-02: "
    "prod-usw2's ClusterServingRuntimes refused by KServe's webhook right after the kserve release's wait",
)

KSERVE_AND_VOLCANO_WEBHOOK_SERVICES = _fact(
    "kserve-and-volcano-webhook-services",
    "The Services the API server calls for the webhooks (failurePolicy Fail) the pinned charts register: "
    "kserve-resources v0.20.0 `kserve-webhook-server-service` in the release namespace (InferenceServices, "
    "ServingRuntimes, ClusterServingRuntimes, InferenceGraphs, TrainedModels; pods of an InferenceService), "
    "kserve-llmisvc-resources v0.20.0 `llmisvc-webhook-server-service` (LLMInferenceServices, "
    "LLMInferenceServiceConfigs; also the CRD's conversion webhook), volcano v1.15.1 "
    "`<release>-admission-service` (Queues, PodGroups, HyperNodes, Jobs). cert-manager needs no wait of ours: its "
    "chart's startupapicheck post-install hook (on by default) ends the release only once its webhook answers.",
    "kserve/kserve@v0.20.0:charts/kserve-resources/files/kserve/resources.yaml L411-L424 (the Service), L553-L772 (its six webhook configurations); "
    "charts/kserve-llmisvc-resources/files/llmisvc/resources.yaml L1453-L1465; "
    "charts/kserve-llmisvc-crd/templates/serving.kserve.io_llminferenceservices.yaml L8-L16; "
    "volcano-sh/volcano@v1.15.1:installer/helm/chart/volcano/templates/admission.yaml L144, L191-L214; "
    "cert-manager chart values startupapicheck.enabled (conformance/upstream/cert-manager/v1.21.1/chart-cert-manager.values.yaml L272-L273)",
)

PULUMI_SDK_WALKS_THE_STACK_PER_REGISTRATION = _fact(
    "pulumi-python-sdk-walks-the-call-stack-per-registration",
    "The Python SDK (3.272.0) builds a source stack trace for every resource it registers or reads: "
    "`traceback.extract_stack()` of the whole call stack (every frame's source line looked up), then a file URI and "
    "line per frame below the resource's constructors, sent as the request's `sourcePosition` and `stackTrace` for "
    "the engine's diagnostics. It costs per frame, so a resource declared deep in components costs more; nothing "
    "else in the SDK reads it.",
    "pulumi 3.272.0 (installed): pulumi/runtime/resource.py _get_stack_trace L741-778, _get_source_position "
    "L781-791, read_resource L833-837 and L884-885, register_resource L1160-1161 and L1316-1317",
)

EKS_ACCESS_ENTRIES = _fact(
    "eks-api-authentication-admits-only-access-entries",
    "With `authenticationMode: API` only IAM principals with an access entry can use an EKS cluster; "
    "`bootstrapClusterCreatorAdminPermissions` gives one to the principal that created it, nobody else. A CI preview "
    "identity or an operator role needs its own entry and an access policy (AmazonEKSViewPolicy reads, "
    "AmazonEKSClusterAdminPolicy administers): `stacks.access`.",
    "docs.aws.amazon.com/eks/latest/userguide/access-entries.html; docs.aws.amazon.com/eks/latest/userguide/"
    "access-policy-permissions.html",
)

KARMADA_AGENT_IDENTITY = _fact(
    "karmada-agent-identity-as-register-issues-it",
    "`karmadactl register` (v1.18.2) gives a pull member's karmada-agent a client certificate with CN "
    "`system:karmada:agent:<cluster>` and O `system:karmada:agents`, an RSA 3072 key and the usages digital "
    "signature, key encipherment and client auth, and RBAC bound to that user only: its own Cluster and cluster "
    "status by resourceNames, its own Secrets (<cluster>, <cluster>-impersonator) by resourceNames, Works only in "
    "`karmada-es-<cluster>`; it asks for the certificate for 365 days (8760h), and the agent does not rotate it "
    "unless its certRotation controller is turned on (off by default). The agent reads its Karmada kubeconfig once, "
    "at start: a reissued certificate reaches it when its pod restarts. The chart's own leaf certificates expire "
    "after 43800h, its root CA after 3650 days, with RSA 3072. The policy pack's karmada-agent-identity and "
    "karmada-agent-rbac-scoped rules hold every plan to it (policies/upstream.py carries the same facts).",
    "karmada-io/karmada@v1.18.2:pkg/karmadactl/register/register.go L88-90, L112-113, L643-671, L707-745, "
    "L779-800, L846-857, L1097-1112, L1372-1374; cmd/agent/app/agent.go L136-138, L154; "
    "charts/karmada/values.yaml L136-155",
)

KSERVE_LLM_PRESETS_MERGE = _fact(
    "kserve-llm-templates-merge-onto-presets",
    "KServe (v0.20.0) runs an LLMInferenceService's pods as its `template` / `prefill.template` strategically "
    "merged onto the well-known LLMInferenceServiceConfig presets: `kserve-config-llm-template` without prefill, "
    "`kserve-config-llm-decode-template` (vLLM on 8001 behind the llm-d routing sidecar on 8000, whose resources "
    "are `{}`) and `kserve-config-llm-prefill-template` with it; the presets set the image, probes and a "
    "restricted security context, and label the pods app.kubernetes.io/{component,name,part-of}, "
    "kserve.io/component=workload and llm-d.ai/role. So the decode template gives the sidecar resources (a GPU pod "
    "stays Guaranteed) and the pack judges the merged pods. With `router.scheduler` set and no pool ref, KServe also "
    "runs the endpoint picker: `router.scheduler.template` merged onto `kserve-config-llm-scheduler` (an EPP "
    "container and a tokenizer sidecar that requests 256m / 500Mi and sets no limits). Configs named in "
    "`spec.baseRefs` (the service's namespace first, then `kserve`) merge between the preset and the spec.",
    "kserve/kserve@v0.20.0:pkg/controller/v1alpha2/llmisvc/config_merge.go L212-283, L741-757, L779-829; "
    "workload_single_node.go L95-97, L222-229, L503-509; scheduler.go L355-470, L1623-1629; "
    "config/llmisvcconfig/config-llm-{template,decode-template,prefill-template,scheduler}.yaml (vendored)",
)

VLLM_RUNTIME_LORA_ENV = _fact(
    "vllm-runtime-lora-updating-env",
    "vLLM reads VLLM_ALLOW_RUNTIME_LORA_UPDATING as `.strip().lower() in ('1', 'true')`; when on, its OpenAI "
    "server serves POST /v1/load_lora_adapter and /v1/unload_lora_adapter, loading an adapter from any path the "
    "caller names. The platform never sets it; the pack refuses it in production.",
    "vllm-project/vllm@v0.33.0 (PyPI wheel): vllm/envs.py L1204-1207 (VLLM_ALLOW_RUNTIME_LORA_UPDATING), "
    "vllm/entrypoints/serve/lora/api_router.py L30, L63-68, L82",
)

NODEADM_FAST_IMAGE_PULL = _fact(
    "nodeadm-fast-image-pull-is-soci-parallel-pull",
    "nodeadm (EKS AL2023 AMIs, release v20260714) switches a node to the SOCI snapshotter only when its NodeConfig "
    "sets `featureGates.FastImagePull: true` (default false) and the node has at least 4 vCPU and 7 GiB of memory; "
    "it then sets containerd's CRI snapshotter to `soci` and writes /etc/soci-snapshotter-grpc/config.toml with "
    "`[pull_modes.parallel_pull_unpack] enable = true` (20 downloads and 12 unpacks per image, 16mb chunks, "
    "unpacked layers discarded). It is a NodeConfig setting, not a containerd drop-in. With "
    "`instance.localStorage` set and no `disabledMounts: [SOCI]`, setup-local-disks bind-mounts "
    "/var/lib/soci-snapshotter-grpc and /var/lib/containerd onto the instance-store array, so pulls write to NVMe, "
    "not to the root EBS volume (whose throughput the docs ask to raise to 600 MiB/s otherwise).",
    "awslabs/amazon-eks-ami@v20260724 (nodeadm identical at v20260714): nodeadm/internal/api/featuregates.go "
    "L18-22; nodeadm/internal/containerd/config.go L159-188; nodeadm/internal/containerd/config2.template.toml; "
    "nodeadm/internal/containerd/snapshotter/soci-snapshotter.config.toml (vendored); nodeadm/internal/system/"
    "local_disk.go L22-49; templates/al2023/runtime/bin/setup-local-disks L104-106, L223; nodeadm/doc/examples.md "
    "L153-173",
)

SOCI_PARALLEL_PULL_IS_NOT_LAZY = _fact(
    "soci-parallel-pull-skips-lazy-loading",
    "In parallel pull and unpack mode the SOCI snapshotter skips remote (lazy) snapshot preparation for every layer, "
    "in every release that has the mode (v0.11.0 on): images are pulled whole before the container starts, a SOCI "
    "index in the registry is neither used nor needed. Lazy loading is another mode (soci_v2, with SOCI indexes "
    "bound to the images); without an index it defers to containerd's sequential pull. nodeadm offers no switch "
    "for it, and the engines' images (Docker Hub, NGC) carry no SOCI index.",
    "awslabs/soci-snapshotter@v0.15.0:snapshot/snapshot.go L409-410, L431-432, L453-460, L507-510 (the same "
    "skipRemoteSnapshotPrepare from v0.11.1 to v0.14.1; the mode came with 47cc2aaf, first tag v0.11.0); "
    "docs/parallel-mode.md, docs/pull-modes.md",
)

GKE_IMAGE_STREAMING_ONLY_ARTIFACT_REGISTRY = _fact(
    "gke-image-streaming-only-from-artifact-registry",
    "GKE image streaming (`gcfsConfig.enabled`, on for every GPU pool here) streams only images stored in Artifact "
    "Registry; images from Docker Hub (vllm/vllm-openai) or nvcr.io (Triton) are pulled whole, as without it.",
    "cloud.google.com/kubernetes-engine/docs/how-to/image-streaming (Requirements, Limitations); FACTS-3.md §11",
)

CLUSTERPEDIA_CREDENTIALS_FROM_SECRETS = _fact(
    "clusterpedia-credentials-from-secrets-need-the-v0.9.0-crds",
    "Clusterpedia v0.9.0's synchro manager builds a PediaCluster's client from Secrets of its own namespace "
    "(CLUSTERPEDIA_NAMESPACE) when the spec carries no kubeconfig, token or key and names them in "
    "`spec.authenticationFrom`, with the ClusterAuthenticationFromSecret gate on (alpha, default off). The "
    "clusterpedia-2.6.0 chart's `_crds/` (unchanged since 2022) have no `authenticationFrom`, which the API server "
    "would prune; the v0.9.0 CRDs in kustomize/crds have it. So the CRDs are applied from v0.9.0, not by the chart.",
    "clusterpedia-io/clusterpedia@v0.9.0: pkg/utils/rest.go L14-30; pkg/synchromanager/clustersynchro_manager.go "
    "L94-113, L417; pkg/synchromanager/features/features.go L72-95; cmd/clustersynchro-manager/app/options/"
    "options.go L37; staging/src/github.com/clusterpedia-io/api/cluster/v1alpha2/types.go L89; kustomize/crds/"
    "cluster.clusterpedia.io_pediaclusters.yaml L68 (vendored); clusterpedia-io/clusterpedia-helm@clusterpedia-2.6.0:"
    "charts/clusterpedia/_crds/cluster.clusterpedia.io_pediaclusters.yaml (vendored), templates/"
    "clustersynchro-manager-deployment.yaml (CLUSTERPEDIA_NAMESPACE, --feature-gates from values)",
)

CLUSTERPEDIA_SYNCHRO_DIALS_AND_READS = _fact(
    "clusterpedia-synchro-dials-each-member-and-only-reads",
    "Clusterpedia v0.9.0 has no agent: its synchro manager, on the host, dials each PediaCluster's `apiserver` "
    "itself. There it only lists and watches: the synced resources (reflectors), and for its discovery "
    "CustomResourceDefinitions and APIServices (informers), besides /version, /readyz and /healthz, which every "
    "authenticated caller may read. A member whose API server is private and has no network path from the host "
    "(a pull member here) cannot be indexed until it admits the host's NAT egress.",
    "clusterpedia-io/clusterpedia@v0.9.0: pkg/synchromanager/clustersynchro/cluster_synchro.go L85, L128-131; "
    "pkg/runtime/discovery/dynamic_discovery.go L116-135; pkg/runtime/discovery/controller/crd.go L151-171, "
    "apiservice.go L113-114; pkg/synchromanager/clustersynchro/cluster_monitor.go L73, L98-112; ROADMAP.md L9 "
    "(an agent is future work)",
)

CLUSTERPEDIA_IMPORT_POLICY_NEEDS_KARMADA_SECRETS = _fact(
    "clusterpedia-karmada-import-policy-needs-reported-secrets",
    "Clusterpedia's ClusterImportPolicy for Karmada turns each Karmada Cluster into a PediaCluster with the token "
    "of the Secret the Cluster's `spec.secretRef` names, and syncs Secrets and ConfigMaps; its controller reads "
    "the source Clusters and writes PediaClusters through one kubeconfig, so Clusterpedia would have to run against "
    "the Karmada API server. Pull members here register with `--report-secrets=None` and have no secretRef, and a "
    "reported secret would carry the agent's own access: the program declares one PediaCluster per search member "
    "instead, with a read-only identity of its own, and the controller manager is off.",
    "clusterpedia-io/clusterpedia@v0.9.0: kustomize/clusterimportpolicy/karmada.yaml L9-14, L27-28; "
    "cmd/controller-manager/app/options/options.go L93-106; cmd/controller-manager/app/controllermanager.go "
    "L165-190; components/federation/member.py AGENT_FLAGS",
)

CLUSTERPEDIA_CHART_STORE_IMAGES_GONE = _fact(
    "clusterpedia-chart-default-store-images-are-gone",
    "The clusterpedia-2.6.0 chart's bundled PostgreSQL and its synchro manager's check-storage init container "
    "default to docker.io/bitnami/postgresql:11.15.0-debian-10-r14; Bitnami removed versioned tags from "
    "docker.io/bitnami in 2025 and did not copy debian-10 ones to bitnamilegacy. The platform runs the database "
    "itself on the official postgres image.",
    "clusterpedia-io/clusterpedia-helm@clusterpedia-2.6.0: charts/clusterpedia/values.yaml L373-387, templates/"
    "_helpers.tpl L317-327, templates/clustersynchro-manager-deployment.yaml (check-storage); "
    "bitnami/containers#83267, bitnami/charts#36229",
)

CLUSTERPEDIA_CHART_GRANTS_CLUSTER_ADMIN = _fact(
    "clusterpedia-chart-grants-cluster-admin-and-skips-tls",
    "Whatever its values, the clusterpedia-2.6.0 chart renders a ClusterRole of every verb on every resource of "
    "every group and `get` on every non-resource URL, bound to the API server's, the synchro manager's and the "
    "controller manager's service accounts (the last even with the controller manager disabled, when the chart "
    "creates no such account), and the APIService v1beta1.clusterpedia.io with insecureSkipTLSVerify: true. Its "
    "API server Deployment mounts only the chart's ConfigMaps, so no serving certificate can be given, and "
    "Clusterpedia's API server then serves a self-signed one for localhost. Installed, Clusterpedia's pods are "
    "cluster-admin on the federation host, so is whoever creates the controller manager's account in its "
    "namespace, and the host's API server sends every caller's identity to whatever answers that Service. So the "
    "platform renders the chart's objects itself (components/federation/search_index.py): the same Deployments, "
    "Services and APIService, with the RBAC of CLUSTERPEDIA_HOST_CALLS and a serving certificate the APIService's "
    "caBundle verifies.",
    "clusterpedia-io/clusterpedia-helm@clusterpedia-2.6.0: charts/clusterpedia/templates/clusterrole.yaml L6-11, "
    "clusterrolebinding.yaml L10-19, controller-manager-serviceaccount.yaml L1, apiserver-apiservice.yaml L7, "
    "apiserver-deployment.yaml L118-131, L153-156, L172-183; clusterpedia-io/clusterpedia@v0.9.0: "
    "cmd/apiserver/app/options/options.go L118-120; k8s.io/apiserver@v0.31.2: pkg/server/options/serving.go "
    "L175-182, L340-347",
)

CLUSTERPEDIA_HOST_CALLS = _fact(
    "clusterpedia-host-calls",
    "On the host's API server, with their own service accounts, Clusterpedia v0.9.0's components call only this. "
    "The API server: discovery (/api, /apis, open to every authenticated caller); list and watch of PediaClusters "
    "(one informer; ClusterSyncResources are not read); as a delegating API server, TokenReview and "
    "SubjectAccessReview creates and get/list/watch of the kube-system ConfigMap extension-apiserver-authentication "
    "(a failure to read it stops it: no tolerate flag is set) - the built-in system:auth-delegator ClusterRole and "
    "extension-apiserver-authentication-reader Role; no Secrets (its lister needs the ClusterAuthenticationFromSecret "
    "gate of the API server, off by default, and serves only proxying, which needs AllowProxyRequestToClusters, off), "
    "no flow-control or admission informers (priority and fairness off, no admission options), no leases. "
    "/healthz, /readyz and /livez skip authorization. The synchro manager: list and watch of PediaClusters and "
    "ClusterSyncResources; update of PediaClusters (its finalizer) and of their status; list and watch of the "
    "Secrets of its own namespace (one namespaced informer, with ClusterAuthenticationFromSecret on, that must sync "
    "within 60 s or it exits); get, create and update of its Lease `clusterpedia-clustersynchro-manager` in the "
    "leader-election namespace; create, update and patch of Events (about that Lease). Members are dialled with each "
    "PediaCluster's own credentials (CLUSTERPEDIA_SYNCHRO_DIALS_AND_READS).",
    "clusterpedia-io/clusterpedia@v0.9.0: cmd/apiserver/app/options/options.go L64-74, L153-178; pkg/apiserver/"
    "apiserver.go L108-121, L152-165; pkg/kubeapiserver/apiserver.go L147-153, L201, L207; pkg/kubeapiserver/"
    "features/features.go L37-38; pkg/kubeapiserver/options.go L70-74; cmd/clustersynchro-manager/app/options/"
    "options.go L60-74, L162-165; cmd/clustersynchro-manager/app/synchro.go L107-157; pkg/synchromanager/"
    "clustersynchro_manager.go L73-75, L94-114, L164-178, L368, L379, L669. k8s.io/apiserver@v0.31.2: pkg/server/"
    "options/authentication.go L316-324, L338-373, L401-406; pkg/server/dynamiccertificates/"
    "configmap_cafile_content.go L83-84; pkg/authentication/request/headerrequest/requestheader_controller.go "
    "L114-115, L190; pkg/server/options/authorization.go L78-93, L196; pkg/server/options/feature.go L73-86; "
    "pkg/server/options/coreapi.go L83; pkg/server/config.go L886-893. k8s.io/client-go@v0.31.2: tools/"
    "leaderelection/resourcelock/leaselock.go L41-94; kubernetes/typed/core/v1/event_expansion.go L159-169. "
    "k8s.io/component-base@v0.31.2: config/v1alpha1/defaults.go L51-53. k8s.io/kubernetes@v1.33.13: plugin/pkg/auth/"
    "authorizer/rbac/bootstrappolicy/policy.go L434-439, namespace_policy.go L77-81",
)

AGGREGATED_API_VERIFIED_BY_CA_BUNDLE = _fact(
    "aggregated-api-verified-by-its-ca-bundle",
    "The host's API server proxies a request for an aggregated API to the APIService's Service with the caller's "
    "user, groups and extra in headers, over TLS with its front-proxy client certificate, verifying the server "
    "against the APIService's caBundle for the name `<service>.<namespace>.svc`, unless insecureSkipTLSVerify. "
    "Clusterpedia's API server serves the --tls-cert-file/--tls-private-key-file pair and reloads it when the "
    "files change (a Secret update reaches the pod without a restart).",
    "k8s.io/kube-aggregator@v0.33.13: pkg/apiserver/handler_proxy.go L167, L222-229; k8s.io/apiserver@v0.31.2: "
    "pkg/server/options/serving.go L175-182, L304; clusterpedia-io/clusterpedia@v0.9.0: cmd/apiserver/app/options/"
    "options.go L161, L193",
)

CLUSTERPEDIA_CRDS_NEED_THEIR_STATUS = _fact(
    "clusterpedia-crds-need-their-status-schema",
    "Clusterpedia v0.9.0's synchro manager writes each PediaCluster's status (conditions, synced resources, API "
    "server, version) through the status subresource, and its API server serves only the resources that status "
    "lists; the v0.9.0 PediaCluster CRD declares that schema and subresource. The project's vendored copy "
    "(conformance/upstream/clusterpedia/v0.9.0) has no `status` schema (tools/vendor_upstream.py _reduce_version "
    "drops it, with every description): applied, the API server would prune every status write and searches "
    "would find nothing. So the CRDs are applied from the tag's files, by URL, and the deploy runner needs "
    "raw.githubusercontent.com.",
    "clusterpedia-io/clusterpedia@v0.9.0: kustomize/crds/cluster.clusterpedia.io_pediaclusters.yaml L173-300, "
    "L304-305; pkg/synchromanager/clustersynchro_manager.go L669; pkg/kubeapiserver/clusterresource_controller.go "
    "L63-80; tools/vendor_upstream.py _reduce_version",
)

CLUSTERPEDIA_STORAGE_PASSWORD_FROM_FILE = _fact(
    "clusterpedia-storage-password-from-its-config-file",
    "Clusterpedia v0.9.0 loads its --storage-config file with configor, which decodes the YAML into the storage "
    "config (yaml.v3: a field without a yaml tag is read under its name lowercased, `password`; a number into a "
    "string field as its text) and then overrides a field from its environment variable only when that variable is "
    "set and non-empty (DB_PASSWORD for the password); for PostgreSQL it connects with host, port, user, password "
    "and dbname from that config. So the password can sit in the config file, mounted from a Secret, with no "
    "DB_PASSWORD in the environment.",
    "clusterpedia-io/clusterpedia@v0.9.0: pkg/storage/internalstorage/config.go L27-44, L245-272; pkg/storage/"
    "internalstorage/register.go L37-38; vendor/github.com/jinzhu/configor/utils.go L116-135, L264-300, L399-416; "
    "vendor/gopkg.in/yaml.v3/yaml.go L626, decode.go (scalar into reflect.String: n.Value)",
)

POSTGRES_IMAGE_READS_PASSWORD_FILE = _fact(
    "postgres-image-reads-password-file",
    "The official postgres image's entrypoint fills POSTGRES_PASSWORD (and USER, DB, INITDB_ARGS) from the file "
    "POSTGRES_PASSWORD_FILE names when the variable itself is unset, before initdb sets the user's password: the "
    "search index's password is mounted from its Secret as a file and never placed in the environment.",
    "docker-library/postgres@6edb0a8: 17/bookworm/docker-entrypoint.sh L5-28 (file_env), L235 (docker_setup_env)",
)

TLS_PROVIDER_HAS_NO_NAME_CONSTRAINTS = _fact(
    "tls-provider-has-no-name-constraints",
    "pulumi-tls 5.6.2 (terraform-provider-tls) can make a certificate a CA (`is_ca_certificate`) and bound the CAs "
    "below it (`max_path_length`), but has no input for X.509 name constraints on SelfSignedCert or "
    "LocallySignedCert: a CA it makes may sign any name. cert-manager v1.21.1 can put `nameConstraints` on a CA "
    "Certificate it issues (feature NameConstraints, beta, on by default), but only from an issuer whose key is in "
    "the cluster, so a constrained CA there sits beside the unconstrained key that signed it. The gateway CA is "
    "kept small instead: its root key in the anchor stack's state only, an intermediate (path length 0) per region.",
    "pulumi_tls 5.6.2 (installed): locally_signed_cert.py, self_signed_cert.py (the inputs); "
    "hashicorp/terraform-provider-tls#309 (name constraints, open); cert-manager/cert-manager@v1.21.1:"
    "internal/controller/feature/features.go L124-127, L231",
)

KMS_SECRETS_PROVIDER_DECRYPTS_ON_EVERY_READ = _fact(
    "kms-secrets-provider-decrypts-its-data-key-on-every-read",
    "A stack with a cloud KMS secrets provider (`awskms://...`) keeps a data key encrypted by that KMS key; the CLI "
    "decrypts it (kms:Decrypt) whenever it opens the stack's secrets: to run a preview or update (its config and "
    "state), and to read its outputs through a StackReference from another stack (the referencing runner decrypts "
    "them with the referenced stack's provider). So a preview identity without kms:Decrypt previews nothing, and a "
    "runner reading another stack's secret outputs needs kms:Decrypt on that stack's key, whatever its own cloud.",
    "pulumi/pulumi pkg@v3.274.0:secrets/cloud/manager.go L93-124 (keeper.Decrypt of the data key); "
    "backend/diy/state.go L133-148 (snapshot), L175-195 (a referenced stack's outputs); "
    "resource/stack/deployment.go L520-560 (DecryptStackOutputs)",
)

KSERVE_PREDICTOR_SERVICE = _fact(
    "kserve-predictor-service",
    "KServe (v0.20.0) in Standard mode serves an InferenceService's predictor through a Service named "
    "`<isvc>-predictor` in its namespace, port 80 targeting the first port of the predictor's first container (our "
    "runtimes' `http`, 8080); it is headless only when the chart's `kserve.service.serviceClusterIPNone` is true "
    "(default false, which we keep). So a caller in the cluster uses "
    "http://<isvc>-predictor.<namespace>.svc.cluster.local/v1.",
    "kserve/kserve@v0.20.0:pkg/constants/constants.go L397, L799-804; "
    "pkg/controller/v1beta1/inferenceservice/components/predictor.go L159; "
    "pkg/controller/v1beta1/inferenceservice/reconcilers/service/service_reconciler.go L104-131, L174-186; "
    "charts/kserve-resources/values.yaml L18-19 (vendored)",
)

GIE_OBJECTIVE_FROM_HEADER = _fact(
    "picker-objective-named-by-a-request-header",
    "The endpoint picker (llm-d-router v0.9.0) takes a request's priority from the InferenceObjective named by its "
    "`x-llm-d-inference-objective` header, else by its deprecated alias `x-gateway-inference-objective` (the new "
    "name wins when both are sent), looked up by name among the objectives of its pool's namespace whose poolRef is "
    "its own pool (one object per name, so each pool's objectives need names of their own); a request naming none, "
    "or one of another pool, gets priority 0. Higher is more important, negative is sheddable. It reads the "
    "objectives only if their CRD is served when it starts (discovery once, at start), in group llm-d.ai "
    "(v1alpha2), else in the old inference.networking.x-k8s.io; when both are served it watches llm-d.ai's and "
    "ignores the old group's objectives. It also takes the fairness flow (`x-llm-d-inference-fairness-id` / "
    "`x-gateway-inference-fairness-id`) and the model it writes into the body (`x-llm-d-model-name-rewrite` / "
    "`x-gateway-model-name-rewrite`) from the request's headers, whoever set them: a client that could send them "
    "would pick its own priority, or another model of the pool, such as another tenant's LoRA adapter.",
    "llm-d/llm-d-router@v0.9.0:pkg/epp/metadata/consts.go L33-44, L60-76 (HeaderNames, GetLowerCaseHeaderValue: "
    "the name first, then the alias); pkg/epp/handlers/request.go L54-55; pkg/epp/requestcontrol/director.go L139, "
    "L215-230, L252-262; pkg/epp/datastore/datastore.go L219-229; pkg/epp/controller/"
    "inferenceobjective_reconciler.go L60-71; pkg/epp/server/controller_config.go L28-80, cmd/epp/runner/runner.go "
    "L291-292; apix/v1alpha2/doc.go (groupName llm-d.ai), inferenceobjective_types.go L60-78",
)

GIE_FLOW_CONTROL_BY_PRIORITY = _fact(
    "picker-flow-control-orders-and-sheds-by-priority",
    "With the `flowControl` feature gate the endpoint picker (llm-d-router v0.9.0) queues each request in the band "
    "of its priority and, while the pool is saturated (its default utilization detector: more than 5 waiting "
    "requests or 80% KV cache per pod; a pool with no pod is saturated), dispatches from the highest band first and "
    "holds the lower ones (head-of-line blocking at the first saturated band; the default usage-limit policy gives "
    "every band the ceiling 1.0). A band's `maxRequests` bounds its queued requests: one more is refused at once "
    "(RejectedCapacity, 429); a request queued longer than `defaultRequestTTL` is evicted (503). It never evicts a "
    "request it has dispatched: its in-flight eviction package is imported by no program file of the release.",
    "llm-d/llm-d-router@v0.9.0:pkg/epp/flowcontrol/controller/internal/processor.go L282-329, L342-367; "
    "pkg/epp/framework/plugins/flowcontrol/usagelimits/usagelimitpolicy.go L53-57; apix/config/v1alpha1/"
    "endpointpickerconfig_types.go L348-470; pkg/epp/requestcontrol/admission.go L217-240; pkg/common/error/error.go "
    "L84-110; pkg/epp/flowcontrol/eviction/evictor.go (no importer outside its tests); pkg/epp/framework/plugins/"
    "flowcontrol/saturationdetector/utilization/config.go L28-36, detector.go L115-118",
)

AI_GATEWAY_REPLAYS_THE_CLIENT_BODY_TO_POOLS = _fact(
    "ai-gateway-sets-nothing-per-pool-and-replays-the-client-body",
    "The AI Gateway v1.1.0 applies no headerMutation or bodyMutation to an InferencePool backend (only to "
    "AIServiceBackends), and its upstream filter, which it adds to InferencePool clusters too, replaces the body "
    "sent to the model server with the client's body as the gateway first read it whenever it forces a body "
    "mutation: on every retry, and on every streaming request without stream_options.include_usage when token costs "
    "are configured (budgets here). So nothing after its router-level filter can set a field of the body a model "
    "server reads for such requests, and a field the client sent reaches the model server.",
    "envoyproxy/ai-gateway@v1.1.0:api/v1beta1/ai_gateway_route.go L355-375; internal/controller/gateway.go "
    "L438-484; internal/extproc/processor_impl.go L275-278, L344-399; internal/endpointspec/endpointspec.go "
    "L137-155; internal/extensionserver/post_translate_modify.go L405-533",
)

ENVOY_GATEWAY_LUA_RUNS_AFTER_AUTH_AND_MODEL = _fact(
    "envoy-gateway-lua-sees-tenant-and-model-before-the-picker",
    "Envoy Gateway v1.9.0 orders its HTTP filters with api_key_auth (7) before Lua (13+); the AI Gateway v1.1.0 "
    "inserts its router-level ext_proc, which sets `x-ai-eg-model` from the body (overwriting the client's) and "
    "re-selects the route, before the first ext_proc, Wasm, Lua or custom_response filter (custom_response moved "
    "behind api_key_auth: AI_GATEWAY_EXTPROC_PRECEDES_CUSTOM_RESPONSE), and each endpoint picker's ext_proc just "
    "before the router. So a Lua EnvoyExtensionPolicy on the Gateway (enabled on each of its routes, with a "
    "per-route `filterContext` table read by `handle:filterContext():get(key)`) runs after the tenant and the "
    "model are known and before the picker. Lua policies are off unless `extensionApis.enableLua` is set; the "
    "controller runs each script against its mocks before accepting it (luaValidation Strict by default).",
    "envoyproxy/gateway@v1.9.0:internal/xds/translator/httpfilters.go L114-136, internal/xds/translator/lua.go "
    "L34-91, L113-152, api/v1alpha1/envoygateway_types.go L359-373, api/v1alpha1/lua_types.go L51-57, "
    "internal/gatewayapi/luavalidator/lua_validator.go L55-90; envoyproxy/ai-gateway@v1.1.0:internal/extproc/"
    "processor_impl.go L282-290; internal/extensionserver/post_translate_modify.go L672-678, L812-822, L1084-1126; "
    "envoyproxy/envoy@v1.39.0:source/extensions/filters/http/lua/lua_filter.cc L1011-1020, "
    "test/extensions/filters/http/lua/lua_filter_test.cc L3217",
)

AI_GATEWAY_EXTPROC_PRECEDES_CUSTOM_RESPONSE = _fact(
    "ai-gateway-extproc-goes-before-custom-response-unless-reordered",
    "The AI Gateway v1.1.0 inserts its router-level ext_proc (which sets `x-ai-eg-model` from the body and clears "
    "the route cache) before the first HTTP filter named ext_proc, Wasm, Lua, RBAC, (local) rate limit, "
    "custom_response, credential injector, compressor or router. Envoy Gateway v1.9.0 orders custom_response "
    "first (order 0, before api_key_auth at 7), and adds it whenever a BackendTrafficPolicy has `responseOverride`: "
    "the ext_proc would then run before API-key auth, so the route would be re-chosen without the `x-tenant-id` "
    "that auth writes (Envoy's api_key_auth resolves the route first and never clears the cache) and every "
    "tenant-matched AIGatewayRoute rule would miss (the AI Gateway's catch-all answers 404), or match a client's "
    "own `x-tenant-id`. EnvoyProxy `spec.filterOrder` moves custom_response after api_key_auth (the move is "
    "skipped where no api_key_auth filter exists), which puts the AI Gateway's ext_proc after authentication.",
    "envoyproxy/ai-gateway@v1.1.0:internal/extensionserver/post_translate_modify.go L1084-1130 "
    "(insertAIGatewayExtProcFilter, afterExtProcFilterPrefixes), internal/extproc/processor_impl.go L320-330, "
    "internal/controller/ai_gateway_route.go L331-342; envoyproxy/gateway@v1.9.0:internal/xds/translator/"
    "httpfilters.go L100-120 (order), L196-270 (sortHTTPFilters: `after` a missing filter moves nothing), "
    "api/v1alpha1/envoyproxy_types.go L114-176; envoyproxy/envoy@v1.39.0:source/extensions/filters/http/"
    "api_key_auth/api_key_auth.cc L115-118, L170-183",
)

ENVOY_API_KEY_AUTH_OVERWRITES_THE_CLIENT_ID = _fact(
    "envoy-api-key-auth-overwrites-the-client-id-header",
    "Envoy's api_key_auth filter (v1.39.0, Envoy Gateway v1.9.0's proxy) sets the forwarding header to the "
    "authenticated client's id with setReferenceKey, which leaves only that value: a client's own `x-tenant-id` "
    "never survives authentication. Envoy Gateway passes `forwardClientIDHeader` as that forwarding header.",
    "envoyproxy/envoy@v1.39.0:source/extensions/filters/http/api_key_auth/api_key_auth.cc L170-183, "
    "envoy/http/header_map.h L428-439; envoyproxy/gateway@v1.9.0:internal/xds/translator/api_key_auth.go L159-166, "
    "api/v1alpha1/shared_types.go L28-29 (envoy distroless-v1.39.0)",
)

VLLM_PRIORITY_SCHEDULING = _fact(
    "vllm-priority-comes-from-the-request-body",
    "vLLM 0.33.0 takes a request's `priority` (an integer, default 0, lower first) from the body of chat, "
    "completion and responses requests, and from nowhere else (no header). With `--scheduling-policy priority` "
    "(choices fcfs, priority; default fcfs) it orders its waiting queue by (priority, arrival) and, short of KV "
    "cache, preempts the running request with the largest (priority, arrival); a waiting request never preempts a "
    "running one. With fcfs a non-zero priority is accepted and ignored (no error, despite the field's "
    "description). So with priority scheduling, whoever writes the body picks the engine's order.",
    "vllm 0.33.0 (wheel from PyPI): vllm/entrypoints/openai/chat_completion/protocol.py L401, "
    "completion/protocol.py L137, responses/protocol.py L384; vllm/v1/core/sched/request_queue.py L131-212; "
    "vllm/v1/request.py L357-367; vllm/v1/core/sched/scheduler.py L932-944, L984; vllm/v1/engine/input_processor.py "
    "L383, L549; generated-vllm-serve-args.json (vendored, scheduling-policy)",
)

ENVOY_GATEWAY_STATUS_RETRIES_NEED_THEIR_TRIGGER = _fact(
    "envoy-gateway-status-retries-need-their-trigger",
    "A BackendTrafficPolicy's `retry.retryOn.httpStatusCodes` only fills Envoy's retriable_status_codes; Envoy "
    "Gateway v1.9.0 builds the route's retry_on from `triggers` alone, so the codes are retried only when the "
    "triggers include `retriable-status-codes` (with triggers of `connect-failure` alone a 503 is never retried).",
    "envoyproxy/gateway@v1.9.0:internal/xds/translator/route.go L865-L875 (retry_on from Triggers, "
    "RetriableStatusCodes from HTTPStatusCodes), L938-L960 (buildRetryOn); envoyproxy/envoy@v1.39.0 "
    "source/common/router/retry_state_impl.cc (retriable-status-codes policy)",
)

ENVOY_GATEWAY_RATE_LIMIT_COST = _fact(
    "envoy-gateway-global-rate-limit-counts-requests",
    "An Envoy Gateway v1.9.0 global rate-limit rule without `cost.request` charges its counter 1 per request (no "
    "hits addend is set on the route's rate limit); `cost.request` {from: Number, number: N} charges N (0 counts "
    "nothing on the request path). A rule with `shadowMode: true` updates its counters but never refuses a "
    "request. So a tenant's request budget is a rule without a request cost (or one of at least 1), not in shadow "
    "mode, selecting the tenant's header.",
    "envoyproxy/gateway@v1.9.0:api/v1alpha1/ratelimit_types.go L118-124 (Cost: 'if not specified ... reduce the rate "
    "limit counters by 1 on the request path'), L131-139 (ShadowMode), L148-158; internal/xds/translator/ratelimit.go "
    "L327-330 (HitsAddend only for a request cost), L611-620, L800-802",
)

VLLM_BENCH_SERVE_METRICS = _fact(
    "vllm-bench-serve-ttft-and-tpot",
    "vLLM 0.33.0's serving benchmark (`vllm bench serve`) streams chat completions with `stream_options."
    "include_usage`; TTFT is the time from sending to the first chunk whose delta carries output (content, reasoning, "
    "tool_calls or function_call; an empty content without a role: a token that decodes to nothing; never the "
    "opening role-only chunk); the request ends at its last such chunk (not the usage chunk); the output length is "
    "the usage chunk's `completion_tokens` (a chunk may carry several tokens); TPOT = (end - TTFT) / (output tokens "
    "- 1), for requests of 2 tokens or more; a stream with no output chunk fails; percentiles by np.percentile "
    "(linear interpolation). The rollout's SLO gate measures the same way.",
    "vllm 0.33.0 (wheel from PyPI): vllm/benchmarks/lib/endpoint_request_func.py L392-406 "
    "(_choice_has_streamed_output), L409-501 (async_request_openai_chat_completions: payload L423-433, first chunk "
    "L470-478, end at token chunks L483-485, usage L486-488, no output L493-500, latency L501); "
    "vllm/benchmarks/serve.py L636 (output_len from output_tokens), L655-657 (tpot = latency_minus_ttft / "
    "(output_len - 1)), L787, L793 (np.percentile)",
)

# --- A stand-in while a model wakes (components/serving/stand_in.py) ---------------------------------------------

AI_GATEWAY_NO_FALLBACK_FROM_POOLS = _fact(
    "ai-gateway-no-fallback-from-an-inference-pool",
    "The AI Gateway v1.1.0 admits one InferencePool per AIGatewayRoute rule and no mix of an InferencePool with "
    "AIServiceBackends (CEL on the rule), ignores `priority`, `modelNameOverride` and header/body mutations of an "
    "InferencePool backendRef, and makes the pool's cluster ORIGINAL_DST without EDS (the picker names the pod): "
    "there is no second priority to fall over to behind an endpoint picker. So a model with a stand-in is routed "
    "without its picker.",
    "envoyproxy/ai-gateway@v1.1.0:api/v1beta1/ai_gateway_route.go L214-215 (CEL), L232-241, L354-397; "
    "internal/extensionserver/post_cluster_modify.go L46-51, L65-93",
)

AI_GATEWAY_PRIORITY_FALLBACK = _fact(
    "ai-gateway-falls-over-between-ai-service-backends-by-priority",
    "For a rule of AIServiceBackends the AI Gateway v1.1.0 sets each backendRef's `priority` on its locality of the "
    "rule's one Envoy cluster, and its upstream filter sends the backendRef's `modelNameOverride` as the body's "
    "`model` to that backend only; an AIServiceBackend must reference an Envoy Gateway Backend (CEL). Its documented "
    "fallback pairs priorities 0/1 with a BackendTrafficPolicy retry of `numAttemptsPerPriority: 1` on "
    "`connect-failure`; Envoy Gateway v1.9.0 renders that as the previous_priorities retry plugin (update frequency "
    "1: the next attempt excludes the priority just tried) beside its previous_hosts predicate, and puts a Backend "
    "with `fallback: true` at priority 1 itself.",
    "envoyproxy/ai-gateway@v1.1.0:internal/extensionserver/post_translate_modify.go L361-392; internal/extproc/"
    "processor_impl.go L700; api/v1beta1/ai_service_backend.go L66; examples/provider_fallback/base.yaml L40-50, "
    "fallback.yaml L17-30; envoyproxy/gateway@v1.9.0:internal/xds/translator/route.go L825-862, "
    "internal/gatewayapi/route.go L3566-3570, api/v1alpha1/retry_types.go L21-26",
)

ENVOY_CUSTOM_RESPONSE_REDIRECT_DROPS_THE_BODY = _fact(
    "envoy-response-override-redirect-drops-the-request-body",
    "An Envoy Gateway v1.9.0 `responseOverride` with `redirect` becomes Envoy's custom_response RedirectPolicy, an "
    "internal redirect that turns the request into a GET without Content-Length and recreates the stream without "
    "its body: a chat completion redirected on the picker's 503 would reach the other model without its prompt. So "
    "the stand-in is not reached by a response override.",
    "envoyproxy/gateway@v1.9.0:api/v1alpha1/shared_types.go L802-819, internal/xds/translator/custom_response.go "
    "L533-558; envoyproxy/envoy@v1.39.0 (Envoy Gateway v1.9.0's proxy):source/extensions/http/custom_response/"
    "redirect_policy/redirect_policy.cc L120-247 (L228-229 GET without Content-Length, L245 recreateStream(nullptr))",
)

ENVOY_UPSTREAM_METADATA_HEADER = _fact(
    "envoy-late-response-header-from-endpoint-metadata",
    "Envoy Gateway v1.9.0 renders a ClientTrafficPolicy's `headers.lateResponseHeaders` as the listener's "
    "header_mutation filter, with keep_empty_value only for a literally empty value; Envoy formats such a value with "
    "empty values omitted, so `%UPSTREAM_METADATA([ns, key])%` of an endpoint without that metadata is empty and the "
    "header is not added. Envoy Gateway applies EnvoyPatchPolicy JSON patches before the extension server's "
    "post-translation hook, whose endpoint metadata (namespace aigateway.envoy.io) the AI Gateway adds beside any "
    "other namespace. So a patch that gives only the stand-in's endpoint a metadata value makes only the stand-in's "
    "responses carry the header.",
    "envoyproxy/gateway@v1.9.0:internal/gatewayapi/clienttrafficpolicy.go L1056-1064, internal/xds/translator/"
    "header_mutation.go L64-135, internal/xds/translator/translator.go L165-182; envoyproxy/ai-gateway@v1.1.0:"
    "internal/extensionserver/post_translate_modify.go L1029-1051; envoyproxy/envoy@v1.39.0:source/common/router/"
    "header_parser.cc L50-54 (FormatterImpl::create(value, true): empty values omitted), L63, L193; "
    "source/common/http/header_mutation.cc L29 (AppendMutation: `!value.empty() || add_if_empty_`)",
)

AI_GATEWAY_ORIGINAL_MODEL_METRIC = _fact(
    "ai-gateway-token-metrics-carry-the-requested-model",
    "The AI Gateway v1.1.0 labels its gen_ai.client.token.usage samples with gen_ai.original.model, the `model` the "
    "client sent before any override, beside gen_ai.request.model (after it), and records one input-token sample "
    "per completed request. So the requests the stand-in answered for a model count under the model's name.",
    "envoyproxy/ai-gateway@v1.1.0:internal/metrics/genai.go L21-24, L52; internal/metrics/metrics_impl.go "
    "L110-121, L148-156",
)

ENVOY_OUTLIER_EJECTS_A_REFUSING_SERVICE = _fact(
    "envoy-outlier-detection-ejects-a-service-that-refuses",
    "Envoy v1.39.0's outlier detection, without split_external_local_origin_errors (Envoy Gateway v1.9.0 sets it only "
    "when asked), counts a failed connection as a 503 toward consecutive_5xx; it ejects a host while the ejected "
    "share of the cluster's hosts, this one included, stays within max_ejection_percent (1 of a stand-in cluster's 2 "
    "hosts is 50%), for base_ejection_time times the host's ejection count, at most max_ejection_time (default 10 x "
    "the 30 s default base, or the base if larger: 300 s here). So the model's Service, refusing while it has no "
    "Ready replica, is ejected after 5 refusals and gets traffic again at most 300 s after its last ejection.",
    "envoyproxy/envoy@v1.39.0:source/common/upstream/outlier_detection_impl.cc L108-135 (LocalOriginConnectFailed -> "
    "503), L145-166, L244, L286-292, L389-405, L540-556 (ejectHost), L575-585; outlier_detection_impl.h L370, L385; "
    "envoyproxy/gateway@v1.9.0:internal/xds/translator/cluster.go L715-735 (buildXdsOutlierDetection)",
)

NO_PINNED_CACHE_FOR_CHAT_COMPLETIONS = _fact(
    "no-pinned-gateway-component-caches-chat-completions",
    "Nothing at our gateway pins can answer a repeated chat completion from a cache: the AI Gateway v1.1.0 API "
    "(AIGatewayRoute, AIServiceBackend, BackendSecurityPolicy, GatewayConfig, MCPRoute, QuotaPolicy) has no "
    "response cache (its only cache fields are prompt-caching token counts), nor has Envoy Gateway v1.9.0's, and "
    "Envoy v1.39.0's HTTP cache filters (cache and cache_v2, reachable only through an EnvoyPatchPolicy) serve from "
    "cache only GET and HEAD requests that carry no `Authorization` header, while a chat completion is a POST "
    "carrying the tenant's API key in `Authorization`.",
    "envoyproxy/ai-gateway@v1.1.0:api/v1beta1/*.go, api/v1alpha1/*.go (`git grep -i cache`: llm_cached_input_token "
    "and informer caches only); envoyproxy/gateway@v1.9.0:api/v1alpha1/*.go (no response cache); "
    "envoyproxy/envoy@v1.39.0 (Go module zip, origin 8eea3285d6bd): source/extensions/filters/http/cache/"
    "cacheability_utils.cc L34-57 (canServeRequestFromCache: no `authorization` L55, GET or HEAD L56), "
    "source/extensions/filters/http/cache_v2/cacheability_utils.cc L34-72 (L60-61, L66-67)",
)

SEMANTIC_ROUTER_CACHE_KEYS_THE_LAST_USER_MESSAGE = _fact(
    "semantic-router-v0.3.0-cache-keys-the-last-user-message-only",
    "vLLM Semantic Router v0.3.0 (its newest release) keys its response cache on the text of the request's last "
    "user message alone: the system prompt, earlier turns, temperature, seed and tools are not in the key, so a "
    "request in another conversation that ends with the same words gets this one's answer. Lookups never compare "
    "the model (the in-memory scan and the Redis `*=>[KNN ...]` query search every entry), and nothing decides "
    "cacheability from temperature, seed or tools (not at main either). Tenant scoping is only an HMAC of the "
    "`x-authz-user-id` header (or `SEMANTIC_CACHE_FALLBACK_USER_HEADER`, which its source says not to set in "
    "production) written three times in front of the embedded text: upstream reproduced one user receiving "
    "another's cached answer at similarity 0.9085 (threshold 0.8). The hard scope check (#2135, in-memory backend "
    "only) and whole-request exact fingerprints (#2813) are on main after v0.3.0, in no release tag.",
    "vllm-project/semantic-router@v0.3.0:src/semantic-router/pkg/cache/cache.go L34-55 "
    "(ExtractQueryFromOpenAIRequest: last user message), L58-78 (ScopeQueryToUser); pkg/extproc/req_filter_cache.go "
    "L56-64, L129; pkg/cache/inmemory_cache_search.go L97-176 (similarity only, model logged); "
    "pkg/cache/redis_cache.go L644-662; pkg/extproc/user_id_header.go L49-73; pkg/headers/headers.go L320; commits "
    "735dc038f4411ac40f93c7e5bc714e351737586a (#2135, message: 'one user receives the other's cached response'), "
    "ff987c87edec2099d2917cc333dc2beb7c3643ac (#2813), `git tag --contains` empty for both",
)

ENVOY_GATEWAY_EXT_PROC_ANSWERS_BEFORE_RATE_LIMIT = _fact(
    "an-extension-policy-ext-proc-answers-before-the-rate-limit-filter",
    "Envoy Gateway v1.9.0 orders an EnvoyExtensionPolicy's ext_proc filters at 100 + index: after api_key_auth "
    "(7) and Lua (13+), before the global rate limit (303) and the router (310); the AI Gateway v1.1.0 inserts its "
    "route-choosing ext_proc before the first of them. An ext_proc there sees the tenant (`x-tenant-id`) and the "
    "model (`x-ai-eg-model`), but with its request body BUFFERED (a cache must read the body) it holds the headers "
    "until the body is in, and a response it answers itself (a cache hit) is a local reply that ends the decode "
    "chain before the rate limit filter: neither a tenant's request budget nor its token budget counts it, unless "
    "EnvoyProxy `spec.filterOrder` moves that ext_proc after `envoy.filters.http.ratelimit`.",
    "envoyproxy/gateway@v1.9.0:internal/xds/translator/httpfilters.go L100-160 (api_key_auth L120, Lua L132, "
    "ext_proc L134, ratelimit L146, router L160), L196-270 (sortHTTPFilters with filterOrder); "
    "envoyproxy/ai-gateway@v1.1.0:internal/extensionserver/post_translate_modify.go L1084-1130; "
    "envoyproxy/envoy@v1.39.0:source/extensions/filters/http/ext_proc/ext_proc.cc L2080-2110 (an immediate "
    "response is a local reply), processor_state.cc L253-258 (BUFFERED: headers wait for the body), "
    "source/common/http/filter_manager.cc L620-625, L780-784 (the decode chain stops at a local reply)",
)

PROMETHEUS_RULE_WEBHOOK_IGNORES_FAILURES = _fact(
    "prometheus-rule-webhook-ignores-failures-at-the-pin",
    'kube-prometheus-stack 88.5.3 with its default admission-webhook values (failurePolicy "", patch.enabled true, '
    "certManager and a webhook deployment off) registers its webhooks (PrometheusRules validated and mutated, "
    "AlertmanagerConfigs validated) with failurePolicy Ignore, served by the operator's own Service; its post-install/post-upgrade patch job runs "
    "kube-webhook-certgen `patch --patch-failure-policy=` with that empty value, which sets only the CA bundle and "
    "leaves the policy as it is. A PrometheusRule created while the operator is not yet reachable is admitted, not "
    "refused: unlike KServe's and Volcano's webhooks, nothing has to await its Service.",
    "prometheus-community/helm-charts@kube-prometheus-stack-88.5.3:charts/kube-prometheus-stack/templates/"
    "prometheus-operator/admission-webhooks/validatingWebhookConfiguration.yaml L15-L24, L85-L94, "
    "mutatingWebhookConfiguration.yaml L15-L24 (failurePolicy), job-patch/job-patchWebhook.yaml L2-L9, L16, L58; "
    "values.yaml prometheusOperator.admissionWebhooks (conformance/upstream/kube-prometheus-stack); "
    "jkroepke/kube-webhook-certgen v1.7.3 and main@8df5d96 (2025-12-26), the newest source here; the chart pins its "
    "image 1.8.7 (values.yaml L3131-3132), whose source no mirror or module proxy here serves:cmd/patch.go (an "
    "empty or Ignore --patch-failure-policy sets none, its flag's help: 'If set, patch the webhooks with this failure "
    "policy'), pkg/k8s/k8s.go (the policy applied only when set)",
)
