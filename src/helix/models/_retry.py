"""Our own retry policy for provider calls: capped exponential backoff with full jitter.

The provider SDKs' built-in retries are switched off so that there is one policy, with injectable
``sleep`` and ``rng`` (tests run it in microseconds) and an attempt count we can record.

Transient failures are retried: HTTP 408, 409, 429 and every 5xx, timeouts and dropped
connections. A ``Retry-After`` (or ``retry-after-ms``) header sets a floor on the wait. Anything
else (400, 401, 403, 404, 422...) fails at once: repeating a bad request only burns money.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

from .._exceptions import ModelError, ModelHTTPError

__all__ = ["Failure", "RetryPolicy", "is_retryable_status", "parse_retry_after", "run_with_retry"]

T = TypeVar("T")

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
    """A provider error translated into what the retry loop needs to know."""

    retryable: bool
    message: str
    status_code: int | None = None
    body: str = ""
    retry_after: float | None = None


async def run_with_retry(
    attempt: Callable[[], Awaitable[T]],
    *,
    classify: Callable[[Exception], Failure | None],
    policy: RetryPolicy,
    sleep: Sleep,
    rng: random.Random,
    model: str,
) -> tuple[T, int]:
    """Call ``attempt`` until it succeeds or the policy gives up; return (result, attempts made).

    ``classify`` maps a provider exception to a :class:`Failure`, or None for exceptions that are
    not provider failures (those propagate untouched). Gives up with :class:`ModelHTTPError` when
    the last failure had an HTTP status, else :class:`ModelError`; both carry ``attempts``.
    """
    attempts = 0
    while True:
        attempts += 1
        try:
            return await attempt(), attempts
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            if not failure.retryable or attempts > policy.max_retries:
                raise _give_up(failure, model=model, attempts=attempts) from exc
            await sleep(policy.delay(attempts, rng, failure.retry_after))


def _give_up(failure: Failure, *, model: str, attempts: int) -> ModelError:
    if failure.retryable:
        how = (
            f"still failing after {attempts} attempt(s); the provider is overloaded or down. "
            "Re-run later (finished units are kept) or raise max_retries."
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
        )
    return ModelError(f"{failure.message} ({how})", model=model, attempts=attempts)
