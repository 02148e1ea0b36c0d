"""Living suites never shrink: read a run's suite histories and check each revision kept every case.

A living suite (a regression dataset, a criteria list) is append-only: a case once added stays. Its
history sits in the run as ``suites/<name>.history.jsonl``, one :class:`SuiteRevision` per line in
the order written. The audit checks that revision numbers increase and that each revision's ids are
a superset of the previous one's. A run without a ``suites/`` directory has nothing to measure.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._findings import AuditStatus, Detail, Evidence, Finding, worst_status

__all__ = [
    "SUITE_HISTORY_DIR",
    "SUITE_HISTORY_SUFFIX",
    "SUITE_REVISION_FORMAT_VERSION",
    "SuiteCheck",
    "SuiteRevision",
    "audit_suites",
    "check_suite_history",
]

SUITE_REVISION_FORMAT_VERSION = 1
SUITE_HISTORY_DIR = "suites"
SUITE_HISTORY_SUFFIX = ".history.jsonl"


class SuiteRevision(BaseModel):
    """One line of a suite history: the suite's full membership at a revision."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = SUITE_REVISION_FORMAT_VERSION
    suite: str = Field(min_length=1)
    revision: int = Field(ge=0)
    ids: tuple[str, ...]
    """Every case (or criterion) id in the suite at this revision."""


@dataclass(frozen=True, kw_only=True)
class SuiteCheck:
    """What one history file showed."""

    name: str
    status: AuditStatus
    revisions: int
    size: int
    """Members at the last readable revision."""
    removed: tuple[str, ...]
    """Ids that some revision dropped (the first shrink found)."""
    note: str


def check_suite_history(path: str | Path) -> SuiteCheck:
    """Read one ``<name>.history.jsonl`` and check that it only ever grew."""
    p = Path(path)
    name = p.name.removesuffix(SUITE_HISTORY_SUFFIX)
    revisions: list[SuiteRevision] = []
    for number, line in enumerate(p.read_bytes().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            revisions.append(SuiteRevision.model_validate(orjson.loads(line)))
        except (orjson.JSONDecodeError, ValidationError) as exc:
            reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            return SuiteCheck(
                name=name,
                status="fail",
                revisions=len(revisions),
                size=len(revisions[-1].ids) if revisions else 0,
                removed=(),
                note=f"{p.name} line {number} is not a suite revision ({reason}); its growth cannot be proven",
            )
    if not revisions:
        return SuiteCheck(
            name=name, status="not-measured", revisions=0, size=0, removed=(), note="history is empty"
        )
    for prev, cur in zip(revisions, revisions[1:], strict=False):
        if cur.revision <= prev.revision:
            return SuiteCheck(
                name=name,
                status="fail",
                revisions=len(revisions),
                size=len(revisions[-1].ids),
                removed=(),
                note=f"revision {cur.revision} follows revision {prev.revision}: the history was rewritten",
            )
        dropped = tuple(sorted(set(prev.ids) - set(cur.ids)))
        if dropped:
            return SuiteCheck(
                name=name,
                status="fail",
                revisions=len(revisions),
                size=len(revisions[-1].ids),
                removed=dropped,
                note=f"revision {cur.revision} dropped {len(dropped)} id(s) present at revision {prev.revision}",
            )
    first, last = revisions[0], revisions[-1]
    return SuiteCheck(
        name=name,
        status="pass",
        revisions=len(revisions),
        size=len(last.ids),
        removed=(),
        note=f"grew from {len(set(first.ids))} to {len(set(last.ids))} over {len(revisions)} revision(s)",
    )


def audit_suites(run_dir: str | Path) -> Finding:
    """``suites-never-shrank``: every suite history in the run only grew (not measured without one)."""
    folder = Path(run_dir) / SUITE_HISTORY_DIR
    files = sorted(folder.glob("*" + SUITE_HISTORY_SUFFIX)) if folder.is_dir() else []
    checks = [check_suite_history(f) for f in files]
    details = tuple(Detail(subject=c.name, status=c.status, note=c.note) for c in checks)
    status = worst_status((c.status for c in checks), empty="not-measured")
    shrank = tuple(c.name for c in checks if c.status == "fail")
    removed = tuple(sorted({i for c in checks for i in c.removed}))[:20]
    if not checks:
        summary = f"no living-suite history in the run ({SUITE_HISTORY_DIR}/*{SUITE_HISTORY_SUFFIX})"
        next_step = (
            "When the run uses a living suite, keep its history beside the run so its growth can be checked."
        )
    elif shrank:
        summary = f"{len(shrank)} of {len(checks)} living suite(s) lost cases or rewrote history"
        next_step = (
            f"Restore the dropped ids of {', '.join(shrank)} (a living suite is append-only: retire a case by "
            "marking it, never by deleting it), then append a new revision."
        )
    else:
        summary = f"{len(checks)} living suite(s) only grew"
        next_step = "Nothing to do."
    return Finding(
        area="pipeline-hygiene",
        check="suites-never-shrank",
        status=status,
        summary=summary,
        evidence=Evidence(
            counts={"suites": len(checks), "shrank": len(shrank), "removed_ids": len(removed)},
            ids={"shrank": shrank, "removed": removed},
        ),
        next_step=next_step,
        details=details,
    )
