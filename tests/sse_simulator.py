"""An OpenAI-compatible chat endpoint for the SLO gate's tests: an asyncio server on 127.0.0.1 (HTTP/1.1 keep-alive,
chunked server-sent events), with the latencies, answers and failures a test sets, and a record of what it received.

It streams as vLLM's OpenAI server does: a role-only chunk first (no token), then one chunk per `tokens_per_chunk`
tokens (several with speculative decoding), a usage chunk when `stream_options.include_usage`, then `data: [DONE]`.
The first content chunk leaves `ttft` seconds after the request arrived, each later one `itl` seconds after the last.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

Failure = Literal["status", "break", "error-event"] | None


@dataclass
class Received:
    authorization: str
    body: dict


@dataclass
class SseSimulator:
    ttft: float
    itl: float
    api_key: str = "sim-key"
    tokens: Callable[[int], int] = lambda max_tokens: max_tokens  # answer length for a request's max_tokens
    tokens_per_chunk: int = 1
    usage: bool = True  # answer include_usage with a usage chunk
    fail: Callable[[int], Failure] = lambda index: None  # the n-th request (0-based): how it fails, if it does
    # Seconds the n-th request waits before its response headers, as behind a gateway's queue.
    queued: Callable[[int], float] = lambda index: 0.0
    tls: ssl.SSLContext | None = None
    # Close each connection after its answer without saying so (no `Connection: close`), as a server whose idle
    # timeout fires between two requests of a kept-alive connection.
    drop_idle: bool = False
    received: list[Received] = field(default_factory=list)

    def __enter__(self) -> SseSimulator:
        self._loop = asyncio.new_event_loop()
        started = threading.Event()

        async def serve() -> None:
            self._server = await asyncio.start_server(self._client, "127.0.0.1", 0, ssl=self.tls)
            self.port = self._server.sockets[0].getsockname()[1]
            started.set()

        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(serve(), self._loop).result(timeout=10)
        started.wait(10)
        return self

    def __exit__(self, *_: object) -> None:
        async def stop() -> None:
            self._server.close()
            for task in [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]:
                task.cancel()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/v1"

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection is done."""
        request_line = await reader.readline()
        if not request_line:
            return False
        headers = {}
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        body = json.loads(await reader.readexactly(int(headers.get("content-length", "0"))) or b"{}")
        index = len(self.received)
        self.received.append(Received(headers.get("authorization", ""), body))
        if headers.get("authorization") != f"Bearer {self.api_key}":
            return await self._status(writer, 401, "invalid_api_key")
        await asyncio.sleep(self.queued(index))
        failure = self.fail(index)
        if failure == "status":
            return await self._status(writer, 503, "server_error")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        await self._event(writer, {"choices": [{"index": 0, "delta": {"role": "assistant"}}]})
        tokens = self.tokens(int(body["max_tokens"]))
        chunks = -(-tokens // self.tokens_per_chunk)
        await asyncio.sleep(self.ttft)
        for i in range(chunks):
            if i:
                await asyncio.sleep(self.itl)
            if failure == "break" and i == chunks // 2:
                writer.close()  # the stream stops mid-answer, as when a model server dies
                return False
            if failure == "error-event" and i == chunks // 2:
                await self._event(writer, {"error": {"type": "internal_error", "message": "engine died"}})
                break
            await self._event(writer, {"choices": [{"index": 0, "delta": {"content": "tok " * self.tokens_per_chunk}}]})
        if self.usage and body.get("stream_options", {}).get("include_usage"):
            await self._event(writer, {"choices": [], "usage": {"completion_tokens": tokens}})
        await self._data(writer, b"data: [DONE]\n\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return not self.drop_idle

    async def _event(self, writer: asyncio.StreamWriter, event: dict) -> None:
        await self._data(writer, b"data: " + json.dumps(event).encode() + b"\n\n")

    @staticmethod
    async def _data(writer: asyncio.StreamWriter, data: bytes) -> None:
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        await writer.drain()

    @staticmethod
    async def _status(writer: asyncio.StreamWriter, status: int, kind: str) -> bool:
        body = json.dumps({"error": {"type": kind, "message": f"simulated {status}"}}).encode()
        writer.write(
            f"HTTP/1.1 {status} Simulated\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        return True
