"""Our own retry policy for provider calls: capped exponential backoff with full jitter.

One policy for every provider call, with injectable ``sleep`` and ``rng`` (tests run it in
microseconds) and an attempt count we can record.

Transient failures are retried: HTTP 408, 409, 429 and every 5xx, timeouts, refused and dropped
connections, and an HTTP 200 whose body is not the API's JSON (a proxy's error page). A
``Retry-After`` (or ``retry-after-ms``) header sets a floor on the wait. Anything else (400, 401,
403, 404, 422...) fails at once: repeating a bad request only burns money.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import orjson

from .._exceptions import ModelError, ModelHTTPError
from ._protocol import FailureKind

__all__ = [
    "Failure",
    "RetryPolicy",
    "give_up",
    "is_retryable_status",
    "parse_retry_after",
    "status_failure",
    "status_kind",
]

Sleep = Callable[[float], Awaitable[object]]


def is_retryable_status(status: int) -> bool:
    """HTTP statuses worth another attempt: timeouts, conflicts, rate limits and server errors."""
    return status in (408, 409, 429) or 500 <= status <= 599


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds the server asked us to wait, from ``retry-after-ms`` or ``Retry-After``.

    ``Retry-After`` may be delta-seconds or an HTTP date. Returns None when absent or unreadable;
    never negative.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How often and how long to wait between attempts.

    The wait before retry ``n`` (1-based) is drawn uniformly from ``[0, min(max_delay_s,
    base_delay_s * 2**(n-1))]`` (full jitter), then raised to the server's ``Retry-After`` when
    that is longer, capped at ``max_retry_after_s``.
    """

    max_retries: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_retry_after_s: float = 120.0

    def delay(self, retry_number: int, rng: random.Random, retry_after: float | None = None) -> float:
        """The wait before retry ``retry_number`` (1 for the first retry)."""
        ceiling = min(self.max_delay_s, self.base_delay_s * (2.0 ** (retry_number - 1)))
        wait = rng.uniform(0.0, ceiling)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_retry_after_s))
        return wait


@dataclass(frozen=True, kw_only=True)
class Failure:
    """A failed attempt translated into what the retry loop needs to know."""

    kind: FailureKind
    retryable: bool
    message: str
    status_code: int | None = None
    body: str = ""
    retry_after: float | None = None


def status_kind(status: int) -> FailureKind:
    """The failure kind of an HTTP error status."""
    if status == 429:
        return "rate_limited"
    if status in (503, 529):
        return "overloaded"
    return "server_error" if is_retryable_status(status) else "refused"


def status_failure(status: int, headers: Mapping[str, str], body: bytes) -> Failure:
    """The failure an HTTP error response stands for, with the provider's own message when it gave one."""
    text = body[:4000].decode("utf-8", "replace")
    message = text.strip()[:500] or f"HTTP {status}"
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            message = err["message"]
        elif isinstance(err, str):
            message = err
    kind = status_kind(status)
    return Failure(
        kind=kind,
        retryable=kind != "refused",
        message=message,
        status_code=status,
        body=text,
        retry_after=parse_retry_after(headers),
    )


def give_up(failure: Failure, *, model: str, attempts: int) -> ModelError:
    """The error raised when the retry loop stops: why, after how many attempts, and what to do."""
    if failure.retryable:
        how = (
            f"still failing after {attempts} attempt(s); "
            + _ADVICE.get(failure.kind, "the provider is overloaded or down")
            + ". Re-run later (finished units are kept) or raise max_retries."
        )
    else:
        how = "not retried: the request itself was refused. Check the model id, API key and base_url."
    if failure.status_code is not None:
        return ModelHTTPError(
            f"{failure.message} ({how})",
            model=model,
            status_code=failure.status_code,
            body=failure.body[:2000],
            attempts=attempts,
            kind=failure.kind,
        )
    return ModelError(f"{failure.message} ({how})", model=model, attempts=attempts, kind=failure.kind)


_ADVICE: dict[str, str] = {
    "connection_refused": "nothing is listening at that address: start the server or fix base_url",
    "connection_failed": "the address did not resolve or the connection kept dropping: check base_url "
    "and the network",
    "timeout": "the server did not answer in time: it may be overloaded, or raise the timeout",
    "bad_response": "the server answers, but not with this API's JSON: check that base_url points at the "
    "API (for OpenAI-compatible servers it usually ends in /v1)",
}
