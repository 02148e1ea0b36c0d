"""A scripted LLM server on 127.0.0.1 that speaks the OpenAI and Anthropic HTTP APIs.

Tests and benchmarks talk to it over real HTTP, so what they exercise is the code users run.
Replies come from a queue of scripted answers, then from a responder callable; each may be text, an
HTTP error status (with ``Retry-After``), a dropped connection or a delay. Every request body is
recorded. Two provider behaviours can be switched on:

* ``rate_limit``: a token bucket of ``rate`` requests per second (``burst`` deep, full at start);
  a request that finds it empty is answered 429 at once with ``Retry-After`` and ``retry-after-ms``
  saying when the next token arrives, as the providers do;
* ``prompt_cache``: usage reports cached prompt tokens the way each provider does. Anthropic: the
  prompt up to a block marked ``cache_control`` is read from the cache when an earlier request
  wrote the same prefix (``cache_read_input_tokens``), else written (``cache_creation_input_tokens``).
  OpenAI: prompts of 1,024 tokens or more are cached automatically in 128-token steps
  (``prompt_tokens_details.cached_tokens``). Tokens are counted as four characters each.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import itertools
import threading
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

import orjson
from aiohttp import web

from ._protocol import ModelSpec

__all__ = ["RateLimit", "RecordedRequest", "Responder", "ScriptedLLMServer", "ScriptedReply"]

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
        parts = [_text(self.body["system"])] if self.body.get("system") else []
        parts += [_text(m.get("content", "")) for m in self.body.get("messages", [])]
        return "\n".join(parts)


def _text(content: Any) -> str:
    """A message content (a string, or a list of text blocks) as plain text."""
    if isinstance(content, list):
        return "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return str(content)


Responder = Callable[[RecordedRequest], "ScriptedReply | str | Awaitable[ScriptedReply | str]"]


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


@dataclass(frozen=True, kw_only=True)
class RateLimit:
    """A token bucket: ``rate`` requests per second, at most ``burst`` at once (default: one second's)."""

    rate: float
    burst: float | None = None


class _Bucket:
    def __init__(self, limit: RateLimit) -> None:
        self.rate = limit.rate
        self.capacity = max(1.0, limit.burst if limit.burst is not None else limit.rate)
        self.tokens = self.capacity
        self.at = time.monotonic()

    def take(self) -> float | None:
        """Take a token; None when granted, else the seconds until the next one."""
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return None
        return (1.0 - self.tokens) / self.rate


_OPENAI_CACHE_MIN_CHARS = 1024 * 4
_OPENAI_CACHE_STEP_CHARS = 128 * 4


class _PromptCache:
    """Which prompt prefixes an earlier request put in the (simulated) provider cache."""

    def __init__(self) -> None:
        self._seen: set[bytes] = set()

    def openai(self, text: str) -> int:
        """Cached tokens of an OpenAI prompt: the longest stored prefix, in 128-token steps."""
        if len(text) < _OPENAI_CACHE_MIN_CHARS:
            return 0
        data = text.encode()
        h = hashlib.sha256()
        cached = 0
        hit = True
        for start in range(0, len(data) - _OPENAI_CACHE_STEP_CHARS + 1, _OPENAI_CACHE_STEP_CHARS):
            h.update(data[start : start + _OPENAI_CACHE_STEP_CHARS])
            digest = h.copy().digest()
            end = start + _OPENAI_CACHE_STEP_CHARS
            if hit and digest in self._seen:
                if end >= _OPENAI_CACHE_MIN_CHARS:
                    cached = end
            else:
                hit = False
            self._seen.add(digest)
        return cached // 4

    def anthropic(self, prefix: str) -> bool:
        """Whether the prefix up to a ``cache_control`` block was stored (and store it)."""
        digest = hashlib.sha256(prefix.encode()).digest()
        hit = digest in self._seen
        self._seen.add(digest)
        return hit


class ScriptedLLMServer:
    """An aiohttp server on 127.0.0.1 (a free port) with ``/v1/chat/completions`` and ``/v1/messages``.

    Use ``async with ScriptedLLMServer(...) as srv`` in async code, or
    ``with ScriptedLLMServer.running_in_thread(...) as srv`` from sync code. ``srv.base_url`` is the
    OpenAI-style base (``.../v1``); ``srv.anthropic_base_url`` is the root the Anthropic SDK wants.
    ``record=False`` stops keeping request bodies (for long benchmarks). ``reuse_port=True`` with a
    fixed ``port`` lets several server processes share one port (the kernel spreads connections).
    ``rate_limit`` and ``prompt_cache`` switch on the provider behaviours of the module docstring.
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
        rate_limit: RateLimit | None = None,
        prompt_cache: bool = False,
    ) -> None:
        self._responder = responder
        self._script: deque[ScriptedReply | str] = deque(script)
        self.latency_s = latency_s
        self._record = record
        self._port = port
        self._reuse_port = reuse_port
        self.requests: list[RecordedRequest] = []
        self.request_count = 0
        self.statuses: Counter[int] = Counter()
        """How many requests were answered with each HTTP status (dropped ones are not counted)."""
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self._bucket = _Bucket(rate_limit) if rate_limit is not None else None
        self._cache = _PromptCache() if prompt_cache else None

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
        if self._bucket is not None:
            wait_s = self._bucket.take()
            if wait_s is not None:
                self.statuses[429] += 1
                return self._error(
                    ScriptedReply(status=429, text="rate limit reached", retry_after=round(wait_s, 3)), api
                )
        reply = await self._next_reply(recorded)
        wait = self.latency_s + reply.delay_s
        if wait > 0:
            await asyncio.sleep(wait)
        if reply.drop:
            if request.transport is not None:
                request.transport.close()
            raise asyncio.CancelledError  # aiohttp stops handling a request whose peer is gone
        self.statuses[reply.status] += 1
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
        headers: dict[str, str] = {}
        if reply.retry_after is not None:
            headers["Retry-After"] = str(reply.retry_after)
            if isinstance(reply.retry_after, int | float):
                headers["retry-after-ms"] = str(int(reply.retry_after * 1000))
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
                "prompt_tokens_details": {"cached_tokens": self._openai_cached(req, prompt_tokens)},
            },
        }

    def _openai_cached(self, req: RecordedRequest, prompt_tokens: int) -> int:
        if self._cache is None:
            return 0
        return min(prompt_tokens, self._cache.openai(req.prompt_text))

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
            "usage": {**self._anthropic_input(req), "output_tokens": _approx_tokens(text)},
        }

    def _anthropic_input(self, req: RecordedRequest) -> dict[str, int]:
        total = _approx_tokens(req.prompt_text)
        prefix = _cached_prefix(req.body) if self._cache is not None else None
        if prefix is None or self._cache is None:
            return {"input_tokens": total, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
        part = min(total, len(prefix) // 4)
        hit = self._cache.anthropic(prefix)
        return {
            "input_tokens": total - part,
            "cache_read_input_tokens": part if hit else 0,
            "cache_creation_input_tokens": 0 if hit else part,
        }


def _cached_prefix(body: dict[str, Any]) -> str | None:
    """The prompt text up to the last block marked ``cache_control`` (Anthropic), or None."""
    parts: list[str] = []
    found: int | None = None
    system = body.get("system")
    blocks: list[Any] = system if isinstance(system, list) else ([{"text": system}] if system else [])
    for message in body.get("messages", []):
        content = message.get("content", "")
        blocks.extend(content if isinstance(content, list) else [{"text": content}])
    for block in blocks:
        if not isinstance(block, dict):
            continue
        parts.append(str(block.get("text", "")))
        if block.get("cache_control"):
            found = len(parts)
    return None if found is None else "".join(parts[:found])
