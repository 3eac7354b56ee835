"""Checks of the addresses and Secret names a config hands to other systems: URLs with a scheme and a host (plain
HTTP only inside the cluster), the Redis `host:port`, Kubernetes Secret names. Plain functions over the typed
models, each issue at its key path."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

from components.config.base import Issue, KeyPath, join_path
from components.config.environment import EnvironmentSpec
from platform_catalog.address_space import cluster_local

# A Secret's name is a DNS-1123 subdomain (k8s.io/apimachinery@v0.33.13 pkg/util/validation/validation.go
# IsDNS1123Subdomain; pkg/apis/core/validation ValidateSecretName = NameIsDNSSubdomain): at most 253 characters.
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_HOST = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*$"
)


def https_url(url: str) -> bool:
    """Whether `url` is https:// in any case (Go's url.Parse, which Prometheus and KEDA use, lowercases the scheme)."""
    return url[:8].lower() == "https://"


def url_issue(url: str, *, https_only: bool = False) -> str | None:
    """Why `url` is not an http(s) URL with a host (or plain HTTP beyond the cluster), or None."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"{url!r} is not a URL ({exc}); write https://<host>[:<port>]/<path>"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{url!r} has no http(s) scheme and host; write https://<host>[:<port>]/<path>"
    if port == 0:
        return f"{url!r} has port 0"
    if parts.scheme == "http" and (https_only or not cluster_local(parts.hostname)):
        return f"{url!r} is plain HTTP to {parts.hostname}, outside the cluster; use https://"
    return None


def host_port_issue(value: str) -> str | None:
    """Why `value` is not `host:port` (a DNS name or IPv4 address, a port 1-65535), or None."""
    if "://" in value:
        return f"{value!r} has a scheme; write host:port, e.g. redis.internal.example.com:6379"
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or not _HOST.match(host):
        return f"{value!r} is not host:port (a DNS name or address and a port 1-65535), e.g. redis.example.com:6379"
    return None


def secret_name_issue(name: str) -> str | None:
    if len(name) > 253 or not DNS1123_SUBDOMAIN.match(name):
        return (
            f"{name!r} is not a Kubernetes Secret name (lowercase letters, digits, '-' and '.', starting and ending "
            "with a letter or digit, at most 253); rename it"
        )
    return None


def check_endpoints(env: EnvironmentSpec) -> Iterator[Issue]:
    checks: list[tuple[KeyPath, str | None]] = []
    for i, region in enumerate(env.regions):
        at = ("regions", i)
        if region.serving.prometheus_url is not None:
            checks.append(((*at, "serving", "prometheusUrl"), url_issue(region.serving.prometheus_url)))
        checks.append(((*at, "gateway", "tlsSecret"), secret_name_issue(region.gateway.tls_secret)))
        obs = region.observability
        if obs.remote_write is not None:
            remote = ("regions", i, "observability", "remoteWrite")
            if https_url(obs.remote_write.url):  # any other scheme: check_observability says so
                checks.append(((*remote, "url"), url_issue(obs.remote_write.url, https_only=True)))
        if obs.grafana.tls_secret is not None:
            grafana = (*at, "observability", "grafana", "tlsSecret")
            checks.append((grafana, secret_name_issue(obs.grafana.tls_secret)))
    if env.gateway.redis.url is not None:
        checks.append((("gateway", "redis", "url"), host_port_issue(env.gateway.redis.url)))
    for path, problem in checks:
        if problem:
            yield Issue(join_path(*path), problem)
