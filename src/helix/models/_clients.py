"""Provider clients behind the :class:`Model` protocol: OpenAI-compatible and Anthropic.

Both wrap the official async SDKs on their aiohttp transport with the SDK's own retries switched
off (our :func:`run_with_retry` is the one policy). Every request carries the pinned model id and
the spec's temperature (0).

Requests go through the SDK client's documented low-level ``client.post(path, body=...,
cast_to=httpx2.Response)`` (the SDKs' path for custom requests) rather than
``chat.completions.create``: the SDK still does auth, headers, timeouts and error mapping, but we
skip ``create``'s generic parameter transform (it walks every message through typing introspection:
~3 ms of CPU per judge prompt), its generic JSON encoder (we send orjson bytes) and its pydantic
response construction (~0.5 ms), and read the few fields we need from the JSON ourselves. Measured in ``benchmarks/bench_judge_run.py``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

import orjson

from .._exceptions import ModelError
from ._pricing import cost_usd
from ._protocol import ChatMessage, Completion, ModelSpec, TokenUsage
from ._retry import Failure, RetryPolicy, Sleep, is_retryable_status, parse_retry_after, run_with_retry

__all__ = ["AnthropicModel", "OpenAIModel"]

ANTHROPIC_DEFAULT_MAX_TOKENS = 4096
"""Anthropic requires ``max_tokens``; enough for a critique per criterion of a large matrix."""


def _classify_sdk_error(exc: Exception, sdk: Any) -> Failure | None:
    """Map an ``openai``/``anthropic`` exception (their hierarchies mirror each other)."""
    if isinstance(exc, sdk.APIStatusError):
        status = int(exc.status_code)
        headers = dict(exc.response.headers) if exc.response is not None else {}
        try:
            body = exc.response.text if exc.response is not None else ""
        except Exception:  # the body of a streamed response may be unread
            body = ""
        return Failure(
            retryable=is_retryable_status(status),
            message=str(getattr(exc, "message", exc)),
            status_code=status,
            body=body,
            retry_after=parse_retry_after(headers),
        )
    if isinstance(exc, sdk.APITimeoutError):
        return Failure(retryable=True, message="request timed out")
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc
        return Failure(retryable=True, message=f"connection failed: {type(cause).__name__}: {cause}")
    return None


class _BaseModel:
    _sdk: Any
    _path: str
    _request_id_header: str

    def __init__(
        self,
        spec: ModelSpec,
        *,
        client: Any,
        policy: RetryPolicy,
        sleep: Sleep,
        rng: random.Random,
    ) -> None:
        import httpx2  # the HTTP library under both SDKs

        self._spec = spec
        self._client = client
        self._policy = policy
        self._sleep = sleep
        self._rng = rng
        self._raw = httpx2.Response

    @property
    def spec(self) -> ModelSpec:
        return self._spec

    async def aclose(self) -> None:
        await self._client.close()

    def _classify(self, exc: Exception) -> Failure | None:
        return _classify_sdk_error(exc, self._sdk)

    def _body(self, messages: Sequence[ChatMessage], max_tokens: int | None) -> dict[str, Any]:
        raise NotImplementedError

    def _read(self, data: dict[str, Any]) -> tuple[str, str | None, TokenUsage]:
        """(text, served model, usage) from a successful response body."""
        raise NotImplementedError

    async def complete(self, messages: Sequence[ChatMessage], *, max_tokens: int | None = None) -> Completion:
        # Pre-encoded bytes: the SDK sends them as is (no deep copy, no slow generic JSON encoder).
        body = orjson.dumps(self._body(messages, max_tokens))
        latency = 0.0

        async def attempt() -> Any:
            nonlocal latency
            t0 = time.perf_counter()
            response = await self._client.post(self._path, content=body, cast_to=self._raw)
            latency = time.perf_counter() - t0
            return response

        response, attempts = await run_with_retry(
            attempt,
            classify=self._classify,
            policy=self._policy,
            sleep=self._sleep,
            rng=self._rng,
            model=self._spec.ref,
        )
        try:
            data = orjson.loads(response.content)
            text, served, usage = self._read(data)
        except (orjson.JSONDecodeError, TypeError, KeyError, IndexError, AttributeError, ValueError) as exc:
            preview = response.content[:200]
            raise ModelError(
                f"the server answered 200 with a body that is not a {self._path} response "
                f"({type(exc).__name__}: {exc}; body begins {preview!r}); check base_url points at the "
                "right API",
                model=self._spec.ref,
                attempts=attempts,
            ) from exc
        return Completion(
            text=text,
            served_model=served,
            usage=usage,
            cost_usd=cost_usd(served or self._spec.model, usage),
            latency_s=latency,
            attempts=attempts,
            request_id=response.headers.get(self._request_id_header),
        )


class OpenAIModel(_BaseModel):
    """Chat completions on OpenAI or any OpenAI-compatible server (vLLM, Ollama, llama.cpp...).

    Sends ``max_completion_tokens`` to api.openai.com and ``max_tokens`` to custom servers (which
    mostly know only the older name).
    """

    _path = "/chat/completions"
    _request_id_header = "x-request-id"

    def __init__(self, spec: ModelSpec, *, api_key: str, timeout_s: float, **kw: Any) -> None:
        import openai

        self._sdk = openai
        client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=spec.base_url,
            max_retries=0,
            timeout=timeout_s,
            http_client=openai.DefaultAioHttpClient(timeout=timeout_s),
        )
        super().__init__(spec, client=client, **kw)

    def _body(self, messages: Sequence[ChatMessage], max_tokens: int | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._spec.model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "temperature": self._spec.temperature,
        }
        if max_tokens is not None:
            body["max_tokens" if self._spec.base_url else "max_completion_tokens"] = max_tokens
        return body

    def _read(self, data: dict[str, Any]) -> tuple[str, str | None, TokenUsage]:
        choices = data["choices"]
        text = (choices[0]["message"].get("content") or "") if choices else ""
        u = data.get("usage") or {}
        usage = TokenUsage(
            input_tokens=int(u.get("prompt_tokens") or 0), output_tokens=int(u.get("completion_tokens") or 0)
        )
        return str(text), data.get("model") or None, usage


ANTHROPIC_API_VERSION = "2023-06-01"
"""Pinned ``anthropic-version``. API version 2026-10-21 (the default of SDK 2.x) rejects every
sampling parameter, temperature included, which would break the temperature-0 judging contract; so
we pin the older version and send ``temperature`` in the body. Models that refuse a
temperature under any version (e.g. Opus 4.7+) answer 400 and cannot be used as pinned judges."""


class AnthropicModel(_BaseModel):
    """Anthropic Messages API. System messages are sent in the ``system`` field."""

    _path = "/v1/messages"
    _request_id_header = "request-id"

    def __init__(self, spec: ModelSpec, *, api_key: str, timeout_s: float, **kw: Any) -> None:
        import anthropic

        self._sdk = anthropic
        http_client = None
        aio = getattr(anthropic, "DefaultAioHttpClient", None)
        if aio is not None:
            try:
                http_client = aio(timeout=timeout_s)
            except RuntimeError:  # the aiohttp extra is not installed: use the default transport
                http_client = None
        client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=spec.base_url,
            max_retries=0,
            timeout=timeout_s,
            http_client=http_client,
            default_headers={"anthropic-version": ANTHROPIC_API_VERSION},
        )
        super().__init__(spec, client=client, **kw)

    def _body(self, messages: Sequence[ChatMessage], max_tokens: int | None) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        body: dict[str, Any] = {
            "model": self._spec.model,
            "messages": [
                {"role": m["role"], "content": m["content"]} for m in messages if m["role"] != "system"
            ],
            "max_tokens": max_tokens or ANTHROPIC_DEFAULT_MAX_TOKENS,
            "temperature": self._spec.temperature,
        }
        if system:
            body["system"] = system
        return body

    def _read(self, data: dict[str, Any]) -> tuple[str, str | None, TokenUsage]:
        blocks = data.get("content") or []
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        u = data.get("usage") or {}
        usage = TokenUsage(
            input_tokens=int(u.get("input_tokens") or 0), output_tokens=int(u.get("output_tokens") or 0)
        )
        return text, data.get("model") or None, usage
