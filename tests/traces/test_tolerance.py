"""Tolerant intake: bad lines and records are skipped and counted with file, line and reason; never fatal."""

from __future__ import annotations

import gzip
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from helix.traces import Trace, read_traces, write_traces_jsonl


def _skips(path: Path, fmt: str = "auto") -> list[tuple[int | None, str]]:
    return [(s.line, s.reason) for s in read_traces(path, format=fmt).report.skipped]


def test_garbage_lines_in_helix_jsonl(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    good = make_trace(1).model_dump_json().encode()
    lines = [
        good,  # 1
        good[: len(good) // 2],  # 2 truncated JSON
        b'{"id": 5, "events": "nope"}',  # 3 wrong field types
        b"[1, 2, 3]",  # 4 not an object
        b'"just a string"',  # 5 not an object
        b'{"id": "x", "events": [], "note": "\xff\xfe bad"}',  # 6 invalid UTF-8
        b"",  # 7 blank
        b"   \t",  # 8 blank
        make_trace(2).model_dump_json().encode(),  # 9
    ]
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    intake = read_traces(path)
    assert [t.id for t in intake.traces] == ["trace-1", "trace-2"]
    assert _skips(path) == [
        (2, "invalid-json"),
        (3, "invalid-record"),
        (4, "wrong-type"),
        (5, "wrong-type"),
        (6, "invalid-utf8"),
        (7, "blank-line"),
        (8, "blank-line"),
    ]
    report = intake.report
    assert report.skipped_by_reason == {
        "invalid-json": 1,
        "invalid-record": 1,
        "wrong-type": 2,
        "invalid-utf8": 1,
        "blank-line": 2,
    }
    bad_types = report.skipped[1]
    assert bad_types.path == str(path)
    assert "id" in bad_types.detail and "events" in bad_types.detail
    assert bad_types.location() == f"{path}:3"


def test_garbage_lines_in_openai_jsonl(tmp_path: Path, make_chat: Callable[..., Any]) -> None:
    good = orjson.dumps(make_chat(1))
    lines = [
        good[:-5],  # 1 truncated
        good,  # 2
        b'{"messages": [{"role": "wizard", "content": "hi"}]}',  # 3 unknown role
        b'{"messages": [{"role": "user", "content": 42}]}',  # 4 wrong content type
        b"42",  # 5
        b'{"resourceSpans": []}',  # 6 another format's record
        b'{"messages": []}',  # 7 empty conversation
        b"\xc3\x28",  # 8 invalid UTF-8
    ]
    path = tmp_path / "chats.jsonl"
    path.write_bytes(b"\n".join(lines))  # no final newline: the last line still counts
    intake = read_traces(path, format="openai-messages")
    assert len(intake.traces) == 1
    assert _skips(path, "openai-messages") == [
        (1, "invalid-json"),
        (3, "invalid-record"),
        (4, "invalid-record"),
        (5, "wrong-type"),
        (6, "unrecognised-record"),
        (7, "invalid-record"),
        (8, "invalid-utf8"),
    ]
    details = {s.line: s.detail for s in intake.report.skipped}
    assert '"wizard"' in details[3]
    assert "OTLP" in details[6]


def test_bad_records_in_a_json_array_are_counted_by_record(
    tmp_path: Path, make_chat: Callable[..., Any]
) -> None:
    path = tmp_path / "tau.json"
    records = [
        {"task_id": 1, "trial": 0, "reward": 1.0, "info": {}, "traj": make_chat(1)},
        {"task_id": 2, "trial": 0, "reward": 1.0, "info": {}, "traj": "oops"},
        "not a record",
        {"task_id": 3},
    ]
    path.write_bytes(orjson.dumps(records))
    intake = read_traces(path, format="tau-bench")
    assert len(intake.traces) == 1
    assert [(s.record, s.line, s.reason) for s in intake.report.skipped] == [
        (2, None, "invalid-record"),
        (3, None, "wrong-type"),
        (4, None, "unrecognised-record"),
    ]
    assert intake.report.skipped[0].location() == f"{path} record 2"


def test_broken_json_document_is_one_counted_skip(tmp_path: Path, make_chat: Callable[..., Any]) -> None:
    path = tmp_path / "tau.json"
    path.write_bytes(orjson.dumps([{"task_id": 1, "trial": 0, "traj": make_chat(1)}])[:-10])
    intake = read_traces(path, format="tau-bench")
    assert intake.traces == []
    assert [(s.line, s.reason) for s in intake.report.skipped] == [(1, "invalid-json")]


def test_duplicate_ids_are_kept_and_reported(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    path = write_traces_jsonl([make_trace(1), make_trace(2), make_trace(1)], tmp_path / "runs.jsonl")
    intake = read_traces(path)
    assert [t.id for t in intake.traces] == ["trace-1", "trace-2", "trace-1"]
    assert [(d.id, d.locations) for d in intake.report.duplicate_ids] == [("trace-1", ["line 1", "line 3"])]
    assert any("more than once" in note for note in intake.report.notes)


def test_newer_trace_version_is_skipped_with_reason(
    tmp_path: Path, make_trace: Callable[[int], Trace]
) -> None:
    newer = make_trace(1).model_copy(update={"version": 99})
    path = write_traces_jsonl([make_trace(0), newer], tmp_path / "runs.jsonl")
    intake = read_traces(path)
    assert len(intake.traces) == 1
    assert [(s.line, s.reason) for s in intake.report.skipped] == [(2, "unsupported-version")]
    assert "upgrade" in intake.report.skipped[0].detail


def test_truncated_gzip_keeps_what_was_read(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    data = b"".join(make_trace(i).model_dump_json().encode() + b"\n" for i in range(200))
    compressed = gzip.compress(data)
    path = tmp_path / "runs.jsonl.gz"
    path.write_bytes(compressed[: len(compressed) // 2])
    intake = read_traces(path, format="helix")
    assert 0 < len(intake.traces) < 200
    unreadable = [s for s in intake.report.skipped if s.reason == "unreadable"]
    assert len(unreadable) == 1
    assert unreadable[0].line is not None


# -- property tests: the line readers never raise and count every bad line -----------------------------------

_GOOD_TRACE = Trace(id="t", events=[]).model_dump_json().encode()
_GOOD_CHAT = orjson.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])


def _garbage() -> st.SearchStrategy[bytes]:
    raw = st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" "))
    scalars = st.one_of(
        st.integers(-(2**63), 2**63 - 1),
        st.text(max_size=20),
        st.none(),
        st.booleans(),
        st.floats(allow_nan=False),
    )
    wrong_shapes = st.dictionaries(st.sampled_from(["id", "events", "messages", "role", "version"]), scalars)
    return st.one_of(
        raw,
        scalars.map(orjson.dumps),
        wrong_shapes.map(orjson.dumps),
        st.lists(scalars, max_size=3).map(orjson.dumps),
        st.sampled_from(
            [b"", b"   ", b"{", b"[", b"]", b'{"id": "t"', b"\xff\xfe", b"123456789012345678901234567890"]
        ),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    fmt=st.sampled_from(["helix", "openai-messages"]),
)
def test_line_readers_never_raise_and_count_every_line(data: st.DataObject, fmt: str) -> None:
    good = _GOOD_TRACE if fmt == "helix" else _GOOD_CHAT
    truncated = st.integers(min_value=1, max_value=len(good) - 1).map(lambda k: good[:k])
    line = st.one_of(st.just(good), truncated, _garbage())
    lines = data.draw(st.lists(line, min_size=2, max_size=25))
    content = b"\n".join(lines) + b"\n"
    try:
        orjson.loads(content)
        whole_document = True
    except orjson.JSONDecodeError:
        whole_document = False
    assume(not whole_document)  # a file that is one JSON document is read as a document, by design
    # so is one whose first line is a lone bracket: a pretty-printed document, counted per document
    assume(lines[0].strip() not in (b"[", b"{"))
    assume(all(ln == good or not _parses_as_record(ln, fmt) for ln in lines))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.jsonl"
        path.write_bytes(content)
        intake = read_traces(path, format=fmt)
    report = intake.report
    skipped_lines = [s.line for s in report.skipped]
    assert len(intake.traces) == sum(1 for ln in lines if ln == good)
    assert report.traces_read + report.records_skipped == len(lines)
    assert all(isinstance(n, int) and 1 <= n <= len(lines) for n in skipped_lines)
    assert len(set(skipped_lines)) == len(skipped_lines)
    assert {n for n in skipped_lines if n is not None} == {i for i, ln in enumerate(lines, 1) if ln != good}
    assert sum(report.skipped_by_reason.values()) == report.records_skipped


def _parses_as_record(line: bytes, fmt: str) -> bool:
    """Whether a generated garbage line happens to be a readable record (then it is not garbage)."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    if fmt == "helix":
        try:
            Trace.model_validate(value)
        except ValueError:
            return False
        return True
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) and "role" in m for m in value)


@settings(max_examples=60, deadline=None)
@given(content=st.binary(max_size=400))
def test_auto_detection_on_arbitrary_bytes_raises_only_usage_errors(content: bytes) -> None:
    from helix import UsageError

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.bin"
        path.write_bytes(content)
        try:
            intake = read_traces(path)
        except UsageError:
            return
    assert intake.report.traces_read == len(intake.traces)


def test_corrupt_gzip_body_is_reported_not_raised(tmp_path: Path) -> None:
    from helix import UsageError

    path = tmp_path / "runs.jsonl.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"\xde\xad\xbe\xef" * 8)
    intake = read_traces(path, format="helix")
    assert intake.traces == []
    assert [s.reason for s in intake.report.skipped] == ["unreadable"]
    with pytest.raises(UsageError, match="unreadable at line 1"):
        read_traces(path)


def test_byte_order_mark_and_crlf_line_ends(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    lines = [make_trace(i).model_dump_json().encode() for i in range(3)]
    path = tmp_path / "windows.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(lines) + b"\r\n")
    intake = read_traces(path)
    assert intake.report.format == "helix"
    assert [t.id for t in intake.traces] == ["trace-0", "trace-1", "trace-2"]
    assert intake.report.records_skipped == 0


def test_byte_order_mark_before_a_json_document(tmp_path: Path, make_chat: Callable[..., Any]) -> None:
    path = tmp_path / "tau.json"
    path.write_bytes(
        b"\xef\xbb\xbf" + orjson.dumps([{"task_id": 1, "trial": 0, "reward": 1.0, "traj": make_chat(1)}])
    )
    intake = read_traces(path)
    assert intake.report.format == "tau-bench"
    assert len(intake.traces) == 1
