"""Play a scenario into a canonical :class:`~helix.traces.Trace`, and grade the shop it leaves behind.

:func:`run_episode` is a pure function of ``(scenario, seed, rates)``: no clock, no global randomness,
so the same inputs give the same trace byte for byte (a campaign can use it as its dispatch).

``criteria_path`` is re-exported here for callers that take everything episode-related from this module.

Ground truth travels in ``trace.metadata["_ground_truth"]``. Keys starting with ``_`` are for tests
and calibration only: every renderer that shows a trace to a judge must drop them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any

from .._exceptions import UsageError
from .._util import content_hash
from ..traces import Score, Trace
from ._agent import play_conversation
from ._mistakes import MistakeKind, MistakeRates
from ._resources import criteria_path
from ._scenarios import SCENARIOS, ShopScenario, graded_view
from ._shop import ShopBackend
from ._transcript import Transcript

__all__ = [
    "DEFAULT_RATES",
    "GROUND_TRUTH_KEY",
    "SUBJECT",
    "Episode",
    "GoldDifference",
    "criteria_path",
    "diff_states",
    "episode_seed",
    "episode_trace_id",
    "generate_episodes",
    "run_episode",
]

SUBJECT = "support-shop"
DEFAULT_RATES = MistakeRates()
"""The default mistake mix (``MistakeRates()``)."""
GROUND_TRUTH_KEY = "_ground_truth"
"""Metadata key holding what the simulator knows; judges must never see keys starting with ``_``."""


@dataclass(frozen=True, kw_only=True)
class GoldDifference:
    """One place where the produced state differs from the gold state (``None`` = absent)."""

    path: str
    expected: Any
    produced: Any

    def __str__(self) -> str:
        return f"{self.path}: expected {self.expected!r}, produced {self.produced!r}"


@dataclass(frozen=True, kw_only=True)
class Episode:
    """One played conversation: its trace, the shop it left behind, and the ground truth about it."""

    scenario_id: str
    seed: int
    trace: Trace
    produced_state: dict[str, Any]
    """The whole backend after the conversation, as JSON."""
    gold_match: bool
    gold_diff: tuple[GoldDifference, ...]
    """Differences between the graded views of the produced and the gold state (empty on a match)."""
    mistakes: tuple[MistakeKind, ...]
    """The mistakes the agent actually made in this run (ground truth)."""
    transient_failures: int
    """How many tool calls the backend failed transiently (not the agent's fault)."""


def diff_states(gold: Any, produced: Any, path: str = "") -> list[GoldDifference]:
    """Every leaf where two JSON values differ, with dotted paths (list items by index)."""
    if isinstance(gold, dict) and isinstance(produced, dict):
        out: list[GoldDifference] = []
        for key in sorted(set(gold) | set(produced), key=str):
            sub = f"{path}.{key}" if path else str(key)
            out.extend(diff_states(gold.get(key), produced.get(key), sub))
        return out
    if isinstance(gold, list) and isinstance(produced, list):
        out = []
        for i in range(max(len(gold), len(produced))):
            g = gold[i] if i < len(gold) else None
            p = produced[i] if i < len(produced) else None
            out.extend(diff_states(g, p, f"{path}[{i}]"))
        return out
    return [] if gold == produced else [GoldDifference(path=path, expected=gold, produced=produced)]


def _rng(scenario: ShopScenario, seed: int, stream: str) -> random.Random:
    # A string seed is hashed with SHA-512 by `random`, so streams are stable across processes.
    return random.Random(f"{SUBJECT}/{scenario.id}/{seed}/{stream}")


def _start_time(scenario: ShopScenario, seed: int) -> datetime:
    day = scenario.initial_state().as_of
    offset = _rng(scenario, seed, "clock").randint(0, 9 * 3600 - 1)
    return datetime.combine(day, time(8, 0), tzinfo=UTC) + timedelta(seconds=offset)


def episode_trace_id(scenario_id: str, seed: int) -> str:
    """The deterministic id of the trace of ``scenario_id`` played with ``seed``."""
    return f"{SUBJECT}/{scenario_id}/{seed}"


def run_episode(scenario: ShopScenario, *, seed: int, rates: MistakeRates = DEFAULT_RATES) -> Episode:
    """Play ``scenario`` with the scripted agent; the same arguments always give the same episode."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise UsageError(f"seed={seed!r} must be an int; pass e.g. seed=0")
    state = scenario.initial_state()
    backend = ShopBackend(
        state,
        failure_rate=rates.transient_tool_failure,
        rng=_rng(scenario, seed, "backend"),
        forced_failures=scenario.forced_failures,
    )
    transcript = Transcript(start=_start_time(scenario, seed), rng=_rng(scenario, seed, "timing"))
    mistakes = play_conversation(
        scenario=scenario,
        backend=backend,
        transcript=transcript,
        rates=rates,
        rng=_rng(scenario, seed, "agent"),
    )
    produced = state.snapshot()
    diff = tuple(diff_states(scenario.gold_state, graded_view(produced)))
    gold_match = not diff
    messages = transcript.messages
    final = messages[-1].content
    trace = Trace(
        id=episode_trace_id(scenario.id, seed),
        session_id=f"{SUBJECT}/{scenario.id}",
        name=scenario.title,
        input=messages[0].content,
        output=final,
        start=transcript.start,
        end=transcript.now,
        status="ok",
        metadata={
            "subject": SUBJECT,
            "scenario_id": scenario.id,
            "seed": seed,
            "agent": "scripted",
            GROUND_TRUTH_KEY: {
                "mistakes": list(mistakes),
                "scenario_kind": scenario.kind,
                "expected_outcome": scenario.expected,
                "gold_match": gold_match,
                "gold_diff": [str(d) for d in diff],
                "transient_failures": backend.transient_failures,
            },
        },
        events=transcript.events,
        messages=messages,
        scores=[
            Score(
                name="gold_match",
                value=gold_match,
                source="helix.examples.support_shop",
                comment="; ".join(str(d) for d in diff) or None,
            )
        ],
    )
    return Episode(
        scenario_id=scenario.id,
        seed=seed,
        trace=trace,
        produced_state=produced,
        gold_match=gold_match,
        gold_diff=diff,
        mistakes=mistakes,
        transient_failures=backend.transient_failures,
    )


def episode_seed(seed: int, index: int) -> int:
    """The seed of the ``index``-th episode of :func:`generate_episodes` (a 31-bit hash of both)."""
    return int(content_hash([SUBJECT, seed, index], length=8), 16) & 0x7FFFFFFF


def generate_episodes(*, n: int, seed: int, rates: MistakeRates = DEFAULT_RATES) -> list[Episode]:
    """``n`` episodes cycling through :data:`SCENARIOS` in order, each with its own derived seed."""
    if not isinstance(n, int) or n < 0:
        raise UsageError(f"n={n!r} must be a non-negative int (the number of episodes to generate)")
    return [
        run_episode(SCENARIOS[i % len(SCENARIOS)], seed=episode_seed(seed, i), rates=rates) for i in range(n)
    ]
