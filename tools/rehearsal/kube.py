"""A small REST client for the rehearsal's API servers: create, server-side apply, get, list, with a discovery-backed
mapping from kind to resource that refreshes when a kind is new (a CRD just installed), and, for the kinds the
rehearsal's own loops list every second or two, a cache a watch keeps current (`WATCHED`)."""

from __future__ import annotations

import builtins
import json
import threading
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from tools.rehearsal.processes import background_error

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

    def __init__(self, server_name: str, *, pool: int = 10):
        self.server_name = server_name
        super().__init__(max_retries=client_go_retry(), pool_maxsize=pool)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["server_hostname"] = self.server_name
        kwargs["assert_hostname"] = self.server_name
        super().init_poolmanager(*args, **kwargs)


# What the rehearsal's kubelet, its stand-ins (cert-manager, Fluid, the cloud's controllers), its DNS and its Service
# proxy list, each every second or two, of every cluster. Listed afresh each time, decoding the lists was a third of
# the rehearsal's own CPU in a prod rehearsal (py-spy), and serving them a share of each API server's; a watch
# per kind keeps one cache instead, as client-go's informers keep a controller's. Secrets and ConfigMaps: the kubelet
# looks up the keys its waiting pods reference each second, as long as one waits.
WATCHED = frozenset(
    {
        ("v1", "Pod"),
        ("v1", "Secret"),
        ("v1", "ConfigMap"),
        ("v1", "Node"),
        ("v1", "Service"),
        ("v1", "PersistentVolume"),
        ("v1", "PersistentVolumeClaim"),
        ("discovery.k8s.io/v1", "EndpointSlice"),
        ("storage.k8s.io/v1", "CSINode"),
    }
)
METADATA = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
METADATA_WATCH = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
WATCH_SECONDS = 240  # each watch request's timeoutSeconds: the server ends it, and the cache watches on from there
# The server ends a watch at timeoutSeconds, and need send nothing before (a kind nothing writes to gets no bookmark):
# a watch silent for longer has stalled, and is listed again.
READ_SECONDS = WATCH_SECONDS + 30
RELIST_SECONDS = 1.0  # after a failed watch or list, the wait before the next list
SHORT_WATCH_SECONDS = 1.0  # a watch that ends sooner with nothing is a failure (client-go's "very short watch")


def is_ready(obj: Mapping[str, Any] | None) -> bool:
    """Whether an object's (a pod's, a node's, a Karmada Cluster's) Ready condition is True."""
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


class Kube:
    def __init__(
        self,
        server: str,
        ca: Path,
        *,
        cert: tuple[Path, Path] | None = None,
        token: str | None = None,
        server_name: str | None = None,
        watched: Collection[tuple[str, str]] = (),
        watched_metadata: Collection[tuple[str, str]] = (),
    ):
        """`watched`: (apiVersion, kind) pairs whose `list` reads a cache a watch keeps current (`Informer`), from the
        first list of each on; `watched_metadata`: those whose `list_metadata` does; `close()` ends the watches."""
        self.server = server
        self._ca, self._cert, self._token, self._server_name = ca, cert, token, server_name
        self.session = self._session()
        self._resources: dict[tuple[str, str], Resource] = {}
        self._discovered: set[str] = set()  # group versions asked of discovery (and answered without the kind)
        self._api_versions: list[str] | None = None
        self._lock = threading.Lock()
        self._watched = frozenset(watched)
        self._watched_metadata = frozenset(watched_metadata)
        self._informers: dict[tuple[str, str, bool], Informer] = {}
        self._closed = threading.Event()

    def _session(self, pool: int = 10) -> requests.Session:
        """A session of this client's credentials, with a connection pool of `pool` per host."""
        session = requests.Session()
        session.trust_env = False  # REQUESTS_CA_BUNDLE and proxies from the environment would replace ours
        https = (
            _NamedHost(self._server_name, pool=pool)
            if self._server_name
            else HTTPAdapter(max_retries=client_go_retry(), pool_maxsize=pool)
        )
        session.mount("https://", https)
        session.mount("http://", HTTPAdapter(max_retries=client_go_retry(), pool_maxsize=pool))
        session.verify = str(self._ca)
        if self._cert is not None:
            session.cert = (str(self._cert[0]), str(self._cert[1]))
        if self._token is not None:
            session.headers["Authorization"] = f"Bearer {self._token}"
        return session

    def close(self) -> None:
        """End the watches (each thread leaves when its open request next returns); `list` asks the server again."""
        self._closed.set()

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

    def collection(self, api_version: str, kind: str, namespace: str | None = None) -> str:
        """A kind's collection: of `namespace` where the kind is namespaced and one is given, else cluster-wide (the
        server ignores a cluster-scoped kind's namespace)."""
        resource = self.resource(api_version, kind)
        base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        if resource.namespaced and namespace is not None:
            base += f"/namespaces/{namespace}"
        return base + f"/{resource.plural}"

    def path(self, api_version: str, kind: str, namespace: str | None = None, name: str | None = None) -> str:
        return self.collection(api_version, kind, namespace or "default") + (f"/{name}" if name else "")

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
        return self._wrote(obj["apiVersion"], obj["kind"], response.json())

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
        return self._wrote(obj["apiVersion"], obj["kind"], response.json())

    def scale(
        self, api_version: str, kind: str, namespace: str, name: str, replicas: int, *, field_manager: str
    ) -> None:
        """Set a workload's replicas through its scale subresource, as an autoscaler does."""
        path = self.path(api_version, kind, namespace, name) + "/scale"
        response = self.session.patch(
            self.server + path,
            params={"fieldManager": field_manager},
            data=json.dumps({"spec": {"replicas": replicas}}),
            headers={"Content-Type": "application/merge-patch+json"},
            timeout=30,
        )
        self._raise(response)

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
        return self._wrote(api_version, kind, response.json())

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        response = self.session.get(self.server + self.path(api_version, kind, namespace, name), timeout=30)
        if response.status_code == 404:
            return None
        self._raise(response)
        return response.json()

    def list(
        self, api_version: str, kind: str, namespace: str | None = None, *, selector: str | None = None
    ) -> list[dict[str, Any]]:
        """The objects of a kind (in `namespace`, matching `selector`); of a watched kind, from its cache (shared
        objects: read them, do not change them), unless the selector is not a plain `key=value,...` one."""
        labels = _equality_selector(selector)
        if (api_version, kind) in self._watched and labels is not None and not self._closed.is_set():
            informer = self._informer(api_version, kind, metadata=False)
            if informer.live:
                if not self.resource(api_version, kind).namespaced:
                    namespace = None  # as the server ignores it for a cluster-scoped kind
                return [
                    o
                    for o in informer.items()
                    if (namespace is None or o["metadata"].get("namespace") == namespace)
                    and all((o["metadata"].get("labels") or {}).get(k) == v for k, v in labels.items())
                ]
        return self._listed(api_version, kind, namespace, selector)[0]

    def _listed(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        selector: str | None = None,
        *,
        metadata: bool = False,
    ) -> tuple[builtins.list[dict[str, Any]], str]:
        """The server's list (of the objects' metadata only), and its resourceVersion."""
        params = {"labelSelector": selector} if selector else {}
        headers = {"Accept": METADATA} if metadata else {}
        url = self.server + self.collection(api_version, kind, namespace)
        response = self.session.get(url, params=params, headers=headers, timeout=60)
        self._raise(response)
        body = response.json()
        return body.get("items") or [], (body.get("metadata") or {}).get("resourceVersion", "")

    def _informer(self, api_version: str, kind: str, *, metadata: bool) -> Informer:
        with self._lock:
            informer = self._informers.get((api_version, kind, metadata))
        if informer is None:
            created = Informer(self, api_version, kind, metadata=metadata)
            with self._lock:
                informer = self._informers.setdefault((api_version, kind, metadata), created)
            if informer is created:  # registered before its first list: a write answered meanwhile is taken in
                try:
                    created.start()  # outside the lock: its list asks discovery, which takes it
                except BaseException:
                    with self._lock:
                        del self._informers[(api_version, kind, metadata)]
                    raise
        return informer

    def _wrote(self, api_version: str, kind: str, answer: dict[str, Any]) -> dict[str, Any]:
        """A write's answer, taken into the kind's cache at once: the next list sees the write, as the server's
        own list would."""
        if answer.get("kind") != kind:
            return answer
        if (informer := self._informers.get((api_version, kind, False))) is not None:
            informer.take(answer)
        if (informer := self._informers.get((api_version, kind, True))) is not None:
            informer.take(_partial(answer))
        return answer

    def list_metadata(self, api_version: str, kind: str) -> builtins.list[dict[str, Any]]:  # `list` is a method here
        """Only the objects' metadata (PartialObjectMetadata): a list of CRDs without their schemas; of a kind in
        `watched_metadata`, from its cache, without managedFields."""
        if (api_version, kind) in self._watched_metadata and not self._closed.is_set():
            informer = self._informer(api_version, kind, metadata=True)
            if informer.live:
                return informer.items()
        return self._listed(api_version, kind, metadata=True)[0]

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
        # A watched kind's cache learns of the deletion from its watch: the answer may be the object as it was (a pod
        # deleted at once) or still there (a grace period, a finalizer), which only the watch tells apart.

    def token(self, namespace: str, service_account: str, *, seconds: int = 86400) -> str:
        """A bound token of a ServiceAccount (TokenRequest), as the kubelet projects into its pods."""
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": seconds},
        }
        path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token"
        return self.post(path, body)["status"]["token"]


def _equality_selector(selector: str | None) -> dict[str, str] | None:
    """`key=value,...` (or `==`) as a mapping; {} for no selector; None for any other form (`!=`, `in`, `!key`, a bare
    key, a key twice), which the server evaluates."""
    if not selector:
        return {}
    labels = {}
    for term in selector.split(","):
        key, op, value = term.partition("==") if "==" in term else term.partition("=")
        if not op or not key.strip() or key.strip().endswith("!") or any(c in value for c in "=!()"):
            return None
        if key.strip() in labels:  # `a=1,a=2`: terms the server ANDs
            return None
        labels[key.strip()] = value.strip()
    return labels


def _key(obj: dict[str, Any]) -> tuple[str | None, str]:
    return obj["metadata"].get("namespace"), obj["metadata"]["name"]


def _partial(obj: dict[str, Any]) -> dict[str, Any]:
    """An object as a metadata cache keeps it: its PartialObjectMetadata, without managedFields (for a CRD server-side
    applied, they map every field of its schema: the bulk of its metadata)."""
    metadata = {k: v for k, v in obj["metadata"].items() if k != "managedFields"}
    return {"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": metadata}


def _version(obj: dict[str, Any]) -> int | None:
    """An object's resourceVersion as the etcd revision it is (kube-apiserver's are), None when it is not a number."""
    version = obj["metadata"].get("resourceVersion", "")
    return int(version) if version.isdigit() else None


class Informer:
    """One kind's objects in a cluster, kept current as client-go's reflector keeps an informer's store: listed once,
    then watched from the list's resourceVersion (bookmarks on); a watch the server ends is resumed from the last
    version seen; an ERROR event (410 Expired: the version is compacted away), a broken connection or anything else
    that goes wrong is followed, a second later, by a fresh list. Until that list succeeds the cache is not live and
    `Kube.list` asks the server, as it does once the client is closed. The client's own creates, applies and status
    patches are taken in from their answers. A `metadata` one lists and watches the objects' PartialObjectMetadata,
    as client-go's metadata informers do, and keeps it without managedFields."""

    def __init__(self, kube: Kube, api_version: str, kind: str, *, metadata: bool = False):
        self.kube, self.api_version, self.kind, self.metadata = kube, api_version, kind, metadata
        self._lock = threading.Lock()
        self._objects: dict[tuple[str | None, str], dict[str, Any]] = {}
        # The last version the list or the watch reached: an object not cached was absent (or deleted) then.
        self._seen = 0
        self.live = False
        self._session = kube._session(pool=1)
        self._thread = threading.Thread(target=self._run, name=f"watch-{kind}", daemon=True)

    def start(self) -> None:
        """The first list, then the watch (in a thread of its own)."""
        self._version = self._relist()
        self._thread.start()

    def items(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._objects.values())

    def take(self, obj: dict[str, Any]) -> None:
        """A version of an object, unless the cache holds a later one: an object cached at a later version, or one
        absent at a version the list or watch has passed (deleted since: an answer that comes after the watch's
        DELETED event must not bring it back)."""
        with self._lock:
            self._take(obj)

    def _take(self, obj: dict[str, Any]) -> None:
        key, version = _key(obj), _version(obj)
        cached = self._objects.get(key)
        if version is not None:
            if cached is not None and (_version(cached) or 0) > version:
                return
            if cached is None and version <= self._seen:
                return
        self._objects[key] = obj

    def _relist(self) -> str:
        items, version = self.kube._listed(self.api_version, self.kind, metadata=self.metadata)
        if not version.isdigit():
            raise ValueError(f"a list of {self.kind} whose resourceVersion {version!r} is no version to watch from")
        listed = {_key(o): _partial(o) if self.metadata else o for o in items}
        with self._lock:
            # A write answered while the list was on its way is later than it: kept, until the watch passes it.
            for key, cached in self._objects.items():
                later = _version(cached) or 0
                listed_version = (_version(listed[key]) or 0) if key in listed else 0
                if later > int(version) and later > listed_version:
                    listed[key] = cached
            self._objects = listed
            self._seen = int(version)
            self.live = True
        return version

    def _run(self) -> None:
        version: str | None = self._version
        while not self.kube._closed.is_set():
            try:
                if version:
                    started, since = time.monotonic(), version
                    version = self._watch(version)
                    if version == since and time.monotonic() - started < SHORT_WATCH_SECONDS:
                        version = None  # ended at once with nothing: an error to client-go, listed again
                else:
                    version = self._relist()
            except Exception as exc:  # a background loop outlives one bad round
                if not isinstance(exc, requests.RequestException | ApiError):
                    background_error(f"watch of {self.kind}", exc)
                version = None
            if version is None:
                self.live = False  # the server's answers, until the next list
                if self.kube._closed.wait(RELIST_SECONDS):
                    return

    def _watch(self, version: str) -> str | None:
        """One watch request from `version`: the version to resume from when the server ends it, None to list
        afresh."""
        params = {
            "watch": "true",
            "resourceVersion": version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(WATCH_SECONDS),
        }
        url = self.kube.server + self.kube.collection(self.api_version, self.kind)
        headers = {"Accept": METADATA_WATCH} if self.metadata else {}
        with self._session.get(
            url, params=params, headers=headers, stream=True, timeout=(10, READ_SECONDS)
        ) as response:
            Kube._raise(response)
            # urllib3 reads no further than the HTTP chunk at hand: a large read size never waits for a later event.
            for line in response.iter_lines(chunk_size=65536):
                if self.kube._closed.is_set():
                    return None
                if not line:
                    continue
                event = json.loads(line)
                kind, obj = event["type"], event["object"]
                if kind == "ERROR":
                    return None
                version = obj["metadata"]["resourceVersion"]
                with self._lock:
                    if kind in ("ADDED", "MODIFIED"):
                        self._take(_partial(obj) if self.metadata else obj)
                    elif kind == "DELETED":  # the object as it was, at the version that deleted it
                        cached = self._objects.get(_key(obj))
                        if cached is not None and (_version(cached) or 0) <= (_version(obj) or 0):
                            del self._objects[_key(obj)]
                    if version.isdigit():
                        self._seen = max(self._seen, int(version))
        return version
