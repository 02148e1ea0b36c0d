"""Label JSONL: tolerant reading (bad lines counted with line numbers) and latest-label resolution."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from helix.review import HumanLabel, latest_labels, parse_labels_jsonl

T0 = datetime(2026, 1, 1, tzinfo=UTC)

labels_st = st.builds(
    HumanLabel,
    trace_id=st.text(min_size=1, max_size=12),
    criterion_id=st.sampled_from(["c1", "c2"]),
    label=st.sampled_from(["pass", "fail", "defer", "underdetermined"]),
    note=st.text(max_size=20),
    annotator=st.sampled_from(["ana", "ben"]),
    created_at=st.integers(0, 10_000).map(lambda s: T0 + timedelta(seconds=s)),
)

junk_st = st.one_of(
    st.text(min_size=1, max_size=40).filter(lambda s: s.strip() and "\n" not in s and "\r" not in s),
    st.just('{"trace_id": "t"}'),
    st.just(
        '{"version": 2, "trace_id": "t", "criterion_id": "c", "label": "pass", "annotator": "a", '
        '"created_at": "2026-01-01T00:00:00Z"}'
    ),
    st.just(
        '{"trace_id": "t", "criterion_id": "c", "label": "maybe", "annotator": "a", '
        '"created_at": "2026-01-01T00:00:00Z"}'
    ),
    st.just(
        '{"trace_id": "t", "criterion_id": "c", "label": "pass", "annotator": "a", '
        '"created_at": "2026-01-01T00:00:00"}'
    ),
    st.just("[1, 2, 3]"),
)


def _is_label(line: str) -> bool:
    try:
        HumanLabel.model_validate_json(line)
    except ValueError:
        return False
    return True


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(labels_st.map(lambda x: ("good", x)), junk_st.map(lambda j: ("junk", j))), max_size=25)
)
def test_import_tolerance_keeps_every_good_line_and_counts_every_bad_one(
    rows: list[tuple[str, HumanLabel | str]],
) -> None:
    lines: list[str] = []
    good: list[HumanLabel] = []
    bad_numbers: list[int] = []
    for kind, value in rows:
        if kind == "good":
            assert isinstance(value, HumanLabel)
            lines.append(orjson.dumps(value.model_dump(mode="json")).decode())
            good.append(value)
        else:
            assert isinstance(value, str)
            lines.append(value)
            if _is_label(value):
                good.append(HumanLabel.model_validate_json(value))
            else:
                bad_numbers.append(len(lines))
        if len(lines) % 4 == 0:
            lines.append("   ")  # blank lines are skipped, never counted
    parsed = parse_labels_jsonl("\n".join(lines))
    assert list(parsed.labels) == good
    assert [b.line for b in parsed.bad_lines] == bad_numbers
    assert all(b.reason for b in parsed.bad_lines)


def test_bad_lines_say_what_is_wrong() -> None:
    text = "\n".join(
        [
            '{"trace_id": "t", "criterion_id": "c", "label": "maybe", "annotator": "a", '
            '"created_at": "2026-01-01T00:00:00Z"}',
            "not json",
            '{"version": 7}',
            '{"trace_id": "t", "criterion_id": "c", "label": "pass", "annotator": "a", '
            '"created_at": "2026-01-01T00:00:00+02:00"}',
        ]
    )
    parsed = parse_labels_jsonl(text, source="x.jsonl")
    reasons = {b.line: b.reason for b in parsed.bad_lines}
    assert "label" in reasons[1]
    assert "not JSON" in reasons[2]
    assert "version 7" in reasons[3]
    (only,) = parsed.labels
    assert only.created_at == datetime(2025, 12, 31, 22, tzinfo=UTC)
    assert "x.jsonl: 1 label(s) read, 3 bad line(s)" in parsed.describe()


@settings(max_examples=100, deadline=None)
@given(st.lists(labels_st, max_size=30))
def test_latest_labels_is_the_newest_per_key_and_order_free(labels: list[HumanLabel]) -> None:
    got = latest_labels(labels)
    keys = [x.key for x in got]
    assert keys == sorted(set(keys))
    for x in got:
        assert x.created_at == max(y.created_at for y in labels if y.key == x.key)
    assert [x.key for x in latest_labels(reversed(labels))] == keys
