"""What each pool offers the scheduler, and the partitioning labels its nodes carry."""

from __future__ import annotations

import re

import pytest

from components.domain.gpu_resources import schedulable_at_max_size, schedulable_resources
from components.k8s.topology import gpu_pool_labels
from tests.gpu_specs import pool
from tools.plan.report import render_markdown

CUSTOM = {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}


@pytest.mark.parametrize(
    ("spec", "per_node"),
    [
        (pool("whole", "p5.48xlarge"), {"nvidia.com/gpu": 8}),
        (pool("sliced", "g6e.xlarge", timeSlicing={"replicas": 4}), {"nvidia.com/gpu": 4}),
        (pool("sliced-4gpu", "g6e.12xlarge", timeSlicing={"replicas": 3}), {"nvidia.com/gpu": 12}),
        # named config, mixed strategy: one resource per profile, instances x GPUs
        (pool("named", "p4de.24xlarge", mig={"profile": "all-3g.40gb"}), {"nvidia.com/mig-3g.40gb": 16}),
        # named config, single strategy: every instance is a nvidia.com/gpu
        (pool("single", "p5.48xlarge", mig={"strategy": "single", "profile": "all-1g.10gb"}), {"nvidia.com/gpu": 56}),
        # the custom dev layout on 8 A100-80GB
        (
            pool("custom", "p4de.24xlarge", mig={"layout": CUSTOM}),
            {"nvidia.com/mig-3g.40gb": 8, "nvidia.com/mig-2g.20gb": 8, "nvidia.com/mig-1g.10gb": 16},
        ),
        (
            pool("balanced", "a2-ultragpu-1g", driverInstall="operator", mig={"profile": "all-balanced"}),
            {"nvidia.com/mig-1g.10gb": 2, "nvidia.com/mig-2g.20gb": 1, "nvidia.com/mig-3g.40gb": 1},
        ),
        # media extensions: mig-parted's 1g.10gb+me is advertised as .me
        (pool("me", "p5.48xlarge", mig={"profile": "all-1g.10gb.me"}), {"nvidia.com/mig-1g.10gb.me": 8}),
        (pool("h200", "p5e.48xlarge", mig={"profile": "all-2g.35gb"}), {"nvidia.com/mig-2g.35gb": 24}),
        # GKE partitions: GKE's device plugin advertises each as a nvidia.com/gpu
        (pool("gke-mig", "a2-ultragpu-2g", gkePartitionSize="1g.10gb"), {"nvidia.com/gpu": 14}),
    ],
    ids=lambda v: v.name if hasattr(v, "name") else "",
)
def test_schedulable_resources_per_node(spec, per_node):
    assert schedulable_resources(spec) == per_node


def test_schedulable_resources_at_max_size():
    assert schedulable_at_max_size(pool("custom", "p4de.24xlarge", max_size=3, mig={"layout": CUSTOM})) == {
        "nvidia.com/mig-3g.40gb": 24,
        "nvidia.com/mig-2g.20gb": 24,
        "nvidia.com/mig-1g.10gb": 48,
    }


# --- labels ----------------------------------------------------------------------------------------------

DOMAIN = "inference-platform.io"


def _partitioning_labels(cloud: str, spec) -> dict[str, str]:
    labels = gpu_pool_labels(DOMAIN, "c", spec)
    assert labels[f"{DOMAIN}/pool"] == spec.name  # the shared schema is still there
    return {k: v for k, v in labels.items() if not k.startswith(DOMAIN + "/")}


@pytest.mark.parametrize(
    ("cloud", "spec", "expected"),
    [
        (  # EKS AL2023 NVIDIA AMI: the image owns driver and toolkit
            "aws",
            pool("l40s", "g6e.xlarge"),
            {"nvidia.com/gpu.deploy.driver": "false", "nvidia.com/gpu.deploy.container-toolkit": "false"},
        ),
        (
            "aws",
            pool("l40s", "g6e.xlarge", timeSlicing={"replicas": 4}),
            {
                "nvidia.com/gpu.deploy.driver": "false",
                "nvidia.com/gpu.deploy.container-toolkit": "false",
                "nvidia.com/device-plugin.config": "time-sliced-4",
            },
        ),
        (  # a MIG-capable GPU used whole is explicitly reset to MIG off
            "aws",
            pool("h100", "p5.48xlarge"),
            {
                "nvidia.com/gpu.deploy.driver": "false",
                "nvidia.com/gpu.deploy.container-toolkit": "false",
                "nvidia.com/mig.config": "all-disabled",
            },
        ),
        (
            "aws",
            pool("a100-mig", "p4de.24xlarge", mig={"layout": CUSTOM}),
            {
                "nvidia.com/gpu.deploy.driver": "false",
                "nvidia.com/gpu.deploy.container-toolkit": "false",
                "nvidia.com/mig.config": "custom-a100-mig",
            },
        ),
        (  # GKE installs drivers and runs its device plugin: the operator stays off the nodes
            "gcp",
            pool("l4", "g2-standard-24", timeSlicing={"replicas": 2}),
            {"nvidia.com/gpu.deploy.operands": "false"},
        ),
        (
            "gcp",
            pool("a100", "a2-ultragpu-1g", gkePartitionSize="3g.40gb"),
            {"nvidia.com/gpu.deploy.operands": "false"},
        ),
        (  # GKE driver installation disabled: the operator owns everything, GKE's device plugin is off
            "gcp",
            pool("a100-mig", "a2-ultragpu-1g", driverInstall="operator", mig={"profile": "all-3g.40gb"}),
            {"gke-no-default-nvidia-gpu-device-plugin": "true", "nvidia.com/mig.config": "all-3g.40gb"},
        ),
        (
            "gcp",
            pool("l4-op", "g2-standard-8", driverInstall="operator", timeSlicing={"replicas": 8}),
            {"gke-no-default-nvidia-gpu-device-plugin": "true", "nvidia.com/device-plugin.config": "time-sliced-8"},
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else getattr(v, "name", ""),
)
def test_partitioning_labels_per_pool(cloud, spec, expected):
    assert _partitioning_labels(cloud, spec) == expected


_LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


def test_every_checked_in_pool_says_who_owns_its_gpus_in_valid_labels(dev_plan, prod_plan):
    for plan in (dev_plan, prod_plan):
        # dev: l40s, a100-mig; prod: h100 and l40s in each AWS region, h200, l4 and a100-mig in usc1
        pools = sum(len(reg.gpu_pools) for reg in plan.spec.regions)
        assert pools == {"dev": 2, "prod": 7}[plan.environment], plan.environment
        for reg in plan.spec.regions:
            for spec in reg.gpu_pools:
                labels = gpu_pool_labels(plan.spec.label_domain, "c", spec)
                assert {"nvidia.com/gpu.deploy.operands", "nvidia.com/gpu.deploy.driver"} & labels.keys() or (
                    labels.get("gke-no-default-nvidia-gpu-device-plugin") == "true"
                ), (reg.name, spec.name)
                assert all(_LABEL_VALUE.match(v) for v in labels.values()), labels


# --- plan.md -----------------------------------------------------------------------------------------------


def test_plan_md_lists_schedulable_resources_per_pool(dev_plan):
    markdown = render_markdown(dev_plan)
    section = markdown.split("## Schedulable GPU resources", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| use1")]
    assert rows == [
        # At 0 nodes, all of it comes from the autoscaler.
        "| use1 | l40s | g6e.4xlarge | time-sliced x2 | `nvidia.com/gpu` | 2 | 2 | 4 "
        "| +4 (2 nodes from 0, Cluster Autoscaler) |",
        "| use1 | a100-mig | p4de.24xlarge | MIG mixed, 1x 3g.40gb + 1x 2g.20gb + 2x 1g.10gb per GPU | "
        "`nvidia.com/mig-3g.40gb` | 8 | 1 | 8 | +8 (1 node from 0, Cluster Autoscaler) |",
        "| use1 | a100-mig | p4de.24xlarge | MIG mixed, 1x 3g.40gb + 1x 2g.20gb + 2x 1g.10gb per GPU | "
        "`nvidia.com/mig-2g.20gb` | 8 | 1 | 8 | +8 (1 node from 0, Cluster Autoscaler) |",
        "| use1 | a100-mig | p4de.24xlarge | MIG mixed, 1x 3g.40gb + 1x 2g.20gb + 2x 1g.10gb per GPU | "
        "`nvidia.com/mig-1g.10gb` | 16 | 1 | 16 | +16 (1 node from 0, Cluster Autoscaler) |",
    ]


def test_plan_md_shows_the_prod_mig_pool(prod_plan):
    assert (
        "| usc1 | a100-mig | a2-ultragpu-1g | MIG mixed, all-3g.40gb per GPU | `nvidia.com/mig-3g.40gb` | 2 | 3 | 6 "
        "| +6 (3 nodes from 0, GKE cluster autoscaler) |" in render_markdown(prod_plan)
    )
