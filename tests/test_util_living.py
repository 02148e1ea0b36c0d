"""The one living-suite writer: upsert by id never drops, growth is asserted, the audit reads it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helix._util import (
    SuiteShrankError,
    append_revision,
    assert_monotonic_growth,
    history_path,
    read_suite_history,
    upsert_by_id,
)
from helix.audit import check_suite_history

Member = tuple[str, int]
members = st.lists(st.tuples(st.sampled_from("abcdefgh"), st.integers(0, 3)), max_size=8).map(
    lambda xs: list({k: (k, v) for k, v in xs}.values())
)


def first(m: Member) -> str:
    return m[0]


@given(current=members, incoming=members)
def test_upsert_never_drops_and_takes_the_incoming_content(
    current: list[Member], incoming: list[Member]
) -> None:
    merged = upsert_by_id(current, incoming, id_of=first)
    ids = [m[0] for m in merged.members]
    assert ids[: len(current)] == [m[0] for m in current]  # old members keep their place
    assert set(ids) == {m[0] for m in current} | {m[0] for m in incoming}
    assert len(ids) == len(set(ids))
    by_id = dict(merged.members)
    for k, v in incoming:
        assert by_id[k] == v
    assert set(merged.added) == {m[0] for m in incoming} - {m[0] for m in current}
    assert set(merged.updated) == {k for k, v in incoming if k in dict(current) and dict(current)[k] != v}


def test_upsert_refuses_duplicate_ids() -> None:
    with pytest.raises(ValueError, match="twice"):
        upsert_by_id([("a", 1), ("a", 2)], [], id_of=first)


def test_growth_assertion_names_the_lost_ids() -> None:
    assert_monotonic_growth(["a", "b"], ["b", "a", "c"], suite="s")
    with pytest.raises(SuiteShrankError, match="would lose 1 member") as caught:
        assert_monotonic_growth(["a", "b"], ["a"], suite="criteria")
    assert caught.value.removed == ("b",) and caught.value.suite == "criteria"


def test_history_counts_revisions_without_a_clock(tmp_path: Path) -> None:
    first_rev = append_revision(tmp_path, "criteria", ["a"], added=["a"], source="draft 1")
    assert first_rev is not None and first_rev.revision == 0
    assert append_revision(tmp_path, "criteria", ["a"]) is None  # nothing changed: no new line
    second = append_revision(tmp_path, "criteria", ["a", "b"], added=["b"], source="draft 2")
    assert second is not None and second.revision == 1
    path = history_path(tmp_path, "criteria")
    assert [r.ids for r in read_suite_history(path)] == [("a",), ("a", "b")]
    again = tmp_path / "again"
    append_revision(again, "criteria", ["a"], added=["a"], source="draft 1")
    append_revision(again, "criteria", ["a", "b"], added=["b"], source="draft 2")
    assert history_path(again, "criteria").read_bytes() == path.read_bytes()  # byte-identical
    check = check_suite_history(path)  # the audit reads what the writer wrote
    assert check.status == "pass" and check.size == 2


def test_history_refuses_to_shrink_and_refuses_a_rewritten_history(tmp_path: Path) -> None:
    append_revision(tmp_path, "s", ["a", "b"])
    with pytest.raises(SuiteShrankError, match="'b'"):
        append_revision(tmp_path, "s", ["a"])
    path = history_path(tmp_path, "s")
    assert len(read_suite_history(path)) == 1  # the refused revision wrote nothing
    append_revision(tmp_path, "s", ["a", "b", "c"])
    lines = path.read_text().splitlines()
    path.write_text("\n".join(reversed(lines)) + "\n")
    with pytest.raises(SuiteShrankError, match="rewritten"):
        append_revision(tmp_path, "s", ["a", "b", "c", "d"])
    assert check_suite_history(path).status == "fail"


def test_a_broken_history_line_names_file_and_line(tmp_path: Path) -> None:
    path = history_path(tmp_path, "s")
    append_revision(tmp_path, "s", ["a"])
    path.write_text(path.read_text() + '{"suite": "s"}\n')
    with pytest.raises(Exception, match=r"s\.history\.jsonl:2"):
        read_suite_history(path)
