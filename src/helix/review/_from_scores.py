"""Gold labels from scores the traces already carry (a benchmark reward, an Inspect score, feedback).

Many sources grade their runs: tau2-bench's ``reward``, Inspect's sample scores, Langfuse scores,
LangSmith feedback. :func:`labels_from_scores` turns one of them into human-style labels with their
provenance (the annotator is the score's source and name, ``tau2:reward``) by a pass rule such as
``>=1``. A trace without the score, with two different ones, or with a value the rule cannot compare
gets no label and is counted with why; nothing is guessed.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .._exceptions import UsageError
from ..traces import Score, Trace
from ._labels import HumanLabel, utc_now

__all__ = ["PassRule", "ScoreLabels", "labels_from_scores", "parse_pass_rule"]

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
    "=": operator.eq,
}
_RULE = re.compile(r"^\s*(>=|<=|==|!=|>|<|=)\s*(.+?)\s*$")


@dataclass(frozen=True, kw_only=True)
class PassRule:
    """``value OP threshold`` decides pass; anything else comparable is fail."""

    text: str
    op: str
    target: float | bool | str

    def passes(self, value: float | bool | str) -> bool | None:
        """True/False, or None when the value cannot be compared with the rule's target."""
        target = self.target
        if isinstance(target, bool):
            if isinstance(value, bool):
                return bool(_OPS[self.op](value, target))
            if isinstance(value, str) and value.lower() in ("true", "false"):
                return bool(_OPS[self.op](value.lower() == "true", target))
            return None
        if isinstance(target, float):
            if isinstance(value, bool):
                number: float | None = float(value)
            elif isinstance(value, int | float):
                number = float(value)
            else:
                try:
                    number = float(value)
                except ValueError:
                    number = None
            return None if number is None or number != number else bool(_OPS[self.op](number, target))
        if self.op not in ("=", "==", "!="):
            return None
        return bool(_OPS[self.op](str(value), target))


def parse_pass_rule(text: str) -> PassRule:
    """``>=1``, ``>0.5``, ``==true``, ``=C`` (string equality), ``!=0``."""
    m = _RULE.match(text)
    if m is None:
        raise UsageError(
            f"--pass rule {text!r} is not OP VALUE; e.g. '>=1', '>0.5', '==true' or '=C' (OP one of >= <= == != > < =)"
        )
    op, raw = m.group(1), m.group(2)
    target: float | bool | str
    if raw.lower() in ("true", "false"):
        target = raw.lower() == "true"
    else:
        try:
            target = float(raw)
        except ValueError:
            target = raw
    if isinstance(target, str) and op not in ("=", "==", "!="):
        raise UsageError(f"--pass rule {text!r}: {op} needs a number; compare text with = or !=")
    return PassRule(text=text.strip(), op=op, target=target)


@dataclass(frozen=True, kw_only=True)
class ScoreLabels:
    """What :func:`labels_from_scores` made, and why the other traces got no label."""

    labels: tuple[HumanLabel, ...]
    missing: tuple[str, ...] = ()
    """Traces without the score."""
    ambiguous: tuple[str, ...] = ()
    """Traces with several different values of the score (pass --source to pick one)."""
    incomparable: tuple[str, ...] = ()
    """Traces whose value the rule cannot compare (text against a number)."""
    sources: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        """A one-line summary."""
        passed = sum(x.label == "pass" for x in self.labels)
        parts = [f"{len(self.labels)} label(s): {passed} pass, {len(self.labels) - passed} fail"]
        for name, ids in (
            ("without the score", self.missing),
            ("with conflicting values", self.ambiguous),
            ("with a value the rule cannot compare", self.incomparable),
        ):
            if ids:
                parts.append(f"{len(ids)} trace(s) {name} (e.g. {ids[0]!r})")
        return "; ".join(parts)


def _source_of(score: Score) -> str:
    return score.source or "score"


def labels_from_scores(
    traces: Iterable[Trace],
    *,
    score: str,
    rule: PassRule | str,
    criterion_id: str,
    source: str | None = None,
    design: str = "random",
    clock: Callable[[], datetime] = utc_now,
) -> ScoreLabels:
    """One label per trace carrying ``score`` (from ``source`` when given), pass when ``rule`` holds.

    The annotator is ``<source>:<score>`` (``tau2:reward``); the note keeps the value and the rule.
    ``design`` records how these traces came to be labelled: every trace that carries the score, which
    is ``random`` unless the source chose which runs to grade.
    """
    rule = parse_pass_rule(rule) if isinstance(rule, str) else rule
    when = clock()
    labels: list[HumanLabel] = []
    missing: list[str] = []
    ambiguous: list[str] = []
    incomparable: list[str] = []
    sources: set[str] = set()
    for trace in traces:
        found = [s for s in trace.scores if s.name == score and (source is None or _source_of(s) == source)]
        if not found:
            missing.append(trace.id)
            continue
        values = {(_source_of(s), repr(s.value)) for s in found}
        if len(values) > 1:
            ambiguous.append(trace.id)
            continue
        chosen = found[0]
        decided = rule.passes(chosen.value)
        if decided is None:
            incomparable.append(trace.id)
            continue
        who = f"{_source_of(chosen)}:{score}"
        sources.add(who)
        labels.append(
            HumanLabel(
                trace_id=trace.id,
                criterion_id=criterion_id,
                label="pass" if decided else "fail",
                annotator=who,
                note=f"from score {score}={chosen.value!r} ({_source_of(chosen)}), pass rule {rule.text}",
                created_at=when,
                design=design,
            )
        )
    return ScoreLabels(
        labels=tuple(labels),
        missing=tuple(missing),
        ambiguous=tuple(ambiguous),
        incomparable=tuple(incomparable),
        sources=tuple(sorted(sources)),
    )
