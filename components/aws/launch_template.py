"""The hardening every EKS node launch template shares (system and GPU pools)."""

from __future__ import annotations

from typing import Any


def hardened_node_settings(instance_name: str, root_volume_gib: int) -> dict[str, Any]:
    """LaunchTemplate arguments: IMDSv2 only with hop limit 1 (pods cannot reach the node's
    credentials; they use IRSA), an encrypted gp3 root volume, and a Name tag on instances."""
    return {
        "metadata_options": {
            "http_endpoint": "enabled",
            "http_tokens": "required",
            "http_put_response_hop_limit": 1,
        },
        "block_device_mappings": [
            {
                "device_name": "/dev/xvda",
                "ebs": {
                    "volume_size": root_volume_gib,
                    "volume_type": "gp3",
                    "encrypted": "true",
                    "delete_on_termination": "true",
                },
            }
        ],
        "tag_specifications": [{"resource_type": "instance", "tags": {"Name": instance_name}}],
    }
