"""The passing side of the endpoint, Secret-name and existing-cluster checks (each failing variant is in
tests/bad_configs.py): near-variants that are right."""

from __future__ import annotations

import pytest

from components.checks.endpoint_checks import host_port_issue, secret_name_issue, url_issue
from components.checks.loader import load_environment
from components.config.region import EKS_CLUSTER_NAME, GKE_CLUSTER_NAME, ROLE_ARN, SUBNET_ID
from platform_catalog.address_space import cluster_local
from tests.harness import raw_environment


@pytest.mark.parametrize(
    "url",
    [
        "http://kube-prometheus-stack-prometheus.monitoring.svc:9090",  # plain HTTP inside the cluster
        "http://prometheus:9090",
        "http://prometheus-operated.monitoring:9090",  # <service>.<namespace>: the pod's DNS search path resolves it
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


@pytest.mark.parametrize(
    ("host", "local"),
    [
        ("prometheus-operated", True),
        (
            "prometheus-operated.monitoring",
            True,
        ),  # kubelet's resolv.conf: search <ns>.svc.cluster.local svc.cluster.local
        ("otel.monitoring.svc.cluster.local", True),
        ("localhost", True),
        ("127.0.0.1", True),
        ("collector.example.com", False),
        ("grafana.app", False),  # .app is an ICANN top-level domain: a public name first
        ("10.20.0.5", False),  # an address outside the Service network the platform cannot vouch for
    ],
)
def test_which_hosts_stay_in_the_cluster(host, local):
    assert cluster_local(host) is local


def test_a_remote_write_url_may_spell_its_scheme_in_capitals():
    """Go's url.Parse lowercases the scheme (net/url parse), as Prometheus reads remote_write[].url."""
    raw = raw_environment()
    raw["regions"][0]["observability"]["remoteWrite"] = {"url": "HTTPS://mimir.example.com/api/v1/push"}
    assert load_environment(raw).regions[0].observability.remote_write is not None
