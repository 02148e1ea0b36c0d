"""Deterministic, disjoint train/dev/test splits of labelled traces, balanced per class.

Each trace gets a rank from a hash of (seed, trace id); within each human class (pass, fail, and
everything undecided) traces are ordered by that rank and cut by the split fractions, so every split
holds the same share of each class (as far as whole traces allow) and the assignment depends only
on the ids, their classes and the seed: never on input order, the clock or the machine.

Few-shot examples shown to a judge may come only from the train split (:func:`check_few_shot`):
a dev or test trace in the prompt leaks the answer into the measurement.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from .._exceptions import FewShotLeakError, UsageError
from ..judging import Criterion

__all__ = ["DEFAULT_FRACTIONS", "SplitName", "Splits", "assign_splits", "check_few_shot", "split_sizes"]

SplitName = Literal["train", "dev", "test"]
DEFAULT_FRACTIONS: tuple[float, float, float] = (0.15, 0.42, 0.43)
"""train / dev / test."""


@dataclass(frozen=True, kw_only=True)
class Splits:
    """Which split each trace is in, and the seed and fractions that decided it."""

    seed: int
    fractions: tuple[float, float, float]
    assignment: Mapping[str, SplitName]

    def ids(self, split: SplitName) -> tuple[str, ...]:
        """The trace ids in ``split``, sorted."""
        return tuple(sorted(t for t, s in self.assignment.items() if s == split))

    def fingerprint(self, split: SplitName) -> str:
        """A short hash of the ids in ``split`` (what the test-once ledger records)."""
        joined = "\n".join(self.ids(split)).encode("utf-8")
        return hashlib.sha256(joined).hexdigest()[:16]


def _rank(seed: int, trace_id: str) -> bytes:
    return hashlib.sha256(f"{seed}\x00{trace_id}".encode()).digest()


def _cut(n: int, fractions: tuple[float, float, float]) -> tuple[int, int]:
    """How many of ``n`` go to train and to dev (the rest to test), by largest remainder."""
    exact = [f * n for f in fractions]
    sizes = [int(x) for x in exact]
    by_remainder = sorted(range(3), key=lambda i: (-(exact[i] - sizes[i]), i))
    for i in by_remainder[: n - sum(sizes)]:
        sizes[i] += 1
    return sizes[0], sizes[1]


def split_sizes(n: int, fractions: tuple[float, float, float] = DEFAULT_FRACTIONS) -> tuple[int, int, int]:
    """How many of ``n`` traces of one class go to train, dev and test."""
    train, dev = _cut(n, fractions)
    return train, dev, n - train - dev


def assign_splits(
    labels: Mapping[str, str] | Iterable[tuple[str, str]],
    *,
    seed: int = 0,
    fractions: tuple[float, float, float] = DEFAULT_FRACTIONS,
    strata: Mapping[str, str] | None = None,
) -> Splits:
    """Split traces (``trace_id -> human label``) into train/dev/test, balanced per class.

    Labels ``pass`` and ``fail`` are classes of their own; any other label (defer, underdetermined)
    is split as one more group, so undecided traces spread across the splits too. With ``strata``
    (trace id -> the label design's stratum, for designs chosen by what the judge said) the cut is
    made within each stratum instead, so every split stays a sample of the same design; traces
    without a stratum form one more group.
    """
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-9:
        raise UsageError(
            f"split fractions must be three non-negative numbers summing to 1, got {fractions!r}"
        )
    pairs = list(labels.items()) if isinstance(labels, Mapping) else list(labels)
    groups: dict[str, set[str]] = defaultdict(set)
    seen: dict[str, str] = {}
    for trace_id, label in pairs:
        group = label if label in ("pass", "fail") else "undecided"
        if trace_id in seen and seen[trace_id] != group:
            raise UsageError(
                f"trace {trace_id!r} has labels {seen[trace_id]!r} and {group!r}; give one label per trace "
                "(resolve annotator disagreements first)"
            )
        seen[trace_id] = group
        if strata is not None:
            group = "stratum:" + strata.get(trace_id, "(none)")
        groups[group].add(trace_id)
    assignment: dict[str, SplitName] = {}
    for group in sorted(groups):
        ordered = sorted(groups[group], key=lambda t: (_rank(seed, t), t))
        n_train, n_dev = _cut(len(ordered), fractions)
        for i, trace_id in enumerate(ordered):
            assignment[trace_id] = "train" if i < n_train else ("dev" if i < n_train + n_dev else "test")
    return Splits(seed=seed, fractions=fractions, assignment=assignment)


def check_few_shot(criterion: Criterion, splits: Splits) -> None:
    """Raise :class:`FewShotLeakError` when a few-shot example of ``criterion`` is not a train trace."""
    leaked = tuple(
        sorted(ex.trace_id for ex in criterion.few_shot if splits.assignment.get(ex.trace_id) != "train")
    )
    if leaked:
        where = ", ".join(f"{t!r} ({splits.assignment.get(t, 'unlabelled')})" for t in leaked)
        raise FewShotLeakError(
            f"criterion {criterion.id!r}: few_shot examples must come from the train split (seed "
            f"{splits.seed}); these do not: {where}. Replace them in the criteria file with train traces: "
            f"{', '.join(splits.ids('train')[:5]) or 'none yet; label more traces'}",
            criterion_id=criterion.id,
            trace_ids=leaked,
        )
