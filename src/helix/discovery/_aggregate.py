"""AGGREGATE of a discovery run: determinations and clusters in, rates, saturation and drafts out.

Reads every determination and every cluster verdict (missing ones fail loudly, listed), merges the
batches' categories by content, counts failures per category over the traces with a decided
determination (Wilson intervals), measures saturation in reading order, and writes:

```
<run>/aggregate/discovery.json        DiscoveryResult (this module's model)
<run>/aggregate/criteria.draft.yaml   eval-worthy categories as criteria drafts
<run>/aggregate/handoff.json          fixable categories with their evidence, masked
<run>/aggregate/report.html           the discovery curve and the categories
```

Same determinations and clusters → byte-identical files (no clock, sorted output).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import orjson
from pydantic import BaseModel

from .._util import write_atomic
from ..stats import wilson_interval
from ._determine import DeterminationFile
from ._drafts import criteria_draft_yaml
from ._handoff import handoff_bytes
from ._merge import MergedCategory, SourceCategory, merge_categories
from ._report import write_discovery_report
from ._result import CategoryStat, DeterminationCounts, DiscoveryResult
from ._run import DeterminationUnit, Note, notes_of, open_discovery, read_clusters, read_determinations
from ._saturation import saturation

__all__ = ["AggregateOutputs", "aggregate_discovery"]


@dataclass(frozen=True, kw_only=True)
class AggregateOutputs:
    """What :func:`aggregate_discovery` wrote."""

    result: DiscoveryResult
    result_path: Path
    draft_path: Path
    handoff_path: Path
    report_path: Path

    def describe(self) -> str:
        """A few lines for the terminal."""
        r = self.result
        d = r.determinations
        fixable = sum(c.routing == "fixable" for c in r.categories)
        lines = [
            f"{r.traces} traces: {d.passed} pass, {d.failed} fail, {d.uncertain} uncertain, {d.unscored} unscored; "
            f"{r.notes} notes in {len(r.categories)} categories ({fixable} fixable, "
            f"{len(r.categories) - fixable} eval-worthy), {r.unassigned} unassigned",
            r.saturation.describe(),
            f"result:   {self.result_path}",
            f"criteria: {self.draft_path} (merge with `helix criteria reconcile {self.draft_path} --into criteria.yaml`)",
            f"handoff:  {self.handoff_path}",
            f"report:   {self.report_path}",
        ]
        return "\n".join(lines)


def _counts(determinations: list[tuple[DeterminationUnit, DeterminationFile]]) -> DeterminationCounts:
    c: Counter[str] = Counter()
    for unit, v in determinations:
        n = len(unit.trace_ids)
        if v.determination is None:
            c["unscored"] += n
        else:
            c[v.determination.result] += n
    return DeterminationCounts(
        passed=c["pass"], failed=c["fail"], uncertain=c["uncertain"], unscored=c["unscored"]
    )


def _stat(m: MergedCategory, notes: dict[str, Note], decided: int) -> CategoryStat:
    trace_ids = tuple(t for nid in m.note_ids for t in notes[nid].trace_ids)
    failures = len(trace_ids)
    lo, hi = wilson_interval(failures, decided) if decided else (0.0, 1.0)
    return CategoryStat(
        id=m.id,
        title=m.title,
        definition=m.definition,
        question=m.question,
        pass_definition=m.pass_definition,
        fail_definition=m.fail_definition,
        routing=m.routing,
        routing_votes=m.routing_votes,
        routing_reason=m.routing_reason,
        failures=failures,
        rate=failures / decided if decided else 0.0,
        ci95=(lo, hi),
        trace_ids=trace_ids,
        note_ids=m.note_ids,
        agents=dict(sorted(Counter(notes[nid].agent for nid in m.note_ids).items())),
        members=m.members,
    )


def _readers(verdicts: list[DeterminationFile | BaseModel]) -> tuple[str, ...]:
    found: set[str] = set()
    for v in verdicts:
        judge = getattr(v, "judge", None)
        if judge is not None:
            found.add(f"{judge.runtime}/{judge.model}")
    return tuple(sorted(found))


def aggregate_discovery(
    run_dir: str | Path, *, last_k: int = 20, target: float = 0.95, merge_threshold: float = 0.5
) -> AggregateOutputs:
    """AGGREGATE a discovery run (see the module docstring) and write its files."""
    run = open_discovery(run_dir)
    determinations = read_determinations(run)
    counts = _counts(determinations)
    decided = counts.passed + counts.failed
    notes_list = notes_of(determinations)
    notes = {n.id: n for n in notes_list}
    clusters = read_clusters(run, notes_list) if notes_list else []
    sources = [
        SourceCategory(batch=packet.batch, category=c)
        for packet, verdict in clusters
        if verdict.clustering is not None
        for c in verdict.clustering.categories
    ]
    merged = merge_categories(sources, threshold=merge_threshold)
    categories = tuple(_stat(m, notes, decided) for m in merged)
    category_of = {nid: c.id for c in categories for nid in c.note_ids}
    unassigned = tuple(n.id for n in notes_list if n.id not in category_of)
    # reading order: every trace read, in unit order; a trace's label is its note's category
    labels: list[str | None] = []
    for unit, _ in determinations:
        label = category_of.get(unit.key)
        labels.extend([label] * len(unit.trace_ids))
    sat = saturation(labels, last_k=last_k, target=target)
    result = DiscoveryResult(
        prompt_version=run.manifest.prompt_version,
        subject=run.manifest.subject,
        traces=len(run.traces),
        determinations=counts.model_copy(
            update={
                "failed_without_note": sum(
                    len(u.trace_ids)
                    for u, v in determinations
                    if v.determination is not None and v.determination.result == "fail" and u.key not in notes
                )
            }
        ),
        decided=decided,
        notes=len(notes_list),
        unassigned=len(unassigned),
        unassigned_ids=unassigned,
        categories=categories,
        saturation=sat,
        readers=_readers([v for _, v in determinations] + [v for _, v in clusters]),
        merge_threshold=merge_threshold,
    )
    out = run.aggregate_dir
    result_path = write_atomic(
        out / "discovery.json",
        orjson.dumps(result.model_dump(mode="json"), option=orjson.OPT_INDENT_2) + b"\n",
    )
    draft_path = write_atomic(out / "criteria.draft.yaml", criteria_draft_yaml(result))
    handoff_path = write_atomic(out / "handoff.json", handoff_bytes(result, determinations, notes))
    report_path = write_discovery_report(result, out / "report.html")
    return AggregateOutputs(
        result=result,
        result_path=result_path,
        draft_path=draft_path,
        handoff_path=handoff_path,
        report_path=report_path,
    )
