"""Cluster Autoscaler 1.35.0 on AWS (the appVersion of chart 9.59.0): the ASG tags it reads, and its defaults.

Sources, at kubernetes/autoscaler tag cluster-autoscaler-1.35.0 (FACTS-3.md §2):
- cloudprovider/aws/README.md "Auto-Discovery Setup" (also the chart's `autoDiscovery.tags` default and
  cloudprovider/aws/examples/cluster-autoscaler-autodiscover.yaml): an ASG is discovered when it carries
  every listed tag key;
- cloudprovider/aws/aws_manager.go: `buildNodeFromTemplate` builds the node of a scale-up from zero out of
  `node-template/label/*`, `node-template/taint/*` (value `<value>:<effect>`, else ignored) and
  `node-template/resources/*` (parsed as quantities, overriding the instance-type table, which knows
  neither MIG devices, time-slice shares nor EFA); `GetAsgOptions` reads exactly the five per-ASG
  `autoscaling-options/*` below (no max-node-provision-time on AWS);
- cloudprovider/aws/aws_cloud_provider.go: `GPULabel`, the node label that marks a GPU node (unready
  until it advertises nvidia.com/gpu; GPU utilization alone decides its scale-down);
- config/const.go and config/flags/flags.go: the defaults.
"""

from __future__ import annotations

NODE_TEMPLATE = "k8s.io/cluster-autoscaler/node-template/"
LABEL_TAG = NODE_TEMPLATE + "label/"
TAINT_TAG = NODE_TEMPLATE + "taint/"
RESOURCE_TAG = NODE_TEMPLATE + "resources/"
OPTION_TAG = NODE_TEMPLATE + "autoscaling-options/"
ASG_OPTIONS = (
    "scaledownutilizationthreshold",
    "scaledowngpuutilizationthreshold",
    "scaledownunneededtime",
    "scaledownunreadytime",
    "ignoredaemonsetsutilization",
)
# The chart's default discovery tag keys; `{cluster}` is autoDiscovery.clusterName.
DISCOVERY_TAGS = ("k8s.io/cluster-autoscaler/enabled", "k8s.io/cluster-autoscaler/{cluster}")
GPU_LABEL = "k8s.amazonaws.com/accelerator"
DEFAULT_SCALE_DOWN_UNNEEDED_SECONDS = 600  # --scale-down-unneeded-time 10m
DEFAULT_MAX_NODE_PROVISION_SECONDS = 900  # --max-node-provision-time 15m
