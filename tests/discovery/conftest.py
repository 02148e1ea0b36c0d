"""Discovery runs over the example shop's traces, with SYNTHETIC verdicts written by the tests.

The verdicts here are made up by the test code to exercise the counting: they are not judgments,
are never shipped, and say nothing about any agent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest

from helix.discovery import DiscoveryRun, open_discovery, prep_discovery
from helix.examples import generate_episodes
from helix.traces import Trace

SYNTHETIC_JUDGE = {"runtime": "synthetic-test", "model": "none-synthetic"}


@pytest.fixture(scope="session")
def shop_traces() -> list[Trace]:
    return [e.trace for e in generate_episodes(n=12, seed=3)]


def write_determination(
    run: DiscoveryRun, key: str, body: Mapping[str, Any] | None, *, status: str = "scored"
) -> Path:
    path = run.determine.verdict_path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"version": 1, "key": key, "status": status, "judge": SYNTHETIC_JUDGE}
    if status == "unscored":
        doc["error"] = "synthetic: unscored"
    else:
        doc["determination"] = body
    path.write_bytes(orjson.dumps(doc))
    return path


def fail_body(index: int, agent: str, note: str) -> dict[str, Any]:
    return {
        "critique": "synthetic critique",
        "result": "fail",
        "confidence": 0.8,
        "blocked_by": None,
        "first_wrong": {"index": index, "agent": agent, "note": note},
    }


PASS_BODY = {
    "critique": "synthetic critique",
    "result": "pass",
    "confidence": 0.9,
    "blocked_by": None,
    "first_wrong": None,
}

MakeRun = Callable[..., DiscoveryRun]


@pytest.fixture
def make_run(tmp_path: Path, shop_traces: list[Trace]) -> MakeRun:
    def make(traces: list[Trace] | None = None, name: str = "run") -> DiscoveryRun:
        prep_discovery(traces or shop_traces, tmp_path / name, subject="support-shop")
        return open_discovery(tmp_path / name)

    return make
