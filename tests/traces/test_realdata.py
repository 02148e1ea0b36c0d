"""tau-bench historical trajectories (gpt-4o, airline) read end to end; skipped when the data is absent."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from helix.traces import read_traces

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
AIRLINE = DATA / "tau-bench-historical-trajectories" / "gpt-4o-airline.json"

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def airline() -> Path:
    if not AIRLINE.exists():
        pytest.skip(f"real data not present: {AIRLINE}")
    return AIRLINE


def test_airline_reads_every_run(airline: Path) -> None:
    intake = read_traces(airline)
    report = intake.report
    assert report.format == "tau-bench"
    assert len(intake.traces) == 200
    assert report.records_skipped == 0
    rewards = Counter(s.value for t in intake.traces for s in t.scores if s.name == "reward")
    assert rewards == {1.0: 84, 0.0: 116}
    assert len({t.id for t in intake.traces}) == 200
    assert intake.traces[0].id == "gpt-4o-airline:0:0"
    # Counts published with the data (SOURCE.md).
    assert report.tools["get_reservation_details"] == 377
    assert sum(report.tools.values()) == 1164


def test_airline_tool_events_link_to_their_calls(airline: Path) -> None:
    intake = read_traces(airline)
    linked = 0
    for trace in intake.traces:
        calls = {}
        for event in trace.events:
            if event.kind == "llm":
                for call in event.output[0]["tool_calls"]:
                    calls[call["id"]] = call
            elif event.kind == "tool":
                call = calls[event.tool_call_id]  # asked for before the result came back
                assert event.name == call["name"]
                assert event.input == call["arguments"]
                linked += 1
        assert trace.input is not None and trace.output is not None
        assert trace.metadata["_task"]["user_id"]
    assert linked == 1164
