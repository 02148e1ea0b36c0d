"""Pipeline hygiene: complete and fresh verdicts, unscored and uncertain rates, the pinned envelope.

Every LLM verdict must name a dated model snapshot (never a floating alias), run at temperature 0,
and carry the prompt version of the run; a run whose verdicts do not is not reproducible, so those
checks fail rather than warn. Code verdicts are exempt from the pin (they are deterministic).
"""

from __future__ import annotations

from collections import defaultdict

from ..judging import JudgeInfo
from ..models import is_pinned_model_id
from ._findings import AuditStatus, AuditThresholds, Detail, Evidence, Finding, worst_status
from ._snapshot import RunSnapshot

__all__ = [
    "audit_judge_models",
    "audit_pin",
    "audit_stale_verdicts",
    "audit_uncertain_rate",
    "audit_unscored_rate",
    "audit_verdicts_complete",
]

_SHOWN = 20
"""At most this many ids per evidence list (the counts hold the totals)."""


def _ids(keys: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(keys)[:_SHOWN])


def audit_verdicts_complete(snap: RunSnapshot) -> Finding:
    """``verdicts-complete``: every judging unit has a verdict file that keeps the contract."""
    st = snap.status
    missing, invalid = list(st.missing_keys), sorted(st.invalid)
    units = st.llm_units + st.code_units
    status: AuditStatus = "fail" if (missing or invalid) else "pass"
    details = tuple(Detail(subject=k, status="fail", note=st.invalid[k]) for k in invalid[:_SHOWN])
    if status == "fail":
        summary = (
            f"{len(missing)} of {units} units have no verdict file, {len(invalid)} break the verdict contract"
        )
        next_step = (
            "Run `helix judge status --run DIR` for the list, dispatch the missing packets (or `helix judge run`), "
            "fix or re-judge the invalid files, then `helix aggregate` again."
        )
    else:
        summary = f"all {units} units have a valid verdict file"
        next_step = "Nothing to do."
    return Finding(
        area="pipeline-hygiene",
        check="verdicts-complete",
        status=status,
        summary=summary,
        evidence=Evidence(
            counts={"units": units, "missing": len(missing), "invalid": len(invalid)},
            ids={"missing": _ids(missing), "invalid": _ids(invalid)},
        ),
        next_step=next_step,
        details=details,
    )


def audit_stale_verdicts(snap: RunSnapshot) -> Finding:
    """``stale-verdicts``: verdict files whose key matches no unit of the current inputs."""
    stale = list(snap.status.stale_keys)
    status: AuditStatus = "warn" if stale else "pass"
    return Finding(
        area="pipeline-hygiene",
        check="stale-verdicts",
        status=status,
        summary=(
            f"{len(stale)} verdict file(s) answer units that no longer exist (inputs changed after judging)"
            if stale
            else "no stale verdict files"
        ),
        evidence=Evidence(counts={"stale": len(stale)}, ids={"stale": _ids(stale)}),
        next_step=(
            "Move the stale <key>.verdict.json files out of verdicts/ (AGGREGATE ignores them, but they "
            "show the criteria or traces changed after judging: re-check that the current verdicts are the ones you meant)."
            if stale
            else "Nothing to do."
        ),
    )


def _rate_status(rate: float, warn: float, fail: float) -> AuditStatus:
    if rate > fail:
        return "fail"
    if rate > warn:
        return "warn"
    return "pass"


def audit_unscored_rate(snap: RunSnapshot, thresholds: AuditThresholds) -> Finding:
    """``unscored-rate``: (trace, criterion) rows recorded as unscored, over the rows read."""
    rows = snap.rows
    unscored = [r for r in rows if r.verdict is None]
    rate = len(unscored) / len(rows) if rows else 0.0
    status: AuditStatus = (
        "not-measured" if not rows else _rate_status(rate, thresholds.unscored_warn, thresholds.unscored_fail)
    )
    keys = sorted({r.key for r in unscored})
    reasons: dict[str, str] = {}
    for r in unscored:
        reasons.setdefault(r.key, r.unscored_reason or "no reason recorded")
    return Finding(
        area="pipeline-hygiene",
        check="unscored-rate",
        status=status,
        summary=(
            "no verdict rows to read yet"
            if not rows
            else f"{len(unscored)} of {len(rows)} rows unscored ({rate:.1%}; warn above {thresholds.unscored_warn:.0%}, "
            f"fail above {thresholds.unscored_fail:.0%})"
        ),
        evidence=Evidence(
            counts={"rows": len(rows), "unscored": len(unscored), "rate": round(rate, 6), "units": len(keys)},
            ids={"unscored_units": _ids(keys)},
        ),
        next_step=(
            "Read the reasons in the details (unparseable provider answers, checks that raised), fix the cause, "
            "delete those verdict files and judge them again."
            if unscored
            else "Nothing to do."
        ),
        details=tuple(Detail(subject=k, status=status, note=reasons[k][:300]) for k in keys[:_SHOWN]),
    )


def audit_uncertain_rate(snap: RunSnapshot, thresholds: AuditThresholds) -> Finding:
    """``uncertain-rate``: verdicts that abstained, over the scored rows, per criterion."""
    scored: dict[str, int] = defaultdict(int)
    uncertain: dict[str, int] = defaultdict(int)
    for r in snap.rows:
        if r.verdict is not None:
            scored[r.criterion_id] += 1
            uncertain[r.criterion_id] += r.verdict.result == "uncertain"
    total, n_unc = sum(scored.values()), sum(uncertain.values())
    rate = n_unc / total if total else 0.0
    details = []
    for c in snap.run.matrix.criteria:
        if not scored[c.id]:
            continue
        c_rate = uncertain[c.id] / scored[c.id]
        c_status = _rate_status(c_rate, thresholds.uncertain_warn, thresholds.uncertain_fail)
        details.append(
            Detail(
                subject=c.id,
                status=c_status,
                note=f"{uncertain[c.id]} of {scored[c.id]} uncertain ({c_rate:.1%})",
            )
        )
    status: AuditStatus = "not-measured" if not total else worst_status(d.status for d in details)
    high = tuple(d.subject for d in details if d.status != "pass")
    return Finding(
        area="pipeline-hygiene",
        check="uncertain-rate",
        status=status,
        summary=(
            "no scored verdicts to read yet"
            if not total
            else f"{n_unc} of {total} scored verdicts uncertain ({rate:.1%}); {len(high)} criteria above "
            f"{thresholds.uncertain_warn:.0%}"
        ),
        evidence=Evidence(
            counts={"scored": total, "uncertain": n_unc, "rate": round(rate, 6)}, ids={"high_uncertain": high}
        ),
        next_step=(
            f"Read the blocked_by reasons of {', '.join(high)}: when traces lack the evidence, capture it "
            "(tool results, final state); when the question is vague, sharpen its pass/fail definitions."
            if high
            else "Nothing to do; keep reporting abstentions apart from passes and fails."
        ),
        details=tuple(details),
    )


def _llm_judges(snap: RunSnapshot) -> dict[str, JudgeInfo | None]:
    """Judge info per LLM unit key (scored units only: an unscored unit made no judgment)."""
    llm = {c.id for c in snap.run.matrix.llm_criteria}
    out: dict[str, JudgeInfo | None] = {}
    for r in snap.rows:
        if r.criterion_id in llm and r.verdict is not None:
            out.setdefault(r.key, r.judge)
    return out


def audit_judge_models(snap: RunSnapshot) -> Finding:
    """``judge-model-pinned``: every LLM verdict names a pinned model snapshot."""
    judges = _llm_judges(snap)
    missing = sorted(k for k, j in judges.items() if j is None or not (j.model and j.model.strip()))
    floating: dict[str, str] = {}
    for k, j in judges.items():
        if k not in missing and j is not None and j.model is not None and not is_pinned_model_id(j.model):
            floating[k] = j.model
    models = sorted({j.model for j in judges.values() if j is not None and j.model})
    bad = sorted(set(missing) | set(floating))
    status: AuditStatus = "not-measured" if not judges else ("fail" if bad else "pass")
    details = [
        Detail(subject=k, status="fail", note="verdict records no judge model") for k in missing[:_SHOWN]
    ]
    details += [
        Detail(subject=k, status="fail", note=f"judge model {m!r} is a floating alias, not a dated snapshot")
        for k, m in sorted(floating.items())[:_SHOWN]
    ]
    return Finding(
        area="pipeline-hygiene",
        check="judge-model-pinned",
        status=status,
        summary=(
            "no LLM verdict to read yet"
            if not judges
            else f"{len(bad)} of {len(judges)} LLM verdict files lack a pinned judge model "
            f"({len(missing)} missing, {len(floating)} floating); models seen: {len(models)}"
        ),
        evidence=Evidence(
            counts={
                "llm_verdicts": len(judges),
                "missing_model": len(missing),
                "floating_alias": len(floating),
            },
            ids={
                "models": tuple(models[:_SHOWN]),
                "missing_model": _ids(missing),
                "floating_alias": _ids(list(floating)),
            },
        ),
        next_step=(
            "Re-judge these units on a dated snapshot (e.g. `--model openai/gpt-4o-2024-08-06`), or have the "
            "agent runtime record its exact model id in judge.model; a judgment under an alias cannot be reproduced."
            if bad
            else "Nothing to do."
        ),
        details=tuple(details),
    )


def audit_pin(snap: RunSnapshot) -> Finding:
    """``pin-envelope``: every LLM verdict at temperature 0, with the run's prompt version (and its
    pinned model, when the run pinned one)."""
    judges = _llm_judges(snap)
    manifest = snap.run.manifest
    run_prompt = manifest.prompt_version
    pinned_model = manifest.pin.model
    problems: dict[str, str] = {}
    for key in sorted(judges):
        j = judges[key]
        if j is None:
            problems[key] = "verdict records no judge envelope (temperature, prompt version)"
        elif j.temperature is None:
            problems[key] = "temperature not recorded"
        elif j.temperature != 0.0:
            problems[key] = f"temperature {j.temperature!r}, not 0"
        elif j.prompt_version is None:
            problems[key] = "prompt version not recorded"
        elif j.prompt_version != run_prompt:
            problems[key] = f"prompt version {j.prompt_version!r}, the run's is {run_prompt!r}"
        elif pinned_model is not None and j.model != pinned_model:
            problems[key] = f"judged by {j.model!r}, the run pinned {pinned_model!r}"
    status: AuditStatus = "not-measured" if not judges else ("fail" if problems else "pass")
    return Finding(
        area="pipeline-hygiene",
        check="pin-envelope",
        status=status,
        summary=(
            "no LLM verdict to read yet"
            if not judges
            else f"{len(problems)} of {len(judges)} LLM verdict files break the pin "
            f"(temperature 0, prompt {run_prompt}" + (f", model {pinned_model}" if pinned_model else "") + ")"
        ),
        evidence=Evidence(
            counts={"llm_verdicts": len(judges), "off_pin": len(problems)},
            ids={"off_pin": _ids(list(problems))},
        ),
        next_step=(
            "Delete the off-pin verdict files and judge those units again under the run's envelope (re-run "
            "`helix judge prep` first if the prompt changed); then re-validate the judge, since a new prompt or "
            "model is a new judge."
            if problems
            else "Nothing to do; re-validate the judge whenever the prompt version or model changes."
        ),
        details=tuple(Detail(subject=k, status="fail", note=v) for k, v in list(problems.items())[:_SHOWN]),
    )
