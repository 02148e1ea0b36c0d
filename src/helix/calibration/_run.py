"""``helix validate`` over a run directory: join human labels with the run's verdicts, calibrate,
record the test-once ledger, and stamp the result into the scorecard and report.

```
<run>/calibration/validation.json   ValidationReport: one CriterionCalibration per criterion
<run>/calibration/test_ledger.json  every measurement on a test split (see _ledger.py)
<run>/scorecard.json                gains a `validation` block (when the run was aggregated)
<run>/report.html                   re-rendered with the calibration section
```

The judged set behind p_obs is every decided verdict of the criterion in the run (the population
the scorecard describes); the labels measure the judge on the chosen split (``test`` by default).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from .._exceptions import UsageError
from .._util import read_json, write_atomic, write_json_atomic
from ._calibrate import CALIBRATION_FORMAT_VERSION, CriterionCalibration, calibrate
from ._corrected import DEFAULT_DRAWS
from ._ledger import record_test_use
from ._measure import DEFAULT_MIN_LABELS_PER_CLASS, DEFAULT_THRESHOLD
from ._splits import assign_splits, check_few_shot

if TYPE_CHECKING:
    from ..review import HumanLabel

__all__ = ["MeasuredSplit", "ValidationReport", "validate_run", "validation_path"]

MeasuredSplit = Literal["test", "dev", "all"]


class ValidationReport(BaseModel):
    """The content of ``calibration/validation.json`` (and of ``helix validate --json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = CALIBRATION_FORMAT_VERSION
    run_dir: str
    labels_source: str
    results: tuple[CriterionCalibration, ...]
    stamped: bool
    """Whether scorecard.json and report.html were updated."""


@dataclass(frozen=True, kw_only=True)
class _HumanView:
    label: str
    conflict: bool


def validation_path(run_dir: str | Path) -> Path:
    """Where a run's validation report lives."""
    return Path(run_dir) / "calibration" / "validation.json"


def _combine(labels: Sequence[HumanLabel]) -> dict[tuple[str, str], _HumanView]:
    """One human label per (trace, criterion) across annotators; decided disagreements are conflicts."""
    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for lab in labels:
        grouped[(lab.trace_id, lab.criterion_id)].append(lab.label)
    out = {}
    for key, values in grouped.items():
        decided = set(values) & {"pass", "fail"}
        if len(decided) > 1:
            out[key] = _HumanView(label="defer", conflict=True)
        elif decided:
            out[key] = _HumanView(label=decided.pop(), conflict=False)
        else:
            out[key] = _HumanView(
                label="underdetermined" if "underdetermined" in values else "defer", conflict=False
            )
    return out


def validate_run(
    run_dir: str | Path,
    labels: str | Path | Sequence[HumanLabel],
    *,
    criterion_id: str | None = None,
    split: MeasuredSplit = "test",
    seed: int = 0,
    threshold: float = DEFAULT_THRESHOLD,
    min_labels_per_class: int = DEFAULT_MIN_LABELS_PER_CLASS,
    force: bool = False,
    stamp: bool = True,
    draws: int = DEFAULT_DRAWS,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> ValidationReport:
    """Calibrate every labelled criterion of a run (or ``criterion_id``) and record the result.

    ``labels`` is a label store, a labels JSONL file, or labels already loaded. A ``test`` split
    measurement goes through the test-once ledger (``force`` re-measures and is recorded as forced).
    Raises ``FewShotLeakError`` when a criterion's few-shot examples are not train traces.
    """
    from ..judging import collect_results
    from ..review import annotator_agreement, load_labels
    from ..scoring import AnnotatorAgreement

    run = Path(run_dir)
    source = "<labels given>" if not isinstance(labels, str | Path) else str(labels)
    loaded = load_labels(labels) if isinstance(labels, str | Path) else list(labels)
    judged = collect_results(run)
    human = _combine(loaded)
    labelled_criteria = {c for (_, c) in human}
    if criterion_id is not None:
        try:
            judged.matrix.by_id(criterion_id)
        except KeyError:
            known = ", ".join(c.id for c in judged.matrix.criteria)
            raise UsageError(f"--criterion {criterion_id!r} is not in the run's criteria ({known})") from None
        targets = [judged.matrix.by_id(criterion_id)]
    else:
        targets = [c for c in judged.matrix.criteria if c.id in labelled_criteria]
    if not targets:
        raise UsageError(
            f"no labels in {source} match a criterion of run {str(run)!r} "
            f"(labels name {sorted(labelled_criteria)[:5]}); label traces of this run with `helix review`"
        )
    rows = {(r.trace_id, r.criterion_id): r for r in judged.results}
    results = []
    for crit in targets:
        per_trace = {t: v for (t, c), v in human.items() if c == crit.id}
        conflicts = sum(v.conflict for v in per_trace.values())
        splits = assign_splits({t: v.label for t, v in per_trace.items()}, seed=seed)
        check_few_shot(crit, splits)
        ids = sorted(per_trace) if split == "all" else list(splits.ids(split))
        if split == "test" and ids:
            record_test_use(
                run,
                criterion_id=crit.id,
                split_fingerprint=splits.fingerprint("test"),
                seed=seed,
                test_size=len(ids),
                force=force,
                clock=clock,
            )
        pairs = []
        for t in ids:
            row = rows.get((t, crit.id))
            pairs.append((per_trace[t].label, row.verdict.result if row and row.verdict else None))
        crit_rows = [r for r in judged.results if r.criterion_id == crit.id and r.verdict is not None]
        decided = [r for r in crit_rows if r.verdict is not None and r.verdict.result != "uncertain"]
        judges = {r.judge for r in crit_rows if r.judge is not None}
        warnings = []
        if conflicts:
            warnings.append(
                f"{conflicts} trace(s) with conflicting pass/fail labels between annotators were left out"
            )
        unknown = sorted(t for t in per_trace if (t, crit.id) not in rows)
        if unknown:
            warnings.append(f"{len(unknown)} labelled trace(s) are not in this run (e.g. {unknown[0]!r})")
        agreement = tuple(
            AnnotatorAgreement(annotator_a=k.annotator_a, annotator_b=k.annotator_b, n=k.n, kappa=k.kappa)
            for k in annotator_agreement([lab for lab in loaded if lab.criterion_id == crit.id])
        )
        results.append(
            calibrate(
                pairs,
                judged_pass=sum(r.verdict is not None and r.verdict.result == "pass" for r in decided),
                judged_n=len(decided),
                criterion_id=crit.id,
                split=split,
                seed=seed,
                threshold=threshold,
                min_labels_per_class=min_labels_per_class,
                draws=draws,
                judge_models=tuple(sorted({j.model for j in judges if j.model})),
                prompt_versions=tuple(sorted({j.prompt_version for j in judges if j.prompt_version})),
                warnings=tuple(warnings),
            ).model_copy(update={"annotator_agreement": agreement})
        )
    stamped = stamp and _stamp(run, results, judged)
    report = ValidationReport(run_dir=str(run), labels_source=source, results=tuple(results), stamped=stamped)
    write_json_atomic(validation_path(run), report.model_dump(mode="json"))
    return report


def _stamp(run: Path, results: Sequence[CriterionCalibration], judged: object) -> bool:
    """Merge the records into scorecard.json and re-render report.html; False when not aggregated yet."""
    from ..judging import JudgedRun
    from ..report import render_report
    from ..scoring import Scorecard, scorecard_json

    path = run / "scorecard.json"
    if not path.is_file() or not isinstance(judged, JudgedRun):
        return False
    card = Scorecard.model_validate(read_json(path))
    new = {r.criterion_id: r.record() for r in results}
    kept = [v for v in card.validation or () if v.criterion_id not in new]
    order = {c.id: i for i, c in enumerate(judged.matrix.criteria)}
    merged = sorted(
        [*kept, *new.values()], key=lambda v: (order.get(v.criterion_id, len(order)), v.criterion_id)
    )
    card = card.model_copy(update={"validation": tuple(merged)})
    write_atomic(path, scorecard_json(card))
    write_atomic(run / "report.html", render_report(judged, card))
    return True
