"""``helix validate`` over a run directory: join human labels with the run's verdicts, calibrate,
record the test-once ledger, and stamp the result into the scorecard and report.

```
<run>/calibration/validation.json   ValidationReport: one CriterionCalibration per criterion
<run>/calibration/test_ledger.json  every measurement on a test split (see _ledger.py)
<run>/scorecard.json                gains a `validation` block (when the run was aggregated)
<run>/report.html                   re-rendered with the calibration section
```

The judged population is every decided verdict of the criterion in the run (the population the
scorecard describes), or in the run given as ``population``. How it is used follows the label design
(docs/labels.md): for labels chosen by human class, the unlabelled part of it is the judged set
behind p_obs (labelled traces are kept out of it); for every other design it is post-stratified.
The labels measure the judge on every label once (an external judge) or on the test split.
"""

from __future__ import annotations

import functools
import hashlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from .._exceptions import UsageError
from .._util import read_json, write_atomic, write_json_atomic
from ._advice import LabelSupply
from ._calibrate import CALIBRATION_FORMAT_VERSION, CriterionCalibration, Mode, calibrate
from ._corrected import DEFAULT_DRAWS
from ._ledger import record_test_use
from ._measure import DEFAULT_MIN_LABELS_PER_CLASS, DEFAULT_THRESHOLD
from ._rerun import read_consistency
from ._splits import assign_splits, check_few_shot
from ._stratified import Stratum

if TYPE_CHECKING:
    from ..judging import TraceCriterionResult
    from ..review import HumanLabel, LabelDesign

__all__ = ["MeasuredSplit", "RequestedSplit", "ValidationReport", "validate_run", "validation_path"]

MeasuredSplit = Literal["test", "dev", "all"]
RequestedSplit = Literal["auto", "test", "dev", "all"]


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


def _resolve_design(
    labels: Sequence[HumanLabel], given: str | None, criterion_id: str
) -> tuple[LabelDesign, str, str | None]:
    """(design, source, warning) for a criterion's label set."""
    from ..review import parse_design

    if given is not None:
        return parse_design(given), "given", None
    recorded = sorted({lab.design for lab in labels if lab.design})
    if len(recorded) > 1:
        raise UsageError(
            f"criterion {criterion_id!r}: the labels record several designs ({', '.join(recorded)}); one estimator "
            "cannot serve a mix. Measure each set apart, or pass --design to say how the whole set was chosen"
        )
    if recorded:
        return parse_design(recorded[0]), "recorded", None
    return (
        parse_design("by-class"),
        "assumed",
        "the labels do not record how their traces were chosen: assumed by human class (by-class, "
        "Rogan-Gladen); if they were a random sample or chosen by the judge's verdict, pass --design random "
        "or --design by-verdict (docs/labels.md)",
    )


def _decided(row: TraceCriterionResult) -> str | None:
    v = row.verdict
    return v.result if v is not None and v.result in ("pass", "fail") else None


def validate_run(
    run_dir: str | Path,
    labels: str | Path | Sequence[HumanLabel],
    *,
    criterion_id: str | None = None,
    split: RequestedSplit = "auto",
    design: str | None = None,
    population: str | Path | None = None,
    seed: int = 0,
    threshold: float = DEFAULT_THRESHOLD,
    min_labels_per_class: int = DEFAULT_MIN_LABELS_PER_CLASS,
    force: bool = False,
    stamp: bool = True,
    draws: int = DEFAULT_DRAWS,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> ValidationReport:
    """Calibrate every labelled criterion of a run (or ``criterion_id``) and record the result.

    ``labels`` is a label store, a labels JSONL file, or labels already loaded. ``split``: ``auto``
    (default) measures an external judge (no few-shot from these labels, no dev or test measurement
    in the ledger) on every label, once, and a judge under development on the test split; ``test``,
    ``dev`` and ``all`` force the choice. ``test`` and ``all`` go through the test-once ledger
    (``force`` re-measures and is recorded as forced); ``dev`` is recorded, never refused.
    ``design`` says how the labelled traces were chosen when the labels do not record it (see
    docs/labels.md); ``population`` is another run directory whose decided verdicts are the judged
    population (default: this run). Raises ``FewShotLeakError`` when a criterion's few-shot examples
    are not train traces.
    """
    from ..judging import collect_results
    from ..review import annotator_agreement, blocked_kind, load_labels, parse_design, stratum_of
    from ..scoring import AnnotatorAgreement
    from ._ledger import read_ledger

    if split not in ("auto", "test", "dev", "all"):
        raise UsageError(f"split must be auto, test, dev or all; got {split!r}")
    run = Path(run_dir)
    source = "<labels given>" if not isinstance(labels, str | Path) else str(labels)
    loaded = load_labels(labels) if isinstance(labels, str | Path) else list(labels)
    judged = collect_results(run)
    pop = collect_results(population) if population is not None else judged
    pop_name = str(population) if population is not None else None
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
    metadata = {t.id: t.metadata for t in judged.traces} | {t.id: t.metadata for t in pop.traces}
    ledger = read_ledger(run)
    results = []
    for crit in targets:
        crit_labels = [lab for lab in loaded if lab.criterion_id == crit.id]
        chosen, design_source, design_warning = _resolve_design(crit_labels, design, crit.id)
        per_trace = {t: v for (t, c), v in human.items() if c == crit.id}
        decided_labels = {t: v.label for t, v in per_trace.items() if v.label in ("pass", "fail")}
        conflicts = sum(v.conflict for v in per_trace.values())
        pop_rows = [r for r in pop.results if r.criterion_id == crit.id]
        pop_decided = {r.trace_id: r for r in pop_rows if _decided(r) is not None}

        def stratum(row: TraceCriterionResult, chosen: LabelDesign = chosen) -> str:
            v = row.verdict
            assert v is not None
            return stratum_of(
                chosen,
                v.result,
                confidence=getattr(v, "confidence", None),
                metadata=metadata.get(row.trace_id),
            )

        census = bool(pop_decided) and population is None and set(pop_decided) <= set(decided_labels)
        if census and chosen.by_class:
            chosen, design_source = parse_design("random"), "census"
        few_shot_labelled = any(ex.trace_id in per_trace for ex in crit.few_shot)
        measured: MeasuredSplit
        if split == "auto":
            measured = "test" if few_shot_labelled or ledger.developed(crit.id) else "all"
        else:
            measured = split
        mode: Mode = "external" if measured == "all" else "development"
        strata_of_labelled = None
        if not chosen.by_class:
            strata_of_labelled = {
                t: stratum(rows[(t, crit.id)])
                for t in per_trace
                if (t, crit.id) in rows and _decided(rows[(t, crit.id)]) is not None
            }
        splits = assign_splits(
            {t: v.label for t, v in per_trace.items()}, seed=seed, strata=strata_of_labelled
        )
        check_few_shot(crit, splits)
        ids = sorted(per_trace) if measured == "all" else list(splits.ids(measured))
        if ids:
            fingerprint = (
                hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]
                if measured == "all"
                else splits.fingerprint(measured)
            )
            record_test_use(
                run,
                criterion_id=crit.id,
                split_fingerprint=fingerprint,
                seed=seed,
                test_size=len(ids),
                force=force,
                clock=clock,
                split=measured,
            )
        pairs = []
        for t in ids:
            row = rows.get((t, crit.id))
            v = row.verdict if row else None
            pairs.append(
                (
                    per_trace[t].label,
                    v.result if v else None,
                    blocked_kind(getattr(v, "blocked_by", None)) if v and v.result == "uncertain" else None,
                )
            )
        crit_rows = [r for r in judged.results if r.criterion_id == crit.id and r.verdict is not None]
        judges = {r.judge for r in crit_rows if r.judge is not None}
        warnings = [design_warning] if design_warning else []
        if census:
            warnings.append(
                "every decided trace of the run is labelled: the labels are the whole population, so θ is "
                "post-stratified on the verdict (a census is a random sample of itself)"
            )
        if conflicts:
            warnings.append(
                f"{conflicts} trace(s) with conflicting pass/fail labels between annotators were left out"
            )
        unknown = sorted(t for t in per_trace if (t, crit.id) not in rows)
        if unknown:
            warnings.append(f"{len(unknown)} labelled trace(s) are not in this run (e.g. {unknown[0]!r})")
        unlabelled = [r for r in judged.results if r.criterion_id == crit.id and r.trace_id not in per_trace]
        supply = LabelSupply(
            split=measured,
            fractions=splits.fractions,
            labelled_pass=sum(v == "pass" for v in decided_labels.values()),
            labelled_fail=sum(v == "fail" for v in decided_labels.values()),
            available_pass=sum(_decided(r) != "fail" for r in unlabelled),
            available_fail=sum(_decided(r) != "pass" for r in unlabelled),
        )
        measure = functools.partial(
            calibrate,
            design=chosen.text,
            design_source=design_source,
            mode=mode,
            criterion_id=crit.id,
            split=measured,
            seed=seed,
            threshold=threshold,
            min_labels_per_class=min_labels_per_class,
            draws=draws,
            judge_models=tuple(sorted({j.model for j in judges if j.model})),
            prompt_versions=tuple(sorted({j.prompt_version for j in judges if j.prompt_version})),
            supply=supply,
            population=pop_name,
            warnings=tuple(warnings),
        )
        if chosen.by_class:
            # The judged set behind p_obs: decided verdicts of traces nobody labelled for this criterion.
            rest = [r for t, r in pop_decided.items() if t not in per_trace]
            result = measure(pairs, judged_pass=sum(_decided(r) == "pass" for r in rest), judged_n=len(rest))
        else:
            # Every judged item counted once: the population, plus measured labelled traces it lacks.
            judged_items = dict(pop_decided)
            for t in ids:
                row = rows.get((t, crit.id))
                if row is not None and _decided(row) is not None:
                    judged_items.setdefault(t, row)
            tally: dict[str, list[int]] = {}
            verdict_of: dict[str, str] = {}
            for t, row in judged_items.items():
                name = stratum(row)
                verdict_of[name] = str(_decided(row))
                cell = tally.setdefault(name, [0, 0, 0])
                cell[0] += 1
                if t in ids and per_trace[t].label in ("pass", "fail") and rows.get((t, crit.id)) is not None:
                    cell[1] += 1
                    cell[2] += per_trace[t].label == "pass"
            strata = [
                Stratum(name=n, verdict=verdict_of[n], judged=c[0], labelled=c[1], human_pass=c[2])
                for n, c in sorted(tally.items())
            ]
            result = measure(pairs, strata=strata)
        agreement = tuple(
            AnnotatorAgreement(annotator_a=k.annotator_a, annotator_b=k.annotator_b, n=k.n, kappa=k.kappa)
            for k in annotator_agreement(crit_labels)
        )
        results.append(result.model_copy(update={"annotator_agreement": agreement}))
    consistency = read_consistency(run)
    if consistency is not None:
        results = [
            r.model_copy(update={"consistency": consistency.by_criterion(r.criterion_id)}) for r in results
        ]
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
