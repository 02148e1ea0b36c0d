"""The report over 200 real tau-bench airline trajectories, scored by the benchmark's own reward."""

from __future__ import annotations

import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from helix.judging import CodeCheckSpec, CriteriaMatrix, Criterion, CriterionVerdict, JudgedRun, JudgeInfo
from helix.judging import TraceCriterionResult as Row
from helix.report import render_report, trace_anchor
from helix.scoring import build_scorecard, masked_scorecard_json, scorecard_json
from helix.traces import read_traces

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
TAU = DATA / "tau-bench-historical-trajectories" / "gpt-4o-airline.json"

pytestmark = pytest.mark.realdata


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


@pytest.fixture(scope="module")
def tau_run() -> JudgedRun:
    if not TAU.exists():
        pytest.skip(f"real data not present at {TAU}")
    traces = tuple(read_traces(TAU).traces)
    criterion = Criterion(
        id="task-reward", title="tau-bench reward is 1", severity="critical", kind="code",
        check=CodeCheckSpec(name="source_score", args={"name": "reward"}),
    )  # fmt: skip
    judge = JudgeInfo(runtime="code")
    rows = []
    for t in traces:
        reward = next((s.value for s in t.scores if s.name == "reward"), None)
        if reward is None:
            rows.append(Row(trace_id=t.id, criterion_id="task-reward", key=t.id, verdict=None,
                            unscored_reason="no reward score", judge=judge))  # fmt: skip
            continue
        verdict = CriterionVerdict(
            criterion_id="task-reward", critique=f"The benchmark reward is {reward!r}.",
            result="pass" if reward == 1 else "fail", confidence=1.0,
        )  # fmt: skip
        rows.append(Row(trace_id=t.id, criterion_id="task-reward", key=t.id, verdict=verdict, judge=judge))
    return JudgedRun(
        run_dir=str(DATA.resolve() / "run-20261129-tau"),
        traces=traces,
        matrix=CriteriaMatrix(subject="tau-bench airline", criteria=(criterion,)),
        results=tuple(rows),
        unit_axis="criterion",
    )


def test_scorecard_matches_the_published_label_balance(tau_run: JudgedRun) -> None:
    sc = build_scorecard(tau_run)
    (score,) = sc.criteria
    assert (score.n_pass, score.n_fail, score.n_unscored) == (84, 116, 0)
    assert score.pass_rate == pytest.approx(0.42)
    assert (
        score.pass_rate_interval is not None
        and score.pass_rate_interval.low < 0.42 < score.pass_rate_interval.high
    )
    assert not sc.gate.passed and sc.gate.blocking_failures == ("task-reward",)
    assert scorecard_json(sc) == scorecard_json(build_scorecard(tau_run))
    assert str(DATA.resolve()).encode() not in masked_scorecard_json(sc)


def test_report_over_real_traces_is_inert_and_complete(tau_run: JudgedRun) -> None:
    sc = build_scorecard(tau_run)
    start = time.perf_counter()
    page = render_report(tau_run, sc)
    elapsed = time.perf_counter() - start
    assert elapsed < 5.0
    parser = _Tags()
    parser.feed(page)
    names = [t for t, _ in parser.tags]
    assert names.count("script") == 1 and "img" not in names
    assert not any(k.startswith("on") for _, a in parser.tags for k in a)
    sections = [a for t, a in parser.tags if t == "section" and "trace" in (a.get("class") or "").split()]
    assert len(sections) == 200
    assert {a["id"] for a in sections} == {trace_anchor(t.id) for t in tau_run.traces}
    assert sum(1 for t, a in parser.tags if "tool-call" in (a.get("class") or "").split()) > 200
