"""Read the run's calibration results: what ``helix validate`` stamped into ``scorecard.json`` and kept in
``calibration/validation.json``.

The audit never measures a judge itself (a test split may be measured once only); it reads what
calibration recorded, per LLM criterion (:class:`helix.scoring.ValidationRecord`).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from ..calibration import ValidationReport, validation_path
from ..scoring import Scorecard
from ._determinism import SCORECARD_FILE
from ._judges import CertStatus, JudgeMeasure

__all__ = ["read_judge_measures"]

_STATUSES: dict[str, CertStatus] = {
    "certified": "certified",
    "refused": "refused",
    "unvalidated": "unvalidated",
}


def _from_report(run_dir: Path) -> dict[str, JudgeMeasure]:
    """Results of the latest ``helix validate`` (``calibration/validation.json``)."""
    path = validation_path(run_dir)
    if not path.is_file():
        return {}
    try:
        report = ValidationReport.model_validate_json(path.read_bytes())
    except ValidationError:
        return {}
    out: dict[str, JudgeMeasure] = {}
    for r in report.results:
        out[r.criterion_id] = JudgeMeasure(
            criterion_id=r.criterion_id,
            status=r.status,
            tpr=r.tpr,
            tnr=r.tnr,
            tpr_low=r.tpr_interval[0] if r.tpr_interval else None,
            tnr_low=r.tnr_interval[0] if r.tnr_interval else None,
            threshold=r.threshold,
            reason=r.status_reason,
            labels_pass=r.counts.n_pos,
            labels_fail=r.counts.n_neg,
            prompt_versions=r.prompt_versions,
            judge_models=r.judge_models,
            source=f"calibration/validation.json ({r.split} split, seed {r.seed})",
        )
    return out


def read_judge_measures(run_dir: str | Path) -> dict[str, JudgeMeasure]:
    """Calibration results per criterion id: the validation records stamped into ``scorecard.json``,
    completed by ``calibration/validation.json`` for criteria the scorecard does not carry (a run
    validated before aggregation, or re-aggregated since). Empty when the run has neither."""
    out = _from_report(Path(run_dir))
    path = Path(run_dir) / SCORECARD_FILE
    if not path.is_file():
        return out
    try:
        card = Scorecard.model_validate_json(path.read_bytes())
    except ValidationError:
        return out  # the determinism check reports a scorecard that does not parse
    for record in card.validation or ():
        status = _STATUSES.get(record.status.lower())
        if status is None:
            continue
        out[record.criterion_id] = JudgeMeasure(
            criterion_id=record.criterion_id,
            status=status,
            tpr=record.tpr.value,
            tnr=record.tnr.value,
            tpr_low=record.tpr.low,
            tnr_low=record.tnr.low,
            threshold=record.threshold,
            reason=record.status_reason,
            labels_pass=record.labels_pass,
            labels_fail=record.labels_fail,
            prompt_versions=record.prompt_versions,
            judge_models=record.judge_models,
            source=f"{SCORECARD_FILE} validation ({record.split} split, seed {record.split_seed})",
        )
    return out
