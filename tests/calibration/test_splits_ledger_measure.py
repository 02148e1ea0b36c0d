"""Splits, the few-shot guard, the test-once ledger, confusion counts and certification."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix.calibration import (
    FewShotLeakError,
    TestSplitReusedError,
    assign_splits,
    certify,
    check_few_shot,
    confusion_counts,
    labels_needed,
    read_ledger,
    record_test_use,
)
from helix.judging import Criterion, FewShotExample
from helix.stats import wilson_interval


def _labels(n_pass: int, n_fail: int) -> dict[str, str]:
    out = {f"p{i:03d}": "pass" for i in range(n_pass)}
    out.update({f"f{i:03d}": "fail" for i in range(n_fail)})
    return out


def test_splits_are_disjoint_complete_and_near_15_42_43() -> None:
    s = assign_splits(_labels(100, 100), seed=5)
    train, dev, test = (set(s.ids(x)) for x in ("train", "dev", "test"))
    assert not (train & dev) and not (train & test) and not (dev & test)
    assert train | dev | test == set(_labels(100, 100))
    assert (len(train), len(dev), len(test)) == (30, 84, 86)


def test_splits_are_balanced_per_class() -> None:
    labels = _labels(40, 160)
    s = assign_splits(labels, seed=1)
    for split, share in (("train", 0.15), ("dev", 0.42), ("test", 0.43)):
        ids = s.ids(split)
        assert sum(labels[t] == "pass" for t in ids) == pytest.approx(40 * share, abs=1)
        assert sum(labels[t] == "fail" for t in ids) == pytest.approx(160 * share, abs=1)


def test_splits_are_stable_across_input_order_and_change_with_the_seed() -> None:
    labels = _labels(50, 50)
    a = assign_splits(labels, seed=3)
    b = assign_splits(list(reversed(list(labels.items()))), seed=3)
    assert dict(a.assignment) == dict(b.assignment)
    assert a.fingerprint("test") == b.fingerprint("test")
    assert dict(assign_splits(labels, seed=4).assignment) != dict(a.assignment)


@settings(max_examples=50, deadline=None)
@given(
    st.dictionaries(st.text(min_size=1, max_size=8), st.sampled_from(["pass", "fail", "defer"]), max_size=80),
    st.integers(0, 10_000),
)
def test_property_every_trace_in_exactly_one_split(labels: dict[str, str], seed: int) -> None:
    s = assign_splits(labels, seed=seed)
    parts = [s.ids(x) for x in ("train", "dev", "test")]
    assert sorted(t for p in parts for t in p) == sorted(labels)


def test_few_shot_guard_raises_for_non_train_examples() -> None:
    labels = _labels(30, 30)
    s = assign_splits(labels, seed=0)
    train_id, test_id = s.ids("train")[0], s.ids("test")[0]

    def crit(trace_id: str) -> Criterion:
        return Criterion(
            id="refund_ok",
            title="Refund",
            kind="llm",
            question="q?",
            pass_definition="p",
            fail_definition="f",
            few_shot=(FewShotExample(trace_id=trace_id, result="pass", critique="fine"),),
        )

    check_few_shot(crit(train_id), s)  # no error
    with pytest.raises(FewShotLeakError, match=test_id) as info:
        check_few_shot(crit(test_id), s)
    assert info.value.trace_ids == (test_id,)
    with pytest.raises(FewShotLeakError, match="unlabelled"):
        check_few_shot(crit("never-labelled"), s)


def test_ledger_refuses_a_second_measurement_unless_forced(tmp_path: Path) -> None:
    clock = lambda: datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)  # noqa: E731
    first = record_test_use(
        tmp_path, criterion_id="c", split_fingerprint="abc", seed=0, test_size=40, clock=clock
    )
    assert not first.forced
    with pytest.raises(TestSplitReusedError, match="already measured"):
        record_test_use(
            tmp_path, criterion_id="c", split_fingerprint="abc", seed=0, test_size=40, clock=clock
        )
    # Another criterion or another split is a first measurement.
    record_test_use(tmp_path, criterion_id="d", split_fingerprint="abc", seed=0, test_size=40, clock=clock)
    forced = record_test_use(
        tmp_path, criterion_id="c", split_fingerprint="abc", seed=0, test_size=40, force=True, clock=clock
    )
    assert forced.forced
    ledger = read_ledger(tmp_path)
    assert [(e.criterion_id, e.forced) for e in ledger.entries] == [("c", False), ("d", False), ("c", True)]


def test_confusion_counts_only_decided_pairs_and_tracks_abstentions() -> None:
    pairs: list[tuple[str, str | None]] = [
        ("pass", "pass"),
        ("pass", "pass"),
        ("pass", "fail"),
        ("fail", "pass"),
        ("fail", "fail"),
        ("fail", "fail"),
        ("fail", "fail"),
        ("pass", "uncertain"),
        ("underdetermined", "uncertain"),
        ("underdetermined", "uncertain"),
        ("underdetermined", "pass"),
        ("defer", "fail"),
        ("pass", None),
    ]
    c = confusion_counts(pairs)
    assert (c.tp, c.fn, c.fp, c.tn) == (2, 1, 1, 3)
    assert (c.abstain_on_pass, c.abstain_on_underdetermined, c.decided_on_underdetermined) == (1, 2, 1)
    assert (c.human_deferred, c.unjudged) == (1, 1)
    assert c.abstain_rate == pytest.approx(3 / 11)
    assert c.assumption_agreement == pytest.approx(2 / 3)


def _counts(tp: int, fn: int, fp: int, tn: int) -> list[tuple[str, str | None]]:
    return (
        [("pass", "pass")] * tp + [("pass", "fail")] * fn + [("fail", "pass")] * fp + [("fail", "fail")] * tn
    )


def test_certified_only_when_both_lower_bounds_clear_the_threshold() -> None:
    good = certify(confusion_counts(_counts(98, 2, 3, 97)))
    assert good.status == "certified"
    assert good.tpr_interval == wilson_interval(98, 100)
    refused = certify(confusion_counts(_counts(44, 6, 4, 46)))  # TPR 0.88: lower bound ~0.76
    assert refused.status == "refused"
    assert refused.more_pass_labels is not None and refused.more_pass_labels > 0
    assert "more human-pass labels" in refused.reason


def test_refusal_when_no_number_of_labels_can_help() -> None:
    r = certify(confusion_counts(_counts(30, 20, 2, 48)))  # TPR 0.6 < 0.8
    assert r.status == "refused" and r.more_pass_labels is None
    assert "improve the judge" in r.reason


def test_unvalidated_below_the_minimum_per_class() -> None:
    r = certify(confusion_counts(_counts(19, 0, 0, 40)))
    assert r.status == "unvalidated"
    assert "at least 20" in r.reason and "Label 1 more passing" in r.reason


def test_labels_needed_is_the_smallest_sufficient_count() -> None:
    more = labels_needed(45, 50, threshold=0.8)  # rate 0.9
    assert more is not None and more > 0
    m = 50 + more
    assert wilson_interval(round(0.9 * m), m)[0] >= 0.8
    assert wilson_interval(round(0.9 * (m - 1)), m - 1)[0] < 0.8
    assert labels_needed(99, 100, threshold=0.8) == 0


def test_advice_counts_labels_to_collect_given_the_split_share() -> None:
    from helix.calibration import DEFAULT_FRACTIONS, LabelSupply, split_sizes

    # 12 human-pass test pairs (of 27 labelled passing traces), 20 needed: 8 more *test pairs*, which at a
    # 43% test share means about 19 more passing traces to label.
    counts = confusion_counts(_counts(12, 0, 0, 25))
    supply = LabelSupply(split="test", fractions=DEFAULT_FRACTIONS, labelled_pass=27, labelled_fail=58)
    r = certify(counts, supply=supply)
    assert r.status == "unvalidated" and r.more_pass_labels is not None
    assert split_sizes(27 + r.more_pass_labels)[2] >= split_sizes(27)[2] + 8
    assert split_sizes(27 + r.more_pass_labels - 1)[2] < split_sizes(27)[2] + 8
    assert (
        r.more_pass_labels > 8 and f"label about {r.more_pass_labels} more passing traces" in r.reason.lower()
    )
    assert "test split takes about 43% of each class" in r.reason
    # Measured on every label, each new label is a pair.
    every = certify(counts, supply=LabelSupply(split="all", fractions=DEFAULT_FRACTIONS, labelled_pass=12))
    assert every.more_pass_labels == 8


def test_advice_says_when_the_run_has_too_few_traces_of_a_class() -> None:
    from helix.calibration import DEFAULT_FRACTIONS, LabelSupply

    counts = confusion_counts(_counts(12, 0, 0, 25))
    supply = LabelSupply(
        split="test", fractions=DEFAULT_FRACTIONS, labelled_pass=27, labelled_fail=58, available_pass=5
    )
    r = certify(counts, supply=supply)
    assert "at most 5 unlabelled traces that could be passing" in r.reason
    assert "--split all" in r.reason


def test_improve_the_judge_when_even_the_upper_bound_is_below_the_threshold() -> None:
    r = certify(confusion_counts(_counts(30, 20, 2, 48)))  # TPR 0.6 [0.46, 0.72]
    assert r.status == "refused" and r.more_pass_labels is None
    assert "even the upper bound is below 0.8" in r.reason and "improve the judge" in r.reason
    # At the threshold but with an upper bound above it: labels might still show it is better.
    near = certify(confusion_counts(_counts(16, 4, 2, 48)))  # TPR 0.8 [0.58, 0.92]
    assert near.more_pass_labels is None and "labels help only if" in near.reason
