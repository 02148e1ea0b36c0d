"""Criteria drafts from discovery, and reconciling them into a living criteria file.

The draft (``aggregate/criteria.draft.yaml``) is a criteria matrix :func:`~helix.judging.load_criteria`
reads (so it can be judged as is): one LLM criterion per eval-worthy category, with a severity
suggested from its failure rate, and the supporting evidence (failure rate, interval, trace ids)
as YAML comments above it. Fixable categories are not drafted: they go to the failure handoff.

:func:`reconcile_criteria` upserts a draft into a criteria file by id and never drops one: the
criteria file is a living suite, its history kept with the one living-suite writer
(``suites/<name>.history.jsonl`` beside it, which ``helix audit --suites DIR`` checks).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .._util import (
    SUITE_HISTORY_DIR,
    append_revision,
    assert_monotonic_growth,
    history_path,
    read_suite_history,
    upsert_by_id,
    write_atomic,
)
from ..judging import CriteriaMatrix, Criterion, Severity, dump_criteria, load_criteria

__all__ = [
    "ReconcileSummary",
    "criteria_draft",
    "criteria_draft_yaml",
    "reconcile_criteria",
    "suggest_severity",
]

if TYPE_CHECKING:
    from ._result import CategoryStat, DiscoveryResult


def suggest_severity(rate: float) -> Severity:
    """A starting severity from how often the failure occurs (review it: impact is a human call)."""
    if rate >= 0.25:
        return "critical"
    if rate >= 0.05:
        return "major"
    return "minor"


def _criterion(c: CategoryStat) -> Criterion:
    return Criterion(
        id=c.id,
        title=c.title,
        severity=suggest_severity(c.rate),
        kind="llm",
        question=c.question,
        pass_definition=c.pass_definition,
        fail_definition=c.fail_definition,
    )


def criteria_draft(result: DiscoveryResult) -> CriteriaMatrix | None:
    """The eval-worthy categories as a criteria matrix (None when there is none)."""
    worthy = [c for c in result.categories if c.routing == "eval-worthy"]
    if not worthy:
        return None
    return CriteriaMatrix(
        subject=result.subject or "discovered",
        description=(
            f"Drafted by helix discover (prompt {result.prompt_version}) from {result.traces} traces; "
            "review before use."
        ),
        criteria=tuple(_criterion(c) for c in worthy),
    )


def criteria_draft_yaml(result: DiscoveryResult) -> str:
    """The draft as YAML with the evidence of each criterion in comments above it."""
    matrix = criteria_draft(result)
    if matrix is None:
        return "# no eval-worthy category was found: nothing to draft (fixables are in handoff.json)\n"
    text = dump_criteria(matrix)
    by_id = {c.id: c for c in result.categories}
    lines: list[str] = []
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("- id: "):
            cid = stripped[len("- id: ") :].strip().strip("'\"")
            c = by_id.get(cid)
            if c is not None:
                pad = line[: len(line) - len(stripped)]
                shown = ", ".join(c.trace_ids[:10]) + (" ..." if len(c.trace_ids) > 10 else "")
                lines.append(
                    f"{pad}# failed {c.failures} of {result.decided} decided traces ({c.rate:.1%}, 95% CI "
                    f"{c.ci95[0]:.1%}-{c.ci95[1]:.1%}); severity suggested from the rate"
                )
                lines.append(f"{pad}# supporting traces: {shown}")
        lines.append(line)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, kw_only=True)
class ReconcileSummary:
    """What :func:`reconcile_criteria` did."""

    path: Path
    history: Path
    added: tuple[str, ...]
    updated: tuple[str, ...]
    unchanged: tuple[str, ...]
    revision: int | None
    """The history revision written (None when nothing changed)."""

    def describe(self) -> str:
        """One line for the terminal."""
        rev = f"revision {self.revision}" if self.revision is not None else "no new revision"
        return (
            f"{self.path}: {len(self.added)} added, {len(self.updated)} updated, {len(self.unchanged)} unchanged "
            f"({rev} in {self.history})"
        )


def reconcile_criteria(draft: str | Path, into: str | Path, *, source: str | None = None) -> ReconcileSummary:
    """Upsert the criteria of ``draft`` into the criteria file ``into`` by id; never drop one.

    ``into`` is created when missing (with the draft's subject). Refuses, loudly
    (:class:`~helix._util.SuiteShrankError`), when ``into`` lost ids its history recorded (restore
    them first). Writes ``into`` atomically, then appends the new membership to
    ``suites/<name>.history.jsonl`` beside it (``source`` records where the change came from).
    """
    draft_matrix = load_criteria(draft)
    target = Path(into)
    suite = target.name.split(".")[0] or "criteria"
    folder = target.parent
    hist = history_path(folder, suite)
    current = load_criteria(target) if target.is_file() else None
    current_criteria = current.criteria if current is not None else ()
    revisions = read_suite_history(hist)
    if revisions:
        assert_monotonic_growth(revisions[-1].ids, [c.id for c in current_criteria], suite=suite)
    merged = upsert_by_id(current_criteria, draft_matrix.criteria, id_of=lambda c: c.id)
    matrix = CriteriaMatrix(
        version=(current or draft_matrix).version,
        subject=(current or draft_matrix).subject,
        description=(current or draft_matrix).description,
        criteria=merged.members,
    )
    if merged.changed or current is None:
        write_atomic(target, dump_criteria(matrix))
    rev = append_revision(
        folder,
        suite,
        [c.id for c in merged.members],
        added=merged.added,
        updated=merged.updated,
        source=source or f"reconcile {Path(draft).name}",
    )
    return ReconcileSummary(
        path=target,
        history=folder / SUITE_HISTORY_DIR / hist.name,
        added=merged.added,
        updated=merged.updated,
        unchanged=merged.unchanged,
        revision=rev.revision if rev is not None else None,
    )
