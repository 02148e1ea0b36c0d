"""The run directory: PREP, an outside judge writing verdict files, status and AGGREGATE read-back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helix import InputFileError, MissingVerdictsError, UsageError, VerdictFileError
from helix.judging import (
    PROMPT_VERSION,
    CriteriaMatrix,
    Criterion,
    CriterionVerdict,
    JudgeInfo,
    Packet,
    collect_results,
    list_packets,
    missing_verdict_keys,
    open_run,
    prep_run,
    run_status,
)
from helix.models import ModelSpec
from helix.traces import Message, ToolCall, Trace


def shop_trace(trace_id: str, answer: str, *, refund: bool = True) -> Trace:
    messages = [Message(role="user", content="Please refund order 9.")]
    if refund:
        messages += [
            Message(role="assistant", tool_calls=[ToolCall(id="c", name="refund", arguments={"order": 9})]),
            Message(role="tool", content="refunded", tool_call_id="c"),
        ]
    messages.append(Message(role="assistant", content=answer))
    return Trace(id=trace_id, input="Please refund order 9.", output=answer, messages=messages)


def llm(cid: str) -> Criterion:
    return Criterion(
        id=cid, title=cid, kind="llm", question=f"{cid}?", pass_definition="yes", fail_definition="no"
    )


def code(cid: str, **check: Any) -> Criterion:
    return Criterion(id=cid, title=cid, kind="code", check=check)  # type: ignore[arg-type]


MATRIX = CriteriaMatrix(
    subject="shop",
    criteria=(llm("grounded"), code("refunded", name="tool_called", args={"tool": "refund"}), llm("polite")),
)
TRACES = [
    shop_trace("t1", "Refunded, sorry for the trouble."),
    shop_trace("t2", "Refunded, sorry for the trouble."),  # same content as t1: judged once
    shop_trace("t3", "Done.", refund=False),
]


def judge_outside(packet: Packet, decide: dict[str, str]) -> None:
    """What an agent runtime does: read the packet, write the verdict file it names."""
    verdicts = []
    for c in packet.criteria:
        result = decide[c.id]
        verdicts.append(
            {
                "criterion_id": c.id,
                "critique": f"Looked at the transcript for {c.id}.",
                "result": result,
                "confidence": 0.75,
                "blocked_by": "no tool output recorded" if result == "uncertain" else None,
            }
        )
    body = {
        "version": 1,
        "key": packet.key,
        "judge": {
            "runtime": "test-runtime",
            "model": "judge-2025-01-01",
            "prompt_version": packet.pin.prompt_version,
        },
        "verdicts": verdicts,
    }
    Path(packet.verdict_file).write_text(json.dumps(body), encoding="utf-8")


def decide_for(packet: Packet) -> dict[str, str]:
    said = packet.trajectory.output
    return {"grounded": "pass", "polite": "pass" if "sorry" in str(said) else "uncertain"}


def test_prep_writes_the_run_and_is_idempotent(tmp_path: Path) -> None:
    run = tmp_path / "run"
    first = prep_run(TRACES, MATRIX, run, model=ModelSpec(provider="openai", model="gpt-4o-2024-08-06"))
    assert (first.llm_units, first.code_units, first.shared_units, first.packets_written) == (2, 2, 2, 2)
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["axis"] == "matrix" and manifest["prompt_version"] == PROMPT_VERSION
    assert manifest["pin"]["model"] == "gpt-4o-2024-08-06" and manifest["pin"]["temperature"] == 0.0
    assert manifest["counts"] == {
        "traces": 3,
        "llm_criteria": 2,
        "code_criteria": 1,
        "llm_units": 2,
        "code_units": 2,
    }
    assert "time" not in json.dumps(manifest)
    snapshot = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    mtimes = {p: p.stat().st_mtime_ns for p in snapshot}
    again = prep_run(TRACES, MATRIX, run, model=ModelSpec(provider="openai", model="gpt-4o-2024-08-06"))
    assert (again.packets_written, again.packets_unchanged, again.code_verdicts_written) == (0, 2, 0)
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == snapshot
    assert {p: p.stat().st_mtime_ns for p in snapshot} == mtimes


def test_open_run_rederives_the_keys_from_the_inputs_alone(tmp_path: Path) -> None:
    prep_run(TRACES, MATRIX, tmp_path)
    packet_keys = sorted(p.name.split(".")[0] for p in (tmp_path / "packets").iterdir())
    run = open_run(tmp_path)
    assert sorted(u.key for u in run.units if u.kind == "llm") == packet_keys
    assert [u.trace_ids for u in run.units] == [("t1", "t2"), ("t3",), ("t1", "t2"), ("t3",)]
    assert [p.key for p in list_packets(tmp_path)] == [u.key for u in run.units if u.kind == "llm"]
    traces = tmp_path / "inputs" / "traces.jsonl"
    traces.write_text(traces.read_text().replace("Done.", "Done!"))
    with pytest.raises(InputFileError, match="changed since PREP"):
        open_run(tmp_path)
    with pytest.raises(UsageError, match="not a prepared run"):
        open_run(tmp_path / "nowhere")


def test_an_outside_judge_gives_exactly_the_expected_rows(tmp_path: Path) -> None:
    prep_run(TRACES, MATRIX, tmp_path)
    status = run_status(tmp_path)
    assert (status.llm_units, status.code_units, status.verdicts_present, len(status.missing_keys)) == (
        2,
        2,
        2,
        2,
    )
    assert not status.ready
    for packet in list_packets(tmp_path):
        judge_outside(packet, decide_for(packet))
    assert run_status(tmp_path).ready
    judged = collect_results(tmp_path)
    got = [
        (
            r.trace_id,
            r.criterion_id,
            r.verdict.result if r.verdict else None,
            r.judge.runtime if r.judge else None,
        )
        for r in judged.results
    ]
    assert got == [
        ("t1", "grounded", "pass", "test-runtime"),
        ("t1", "refunded", "pass", "code"),
        ("t1", "polite", "pass", "test-runtime"),
        ("t2", "grounded", "pass", "test-runtime"),
        ("t2", "refunded", "pass", "code"),
        ("t2", "polite", "pass", "test-runtime"),
        ("t3", "grounded", "pass", "test-runtime"),
        ("t3", "refunded", "fail", "code"),
        ("t3", "polite", "uncertain", "test-runtime"),
    ]
    t3_polite = judged.results[8].verdict
    assert t3_polite == CriterionVerdict(
        criterion_id="polite",
        critique="Looked at the transcript for polite.",
        result="uncertain",
        confidence=0.75,
        blocked_by="no tool output recorded",
    )
    assert judged.results[0].key == judged.results[3].key  # t1 and t2 share one judged unit
    assert judged.unit_axis == "matrix" and [t.id for t in judged.traces] == ["t1", "t2", "t3"]
    assert all(r.unscored_reason is None for r in judged.results)


def test_a_missing_verdict_is_named(tmp_path: Path) -> None:
    prep_run(TRACES, MATRIX, tmp_path)
    packets = list_packets(tmp_path)
    judge_outside(packets[0], decide_for(packets[0]))
    with pytest.raises(MissingVerdictsError) as info:
        collect_results(tmp_path)
    assert info.value.keys == [packets[1].key] and packets[1].key in str(info.value)
    assert missing_verdict_keys(open_run(tmp_path)) == [packets[1].key]


def test_bad_and_stale_verdict_files(tmp_path: Path) -> None:
    prep_run(TRACES, MATRIX, tmp_path)
    packets = list_packets(tmp_path)
    for packet in packets:
        judge_outside(packet, decide_for(packet))
    stale = tmp_path / "verdicts" / "ffffffffffffffffffff.verdict.json"
    stale.write_text("{}")
    assert run_status(tmp_path).stale_keys == ("ffffffffffffffffffff",)
    assert len(collect_results(tmp_path).results) == 9
    bad = Path(packets[0].verdict_file)
    bad.write_text(bad.read_text().replace('"pass"', '"maybe"'))
    status = run_status(tmp_path)
    assert list(status.invalid) == [packets[0].key] and "'maybe'" in status.invalid[packets[0].key]
    with pytest.raises(VerdictFileError, match="'maybe'"):
        collect_results(tmp_path)


def test_a_check_that_raises_becomes_unscored_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = tmp_path / "helix_test_user_checks.py"
    module.write_text("def explode(trace):\n    raise RuntimeError('no database here')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    matrix = CriteriaMatrix(
        subject="shop", criteria=(code("explodes", name="helix_test_user_checks:explode"),)
    )
    summary = prep_run(TRACES, matrix, tmp_path / "run")
    assert (summary.llm_units, summary.code_units, summary.code_unscored) == (0, 2, 2)
    assert run_status(tmp_path / "run").unscored == 2
    rows = collect_results(tmp_path / "run").results
    assert [r.trace_id for r in rows] == ["t1", "t2", "t3"]
    assert all(r.verdict is None and "no database here" in (r.unscored_reason or "") for r in rows)
    assert all(r.judge == JudgeInfo(runtime="code") for r in rows)


def test_criterion_axis_and_growing_inputs_keep_earlier_verdicts(tmp_path: Path) -> None:
    prep_run(TRACES[:1], MATRIX, tmp_path, unit="criterion")
    first = list_packets(tmp_path)
    assert [p.criterion_ids for p in first] == [("grounded",), ("polite",)]
    for packet in first:
        judge_outside(packet, decide_for(packet))
    summary = prep_run(TRACES, MATRIX, tmp_path, unit="criterion")
    assert (summary.packets_unchanged, summary.packets_written) == (0, 4)  # trace_ids of old units grew
    assert missing_verdict_keys(open_run(tmp_path)) == [p.key for p in list_packets(tmp_path)][2:]
    summary = prep_run(TRACES[2:], MATRIX, tmp_path, unit="criterion")
    assert summary.packets_removed == 2
    stale = set(run_status(tmp_path).stale_keys)  # t1's two LLM verdicts and its code verdict
    assert len(stale) == 3 and {p.key for p in first} < stale


def test_a_judge_model_must_run_at_temperature_zero(tmp_path: Path) -> None:
    hot = ModelSpec(provider="openai", model="gpt-4o-2024-08-06", temperature=0.7)
    with pytest.raises(UsageError, match="temperature 0.7"):
        prep_run(TRACES, MATRIX, tmp_path, model=hot)


DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


@pytest.mark.realdata
def test_real_tau_bench_traces_prep_and_rederive(tmp_path: Path) -> None:
    source = DATA / "tau-bench-historical-trajectories" / "gpt-4o-airline.json"
    if not source.is_file():
        pytest.skip(f"{source} is absent")
    from helix.traces import read_traces

    traces = read_traces(source).traces[:40]
    matrix = CriteriaMatrix(
        subject="airline",
        criteria=(llm("follows_policy"), code("no_tool_errors", name="no_unhandled_tool_error")),
    )
    first = prep_run(traces, matrix, tmp_path)
    assert (first.traces, first.llm_units, first.code_units) == (40, 40, 40)
    assert prep_run(traces, matrix, tmp_path).packets_written == 0
    packets = list_packets(tmp_path)
    assert [p.key for p in packets] == [u.key for u in open_run(tmp_path).units if u.kind == "llm"]
    for trace, packet in zip(traces, packets, strict=True):
        assert packet.trace_ids == (trace.id,)
        assert len(packet.trajectory.transcript) == len(trace.messages or [])
        assert trace.id not in packet.model_dump_json(exclude={"trace_ids"})
    assert run_status(tmp_path).missing_keys == tuple(p.key for p in packets)
