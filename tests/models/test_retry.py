"""The retry policy: backoff shape, Retry-After parsing, which statuses are retried."""

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helix.models import RetryPolicy, is_retryable_status, parse_retry_after


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
def test_transient_statuses_are_retried(status: int) -> None:
    assert is_retryable_status(status)


@pytest.mark.parametrize("status", [200, 400, 401, 403, 404, 422])
def test_request_errors_are_not_retried(status: int) -> None:
    assert not is_retryable_status(status)


def test_retry_after_forms() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    http_date = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after({"Retry-After": http_date}, now=now) == 30.0
    assert parse_retry_after({"Retry-After": "-5"}) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_backoff_grows_exponentially_up_to_the_cap() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0)
    rng = random.Random(7)
    ceilings = [max(policy.delay(n, rng) for _ in range(400)) for n in range(1, 7)]
    # Full jitter: the largest of many draws approaches each ceiling 1, 2, 4, 8, 8, 8.
    for got, ceiling in zip(ceilings, [1, 2, 4, 8, 8, 8], strict=True):
        assert 0.9 * ceiling < got <= ceiling


def test_backoff_is_reproducible_with_a_seeded_rng() -> None:
    policy = RetryPolicy()
    a = [policy.delay(n, random.Random(3)) for n in range(1, 5)]
    b = [policy.delay(n, random.Random(3)) for n in range(1, 5)]
    assert a == b


@given(
    retry=st.integers(min_value=1, max_value=40),
    retry_after=st.none() | st.floats(min_value=0, max_value=1e6),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_delay_stays_within_bounds_and_honours_retry_after(
    retry: int, retry_after: float | None, seed: int
) -> None:
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=30.0, max_retry_after_s=120.0)
    wait = policy.delay(retry, random.Random(seed), retry_after)
    assert wait >= 0.0
    if retry_after is None:
        assert wait <= min(30.0, 0.5 * 2 ** (retry - 1))
    else:
        assert wait >= min(retry_after, 120.0)
        assert wait <= max(30.0, 120.0)
