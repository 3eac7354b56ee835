"""A small REST client for the rehearsal's API servers: create, server-side apply, get, list, watch-free polling,
with a discovery-backed mapping from kind to resource that refreshes when a kind is new (a CRD just installed)."""

from __future__ import annotations

import builtins
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

# client-go's rest client retries an answer of 429 or 5xx that carries Retry-After (seconds), after that long, up to
# 10 times (catalog fact `client-go-retries-what-the-server-says-to-retry`): an API server whose watch cache for a
# kind is (re)initializing answers 429 with Retry-After, which every controller and the Pulumi provider wait out.
CLIENT_GO_MAX_RETRIES = 10


class _ClientGoRetry(Retry):
    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        return has_retry_after and (status_code == 429 or status_code >= 500)


def client_go_retry() -> Retry:
    return _ClientGoRetry(
        total=CLIENT_GO_MAX_RETRIES,
        connect=0,
        read=False,
        redirect=0,
        other=0,  # a transport error mid-answer is not the server saying when to come back
        allowed_methods=None,  # every verb: client-go resends its buffered body
        respect_retry_after_header=True,
        raise_on_status=False,  # the last answer, as client-go returns it
    )


class ApiError(Exception):
    def __init__(self, status: int, reason: str, message: str):
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


class KindNotServed(ApiError):
    def __init__(self, api_version: str, kind: str):
        super().__init__(404, "NotFound", f"the server does not serve {kind} in {api_version}")


@dataclass(frozen=True)
class Resource:
    plural: str
    namespaced: bool


class _NamedHost(HTTPAdapter):
    """Connects to an address but verifies the certificate for a name (kubeconfig's tls-server-name)."""

    def __init__(self, server_name: str):
        self.server_name = server_name
        super().__init__(max_retries=client_go_retry())

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["server_hostname"] = self.server_name
        kwargs["assert_hostname"] = self.server_name
        super().init_poolmanager(*args, **kwargs)


class Kube:
    def __init__(
        self,
        server: str,
        ca: Path,
        *,
        cert: tuple[Path, Path] | None = None,
        token: str | None = None,
        server_name: str | None = None,
    ):
        self.server = server
        self.session = requests.Session()
        self.session.trust_env = False  # REQUESTS_CA_BUNDLE and proxies from the environment would replace ours
        self.session.mount(
            "https://", _NamedHost(server_name) if server_name else HTTPAdapter(max_retries=client_go_retry())
        )
        self.session.mount("http://", HTTPAdapter(max_retries=client_go_retry()))
        self.session.verify = str(ca)
        if cert is not None:
            self.session.cert = (str(cert[0]), str(cert[1]))
        if token is not None:
            self.session.headers["Authorization"] = f"Bearer {token}"
        self._resources: dict[tuple[str, str], Resource] = {}
        self._discovered: set[str] = set()  # group versions asked of discovery (and answered without the kind)
        self._api_versions: list[str] | None = None
        self._lock = threading.Lock()

    # -- discovery ------------------------------------------------------------------------------------------
    def _discover(self, api_version: str) -> None:
        path = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        response = self.session.get(self.server + path, timeout=30)
        # 503: an aggregated API whose APIService is not Available yet (kube-aggregator answers "service
        # unavailable", k8s.io/kube-aggregator@v0.35.2 pkg/apiserver/handler_proxy.go L122-L125): client-go's
        # discovery leaves the group out, so the kind is not served yet and the provider retries the create.
        if response.status_code in (404, 503):
            return
        self._raise(response)
        for item in response.json().get("resources", []):
            if "/" in item["name"]:
                continue
            self._resources[(api_version, item["kind"])] = Resource(item["name"], item["namespaced"])

    def resource(self, api_version: str, kind: str) -> Resource:
        with self._lock:
            if (api_version, kind) not in self._resources and api_version not in self._discovered:
                self._discover(api_version)
                self._discovered.add(api_version)
            if (api_version, kind) not in self._resources:
                raise KindNotServed(api_version, kind)
            return self._resources[(api_version, kind)]

    def forget(self) -> None:
        """Drop what discovery said about kinds it did not serve (a CRD may serve them now)."""
        with self._lock:
            self._discovered.clear()
            self._api_versions = None

    def api_versions(self) -> list[str]:
        """What Helm's `.Capabilities.APIVersions` holds on this cluster: every served group/version, and each
        group/version/Kind (kept until `forget`)."""
        if self._api_versions is not None:
            return self._api_versions
        core = self.session.get(self.server + "/api", timeout=30).json().get("versions", [])
        groups = self.session.get(self.server + "/apis", timeout=30).json().get("groups", [])
        versions: set[str] = set()
        for gv in [*core, *(v["groupVersion"] for g in groups for v in g.get("versions", []))]:
            versions.add(gv)
            path = f"/api/{gv}" if "/" not in gv else f"/apis/{gv}"
            for item in self.session.get(self.server + path, timeout=30).json().get("resources", []):
                if "/" not in item["name"]:
                    versions.add(f"{gv}/{item['kind']}")
        self._api_versions = sorted(versions)
        return self._api_versions

    def served(self, api_version: str, kind: str) -> bool:
        try:
            self.resource(api_version, kind)
        except KindNotServed:
            return False
        return True

    def path(self, api_version: str, kind: str, namespace: str | None = None, name: str | None = None) -> str:
        resource = self.resource(api_version, kind)
        base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        if resource.namespaced:
            base += f"/namespaces/{namespace or 'default'}"
        base += f"/{resource.plural}"
        return base + (f"/{name}" if name else "")

    # -- verbs ----------------------------------------------------------------------------------------------
    @staticmethod
    def _raise(response: requests.Response) -> None:
        if response.status_code < 400:
            return
        try:
            body = response.json()
            message, reason = body.get("message", response.text), body.get("reason", "")
        except ValueError:
            message, reason = response.text.strip(), ""
        raise ApiError(response.status_code, reason or response.reason, message)

    def create(self, obj: dict[str, Any], *, field_manager: str) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        path = self.path(obj["apiVersion"], obj["kind"], meta.get("namespace"))
        response = self.session.post(self.server + path, params={"fieldManager": field_manager}, json=obj, timeout=60)
        self._raise(response)
        return response.json()

    def apply(self, obj: dict[str, Any], *, field_manager: str, force: bool = False) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        path = self.path(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])
        response = self.session.patch(
            self.server + path,
            params={"fieldManager": field_manager, "force": "true" if force else "false"},
            data=json.dumps(obj),
            headers={"Content-Type": "application/apply-patch+yaml"},
            timeout=60,
        )
        self._raise(response)
        return response.json()

    def patch_status(self, api_version: str, kind: str, namespace: str | None, name: str, patch: dict) -> dict:
        """A strategic merge patch of a built-in kind's status (lists merge by key), a merge patch of a custom
        resource's (which has no strategy)."""
        path = self.path(api_version, kind, namespace, name) + "/status"
        builtin = (
            "/" not in api_version
            or api_version.split("/")[0].endswith("k8s.io")
            or "." not in api_version.split("/")[0]
        )
        content = "application/strategic-merge-patch+json" if builtin else "application/merge-patch+json"
        response = self.session.patch(
            self.server + path,
            data=json.dumps(patch),
            headers={"Content-Type": content},
            timeout=30,
        )
        self._raise(response)
        return response.json()

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        response = self.session.get(self.server + self.path(api_version, kind, namespace, name), timeout=30)
        if response.status_code == 404:
            return None
        self._raise(response)
        return response.json()

    def list(
        self, api_version: str, kind: str, namespace: str | None = None, *, selector: str | None = None
    ) -> list[dict[str, Any]]:
        resource = self.resource(api_version, kind)
        base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        if resource.namespaced and namespace is not None:
            base += f"/namespaces/{namespace}"
        params = {"labelSelector": selector} if selector else {}
        response = self.session.get(self.server + base + f"/{resource.plural}", params=params, timeout=60)
        self._raise(response)
        return response.json().get("items") or []

    def list_metadata(self, api_version: str, kind: str) -> builtins.list[dict[str, Any]]:  # `list` is a method here
        """Only the objects' metadata (PartialObjectMetadataList): a list of CRDs without their schemas."""
        resource = self.resource(api_version, kind)
        base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        response = self.session.get(
            self.server + base + f"/{resource.plural}",
            headers={"Accept": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"},
            timeout=60,
        )
        self._raise(response)
        return response.json().get("items") or []

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = self.session.post(self.server + path, json=body, timeout=30)
        self._raise(response)
        return response.json()

    def delete(
        self, api_version: str, kind: str, name: str, namespace: str | None = None, *, propagation: str | None = None
    ) -> None:
        """DELETE (a missing object is no error); `propagation`: Background, Foreground or Orphan for dependents."""
        body = {"propagationPolicy": propagation} if propagation else None
        response = self.session.delete(
            self.server + self.path(api_version, kind, namespace, name), json=body, timeout=30
        )
        if response.status_code != 404:
            self._raise(response)

    def token(self, namespace: str, service_account: str, *, seconds: int = 86400) -> str:
        """A bound token of a ServiceAccount (TokenRequest), as the kubelet projects into its pods."""
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": seconds},
        }
        path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token"
        return self.post(path, body)["status"]["token"]
