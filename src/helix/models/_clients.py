"""Provider clients behind the :class:`Model` protocol: OpenAI-compatible and Anthropic.

Each call is one pre-encoded JSON body (orjson) POSTed on the client's own aiohttp session
(``_http.py``) with the auth headers fixed at open time; the answer is read from the raw JSON. This
replaces the SDKs' request building, which cost more CPU per judge call than everything else on the
path together (``benchmarks/bench_judge_run.py``). The wire format is the providers' documented one;
what the SDKs would add (auth, timeouts, error mapping, request ids) is here:

* auth: ``Authorization: Bearer`` (OpenAI) or ``x-api-key`` with a pinned ``anthropic-version``;
* timeouts: one total timeout per attempt;
* errors: every failure becomes a :class:`~helix.models._retry.Failure` with its kind; the one retry
  policy (:class:`RetryPolicy`) retries the transient ones and raises :class:`ModelError` /
  :class:`ModelHTTPError` (with ``kind``, ``attempts``, status and body) when it gives up;
* request ids: ``x-request-id`` (OpenAI) and ``request-id`` (Anthropic) land in the completion.

Every request carries the pinned model id and the spec's temperature (0). Each attempt takes a slot
of the caller's limiter and reports its outcome to it (AIMD on 429/503/529, ``_limiter.py``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

import orjson

from ._http import HttpSession, RawResponse, transport_failure
from ._limiter import Limiter, is_overload_status
from ._pricing import cost_usd
from ._protocol import AttemptHook, ChatMessage, Completion, ModelSpec, TokenUsage
from ._retry import Failure, RetryPolicy, Sleep, give_up, status_failure

__all__ = ["ANTHROPIC_API_VERSION", "AnthropicModel", "OpenAIModel"]

ANTHROPIC_DEFAULT_MAX_TOKENS = 4096
"""Anthropic requires ``max_tokens``; enough for a critique per criterion of a large matrix."""

ANTHROPIC_API_VERSION = "2023-06-01"
"""Pinned ``anthropic-version``. API version 2026-10-21 (the default of SDK 2.x) rejects every
sampling parameter, temperature included, which would break the temperature-0 judging contract; so
we pin the older version and send ``temperature`` in the body. Models that refuse a
temperature under any version (e.g. Opus 4.7+) answer 400 and cannot be used as pinned judges."""

_READ_ERRORS = (orjson.JSONDecodeError, TypeError, KeyError, IndexError, AttributeError, ValueError)


def _user_agent() -> str:
    from .. import __version__

    return f"helix-evals/{__version__}"


class _HttpModel:
    """The retry loop and response handling shared by both providers."""

    _path: str
    _request_id_header: str

    def __init__(
        self,
        spec: ModelSpec,
        *,
        url: str,
        headers: dict[str, str],
        timeout_s: float,
        policy: RetryPolicy,
        sleep: Sleep,
        rng: random.Random,
    ) -> None:
        self._spec = spec
        self._url = url
        self._http = HttpSession(
            headers={"content-type": "application/json", "user-agent": _user_agent(), **headers},
            timeout_s=timeout_s,
        )
        self._policy = policy
        self._sleep = sleep
        self._rng = rng

    @property
    def spec(self) -> ModelSpec:
        return self._spec

    async def aclose(self) -> None:
        await self._http.aclose()

    def request_body(
        self, messages: Sequence[ChatMessage], *, max_tokens: int | None = None
    ) -> dict[str, Any]:
        """The JSON body of one call (also what a batch request line carries)."""
        raise NotImplementedError

    def read_answer(self, data: Any) -> tuple[str, str | None, TokenUsage]:
        """(text, served model, usage) from a successful response body; raises on a foreign shape."""
        raise NotImplementedError

    def _completion(self, resp: RawResponse, latency: float, attempts: int) -> Completion:
        text, served, usage = self.read_answer(orjson.loads(resp.body))
        return Completion(
            text=text,
            served_model=served,
            usage=usage,
            cost_usd=cost_usd(served or self._spec.model, usage),
            latency_s=latency,
            attempts=attempts,
            request_id=resp.headers.get(self._request_id_header),
        )

    def _bad_response(self, resp: RawResponse, exc: Exception) -> Failure:
        preview = resp.body[:200]
        return Failure(
            kind="bad_response",
            retryable=True,
            message=(
                f"the server answered 200 with a body that is not a {self._path} response "
                f"({type(exc).__name__}: {exc}; body begins {preview!r})"
            ),
            body=resp.body[:2000].decode("utf-8", "replace"),
        )

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        limiter: Limiter | None = None,
        on_attempt: AttemptHook | None = None,
    ) -> Completion:
        body = orjson.dumps(self.request_body(messages, max_tokens=max_tokens))
        policy = self._policy
        attempts = 0
        while True:
            attempts += 1
            ticket = await limiter.acquire() if limiter is not None else 0
            if on_attempt is not None:
                on_attempt(attempts)
            t0 = time.perf_counter()
            cause: BaseException | None = None
            try:
                resp = await self._http.post(self._url, body)
            except Exception as exc:
                cause = exc
                failure = transport_failure(exc, self._url)
                if failure is None:
                    if limiter is not None:
                        limiter.release(ticket, "other")
                    raise
            else:
                latency = time.perf_counter() - t0
                if resp.status == 200:
                    try:
                        completion = self._completion(resp, latency, attempts)
                    except _READ_ERRORS as exc:
                        cause = exc
                        failure = self._bad_response(resp, exc)
                    else:
                        if limiter is not None:
                            limiter.release(ticket, "ok", rtt=latency)
                        return completion
                else:
                    failure = status_failure(resp.status, resp.headers, resp.body)
            overload = failure.status_code is not None and is_overload_status(failure.status_code)
            if limiter is not None:
                limiter.release(ticket, "overload" if overload else "other", retry_after=failure.retry_after)
            if not failure.retryable or attempts > policy.max_retries:
                raise give_up(failure, model=self._spec.ref, attempts=attempts) from cause
            # Under a limiter, the limiter paces the provider: an overloaded attempt waits only the
            # first backoff step (and Retry-After), not a growing one that idles the unit for long.
            step = 1 if (overload and limiter is not None) else attempts
            await self._sleep(policy.delay(step, self._rng, failure.retry_after))


def _openai_usage(u: dict[str, Any]) -> TokenUsage:
    details = u.get("prompt_tokens_details") or {}
    return TokenUsage(
        input_tokens=int(u.get("prompt_tokens") or 0),
        output_tokens=int(u.get("completion_tokens") or 0),
        cached_input_tokens=int(details.get("cached_tokens") or 0),
    )


class OpenAIModel(_HttpModel):
    """Chat completions on OpenAI or any OpenAI-compatible server (vLLM, Ollama, llama.cpp...).

    Sends ``max_completion_tokens`` to api.openai.com and ``max_tokens`` to custom servers (which
    mostly know only the older name). OpenAI caches long shared prompt prefixes by itself; the
    cached part is reported as ``usage.cached_input_tokens``.
    """

    _path = "/chat/completions"
    _request_id_header = "x-request-id"

    def __init__(self, spec: ModelSpec, *, api_key: str, timeout_s: float, **kw: Any) -> None:
        base = (spec.base_url or "https://api.openai.com/v1").rstrip("/")
        super().__init__(
            spec,
            url=base + self._path,
            headers={"authorization": f"Bearer {api_key}"},
            timeout_s=timeout_s,
            **kw,
        )

    def request_body(
        self, messages: Sequence[ChatMessage], *, max_tokens: int | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._spec.model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "temperature": self._spec.temperature,
        }
        if max_tokens is not None:
            body["max_tokens" if self._spec.base_url else "max_completion_tokens"] = max_tokens
        return body

    def read_answer(self, data: Any) -> tuple[str, str | None, TokenUsage]:
        choices = data["choices"]
        text = (choices[0]["message"].get("content") or "") if choices else ""
        return str(text), data.get("model") or None, _openai_usage(data.get("usage") or {})


def _anthropic_content(message: ChatMessage) -> str | list[dict[str, Any]]:
    cut = message.get("cache_prefix", 0)
    content = message["content"]
    if cut <= 0:
        return content
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": content[:cut], "cache_control": {"type": "ephemeral"}}
    ]
    if cut < len(content):
        blocks.append({"type": "text", "text": content[cut:]})
    return blocks


def anthropic_usage(u: dict[str, Any]) -> TokenUsage:
    """Anthropic's usage block in Helix's terms (``input_tokens`` there excludes the cached parts)."""
    read = int(u.get("cache_read_input_tokens") or 0)
    written = int(u.get("cache_creation_input_tokens") or 0)
    return TokenUsage(
        input_tokens=int(u.get("input_tokens") or 0) + read + written,
        output_tokens=int(u.get("output_tokens") or 0),
        cached_input_tokens=read,
        cache_write_tokens=written,
    )


class AnthropicModel(_HttpModel):
    """Anthropic Messages API. System messages go in the ``system`` field; a message's cacheable
    prefix (``cache_prefix``) is sent as its own text block marked ``cache_control``."""

    _path = "/v1/messages"
    _request_id_header = "request-id"

    def __init__(self, spec: ModelSpec, *, api_key: str, timeout_s: float, **kw: Any) -> None:
        base = (spec.base_url or "https://api.anthropic.com").rstrip("/")
        super().__init__(
            spec,
            url=base + self._path,
            headers={"x-api-key": api_key, "anthropic-version": ANTHROPIC_API_VERSION},
            timeout_s=timeout_s,
            **kw,
        )

    def request_body(
        self, messages: Sequence[ChatMessage], *, max_tokens: int | None = None
    ) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        body: dict[str, Any] = {
            "model": self._spec.model,
            "messages": [
                {"role": m["role"], "content": _anthropic_content(m)}
                for m in messages
                if m["role"] != "system"
            ],
            "max_tokens": max_tokens or ANTHROPIC_DEFAULT_MAX_TOKENS,
            "temperature": self._spec.temperature,
        }
        if system:
            body["system"] = system
        return body

    def read_answer(self, data: Any) -> tuple[str, str | None, TokenUsage]:
        if data.get("type") == "error" or "content" not in data:
            raise ValueError("no 'content' in the answer")
        blocks = data.get("content") or []
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        return text, data.get("model") or None, anthropic_usage(data.get("usage") or {})


ModelClient = OpenAIModel | AnthropicModel
