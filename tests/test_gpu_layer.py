"""The GPU layer around the weight path: cache read buffers, GPUDirect NICs without pod networks, unused pools."""

from __future__ import annotations

from components.checks.gpu_pool_checks import unused_pools
from components.checks.loader import load_environment
from components.domain.cache_reads import cache_reads
from tests.harness import config_errors, raw_environment
from tools.plan.report import render_markdown

# --- Alluxio read buffers sized with the streams a node serves (ALLUXIO_READ_BUFFERS) ------------------------------


def test_read_chunks_of_dev_and_prod_by_hand(dev_plan, prod_plan):
    """16 streams per engine process (one per GPU of a replica, VLLM_STREAMS_WEIGHTS_FROM_EVERY_RANK), a node's at
    most its GPU slots and the processes of the replicas placed on its pool; chunk = largest power of two MiB <= FUSE
    direct memory / (streams x 4), <= worker direct memory / 2 / streams and <= the job worker's 512 MiB / (4 loads x
    4)."""
    # dev use1: l40s 2 time-slice shares, llama-3-1-8b maxReplicas 2 x 1 GPU -> 32 streams; fuseMemory 2Gi -> 1024 MiB
    # of direct memory / (32 x 4) = 8 MiB (the worker's 1024 MiB / 32 = 32 MiB allows more)
    dev = cache_reads(dev_plan.spec, dev_plan.spec.region("use1"))
    assert (dev.busiest_pool, dev.streams_per_node, dev.chunk_mib) == ("l40s", 32, 8)
    # use1: p5's 8 H100s; llama-3-1-70b 4 x TP 4, the rag model 1 x TP 4 and its prefill 1 x TP 4: 24 processes, at
    # most 8 a node -> 128 streams; fuseMemory 4Gi -> 2048 MiB / (128 x 4) = 4 MiB
    use1 = cache_reads(prod_plan.spec, prod_plan.spec.region("use1"))
    assert (use1.busiest_pool, use1.streams_per_node, use1.chunk_mib) == ("h100", 128, 4)
    # usc1: llama-3-1-70b 2 x TP 2 on the a3-ultragpu-8g -> 4 processes, 64 streams (more than the l4 pool's 2 slots x
    # 16 = 32); 2048 MiB / (64 x 4) = 8 MiB
    usc1 = cache_reads(prod_plan.spec, prod_plan.spec.region("usc1"))
    assert (usc1.busiest_pool, usc1.streams_per_node, usc1.chunk_mib) == ("h200", 64, 8)


def test_a_fuse_daemon_too_small_for_a_nodes_streams_is_refused():
    raw = raw_environment("dev")
    # qwen on a100-mig: a p4de has 32 MIG slots (8 GPUs x 3g + 2g + 2 x 1g) -> 32 servers x 16 = 512 streams
    raw["models"][1]["placements"][0]["maxReplicas"] = 32
    assert config_errors(raw) == [
        "regions[0].modelCache.fuseMemory: a node of pool 'a100-mig' serves 512 weight streams at once (16 per engine "
        "process, one per GPU slot of its model servers), more than the FUSE daemon's direct memory (half of "
        "fuseMemory) buffers at 4 x 1 MiB each; set fuseMemory to at least 4Gi"
    ]
    raw["regions"][0]["modelCache"]["fuseMemory"] = "4Gi"
    assert cache_reads(load_environment(raw), load_environment(raw).regions[0]).chunk_mib == 1


# --- GPUDirect: the nodes keep their NICs; no pod network or NCCL plugin while no pod spans nodes ------------------


def test_gpudirect_pools_get_their_nics_but_no_pod_side_objects(prod_plan):
    pool = prod_plan.named("usc1-h200", "gcp:container/nodePool:NodePool").inputs
    assert len(pool["networkConfig"]["additionalNodeNetworkConfigs"]) == 9  # second gVNIC + 8 RDMA NICs
    kinds = {(r.inputs["apiVersion"], r.inputs["kind"]) for r in prod_plan.kubernetes_objects()}
    assert not {k for k in kinds if k[0].startswith("networking.gke.io/")}
    daemonsets = [r.inputs["metadata"]["name"] for r in prod_plan.of_type("kubernetes:apps/v1:DaemonSet")]
    assert not [name for name in daemonsets if "nccl" in name]


# --- pools nothing can use are reported, not refused ----------------------------------------------------------------


def test_an_unused_pool_is_a_warning_in_the_plan(prod_plan, dev_plan):
    assert [str(issue) for issue in unused_pools(prod_plan.spec)] == [
        "regions[2].gpuPools[2]: no model is placed on pool 'a100-mig' and no tenant's queue in region 'usc1' may use "
        "its nvidia.com/mig-3g.40gb, so nothing can use its nodes; place a model on it, give a tenant a quota of it, "
        "or remove the pool"
    ]
    assert "- **warning**: `regions[2].gpuPools[2]`: no model is placed on pool 'a100-mig'" in render_markdown(
        prod_plan
    )
    assert list(unused_pools(dev_plan.spec)) == []


def test_a_pool_a_tenant_may_use_is_not_unused():
    raw = raw_environment("prod")
    raw["tenants"][1]["gpuQuotas"][2]["capability"]["nvidia.com/mig-3g.40gb"] = 2  # support-bot in usc1
    assert list(unused_pools(load_environment(raw))) == []
    raw = raw_environment("prod")
    raw["regions"][2]["gpuPools"][2]["minSize"] = 1
    (issue,) = unused_pools(load_environment(raw))
    assert issue.message.endswith(
        "so nothing can use its nodes (1 always on); place a model on it, give a tenant a "
        "quota of it, or remove the pool"
    )
