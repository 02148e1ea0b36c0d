"""A scripted LLM server on 127.0.0.1 that speaks the OpenAI and Anthropic HTTP APIs.

Tests and benchmarks talk to it over real HTTP through the official clients, so what they exercise
is the code users run. Replies come from a queue of scripted answers, then from a responder
callable; each may be text, an HTTP error status (with ``Retry-After``), a dropped connection or a
delay. Every request body is recorded.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

import orjson
from aiohttp import web

from ._protocol import ModelSpec

__all__ = ["RecordedRequest", "Responder", "ScriptedLLMServer", "ScriptedReply"]

Api = Literal["openai", "anthropic"]


@dataclass(frozen=True, kw_only=True)
class ScriptedReply:
    """One scripted answer.

    ``text`` is the model's reply when ``status`` is 200. Any other status answers with an error
    body in the provider's shape (and ``Retry-After: retry_after`` when given). ``drop`` closes the
    connection without answering. ``delay_s`` waits before answering (added to the server's
    ``latency_s``). ``served_model`` overrides the model id echoed back. ``raw_body`` replaces the
    whole body.
    """

    text: str = ""
    status: int = 200
    retry_after: float | str | None = None
    drop: bool = False
    delay_s: float = 0.0
    served_model: str | None = None
    raw_body: bytes | None = None
    """Send these bytes as the body instead of a well-formed reply (to test broken servers)."""


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    """A request the server received: which API, the path and the parsed JSON body."""

    api: Api
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    """Request headers, names lower-cased."""

    @property
    def prompt_text(self) -> str:
        """All message contents (and an Anthropic ``system``) joined, for matching in responders."""
        parts = [str(self.body.get("system", ""))] if self.body.get("system") else []
        for m in self.body.get("messages", []):
            content = m.get("content", "")
            if isinstance(content, list):
                content = "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
            parts.append(str(content))
        return "\n".join(parts)


Responder = Callable[[RecordedRequest], "ScriptedReply | str | Awaitable[ScriptedReply | str]"]


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ScriptedLLMServer:
    """An aiohttp server on 127.0.0.1 (a free port) with ``/v1/chat/completions`` and ``/v1/messages``.

    Use ``async with ScriptedLLMServer(...) as srv`` in async code, or
    ``with ScriptedLLMServer.running_in_thread(...) as srv`` from sync code. ``srv.base_url`` is the
    OpenAI-style base (``.../v1``); ``srv.anthropic_base_url`` is the root the Anthropic SDK wants.
    ``record=False`` stops keeping request bodies (for long benchmarks). ``reuse_port=True`` with a
    fixed ``port`` lets several server processes share one port (the kernel spreads connections).
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        script: Iterable[ScriptedReply | str] = (),
        latency_s: float = 0.0,
        record: bool = True,
        port: int = 0,
        reuse_port: bool = False,
    ) -> None:
        self._responder = responder
        self._script: deque[ScriptedReply | str] = deque(script)
        self.latency_s = latency_s
        self._record = record
        self._port = port
        self._reuse_port = reuse_port
        self.requests: list[RecordedRequest] = []
        self.request_count = 0
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None

    # ----------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        app.router.add_post("/v1/messages", self._messages)
        # In-flight scripted delays are not worth waiting for at shutdown.
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(
            self._runner, "127.0.0.1", self._port, backlog=4096, reuse_port=self._reuse_port or None
        )
        await site.start()
        self._port = int(self._runner.addresses[0][1])  # the free port the OS gave us

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> ScriptedLLMServer:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    @classmethod
    @contextmanager
    def running_in_thread(
        cls, responder: Responder | None = None, **kwargs: Any
    ) -> Iterator[ScriptedLLMServer]:
        """Run the server on its own event loop in a daemon thread for the duration of the block."""
        server = cls(responder, **kwargs)
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(server.start())
            except BaseException as exc:  # surfaced to the caller below
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(server.stop())
            loop.close()

        thread = threading.Thread(target=run, name="ScriptedLLMServer", daemon=True)
        thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        try:
            yield server
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)

    # ----------------------------------------------------------------- addresses

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        """OpenAI-compatible base URL (``http://127.0.0.1:<port>/v1``)."""
        return f"http://127.0.0.1:{self._port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for the Anthropic SDK (it appends ``/v1/messages`` itself)."""
        return f"http://127.0.0.1:{self._port}"

    def spec(self, ref: str) -> ModelSpec:
        """A :class:`ModelSpec` for ``provider/model`` pointed at this server."""
        provider, _, model = ref.partition("/")
        if provider == "anthropic":
            return ModelSpec(provider="anthropic", model=model, base_url=self.anthropic_base_url)
        return ModelSpec(provider="openai", model=model, base_url=self.base_url)

    def push(self, *replies: ScriptedReply | str) -> None:
        """Append scripted answers to the queue (used before the responder)."""
        self._script.extend(replies)

    # ----------------------------------------------------------------- handlers

    async def _next_reply(self, req: RecordedRequest) -> ScriptedReply:
        if self._script:
            reply: ScriptedReply | str = self._script.popleft()
        elif self._responder is not None:
            produced = self._responder(req)
            reply = await produced if inspect.isawaitable(produced) else produced
        else:
            reply = ScriptedReply(status=500, text="ScriptedLLMServer: script exhausted and no responder")
        return ScriptedReply(text=reply) if isinstance(reply, str) else reply

    async def _serve(self, request: web.Request, api: Api) -> web.StreamResponse:
        body = orjson.loads(await request.read())
        headers = {k.lower(): v for k, v in request.headers.items()} if self._record else {}
        recorded = RecordedRequest(api=api, path=request.path, body=body, headers=headers)
        self.request_count += 1
        if self._record:
            self.requests.append(recorded)
        reply = await self._next_reply(recorded)
        wait = self.latency_s + reply.delay_s
        if wait > 0:
            await asyncio.sleep(wait)
        if reply.drop:
            if request.transport is not None:
                request.transport.close()
            raise asyncio.CancelledError  # aiohttp stops handling a request whose peer is gone
        if reply.raw_body is not None:
            return web.Response(status=reply.status, body=reply.raw_body, content_type="application/json")
        if reply.status != 200:
            return self._error(reply, api)
        model = reply.served_model or str(body.get("model", ""))
        payload = (
            self._openai_body(recorded, reply.text, model)
            if api == "openai"
            else self._anthropic_body(recorded, reply.text, model)
        )
        request_id = str(payload["id"])
        return web.Response(
            body=orjson.dumps(payload),
            content_type="application/json",
            headers={"x-request-id": request_id, "request-id": request_id},
        )

    async def _chat_completions(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, "openai")

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, "anthropic")

    def _error(self, reply: ScriptedReply, api: Api) -> web.Response:
        message = reply.text or f"scripted HTTP {reply.status}"
        if api == "openai":
            payload: dict[str, Any] = {
                "error": {"message": message, "type": "scripted", "code": reply.status}
            }
        else:
            payload = {"type": "error", "error": {"type": "scripted_error", "message": message}}
        headers = {"Retry-After": str(reply.retry_after)} if reply.retry_after is not None else {}
        return web.Response(
            status=reply.status, body=orjson.dumps(payload), content_type="application/json", headers=headers
        )

    def _openai_body(self, req: RecordedRequest, text: str, model: str) -> dict[str, Any]:
        n = next(self._ids)
        prompt_tokens, completion_tokens = _approx_tokens(req.prompt_text), _approx_tokens(text)
        return {
            "id": f"chatcmpl-scripted-{n}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _anthropic_body(self, req: RecordedRequest, text: str, model: str) -> dict[str, Any]:
        n = next(self._ids)
        return {
            "id": f"msg_scripted_{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": _approx_tokens(req.prompt_text),
                "output_tokens": _approx_tokens(text),
            },
        }
