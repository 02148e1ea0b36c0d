"""Merging categories across batches by content; reconciling drafts into a living criteria file."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix._util import SuiteShrankError, history_path, read_suite_history
from helix.audit import check_suite_history
from helix.discovery import Category, SourceCategory, merge_categories, reconcile_criteria, token_jaccard
from helix.judging import load_criteria


def cat(cid: str, notes: tuple[str, ...], text: str, routing: str = "eval-worthy") -> Category:
    return Category(
        id=cid,
        title=text,
        definition=text,
        question=f"Did the agent avoid {text}?",
        pass_definition="p",
        fail_definition="f",
        routing=routing,  # type: ignore[arg-type]
        routing_reason="r",
        note_ids=notes,
    )


def test_jaccard() -> None:
    assert token_jaccard("refund gift card wrong", "wrong refund gift card") == 1.0
    assert token_jaccard("", "") == 0.0
    assert 0 < token_jaccard("refund gift card", "refund original card") < 1


def test_same_batch_categories_never_merge_even_through_a_third() -> None:
    a = SourceCategory(batch=1, category=cat("refund-gift", ("n1",), "refund to gift card"))
    b = SourceCategory(batch=1, category=cat("refund-store", ("n2",), "refund to store credit card"))
    c = SourceCategory(batch=2, category=cat("refund-gift", ("n3", "n4"), "refund to gift card store credit"))
    merged = merge_categories([a, b, c], threshold=0.3)
    assert sorted(len(m.note_ids) for m in merged) == [1, 3]
    assert merged[0].id == "refund-gift" and merged[0].note_ids == ("n1", "n3", "n4")


def test_routing_is_the_majority_of_notes_and_a_tie_keeps_a_criterion() -> None:
    a = SourceCategory(batch=1, category=cat("crash", ("n1", "n2"), "tool crash", "fixable"))
    b = SourceCategory(batch=2, category=cat("crash", ("n3",), "tool crash", "eval-worthy"))
    (m,) = merge_categories([a, b])
    assert m.routing == "fixable" and m.routing_votes == {"fixable": 2, "eval-worthy": 1}
    c = SourceCategory(batch=3, category=cat("crash", ("n4",), "tool crash", "eval-worthy"))
    (tie,) = merge_categories([a, b, c])
    assert tie.routing == "eval-worthy"


words = st.lists(
    st.sampled_from(["refund", "gift", "card", "tool", "crash", "policy", "greeting", "order"]),
    min_size=1,
    max_size=4,
)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), words), min_size=1, max_size=10))
def test_merging_keeps_every_note_once_and_ids_unique(spec: list[tuple[int, list[str]]]) -> None:
    sources = []
    for i, (batch, ws) in enumerate(spec):
        sources.append(SourceCategory(batch=batch, category=cat("-".join(ws), (f"n{i}",), " ".join(ws))))
    # a batch answers each id once: drop repeats inside one batch as the parser would refuse them
    seen: set[tuple[int, str]] = set()
    unique = [
        s for s in sources if (s.batch, s.category.id) not in seen and not seen.add((s.batch, s.category.id))
    ]
    merged = merge_categories(unique)
    notes = [n for m in merged for n in m.note_ids]
    assert sorted(notes) == sorted(n for s in unique for n in s.category.note_ids)
    assert len({m.id for m in merged}) == len(merged)
    for m in merged:
        assert len({b for b, _ in m.members}) == len(m.members)  # one member per batch at most


DRAFT = """\
version: 1
subject: shop
criteria:
  - id: {cid}
    title: {title}
    kind: llm
    question: Did the agent {title}?
    pass_definition: it did
    fail_definition: it did not
"""


def write(path: Path, cid: str, title: str = "refund right") -> Path:
    path.write_text(DRAFT.format(cid=cid, title=title))
    return path


def test_reconcile_upserts_never_drops_and_keeps_history(tmp_path: Path) -> None:
    into = tmp_path / "criteria.yaml"
    first = reconcile_criteria(write(tmp_path / "d1.yaml", "refund"), into)
    assert first.added == ("refund",) and first.revision == 0
    second = reconcile_criteria(write(tmp_path / "d2.yaml", "greet"), into)
    assert second.added == ("greet",) and [c.id for c in load_criteria(into).criteria] == ["refund", "greet"]
    third = reconcile_criteria(write(tmp_path / "d3.yaml", "refund", "refund to the card"), into)
    assert third.updated == ("refund",) and load_criteria(into).by_id("refund").title == "refund to the card"
    same = reconcile_criteria(tmp_path / "d3.yaml", into)
    assert same.revision is None and same.unchanged == ("refund", "greet")
    hist = history_path(tmp_path, "criteria")
    assert [r.ids for r in read_suite_history(hist)] == [
        ("refund",),
        ("refund", "greet"),
        ("refund", "greet"),
    ]
    assert check_suite_history(hist).status == "pass"


def test_reconcile_refuses_when_the_file_lost_a_recorded_id(tmp_path: Path) -> None:
    into = tmp_path / "criteria.yaml"
    reconcile_criteria(write(tmp_path / "d1.yaml", "refund"), into)
    reconcile_criteria(write(tmp_path / "d2.yaml", "greet"), into)
    write(into, "greet")  # someone deleted `refund` by hand
    with pytest.raises(SuiteShrankError, match="'refund'"):
        reconcile_criteria(write(tmp_path / "d3.yaml", "other"), into)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=1, max_size=3, unique=True),
        min_size=1,
        max_size=5,
    )
)
def test_reconcile_never_drops_over_any_sequence_of_drafts(drafts: list[list[str]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        into = root / "criteria.yaml"
        ever: list[str] = []
        for i, ids in enumerate(drafts):
            body = "version: 1\nsubject: s\ncriteria:\n" + "".join(
                f"  - {{id: {cid}, title: t{i}, kind: llm, question: q, pass_definition: p, fail_definition: f}}\n"
                for cid in ids
            )
            (root / "draft.yaml").write_text(body)
            reconcile_criteria(root / "draft.yaml", into)
            ever.extend(c for c in ids if c not in ever)
            assert [c.id for c in load_criteria(into).criteria] == ever
        assert check_suite_history(history_path(root, "criteria")).status == "pass"
