"""Reading folders and file lists with per-format counts, and `helix traces convert` to JSONL / Parquet."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from helix._exceptions import UsageError
from helix.cli import app
from helix.traces import (
    IntakeSummary,
    Trace,
    convert_traces,
    expand_trace_paths,
    iter_trace_files,
    read_traces,
    write_traces_jsonl,
)

runner = CliRunner()


def _tau_records(n: int) -> list[dict[str, Any]]:
    return [
        {
            "task_id": i,
            "trial": 0,
            "reward": float(i % 2),
            "info": {},
            "traj": [
                {"role": "user", "content": f"Hi {i}"},
                {"role": "assistant", "content": "Hello."},
            ],
        }
        for i in range(n)
    ]


def _mixed_folder(root: Path, make_trace: Callable[[int], Trace]) -> Path:
    """Helix JSONL (with one bad line), a tau-bench file, a Who&When log, an unknown JSON, a README."""
    root.mkdir()
    helix = root / "a" / "runs.jsonl"
    helix.parent.mkdir()
    write_traces_jsonl([make_trace(i) for i in range(3)], helix)
    with helix.open("ab") as fh:
        fh.write(b"{not json\n")
    (root / "b").mkdir()
    (root / "b" / "tau.json").write_text(json.dumps(_tau_records(4)))
    (root / "b" / "7.json").write_text(
        json.dumps(
            {
                "question": "q?",
                "question_ID": "x",
                "is_correct": False,
                "mistake_agent": "A_Expert",
                "mistake_step": "0",
                "history": [{"name": "A_Expert", "role": "assistant", "content": "done"}],
            },
            indent=2,
        )
    )
    (root / "b" / "summary.json").write_text(json.dumps({"total": 3, "passed": 1}))
    (root / "README.md").write_text("not a trace")
    (root / ".hidden.jsonl").write_text("garbage\n")
    return root


def test_a_folder_is_read_with_counts_per_format(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    root = _mixed_folder(tmp_path / "data", make_trace)
    (root / "a" / "loop").symlink_to(root, target_is_directory=True)  # walked once, not forever
    files = expand_trace_paths([root])
    assert [f.relative_to(root).as_posix() for f in files] == [
        "a/runs.jsonl",
        "b/7.json",
        "b/summary.json",
        "b/tau.json",
    ]
    summary = IntakeSummary()
    traces = list(iter_trace_files([root], summary=summary))
    assert len(traces) == 3 + 1 + 4
    assert {k: (v.files, v.traces_read, v.records_skipped) for k, v in summary.by_format.items()} == {
        "helix": (1, 3, 1),
        "who-and-when": (1, 1, 0),
        "tau-bench": (1, 4, 0),
    }
    [unread] = summary.unread
    assert unread.path.endswith("summary.json")
    assert unread.kind == "unknown-shape" and "keys" in unread.reason  # what the file looked like
    assert summary.traces_read == 8 and summary.records_skipped == 1


def test_a_single_unknown_file_raises_and_a_missing_path_too(tmp_path: Path) -> None:
    unknown = tmp_path / "summary.json"
    unknown.write_text(json.dumps({"total": 3}))
    with pytest.raises(UsageError, match="Helix reads:"):
        list(iter_trace_files([unknown]))
    with pytest.raises(UsageError, match="does not exist"):
        expand_trace_paths([tmp_path / "nope"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError, match="No trace files"):
        list(iter_trace_files([empty]))


def test_convert_to_jsonl_round_trips(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    root = _mixed_folder(tmp_path / "data", make_trace)
    out = tmp_path / "out" / "all.jsonl"
    summary = convert_traces([root], out)
    assert summary.traces_read == 8
    back = read_traces(out)
    assert back.report.format == "helix" and back.report.records_skipped == 0
    assert back.traces == list(iter_trace_files([root]))
    # Converting again into the same folder does not read the earlier output back in.
    inside = root / "all.jsonl"
    convert_traces([root], inside)
    assert convert_traces([root], inside).traces_read == 8


def test_convert_to_parquet_reads_back_with_pyarrow(
    tmp_path: Path, make_trace: Callable[[int], Trace]
) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    root = _mixed_folder(tmp_path / "data", make_trace)
    out = tmp_path / "all.parquet"
    convert_traces([root], out)
    table = pq.read_table(out)
    assert table.num_rows == 8
    columns = set(table.column_names)
    assert {
        "id",
        "session_id",
        "status",
        "n_events",
        "n_tool_events",
        "n_tool_errors",
        "trace_json",
    } <= columns
    rows = table.to_pylist()
    expected = list(iter_trace_files([root]))
    assert [r["id"] for r in rows] == [t.id for t in expected]
    assert [Trace.model_validate_json(r["trace_json"]) for r in rows] == expected
    assert [r["n_events"] for r in rows] == [len(t.events) for t in expected]
    # Scores become typed columns: bool stays bool, numbers float, labels text; absent is null.
    assert str(table.schema.field("score_resolved").type) == "bool"
    assert str(table.schema.field("score_reward").type) == "double"
    assert str(table.schema.field("score_mistake_agent").type) == "string"
    by_id = {r["id"]: r for r in rows}
    assert by_id["trace-0"]["score_resolved"] is True and by_id["trace-0"]["score_reward"] is None
    tau = [r for r in rows if r["source_format"] == "tau-bench"]
    assert [r["score_reward"] for r in tau] == [0.0, 1.0, 0.0, 1.0]
    assert [r["n_tool_errors"] for r in rows[:3]] == [1, 0, 0]


def test_convert_refuses_an_unknown_output_kind(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    src = tmp_path / "in.jsonl"
    write_traces_jsonl([make_trace(1)], src)
    with pytest.raises(UsageError, match=r"\.jsonl, \.jsonl\.gz or \.parquet"):
        convert_traces([src], tmp_path / "out.csv")


def test_cli_inspect_on_a_folder_shows_formats_and_unread_files(
    tmp_path: Path, make_trace: Callable[[int], Trace]
) -> None:
    root = _mixed_folder(tmp_path / "data", make_trace)
    result = runner.invoke(app, ["traces", "inspect", str(root)])
    assert result.exit_code == 0, result.output
    out = result.output
    for fmt in ("helix", "tau-bench", "who-and-when", "(unknown)"):
        assert fmt in out
    assert "3 file(s) read: 8 trace(s), 1 record(s) skipped; 1 file(s) not read" in out
    assert "not read" in out and "summary.json" in out.replace("\n", "")  # Rich wraps long paths
    as_json = runner.invoke(app, ["traces", "inspect", str(root), "--json"])
    parsed = orjson.loads(as_json.output)
    assert parsed["by_format"]["tau-bench"] == {"files": 1, "traces_read": 4, "records_skipped": 0}


def test_cli_inspect_of_an_unknown_file_lists_the_formats(tmp_path: Path) -> None:
    unknown = tmp_path / "summary.json"
    unknown.write_text(json.dumps({"total": 3, "passed": 1}))
    result = runner.invoke(app, ["traces", "inspect", str(unknown)])
    assert result.exit_code == 2
    assert "Helix reads:" in result.output and "mini-swe-agent" in result.output
    assert "'passed', 'total'" in result.output  # how it decided: what the file looked like


def test_cli_convert_writes_and_reports(tmp_path: Path, make_trace: Callable[[int], Trace]) -> None:
    root = _mixed_folder(tmp_path / "data", make_trace)
    out = tmp_path / "all.jsonl"
    result = runner.invoke(app, ["traces", "convert", str(root), "--to", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 8 trace(s)" in result.output
    assert len(read_traces(out).traces) == 8
    bad = runner.invoke(app, ["traces", "convert", str(root), "--to", str(tmp_path / "x.txt")])
    assert bad.exit_code == 2 and ".parquet" in bad.output
