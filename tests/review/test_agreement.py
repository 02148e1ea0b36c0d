"""Cohen's kappa against a hand-worked example, on the overlap of decided labels only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helix.review import HumanLabel, annotator_agreement, cohen_kappa

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def lab(trace: str, label: str, who: str, minutes: int = 0) -> HumanLabel:
    return HumanLabel(
        trace_id=trace,
        criterion_id="c",
        label=label,  # type: ignore[arg-type]
        annotator=who,
        created_at=T0 + timedelta(minutes=minutes),
    )


def test_kappa_matches_the_hand_worked_example() -> None:
    # 10 common decided items: both pass 4, A pass/B fail 1, A fail/B pass 2, both fail 3.
    # observed = 7/10; A passes 5/10, B passes 6/10; expected = .5*.6 + .5*.4 = 0.5;
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    pairs = [("pass", "pass")] * 4 + [("pass", "fail")] + [("fail", "pass")] * 2 + [("fail", "fail")] * 3
    labels = []
    for i, (a, b) in enumerate(pairs):
        labels += [lab(f"t{i}", a, "ana"), lab(f"t{i}", b, "ben")]
    # outside the overlap: undecided labels, items only one annotator saw, and a superseded label
    labels += [lab("t90", "defer", "ana"), lab("t90", "pass", "ben")]
    labels += [lab("t91", "underdetermined", "ben"), lab("t91", "fail", "ana")]
    labels += [lab("t92", "pass", "ana")]
    labels += [lab("t0", "fail", "ana", minutes=-5)]  # older than t0's pass: ignored
    result = cohen_kappa(labels, "ana", "ben")
    assert result.n == 10
    assert result.agreed == 7
    assert result.counts == ((4, 1), (2, 3))
    assert result.observed == pytest.approx(0.7)
    assert result.expected == pytest.approx(0.5)
    assert result.kappa == pytest.approx(0.4)
    assert "kappa=0.400, n=10" in result.describe()


def test_kappa_is_undefined_without_overlap_or_without_variation() -> None:
    none = cohen_kappa([lab("t1", "pass", "ana"), lab("t2", "pass", "ben")], "ana", "ben")
    assert (none.n, none.kappa, none.reason) == (0, None, "the annotators decided no common item")
    same = cohen_kappa([lab("t1", "pass", "ana"), lab("t1", "pass", "ben")], "ana", "ben")
    assert same.n == 1 and same.kappa is None and same.observed == 1.0
    assert "chance agreement is 1" in str(same.reason)


def test_perfect_disagreement_and_agreement() -> None:
    labels = [lab("t1", "pass", "a"), lab("t1", "fail", "b"), lab("t2", "fail", "a"), lab("t2", "pass", "b")]
    assert cohen_kappa(labels, "a", "b").kappa == pytest.approx(-1.0)
    flipped = [lab("t1", "pass", "a"), lab("t1", "pass", "b"), lab("t2", "fail", "a"), lab("t2", "fail", "b")]
    assert cohen_kappa(flipped, "a", "b").kappa == pytest.approx(1.0)


def test_annotator_agreement_covers_every_pair_once() -> None:
    labels = [lab("t1", "pass", w) for w in ("cy", "ana", "ben")]
    assert [(r.annotator_a, r.annotator_b) for r in annotator_agreement(labels)] == [
        ("ana", "ben"),
        ("ana", "cy"),
        ("ben", "cy"),
    ]


@given(st.lists(st.tuples(st.sampled_from(["pass", "fail"]), st.sampled_from(["pass", "fail"])), max_size=40))
def test_kappa_is_symmetric_and_bounded(pairs: list[tuple[str, str]]) -> None:
    labels = []
    for i, (a, b) in enumerate(pairs):
        labels += [lab(f"t{i}", a, "ana"), lab(f"t{i}", b, "ben")]
    ab, ba = cohen_kappa(labels, "ana", "ben"), cohen_kappa(labels, "ben", "ana")
    assert ab.n == ba.n == len(pairs)
    if ab.kappa is None:
        assert ba.kappa is None
    else:
        assert ba.kappa == pytest.approx(ab.kappa)
        assert -1.0 - 1e-9 <= ab.kappa <= 1.0 + 1e-9
