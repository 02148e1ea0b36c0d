"""What a reviewer labels: one (trace, criterion) item with the judge's verdict, if any.

:func:`load_review_set` reads a Helix run directory (see :mod:`helix.judging`): its traces, its
criteria, and every verdict file present. A run whose verdicts are incomplete still reviews: an item
without a verdict file shows "no verdict", one whose file breaks the contract shows why.
:func:`order_queue` is pure: it orders items so labels accumulate where they matter most.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .._exceptions import UsageError, VerdictFileError
from .._util import content_hash
from ..judging import Criterion, open_run, parse_verdict_file
from ..traces import Trace
from ._blocked import blocked_kind, blocked_text
from ._labels import DECIDED_LABELS, HumanLabel

__all__ = ["JudgeResult", "ReviewItem", "ReviewSet", "is_disagreement", "load_review_set", "order_queue"]

JudgeResult = Literal["pass", "fail", "uncertain", "unscored", "none"]
"""The judge's result on an item; ``none`` = no verdict file yet (or an invalid one)."""


@dataclass(frozen=True, kw_only=True)
class ReviewItem:
    """One (trace, criterion) to label, with what the judge said."""

    trace_id: str
    criterion_id: str
    judge_result: JudgeResult
    critique: str = ""
    """The judge's reasoning, or why there is no verdict."""
    confidence: float | None = None
    """The judge's confidence; None when it gave none."""
    blocked_by: str | None = None
    """What blocked an abstention, as text (``kind: detail``, or an old verdict's free text)."""
    blocked_kind: str | None = None
    """``missing-evidence``, ``factual-intent``, ``normative`` or ``scope`` (None: not blocked)."""
    judge: str = ""
    """Who judged (runtime · model · prompt version)."""


@dataclass(frozen=True, kw_only=True)
class ReviewSet:
    """Everything the review page shows for one run."""

    run_dir: Path
    run_id: str
    """Stable id of the run's inputs (keeps offline pages of different runs apart in localStorage)."""
    traces: tuple[Trace, ...]
    criteria: tuple[Criterion, ...]
    items: tuple[ReviewItem, ...]


def _judge_text(runtime: str, model: str | None, prompt_version: str | None) -> str:
    return " · ".join(
        x for x in (runtime, model, f"prompt {prompt_version}" if prompt_version else None) if x
    )


def load_review_set(run_dir: str | Path, *, criterion_ids: Sequence[str] | None = None) -> ReviewSet:
    """The items of a run: every trace × LLM criterion (all criteria when the run has no LLM one).

    ``criterion_ids`` restricts the items to those criteria (an unknown id is refused).
    """
    run = open_run(run_dir)
    known = {c.id for c in run.matrix.criteria}
    if criterion_ids is not None:
        unknown = sorted(set(criterion_ids) - known)
        if unknown:
            raise UsageError(f"unknown criterion id(s) {unknown!r}; this run has {sorted(known)!r}")
        criteria = tuple(c for c in run.matrix.criteria if c.id in set(criterion_ids))
    else:
        criteria = run.matrix.llm_criteria or tuple(run.matrix.criteria)
    wanted = {c.id for c in criteria}
    found: dict[tuple[str, str], ReviewItem] = {}
    for unit in run.units:
        cids = [c for c in unit.criterion_ids if c in wanted]
        if not cids:
            continue
        path = run.verdict_path(unit.key)
        if not path.is_file():
            continue
        try:
            verdict = parse_verdict_file(path, key=unit.key, criterion_ids=unit.criterion_ids)
        except VerdictFileError as exc:
            for tid in unit.trace_ids:
                for cid in cids:
                    found[(tid, cid)] = ReviewItem(
                        trace_id=tid,
                        criterion_id=cid,
                        judge_result="none",
                        critique=f"invalid verdict file: {exc}",
                    )
            continue
        judge = verdict.judge
        who = _judge_text(judge.runtime, judge.model, judge.prompt_version) if judge else ""
        by_cid = {v.criterion_id: v for v in verdict.verdicts}
        for tid in unit.trace_ids:
            for cid in cids:
                v = by_cid.get(cid)
                if verdict.status == "unscored" or v is None:
                    item = ReviewItem(
                        trace_id=tid,
                        criterion_id=cid,
                        judge_result="unscored",
                        critique=verdict.error or "the judge returned no verdict for this criterion",
                        judge=who,
                    )
                else:
                    item = ReviewItem(
                        trace_id=tid,
                        criterion_id=cid,
                        judge_result=v.result,
                        critique=v.critique,
                        confidence=getattr(v, "confidence", None),
                        blocked_by=blocked_text(getattr(v, "blocked_by", None)),
                        blocked_kind=blocked_kind(getattr(v, "blocked_by", None)),
                        judge=who,
                    )
                found[(tid, cid)] = item
    items = tuple(
        found.get((t.id, c.id)) or ReviewItem(trace_id=t.id, criterion_id=c.id, judge_result="none")
        for t in run.traces
        for c in criteria
    )
    return ReviewSet(
        run_dir=run.run_dir,
        run_id=run.manifest.inputs.traces_sha256[:16] + run.manifest.inputs.criteria_sha256[:8],
        traces=run.traces,
        criteria=criteria,
        items=items,
    )


def is_disagreement(item: ReviewItem, human: str | None) -> bool:
    """True when a decided human label contradicts a decided judge verdict."""
    return human in DECIDED_LABELS and item.judge_result in DECIDED_LABELS and human != item.judge_result


def order_queue(
    items: Iterable[ReviewItem],
    labels: Iterable[HumanLabel] | Mapping[tuple[str, str], str] = (),
    *,
    seed: int = 0,
) -> list[ReviewItem]:
    """The review order: disagreements with the human labels first, then judge failures, then a
    balanced interleave of the rest (round-robin over judge result × criterion), so pass and fail
    labels accumulate together. Within each group the order is a seeded, stable shuffle.

    ``labels`` are the reviewer's current labels (or a mapping (trace, criterion) → label).
    """
    if isinstance(labels, Mapping):
        human: Mapping[tuple[str, str], str] = labels
    else:
        human = {(x.trace_id, x.criterion_id): x.label for x in labels}

    def shuffle_key(item: ReviewItem) -> str:
        return content_hash(f"{seed}\x00{item.trace_id}\x00{item.criterion_id}", length=16)

    pool = sorted(items, key=shuffle_key)
    first = [i for i in pool if is_disagreement(i, human.get((i.trace_id, i.criterion_id)))]
    taken = {id(i) for i in first}
    fails = [i for i in pool if id(i) not in taken and i.judge_result == "fail"]
    taken |= {id(i) for i in fails}
    strata: dict[tuple[str, str], list[ReviewItem]] = {}
    for i in pool:
        if id(i) not in taken:
            strata.setdefault((i.judge_result, i.criterion_id), []).append(i)
    rest: list[ReviewItem] = []
    queues = [strata[k] for k in sorted(strata)]
    depth = max((len(q) for q in queues), default=0)
    for level in range(depth):
        rest.extend(q[level] for q in queues if level < len(q))
    return first + fails + rest
