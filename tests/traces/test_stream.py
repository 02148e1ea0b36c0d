"""Big JSON documents are read record by record and give exactly what a whole read gives.

The size at which a document is streamed (64 MB) is lowered to 0 here, so ordinary files take that path:
each is read both ways and the traces and reports must match. Real data is used when present.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from types import ModuleType

import orjson
import pytest

from helix.traces import IntakeReport, iter_traces, read_traces, write_traces_jsonl
from helix.traces import _stream as stream

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
REAL_DOCUMENTS = [
    ("tau2-bench", DATA / "tau2-bench-gym-results" / "gpt-4.1_retail_defautl_gpt-4.1_1trials.json"),
    (
        "tau2-bench",
        DATA
        / "tau2-bench-submission-claude-sonnet-4-5"
        / "claude-sonnet-4-5_airline_default_gpt4.1_1trials.json",
    ),
    ("tau-bench", DATA / "tau-bench-historical-trajectories" / "gpt-4o-airline.json"),
]


def _read(path: Path, fmt: str) -> tuple[list[str], list[tuple[str, int | None, int | None]]]:
    report = IntakeReport()
    traces = [trace.model_dump_json() for trace in iter_traces(path, format=fmt, report=report)]
    return traces, [(s.reason, s.line, s.record) for s in report.skipped]


def _both_ways(path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    whole = _read(path, fmt)
    with monkeypatch.context() as patch:
        patch.setattr(stream, "STREAM_DOCUMENT_BYTES", 0)
        streamed = _read(path, fmt)
    return whole, streamed


@pytest.mark.realdata
@pytest.mark.parametrize(("fmt", "path"), REAL_DOCUMENTS, ids=[p.name for _, p in REAL_DOCUMENTS])
def test_real_result_documents_read_the_same_streamed(
    fmt: str, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not path.is_file():
        pytest.skip(f"real data not present: {path}")
    whole, streamed = _both_ways(path, fmt, monkeypatch)
    assert whole == streamed
    assert whole[0] and not whole[1]


@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("fmt", ["otlp", "openai-agents"])
def test_span_exports_as_one_big_json_array_read_the_same_streamed(
    fmt: str, gz: bool, bom: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, span_writers: ModuleType
) -> None:
    writers = span_writers
    if fmt == "otlp":
        (tmp_path / "w").mkdir()
        lines_path, _ = writers.write_otlp(tmp_path / "w", runs=3)
    else:
        lines_path = writers.write_agents_sdk(tmp_path / "agents.jsonl", runs=3)
    values = [orjson.loads(line) for line in Path(lines_path).read_bytes().splitlines() if line.strip()]
    data = (b"\xef\xbb\xbf" if bom else b"") + orjson.dumps(values, option=orjson.OPT_INDENT_2)
    path = tmp_path / ("export.json.gz" if gz else "export.json")
    path.write_bytes(gzip.compress(data) if gz else data)
    whole, streamed = _both_ways(path, fmt, monkeypatch)
    assert whole == streamed
    assert len(whole[0]) == 3 and not whole[1]


def test_a_broken_big_array_keeps_what_came_before_and_counts_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversations = [
        {
            "id": f"c{i}",
            "messages": [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": "a"}],
        }
        for i in range(5)
    ]
    data = orjson.dumps(conversations, option=orjson.OPT_INDENT_2)
    cut = data[: data.index(b'"c3"')]  # the fourth record and after are lost
    bad_text = data.replace(b'"q1"', b'"\\ud800"')  # a lone surrogate escape: not Unicode
    monkeypatch.setattr(stream, "STREAM_DOCUMENT_BYTES", 0)
    (tmp_path / "cut.json").write_bytes(cut)
    report = IntakeReport()
    list(iter_traces(tmp_path / "cut.json", format="openai-messages", report=report))
    assert any("read record by record" in note for note in report.notes)  # the report says how it was read
    traces, skipped = _read(tmp_path / "cut.json", "openai-messages")
    assert len(traces) == 3
    assert [(reason, record) for reason, _, record in skipped] == [("invalid-json", 4)]
    (tmp_path / "bad.json").write_bytes(bad_text)
    report = IntakeReport()
    read = list(iter_traces(tmp_path / "bad.json", format="openai-messages", report=report))
    assert (
        len(read) + len(report.skipped) == 5
    )  # read with "?" (ijson's C backend) or skipped as invalid-utf8
    assert len(read_traces(write_traces_jsonl(read, tmp_path / "out.jsonl"), format="helix").traces) == len(
        read
    )


def test_one_big_conversation_is_still_one_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A top-level array of chat messages is one conversation: it cannot be split, so it is read whole."""
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(50)]
    path = tmp_path / "chat.json"
    path.write_bytes(orjson.dumps(messages, option=orjson.OPT_INDENT_2))
    monkeypatch.setattr(stream, "STREAM_DOCUMENT_BYTES", 0)
    traces, skipped = _read(path, "openai-messages")
    assert len(traces) == 1 and not skipped


@pytest.mark.parametrize("one_line", [False, True])
@pytest.mark.parametrize("fmt", ["otlp", "openai-agents"])
def test_a_big_single_object_export_streams_its_record_list(
    fmt: str, one_line: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, span_writers: ModuleType
) -> None:
    """One OTLP export request holding every resource block, or one Agents SDK ingest batch ``{"data": [...]}``:
    the records inside the object are read one at a time, with the same traces as a whole read."""
    if fmt == "otlp":
        (tmp_path / "w").mkdir()
        lines_path, _ = span_writers.write_otlp(tmp_path / "w", runs=3)
        requests = [orjson.loads(line) for line in Path(lines_path).read_bytes().splitlines() if line.strip()]
        document = {"resourceSpans": [block for request in requests for block in request["resourceSpans"]]}
        document["resourceSpans"][2]["scopeSpans"][0]["spans"].append({"name": "no ids"})
    else:
        lines_path = span_writers.write_agents_sdk(tmp_path / "agents.jsonl", runs=3)
        document = {
            "data": [
                orjson.loads(line) for line in Path(lines_path).read_bytes().splitlines() if line.strip()
            ]
        }
    path = tmp_path / "export.json"
    path.write_bytes(orjson.dumps(document, option=0 if one_line else orjson.OPT_INDENT_2))
    monkeypatch.setattr(stream, "FIRST_LINE_BYTES", 256)  # the one-line document counts as big
    whole, streamed = _both_ways(path, fmt, monkeypatch)
    assert whole[0] == streamed[0] and len(whole[0]) == 3
    if (
        fmt == "otlp"
    ):  # a span without ids in the third resource block: where the skip is reported shows the path
        assert whole[1] == [
            ("invalid-record", 1, None) if one_line else ("invalid-record", None, 1)
        ]  # request 1
        assert streamed[1] == [("invalid-record", None, 3)]  # streamed: block 3
    else:
        assert not whole[1] and not streamed[1]


def test_big_jsonl_of_objects_is_still_read_line_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, span_writers: ModuleType
) -> None:
    lines_path = Path(span_writers.write_agents_sdk(tmp_path / "agents.jsonl", runs=2))
    lines = lines_path.read_bytes().splitlines()
    lines_path.write_bytes(b"\n".join([*lines, b'{"object": "trace.span", "id": 5}']) + b"\n")
    monkeypatch.setattr(stream, "STREAM_DOCUMENT_BYTES", 0)
    report = IntakeReport()
    traces = list(iter_traces(lines_path, format="openai-agents", report=report))
    assert len(traces) == 2
    assert [(skip.reason, skip.line) for skip in report.skipped] == [("invalid-record", len(lines) + 1)]


def test_jsonl_whose_first_line_is_an_array_is_still_read_line_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, span_writers: ModuleType
) -> None:
    """Only a file that is one document streams: a JSONL file mixing a batch line and object lines keeps all."""
    (tmp_path / "w").mkdir()
    lines_path, _ = span_writers.write_otlp(tmp_path / "w", runs=3)
    lines = [line for line in Path(lines_path).read_bytes().splitlines() if line.strip()]
    batch = b"[" + b",".join(lines[:2]) + b"]"
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join([batch, *lines[2:]]) + b"\n")
    whole, streamed = _both_ways(path, "otlp", monkeypatch)
    assert whole == streamed
    assert len(whole[0]) == 3 and not whole[1]
