"""Langfuse exports: legacy trace objects (hand-written from the API shape: SDK v5 no longer ships that
model), v4 observation pages serialised by the langfuse SDK's own API models, snake_case blob-export rows,
round trips and fuzzing."""

from __future__ import annotations

import os
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_values import NOT_TEXT, ODD, expand_deep, read_every_skip
from helix.traces import (
    IntakeSummary,
    Trace,
    detect_format,
    iter_trace_files,
    read_traces,
    write_traces_jsonl,
)

FUZZ_RECORDS = int(os.environ.get("HELIX_FUZZ_RECORDS", "1500"))


def legacy_trace(i: int) -> dict[str, Any]:
    """A ``GET /api/public/traces/{id}`` object: an agent, a generation asking for a tool, the failing tool."""
    tid = f"lf-{i}"
    return {
        "id": tid,
        "timestamp": "2026-05-04T10:15:02.123Z",
        "name": "support-chat",
        "input": {"messages": [{"role": "user", "content": f"Weather in City{i}?"}]},
        "output": {"role": "assistant", "content": "I could not reach the weather service."},
        "sessionId": f"conv-{i}",
        "userId": "u_42",
        "tags": ["prod"],
        "release": "v1.4.2",
        "metadata": {},
        "environment": "production",
        "public": False,
        "htmlPath": f"/project/p1/traces/{tid}",
        "latency": 2.2,
        "totalCost": 0.000275,
        "observations": [
            {
                "id": f"{tid}-tool",
                "traceId": tid,
                "parentObservationId": f"{tid}-agent",
                "type": "SPAN",  # older SDKs had no TOOL type: named like the requested call
                "name": "get_weather",
                "level": "ERROR",
                "statusMessage": "TimeoutError: upstream timed out",
                "startTime": "2026-05-04T10:15:03.340Z",
                "endTime": "2026-05-04T10:15:04.200Z",
                "input": {"city": f"City{i}"},
                "output": None,
            },
            {
                "id": f"{tid}-agent",
                "traceId": tid,
                "parentObservationId": None,
                "type": "AGENT",
                "name": "WeatherBot",
                "level": "DEFAULT",
                "startTime": "2026-05-04T10:15:02.130Z",
                "endTime": "2026-05-04T10:15:04.320Z",
                "input": f"Weather in City{i}?",
                "output": "I could not reach the weather service.",
            },
            {
                "id": f"{tid}-gen",
                "traceId": tid,
                "parentObservationId": f"{tid}-agent",
                "type": "GENERATION",
                "name": "chat gpt-4o",
                "level": "DEFAULT",
                "startTime": "2026-05-04T10:15:02.140Z",
                "endTime": "2026-05-04T10:15:03.330Z",
                "completionStartTime": "2026-05-04T10:15:02.600Z",
                "model": "gpt-4o-2024-08-06",
                "modelParameters": {"temperature": 0},
                "input": [
                    {"role": "system", "content": "You are a weather bot."},
                    {"role": "user", "content": f"Weather in City{i}?"},
                ],
                "output": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"call_{i}",
                            "type": "function",
                            "function": {
                                "name": "get_weather",
                                "arguments": orjson.dumps({"city": f"City{i}"}).decode(),
                            },
                        }
                    ],
                },
                "usageDetails": {"input": 42, "output": 17, "total": 59, "input_cached_tokens": 8},
                "costDetails": {"input": 0.000105, "output": 0.00017, "total": 0.000275},
                "calculatedTotalCost": 0.000275,
            },
            {
                "id": f"{tid}-lost",
                "traceId": tid,
                "parentObservationId": "obs-not-exported",
                "type": "EVENT",
                "name": "cache-miss",
                "startTime": "2026-05-04T10:15:02.135Z",
            },
        ],
        "scores": [
            {
                "id": f"sc-{i}",
                "traceId": tid,
                "observationId": None,
                "name": "helpfulness",
                "value": 0.2,
                "dataType": "NUMERIC",
                "source": "EVAL",
                "comment": "Did not answer.",
            },
            {
                "id": f"sb-{i}",
                "traceId": tid,
                "name": "resolved",
                "value": 0,
                "dataType": "BOOLEAN",
                "source": "ANNOTATION",
            },
            {
                "id": f"sc2-{i}",
                "traceId": tid,
                "name": "tone",
                "value": 1,
                "stringValue": "polite",
                "dataType": "CATEGORICAL",
            },
        ],
    }


def test_legacy_trace_export(tmp_path: Path) -> None:
    path = tmp_path / "langfuse.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(legacy_trace(i)) for i in range(3)) + b"\n")
    assert detect_format(path).format == "langfuse"
    intake = read_traces(path)
    assert intake.report.records_skipped == 0
    assert [t.id for t in intake.traces] == ["lf-0", "lf-1", "lf-2"]
    trace = intake.traces[1]
    assert trace.session_id == "conv-1" and trace.name == "support-chat"
    assert trace.input == {"messages": [{"role": "user", "content": "Weather in City1?"}]}
    assert trace.metadata["userId"] == "u_42" and trace.metadata["source_format"] == "langfuse"
    assert trace.metadata["orphan_spans"] == 1
    assert [(s.name, s.value, s.source) for s in trace.scores] == [
        ("helpfulness", 0.2, "langfuse:eval"),
        ("resolved", False, "langfuse:annotation"),
        ("tone", "polite", "langfuse"),
    ]
    kinds = {e.name: e.kind for e in trace.events}
    assert kinds == {
        "WeatherBot": "agent",
        "chat gpt-4o": "llm",
        "get_weather": "tool",
        "cache-miss": "other",
    }
    gen = next(e for e in trace.events if e.kind == "llm")
    assert gen.model == "gpt-4o-2024-08-06" and gen.cost == pytest.approx(0.000275)
    assert gen.usage is not None and (
        gen.usage.input_tokens,
        gen.usage.output_tokens,
        gen.usage.total_tokens,
    ) == (
        42,
        17,
        59,
    )
    assert gen.usage.cache_read_input_tokens == 8
    assert gen.output[0]["tool_calls"][0]["arguments"] == {"city": "City1"}
    tool = trace.tool_events()[0]
    assert tool.tool_call_id == "call_1" and tool.status == "error"
    assert tool.error == "TimeoutError: upstream timed out" and tool.parent_id == "lf-1-agent"
    assert next(e for e in trace.events if e.name == "cache-miss").parent_id is None
    assert [e.start for e in trace.events] == sorted(e.start for e in trace.events if e.start is not None)
    assert intake.report.tools == {"get_weather": 3} and intake.report.error_tool_results == 3
    assert any("kept as roots" in note for note in intake.report.notes)


def test_pretty_printed_single_trace(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(orjson.dumps(legacy_trace(7), option=orjson.OPT_INDENT_2))
    intake = read_traces(path)
    assert intake.report.format == "langfuse" and [t.id for t in intake.traces] == ["lf-7"]


def _sdk_page(i: int) -> tuple[bytes, bytes]:
    """One trace as the v2 observations API returns it, and its scores, serialised by the langfuse SDK."""
    from langfuse.api import ObservationsV2Meta, ObservationsV2Response, ObservationV2, Score_Numeric

    tid, t0 = f"v4-{i}", datetime(2026, 5, 4, 10, 15, 2, tzinfo=UTC)

    def obs(oid: str, kind: str, parent: str | None, second: int, **extra: Any) -> ObservationV2:
        return ObservationV2(
            id=f"{tid}-{oid}",
            trace_id=tid,
            project_id="p1",
            type=kind,
            parent_observation_id=f"{tid}-{parent}" if parent else None,
            start_time=t0.replace(second=second),
            end_time=t0.replace(second=second + 1),
            session_id=f"conv-{i}",
            user_id="u_7",
            trace_name="weather",
            tags=["beta"],
            **extra,
        )

    observations = [
        obs("tool", "TOOL", "agent", 5, name="get_weather", input='{"city": "Oslo"}', output='"snow"'),
        obs(
            "gen",
            "GENERATION",
            "agent",
            3,
            name="chat",
            model="gpt-4o",
            input='[{"role": "user", "content": "Weather in Oslo?"}]',
            output=orjson.dumps(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"c{i}",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": "{}"},
                        }
                    ],
                }
            ).decode(),
            usage_details={"input": 30, "output": 9, "total": 39},
            total_cost=0.0004,
        ),
        obs(
            "agent",
            "AGENT",
            None,
            2,
            name="WeatherBot",
            input='"Weather in Oslo?"',
            output='"It snows in Oslo."',
        ),
    ]
    page = ObservationsV2Response(data=observations, meta=ObservationsV2Meta(cursor=None))
    score = Score_Numeric(
        id=f"s{i}",
        trace_id=tid,
        name="correct",
        source="ANNOTATION",
        timestamp=t0,
        created_at=t0,
        updated_at=t0,
        value=1.0,
        data_type="NUMERIC",
        config_id=None,
        environment="default",
    )
    return page.json().encode(), score.json().encode()


def test_v4_camel_case_pages_from_the_sdk_models(tmp_path: Path) -> None:
    lines: list[bytes] = []
    for i in range(2):
        page, score = _sdk_page(i)
        lines.extend([score, page])  # scores first: joined when the trace is built
    path = tmp_path / "observations.jsonl"
    path.write_bytes(b"\n".join(lines))
    assert detect_format(path).format == "langfuse"
    intake = read_traces(path)
    assert intake.report.records_skipped == 0
    assert sorted(t.id for t in intake.traces) == ["v4-0", "v4-1"]
    trace = next(t for t in intake.traces if t.id == "v4-1")
    assert trace.session_id == "conv-1" and trace.name == "weather"
    assert trace.input == "Weather in Oslo?" and trace.output == "It snows in Oslo."
    assert trace.metadata["user_id"] == "u_7" and trace.metadata["tags"] == ["beta"]
    assert [e.kind for e in trace.events] == ["agent", "llm", "tool"]
    llm, tool = trace.events[1], trace.events[2]
    assert llm.usage is not None and llm.usage.total_tokens == 39 and llm.cost == pytest.approx(0.0004)
    assert tool.tool_call_id == "c1" and tool.input == {"city": "Oslo"} and tool.output == "snow"
    assert [(s.name, s.value) for s in trace.scores] == [("correct", 1.0)]


def export_row(tid: str, oid: str, parent: str, kind: str, second: int, **extra: Any) -> dict[str, Any]:
    """A blob-storage export row (snake_case, '' for roots, times without 'T' or zone, I/O as strings)."""
    return {
        "id": oid,
        "trace_id": tid,
        "parent_observation_id": parent,
        "type": kind,
        "name": extra.pop("name", kind.lower()),
        "start_time": f"2026-05-04 10:15:{second:02d}.250000",
        "end_time": f"2026-05-04 10:15:{second + 1:02d}.000000",
        "level": "DEFAULT",
        "status_message": "",
        "user_id": "u_9",
        "session_id": f"s-{tid}",
        "trace_name": "export",
        "tags": [],
        **extra,
    }


def test_v4_snake_case_export_rows_interleaved_children_first(tmp_path: Path) -> None:
    rows = [
        export_row("a", "a-tool", "a-gen", "TOOL", 6, name="lookup", input='{"q": 1}', output="found"),
        export_row("b", "b-root", "", "AGENT", 1, input='"hi b"', output='"bye b"'),
        export_row(
            "a",
            "a-gen",
            "a-root",
            "GENERATION",
            3,
            provided_model_name="claude-x",
            input='[{"role": "user", "content": "hi a"}]',
            output='{"role": "assistant", "content": ""}',
            tool_calls=['{"id": "tc-1", "name": "lookup", "arguments": "{\\"q\\": 1}"}'],
            usage_details={"input": 5, "output": 2},
            cost_details={"total": 0.01},
        ),
        export_row("a", "a-root", "", "CHAIN", 2, input='"hi a"', output='"bye a"'),
        {"id": "sc-a", "trace_id": "a", "name": "ok", "value": 1, "data_type": "BOOLEAN", "source": "API"},
    ]
    path = tmp_path / "observations_v2.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in rows))
    intake = read_traces(path)
    assert intake.report.format == "langfuse" and intake.report.records_skipped == 0
    by_id = {t.id: t for t in intake.traces}
    assert set(by_id) == {"a", "b"}
    a = by_id["a"]
    assert a.session_id == "s-a" and a.input == "hi a" and a.output == "bye a"
    assert [e.id for e in a.events] == ["a-root", "a-gen", "a-tool"]
    assert a.events[0].start == datetime(2026, 5, 4, 10, 15, 2, 250000, tzinfo=UTC)
    gen = a.events[1]
    assert gen.model == "claude-x" and gen.cost == pytest.approx(0.01)
    assert gen.output[0]["tool_calls"][0] == {"id": "tc-1", "name": "lookup", "arguments": {"q": 1}}
    assert a.events[2].tool_call_id == "tc-1" and a.events[2].parent_id == "a-gen"
    assert [(s.name, s.value) for s in a.scores] == [("ok", True)]
    assert by_id["b"].events[0].parent_id is None and by_id["b"].scores == []


def test_round_trip_to_canonical_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "langfuse.json"
    path.write_bytes(orjson.dumps([legacy_trace(i) for i in range(4)]))
    intake = read_traces(path)
    assert len(intake.traces) == 4
    out = write_traces_jsonl(intake.traces, tmp_path / "out.jsonl")
    again = read_traces(out)
    assert [t.model_dump() for t in again.traces] == [t.model_dump() for t in intake.traces]


def test_bad_records_are_counted_with_their_line(tmp_path: Path) -> None:
    good = orjson.dumps(legacy_trace(1))
    broken_obs = legacy_trace(2)
    broken_obs["observations"].append("not an observation")
    lines = [
        good,  # 1
        good[:-9],  # 2 truncated
        b"[1, 2]",  # 3 not objects
        b'{"trace_id": "x", "parent_observation_id": "", "type": "SPAN"}',  # 4 row without id
        b'{"hello": "world"}',  # 5 not Langfuse
        b'{"id": "t", "observations": [], "scores": "high"}',  # 6 trace with bad scores: kept, counted
        orjson.dumps(broken_obs),  # 7 trace kept, the bad observation counted
        b"\xff\xfe",  # 8
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines))
    intake = read_traces(path, format="langfuse")
    assert sorted(t.id for t in intake.traces) == ["lf-1", "lf-2", "t"]
    assert [(s.line, s.reason) for s in intake.report.skipped] == [
        (2, "invalid-json"),
        (3, "wrong-type"),
        (3, "wrong-type"),
        (4, "invalid-record"),
        (5, "unrecognised-record"),
        (6, "invalid-record"),
        (7, "wrong-type"),
        (8, "invalid-utf8"),
    ]


# -- fuzzing -------------------------------------------------------------------------------------------------


def _fuzzed_line(i: int, rng: random.Random, odd: Any, not_text: Any) -> bytes:
    record: dict[str, Any]
    if rng.random() < 0.5:
        record = legacy_trace(i)
        target = rng.choice(["top", "obs", "score"])
        if target == "top":
            key = rng.choice(
                ["id", "input", "output", "sessionId", "observations", "scores", "name", "metadata"]
            )
            record[key] = not_text if key == "id" else odd
        elif target == "obs":
            obs = rng.choice(record["observations"])
            key = rng.choice(
                ["id", "type", "input", "output", "usageDetails", "startTime", "level", "parentObservationId"]
            )
            obs[key] = odd
        else:
            record["scores"][0][rng.choice(["name", "value", "dataType", "stringValue"])] = odd
    else:
        record = export_row(f"row-{i}", f"o-{i}", "", rng.choice(["SPAN", "GENERATION", "TOOL"]), 1)
        key = rng.choice(
            ["trace_id", "input", "output", "type", "usage_details", "start_time", "tool_calls", "name"]
        )
        record[key] = not_text if key == "trace_id" else odd
    raw = expand_deep(orjson.dumps(record))
    cut = rng.random()
    if cut < 0.1:
        raw = raw[: rng.randrange(1, len(raw))]
    elif cut < 0.2:
        at = rng.randrange(len(raw))
        raw = raw[:at] + b"\xc3\x28" + raw[at:]
    return raw


def _trace_id_of(raw: bytes) -> str | None:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    found = value.get("id") if "observations" in value else value.get("trace_id")
    return found if isinstance(found, str) else None


def _check_accounted(path: Path, lines: list[bytes]) -> None:
    intake = read_every_skip(path, "langfuse")
    ids = {t.id for t in intake.traces}
    skipped = {s.line for s in intake.report.skipped}
    for number, raw in enumerate(lines, 1):
        assert number in skipped or _trace_id_of(raw) in ids, (number, raw[:200])
    for trace in intake.traces:
        trace.model_dump_json()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), odd=st.lists(st.tuples(ODD, NOT_TEXT), min_size=1, max_size=10))
def test_fuzzed_lines_never_crash_and_are_all_counted(
    tmp_path: Path, seed: int, odd: list[tuple[Any, Any]]
) -> None:
    rng = random.Random(seed)
    lines = [_fuzzed_line(i, rng, value, not_text) for i, (value, not_text) in enumerate(odd)]
    path = tmp_path / f"fuzz-{seed}.jsonl"
    path.write_bytes(b"\n".join(lines))
    _check_accounted(path, lines)


def test_bulk_fuzzed_lines(tmp_path: Path) -> None:
    rng = random.Random(5)
    oddities: list[Any] = [
        None,
        True,
        7,
        -2.5,
        "",
        "z",
        [3],
        {"k": 1},
        "y" * 3_000,
        "__DEEP_600__",
        "__DEEP_1100__",
    ]
    lines = [
        _fuzzed_line(i, rng, rng.choice(oddities), rng.choice([None, 1.5, [1], False]))
        for i in range(FUZZ_RECORDS)
    ]
    path = tmp_path / "bulk.jsonl"
    path.write_bytes(b"\n".join(lines))
    _check_accounted(path, lines)


def test_trace_ids_are_unique_per_line(tmp_path: Path) -> None:
    """The fuzz invariant relies on it: one legacy trace per line keeps its own id."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(legacy_trace(i)) for i in range(5)))
    traces: list[Trace] = read_traces(path).traces
    assert len({t.id for t in traces}) == 5


def _blob_export(root: Path) -> tuple[Path, Path]:
    """A Langfuse blob-storage export (enriched observations): observations_v2/ and scores/ files, one per
    time window, snake_case with the export's 'YYYY-MM-DD HH:MM:SS.ffffff' times (field reference)."""
    observations = root / "observations_v2" / "2026-05-04T10:00:00.jsonl"
    scores = root / "scores" / "2026-05-04T10:00:00.jsonl"
    observations.parent.mkdir(parents=True)
    scores.parent.mkdir(parents=True)
    rows = [
        export_row("a", "a-root", "", "AGENT", 2, input='"hi a"', output='"bye a"'),
        export_row("a", "a-gen", "a-root", "GENERATION", 3, input='[{"role": "user", "content": "hi a"}]'),
        export_row("b", "b-root", "", "AGENT", 1, input='"hi b"', output='"bye b"'),
    ]
    observations.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))

    def score(sid: str, trace: str, name: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": sid,
            "timestamp": "2026-05-04 10:16:00.000000",
            "project_id": "p1",
            "environment": "default",
            "trace_id": trace,
            "observation_id": None,
            "session_id": None,
            "name": name,
            "source": "ANNOTATION",
            "comment": None,
            "created_at": "2026-05-04 10:16:00.000000",
            "updated_at": "2026-05-04 10:16:00.000000",
            **fields,
        }

    score_rows = [
        score("s1", "a", "correct", value=1.0, data_type="BOOLEAN", string_value="True"),
        score(
            "s2", "a", "helpfulness", value=0.4, data_type="NUMERIC", observation_id="a-gen", source="EVAL"
        ),
        score("s3", "b", "tone", value=0.0, data_type="CATEGORICAL", string_value="rude"),
        score("s4", "z", "orphan", value=1.0, data_type="NUMERIC"),
    ]
    scores.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in score_rows))
    return observations, scores


def _joined(traces: list[Trace]) -> dict[str, list[tuple[str, Any, str | None]]]:
    return {t.id: sorted((s.name, s.value, s.comment) for s in t.scores) for t in traces}


def test_blob_export_score_files_are_joined_when_the_folder_or_both_files_are_read(tmp_path: Path) -> None:
    observations, scores = _blob_export(tmp_path / "export")
    assert detect_format(scores).format == "langfuse"  # was "unknown format": the scores were lost
    expected = {
        "a": [("correct", True, None), ("helpfulness", 0.4, "observation a-gen")],
        "b": [("tone", "rude", None)],
    }
    for paths in ([tmp_path / "export"], [observations, scores], [scores, observations]):
        summary = IntakeSummary()
        traces = list(iter_trace_files(paths, summary=summary))
        assert _joined(traces) == expected
        assert summary.unread == [] and summary.records_skipped == 0
        by_name = {Path(r.path).parent.name: r for r in summary.files}
        assert any("joined onto the traces of the observation file" in n for n in by_name["scores"].notes)
        assert any(
            "3 score(s) joined from the Langfuse score file" in n for n in by_name["observations_v2"].notes
        )
    alone = read_traces(observations)  # no score file in this intake: nothing to join
    assert _joined(alone.traces) == {"a": [], "b": []}
