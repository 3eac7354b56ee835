"""A corpus of realistic bad configurations, by category: each one mutation of dev or prod and the key path
(and a fragment of the message) its rejection must name. Run by tests/test_bad_config_corpus.py.

Ops: ("set", path, value), ("del", path), ("rename", path, new_key), ("append", path, value).
Paths use the config reference's notation: regions[0].gpuPools[1].maxSize.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Bad(NamedTuple):
    id: str
    category: str
    env: str
    ops: tuple[tuple[Any, ...], ...]
    path: str  # the key the first matching error line names
    fragment: str  # part of that line's message


def _b(category: str, env: str, id: str, ops: list[tuple], path: str, fragment: str) -> Bad:
    return Bad(f"{category}-{id}", category, env, tuple(ops), path, fragment)


# fmt: off
CORPUS: list[Bad] = [
    # --- types ---
    _b('types', 'dev', 'production-string', [('set', 'production', 'sometimes')], 'production', 'true or false'),
    _b('types', 'dev', 'regions-mapping', [('set', 'regions', {'name': 'use1'})], 'regions', 'a list'),
    _b('types', 'dev', 'zones-string', [('set', 'regions[0].zones', 'us-east-1a')], 'regions[0].zones', 'a list'),
    _b('types', 'dev', 'k8s-version-float', [('set', 'regions[0].kubernetesVersion', 1.33)], 'regions[0].kubernetesVersion', 'quote it'),
    _b('types', 'dev', 'cidr-not-cidr', [('set', 'regions[0].network.cidr', '10.10.0.0')], 'regions[0].network.cidr', 'too small'),
    _b('types', 'dev', 'cidr-host-bits', [('set', 'regions[0].network.cidr', '10.10.0.1/16')], 'regions[0].network.cidr', 'CIDR'),
    _b('types', 'dev', 'system-max-string', [('set', 'regions[0].systemPool.maxSize', 'four')], 'regions[0].systemPool.maxSize', 'whole number'),
    _b('types', 'dev', 'system-max-float', [('set', 'regions[0].systemPool.maxSize', 2.5)], 'regions[0].systemPool.maxSize', 'whole number'),
    _b('types', 'dev', 'gpu-max-negative', [('set', 'regions[0].gpuPools[0].maxSize', -1)], 'regions[0].gpuPools[0].maxSize', 'greater than'),
    _b('types', 'dev', 'gpu-max-zero', [('set', 'regions[0].gpuPools[0].maxSize', 0)], 'regions[0].gpuPools[0].maxSize', 'greater than'),
    _b('types', 'dev', 'gpu-min-negative', [('set', 'regions[0].gpuPools[0].minSize', -1)], 'regions[0].gpuPools[0].minSize', 'greater than'),
    _b('types', 'dev', 'disk-too-small', [('set', 'regions[0].gpuPools[0].diskGib', 10)], 'regions[0].gpuPools[0].diskGib', 'greater than'),
    _b('types', 'dev', 'efa-string', [('set', 'regions[0].gpuPools[0].efa', 'maybe')], 'regions[0].gpuPools[0].efa', 'true or false'),
    _b('types', 'dev', 'time-slicing-string', [('set', 'regions[0].gpuPools[0].timeSlicing.replicas', 'four')], 'regions[0].gpuPools[0].timeSlicing.replicas', 'whole number'),
    _b('types', 'dev', 'cache-enabled-string', [('set', 'regions[0].modelCache.enabled', 'maybe')], 'regions[0].modelCache.enabled', 'true or false'),
    _b('types', 'dev', 'max-model-len-string', [('set', 'models[0].maxModelLen', '4k')], 'models[0].maxModelLen', 'whole number'),
    _b('types', 'dev', 'max-num-seqs-zero', [('set', 'models[0].maxNumSeqs', 0)], 'models[0].maxNumSeqs', 'greater than'),
    _b('types', 'dev', 'gpu-mem-util-over-1', [('set', 'models[0].gpuMemoryUtilization', 1.5)], 'models[0].gpuMemoryUtilization', 'less than'),
    _b('types', 'dev', 'placements-mapping', [('set', 'models[0].placements', {'region': 'use1'})], 'models[0].placements', 'a list'),
    _b('types', 'dev', 'min-replicas-string', [('set', 'models[0].placements[0].minReplicas', 'one')], 'models[0].placements[0].minReplicas', 'whole number'),
    _b('types', 'dev', 'tenant-models-string', [('set', 'tenants[0].models', 'llama-3-1-8b')], 'tenants[0].models', 'a list'),
    _b('types', 'dev', 'tenant-weight-string', [('set', 'tenants[0].weight', 'heavy')], 'tenants[0].weight', 'whole number'),
    _b('types', 'dev', 'budget-limit-string', [('set', 'tenants[0].budget.inputTokens.limit', 'lots')], 'tenants[0].budget.inputTokens.limit', 'whole number'),
    _b('types', 'dev', 'quota-capability-list', [('set', 'tenants[0].gpuQuotas[0].capability', [2])], 'tenants[0].gpuQuotas[0].capability', 'mapping'),
    _b('types', 'dev', 'federation-enabled-string', [('set', 'federation.enabled', 'sometimes')], 'federation.enabled', 'true or false'),
    _b('types', 'dev', 'tags-list', [('set', 'tags', ['team'])], 'tags', 'mapping'),
    _b('types', 'prod', 'toleration-string', [('set', 'federation.failover', {'clusterTolerationSeconds': '5m'})], 'federation.failover.clusterTolerationSeconds', 'whole number'),
    _b('types', 'prod', 'request-timeout-string', [('set', 'gateway.requestTimeoutSeconds', '15m')], 'gateway.requestTimeoutSeconds', 'whole number'),
    _b('types', 'dev', 'thresholds-string', [('set', 'regions[0].observability.thresholds', {'ttftP95Seconds': 'fast'})], 'regions[0].observability.thresholds.ttftP95Seconds', 'a number'),
    _b('types', 'dev', 'public-cidrs-string', [('set', 'regions[0].apiAccess.publicCidrs', '203.0.113.0/24')], 'regions[0].apiAccess.publicCidrs', 'a list'),
    # --- enums ---
    _b('enums', 'dev', 'cloud-azure', [('set', 'regions[0].cloud', 'azure')], 'regions[0].cloud', "'aws' or 'gcp'"),
    _b('enums', 'dev', 'cloud-upper', [('set', 'regions[0].cloud', 'AWS')], 'regions[0].cloud', "'aws' or 'gcp'"),
    _b('enums', 'dev', 'nat-typo', [('set', 'regions[0].network.nat', 'per-zone')], 'regions[0].network.nat', 'is not allowed'),
    _b('enums', 'dev', 'runtime-sglang', [('set', 'models[0].runtime', 'sglang')], 'models[0].runtime', 'is not allowed'),
    _b('enums', 'dev', 'precision-int4', [('set', 'models[0].precision', 'int4')], 'models[0].precision', 'is not allowed'),
    _b('enums', 'dev', 'kv-dtype-fp16', [('set', 'models[0].kvCacheDtype', 'fp16')], 'models[0].kvCacheDtype', 'is not allowed'),
    _b('enums', 'dev', 'mig-strategy', [('set', 'regions[0].gpuPools[1].mig.strategy', 'none')], 'regions[0].gpuPools[1].mig.strategy', 'is not allowed'),
    _b('enums', 'dev', 'budget-per-day', [('set', 'tenants[0].budget.inputTokens.per', 'day')], 'tenants[0].budget.inputTokens.per', 'is not allowed'),
    _b('enums', 'dev', 'exposure-external', [('set', 'regions[0].gateway.exposure', 'external')], 'regions[0].gateway.exposure', 'is not allowed'),
    _b('enums', 'dev', 'deployment-mode', [('set', 'regions[0].serving', {'deploymentMode': 'serverless'})], 'regions[0].serving.deploymentMode', 'is not allowed'),
    _b('enums', 'dev', 'failure-mode', [('set', 'gateway.endpointPicker.failureMode', 'FailOpenish')], 'gateway.endpointPicker.failureMode', 'is not allowed'),
    _b('enums', 'prod', 'member-mode', [('set', 'federation.memberMode', 'pool')], 'federation.memberMode', 'is not allowed'),
    _b('enums', 'dev', 'capacity-type', [('set', 'regions[0].gpuPools[0].capacity', {'type': 'preemptible'})], 'regions[0].gpuPools[0].capacity.type', 'is not allowed'),
    _b('enums', 'dev', 'driver-install', [('set', 'regions[0].gpuPools[0].driverInstall', 'gke')], 'regions[0].gpuPools[0].driverInstall', 'is not allowed'),
    _b('enums', 'dev', 'max-lora-rank', [('set', 'models[0].maxLoraRank', 12)], 'models[0].maxLoraRank', 'is not allowed'),
    # --- unknown-keys ---
    _b('unknown-keys', 'dev', 'top', [('rename', 'tenants', 'tenant')], 'tenant', "did you mean 'tenants'"),
    _b('unknown-keys', 'dev', 'top-casing', [('rename', 'labelDomain', 'labeldomain')], 'labeldomain', 'unknown key'),
    _b('unknown-keys', 'dev', 'region', [('rename', 'regions[0].zones', 'zone')], 'regions[0].zone', "did you mean 'zones'"),
    _b('unknown-keys', 'dev', 'network', [('rename', 'regions[0].network.nat', 'natMode')], 'regions[0].network.natMode', 'unknown key'),
    _b('unknown-keys', 'dev', 'system-pool', [('rename', 'regions[0].systemPool.maxSize', 'max')], 'regions[0].systemPool.max', 'unknown key'),
    _b('unknown-keys', 'dev', 'gpu-pool', [('rename', 'regions[0].gpuPools[0].machineType', 'instanceType')], 'regions[0].gpuPools[0].instanceType', 'unknown key'),
    _b('unknown-keys', 'dev', 'gpu-pool-snake', [('rename', 'regions[0].gpuPools[0].maxSize', 'max_size')], 'regions[0].gpuPools[0].max_size', 'unknown key'),
    _b('unknown-keys', 'dev', 'time-slicing', [('rename', 'regions[0].gpuPools[0].timeSlicing.replicas', 'replica')], 'regions[0].gpuPools[0].timeSlicing.replica', "did you mean 'replicas'"),
    _b('unknown-keys', 'dev', 'mig', [('rename', 'regions[0].gpuPools[1].mig.layout', 'layouts')], 'regions[0].gpuPools[1].mig.layouts', "did you mean 'layout'"),
    _b('unknown-keys', 'dev', 'model-cache', [('set', 'regions[0].modelCache.size', '100Gi')], 'regions[0].modelCache.size', 'unknown key'),
    _b('unknown-keys', 'dev', 'observability', [('rename', 'regions[0].observability.retention', 'retain')], 'regions[0].observability.retain', 'unknown key'),
    _b('unknown-keys', 'dev', 'gateway-region', [('rename', 'regions[0].gateway.exposure', 'expose')], 'regions[0].gateway.expose', 'unknown key'),
    _b('unknown-keys', 'dev', 'model', [('rename', 'models[0].preset', 'presets')], 'models[0].presets', "did you mean 'preset'"),
    _b('unknown-keys', 'dev', 'placement', [('rename', 'models[0].placements[0].pool', 'gpuPool')], 'models[0].placements[0].gpuPool', 'unknown key'),
    _b('unknown-keys', 'dev', 'tenant', [('rename', 'tenants[0].gpuQuotas', 'quotas')], 'tenants[0].quotas', 'unknown key'),
    _b('unknown-keys', 'dev', 'quota', [('rename', 'tenants[0].gpuQuotas[0].capability', 'capacity')], 'tenants[0].gpuQuotas[0].capacity', 'unknown key'),
    _b('unknown-keys', 'dev', 'budget', [('rename', 'tenants[0].budget.inputTokens', 'promptTokens')], 'tenants[0].budget.promptTokens', 'unknown key'),
    _b('unknown-keys', 'dev', 'rate', [('rename', 'tenants[0].budget.inputTokens.per', 'window')], 'tenants[0].budget.inputTokens.window', 'unknown key'),
    _b('unknown-keys', 'dev', 'federation', [('set', 'federation.hosts', ['use1'])], 'federation.hosts', "did you mean 'host'"),
    _b('unknown-keys', 'dev', 'gateway', [('rename', 'gateway.domain', 'domains')], 'gateway.domains', "did you mean 'domain'"),
    _b('unknown-keys', 'dev', 'endpoint-picker', [('rename', 'gateway.endpointPicker.failureMode', 'failMode')], 'gateway.endpointPicker.failMode', 'unknown key'),
    _b('unknown-keys', 'dev', 'model-store', [('rename', 'modelStore.bucketPrefix', 'bucket')], 'modelStore.bucket', 'unknown key'),
    _b('unknown-keys', 'dev', 'thresholds', [('set', 'regions[0].observability.thresholds', {'ttft': 2})], 'regions[0].observability.thresholds.ttft', 'unknown key'),
    _b('unknown-keys', 'prod', 'failover', [('set', 'federation.failover', {'toleration': 10})], 'federation.failover.toleration', 'unknown key'),
    _b('unknown-keys', 'dev', 'speculative', [('set', 'models[0].speculativeDecoding', {'method': 'ngram', 'tokens': 4})], 'models[0].speculativeDecoding.tokens', 'unknown key'),
    # --- missing ---
    _b('missing', 'dev', 'regions', [('del', 'regions')], 'regions', 'required key is missing'),
    _b('missing', 'dev', 'region-name', [('del', 'regions[0].name')], 'regions[0].name', 'required key is missing'),
    _b('missing', 'dev', 'region-cloud', [('del', 'regions[0].cloud')], 'regions[0].cloud', 'required key is missing'),
    _b('missing', 'dev', 'k8s-version', [('del', 'regions[0].kubernetesVersion')], 'regions[0].kubernetesVersion', 'required key is missing'),
    _b('missing', 'dev', 'network', [('del', 'regions[0].network')], 'regions[0].network', 'required key is missing'),
    _b('missing', 'dev', 'system-pool', [('del', 'regions[0].systemPool')], 'regions[0].systemPool', 'required key is missing'),
    _b('missing', 'dev', 'gpu-machine', [('del', 'regions[0].gpuPools[0].machineType')], 'regions[0].gpuPools[0].machineType', 'required key is missing'),
    _b('missing', 'dev', 'gpu-max', [('del', 'regions[0].gpuPools[0].maxSize')], 'regions[0].gpuPools[0].maxSize', 'required key is missing'),
    _b('missing', 'dev', 'model-preset', [('del', 'models[0].preset')], 'models[0].preset', 'required key is missing'),
    _b('missing', 'dev', 'placements', [('del', 'models[0].placements')], 'models[0].placements', 'required key is missing'),
    _b('missing', 'dev', 'placement-pool', [('del', 'models[0].placements[0].pool')], 'models[0].placements[0].pool', 'required key is missing'),
    _b('missing', 'dev', 'tenant-models', [('del', 'tenants[0].models')], 'tenants[0].models', 'required key is missing'),
    _b('missing', 'dev', 'quota-capability', [('del', 'tenants[0].gpuQuotas[0].capability')], 'tenants[0].gpuQuotas[0].capability', 'required key is missing'),
    _b('missing', 'dev', 'budget-limit', [('del', 'tenants[0].budget.inputTokens.limit')], 'tenants[0].budget.inputTokens.limit', 'required key is missing'),
    _b('missing', 'dev', 'remote-write-url', [('set', 'regions[0].observability.remoteWrite', {'basicAuthSecret': 'rw'})], 'regions[0].observability.remoteWrite.url', 'required key is missing'),
    # --- duplicates ---
    _b('duplicates', 'prod', 'region-name', [('set', 'regions[1].name', 'use1')], 'regions[1]', "duplicate region name 'use1'"),
    _b('duplicates', 'dev', 'pool-name', [('set', 'regions[0].gpuPools[1].name', 'l40s')], 'regions[0].gpuPools[1]', "duplicate pool name 'l40s'"),
    _b('duplicates', 'dev', 'model-name', [('set', 'models[1].name', 'llama-3-1-8b')], 'models[1]', "duplicate model name 'llama-3-1-8b'"),
    _b('duplicates', 'dev', 'tenant-name', [('append', 'tenants', {'name': 'research', 'models': ['qwen2-5-7b']})], 'tenants[1]', "duplicate tenant name 'research'"),
    _b('duplicates', 'dev', 'tenant-model-twice', [('append', 'tenants[0].models', 'llama-3-1-8b')], 'tenants[0].models[2]', 'llama-3-1-8b'),
    _b('duplicates', 'dev', 'zone-twice', [('set', 'regions[0].zones', ['us-east-1a', 'us-east-1a'])], 'regions[0].zones[1]', 'us-east-1a'),
    _b('duplicates', 'prod', 'placement-twice', [('append', 'models[0].placements', {'region': 'use1', 'pool': 'h100'})], 'models[0].placements', 'use1'),
    # --- names ---
    _b('names', 'dev', 'region-upper', [('set', 'regions[0].name', 'USE1')], 'regions[0].name', 'not a valid name'),
    _b('names', 'dev', 'region-underscore', [('set', 'regions[0].name', 'us_e1')], 'regions[0].name', 'not a valid name'),
    _b('names', 'dev', 'region-too-long', [('set', 'regions[0].name', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')], 'regions[0].name', 'not a valid name'),
    _b('names', 'dev', 'region-trailing-dash', [('set', 'regions[0].name', 'use1-')], 'regions[0].name', 'not a valid name'),
    _b('names', 'dev', 'pool-dot', [('set', 'regions[0].gpuPools[0].name', 'l40s.small')], 'regions[0].gpuPools[0].name', 'not a valid name'),
    _b('names', 'dev', 'model-space', [('set', 'models[0].name', 'llama 8b')], 'models[0].name', 'not a valid name'),
    _b('names', 'dev', 'tenant-digit-first', [('set', 'tenants[0].name', '1research')], 'tenants[0].name', 'not a valid name'),
    _b('names', 'dev', 'bucket-prefix-upper', [('set', 'modelStore.bucketPrefix', 'Acme-Inference')], 'modelStore.bucketPrefix', ''),
    _b('names', 'dev', 'bucket-prefix-underscore', [('set', 'modelStore.bucketPrefix', 'acme_inference')], 'modelStore.bucketPrefix', ''),
    _b('names', 'dev', 'label-domain-space', [('set', 'labelDomain', 'inference platform.io')], 'labelDomain', ''),
    _b('names', 'dev', 'label-domain-upper', [('set', 'labelDomain', 'Inference-Platform.IO')], 'labelDomain', ''),
    _b('names', 'dev', 'gateway-domain-scheme', [('set', 'gateway.domain', 'https://llm.dev.acme.example')], 'gateway.domain', ''),
    # --- catalog ---
    _b('catalog', 'dev', 'region-unknown', [('set', 'regions[0].region', 'us-east-9')], 'regions[0].region', 'not a known aws region'),
    _b('catalog', 'dev', 'region-of-gcp', [('set', 'regions[0].region', 'us-central1')], 'regions[0].region', 'not a known aws region'),
    _b('catalog', 'dev', 'zone-unknown', [('set', 'regions[0].zones', ['us-east-1a', 'us-east-1z'])], 'regions[0].zones[1]', 'not a zone of us-east-1'),
    _b('catalog', 'dev', 'zone-other-region', [('set', 'regions[0].zones', ['us-east-1a', 'us-west-2a'])], 'regions[0].zones[1]', 'not a zone of us-east-1'),
    _b('catalog', 'dev', 'k8s-old', [('set', 'regions[0].kubernetesVersion', '1.20')], 'regions[0].kubernetesVersion', 'not supported on aws'),
    _b('catalog', 'dev', 'gpu-machine-typo', [('set', 'regions[0].gpuPools[0].machineType', 'g6e.xlargee')], 'regions[0].gpuPools[0].machineType', 'not a known aws GPU machine type'),
    _b('catalog', 'dev', 'gpu-machine-gcp', [('set', 'regions[0].gpuPools[0].machineType', 'a3-ultragpu-8g')], 'regions[0].gpuPools[0].machineType', 'not a known aws GPU machine type'),
    _b('catalog', 'dev', 'gpu-machine-cpu', [('set', 'regions[0].gpuPools[0].machineType', 'm7i.xlarge')], 'regions[0].gpuPools[0].machineType', 'not a known aws GPU machine type'),
    _b('catalog', 'dev', 'system-typo', [('set', 'regions[0].systemPool.machineType', 'm7i.xlargee')], 'regions[0].systemPool.machineType', "did you mean 'm7i.xlarge'"),
    _b('catalog', 'dev', 'system-gpu', [('set', 'regions[0].systemPool.machineType', 'g6e.xlarge')], 'regions[0].systemPool.machineType', 'GPU machine type'),
    _b('catalog', 'dev', 'system-gcp', [('set', 'regions[0].systemPool.machineType', 'e2-standard-4')], 'regions[0].systemPool.machineType', 'GCP machine type'),
    _b('catalog', 'prod', 'system-aws-on-gcp', [('set', 'regions[2].systemPool.machineType', 'm7i.2xlarge')], 'regions[2].systemPool.machineType', 'AWS machine type'),
    _b('catalog', 'dev', 'preset-unknown', [('set', 'models[0].preset', 'llama-9-8b')], 'models[0].preset', 'llama-9-8b'),
    _b('catalog', 'dev', 'mig-profile-on-l40s', [('set', 'regions[0].gpuPools[0].mig', {'profile': 'all-1g.10gb'})], 'regions[0].gpuPools[0]', 'MIG'),
    _b('catalog', 'dev', 'mig-profile-unknown', [('set', 'regions[0].gpuPools[1].mig', {'profile': 'all-9g.80gb'})], 'regions[0].gpuPools[1].mig', 'all-9g.80gb'),
    _b('catalog', 'dev', 'mig-layout-too-much', [('set', 'regions[0].gpuPools[1].mig.layout', {'3g.40gb': 2, '2g.20gb': 1})], 'regions[0].gpuPools[1].mig.layout', 'slices'),
    _b('catalog', 'dev', 'mig-layout-unknown-profile', [('set', 'regions[0].gpuPools[1].mig.layout', {'5g.50gb': 1})], 'regions[0].gpuPools[1].mig.layout', '5g.50gb'),
    _b('catalog', 'dev', 'resource-not-offered', [('set', 'models[1].placements[0].resource', 'nvidia.com/mig-7g.80gb')], 'models[1].placements[0].resource', 'mig-7g.80gb'),
    _b('catalog', 'dev', 'efa-on-g6e', [('set', 'regions[0].gpuPools[0].efa', True)], 'regions[0].gpuPools[0].efa', 'EFA'),
    _b('catalog', 'dev', 'gpudirect-on-aws', [('set', 'regions[0].gpuPools[0].gpuDirect', True)], 'regions[0].gpuPools[0].gpuDirect', 'GCP'),
    _b('catalog', 'dev', 'gke-partition-on-aws', [('set', 'regions[0].gpuPools[0].gkePartitionSize', '1g.10gb')], 'regions[0].gpuPools[0].gkePartitionSize', 'GKE'),
    _b('catalog', 'dev', 'engine-arg-unknown', [('set', 'models[0].engineArgs', {'tensor-parallel-sizes': 2})], 'models[0].engineArgs', 'tensor-parallel-sizes'),
    # --- capacity ---
    _b('capacity', 'dev', 'gpu-min-over-max', [('set', 'regions[0].gpuPools[0].minSize', 3)], 'regions[0].gpuPools[0]', 'minSize'),
    _b('capacity', 'dev', 'system-min-over-max', [('set', 'regions[0].systemPool.minSize', 5)], 'regions[0].systemPool', 'minSize'),
    _b('capacity', 'dev', 'desired-over-max', [('set', 'regions[0].gpuPools[0].desiredSize', 5)], 'regions[0].gpuPools[0]', 'desiredSize'),
    _b('capacity', 'dev', 'replicas-min-over-max', [('set', 'models[0].placements[0].minReplicas', 3)], 'models[0].placements[0]', 'minReplicas'),
    _b('capacity', 'dev', 'model-too-long', [('set', 'models[0].maxModelLen', 1000000)], 'models[0].maxModelLen', '1000000'),
    _b('capacity', 'dev', 'model-does-not-fit', [('set', 'models[0].precision', 'bf16'), ('set', 'models[0].maxNumSeqs', 256), ('set', 'models[0].kvCacheDtype', 'auto')], 'models[0]', 'GiB'),
    _b('capacity', 'dev', 'big-model-on-slice', [('set', 'models[0].preset', 'llama-3.1-70b')], 'models[0]', 'GiB'),
    _b('capacity', 'dev', 'fp8-kv-on-a100', [('set', 'models[1].kvCacheDtype', 'fp8')], 'models[1].kvCacheDtype', 'FP8'),
    _b('capacity', 'dev', 'quota-guarantee-over-capability', [('set', 'tenants[0].gpuQuotas[0].guarantee', {'nvidia.com/gpu': 5})], 'tenants[0].gpuQuotas[0].guarantee', 'nvidia.com/gpu'),
    _b('capacity', 'dev', 'quota-unknown-resource', [('set', 'tenants[0].gpuQuotas[0].capability', {'nvidia.com/gpus': 2})], 'tenants[0].gpuQuotas[0].capability', 'nvidia.com/gpus'),
    _b('capacity', 'dev', 'quota-over-region', [('set', 'tenants[0].gpuQuotas[0].guarantee', {'nvidia.com/gpu': 100}), ('set', 'tenants[0].gpuQuotas[0].capability', {'nvidia.com/gpu': 100})], 'tenants[0].gpuQuotas[0].guarantee', 'nvidia.com/gpu'),
    _b('capacity', 'dev', 'time-slicing-zero', [('set', 'regions[0].gpuPools[0].timeSlicing.replicas', 0)], 'regions[0].gpuPools[0].timeSlicing.replicas', ''),
    _b('capacity', 'dev', 'mig-and-time-slicing', [('set', 'regions[0].gpuPools[1].timeSlicing', {'replicas': 2})], 'regions[0].gpuPools[1]', ''),
    _b('capacity', 'dev', 'pool-zone-outside-region', [('set', 'regions[0].gpuPools[1].zones', ['us-east-1c'])], 'regions[0].gpuPools[1].zones[0]', "not one of this region's"),
    _b('capacity', 'prod', 'efa-pool-two-zones', [('set', 'regions[0].gpuPools[0].zones', ['us-east-1a', 'us-east-1b'])], 'regions[0].gpuPools[0]', 'zone'),
    _b('capacity', 'dev', 'reservation-without-id', [('set', 'regions[0].gpuPools[0].capacity', {'type': 'reservation'})], 'regions[0].gpuPools[0].capacity', 'reservationId'),
    # --- references ---
    _b('references', 'dev', 'placement-region', [('set', 'models[0].placements[0].region', 'usw2')], 'models[0].placements[0].region', 'usw2'),
    _b('references', 'dev', 'placement-pool', [('set', 'models[0].placements[0].pool', 'h100')], 'models[0].placements[0].pool', 'h100'),
    _b('references', 'dev', 'model-tenant', [('set', 'models[0].tenant', 'marketing')], 'models[0].tenant', 'marketing'),
    _b('references', 'dev', 'tenant-model', [('set', 'tenants[0].models', ['gpt-5'])], 'tenants[0].models[0]', 'gpt-5'),
    _b('references', 'dev', 'quota-region', [('set', 'tenants[0].gpuQuotas[0].region', 'euw1')], 'tenants[0].gpuQuotas[0].region', 'euw1'),
    _b('references', 'dev', 'model-tier', [('set', 'models[0].tier', 'platinum')], 'models[0].tier', 'platinum'),
    _b('references', 'dev', 'tenant-tier', [('set', 'tenants[0].tier', 'gold')], 'tenants[0].tier', 'gold'),
    _b('references', 'prod', 'source-region', [('set', 'modelStore.sourceRegion', 'euw1')], 'modelStore.sourceRegion', 'euw1'),
    _b('references', 'prod', 'source-region-gcp', [('set', 'modelStore.sourceRegion', 'usc1')], 'modelStore.sourceRegion', 'usc1'),
    _b('references', 'dev', 'draft-preset', [('set', 'models[0].speculativeDecoding', {'method': 'draft', 'draftPreset': 'llama-9-1b'})], 'models[0].speculativeDecoding.draftPreset', 'llama-9-1b'),
    _b('references', 'dev', 'draft-without-preset', [('set', 'models[0].speculativeDecoding', {'method': 'draft'})], 'models[0].speculativeDecoding', 'draftPreset'),
    # --- tenants ---
    _b('tenants', 'dev', 'weight-zero', [('set', 'tenants[0].weight', 0)], 'tenants[0].weight', 'greater than'),
    _b('tenants', 'dev', 'no-models', [('set', 'tenants[0].models', [])], 'tenants[0].models', ''),
    # --- budgets ---
    _b('budgets', 'dev', 'limit-zero', [('set', 'tenants[0].budget.inputTokens.limit', 0)], 'tenants[0].budget.inputTokens.limit', 'refuses every request'),
    _b('budgets', 'dev', 'limit-negative', [('set', 'tenants[0].budget.requests.limit', -5)], 'tenants[0].budget.requests.limit', 'refuses every request'),
    _b('budgets', 'dev', 'empty-budget', [('set', 'tenants[0].budget', {})], 'tenants[0].budget', ''),
    _b('budgets', 'dev', 'limit-float', [('set', 'tenants[0].budget.outputTokens.limit', 1.5)], 'tenants[0].budget.outputTokens.limit', 'whole number'),
    # --- network ---
    _b('network', 'dev', 'public-cidr-open', [('set', 'regions[0].apiAccess.publicCidrs', ['0.0.0.0/0'])], 'regions[0].apiAccess.publicCidrs[0]', 'whole internet'),
    _b('network', 'dev', 'vpc-too-small', [('set', 'regions[0].network.cidr', '10.10.0.0/28')], 'regions[0].network', ''),
    _b('network', 'dev', 'services-overlap', [('set', 'regions[0].network.servicesCidr', '10.10.0.0/20')], 'regions[0].network', 'overlap'),
    _b('network', 'dev', 'pods-cidr-on-aws', [('set', 'regions[0].network.podsCidr', '10.20.0.0/16')], 'regions[0].network.podsCidr', 'GCP'),
    _b('network', 'dev', 'project-on-aws', [('set', 'regions[0].project', 'acme-prod')], 'regions[0].project', 'only meaningful on GCP'),
    _b('network', 'prod', 'gcp-without-pods-cidr', [('del', 'regions[2].network.podsCidr')], 'regions[2].network.podsCidr', 'required on GCP'),
    _b('network', 'prod', 'gcp-without-project', [('del', 'regions[2].project')], 'regions[2].project', ''),
    # --- federation ---
    _b('federation', 'prod', 'host-unknown', [('set', 'federation.host', 'euw1')], 'federation.host', 'euw1'),
    _b('federation', 'prod', 'no-host', [('del', 'federation.host')], 'federation.host', ''),
    _b('federation', 'prod', 'member-unknown', [('set', 'federation.members', ['use1', 'euw1'])], 'federation.members[1]', 'euw1'),
    _b('federation', 'prod', 'host-not-member', [('set', 'federation.members', ['usw2', 'usc1'])], 'models[0].placements[0].region', 'not a federation member'),
    _b('federation', 'dev', 'federated-without-federation', [('set', 'models[0].federated', True)], 'models[0].federated', 'federation'),
    _b('federation', 'prod', 'mirror-unknown-region', [('set', 'federation.registryMirrors', {'euw1': 'mirror.example'})], 'federation.registryMirrors.euw1', 'euw1'),
    _b('federation', 'prod', 'api-server-open', [('set', 'federation.apiServer', {'allowedCidrs': ['0.0.0.0/0']})], 'federation.apiServer.allowedCidrs', 'whole internet'),
    # --- production ---
    _b('production', 'dev', 'scale-to-zero', [('set', 'production', True)], 'models[0].placements[0].minReplicas', 'production'),
    _b('production', 'prod', 'scale-to-zero-prod', [('set', 'models[0].placements[0].minReplicas', 0)], 'models[0].placements[0].minReplicas', 'production'),
    _b('production', 'prod', 'single-system-node', [('set', 'regions[0].systemPool.minSize', 1)], 'regions[0].systemPool.minSize', 'production'),
    _b('production', 'prod', 'spot-for-realtime', [('set', 'regions[0].gpuPools[1].capacity', {'type': 'spot'})], 'models[1].placements[0].pool', 'spot capacity'),
    _b('production', 'prod', 'public-api-endpoint-open', [('set', 'regions[0].apiAccess.publicCidrs', ['0.0.0.0/1', '128.0.0.0/1'])], 'regions[0].apiAccess.publicCidrs', 'cover the whole internet'),
    # --- gateway ---
    _b('gateway', 'dev', 'no-tenants', [('set', 'tenants', []), ('del', 'models[0].tenant'), ('del', 'models[1].tenant')], 'tenants', 'refuses every request'),
    _b('gateway', 'dev', 'provider-type', [('set', 'gateway.externalProviders', [{'name': 'x', 'type': 'azure', 'models': ['m']}])], 'gateway.externalProviders[0].type', 'is not allowed'),
    _b('gateway', 'dev', 'provider-model-clash', [('set', 'gateway.externalProviders', [{'name': 'x', 'type': 'openai', 'models': ['llama-3-1-8b'], 'apiKey': 'k'}])], 'gateway.externalProviders[0].models[0]', 'llama-3-1-8b'),
    _b('gateway', 'dev', 'timeout-zero', [('set', 'gateway.requestTimeoutSeconds', 0)], 'gateway.requestTimeoutSeconds', 'greater than'),
    # --- observability ---
    _b('observability', 'dev', 'remote-write-http', [('set', 'regions[0].observability.remoteWrite', {'url': 'http://metrics.example/api/v1/write'})], 'regions[0].observability.remoteWrite.url', 'https'),
    _b('observability', 'dev', 'grafana-expose-no-host', [('set', 'regions[0].observability.grafana', {'expose': True})], 'regions[0].observability.grafana.host', ''),
    _b('observability', 'dev', 'thresholds-inverted', [('set', 'regions[0].observability.thresholds', {'gpuIdleBelowPercent': 90})], 'regions[0].observability.thresholds', ''),
    _b('observability', 'dev', 'kv-near-full-over-1', [('set', 'regions[0].observability.thresholds', {'kvCacheNearFull': 1.5})], 'regions[0].observability.thresholds.kvCacheNearFull', ''),
    _b('observability', 'dev', 'retention-format', [('set', 'regions[0].observability.retention', 'seven days')], 'regions[0].observability.retention', ''),
    # --- cache ---
    _b('cache', 'dev', 'cache-memory-format', [('set', 'regions[0].modelCache.memory', '16 gigs')], 'regions[0].modelCache.memory', ''),
    _b('cache', 'dev', 'cache-replicas-zero', [('set', 'regions[0].modelCache.replicas', 0)], 'regions[0].modelCache.replicas', ''),
    # --- serving ---
    _b('serving', 'dev', 'triton-with-lora', [('set', 'models[0].runtime', 'triton'), ('set', 'models[0].loraAdapters', [{'name': 'a'}])], 'models[0].loraAdapters', 'vLLM'),
    _b('serving', 'dev', 'lora-name-clash', [('set', 'models[0].loraAdapters', [{'name': 'qwen2-5-7b'}])], 'models[0].loraAdapters[0].name', 'qwen2-5-7b'),
    _b('serving', 'dev', 'speculative-tokens-zero', [('set', 'models[0].speculativeDecoding', {'method': 'ngram', 'numSpeculativeTokens': 0})], 'models[0].speculativeDecoding.numSpeculativeTokens', 'greater than'),
]
# fmt: on
