"""Review items from a run (incomplete verdicts included) and the balanced, failures-first queue."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from helix import UsageError
from helix.review import HumanLabel, ReviewItem, is_disagreement, load_review_set, order_queue


def test_a_run_with_missing_and_invalid_verdicts_still_reviews(run_dir: Path) -> None:
    review = load_review_set(run_dir)
    assert [c.id for c in review.criteria] == ["refund_policy"]  # LLM criteria by default
    got = {i.trace_id: i.judge_result for i in review.items}
    assert got == {"t1": "pass", "t2": "fail", "t3": "uncertain", "t4": "none"}
    by_id = {i.trace_id: i for i in review.items}
    assert by_id["t3"].blocked_by == "no order date"
    assert by_id["t2"].critique == "the judge thinks fail"
    assert "judge-model-2025-01-01" in by_id["t2"].judge

    broken = next((run_dir / "verdicts").glob("*.verdict.json"))
    broken.write_text("{not json")
    bad = [i for i in load_review_set(run_dir).items if i.critique.startswith("invalid verdict file")]
    assert len(bad) == 1 and bad[0].judge_result == "none"


def test_criterion_selection(run_dir: Path) -> None:
    review = load_review_set(run_dir, criterion_ids=["no_tool_errors"])
    assert {i.criterion_id for i in review.items} == {"no_tool_errors"}
    assert {i.judge_result for i in review.items} == {"pass"}  # decided by the code check at PREP
    with pytest.raises(UsageError, match="nope"):
        load_review_set(run_dir, criterion_ids=["nope"])


def _item(tid: str, result: str, cid: str = "c") -> ReviewItem:
    return ReviewItem(trace_id=tid, criterion_id=cid, judge_result=result)  # type: ignore[arg-type]


def test_queue_puts_disagreements_then_failures_first_then_balances() -> None:
    items = [_item(f"p{i}", "pass") for i in range(6)] + [_item(f"f{i}", "fail") for i in range(3)]
    items += [_item(f"u{i}", "uncertain") for i in range(2)] + [_item("n0", "none")]
    human = [
        HumanLabel(
            trace_id="p3", criterion_id="c", label="fail", annotator="a", created_at=datetime.now(UTC)
        ),
        HumanLabel(
            trace_id="p4", criterion_id="c", label="pass", annotator="a", created_at=datetime.now(UTC)
        ),
    ]
    queue = order_queue(items, human, seed=1)
    ids = [i.trace_id for i in queue]
    assert ids[0] == "p3"  # judge pass, human fail
    assert set(ids[1:4]) == {"f0", "f1", "f2"}
    rest = [i.judge_result for i in queue[4:]]
    # round-robin over the remaining strata: no two passes in a row while other kinds remain
    assert rest[:3].count("pass") == 1 and set(rest[:3]) == {"pass", "uncertain", "none"}
    assert sorted(ids) == sorted(i.trace_id for i in items)
    assert order_queue(items, human, seed=1) == queue  # deterministic
    assert [i.trace_id for i in order_queue(items, human, seed=2)] != ids or len(items) < 3


def test_disagreement_needs_two_decided_answers() -> None:
    assert is_disagreement(_item("t", "pass"), "fail")
    assert not is_disagreement(_item("t", "pass"), "pass")
    assert not is_disagreement(_item("t", "uncertain"), "fail")
    assert not is_disagreement(_item("t", "fail"), "defer")
    assert not is_disagreement(_item("t", "none"), None)
