"""A bounded, streaming load test of an OpenAI-compatible chat endpoint, as the rollout's SLO gate runs it.

`concurrency` workers send streamed chat completions (SSE) in turn from a request schedule until `max_requests`
were sent or `duration_seconds` passed since the first; a request in flight then may still finish within its
`request_timeout_seconds`, so a test never runs longer than duration + timeout. Each request is measured as
vLLM's own serving benchmark measures it (VLLM_BENCH_SERVE_METRICS): TTFT from sending the request to its first
output chunk, TPOT = (last output chunk - first) / (tokens - 1) with the token count the server reports in the
usage chunk (`stream_options.include_usage`; else the output chunks), p95 by linear interpolation.

Each worker keeps its connection between requests (as a client of the gateway would), and connects before its
request's clock starts, so TTFT holds no TCP or TLS handshake. The tenant key goes only into the Authorization
header: never into a result, a message or a log line; it is sent only over TLS, or in clear to a loopback address
(the tests' simulators).
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit

READ_SIZE = 65536
ERROR_BODY_LIMIT = 4096  # what is read of a refused request's body, for its error type
# Delta fields that carry generated output, as vLLM's serving benchmark counts them (VLLM_BENCH_SERVE_METRICS).
OUTPUT_FIELDS = ("content", "reasoning", "tool_calls", "function_call")


class LoadTestInputError(Exception):
    """A target the test refuses to call (an unknown scheme, a key over cleartext to another host)."""


@dataclass(frozen=True)
class LoadRequest:
    model: str
    prompt: str
    max_tokens: int

    def body(self) -> bytes:
        return json.dumps(
            {
                "model": self.model,
                "messages": [{"role": "user", "content": self.prompt}],
                "max_tokens": self.max_tokens,
                "stream": True,
                "stream_options": {"include_usage": True},
            }
        ).encode()


@dataclass(frozen=True)
class Bounds:
    concurrency: int
    duration_seconds: float
    max_requests: int
    request_timeout_seconds: float


@dataclass(frozen=True)
class Sample:
    """One request: its model, whether it succeeded, and its latencies in seconds (TPOT None below 2 tokens)."""

    model: str
    ok: bool
    ttft: float | None = None
    tpot: float | None = None
    tokens: int = 0
    error: str = ""


def weighted_schedule(models: Sequence[str], mix: Sequence[tuple[str, int, int]]) -> Callable[[int], LoadRequest]:
    """Request i: model i mod M, and the mix (prompt, max_tokens, weight) expanded by weight, in turn per model, so
    every model gets every kind of request in proportion."""
    expanded = [(prompt, max_tokens) for prompt, max_tokens, weight in mix for _ in range(weight)]
    if not models or not expanded:
        raise LoadTestInputError("a load test needs at least one model and one request")

    def request(i: int) -> LoadRequest:
        prompt, max_tokens = expanded[(i // len(models)) % len(expanded)]
        return LoadRequest(models[i % len(models)], prompt, max_tokens)

    return request


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation between the closest ranks: numpy's default method,
    which vLLM's benchmark reports (np.percentile)."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Endpoint:
    """Where the requests go: `<base_url>/chat/completions`."""

    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def of(cls, base_url: str) -> Endpoint:
        parts = urlsplit(base_url)
        host = parts.hostname or ""
        if parts.scheme not in ("https", "http") or not host:
            raise LoadTestInputError(f"{base_url}: not an http(s) URL")
        if parts.scheme == "http" and not _is_loopback(host):
            raise LoadTestInputError(
                f"{base_url}: a tenant key is sent over TLS only (plain http is for a loopback simulator)"
            )
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.scheme, host, port, parts.path.rstrip("/") + "/chat/completions")

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}{self.path}"


class _Stop(Exception):
    """The stream said the request failed (an error event, a line that is not JSON)."""


class _Stale(Exception):
    """The connection was closed before the request got an answer: no byte of the response arrived."""

    def __init__(self, cause: BaseException):
        super().__init__(str(cause))
        self.cause = cause


def run_load_test(
    base_url: str,
    api_key: str,
    schedule: Callable[[int], LoadRequest],
    bounds: Bounds,
    *,
    ca_pem: str | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[list[Sample], float]:
    """Every request's sample, in the order sent, and the seconds the test took."""
    endpoint = Endpoint.of(base_url)
    context = ssl.create_default_context(cadata=ca_pem) if ca_pem else ssl.create_default_context()
    lock = threading.Lock()
    sent: list[LoadRequest] = []
    samples: dict[int, Sample] = {}
    started = clock()
    deadline = started + bounds.duration_seconds

    def next_index() -> int | None:
        with lock:
            if len(sent) >= bounds.max_requests or clock() >= deadline:
                return None
            sent.append(schedule(len(sent)))
            return len(sent) - 1

    def worker() -> None:
        connection: http.client.HTTPConnection | None = None
        while (index := next_index()) is not None:
            request = sent[index]
            for attempt in (1, 2):
                fresh = connection is None
                try:
                    if connection is None:
                        connection = _connect(endpoint, context, bounds.request_timeout_seconds)
                    sample, reusable = _stream(connection, endpoint, api_key, request, bounds, clock)
                except _Stale as stale:
                    assert connection is not None
                    connection.close()
                    connection = None
                    if not fresh and attempt == 1:
                        continue  # the server closed the idle connection first: send it again on a new one
                    sample, reusable = Sample(request.model, False, error=_describe(stale.cause)), False
                except (OSError, http.client.HTTPException) as exc:
                    sample, reusable = Sample(request.model, False, error=_describe(exc)), False
                break
            samples[index] = sample
            if not reusable and connection is not None:
                connection.close()
                connection = None
        if connection is not None:
            connection.close()

    workers = min(bounds.concurrency, bounds.max_requests)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="slo-load") as pool:
        for future in [pool.submit(worker) for _ in range(workers)]:
            future.result()
    return [samples[i] for i in range(len(sent))], clock() - started


def _connect(endpoint: Endpoint, context: ssl.SSLContext, timeout: float) -> http.client.HTTPConnection:
    connection: http.client.HTTPConnection
    if endpoint.scheme == "https":
        connection = http.client.HTTPSConnection(endpoint.host, endpoint.port, timeout=timeout, context=context)
    else:
        connection = http.client.HTTPConnection(endpoint.host, endpoint.port, timeout=timeout)
    connection.connect()
    return connection


def _describe(exc: BaseException) -> str:
    """An error as a short reason: its type and, for a few, what they say (never a header)."""
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS: {exc.verify_message}"
    return type(exc).__name__


def _stream(
    connection: http.client.HTTPConnection,
    endpoint: Endpoint,
    api_key: str,
    request: LoadRequest,
    bounds: Bounds,
    clock: Callable[[], float],
) -> tuple[Sample, bool]:
    """One streamed request: its sample, and whether the connection may carry the next one."""
    headers = {
        "Authorization": f"Bearer {api_key}",
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
    }
    body = request.body()
    start = clock()
    end = start + bounds.request_timeout_seconds
    if connection.sock is not None:  # a kept-alive socket still has the last read's remaining time as its timeout
        connection.sock.settimeout(bounds.request_timeout_seconds)
    try:
        connection.request("POST", endpoint.path, body=body, headers=headers)
        response = connection.getresponse()
    except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
        raise _Stale(exc) from None
    if response.status != 200:
        detail = _error_type(response.read(ERROR_BODY_LIMIT))
        return Sample(request.model, False, error=f"HTTP {response.status}{detail}"), False
    first = last = None
    chunks = reported = 0
    done = False
    pending = b""
    try:
        while True:
            remaining = end - clock()
            if remaining <= 0:
                raise TimeoutError
            if connection.sock is not None:
                connection.sock.settimeout(remaining)
            data = response.read1(READ_SIZE)
            if not data:
                break
            now = clock()
            pending += data
            *lines, pending = pending.split(b"\n")
            for line in lines:
                event = _event(line)
                if event is None:
                    continue
                if isinstance(event, str):  # [DONE]
                    done = True
                    continue
                if "error" in event:
                    raise _Stop(f"error event in the stream{_error_type(json.dumps(event).encode())}")
                usage = event.get("usage")
                if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
                    reported = usage["completion_tokens"]
                if _has_token(event):
                    first = now if first is None else first
                    last = now
                    chunks += 1
    except _Stop as stop:
        return Sample(request.model, False, error=str(stop)), False
    except TimeoutError:
        return Sample(request.model, False, error=f"timed out after {bounds.request_timeout_seconds:g}s"), False
    except http.client.IncompleteRead:  # the connection closed inside a chunk, or before the last one
        done = False
    if not done:
        return Sample(request.model, False, error="the stream ended without [DONE]"), False
    if first is None or last is None:
        return Sample(request.model, False, error="no output chunk in the stream"), True
    tokens = reported or chunks
    tpot = (last - first) / (tokens - 1) if tokens > 1 else None
    return Sample(request.model, True, ttft=first - start, tpot=tpot, tokens=tokens), not response.will_close


def _event(line: bytes) -> dict | str | None:
    """An SSE `data:` line's JSON object, or "[DONE]"; None for anything else (comments, other fields)."""
    text = line.rstrip(b"\r").decode("utf-8", "replace")
    if not text.startswith("data:"):
        return None
    payload = text[5:].strip()
    if payload == "[DONE]":
        return payload
    try:
        value = json.loads(payload)
    except ValueError:
        raise _Stop("a data line that is not JSON") from None
    return value if isinstance(value, dict) else None


def _has_token(event: dict) -> bool:
    """A chunk that carries output: a field of OUTPUT_FIELDS, or an empty content without a role (a token that
    decodes to nothing); the opening role-only chunk carries none."""
    choices = event.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return False
    delta = choices[0].get("delta")
    if not isinstance(delta, dict):
        return False
    return any(delta.get(f) for f in OUTPUT_FIELDS) or (delta.get("content") == "" and "role" not in delta)


def _error_type(body: bytes) -> str:
    """`: <type or code>` of an OpenAI-style error body; the message is left out (a provider may quote the key)."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return ""
    if isinstance(error, dict):
        kind = error.get("type") or error.get("code")
        return f": {kind}" if isinstance(kind, str | int) and kind else ""
    return ""
