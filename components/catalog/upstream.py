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


KARMADA_AGENT_REGISTERS = _fact(
    "karmada-agent-registers-its-cluster",
    "karmada-agent (v1.18.2) creates its member's `cluster.karmada.io/v1alpha1` Cluster itself, with "
    "`spec.id` = the member's kube-system Namespace UID and `syncMode: Pull`, and exits when a Cluster of that "
    "name exists with another or no `spec.id`. It sets no labels (no flag for them); the chart passes no "
    "--cluster-provider/--cluster-region/--cluster-zones. A Cluster pre-created with that `spec.id` and "
    "`syncMode: Pull` is re-registered (the agent rewrites only `spec`; labels are kept). So the program creates "
    "pull members' Clusters with the id and the labels, and leaves `spec` to the agent.",
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

# GKE limits these classes by default (ResourceQuota admission `limitedResources`), as kube-system's own
# `gcp-critical-pods` quota shows: a pod using one outside kube-system needs a quota scoped to it.
GKE_CRITICAL_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")
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
    "release's, v1alpha2, llm-d.ai objectives) unless createGIECRDs is false. The llmisvc controller watches "
    "InferencePools only if their CRD exists when it starts. KServe's own installer installs kserve-crd, "
    "kserve-llmisvc-crd, kserve-resources, kserve-llmisvc-resources (createSharedResources false, adopting any "
    "existing Inference Extension CRDs into it), then kserve-runtime-configs once the llmisvc webhook serves.",
    "kserve/kserve@v0.20.0:charts/kserve-llmisvc-resources/templates/llmisvc/resources.yaml, templates/common/"
    "*.yaml, values.yaml (createSharedResources, llmisvc.createGIECRDs); charts/kserve-runtime-configs/values.yaml "
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
    "No published image runs the pinned vLLM (v0.27.1) with NIXL's LIBFABRIC backend usable over EFA: "
    "vllm/vllm-openai ships NIXL without the EFA userspace (libfabric's efa provider) it needs, and llm-d's AWS "
    "image (ghcr.io/llm-d/llm-d-aws, built with the EFA installer and NIXL against /opt/amazon/efa) carries vLLM "
    "v0.23.0 at its v0.8 release, its bump to v0.27.1 still open. So disaggregated pods run the pinned "
    "vllm/vllm-openai image, whose NIXL hands KV caches over UCX (TCP on these nodes), and are sized for that.",
    "vllm-project/vllm#55635 (open 2026-09-07: 'using NIXL EFA requires ... EFA userspace libraries'), #55783 "
    "(open); llm-d/llm-d#1819 (Components v0.8.0: llm-d-cuda v0.8.0 = vLLM v0.23.0, llm-d-aws v0.8.0), #2324 "
    "(bump to vLLM v0.27.1, open); llm-d/llm-d:docker/Dockerfile.cuda (ENABLE_EFA), "
    "docker/scripts/cuda/builder/build-nixl.sh (-Dlibfabric_path=${EFA_PREFIX})",
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
    "the flow-control queue (GIE v1.5.0).",
    "envoyproxy/ai-gateway@v1.1.0:internal/extensionserver/inferencepool.go L288-316; envoyproxy/envoy "
    "api/envoy/extensions/filters/http/ext_proc/v3/ext_proc.proto status_on_error (default 500); "
    "kubernetes-sigs/gateway-api-inference-extension@v1.5.0:pkg/common/error/error.go L62-97, "
    "pkg/epp/requestcontrol/director.go L172-177, admission.go L225-226",
)

PICKER_LEADER_ONLY_READY = _fact(
    "picker-leader-election-readiness",
    "With --ha-enable-leader-election the v1.5.0 endpoint picker reports ready (gRPC readiness, ext_proc, and the "
    "empty service) only while it is the leader, and only the leader runs the pool's reconcilers: a rolling update "
    "cannot make a new replica ready while the old leader lives, so such pickers roll only by Recreate (the "
    "chart's strategy), an outage of each picker change behind a fail-closed gateway. Without it every replica "
    "syncs the pool and serves ext_proc on its own.",
    "kubernetes-sigs/gateway-api-inference-extension@v1.5.0:cmd/epp/runner/health.go L46-91, runner.go L285-304; "
    "config/charts/inferencepool/README.md (HA active-passive)",
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

# --- vLLM v0.27.1: loading weights and sizing memory ------------------------------------------------------------

VLLM_STREAMER_READS_ROOT_SAFETENSORS = _fact(
    "vllm-streamer-reads-root-safetensors",
    "vLLM's `--load-format runai_streamer` loader reads `*.safetensors` only, listed by the Run:ai streamer's "
    "`list_safetensors`, which globs `<model dir>/*.safetensors` and is not recursive; finding none, the loader "
    "fails ('Cannot find any safetensors model weights'). A checkpoint of PyTorch `*.bin` pickles, or one whose "
    "safetensors sit in a subdirectory only, does not load. Subdirectories may hold other files (a draft model, "
    "LoRA adapters), which their own loaders read.",
    "vllm-project/vllm@v0.27.1:vllm/model_executor/model_loader/runai_streamer_loader.py L86-117; "
    "run-ai/runai-model-streamer 0.15.7 (the image's minimum, vllm docker/Dockerfile L846): "
    "runai_model_streamer/safetensors_streamer/safetensors_streamer.py L29-45",
)

VLLM_STREAMER_DISTRIBUTED = _fact(
    "vllm-streamer-distributed",
    "The runai_streamer loader accepts `--model-loader-extra-config` keys `distributed`, `concurrency` and "
    "`memory_limit` only (any other key is a start-up error). Without `distributed: true` each tensor-parallel rank "
    "streams every safetensors file to the CPU itself: a TP 4 replica of a 131.5 GiB checkpoint reads 526 GiB. "
    "With it, the ranks of a node split the files between them, read each once to their GPU and broadcast the "
    "tensors over a per-node NCCL group; the streamer falls back to per-rank reads when torch.distributed is not "
    "initialized, the group has one rank, the backend is not NCCL, or the GPU has less free memory than two read "
    "chunks.",
    "vllm-project/vllm@v0.27.1:vllm/model_executor/model_loader/runai_streamer_loader.py L30-45, "
    "weight_utils.py L1005-1023 (runai_safetensors_weights_iterator: device cuda when distributed); "
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
    "vllm-project/vllm@v0.27.1:vllm/v1/worker/gpu_worker.py L474-496 (kv_cache_memory_bytes), L498-548 "
    "(memory_profiling, the free-memory assertion), L396 and vllm/v1/worker/utils.py L409-429 (request_memory); "
    "vllm/utils/mem_utils.py L234-325 (memory_profiling); `--kv-cache-memory-bytes` in "
    "vllm/v0.27.1/generated-vllm-serve-args.json",
)

VLLM_QUANTIZATION_KEEPS_EMBEDDINGS = _fact(
    "vllm-quantization-keeps-embeddings-16-bit",
    "vLLM's AWQ, GPTQ and FP8 methods quantize linear layers (LinearBase) only: the input embedding is never "
    "quantized, and the output head (ParallelLMHead) only when the checkpoint's quantization config says "
    "`lm_head: true` (default false). So a quantized model keeps vocab x hidden x 2 (untied) parameters in 16 bits: "
    "1.05 B for Llama 3.1 (1.47 GiB more than 4 bits would make them), 2.49 B for Qwen2.5 72B.",
    "vllm-project/vllm@v0.27.1:vllm/model_executor/layers/quantization/auto_awq.py L242, L285-290; auto_gptq.py "
    "L203, L264-266 and utils/gptq_utils.py L140-143 (get_linear_quant_method); fp8.py L175-178; "
    "vllm/model_executor/layers/vocab_parallel_embedding.py L284-288 (no quant method: unquantized), L520 "
    "(ParallelLMHead)",
)
