"""The NodeConfig features nodeadm knows, at the EKS AMI release components/catalog/node_images.py pins.

The program turns FastImagePull on in a GPU pool's launch template; the policy pack refuses a feature gate nodeadm
does not know. Source: awslabs/amazon-eks-ami@v20260724 (nodeadm is the same at the pinned v20260714, see
components/catalog/node_images.py) nodeadm/api/v1alpha1/nodeconfig_types.go L158-160, the kubebuilder enum.
"""

from __future__ import annotations

NODEADM_FEATURES = ("InstanceIdNodeName", "FastImagePull")
FAST_IMAGE_PULL = "FastImagePull"
