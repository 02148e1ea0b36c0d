"""The corrected success rate: hand-worked cases, judgy's point estimate, properties, speed shape."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix import UsageError
from helix.calibration import (
    MIN_DENOMINATOR,
    calibrate,
    corrected_rate,
    corrected_rate_intervals,
    corrected_rate_point,
    exact_fraction,
)


def test_seed_example_tpr_092_tnr_088_pobs_080_gives_085() -> None:
    assert corrected_rate_point(0.80, 0.92, 0.88) == pytest.approx(0.85)


def test_hand_worked_counts_give_085_with_an_interval_around_it() -> None:
    # 92/100 human-pass judged pass, 88/100 human-fail judged fail, 800/1000 judged pass.
    r = corrected_rate(tp=92, n_pos=100, tn=88, n_neg=100, judged_pass=800, judged=1000, seed=3)
    assert r.status == "ok"
    assert r.theta == pytest.approx(0.85)
    assert r.low is not None and r.high is not None
    assert 0.75 < r.low < 0.85 < r.high < 0.95


def test_more_hand_worked_cases() -> None:
    # A perfect judge changes nothing; a judge that passes everything it sees at TNR 0.5 is invalid.
    assert corrected_rate_point(0.3, 1.0, 1.0) == pytest.approx(0.3)
    assert corrected_rate_point(0.5, 0.9, 0.8) == pytest.approx((0.5 + 0.8 - 1) / 0.7)
    assert corrected_rate_point(0.05, 0.9, 0.8) == 0.0  # clipped below
    assert corrected_rate_point(0.99, 0.9, 0.95) == 1.0  # clipped above
    assert corrected_rate_point(0.7, 0.5, 0.5) is None
    assert corrected_rate_point(0.7, 0.5, 0.5 + MIN_DENOMINATOR / 2) is None  # "near zero" is invalid too
    assert corrected_rate_point(0.7, 0.3, 0.4) is None  # worse than chance


def test_the_boundary_is_decided_on_exact_fractions_of_the_counts() -> None:
    # 8/10 + 3/12 - 1 is exactly 1/20 (the minimum), although the floats give 0.050000000000000044.
    assert 8 / 10 + 3 / 12 - 1 > MIN_DENOMINATOR
    r = corrected_rate(tp=8, n_pos=10, tn=3, n_neg=12, judged_pass=35, judged=50)
    assert r.status == "invalid" and r.theta is None and r.low is None
    assert r.reason is not None and "8/10 + 3/12 - 1" in r.reason
    assert corrected_rate_point(Fraction(8, 10), Fraction(8, 10), Fraction(3, 12)) is None
    assert corrected_rate_point(0.7, 0.8, 0.25) is None  # floats are read as the decimals they print as
    # One count more and the judge separates the classes (just).
    ok = corrected_rate(tp=9, n_pos=10, tn=3, n_neg=12, judged_pass=35, judged=50)
    assert ok.status == "ok" and ok.theta is not None


def test_invalid_judge_gets_no_number_and_says_why() -> None:
    r = corrected_rate(tp=10, n_pos=20, tn=10, n_neg=20, judged_pass=50, judged=100, seed=0)
    assert r.status == "invalid" and r.theta is None and r.low is None
    assert r.reason is not None and "TPR + TNR - 1" in r.reason


def test_rejects_bad_input() -> None:
    with pytest.raises(UsageError, match="p_obs"):
        corrected_rate_point(1.5, 0.9, 0.9)
    with pytest.raises(UsageError, match="both classes"):
        corrected_rate(tp=0, n_pos=0, tn=5, n_neg=5, judged_pass=1, judged=2)
    with pytest.raises(UsageError, match="exceed"):
        corrected_rate_intervals(6, 5, 5, 5, 1, 2, seed=0)


def _judgy_data(seed: int) -> tuple[list[int], list[int], list[int]]:
    rng = np.random.default_rng(seed)
    labels = (rng.random(200) < 0.5).astype(int)
    preds = np.where(labels == 1, rng.random(200) < 0.9, rng.random(200) < 0.2).astype(int)
    unlabeled = (rng.random(3000) < 0.55).astype(int)
    return labels.tolist(), preds.tolist(), unlabeled.tolist()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_point_estimate_matches_judgy_on_the_same_data(seed: int) -> None:
    judgy = pytest.importorskip("judgy")
    labels, preds, unlabeled = _judgy_data(seed)
    theta_judgy, _, _ = judgy.estimate_success_rate(labels, preds, unlabeled, bootstrap_iterations=200)
    pairs = [("pass" if h else "fail", "pass" if p else "fail") for h, p in zip(labels, preds, strict=True)]
    ours = calibrate(pairs, judged_pass=sum(unlabeled), judged_n=len(unlabeled), min_labels_per_class=1)
    assert ours.theta == pytest.approx(float(theta_judgy), abs=1e-12)


def test_interval_is_seeded_and_vectorised() -> None:
    a = corrected_rate_intervals([40, 45], 50, [44, 30], 50, [600, 700], 1000, seed=9, draws=2000)
    b = corrected_rate_intervals([40, 45], 50, [44, 30], 50, [600, 700], 1000, seed=9, draws=2000)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    one = corrected_rate_intervals(40, 50, 44, 50, 600, 1000, seed=9, draws=2000)
    assert one[0].shape == (1,) and a[0].shape == (2,) and not a[2].any()


def test_a_judged_set_the_labels_cannot_explain_falls_back_to_clipping_and_says_so() -> None:
    # The judge passes 99% of the judged set, but it passes only about 60% of human passes.
    r = corrected_rate(tp=60, n_pos=100, tn=95, n_neg=100, judged_pass=990, judged=1000, seed=2)
    assert r.status == "ok" and r.incompatible and r.high == 1.0


def test_interval_narrows_with_more_labels() -> None:
    small = corrected_rate(tp=18, n_pos=20, tn=17, n_neg=20, judged_pass=600, judged=10_000, seed=1)
    large = corrected_rate(tp=450, n_pos=500, tn=425, n_neg=500, judged_pass=6000, judged=100_000, seed=1)
    assert (
        small.high is not None and small.low is not None and large.high is not None and large.low is not None
    )
    assert large.high - large.low < (small.high - small.low) / 2


@settings(max_examples=60, deadline=None)
@given(
    n_pos=st.integers(1, 300),
    n_neg=st.integers(1, 300),
    judged=st.integers(1, 100_000),
    data=st.data(),
)
def test_properties_interval_contains_theta_and_stays_in_unit_range(
    n_pos: int, n_neg: int, judged: int, data: st.DataObject
) -> None:
    tp = data.draw(st.integers(0, n_pos))
    tn = data.draw(st.integers(0, n_neg))
    k = data.draw(st.integers(0, judged))
    r = corrected_rate(
        tp=tp, n_pos=n_pos, tn=tn, n_neg=n_neg, judged_pass=k, judged=judged, seed=0, draws=500
    )
    if Fraction(tp, n_pos) + Fraction(tn, n_neg) - 1 <= Fraction(1, 20):
        assert r.status == "invalid" and r.theta is None
        return
    assert r.theta is not None and r.low is not None and r.high is not None
    assert 0.0 <= r.low <= r.theta <= r.high <= 1.0
    expected = (k / judged + tn / n_neg - 1) / (tp / n_pos + tn / n_neg - 1)
    assert r.theta == pytest.approx(min(1.0, max(0.0, expected)))


@settings(max_examples=40, deadline=None)
@given(p=st.floats(0, 1), tpr=st.floats(0.56, 1), tnr=st.floats(0.5, 1))
def test_property_inverts_the_observation_model(p: float, tpr: float, tnr: float) -> None:
    # A population with true rate θ shows p_obs = θ·TPR + (1 − θ)(1 − TNR); correcting recovers θ.
    theta = p
    p_obs = theta * tpr + (1 - theta) * (1 - tnr)
    got = corrected_rate_point(p_obs, tpr, tnr)
    if exact_fraction(tpr) + exact_fraction(tnr) - 1 <= exact_fraction(MIN_DENOMINATOR):
        assert got is None
    else:
        assert got == pytest.approx(theta, abs=1e-9)


def test_coverage_warning_for_flagged_and_unmeasured_regimes() -> None:
    from helix.calibration import COVERAGE_GRID, FLAGGED_REGIMES, coverage_warning

    g = COVERAGE_GRID
    for design, m, tpr, tnr, prev, n in FLAGGED_REGIMES:
        assert m in g.labels_per_class and n in g.judged_n and tpr in g.tpr and tnr in g.tnr
        assert prev in g.prevalence and design in ("balanced", "random")
        warned = coverage_warning(
            design=design, labels_pass=m, labels_fail=m, tpr=tpr + 0.01, tnr=tnr, theta=prev, judged_n=n
        )
        assert warned is not None and "less than 94%" in warned
    clean = [
        (m, n)
        for m in g.labels_per_class
        for n in g.judged_n
        if ("balanced", m, 0.9, 0.9, 0.5, n) not in FLAGGED_REGIMES
    ]
    m, n = clean[0]
    assert coverage_warning(labels_pass=m, labels_fail=m, tpr=0.9, tnr=0.9, theta=0.5, judged_n=n) is None
    outside = coverage_warning(labels_pass=12, labels_fail=200, tpr=0.9, tnr=0.5, theta=0.5, judged_n=1000)
    assert outside is not None and "not measured" in outside and "TNR 0.50" in outside
    random = coverage_warning(
        design="random", labels_pass=5, labels_fail=20, tpr=0.9, tnr=0.9, theta=0.2, judged_n=500
    )
    assert random is not None and "12 labels / 2" in random
