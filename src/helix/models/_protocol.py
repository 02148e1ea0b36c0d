"""The one seam between Helix and LLM providers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NotRequired, Protocol, TypedDict, runtime_checkable

if TYPE_CHECKING:
    from ._limiter import Limiter

__all__ = ["AttemptHook", "ChatMessage", "Completion", "FailureKind", "Model", "ModelSpec", "TokenUsage"]

Provider = Literal["openai", "anthropic"]

FailureKind = Literal[
    "connection_refused",
    "connection_failed",
    "timeout",
    "rate_limited",
    "overloaded",
    "server_error",
    "refused",
    "bad_response",
]
"""Why a provider call failed, in the words a summary groups by.

``connection_refused``: nothing listens at the address. ``connection_failed``: the name did not
resolve, or the connection dropped mid-request. ``timeout``: no answer in time. ``rate_limited``:
HTTP 429. ``overloaded``: HTTP 503 or 529. ``server_error``: another 5xx, 408 or 409.
``refused``: any other 4xx (a bad request, key or model id; never retried). ``bad_response``: an
HTTP 200 whose body is not the API's JSON (a proxy's error page, a wrong ``base_url``).
"""

AttemptHook = Callable[[int], None]
"""Called just before each HTTP attempt is sent, with its 1-based number within the call."""


class ChatMessage(TypedDict):
    """A plain chat message sent to a provider."""

    role: Literal["system", "user", "assistant"]
    content: str
    cache_prefix: NotRequired[int]
    """Characters at the start of ``content`` that are the same across many requests (a cacheable
    prefix). Anthropic requests mark that prefix with ``cache_control``; OpenAI caches prefixes on
    its own. The text sent is ``content`` either way."""


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """A pinned model: provider, a resolved snapshot id (never a floating alias), and where to reach it.

    ``temperature`` is 0 for every judgment Helix makes.
    """

    provider: Provider
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float = 0.0

    @property
    def ref(self) -> str:
        """``provider/model``, the form the CLI takes."""
        return f"{self.provider}/{self.model}"


@dataclass(frozen=True, kw_only=True)
class TokenUsage:
    """Tokens a provider call consumed.

    ``input_tokens`` counts every prompt token; ``cached_input_tokens`` and ``cache_write_tokens``
    are the parts of it read from and written to the provider's prompt cache (OpenAI
    ``prompt_tokens_details.cached_tokens``; Anthropic ``cache_read_input_tokens`` and
    ``cache_creation_input_tokens``), which are priced differently.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True, kw_only=True)
class Completion:
    """A provider's answer to one request, with what it cost."""

    text: str
    served_model: str | None
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float | None = None
    """None when the model has no entry in the price table (unknown, not zero)."""
    latency_s: float = 0.0
    attempts: int = 1
    request_id: str | None = None


@runtime_checkable
class Model(Protocol):
    """What Helix needs from an LLM provider client. Implement it to plug in another provider."""

    @property
    def spec(self) -> ModelSpec:
        """The pinned model this client calls."""
        ...

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        limiter: Limiter | None = None,
        on_attempt: AttemptHook | None = None,
    ) -> Completion:
        """Send one chat request at the spec's temperature and return the answer.

        Retries transient failures (429, 5xx, timeouts, an unreadable 200) itself; raises
        ``ModelError`` (with its ``kind``) when it gives up. Each HTTP attempt takes a slot of
        ``limiter`` (when given) and reports to it how the attempt went, so concurrency adapts to
        the provider's limits; ``on_attempt`` is called just before each attempt is sent.
        """
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
