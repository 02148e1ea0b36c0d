"""helix.stats: Wilson intervals, nearest-rank quantiles, series summaries and the seeded bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix import UsageError
from helix.stats import (
    SeriesDistribution,
    bootstrap_ci,
    nearest_rank_quantile,
    summarize_number_series,
    wilson_interval,
)

finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False, allow_infinity=False)
series = st.lists(finite, min_size=1, max_size=60)
qs = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


# --- nearest-rank quantile -------------------------------------------------------------------


@given(series, qs)
def test_quantile_is_a_measured_value(values: list[float], q: float) -> None:
    assert nearest_rank_quantile(values, q) in values


@given(series, qs, qs)
def test_quantile_is_monotone_in_q(values: list[float], q1: float, q2: float) -> None:
    lo, hi = sorted((q1, q2))
    assert nearest_rank_quantile(values, lo) <= nearest_rank_quantile(values, hi)


@given(series)
def test_quantile_ends_are_min_and_max(values: list[float]) -> None:
    assert nearest_rank_quantile(values, 0.0) == min(values)
    assert nearest_rank_quantile(values, 1.0) == max(values)


def test_quantile_known_values() -> None:
    data = [15.0, 20.0, 35.0, 40.0, 50.0]
    # The textbook nearest-rank example: p30 -> rank 2, p40 -> rank 2, p50 -> rank 3.
    assert nearest_rank_quantile(data, 0.3) == 20.0
    assert nearest_rank_quantile(data, 0.4) == 20.0
    assert nearest_rank_quantile(data, 0.5) == 35.0
    assert nearest_rank_quantile(list(range(1, 11)), 0.9) == 9


@pytest.mark.parametrize(("values", "q"), [([], 0.5), ([1.0], -0.1), ([1.0], 1.5), ([1.0, math.nan], 0.5)])
def test_quantile_rejects_bad_input(values: list[float], q: float) -> None:
    with pytest.raises(UsageError):
        nearest_rank_quantile(values, q)


# --- series summaries ------------------------------------------------------------------------


def test_empty_series_has_no_summary() -> None:
    assert summarize_number_series([]) is None


def test_series_summary_values() -> None:
    got = summarize_number_series([3, 1, 2, 10, 4, 5, 6, 7, 8, 9])
    assert got == SeriesDistribution(n=10, min=1, p50=5, p90=9, max=10, sum=55, mean=5.5)


@given(series)
def test_summary_is_ordered(values: list[float]) -> None:
    s = summarize_number_series(values)
    assert s is not None
    assert s.n == len(values)
    assert s.min <= s.p50 <= s.p90 <= s.max
    assert s.min - 1e-6 * (abs(s.min) + 1) <= s.mean <= s.max + 1e-6 * (abs(s.max) + 1)


# --- Wilson ----------------------------------------------------------------------------------


@given(st.integers(min_value=1, max_value=5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_bounds_in_unit_interval_and_contain_estimate(pair: tuple[int, int]) -> None:
    k, n = pair
    low, high = wilson_interval(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0


@given(st.integers(min_value=1, max_value=500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_wider_at_higher_confidence(pair: tuple[int, int]) -> None:
    k, n = pair
    lo90, hi90 = wilson_interval(k, n, confidence=0.90)
    lo99, hi99 = wilson_interval(k, n, confidence=0.99)
    assert lo99 <= lo90 and hi90 <= hi99


def test_wilson_reference_value() -> None:
    # 8 of 10 at 95%: the standard Wilson interval is about (0.4902, 0.9433).
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)
    assert wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(10, 10)[1] == 1.0


@pytest.mark.parametrize(("k", "n", "conf"), [(0, 0, 0.95), (3, 2, 0.95), (-1, 2, 0.95), (1, 2, 1.0)])
def test_wilson_rejects_bad_input(k: int, n: int, conf: float) -> None:
    with pytest.raises(UsageError):
        wilson_interval(k, n, confidence=conf)


# --- bootstrap -------------------------------------------------------------------------------


def test_bootstrap_is_seeded_and_reproducible() -> None:
    values = [float(v) for v in np.random.default_rng(1).normal(10.0, 2.0, size=200)]
    a = bootstrap_ci(values, seed=7)
    b = bootstrap_ci(values, seed=7)
    c = bootstrap_ci(values, seed=8)
    assert a == b
    assert a != c
    mean = sum(values) / len(values)
    assert a[0] < mean < a[1]
    # Standard error of the mean is ~2/sqrt(200) ~ 0.14, so the 95% interval is ~0.55 wide.
    assert 0.3 < a[1] - a[0] < 0.9


def test_bootstrap_constant_series_is_a_point() -> None:
    assert bootstrap_ci([4.0] * 9, seed=0) == (4.0, 4.0)


def test_bootstrap_median_and_callable() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 100.0]
    low, high = bootstrap_ci(values, "median", seed=3, n_resamples=500)
    assert low in values and high in values
    mx = bootstrap_ci(values, lambda m: m.max(axis=1), seed=3, n_resamples=500)
    assert mx[1] == 100.0


def test_bootstrap_chunking_handles_large_series_fast() -> None:
    values = [float(i % 17) for i in range(20_000)]
    low, high = bootstrap_ci(values, seed=11, n_resamples=1000)
    assert low < sum(values) / len(values) < high


@settings(max_examples=30, deadline=None)
@given(st.lists(finite, min_size=1, max_size=30), st.integers(0, 2**32 - 1))
def test_bootstrap_mean_interval_within_data_range(values: list[float], seed: int) -> None:
    low, high = bootstrap_ci(values, seed=seed, n_resamples=200)
    eps = 1e-6 * (max(abs(v) for v in values) + 1)
    assert min(values) - eps <= low <= high <= max(values) + eps


@pytest.mark.parametrize(
    "kwargs",
    [
        {"values": [], "seed": 0},
        {"values": [1.0], "seed": 0, "n_resamples": 0},
        {"values": [1.0], "seed": 0, "confidence": 0.0},
        {"values": [1.0, math.inf], "seed": 0},
        {"values": [1.0], "seed": 0, "stat": "mode"},
    ],
)
def test_bootstrap_rejects_bad_input(kwargs: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        bootstrap_ci(**kwargs)  # type: ignore[arg-type]
