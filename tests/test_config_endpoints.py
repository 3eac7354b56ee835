"""The passing side of the endpoint, Secret-name and existing-cluster checks (each failing variant is in
tests/bad_configs.py): near-variants that are right."""

from __future__ import annotations

import pytest

from components.config.endpoint_checks import host_port_issue, secret_name_issue, url_issue
from components.config.existing_clusters import EKS_CLUSTER_NAME, GKE_CLUSTER_NAME, ROLE_ARN, SUBNET_ID


@pytest.mark.parametrize(
    "url",
    [
        "http://kube-prometheus-stack-prometheus.monitoring.svc:9090",  # plain HTTP inside the cluster
        "http://prometheus:9090",
        "https://prometheus.example.com",
        "https://mimir.example.com:8443/api/v1/push",
    ],
)
def test_urls_that_are_right(url):
    assert url_issue(url) is None


@pytest.mark.parametrize("value", ["redis.internal.example.com:6379", "10.0.4.17:6380", "redis:6379"])
def test_redis_addresses_that_are_right(value):
    assert host_port_issue(value) is None


@pytest.mark.parametrize("name", ["inference-gateway-tls", "tls.acme.example", "a"])
def test_secret_names_that_are_right(name):
    assert secret_name_issue(name) is None


def test_cloud_ids_that_are_right():
    assert EKS_CLUSTER_NAME.match("Team_EKS-1") and not EKS_CLUSTER_NAME.match("-team")
    assert GKE_CLUSTER_NAME.match("team-gke") and not GKE_CLUSTER_NAME.match("Team-gke")
    assert ROLE_ARN.match("arn:aws-us-gov:iam::123456789012:role/path/gpu-nodes")
    assert SUBNET_ID.match("subnet-0a1b2c3d") and SUBNET_ID.match("subnet-0123456789abcdef0")
    assert not SUBNET_ID.match("subnet-0a1b2c3")
