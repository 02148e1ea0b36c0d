"""Living suites never shrink: read a run's suite histories and check each revision kept every case.

A living suite (a regression dataset, a criteria list) is append-only: a case once added stays. Its
history is ``suites/<name>.history.jsonl``, one :class:`~helix._util.SuiteRevision` per line in the
order written, as the one living-suite writer (``helix._util.append_revision``, used by
``helix criteria reconcile`` and the dataset suites) writes it. The audit reads the same format and
applies the same rule (:func:`~helix._util.first_shrink`): revision numbers increase and each
revision's ids are a superset of the previous one's. Without a ``suites/`` directory there is
nothing to measure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .._exceptions import InputFileError
from .._util import (
    SUITE_HISTORY_DIR,
    SUITE_HISTORY_SUFFIX,
    SUITE_REVISION_FORMAT_VERSION,
    SuiteRevision,
    first_shrink,
    read_suite_history,
)
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
    try:
        revisions = read_suite_history(p)
    except InputFileError as exc:
        return SuiteCheck(
            name=name,
            status="fail",
            revisions=0,
            size=0,
            removed=(),
            note=f"{p.name} line {exc.line} is not a suite revision; its growth cannot be proven ({exc})",
        )
    if not revisions:
        return SuiteCheck(
            name=name, status="not-measured", revisions=0, size=0, removed=(), note="history is empty"
        )
    shrink = first_shrink(revisions)
    if shrink is not None:
        return SuiteCheck(
            name=name,
            status="fail",
            revisions=len(revisions),
            size=len(revisions[-1].ids),
            removed=shrink.removed,
            note=shrink.describe(),
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


def _suite_folder(directory: Path) -> Path:
    """``directory`` itself when it is a ``suites/`` folder, else its ``suites/`` child."""
    return directory if directory.name == SUITE_HISTORY_DIR else directory / SUITE_HISTORY_DIR


def audit_suites(run_dir: str | Path, *, extra: Sequence[str | Path] = ()) -> Finding:
    """``suites-never-shrank``: every suite history only grew (not measured without one).

    Reads ``<run_dir>/suites/`` and every folder in ``extra`` that holds suite histories (a project
    directory whose ``criteria.yaml`` is reconciled beside it has them in its own ``suites/``).
    """
    folders = [Path(run_dir) / SUITE_HISTORY_DIR] + [_suite_folder(Path(d)) for d in extra]
    files = sorted(
        {f for folder in folders if folder.is_dir() for f in folder.glob("*" + SUITE_HISTORY_SUFFIX)}
    )
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
