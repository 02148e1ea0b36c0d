"""The one seam between Helix and LLM providers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypedDict, runtime_checkable

__all__ = ["ChatMessage", "Completion", "Model", "ModelSpec", "TokenUsage"]

Provider = Literal["openai", "anthropic"]


class ChatMessage(TypedDict):
    """A plain chat message sent to a provider."""

    role: Literal["system", "user", "assistant"]
    content: str


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
    """Tokens a provider call consumed."""

    input_tokens: int = 0
    output_tokens: int = 0


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

    async def complete(self, messages: Sequence[ChatMessage], *, max_tokens: int | None = None) -> Completion:
        """Send one chat request at the spec's temperature and return the answer.

        Retries transient failures (429, 5xx, timeouts) itself; raises ``ModelError`` when it gives up.
        """
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
