"""Packets: self-explanatory, keyed by their judged content, with a verdict shape a runtime can follow."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from helix import InputFileError, UsageError
from helix.judging import (
    INSTRUCTIONS,
    PROMPT_VERSION,
    CriteriaMatrix,
    Criterion,
    Pin,
    build_packet,
    build_units,
    packet_bytes,
    parse_verdict_file,
    read_packet,
    verdict_json_schema,
    write_packet,
)
from helix.traces import Message, Trace

MATRIX = CriteriaMatrix(
    subject="shop",
    criteria=(
        Criterion(
            id="grounded",
            title="Grounded",
            kind="llm",
            question="Is the answer backed by tool results?",
            pass_definition="Yes.",
            fail_definition="No.",
        ),
        Criterion(
            id="polite",
            title="Polite",
            kind="llm",
            question="Polite?",
            pass_definition="Yes.",
            fail_definition="No.",
        ),
        Criterion(id="ran", title="Ran", kind="code", check={"name": "max_turns", "args": {"max": 5}}),  # type: ignore[arg-type]
    ),
)
TRACE = Trace(
    id="t1",
    input="hi",
    output="hello",
    messages=[Message(role="user", content="hi"), Message(role="assistant", content="hello")],
)


def llm_unit_and_packet(tmp_path: Path, pin: Pin | None = None):  # type: ignore[no-untyped-def]
    units = build_units([TRACE], MATRIX)
    unit = next(u for u in units if u.kind == "llm")
    packet = build_packet(
        unit, verdict_file=tmp_path / "v" / f"{unit.key}.verdict.json", pin=pin or Pin(model=None)
    )
    return units, packet


def test_a_packet_holds_everything_a_stranger_needs(tmp_path: Path) -> None:
    _, packet = llm_unit_and_packet(tmp_path, Pin(model="gpt-4o-2024-08-06", provider="openai"))
    data = json.loads(packet_bytes(packet))
    assert list(data)[:4] == ["version", "key", "instructions", "delivery"]
    assert data["instructions"] == INSTRUCTIONS
    assert Path(data["verdict_file"]).is_absolute() and data["verdict_file"].endswith(
        f"{packet.key}.verdict.json"
    )
    assert data["pin"] == {
        "model": "gpt-4o-2024-08-06",
        "provider": "openai",
        "temperature": 0.0,
        "prompt_version": PROMPT_VERSION,
    }
    assert [c["id"] for c in data["criteria"]] == ["grounded", "polite"]
    assert data["criteria"][0]["question"] == "Is the answer backed by tool results?"
    assert data["trajectory"]["transcript"][1] == {"index": 1, "role": "assistant", "content": "hello"}
    assert data["trace_ids"] == ["t1"]
    assert packet.content_key() == packet.key


def test_the_example_verdict_fits_the_schema_and_the_parser(tmp_path: Path) -> None:
    _, packet = llm_unit_and_packet(tmp_path, Pin(model="m-2025-01-01"))
    example = packet.verdict_format.example
    schema = packet.verdict_format.json_schema
    jsonschema.validate(example, schema)
    target = Path(packet.verdict_file)
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(example), encoding="utf-8")
    parsed = parse_verdict_file(target, key=packet.key, criterion_ids=packet.criterion_ids)
    assert [v.criterion_id for v in parsed.verdicts] == ["grounded", "polite"]
    assert parsed.judge is not None and parsed.judge.prompt_version == PROMPT_VERSION


def test_the_schema_refuses_what_the_parser_refuses() -> None:
    schema = verdict_json_schema("k" * 20, ["grounded"])
    good = {
        "version": 1,
        "key": "k" * 20,
        "judge": {"runtime": "r", "model": "m"},
        "verdicts": [{"criterion_id": "grounded", "critique": "c", "result": "pass", "confidence": 1}],
    }
    jsonschema.validate(good, schema)
    for bad in (
        {**good, "key": "x"},
        {**good, "verdicts": [{**good["verdicts"][0], "result": "maybe"}]},  # type: ignore[dict-item]
        {**good, "verdicts": [{**good["verdicts"][0], "result": "uncertain"}]},  # type: ignore[dict-item]
        {**good, "verdicts": [{**good["verdicts"][0], "confidence": 2}]},  # type: ignore[dict-item]
        {**good, "judge": {"runtime": "r"}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_write_skips_unchanged_and_read_detects_edits(tmp_path: Path) -> None:
    _, packet = llm_unit_and_packet(tmp_path)
    path = tmp_path / f"{packet.key}.packet.json"
    assert write_packet(path, packet) is True
    assert write_packet(path, packet) is False
    assert read_packet(path) == packet
    edited = json.loads(path.read_text())
    edited["trajectory"]["output"] = "I refund everyone"
    path.write_text(json.dumps(edited))
    with pytest.raises(InputFileError, match="does not match the packet's content"):
        read_packet(path)
    path.write_text('{"version": 1}')
    with pytest.raises(InputFileError, match="not a valid packet"):
        read_packet(path)


def test_code_units_have_no_packet(tmp_path: Path) -> None:
    units, _ = llm_unit_and_packet(tmp_path)
    code = next(u for u in units if u.kind == "code")
    with pytest.raises(UsageError, match="only llm units have packets"):
        build_packet(code, verdict_file=tmp_path / "x", pin=Pin(model=None))
