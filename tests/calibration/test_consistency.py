"""Judge self-consistency statistics: flip rate and Fleiss' kappa (hand-worked and against statsmodels)."""

from __future__ import annotations

import numpy as np
import pytest

from helix import UsageError
from helix.calibration import fleiss_kappa, self_consistency

# Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories, kappa = 0.210.
TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def _ratings(table: list[list[int]]) -> list[list[str]]:
    return [[f"c{j}" for j, n in enumerate(row) for _ in range(n)] for row in table]


def test_fleiss_kappa_hand_worked_example() -> None:
    assert fleiss_kappa(_ratings(TABLE)) == pytest.approx(0.2099, abs=5e-4)


def test_fleiss_kappa_matches_statsmodels_on_random_reruns() -> None:
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    rng = np.random.default_rng(4)
    for _ in range(20):
        table = rng.multinomial(5, rng.dirichlet([1, 1, 1]), size=30)
        ours = fleiss_kappa(_ratings(table.tolist()))
        assert ours == pytest.approx(inter_rater.fleiss_kappa(table, method="fleiss"), abs=1e-12)


def test_flip_rate_and_kappa_of_a_criterion() -> None:
    reruns = {
        "t1": ["pass", "pass", "pass"],
        "t2": ["pass", "fail", "pass"],
        "t3": ["fail", "fail", "fail"],
        "t4": ["uncertain", "pass", "pass"],
        "t5": ["pass"],  # judged once: left out
    }
    r = self_consistency("refund_ok", reruns)
    assert (r.units, r.flips, r.reruns_min, r.reruns_max) == (4, 2, 3, 3)
    assert r.flip_rate == pytest.approx(0.5)
    assert r.results == {"pass": 7, "fail": 4, "uncertain": 1}
    assert r.kappa is not None and 0 < r.kappa < 1
    steady = self_consistency("c", [["pass", "pass"], ["pass", "pass"]])
    assert steady.flip_rate == 0 and steady.kappa is None and steady.kappa_reason is not None
    perfect = self_consistency("c", [["pass", "pass"], ["fail", "fail"]])
    assert perfect.kappa == pytest.approx(1.0)
    with pytest.raises(UsageError, match="pass, fail or uncertain"):
        self_consistency("c", [["yes", "no"]])
