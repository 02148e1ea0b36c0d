"""Saturation math against hand-computed cases and a simulation with known category counts."""

from __future__ import annotations

import random

import pytest

from helix import UsageError
from helix.discovery import chao1, discovery_curve, good_turing_coverage, saturation


def test_hand_computed_coverage_and_chao1() -> None:
    # counts 5, 3, 2, 1, 1: n = 12, f1 = 2, f2 = 1, S_obs = 5
    cov, (lo, hi) = good_turing_coverage([5, 3, 2, 1, 1])  # type: ignore[misc]
    assert cov == pytest.approx(1 - 2 / 12)
    se = (2 * (1 - 2 / 12) + 2 * 1) ** 0.5 / 12  # Esty
    assert lo == pytest.approx(cov - 1.959963984540054 * se) and hi == pytest.approx(
        min(1.0, cov + 1.959963984540054 * se)
    )
    est, (clo, chi) = chao1([5, 3, 2, 1, 1])  # type: ignore[misc]
    assert est == pytest.approx(5 + 2 * 2 / (2 * 1))  # 7.0
    assert 5 <= clo < est < chi
    # f2 = 0: the bias-corrected form S_obs + f1 (f1 - 1) / 2
    assert chao1([4, 1, 1, 1])[0] == pytest.approx(4 + 3 * 2 / 2)  # type: ignore[index]
    # no singletons: nothing unseen, the interval collapses onto S_obs
    assert chao1([3, 2, 2]) == (3.0, (3.0, 3.0))
    assert good_turing_coverage([]) is None and chao1([]) is None


def test_curve_and_stop_rule() -> None:
    labels = ["a", None, "a", "b", None, "a", "b", "b", "a", "b"]
    assert discovery_curve(labels) == [1, 1, 1, 2, 2, 2, 2, 2, 2, 2]
    s = saturation(labels, last_k=5, target=0.9)
    assert (s.notes, s.categories, s.singletons, s.new_in_last_k) == (8, 2, 0, 0)
    assert s.coverage == 1.0 and s.stopped
    early = saturation(labels[:4], last_k=5, target=0.9)
    assert not early.stopped  # fewer than K traces read
    fresh = saturation([*labels, "c"], last_k=5, target=0.5)
    assert fresh.new_in_last_k == 1 and not fresh.stopped
    with pytest.raises(UsageError):
        saturation(labels, last_k=0)


def _draw(weights: list[float], n: int, rng: random.Random) -> list[str]:
    return [f"c{i}" for i in rng.choices(range(len(weights)), weights=weights, k=n)]


def test_simulation_coverage_interval_holds_its_stated_error() -> None:
    """Known category probabilities: the true coverage of a sample is the mass of the seen categories."""
    rng = random.Random(12)
    weights = [1 / (k + 1) for k in range(40)]  # a Zipf-like tail of rare failure modes
    total = sum(weights)
    probs = [w / total for w in weights]
    inside = 0
    sims = 400
    for _ in range(sims):
        labels = _draw(weights, 120, rng)
        seen = {int(x[1:]) for x in labels}
        true_cov = sum(probs[i] for i in seen)
        counts = [labels.count(f"c{i}") for i in seen]
        cov, (lo, hi) = good_turing_coverage(counts)  # type: ignore[misc]
        inside += lo - 1e-9 <= true_cov <= hi + 1e-9  # float sums of probabilities
    assert inside / sims >= 0.90  # a 95% interval: at least 90% measured over 400 draws


def test_simulation_chao1_interval_covers_the_true_richness() -> None:
    rng = random.Random(5)
    true_s = 25
    weights = [1.0 + (k % 5) for k in range(true_s)]  # moderately uneven, every category reachable
    inside = 0
    sims = 300
    below = 0
    for _ in range(sims):
        labels = _draw(weights, 80, rng)
        counts = [labels.count(c) for c in set(labels)]
        est, (lo, hi) = chao1(counts)  # type: ignore[misc]
        inside += lo <= true_s <= hi
        below += est < len(set(labels))
    assert below == 0  # never below what was seen
    assert inside / sims >= 0.85
