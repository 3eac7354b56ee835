"""Image pulls on new GPU nodes: the pinned EKS AMI, nodeadm's FastImagePull (SOCI parallel pull) where a pool asks
for it, and cold starts that count its gain only where it applies."""

from __future__ import annotations

import base64
import email

import pytest
import yaml

from components.catalog.node_images import EKS_AMI_RELEASE_VERSIONS
from components.catalog.regions import EKS_ADDON_VERSIONS
from components.domain.image_pull import effective_image_pull, image_pull_seconds, parallel_pull_applies
from components.serving.deployment import model_placements
from platform_catalog.machines import MACHINES, MachineType
from tests.harness import config_errors, raw_environment
from tools.plan.report import render_markdown
from tools.vendor_upstream import VENDORED_DIR

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
NODEADM_DATA = VENDORED_DIR / "amazon-eks-ami" / "v20260724"


def _node_configs(template_inputs: dict) -> list[dict]:
    """The NodeConfig documents of a launch template's MIME user data, as nodeadm reads them."""
    message = email.message_from_bytes(base64.b64decode(template_inputs["userData"]))
    assert message.is_multipart()
    (part,) = [p for p in message.walk() if p.get_content_type() == "application/node.eks.aws"]
    return [d for d in yaml.safe_load_all(part.get_payload(decode=True)) if d]


# --- the pinned AMI -------------------------------------------------------------------------------------------


def test_every_managed_node_group_runs_the_pinned_ami_release(env_plan):
    """amazon-eks-ami@v20260724:CHANGELOG.md, release v20260714: 1.33 -> 1.33.13-20260714 (L310), one release version
    for the NVIDIA and STANDARD AMIs of a minor (rowspan 5). dev and prod run Kubernetes 1.33."""
    groups = env_plan.of_type(NODE_GROUP)
    assert groups
    for group in groups:
        assert group.inputs["releaseVersion"] == "1.33.13-20260714", group.name
        assert group.inputs["amiType"] in ("AL2023_x86_64_NVIDIA", "AL2023_x86_64_STANDARD")


def test_the_ami_release_covers_every_eks_minor_with_one_release():
    # 1.34 -> 1.34.9-20260714 (CHANGELOG.md L229)
    assert EKS_AMI_RELEASE_VERSIONS == {"1.33": "1.33.13-20260714", "1.34": "1.34.9-20260714"}
    assert set(EKS_AMI_RELEASE_VERSIONS) == set(EKS_ADDON_VERSIONS)


# --- nodeadm's FastImagePull, rendered where a pool asks for it --------------------------------------------------


def test_parallel_pools_ask_nodeadm_for_fast_image_pull_with_soci_on_the_nvme_array(prod_plan):
    """prod's four EKS GPU pools set imagePull: parallel; nodeadm reads `featureGates.FastImagePull: true` and
    keeps the SOCI snapshotter's directory on the RAID0 array unless disabledMounts names SOCI."""
    parallel = [
        (region.name, pool.name)
        for region in prod_plan.spec.regions
        for pool in region.gpu_pools
        if region.cloud == "aws"
    ]
    assert parallel == [("use1", "h100"), ("use1", "l40s"), ("usw2", "h100"), ("usw2", "l40s")]
    for region, pool in parallel:
        (config,) = _node_configs(prod_plan.named(f"{region}-{pool}", LAUNCH_TEMPLATE).inputs)
        assert config["apiVersion"] == "node.eks.aws/v1alpha1" and config["kind"] == "NodeConfig"
        assert config["spec"] == {
            "instance": {"localStorage": {"strategy": "RAID0"}},
            "featureGates": {"FastImagePull": True},
        }


def test_default_pools_keep_containerds_pull(dev_plan):
    (config,) = _node_configs(dev_plan.named("use1-l40s", LAUNCH_TEMPLATE).inputs)
    assert config["spec"] == {"instance": {"localStorage": {"strategy": "RAID0"}}}
    (config,) = _node_configs(dev_plan.named("use1-a100-mig", LAUNCH_TEMPLATE).inputs)
    assert config["spec"]["featureGates"] == {"FastImagePull": True}


def test_the_gate_and_the_snapshotter_config_are_the_pinned_nodeadms():
    """Vendored from amazon-eks-ami@v20260724 (nodeadm identical at v20260714): the Feature enum, and the SOCI
    config nodeadm writes with the gate on, which turns on parallel pull and unpack (no lazy-loading mode)."""
    api = (NODEADM_DATA / "nodeadm-doc-api.md").read_text()
    assert "- Enum: [InstanceIdNodeName FastImagePull]" in api.splitlines()
    assert "* `SOCI` refers to `/var/lib/soci-snapshotter-grpc`" in api.splitlines()
    soci = (NODEADM_DATA / "nodeadm-internal-containerd-snapshotter-soci-snapshotter.config.toml").read_text()
    sections = [line for line in soci.splitlines() if line.startswith("[")]
    assert "[pull_modes.parallel_pull_unpack]" in sections
    assert not [s for s in sections if "soci_v1" in s or "soci_v2" in s]
    after = soci.split("[pull_modes.parallel_pull_unpack]\n", 1)[1].splitlines()
    assert "enable = true" in after[: after.index('[pull_modes.parallel_pull_unpack.decompress_streams."gzip"]')]
    assert "max_concurrent_downloads_per_image = 20" in after
    assert "max_concurrent_unpacks_per_image = 12" in after


def test_every_aws_gpu_type_clears_nodeadms_threshold_and_pulls_onto_nvme():
    """nodeadm ignores the gate below 4 vCPU or 7 GiB (config.go L187); every EKS GPU pool writes pulls onto its
    instance-store array. A type added without either would count no gain: this names it."""
    aws = [m for m in MACHINES.values() if m.cloud == "aws"]
    assert len(aws) == 30  # g5, g6, g6e x 8 sizes, p4d, p4de, p5, p5e, p5en, p6-b200
    for machine in aws:
        assert machine.vcpus >= 4 and machine.memory_gib >= 7 and machine.local_nvme_gib > 0, machine.name
        assert parallel_pull_applies(machine)


@pytest.mark.parametrize(
    ("vcpus", "memory_gib", "nvme_gib", "applies"),
    [
        (4, 7, 250, True),  # the threshold itself
        (2, 16, 250, False),  # below 4 vCPU: nodeadm ignores the gate
        (8, 6, 250, False),  # below 7 GiB
        (8, 32, 0, False),  # pulls onto the root EBS volume, slower at gp3's baseline
    ],
)
def test_parallel_pull_applies_only_where_nodeadm_turns_it_on_onto_nvme(vcpus, memory_gib, nvme_gib, applies):
    machine = MachineType("x.test", "aws", "L4", 1, vcpus, memory_gib, nvme_gib)
    assert parallel_pull_applies(machine) is applies


# --- cold starts -------------------------------------------------------------------------------------------------


def test_image_pull_estimates_count_the_gain_only_where_it_applies(prod_plan):
    """vLLM's image, 12 GiB: 240 s at containerd's 0.05 GiB/s, 80 s at the parallel 0.15 GiB/s; Triton's 16 GiB:
    320 s. GKE counts no streaming gain (the engines' images are not in Artifact Registry)."""
    use1, usc1 = prod_plan.spec.region("use1"), prod_plan.spec.region("usc1")
    assert image_pull_seconds(use1.pool("l40s"), "vllm") == 80
    assert image_pull_seconds(use1.pool("l40s"), "triton") == 107  # 16 / 0.15 = 106.7
    assert image_pull_seconds(usc1.pool("l4"), "vllm") == 240
    assert image_pull_seconds(usc1.pool("l4"), "triton") == 320
    assert [effective_image_pull(p) for p in usc1.gpu_pools] == ["default"] * len(usc1.gpu_pools)
    default = use1.pool("l40s").model_copy(update={"image_pull": "default"})
    assert image_pull_seconds(default, "vllm") == 240


def test_dev_cold_starts_count_the_new_nodes_pull(dev_plan):
    """At zero replicas on pools at zero nodes: 30 s scrape + 15 s KEDA poll + 180 s node join + the pull + the
    engine's start-up (plan.md's estimate). llama on l40s (default pull): 30 + 15 + 180 + 240 + 244 = 709; qwen on
    the parallel a100-mig pool: 30 + 15 + 180 + 80 + 251 = 556. A request is held 10 s (WAKE_HOLD_SECONDS)."""
    placements = {p.model.name: p for p in model_placements(dev_plan.spec, dev_plan.spec.region("use1"))}
    assert placements["llama-3-1-8b"].startup_seconds == 244
    assert placements["qwen2-5-7b"].startup_seconds == 251
    assert placements["llama-3-1-8b"].cold_start_seconds == 709
    assert placements["qwen2-5-7b"].cold_start_seconds == 556
    markdown = render_markdown(dev_plan)
    assert "| 244s / 488s | 709s (240s) / 10s |" in markdown
    assert "| 251s / 502s | 556s (80s) / 10s |" in markdown
    assert "| us-east-1b | parallel (SOCI, nodeadm FastImagePull) |" in markdown


def test_a_pool_kept_up_waits_for_no_pull(prod_plan):
    placements = [p for region in prod_plan.spec.regions for p in model_placements(prod_plan.spec, region)]
    assert len(placements) == 7  # prod's models over their regions
    for placement in placements:
        assert placement.cold_start_pull_seconds == 0 and placement.cold_start_seconds is None


# --- configuration -----------------------------------------------------------------------------------------------


def test_parallel_pull_on_a_gke_pool_is_refused_naming_the_key():
    raw = raw_environment("prod")
    raw["regions"][2]["gpuPools"][1]["imagePull"] = "parallel"
    (line,) = config_errors(raw)
    # A GKE pool is the GCP pool model, which has no imagePull (nodeadm's FastImagePull is an EKS node setting).
    assert line == (
        "regions[2].gpuPools[1].imagePull: unknown key: parallel pull is an EKS node setting (nodeadm's "
        "FastImagePull); GKE pools already stream images from Artifact Registry (image streaming) and pull others "
        "whole: remove imagePull"
    )
