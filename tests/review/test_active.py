"""Active labeling: Neyman-greedy queue order over verdict × uncertainty strata, and what labels record."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np

from helix.review import (
    HumanLabel,
    LabelStore,
    ReviewItem,
    ReviewServer,
    active_order,
    allocation_scores,
    create_review_app,
    load_review_set,
)

from .test_server import call


def _items() -> list[ReviewItem]:
    out = []
    for i in range(200):
        unsure = i % 5 == 0  # 40 low-confidence verdicts
        out.append(
            ReviewItem(
                trace_id=f"t{i:03d}",
                criterion_id="c",
                judge_result="pass" if i % 2 else "fail",
                confidence=0.55 if unsure else 0.95,
            )
        )
    out.append(ReviewItem(trace_id="u", criterion_id="c", judge_result="uncertain"))
    return out


def test_scores_prefer_big_uncertain_strata_and_skip_exhausted_ones() -> None:
    gains = allocation_scores([100, 100, 10], [10, 10, 10], [9, 5, 5])
    assert gains[1] > gains[0]  # a human pass rate near 1/2 needs labels more than one near 1
    assert gains[2] == -np.inf  # nothing left to label
    assert allocation_scores([50, 50], [1, 5], [1, 2])[0] == np.inf  # fewer than two labels: first


def test_the_active_queue_puts_labels_where_the_judge_is_unsure() -> None:
    items = _items()
    # Labels so far: the judge was right on every sure item, and a coin flip on unsure ones.
    labels = {
        (i.trace_id, "c"): (
            i.judge_result
            if (i.confidence or 0) > 0.9
            else ("pass" if (int(i.trace_id[1:]) // 10) % 2 else "fail")
        )
        for i in items[:40]
    }
    order = active_order(items, labels, seed=3)
    assert sorted(q.item.trace_id for q in order) == sorted(i.trace_id for i in items)  # each item once
    first = Counter(q.stratum for q in order[:60])
    size = Counter(q.stratum for q in order)
    # Neyman: labels per item follow the stratum's sd, so unsure items are labelled at a higher rate.
    unsure = (first["pass/unsure"] + first["fail/unsure"]) / (size["pass/unsure"] + size["fail/unsure"])
    sure = (first["pass/sure"] + first["fail/sure"]) / (size["pass/sure"] + size["fail/sure"])
    assert unsure > 1.5 * sure
    assert order[-41].item.trace_id == "u" or any(q.item.trace_id == "u" and q.stratum is None for q in order)
    assert active_order(items, labels, seed=3) == order  # deterministic


def test_the_server_records_the_design_and_stratum_of_each_label(run_dir: Path, tmp_path: Path) -> None:
    for queue, design in (("active", "active"), ("balanced", "by-verdict")):
        store = LabelStore(tmp_path / f"{queue}.sqlite")
        with ReviewServer(create_review_app(run_dir, store, annotator="ana", queue=queue)) as server:  # type: ignore[arg-type]
            failed = next(i for i in load_review_set(run_dir).items if i.judge_result == "fail")
            body = {"trace_id": failed.trace_id, "criterion_id": "refund_policy", "label": "pass"}
            status, _, raw = call(server.url + "api/labels", body=body)
            assert status == 200
            stored = json.loads(raw)
        expected = "fail/unsure" if queue == "active" else "fail"  # the conftest verdicts have confidence 0.7
        assert (stored["design"], stored["stratum"]) == (design, expected)
        (label,) = store.latest()
        assert isinstance(label, HumanLabel) and label.design == design
